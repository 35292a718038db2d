"""Running trials leave the job tallies: a trial that is pending or running (a Harbor trial
followed while its job runs, `ingest --follow`) has no reward yet, and counting it would show
it as a failure in the job's mean reward, pass rates and histogram. The triggers of migration
0008 count a trial only while its status is neither; a trial that finishes (an UPDATE to
completed or failed) is counted from then on, one that is deleted while running is not
subtracted. Then a recount under the new rule (review.science.job_tallies.rebuild).

Written out as applied, like migration 0008 (a migration imports no live project code).
SQLite's row triggers take a WHEN clause, so its update trigger is split in two: subtract the
old row when it was counted, add the new row when it counts.
"""

from django.db import migrations


POSTGRESQL_FORWARDS = [
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_insert() RETURNS trigger LANGUAGE plpgsql'
        ' AS $$\nBEGIN\nINSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, '
        'failure_mode, trials, reward_sum, valid, scorer_pass, scorer_ran, judge_pass, '
        'judge_decided, judge_unparseable, run_pass, run_done, reviewed, gate_disagreements, '
        'human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, '
        'bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n) '
        'SELECT * FROM (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode, SUM(r.sign * (1)), SUM(r.sign * (r.reward)), SUM(r.sign * (CASE WHEN'
        ' r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN '
        "('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN"
        " 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 "
        "END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)), SUM(r.sign * '
        "(CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward "
        '>= k.pass_threshold THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN'
        " ('pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', "
        "'fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < "
        '0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 '
        'THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN'
        ' 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 '
        'ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE'
        ' 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (COALESCE(r.cost_usd, 0))), SUM(r.sign * (CASE WHEN r.cost_usd '
        'IS NOT NULL THEN 1 ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + '
        'r.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND '
        'r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM '
        "new_trials WHERE status NOT IN ('pending', 'running')) r JOIN rewards_task k ON k.id"
        ' = r.task_id GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode HAVING SUM(r.sign * (1)) <> 0 OR SUM(r.sign * (r.reward)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE '
        "WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE "
        "WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * "
        "(CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * "
        "(CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)) <> 0 "
        "OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR "
        'SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR '
        "SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign *"
        " (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        'r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        "r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE "
        'WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)) <> 0 '
        'OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)) <>'
        ' 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE'
        ' 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 '
        'ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 '
        'THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 '
        'ELSE 0 END)) <> 0 ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode) s WHERE true ON CONFLICT (job_id, task_id, agent_name, model_name, '
        'failure_mode) DO UPDATE SET trials = review_jobtally.trials + excluded.trials, '
        'reward_sum = review_jobtally.reward_sum + excluded.reward_sum, valid = '
        'review_jobtally.valid + excluded.valid, scorer_pass = review_jobtally.scorer_pass + '
        'excluded.scorer_pass, scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran,'
        ' judge_pass = review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + '
        'excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed, '
        'gate_disagreements = review_jobtally.gate_disagreements + '
        'excluded.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass + excluded.verifier_pass, human_pass = '
        'review_jobtally.human_pass + excluded.human_pass, human_decided = '
        'review_jobtally.human_decided + excluded.human_decided, bin0 = review_jobtally.bin0 '
        '+ excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1, bin2 = '
        'review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, '
        'bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, '
        'bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum = review_jobtally.cost_sum + '
        'excluded.cost_sum, cost_n = review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n;\nRETURN NULL;\nEND;\n$$;'
    ),
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_delete() RETURNS trigger LANGUAGE plpgsql'
        ' AS $$\nBEGIN\nUPDATE review_jobtally SET trials = review_jobtally.trials - s.trials, '
        'reward_sum = review_jobtally.reward_sum - s.reward_sum, valid = '
        'review_jobtally.valid - s.valid, scorer_pass = review_jobtally.scorer_pass - '
        's.scorer_pass, scorer_ran = review_jobtally.scorer_ran - s.scorer_ran, judge_pass = '
        'review_jobtally.judge_pass - s.judge_pass, judge_decided = '
        'review_jobtally.judge_decided - s.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable - s.judge_unparseable, run_pass = '
        'review_jobtally.run_pass - s.run_pass, run_done = review_jobtally.run_done - '
        's.run_done, reviewed = review_jobtally.reviewed - s.reviewed, gate_disagreements = '
        'review_jobtally.gate_disagreements - s.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements - s.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass - s.verifier_pass, human_pass = '
        'review_jobtally.human_pass - s.human_pass, human_decided = '
        'review_jobtally.human_decided - s.human_decided, bin0 = review_jobtally.bin0 - '
        's.bin0, bin1 = review_jobtally.bin1 - s.bin1, bin2 = review_jobtally.bin2 - s.bin2, '
        'bin3 = review_jobtally.bin3 - s.bin3, bin4 = review_jobtally.bin4 - s.bin4, bin5 = '
        'review_jobtally.bin5 - s.bin5, bin6 = review_jobtally.bin6 - s.bin6, bin7 = '
        'review_jobtally.bin7 - s.bin7, bin8 = review_jobtally.bin8 - s.bin8, bin9 = '
        'review_jobtally.bin9 - s.bin9, cost_sum = review_jobtally.cost_sum - s.cost_sum, '
        'cost_n = review_jobtally.cost_n - s.cost_n, tokens_sum = review_jobtally.tokens_sum '
        '- s.tokens_sum, tokens_n = review_jobtally.tokens_n - s.tokens_n FROM (SELECT '
        'r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode, SUM(r.sign * (1)), '
        'SUM(r.sign * (r.reward)), SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)), '
        "SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign"
        " * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign *"
        " (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN"
        " r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN "
        "r.run_badge IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annotation_count > 0"
        ' THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.gate_disagreement IN '
        "('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE "
        '0 END)), SUM(r.sign * (CASE WHEN r.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)), SUM(r.sign'
        " * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        'WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN'
        ' r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)), SUM(r.sign * '
        '(COALESCE(r.cost_usd, 0))), SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 '
        'ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))), '
        'SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT '
        'NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM old_trials WHERE status NOT '
        "IN ('pending', 'running')) r JOIN rewards_task k ON k.id = r.task_id GROUP BY "
        'r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode HAVING SUM(r.sign * '
        '(1)) <> 0 OR SUM(r.sign * (r.reward)) <> 0 OR SUM(r.sign * (CASE WHEN r.is_valid '
        "THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') "
        "THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN "
        "('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict"
        " IN ('UNPARSEABLE') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge "
        "IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        'r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        "r.gate_disagreement IN ('judge_pass_scorers_fail', 'scorers_pass_judge_fail', "
        "'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.human_disagreement IN ('human_pass_automated_fail', 'human_fail_automated_pass') "
        'THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold '
        "THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') "
        "THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', "
        "'fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND "
        'r.reward < 0.1 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 '
        'AND r.reward < 0.2 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= '
        '0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward '
        '>= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE '
        'WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)) <> 0 '
        'OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)) '
        '<> 0 OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign * (CASE WHEN'
        ' r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) '
        '<> 0 ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode) s '
        '(job_id, task_id, agent_name, model_name, failure_mode, trials, reward_sum, valid, '
        'scorer_pass, scorer_ran, judge_pass, judge_decided, judge_unparseable, run_pass, '
        'run_done, reviewed, gate_disagreements, human_disagreements, verifier_pass, '
        'human_pass, human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8, '
        'bin9, cost_sum, cost_n, tokens_sum, tokens_n) WHERE review_jobtally.job_id = '
        's.job_id AND review_jobtally.task_id = s.task_id AND review_jobtally.agent_name = '
        's.agent_name AND review_jobtally.model_name = s.model_name AND '
        'review_jobtally.failure_mode = s.failure_mode;\nRETURN NULL;\nEND;\n$$;'
    ),
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_update() RETURNS trigger LANGUAGE plpgsql'
        ' AS $$\nBEGIN\nUPDATE review_jobtally SET trials = review_jobtally.trials - s.trials, '
        'reward_sum = review_jobtally.reward_sum - s.reward_sum, valid = '
        'review_jobtally.valid - s.valid, scorer_pass = review_jobtally.scorer_pass - '
        's.scorer_pass, scorer_ran = review_jobtally.scorer_ran - s.scorer_ran, judge_pass = '
        'review_jobtally.judge_pass - s.judge_pass, judge_decided = '
        'review_jobtally.judge_decided - s.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable - s.judge_unparseable, run_pass = '
        'review_jobtally.run_pass - s.run_pass, run_done = review_jobtally.run_done - '
        's.run_done, reviewed = review_jobtally.reviewed - s.reviewed, gate_disagreements = '
        'review_jobtally.gate_disagreements - s.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements - s.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass - s.verifier_pass, human_pass = '
        'review_jobtally.human_pass - s.human_pass, human_decided = '
        'review_jobtally.human_decided - s.human_decided, bin0 = review_jobtally.bin0 - '
        's.bin0, bin1 = review_jobtally.bin1 - s.bin1, bin2 = review_jobtally.bin2 - s.bin2, '
        'bin3 = review_jobtally.bin3 - s.bin3, bin4 = review_jobtally.bin4 - s.bin4, bin5 = '
        'review_jobtally.bin5 - s.bin5, bin6 = review_jobtally.bin6 - s.bin6, bin7 = '
        'review_jobtally.bin7 - s.bin7, bin8 = review_jobtally.bin8 - s.bin8, bin9 = '
        'review_jobtally.bin9 - s.bin9, cost_sum = review_jobtally.cost_sum - s.cost_sum, '
        'cost_n = review_jobtally.cost_n - s.cost_n, tokens_sum = review_jobtally.tokens_sum '
        '- s.tokens_sum, tokens_n = review_jobtally.tokens_n - s.tokens_n FROM (SELECT '
        'r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode, SUM(r.sign * (1)), '
        'SUM(r.sign * (r.reward)), SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)), '
        "SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign"
        " * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign *"
        " (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN"
        " r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN "
        "r.run_badge IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annotation_count > 0"
        ' THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.gate_disagreement IN '
        "('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE "
        '0 END)), SUM(r.sign * (CASE WHEN r.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)), SUM(r.sign'
        " * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        'WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN'
        ' r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)), SUM(r.sign * '
        '(COALESCE(r.cost_usd, 0))), SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 '
        'ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))), '
        'SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT '
        'NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM old_trials WHERE status NOT '
        "IN ('pending', 'running')) r JOIN rewards_task k ON k.id = r.task_id GROUP BY "
        'r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode HAVING SUM(r.sign * '
        '(1)) <> 0 OR SUM(r.sign * (r.reward)) <> 0 OR SUM(r.sign * (CASE WHEN r.is_valid '
        "THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') "
        "THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN "
        "('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict"
        " IN ('UNPARSEABLE') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge "
        "IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        'r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        "r.gate_disagreement IN ('judge_pass_scorers_fail', 'scorers_pass_judge_fail', "
        "'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.human_disagreement IN ('human_pass_automated_fail', 'human_fail_automated_pass') "
        'THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold '
        "THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') "
        "THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', "
        "'fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND "
        'r.reward < 0.1 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 '
        'AND r.reward < 0.2 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= '
        '0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward '
        '>= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE '
        'WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)) <> 0 '
        'OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)) '
        '<> 0 OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign * (CASE WHEN'
        ' r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) '
        '<> 0 ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode) s '
        '(job_id, task_id, agent_name, model_name, failure_mode, trials, reward_sum, valid, '
        'scorer_pass, scorer_ran, judge_pass, judge_decided, judge_unparseable, run_pass, '
        'run_done, reviewed, gate_disagreements, human_disagreements, verifier_pass, '
        'human_pass, human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8, '
        'bin9, cost_sum, cost_n, tokens_sum, tokens_n) WHERE review_jobtally.job_id = '
        's.job_id AND review_jobtally.task_id = s.task_id AND review_jobtally.agent_name = '
        's.agent_name AND review_jobtally.model_name = s.model_name AND '
        'review_jobtally.failure_mode = s.failure_mode;\nINSERT INTO review_jobtally (job_id, '
        'task_id, agent_name, model_name, failure_mode, trials, reward_sum, valid, '
        'scorer_pass, scorer_ran, judge_pass, judge_decided, judge_unparseable, run_pass, '
        'run_done, reviewed, gate_disagreements, human_disagreements, verifier_pass, '
        'human_pass, human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8, '
        'bin9, cost_sum, cost_n, tokens_sum, tokens_n) SELECT * FROM (SELECT r.job_id, '
        'r.task_id, r.agent_name, r.model_name, r.failure_mode, SUM(r.sign * (1)), SUM(r.sign'
        ' * (r.reward)), SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign *'
        " (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN "
        "r.run_badge IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annotation_count > 0"
        ' THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.gate_disagreement IN '
        "('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE "
        '0 END)), SUM(r.sign * (CASE WHEN r.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)), SUM(r.sign'
        " * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        'WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN'
        ' r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)), SUM(r.sign * '
        '(COALESCE(r.cost_usd, 0))), SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 '
        'ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))), '
        'SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT '
        'NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM new_trials WHERE status NOT '
        "IN ('pending', 'running')) r JOIN rewards_task k ON k.id = r.task_id GROUP BY "
        'r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode HAVING SUM(r.sign * '
        '(1)) <> 0 OR SUM(r.sign * (r.reward)) <> 0 OR SUM(r.sign * (CASE WHEN r.is_valid '
        "THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') "
        "THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN "
        "('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict"
        " IN ('UNPARSEABLE') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge "
        "IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        'r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        "r.gate_disagreement IN ('judge_pass_scorers_fail', 'scorers_pass_judge_fail', "
        "'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.human_disagreement IN ('human_pass_automated_fail', 'human_fail_automated_pass') "
        'THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold '
        "THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') "
        "THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', "
        "'fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND "
        'r.reward < 0.1 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 '
        'AND r.reward < 0.2 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= '
        '0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward '
        '>= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE '
        'WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)) <> 0 '
        'OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)) '
        '<> 0 OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign * (CASE WHEN'
        ' r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) '
        '<> 0 ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode) s '
        'WHERE true ON CONFLICT (job_id, task_id, agent_name, model_name, failure_mode) DO '
        'UPDATE SET trials = review_jobtally.trials + excluded.trials, reward_sum = '
        'review_jobtally.reward_sum + excluded.reward_sum, valid = review_jobtally.valid + '
        'excluded.valid, scorer_pass = review_jobtally.scorer_pass + excluded.scorer_pass, '
        'scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass = '
        'review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + '
        'excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed, '
        'gate_disagreements = review_jobtally.gate_disagreements + '
        'excluded.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass + excluded.verifier_pass, human_pass = '
        'review_jobtally.human_pass + excluded.human_pass, human_decided = '
        'review_jobtally.human_decided + excluded.human_decided, bin0 = review_jobtally.bin0 '
        '+ excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1, bin2 = '
        'review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, '
        'bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, '
        'bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum = review_jobtally.cost_sum + '
        'excluded.cost_sum, cost_n = review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n;\nRETURN NULL;\nEND;\n$$;'
    ),
    'DELETE FROM review_jobtally',
    (
        'INSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, failure_mode, '
        'trials, reward_sum, valid, scorer_pass, scorer_ran, judge_pass, judge_decided, '
        'judge_unparseable, run_pass, run_done, reviewed, gate_disagreements, '
        'human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, '
        'bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n) '
        'SELECT * FROM (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode, SUM(r.sign * (1)), SUM(r.sign * (r.reward)), SUM(r.sign * (CASE WHEN'
        ' r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN '
        "('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN"
        " 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 "
        "END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)), SUM(r.sign * '
        "(CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward "
        '>= k.pass_threshold THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN'
        " ('pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', "
        "'fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < "
        '0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 '
        'THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN'
        ' 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 '
        'ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE'
        ' 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (COALESCE(r.cost_usd, 0))), SUM(r.sign * (CASE WHEN r.cost_usd '
        'IS NOT NULL THEN 1 ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + '
        'r.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND '
        'r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM '
        "rewards_trial WHERE status NOT IN ('pending', 'running')) r JOIN rewards_task k ON "
        'k.id = r.task_id GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode HAVING SUM(r.sign * (1)) <> 0 OR SUM(r.sign * (r.reward)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE '
        "WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE "
        "WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * "
        "(CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * "
        "(CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)) <> 0 "
        "OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR "
        'SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR '
        "SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign *"
        " (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        'r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        "r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE "
        'WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)) <> 0 '
        'OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)) <>'
        ' 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE'
        ' 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 '
        'ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 '
        'THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 '
        'ELSE 0 END)) <> 0 ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode) s WHERE true ON CONFLICT (job_id, task_id, agent_name, model_name, '
        'failure_mode) DO UPDATE SET trials = review_jobtally.trials + excluded.trials, '
        'reward_sum = review_jobtally.reward_sum + excluded.reward_sum, valid = '
        'review_jobtally.valid + excluded.valid, scorer_pass = review_jobtally.scorer_pass + '
        'excluded.scorer_pass, scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran,'
        ' judge_pass = review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + '
        'excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed, '
        'gate_disagreements = review_jobtally.gate_disagreements + '
        'excluded.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass + excluded.verifier_pass, human_pass = '
        'review_jobtally.human_pass + excluded.human_pass, human_decided = '
        'review_jobtally.human_decided + excluded.human_decided, bin0 = review_jobtally.bin0 '
        '+ excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1, bin2 = '
        'review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, '
        'bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, '
        'bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum = review_jobtally.cost_sum + '
        'excluded.cost_sum, cost_n = review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n'
    ),
]

SQLITE_FORWARDS = [
    'DROP TRIGGER IF EXISTS review_jobtally_insert;',
    'DROP TRIGGER IF EXISTS review_jobtally_delete;',
    'DROP TRIGGER IF EXISTS review_jobtally_update;',
    (
        'CREATE TRIGGER review_jobtally_insert AFTER INSERT ON rewards_trial WHEN NEW.status '
        "NOT IN ('pending', 'running') BEGIN INSERT INTO review_jobtally (job_id, task_id, "
        'agent_name, model_name, failure_mode, trials, reward_sum, valid, scorer_pass, '
        'scorer_ran, judge_pass, judge_decided, judge_unparseable, run_pass, run_done, '
        'reviewed, gate_disagreements, human_disagreements, verifier_pass, human_pass, '
        'human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum,'
        ' cost_n, tokens_sum, tokens_n) SELECT * FROM (SELECT NEW.job_id, NEW.task_id, '
        'NEW.agent_name, NEW.model_name, NEW.failure_mode, 1 * (1), 1 * (NEW.reward), 1 * '
        '(CASE WHEN NEW.is_valid THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.scorer_verdict IN '
        "('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.scorer_verdict IN ('PASS', 'FAIL') "
        "THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.judge_verdict IN ('PASS') THEN 1 ELSE 0 END),"
        " 1 * (CASE WHEN NEW.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE "
        "WHEN NEW.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.run_badge IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.run_badge IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.annotation_count > 0 THEN 1 "
        "ELSE 0 END), 1 * (CASE WHEN NEW.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.human_disagreement IN ('human_pass_automated_fail', 'human_fail_automated_pass')"
        ' THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= k.pass_threshold THEN 1 ELSE 0 '
        "END), 1 * (CASE WHEN NEW.human_judgment IN ('pass') THEN 1 ELSE 0 END), 1 * (CASE "
        "WHEN NEW.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        'NEW.reward >= 0.0 AND NEW.reward < 0.1 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward'
        ' >= 0.1 AND NEW.reward < 0.2 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.2 '
        'AND NEW.reward < 0.3 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.3 AND '
        'NEW.reward < 0.4 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.4 AND NEW.reward'
        ' < 0.5 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.5 AND NEW.reward < 0.6 '
        'THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.6 AND NEW.reward < 0.7 THEN 1 '
        'ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.7 AND NEW.reward < 0.8 THEN 1 ELSE 0 '
        'END), 1 * (CASE WHEN NEW.reward >= 0.8 AND NEW.reward < 0.9 THEN 1 ELSE 0 END), 1 * '
        '(CASE WHEN NEW.reward >= 0.9 AND NEW.reward <= 1.0 THEN 1 ELSE 0 END), 1 * '
        '(COALESCE(NEW.cost_usd, 0)), 1 * (CASE WHEN NEW.cost_usd IS NOT NULL THEN 1 ELSE 0 '
        'END), 1 * (COALESCE(NEW.n_input_tokens + NEW.n_output_tokens, 0)), 1 * (CASE WHEN '
        'NEW.n_input_tokens IS NOT NULL AND NEW.n_output_tokens IS NOT NULL THEN 1 ELSE 0 '
        'END) FROM rewards_task k WHERE k.id = NEW.task_id) s WHERE true ON CONFLICT (job_id,'
        ' task_id, agent_name, model_name, failure_mode) DO UPDATE SET trials = '
        'review_jobtally.trials + excluded.trials, reward_sum = review_jobtally.reward_sum + '
        'excluded.reward_sum, valid = review_jobtally.valid + excluded.valid, scorer_pass = '
        'review_jobtally.scorer_pass + excluded.scorer_pass, scorer_ran = '
        'review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass = '
        'review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + '
        'excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed, '
        'gate_disagreements = review_jobtally.gate_disagreements + '
        'excluded.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass + excluded.verifier_pass, human_pass = '
        'review_jobtally.human_pass + excluded.human_pass, human_decided = '
        'review_jobtally.human_decided + excluded.human_decided, bin0 = review_jobtally.bin0 '
        '+ excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1, bin2 = '
        'review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, '
        'bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, '
        'bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum = review_jobtally.cost_sum + '
        'excluded.cost_sum, cost_n = review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n; END;'
    ),
    (
        'CREATE TRIGGER review_jobtally_delete AFTER DELETE ON rewards_trial WHEN OLD.status '
        "NOT IN ('pending', 'running') BEGIN UPDATE review_jobtally SET trials = trials - "
        '(SELECT 1 FROM rewards_task k WHERE k.id = OLD.task_id), reward_sum = reward_sum - '
        '(SELECT OLD.reward FROM rewards_task k WHERE k.id = OLD.task_id), valid = valid - '
        '(SELECT CASE WHEN OLD.is_valid THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), scorer_pass = scorer_pass - (SELECT CASE WHEN OLD.scorer_verdict IN '
        "('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), scorer_ran"
        " = scorer_ran - (SELECT CASE WHEN OLD.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE"
        ' 0 END FROM rewards_task k WHERE k.id = OLD.task_id), judge_pass = judge_pass - '
        "(SELECT CASE WHEN OLD.judge_verdict IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task "
        'k WHERE k.id = OLD.task_id), judge_decided = judge_decided - (SELECT CASE WHEN '
        "OLD.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE "
        'k.id = OLD.task_id), judge_unparseable = judge_unparseable - (SELECT CASE WHEN '
        "OLD.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END FROM rewards_task k WHERE "
        'k.id = OLD.task_id), run_pass = run_pass - (SELECT CASE WHEN OLD.run_badge IN '
        "('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), run_done ="
        " run_done - (SELECT CASE WHEN OLD.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END "
        'FROM rewards_task k WHERE k.id = OLD.task_id), reviewed = reviewed - (SELECT CASE '
        'WHEN OLD.annotation_count > 0 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), gate_disagreements = gate_disagreements - (SELECT CASE WHEN '
        "OLD.gate_disagreement IN ('judge_pass_scorers_fail', 'scorers_pass_judge_fail', "
        "'advisory_fail') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        'human_disagreements = human_disagreements - (SELECT CASE WHEN OLD.human_disagreement'
        " IN ('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END "
        'FROM rewards_task k WHERE k.id = OLD.task_id), verifier_pass = verifier_pass - '
        '(SELECT CASE WHEN OLD.reward >= k.pass_threshold THEN 1 ELSE 0 END FROM rewards_task'
        ' k WHERE k.id = OLD.task_id), human_pass = human_pass - (SELECT CASE WHEN '
        "OLD.human_judgment IN ('pass') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = "
        'OLD.task_id), human_decided = human_decided - (SELECT CASE WHEN OLD.human_judgment '
        "IN ('pass', 'fail') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id),"
        ' bin0 = bin0 - (SELECT CASE WHEN OLD.reward >= 0.0 AND OLD.reward < 0.1 THEN 1 ELSE '
        '0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin1 = bin1 - (SELECT CASE WHEN'
        ' OLD.reward >= 0.1 AND OLD.reward < 0.2 THEN 1 ELSE 0 END FROM rewards_task k WHERE '
        'k.id = OLD.task_id), bin2 = bin2 - (SELECT CASE WHEN OLD.reward >= 0.2 AND '
        'OLD.reward < 0.3 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), '
        'bin3 = bin3 - (SELECT CASE WHEN OLD.reward >= 0.3 AND OLD.reward < 0.4 THEN 1 ELSE 0'
        ' END FROM rewards_task k WHERE k.id = OLD.task_id), bin4 = bin4 - (SELECT CASE WHEN '
        'OLD.reward >= 0.4 AND OLD.reward < 0.5 THEN 1 ELSE 0 END FROM rewards_task k WHERE '
        'k.id = OLD.task_id), bin5 = bin5 - (SELECT CASE WHEN OLD.reward >= 0.5 AND '
        'OLD.reward < 0.6 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), '
        'bin6 = bin6 - (SELECT CASE WHEN OLD.reward >= 0.6 AND OLD.reward < 0.7 THEN 1 ELSE 0'
        ' END FROM rewards_task k WHERE k.id = OLD.task_id), bin7 = bin7 - (SELECT CASE WHEN '
        'OLD.reward >= 0.7 AND OLD.reward < 0.8 THEN 1 ELSE 0 END FROM rewards_task k WHERE '
        'k.id = OLD.task_id), bin8 = bin8 - (SELECT CASE WHEN OLD.reward >= 0.8 AND '
        'OLD.reward < 0.9 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), '
        'bin9 = bin9 - (SELECT CASE WHEN OLD.reward >= 0.9 AND OLD.reward <= 1.0 THEN 1 ELSE '
        '0 END FROM rewards_task k WHERE k.id = OLD.task_id), cost_sum = cost_sum - (SELECT '
        'COALESCE(OLD.cost_usd, 0) FROM rewards_task k WHERE k.id = OLD.task_id), cost_n = '
        'cost_n - (SELECT CASE WHEN OLD.cost_usd IS NOT NULL THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), tokens_sum = tokens_sum - (SELECT '
        'COALESCE(OLD.n_input_tokens + OLD.n_output_tokens, 0) FROM rewards_task k WHERE k.id'
        ' = OLD.task_id), tokens_n = tokens_n - (SELECT CASE WHEN OLD.n_input_tokens IS NOT '
        'NULL AND OLD.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END FROM rewards_task k WHERE'
        ' k.id = OLD.task_id) WHERE job_id = OLD.job_id AND task_id = OLD.task_id AND '
        'agent_name = OLD.agent_name AND model_name = OLD.model_name AND failure_mode = '
        'OLD.failure_mode AND EXISTS (SELECT 1 FROM rewards_task k WHERE k.id = OLD.task_id);'
        ' END;'
    ),
    (
        'CREATE TRIGGER review_jobtally_update_old AFTER UPDATE ON rewards_trial WHEN '
        "OLD.status NOT IN ('pending', 'running') BEGIN UPDATE review_jobtally SET trials = "
        'trials - (SELECT 1 FROM rewards_task k WHERE k.id = OLD.task_id), reward_sum = '
        'reward_sum - (SELECT OLD.reward FROM rewards_task k WHERE k.id = OLD.task_id), valid'
        ' = valid - (SELECT CASE WHEN OLD.is_valid THEN 1 ELSE 0 END FROM rewards_task k '
        'WHERE k.id = OLD.task_id), scorer_pass = scorer_pass - (SELECT CASE WHEN '
        "OLD.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = "
        'OLD.task_id), scorer_ran = scorer_ran - (SELECT CASE WHEN OLD.scorer_verdict IN '
        "('PASS', 'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        "judge_pass = judge_pass - (SELECT CASE WHEN OLD.judge_verdict IN ('PASS') THEN 1 "
        'ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), judge_decided = '
        "judge_decided - (SELECT CASE WHEN OLD.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE "
        '0 END FROM rewards_task k WHERE k.id = OLD.task_id), judge_unparseable = '
        "judge_unparseable - (SELECT CASE WHEN OLD.judge_verdict IN ('UNPARSEABLE') THEN 1 "
        'ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), run_pass = run_pass - '
        "(SELECT CASE WHEN OLD.run_badge IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task k "
        'WHERE k.id = OLD.task_id), run_done = run_done - (SELECT CASE WHEN OLD.run_badge IN '
        "('PASS', 'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        'reviewed = reviewed - (SELECT CASE WHEN OLD.annotation_count > 0 THEN 1 ELSE 0 END '
        'FROM rewards_task k WHERE k.id = OLD.task_id), gate_disagreements = '
        'gate_disagreements - (SELECT CASE WHEN OLD.gate_disagreement IN '
        "('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE "
        '0 END FROM rewards_task k WHERE k.id = OLD.task_id), human_disagreements = '
        'human_disagreements - (SELECT CASE WHEN OLD.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END FROM "
        'rewards_task k WHERE k.id = OLD.task_id), verifier_pass = verifier_pass - (SELECT '
        'CASE WHEN OLD.reward >= k.pass_threshold THEN 1 ELSE 0 END FROM rewards_task k WHERE'
        ' k.id = OLD.task_id), human_pass = human_pass - (SELECT CASE WHEN OLD.human_judgment'
        " IN ('pass') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        "human_decided = human_decided - (SELECT CASE WHEN OLD.human_judgment IN ('pass', "
        "'fail') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin0 = bin0"
        ' - (SELECT CASE WHEN OLD.reward >= 0.0 AND OLD.reward < 0.1 THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), bin1 = bin1 - (SELECT CASE WHEN OLD.reward'
        ' >= 0.1 AND OLD.reward < 0.2 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), bin2 = bin2 - (SELECT CASE WHEN OLD.reward >= 0.2 AND OLD.reward < 0.3'
        ' THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin3 = bin3 - '
        '(SELECT CASE WHEN OLD.reward >= 0.3 AND OLD.reward < 0.4 THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), bin4 = bin4 - (SELECT CASE WHEN OLD.reward'
        ' >= 0.4 AND OLD.reward < 0.5 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), bin5 = bin5 - (SELECT CASE WHEN OLD.reward >= 0.5 AND OLD.reward < 0.6'
        ' THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin6 = bin6 - '
        '(SELECT CASE WHEN OLD.reward >= 0.6 AND OLD.reward < 0.7 THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), bin7 = bin7 - (SELECT CASE WHEN OLD.reward'
        ' >= 0.7 AND OLD.reward < 0.8 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), bin8 = bin8 - (SELECT CASE WHEN OLD.reward >= 0.8 AND OLD.reward < 0.9'
        ' THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin9 = bin9 - '
        '(SELECT CASE WHEN OLD.reward >= 0.9 AND OLD.reward <= 1.0 THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), cost_sum = cost_sum - (SELECT '
        'COALESCE(OLD.cost_usd, 0) FROM rewards_task k WHERE k.id = OLD.task_id), cost_n = '
        'cost_n - (SELECT CASE WHEN OLD.cost_usd IS NOT NULL THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), tokens_sum = tokens_sum - (SELECT '
        'COALESCE(OLD.n_input_tokens + OLD.n_output_tokens, 0) FROM rewards_task k WHERE k.id'
        ' = OLD.task_id), tokens_n = tokens_n - (SELECT CASE WHEN OLD.n_input_tokens IS NOT '
        'NULL AND OLD.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END FROM rewards_task k WHERE'
        ' k.id = OLD.task_id) WHERE job_id = OLD.job_id AND task_id = OLD.task_id AND '
        'agent_name = OLD.agent_name AND model_name = OLD.model_name AND failure_mode = '
        'OLD.failure_mode AND EXISTS (SELECT 1 FROM rewards_task k WHERE k.id = OLD.task_id);'
        ' END;'
    ),
    (
        'CREATE TRIGGER review_jobtally_update_new AFTER UPDATE ON rewards_trial WHEN '
        "NEW.status NOT IN ('pending', 'running') BEGIN INSERT INTO review_jobtally (job_id, "
        'task_id, agent_name, model_name, failure_mode, trials, reward_sum, valid, '
        'scorer_pass, scorer_ran, judge_pass, judge_decided, judge_unparseable, run_pass, '
        'run_done, reviewed, gate_disagreements, human_disagreements, verifier_pass, '
        'human_pass, human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8, '
        'bin9, cost_sum, cost_n, tokens_sum, tokens_n) SELECT * FROM (SELECT NEW.job_id, '
        'NEW.task_id, NEW.agent_name, NEW.model_name, NEW.failure_mode, 1 * (1), 1 * '
        '(NEW.reward), 1 * (CASE WHEN NEW.is_valid THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        "NEW.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.scorer_verdict"
        " IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.judge_verdict IN "
        "('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.judge_verdict IN ('PASS', 'FAIL') "
        "THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE "
        "0 END), 1 * (CASE WHEN NEW.run_badge IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        'NEW.annotation_count > 0 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.gate_disagreement IN'
        " ('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE"
        " 0 END), 1 * (CASE WHEN NEW.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= "
        "k.pass_threshold THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.human_judgment IN ('pass') "
        "THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.human_judgment IN ('pass', 'fail') THEN 1 "
        'ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.0 AND NEW.reward < 0.1 THEN 1 ELSE 0 '
        'END), 1 * (CASE WHEN NEW.reward >= 0.1 AND NEW.reward < 0.2 THEN 1 ELSE 0 END), 1 * '
        '(CASE WHEN NEW.reward >= 0.2 AND NEW.reward < 0.3 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.3 AND NEW.reward < 0.4 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.4 AND NEW.reward < 0.5 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward'
        ' >= 0.5 AND NEW.reward < 0.6 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.6 '
        'AND NEW.reward < 0.7 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.7 AND '
        'NEW.reward < 0.8 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.8 AND NEW.reward'
        ' < 0.9 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.9 AND NEW.reward <= 1.0 '
        'THEN 1 ELSE 0 END), 1 * (COALESCE(NEW.cost_usd, 0)), 1 * (CASE WHEN NEW.cost_usd IS '
        'NOT NULL THEN 1 ELSE 0 END), 1 * (COALESCE(NEW.n_input_tokens + NEW.n_output_tokens,'
        ' 0)), 1 * (CASE WHEN NEW.n_input_tokens IS NOT NULL AND NEW.n_output_tokens IS NOT '
        'NULL THEN 1 ELSE 0 END) FROM rewards_task k WHERE k.id = NEW.task_id) s WHERE true '
        'ON CONFLICT (job_id, task_id, agent_name, model_name, failure_mode) DO UPDATE SET '
        'trials = review_jobtally.trials + excluded.trials, reward_sum = '
        'review_jobtally.reward_sum + excluded.reward_sum, valid = review_jobtally.valid + '
        'excluded.valid, scorer_pass = review_jobtally.scorer_pass + excluded.scorer_pass, '
        'scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass = '
        'review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + '
        'excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed, '
        'gate_disagreements = review_jobtally.gate_disagreements + '
        'excluded.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass + excluded.verifier_pass, human_pass = '
        'review_jobtally.human_pass + excluded.human_pass, human_decided = '
        'review_jobtally.human_decided + excluded.human_decided, bin0 = review_jobtally.bin0 '
        '+ excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1, bin2 = '
        'review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, '
        'bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, '
        'bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum = review_jobtally.cost_sum + '
        'excluded.cost_sum, cost_n = review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n; END;'
    ),
    'DELETE FROM review_jobtally',
    (
        'INSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, failure_mode, '
        'trials, reward_sum, valid, scorer_pass, scorer_ran, judge_pass, judge_decided, '
        'judge_unparseable, run_pass, run_done, reviewed, gate_disagreements, '
        'human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, '
        'bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n) '
        'SELECT * FROM (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode, SUM(r.sign * (1)), SUM(r.sign * (r.reward)), SUM(r.sign * (CASE WHEN'
        ' r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN '
        "('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN"
        " 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 "
        "END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)), SUM(r.sign * '
        "(CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward "
        '>= k.pass_threshold THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN'
        " ('pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', "
        "'fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < "
        '0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 '
        'THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN'
        ' 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 '
        'ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE'
        ' 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (COALESCE(r.cost_usd, 0))), SUM(r.sign * (CASE WHEN r.cost_usd '
        'IS NOT NULL THEN 1 ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + '
        'r.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND '
        'r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM '
        "rewards_trial WHERE status NOT IN ('pending', 'running')) r JOIN rewards_task k ON "
        'k.id = r.task_id GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode HAVING SUM(r.sign * (1)) <> 0 OR SUM(r.sign * (r.reward)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE '
        "WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE "
        "WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * "
        "(CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * "
        "(CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)) <> 0 "
        "OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR "
        'SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR '
        "SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign *"
        " (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        'r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        "r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE "
        'WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)) <> 0 '
        'OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)) <>'
        ' 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE'
        ' 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 '
        'ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 '
        'THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 '
        'ELSE 0 END)) <> 0 ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode) s WHERE true ON CONFLICT (job_id, task_id, agent_name, model_name, '
        'failure_mode) DO UPDATE SET trials = review_jobtally.trials + excluded.trials, '
        'reward_sum = review_jobtally.reward_sum + excluded.reward_sum, valid = '
        'review_jobtally.valid + excluded.valid, scorer_pass = review_jobtally.scorer_pass + '
        'excluded.scorer_pass, scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran,'
        ' judge_pass = review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + '
        'excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed, '
        'gate_disagreements = review_jobtally.gate_disagreements + '
        'excluded.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass + excluded.verifier_pass, human_pass = '
        'review_jobtally.human_pass + excluded.human_pass, human_decided = '
        'review_jobtally.human_decided + excluded.human_decided, bin0 = review_jobtally.bin0 '
        '+ excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1, bin2 = '
        'review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, '
        'bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, '
        'bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum = review_jobtally.cost_sum + '
        'excluded.cost_sum, cost_n = review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n'
    ),
]

POSTGRESQL_BACKWARDS = [
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_insert() RETURNS trigger LANGUAGE plpgsql'
        ' AS $$\nBEGIN\nINSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, '
        'failure_mode, trials, reward_sum, valid, scorer_pass, scorer_ran, judge_pass, '
        'judge_decided, judge_unparseable, run_pass, run_done, reviewed, gate_disagreements, '
        'human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, '
        'bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n) '
        'SELECT * FROM (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode, SUM(r.sign * (1)), SUM(r.sign * (r.reward)), SUM(r.sign * (CASE WHEN'
        ' r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN '
        "('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN"
        " 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 "
        "END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)), SUM(r.sign * '
        "(CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward "
        '>= k.pass_threshold THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN'
        " ('pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', "
        "'fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < "
        '0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 '
        'THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN'
        ' 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 '
        'ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE'
        ' 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (COALESCE(r.cost_usd, 0))), SUM(r.sign * (CASE WHEN r.cost_usd '
        'IS NOT NULL THEN 1 ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + '
        'r.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND '
        'r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM '
        'new_trials) r JOIN rewards_task k ON k.id = r.task_id GROUP BY r.job_id, r.task_id, '
        'r.agent_name, r.model_name, r.failure_mode HAVING SUM(r.sign * (1)) <> 0 OR '
        'SUM(r.sign * (r.reward)) <> 0 OR SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 '
        "END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 "
        "END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 "
        "ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE"
        " 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 "
        "ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN"
        " 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE "
        "0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE "
        '0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) '
        "<> 0 OR SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign *"
        " (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        'r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        "r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE "
        'WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)) <> 0 '
        'OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)) <>'
        ' 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE'
        ' 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 '
        'ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 '
        'THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 '
        'ELSE 0 END)) <> 0 ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode) s WHERE true ON CONFLICT (job_id, task_id, agent_name, model_name, '
        'failure_mode) DO UPDATE SET trials = review_jobtally.trials + excluded.trials, '
        'reward_sum = review_jobtally.reward_sum + excluded.reward_sum, valid = '
        'review_jobtally.valid + excluded.valid, scorer_pass = review_jobtally.scorer_pass + '
        'excluded.scorer_pass, scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran,'
        ' judge_pass = review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + '
        'excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed, '
        'gate_disagreements = review_jobtally.gate_disagreements + '
        'excluded.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass + excluded.verifier_pass, human_pass = '
        'review_jobtally.human_pass + excluded.human_pass, human_decided = '
        'review_jobtally.human_decided + excluded.human_decided, bin0 = review_jobtally.bin0 '
        '+ excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1, bin2 = '
        'review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, '
        'bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, '
        'bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum = review_jobtally.cost_sum + '
        'excluded.cost_sum, cost_n = review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n;\nRETURN NULL;\nEND;\n$$;'
    ),
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_delete() RETURNS trigger LANGUAGE plpgsql'
        ' AS $$\nBEGIN\nUPDATE review_jobtally SET trials = review_jobtally.trials - s.trials, '
        'reward_sum = review_jobtally.reward_sum - s.reward_sum, valid = '
        'review_jobtally.valid - s.valid, scorer_pass = review_jobtally.scorer_pass - '
        's.scorer_pass, scorer_ran = review_jobtally.scorer_ran - s.scorer_ran, judge_pass = '
        'review_jobtally.judge_pass - s.judge_pass, judge_decided = '
        'review_jobtally.judge_decided - s.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable - s.judge_unparseable, run_pass = '
        'review_jobtally.run_pass - s.run_pass, run_done = review_jobtally.run_done - '
        's.run_done, reviewed = review_jobtally.reviewed - s.reviewed, gate_disagreements = '
        'review_jobtally.gate_disagreements - s.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements - s.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass - s.verifier_pass, human_pass = '
        'review_jobtally.human_pass - s.human_pass, human_decided = '
        'review_jobtally.human_decided - s.human_decided, bin0 = review_jobtally.bin0 - '
        's.bin0, bin1 = review_jobtally.bin1 - s.bin1, bin2 = review_jobtally.bin2 - s.bin2, '
        'bin3 = review_jobtally.bin3 - s.bin3, bin4 = review_jobtally.bin4 - s.bin4, bin5 = '
        'review_jobtally.bin5 - s.bin5, bin6 = review_jobtally.bin6 - s.bin6, bin7 = '
        'review_jobtally.bin7 - s.bin7, bin8 = review_jobtally.bin8 - s.bin8, bin9 = '
        'review_jobtally.bin9 - s.bin9, cost_sum = review_jobtally.cost_sum - s.cost_sum, '
        'cost_n = review_jobtally.cost_n - s.cost_n, tokens_sum = review_jobtally.tokens_sum '
        '- s.tokens_sum, tokens_n = review_jobtally.tokens_n - s.tokens_n FROM (SELECT '
        'r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode, SUM(r.sign * (1)), '
        'SUM(r.sign * (r.reward)), SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)), '
        "SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign"
        " * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign *"
        " (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN"
        " r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN "
        "r.run_badge IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annotation_count > 0"
        ' THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.gate_disagreement IN '
        "('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE "
        '0 END)), SUM(r.sign * (CASE WHEN r.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)), SUM(r.sign'
        " * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        'WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN'
        ' r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)), SUM(r.sign * '
        '(COALESCE(r.cost_usd, 0))), SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 '
        'ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))), '
        'SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT '
        'NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM old_trials) r JOIN '
        'rewards_task k ON k.id = r.task_id GROUP BY r.job_id, r.task_id, r.agent_name, '
        'r.model_name, r.failure_mode HAVING SUM(r.sign * (1)) <> 0 OR SUM(r.sign * '
        '(r.reward)) <> 0 OR SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)) <> 0 OR '
        "SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> "
        "0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> "
        "0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)) "
        "<> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR "
        'SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR '
        "SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign *"
        " (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        'r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        "r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE "
        'WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)) <> 0 '
        'OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)) <>'
        ' 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE'
        ' 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 '
        'ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 '
        'THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 '
        'ELSE 0 END)) <> 0 ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode) s (job_id, task_id, agent_name, model_name, failure_mode, trials, '
        'reward_sum, valid, scorer_pass, scorer_ran, judge_pass, judge_decided, '
        'judge_unparseable, run_pass, run_done, reviewed, gate_disagreements, '
        'human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, '
        'bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n) '
        'WHERE review_jobtally.job_id = s.job_id AND review_jobtally.task_id = s.task_id AND '
        'review_jobtally.agent_name = s.agent_name AND review_jobtally.model_name = '
        's.model_name AND review_jobtally.failure_mode = s.failure_mode;\nRETURN NULL;\nEND;\n'
        '$$;'
    ),
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_update() RETURNS trigger LANGUAGE plpgsql'
        ' AS $$\nBEGIN\nUPDATE review_jobtally SET trials = review_jobtally.trials - s.trials, '
        'reward_sum = review_jobtally.reward_sum - s.reward_sum, valid = '
        'review_jobtally.valid - s.valid, scorer_pass = review_jobtally.scorer_pass - '
        's.scorer_pass, scorer_ran = review_jobtally.scorer_ran - s.scorer_ran, judge_pass = '
        'review_jobtally.judge_pass - s.judge_pass, judge_decided = '
        'review_jobtally.judge_decided - s.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable - s.judge_unparseable, run_pass = '
        'review_jobtally.run_pass - s.run_pass, run_done = review_jobtally.run_done - '
        's.run_done, reviewed = review_jobtally.reviewed - s.reviewed, gate_disagreements = '
        'review_jobtally.gate_disagreements - s.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements - s.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass - s.verifier_pass, human_pass = '
        'review_jobtally.human_pass - s.human_pass, human_decided = '
        'review_jobtally.human_decided - s.human_decided, bin0 = review_jobtally.bin0 - '
        's.bin0, bin1 = review_jobtally.bin1 - s.bin1, bin2 = review_jobtally.bin2 - s.bin2, '
        'bin3 = review_jobtally.bin3 - s.bin3, bin4 = review_jobtally.bin4 - s.bin4, bin5 = '
        'review_jobtally.bin5 - s.bin5, bin6 = review_jobtally.bin6 - s.bin6, bin7 = '
        'review_jobtally.bin7 - s.bin7, bin8 = review_jobtally.bin8 - s.bin8, bin9 = '
        'review_jobtally.bin9 - s.bin9, cost_sum = review_jobtally.cost_sum - s.cost_sum, '
        'cost_n = review_jobtally.cost_n - s.cost_n, tokens_sum = review_jobtally.tokens_sum '
        '- s.tokens_sum, tokens_n = review_jobtally.tokens_n - s.tokens_n FROM (SELECT '
        'r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode, SUM(r.sign * (1)), '
        'SUM(r.sign * (r.reward)), SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)), '
        "SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign"
        " * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign *"
        " (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN"
        " r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN "
        "r.run_badge IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annotation_count > 0"
        ' THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.gate_disagreement IN '
        "('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE "
        '0 END)), SUM(r.sign * (CASE WHEN r.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)), SUM(r.sign'
        " * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        'WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN'
        ' r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)), SUM(r.sign * '
        '(COALESCE(r.cost_usd, 0))), SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 '
        'ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))), '
        'SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT '
        'NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM old_trials) r JOIN '
        'rewards_task k ON k.id = r.task_id GROUP BY r.job_id, r.task_id, r.agent_name, '
        'r.model_name, r.failure_mode HAVING SUM(r.sign * (1)) <> 0 OR SUM(r.sign * '
        '(r.reward)) <> 0 OR SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)) <> 0 OR '
        "SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> "
        "0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> "
        "0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)) "
        "<> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR "
        'SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR '
        "SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign *"
        " (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        'r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        "r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE "
        'WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)) <> 0 '
        'OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)) <>'
        ' 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE'
        ' 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 '
        'ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 '
        'THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 '
        'ELSE 0 END)) <> 0 ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode) s (job_id, task_id, agent_name, model_name, failure_mode, trials, '
        'reward_sum, valid, scorer_pass, scorer_ran, judge_pass, judge_decided, '
        'judge_unparseable, run_pass, run_done, reviewed, gate_disagreements, '
        'human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, '
        'bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n) '
        'WHERE review_jobtally.job_id = s.job_id AND review_jobtally.task_id = s.task_id AND '
        'review_jobtally.agent_name = s.agent_name AND review_jobtally.model_name = '
        's.model_name AND review_jobtally.failure_mode = s.failure_mode;\nINSERT INTO '
        'review_jobtally (job_id, task_id, agent_name, model_name, failure_mode, trials, '
        'reward_sum, valid, scorer_pass, scorer_ran, judge_pass, judge_decided, '
        'judge_unparseable, run_pass, run_done, reviewed, gate_disagreements, '
        'human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, '
        'bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n) '
        'SELECT * FROM (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode, SUM(r.sign * (1)), SUM(r.sign * (r.reward)), SUM(r.sign * (CASE WHEN'
        ' r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN '
        "('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN"
        " 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 "
        "END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)), SUM(r.sign * '
        "(CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward "
        '>= k.pass_threshold THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN'
        " ('pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', "
        "'fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < "
        '0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 '
        'THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN'
        ' 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 '
        'ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE'
        ' 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (COALESCE(r.cost_usd, 0))), SUM(r.sign * (CASE WHEN r.cost_usd '
        'IS NOT NULL THEN 1 ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + '
        'r.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND '
        'r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM '
        'new_trials) r JOIN rewards_task k ON k.id = r.task_id GROUP BY r.job_id, r.task_id, '
        'r.agent_name, r.model_name, r.failure_mode HAVING SUM(r.sign * (1)) <> 0 OR '
        'SUM(r.sign * (r.reward)) <> 0 OR SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 '
        "END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 "
        "END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 "
        "ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE"
        " 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 "
        "ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN"
        " 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE "
        "0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE "
        '0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) '
        "<> 0 OR SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign *"
        " (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        'r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        "r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE "
        'WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)) <> 0 '
        'OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)) <>'
        ' 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE'
        ' 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 '
        'ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 '
        'THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 '
        'ELSE 0 END)) <> 0 ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode) s WHERE true ON CONFLICT (job_id, task_id, agent_name, model_name, '
        'failure_mode) DO UPDATE SET trials = review_jobtally.trials + excluded.trials, '
        'reward_sum = review_jobtally.reward_sum + excluded.reward_sum, valid = '
        'review_jobtally.valid + excluded.valid, scorer_pass = review_jobtally.scorer_pass + '
        'excluded.scorer_pass, scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran,'
        ' judge_pass = review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + '
        'excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed, '
        'gate_disagreements = review_jobtally.gate_disagreements + '
        'excluded.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass + excluded.verifier_pass, human_pass = '
        'review_jobtally.human_pass + excluded.human_pass, human_decided = '
        'review_jobtally.human_decided + excluded.human_decided, bin0 = review_jobtally.bin0 '
        '+ excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1, bin2 = '
        'review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, '
        'bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, '
        'bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum = review_jobtally.cost_sum + '
        'excluded.cost_sum, cost_n = review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n;\nRETURN NULL;\nEND;\n$$;'
    ),
    'DELETE FROM review_jobtally',
    (
        'INSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, failure_mode, '
        'trials, reward_sum, valid, scorer_pass, scorer_ran, judge_pass, judge_decided, '
        'judge_unparseable, run_pass, run_done, reviewed, gate_disagreements, '
        'human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, '
        'bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n) '
        'SELECT * FROM (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode, SUM(r.sign * (1)), SUM(r.sign * (r.reward)), SUM(r.sign * (CASE WHEN'
        ' r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN '
        "('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN"
        " 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 "
        "END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)), SUM(r.sign * '
        "(CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward "
        '>= k.pass_threshold THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN'
        " ('pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', "
        "'fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < "
        '0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 '
        'THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN'
        ' 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 '
        'ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE'
        ' 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (COALESCE(r.cost_usd, 0))), SUM(r.sign * (CASE WHEN r.cost_usd '
        'IS NOT NULL THEN 1 ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + '
        'r.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND '
        'r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM '
        'rewards_trial) r JOIN rewards_task k ON k.id = r.task_id GROUP BY r.job_id, '
        'r.task_id, r.agent_name, r.model_name, r.failure_mode HAVING SUM(r.sign * (1)) <> 0 '
        'OR SUM(r.sign * (r.reward)) <> 0 OR SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0'
        " END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 "
        "END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 "
        "ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE"
        " 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 "
        "ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN"
        " 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE "
        "0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE "
        '0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) '
        "<> 0 OR SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign *"
        " (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        'r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        "r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE "
        'WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)) <> 0 '
        'OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)) <>'
        ' 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE'
        ' 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 '
        'ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 '
        'THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 '
        'ELSE 0 END)) <> 0 ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode) s WHERE true ON CONFLICT (job_id, task_id, agent_name, model_name, '
        'failure_mode) DO UPDATE SET trials = review_jobtally.trials + excluded.trials, '
        'reward_sum = review_jobtally.reward_sum + excluded.reward_sum, valid = '
        'review_jobtally.valid + excluded.valid, scorer_pass = review_jobtally.scorer_pass + '
        'excluded.scorer_pass, scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran,'
        ' judge_pass = review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + '
        'excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed, '
        'gate_disagreements = review_jobtally.gate_disagreements + '
        'excluded.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass + excluded.verifier_pass, human_pass = '
        'review_jobtally.human_pass + excluded.human_pass, human_decided = '
        'review_jobtally.human_decided + excluded.human_decided, bin0 = review_jobtally.bin0 '
        '+ excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1, bin2 = '
        'review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, '
        'bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, '
        'bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum = review_jobtally.cost_sum + '
        'excluded.cost_sum, cost_n = review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n'
    ),
]

SQLITE_BACKWARDS = [
    'DROP TRIGGER IF EXISTS review_jobtally_insert;',
    'DROP TRIGGER IF EXISTS review_jobtally_delete;',
    'DROP TRIGGER IF EXISTS review_jobtally_update_old;',
    'DROP TRIGGER IF EXISTS review_jobtally_update_new;',
    (
        'CREATE TRIGGER review_jobtally_insert AFTER INSERT ON rewards_trial BEGIN INSERT '
        'INTO review_jobtally (job_id, task_id, agent_name, model_name, failure_mode, trials,'
        ' reward_sum, valid, scorer_pass, scorer_ran, judge_pass, judge_decided, '
        'judge_unparseable, run_pass, run_done, reviewed, gate_disagreements, '
        'human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, '
        'bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n) '
        'SELECT * FROM (SELECT NEW.job_id, NEW.task_id, NEW.agent_name, NEW.model_name, '
        'NEW.failure_mode, 1 * (1), 1 * (NEW.reward), 1 * (CASE WHEN NEW.is_valid THEN 1 ELSE'
        " 0 END), 1 * (CASE WHEN NEW.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE"
        " WHEN NEW.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.judge_verdict IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.judge_verdict "
        "IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.judge_verdict IN "
        "('UNPARSEABLE') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.run_badge IN ('PASS') THEN 1 "
        "ELSE 0 END), 1 * (CASE WHEN NEW.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 "
        '* (CASE WHEN NEW.annotation_count > 0 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        "NEW.gate_disagreement IN ('judge_pass_scorers_fail', 'scorers_pass_judge_fail', "
        "'advisory_fail') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.human_disagreement IN "
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END), 1 * "
        '(CASE WHEN NEW.reward >= k.pass_threshold THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        "NEW.human_judgment IN ('pass') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.human_judgment"
        " IN ('pass', 'fail') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.0 AND "
        'NEW.reward < 0.1 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.1 AND NEW.reward'
        ' < 0.2 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.2 AND NEW.reward < 0.3 '
        'THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.3 AND NEW.reward < 0.4 THEN 1 '
        'ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.4 AND NEW.reward < 0.5 THEN 1 ELSE 0 '
        'END), 1 * (CASE WHEN NEW.reward >= 0.5 AND NEW.reward < 0.6 THEN 1 ELSE 0 END), 1 * '
        '(CASE WHEN NEW.reward >= 0.6 AND NEW.reward < 0.7 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.7 AND NEW.reward < 0.8 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.8 AND NEW.reward < 0.9 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward'
        ' >= 0.9 AND NEW.reward <= 1.0 THEN 1 ELSE 0 END), 1 * (COALESCE(NEW.cost_usd, 0)), 1'
        ' * (CASE WHEN NEW.cost_usd IS NOT NULL THEN 1 ELSE 0 END), 1 * '
        '(COALESCE(NEW.n_input_tokens + NEW.n_output_tokens, 0)), 1 * (CASE WHEN '
        'NEW.n_input_tokens IS NOT NULL AND NEW.n_output_tokens IS NOT NULL THEN 1 ELSE 0 '
        'END) FROM rewards_task k WHERE k.id = NEW.task_id) s WHERE true ON CONFLICT (job_id,'
        ' task_id, agent_name, model_name, failure_mode) DO UPDATE SET trials = '
        'review_jobtally.trials + excluded.trials, reward_sum = review_jobtally.reward_sum + '
        'excluded.reward_sum, valid = review_jobtally.valid + excluded.valid, scorer_pass = '
        'review_jobtally.scorer_pass + excluded.scorer_pass, scorer_ran = '
        'review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass = '
        'review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + '
        'excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed, '
        'gate_disagreements = review_jobtally.gate_disagreements + '
        'excluded.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass + excluded.verifier_pass, human_pass = '
        'review_jobtally.human_pass + excluded.human_pass, human_decided = '
        'review_jobtally.human_decided + excluded.human_decided, bin0 = review_jobtally.bin0 '
        '+ excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1, bin2 = '
        'review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, '
        'bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, '
        'bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum = review_jobtally.cost_sum + '
        'excluded.cost_sum, cost_n = review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n; END;'
    ),
    (
        'CREATE TRIGGER review_jobtally_delete AFTER DELETE ON rewards_trial BEGIN UPDATE '
        'review_jobtally SET trials = trials - (SELECT 1 FROM rewards_task k WHERE k.id = '
        'OLD.task_id), reward_sum = reward_sum - (SELECT OLD.reward FROM rewards_task k WHERE'
        ' k.id = OLD.task_id), valid = valid - (SELECT CASE WHEN OLD.is_valid THEN 1 ELSE 0 '
        'END FROM rewards_task k WHERE k.id = OLD.task_id), scorer_pass = scorer_pass - '
        "(SELECT CASE WHEN OLD.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task"
        ' k WHERE k.id = OLD.task_id), scorer_ran = scorer_ran - (SELECT CASE WHEN '
        "OLD.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE "
        'k.id = OLD.task_id), judge_pass = judge_pass - (SELECT CASE WHEN OLD.judge_verdict '
        "IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        "judge_decided = judge_decided - (SELECT CASE WHEN OLD.judge_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        'judge_unparseable = judge_unparseable - (SELECT CASE WHEN OLD.judge_verdict IN '
        "('UNPARSEABLE') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        "run_pass = run_pass - (SELECT CASE WHEN OLD.run_badge IN ('PASS') THEN 1 ELSE 0 END "
        'FROM rewards_task k WHERE k.id = OLD.task_id), run_done = run_done - (SELECT CASE '
        "WHEN OLD.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE "
        'k.id = OLD.task_id), reviewed = reviewed - (SELECT CASE WHEN OLD.annotation_count > '
        '0 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), '
        'gate_disagreements = gate_disagreements - (SELECT CASE WHEN OLD.gate_disagreement IN'
        " ('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE"
        ' 0 END FROM rewards_task k WHERE k.id = OLD.task_id), human_disagreements = '
        'human_disagreements - (SELECT CASE WHEN OLD.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END FROM "
        'rewards_task k WHERE k.id = OLD.task_id), verifier_pass = verifier_pass - (SELECT '
        'CASE WHEN OLD.reward >= k.pass_threshold THEN 1 ELSE 0 END FROM rewards_task k WHERE'
        ' k.id = OLD.task_id), human_pass = human_pass - (SELECT CASE WHEN OLD.human_judgment'
        " IN ('pass') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        "human_decided = human_decided - (SELECT CASE WHEN OLD.human_judgment IN ('pass', "
        "'fail') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin0 = bin0"
        ' - (SELECT CASE WHEN OLD.reward >= 0.0 AND OLD.reward < 0.1 THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), bin1 = bin1 - (SELECT CASE WHEN OLD.reward'
        ' >= 0.1 AND OLD.reward < 0.2 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), bin2 = bin2 - (SELECT CASE WHEN OLD.reward >= 0.2 AND OLD.reward < 0.3'
        ' THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin3 = bin3 - '
        '(SELECT CASE WHEN OLD.reward >= 0.3 AND OLD.reward < 0.4 THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), bin4 = bin4 - (SELECT CASE WHEN OLD.reward'
        ' >= 0.4 AND OLD.reward < 0.5 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), bin5 = bin5 - (SELECT CASE WHEN OLD.reward >= 0.5 AND OLD.reward < 0.6'
        ' THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin6 = bin6 - '
        '(SELECT CASE WHEN OLD.reward >= 0.6 AND OLD.reward < 0.7 THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), bin7 = bin7 - (SELECT CASE WHEN OLD.reward'
        ' >= 0.7 AND OLD.reward < 0.8 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), bin8 = bin8 - (SELECT CASE WHEN OLD.reward >= 0.8 AND OLD.reward < 0.9'
        ' THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin9 = bin9 - '
        '(SELECT CASE WHEN OLD.reward >= 0.9 AND OLD.reward <= 1.0 THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), cost_sum = cost_sum - (SELECT '
        'COALESCE(OLD.cost_usd, 0) FROM rewards_task k WHERE k.id = OLD.task_id), cost_n = '
        'cost_n - (SELECT CASE WHEN OLD.cost_usd IS NOT NULL THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), tokens_sum = tokens_sum - (SELECT '
        'COALESCE(OLD.n_input_tokens + OLD.n_output_tokens, 0) FROM rewards_task k WHERE k.id'
        ' = OLD.task_id), tokens_n = tokens_n - (SELECT CASE WHEN OLD.n_input_tokens IS NOT '
        'NULL AND OLD.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END FROM rewards_task k WHERE'
        ' k.id = OLD.task_id) WHERE job_id = OLD.job_id AND task_id = OLD.task_id AND '
        'agent_name = OLD.agent_name AND model_name = OLD.model_name AND failure_mode = '
        'OLD.failure_mode AND EXISTS (SELECT 1 FROM rewards_task k WHERE k.id = OLD.task_id);'
        ' END;'
    ),
    (
        'CREATE TRIGGER review_jobtally_update AFTER UPDATE ON rewards_trial BEGIN UPDATE '
        'review_jobtally SET trials = trials - (SELECT 1 FROM rewards_task k WHERE k.id = '
        'OLD.task_id), reward_sum = reward_sum - (SELECT OLD.reward FROM rewards_task k WHERE'
        ' k.id = OLD.task_id), valid = valid - (SELECT CASE WHEN OLD.is_valid THEN 1 ELSE 0 '
        'END FROM rewards_task k WHERE k.id = OLD.task_id), scorer_pass = scorer_pass - '
        "(SELECT CASE WHEN OLD.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task"
        ' k WHERE k.id = OLD.task_id), scorer_ran = scorer_ran - (SELECT CASE WHEN '
        "OLD.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE "
        'k.id = OLD.task_id), judge_pass = judge_pass - (SELECT CASE WHEN OLD.judge_verdict '
        "IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        "judge_decided = judge_decided - (SELECT CASE WHEN OLD.judge_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        'judge_unparseable = judge_unparseable - (SELECT CASE WHEN OLD.judge_verdict IN '
        "('UNPARSEABLE') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        "run_pass = run_pass - (SELECT CASE WHEN OLD.run_badge IN ('PASS') THEN 1 ELSE 0 END "
        'FROM rewards_task k WHERE k.id = OLD.task_id), run_done = run_done - (SELECT CASE '
        "WHEN OLD.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE "
        'k.id = OLD.task_id), reviewed = reviewed - (SELECT CASE WHEN OLD.annotation_count > '
        '0 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), '
        'gate_disagreements = gate_disagreements - (SELECT CASE WHEN OLD.gate_disagreement IN'
        " ('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE"
        ' 0 END FROM rewards_task k WHERE k.id = OLD.task_id), human_disagreements = '
        'human_disagreements - (SELECT CASE WHEN OLD.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END FROM "
        'rewards_task k WHERE k.id = OLD.task_id), verifier_pass = verifier_pass - (SELECT '
        'CASE WHEN OLD.reward >= k.pass_threshold THEN 1 ELSE 0 END FROM rewards_task k WHERE'
        ' k.id = OLD.task_id), human_pass = human_pass - (SELECT CASE WHEN OLD.human_judgment'
        " IN ('pass') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        "human_decided = human_decided - (SELECT CASE WHEN OLD.human_judgment IN ('pass', "
        "'fail') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin0 = bin0"
        ' - (SELECT CASE WHEN OLD.reward >= 0.0 AND OLD.reward < 0.1 THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), bin1 = bin1 - (SELECT CASE WHEN OLD.reward'
        ' >= 0.1 AND OLD.reward < 0.2 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), bin2 = bin2 - (SELECT CASE WHEN OLD.reward >= 0.2 AND OLD.reward < 0.3'
        ' THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin3 = bin3 - '
        '(SELECT CASE WHEN OLD.reward >= 0.3 AND OLD.reward < 0.4 THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), bin4 = bin4 - (SELECT CASE WHEN OLD.reward'
        ' >= 0.4 AND OLD.reward < 0.5 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), bin5 = bin5 - (SELECT CASE WHEN OLD.reward >= 0.5 AND OLD.reward < 0.6'
        ' THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin6 = bin6 - '
        '(SELECT CASE WHEN OLD.reward >= 0.6 AND OLD.reward < 0.7 THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), bin7 = bin7 - (SELECT CASE WHEN OLD.reward'
        ' >= 0.7 AND OLD.reward < 0.8 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), bin8 = bin8 - (SELECT CASE WHEN OLD.reward >= 0.8 AND OLD.reward < 0.9'
        ' THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin9 = bin9 - '
        '(SELECT CASE WHEN OLD.reward >= 0.9 AND OLD.reward <= 1.0 THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), cost_sum = cost_sum - (SELECT '
        'COALESCE(OLD.cost_usd, 0) FROM rewards_task k WHERE k.id = OLD.task_id), cost_n = '
        'cost_n - (SELECT CASE WHEN OLD.cost_usd IS NOT NULL THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), tokens_sum = tokens_sum - (SELECT '
        'COALESCE(OLD.n_input_tokens + OLD.n_output_tokens, 0) FROM rewards_task k WHERE k.id'
        ' = OLD.task_id), tokens_n = tokens_n - (SELECT CASE WHEN OLD.n_input_tokens IS NOT '
        'NULL AND OLD.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END FROM rewards_task k WHERE'
        ' k.id = OLD.task_id) WHERE job_id = OLD.job_id AND task_id = OLD.task_id AND '
        'agent_name = OLD.agent_name AND model_name = OLD.model_name AND failure_mode = '
        'OLD.failure_mode AND EXISTS (SELECT 1 FROM rewards_task k WHERE k.id = OLD.task_id);'
        ' INSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, failure_mode,'
        ' trials, reward_sum, valid, scorer_pass, scorer_ran, judge_pass, judge_decided, '
        'judge_unparseable, run_pass, run_done, reviewed, gate_disagreements, '
        'human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, '
        'bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n) '
        'SELECT * FROM (SELECT NEW.job_id, NEW.task_id, NEW.agent_name, NEW.model_name, '
        'NEW.failure_mode, 1 * (1), 1 * (NEW.reward), 1 * (CASE WHEN NEW.is_valid THEN 1 ELSE'
        " 0 END), 1 * (CASE WHEN NEW.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE"
        " WHEN NEW.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.judge_verdict IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.judge_verdict "
        "IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.judge_verdict IN "
        "('UNPARSEABLE') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.run_badge IN ('PASS') THEN 1 "
        "ELSE 0 END), 1 * (CASE WHEN NEW.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 "
        '* (CASE WHEN NEW.annotation_count > 0 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        "NEW.gate_disagreement IN ('judge_pass_scorers_fail', 'scorers_pass_judge_fail', "
        "'advisory_fail') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.human_disagreement IN "
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END), 1 * "
        '(CASE WHEN NEW.reward >= k.pass_threshold THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        "NEW.human_judgment IN ('pass') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.human_judgment"
        " IN ('pass', 'fail') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.0 AND "
        'NEW.reward < 0.1 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.1 AND NEW.reward'
        ' < 0.2 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.2 AND NEW.reward < 0.3 '
        'THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.3 AND NEW.reward < 0.4 THEN 1 '
        'ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.4 AND NEW.reward < 0.5 THEN 1 ELSE 0 '
        'END), 1 * (CASE WHEN NEW.reward >= 0.5 AND NEW.reward < 0.6 THEN 1 ELSE 0 END), 1 * '
        '(CASE WHEN NEW.reward >= 0.6 AND NEW.reward < 0.7 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.7 AND NEW.reward < 0.8 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.8 AND NEW.reward < 0.9 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward'
        ' >= 0.9 AND NEW.reward <= 1.0 THEN 1 ELSE 0 END), 1 * (COALESCE(NEW.cost_usd, 0)), 1'
        ' * (CASE WHEN NEW.cost_usd IS NOT NULL THEN 1 ELSE 0 END), 1 * '
        '(COALESCE(NEW.n_input_tokens + NEW.n_output_tokens, 0)), 1 * (CASE WHEN '
        'NEW.n_input_tokens IS NOT NULL AND NEW.n_output_tokens IS NOT NULL THEN 1 ELSE 0 '
        'END) FROM rewards_task k WHERE k.id = NEW.task_id) s WHERE true ON CONFLICT (job_id,'
        ' task_id, agent_name, model_name, failure_mode) DO UPDATE SET trials = '
        'review_jobtally.trials + excluded.trials, reward_sum = review_jobtally.reward_sum + '
        'excluded.reward_sum, valid = review_jobtally.valid + excluded.valid, scorer_pass = '
        'review_jobtally.scorer_pass + excluded.scorer_pass, scorer_ran = '
        'review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass = '
        'review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + '
        'excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed, '
        'gate_disagreements = review_jobtally.gate_disagreements + '
        'excluded.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass + excluded.verifier_pass, human_pass = '
        'review_jobtally.human_pass + excluded.human_pass, human_decided = '
        'review_jobtally.human_decided + excluded.human_decided, bin0 = review_jobtally.bin0 '
        '+ excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1, bin2 = '
        'review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, '
        'bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, '
        'bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum = review_jobtally.cost_sum + '
        'excluded.cost_sum, cost_n = review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n; END;'
    ),
    'DELETE FROM review_jobtally',
    (
        'INSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, failure_mode, '
        'trials, reward_sum, valid, scorer_pass, scorer_ran, judge_pass, judge_decided, '
        'judge_unparseable, run_pass, run_done, reviewed, gate_disagreements, '
        'human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, '
        'bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n) '
        'SELECT * FROM (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode, SUM(r.sign * (1)), SUM(r.sign * (r.reward)), SUM(r.sign * (CASE WHEN'
        ' r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN '
        "('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN"
        " 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 "
        "END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)), SUM(r.sign * '
        "(CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward "
        '>= k.pass_threshold THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN'
        " ('pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', "
        "'fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < "
        '0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 '
        'THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN'
        ' 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 '
        'ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE'
        ' 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (COALESCE(r.cost_usd, 0))), SUM(r.sign * (CASE WHEN r.cost_usd '
        'IS NOT NULL THEN 1 ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + '
        'r.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND '
        'r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM '
        'rewards_trial) r JOIN rewards_task k ON k.id = r.task_id GROUP BY r.job_id, '
        'r.task_id, r.agent_name, r.model_name, r.failure_mode HAVING SUM(r.sign * (1)) <> 0 '
        'OR SUM(r.sign * (r.reward)) <> 0 OR SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0'
        " END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 "
        "END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 "
        "ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE"
        " 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 "
        "ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN"
        " 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE "
        "0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE "
        '0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) '
        "<> 0 OR SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign *"
        " (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        'r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        "r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE "
        'WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)) <> 0 '
        'OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)) <>'
        ' 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE'
        ' 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 '
        'ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 '
        'THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 '
        'ELSE 0 END)) <> 0 ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode) s WHERE true ON CONFLICT (job_id, task_id, agent_name, model_name, '
        'failure_mode) DO UPDATE SET trials = review_jobtally.trials + excluded.trials, '
        'reward_sum = review_jobtally.reward_sum + excluded.reward_sum, valid = '
        'review_jobtally.valid + excluded.valid, scorer_pass = review_jobtally.scorer_pass + '
        'excluded.scorer_pass, scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran,'
        ' judge_pass = review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + '
        'excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed, '
        'gate_disagreements = review_jobtally.gate_disagreements + '
        'excluded.gate_disagreements, human_disagreements = '
        'review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass = '
        'review_jobtally.verifier_pass + excluded.verifier_pass, human_pass = '
        'review_jobtally.human_pass + excluded.human_pass, human_decided = '
        'review_jobtally.human_decided + excluded.human_decided, bin0 = review_jobtally.bin0 '
        '+ excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1, bin2 = '
        'review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, '
        'bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, '
        'bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum = review_jobtally.cost_sum + '
        'excluded.cost_sum, cost_n = review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n'
    ),
]


def _run(schema_editor, statements):
    with schema_editor.connection.cursor() as cursor:
        for sql in statements.get(schema_editor.connection.vendor, []):
            cursor.execute(sql)


def forwards(apps, schema_editor):
    _run(schema_editor, {"postgresql": POSTGRESQL_FORWARDS, "sqlite": SQLITE_FORWARDS})


def backwards(apps, schema_editor):
    _run(schema_editor, {"postgresql": POSTGRESQL_BACKWARDS, "sqlite": SQLITE_BACKWARDS})


class Migration(migrations.Migration):

    dependencies = [
        ("review", "0009_agreement_tally_triggers"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards, elidable=False),
    ]
