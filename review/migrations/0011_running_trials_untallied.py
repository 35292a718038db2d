"""Running trials leave the job tallies: a trial that is pending or running (a Harbor trial
followed while its job runs, `ingest --follow`) has no reward yet, and counting it would show
it as a failure in the job's mean reward, pass rates and histogram. The triggers of migration
0010 (exact sums in units) count a trial only while its status is neither; a trial that
finishes (an UPDATE to completed or failed) is counted from then on, one deleted while running
is not subtracted. Then a recount under the new rule (review.science.job_tallies.rebuild).

Written out as applied (a migration imports no live project code). SQLite's row triggers take
a WHEN clause, so its update trigger is split in two: subtract the old row when it was
counted, add the new row when it counts. Going back restores migration 0010's triggers from
that migration's own text.
"""

from importlib import import_module

from django.db import migrations

POSTGRESQL_FORWARDS = [
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_insert() RETURNS trigger LANGUAGE plpgsql AS '
        '$$\nBEGIN\nINSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, failure_m'
        'ode, trials, reward_units, valid, scorer_pass, scorer_ran, judge_pass, judge_decided, ju'
        'dge_unparseable, run_pass, run_done, reviewed, gate_disagreements, human_disagreements, '
        'verifier_pass, human_pass, human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7'
        ', bin8, bin9, cost_units, cost_n, tokens_sum, tokens_n) SELECT * FROM (SELECT r.job_id, '
        'r.task_id, r.agent_name, r.model_name, r.failure_mode, SUM(r.sign * (1)), SUM(r.sign * ('
        'CAST(ROUND(r.reward * 1000000000) AS BIGINT))), SUM(r.sign * (CASE WHEN r.is_valid THEN '
        "1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END))"
        ", SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM("
        "r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE "
        "WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r."
        "judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badg"
        "e IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL"
        "') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END"
        ")), SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', 'scorers_"
        "pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_"
        "disagreement IN ('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0"
        ' END)), SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)), SUM(r.'
        "sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE W"
        "HEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r."
        'reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >'
        '= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.2 AN'
        'D r.reward < 0.3 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.rewa'
        'rd < 0.4 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5'
        ' THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 '
        'ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 E'
        'ND)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)), SU'
        'M(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)), SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)), SUM(r.sign * (CAS'
        'E WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN CAST(ROUND(r.cost_usd * 1000000000'
        ') AS BIGINT) ELSE 0 END)), SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 100'
        '0000 THEN 1 ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0'
        '))), SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT N'
        "ULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM new_trials WHERE status NOT IN ('"
        "pending', 'running')) r JOIN rewards_task k ON k.id = r.task_id GROUP BY r.job_id, r.tas"
        'k_id, r.agent_name, r.model_name, r.failure_mode HAVING SUM(r.sign * (1)) <> 0 OR SUM(r.'
        'sign * (CAST(ROUND(r.reward * 1000000000) AS BIGINT))) <> 0 OR SUM(r.sign * (CASE WHEN r'
        ".is_valid THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS"
        "') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAI"
        "L') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN"
        " 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN"
        " 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN "
        "1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END"
        ")) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <"
        '> 0 OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.'
        "sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', 'scorers_pass_judge"
        "_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.human_dis"
        "agreement IN ('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 EN"
        'D)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> '
        "0 OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SU"
        "M(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR S"
        'UM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) <> 0 OR SU'
        'M(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)) <> 0 OR SUM'
        '(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)) <> 0 OR SUM('
        'r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)) <> 0 OR SUM(r'
        '.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.'
        'sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.s'
        'ign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.si'
        'gn * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sig'
        'n * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN CAST(ROUND(r.cost_usd * 100'
        '0000000) AS BIGINT) ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.c'
        'ost_usd <= 1000000 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (COALESCE(r.n_input_tokens +'
        ' r.n_output_tokens, 0))) <> 0 OR SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AN'
        'D r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) <> 0 ORDER BY r.job_id, r.task_id, r'
        '.agent_name, r.model_name, r.failure_mode) s WHERE true ON CONFLICT (job_id, task_id, ag'
        'ent_name, model_name, failure_mode) DO UPDATE SET trials = review_jobtally.trials + excl'
        'uded.trials, reward_units = review_jobtally.reward_units + excluded.reward_units, valid '
        '= review_jobtally.valid + excluded.valid, scorer_pass = review_jobtally.scorer_pass + ex'
        'cluded.scorer_pass, scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran, judge'
        '_pass = review_jobtally.judge_pass + excluded.judge_pass, judge_decided = review_jobtall'
        'y.judge_decided + excluded.judge_decided, judge_unparseable = review_jobtally.judge_unpa'
        'rseable + excluded.judge_unparseable, run_pass = review_jobtally.run_pass + excluded.run'
        '_pass, run_done = review_jobtally.run_done + excluded.run_done, reviewed = review_jobtal'
        'ly.reviewed + excluded.reviewed, gate_disagreements = review_jobtally.gate_disagreements'
        ' + excluded.gate_disagreements, human_disagreements = review_jobtally.human_disagreement'
        's + excluded.human_disagreements, verifier_pass = review_jobtally.verifier_pass + exclud'
        'ed.verifier_pass, human_pass = review_jobtally.human_pass + excluded.human_pass, human_d'
        'ecided = review_jobtally.human_decided + excluded.human_decided, bin0 = review_jobtally.'
        'bin0 + excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1, bin2 = review_jobtall'
        'y.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, bin4 = review_jobta'
        'lly.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + excluded.bin5, bin6 = review_job'
        'tally.bin6 + excluded.bin6, bin7 = review_jobtally.bin7 + excluded.bin7, bin8 = review_j'
        'obtally.bin8 + excluded.bin8, bin9 = review_jobtally.bin9 + excluded.bin9, cost_units = '
        'review_jobtally.cost_units + excluded.cost_units, cost_n = review_jobtally.cost_n + excl'
        'uded.cost_n, tokens_sum = review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = r'
        'eview_jobtally.tokens_n + excluded.tokens_n;\nRETURN NULL;\nEND;\n$$;'
    ),
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_delete() RETURNS trigger LANGUAGE plpgsql AS '
        '$$\nBEGIN\nUPDATE review_jobtally SET trials = review_jobtally.trials - s.trials, reward_u'
        'nits = review_jobtally.reward_units - s.reward_units, valid = review_jobtally.valid - s.'
        'valid, scorer_pass = review_jobtally.scorer_pass - s.scorer_pass, scorer_ran = review_jo'
        'btally.scorer_ran - s.scorer_ran, judge_pass = review_jobtally.judge_pass - s.judge_pass'
        ', judge_decided = review_jobtally.judge_decided - s.judge_decided, judge_unparseable = r'
        'eview_jobtally.judge_unparseable - s.judge_unparseable, run_pass = review_jobtally.run_p'
        'ass - s.run_pass, run_done = review_jobtally.run_done - s.run_done, reviewed = review_jo'
        'btally.reviewed - s.reviewed, gate_disagreements = review_jobtally.gate_disagreements - '
        's.gate_disagreements, human_disagreements = review_jobtally.human_disagreements - s.huma'
        'n_disagreements, verifier_pass = review_jobtally.verifier_pass - s.verifier_pass, human_'
        'pass = review_jobtally.human_pass - s.human_pass, human_decided = review_jobtally.human_'
        'decided - s.human_decided, bin0 = review_jobtally.bin0 - s.bin0, bin1 = review_jobtally.'
        'bin1 - s.bin1, bin2 = review_jobtally.bin2 - s.bin2, bin3 = review_jobtally.bin3 - s.bin'
        '3, bin4 = review_jobtally.bin4 - s.bin4, bin5 = review_jobtally.bin5 - s.bin5, bin6 = re'
        'view_jobtally.bin6 - s.bin6, bin7 = review_jobtally.bin7 - s.bin7, bin8 = review_jobtall'
        'y.bin8 - s.bin8, bin9 = review_jobtally.bin9 - s.bin9, cost_units = review_jobtally.cost'
        '_units - s.cost_units, cost_n = review_jobtally.cost_n - s.cost_n, tokens_sum = review_j'
        'obtally.tokens_sum - s.tokens_sum, tokens_n = review_jobtally.tokens_n - s.tokens_n FROM'
        ' (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode, SUM(r.sign * ('
        '1)), SUM(r.sign * (CAST(ROUND(r.reward * 1000000000) AS BIGINT))), SUM(r.sign * (CASE WH'
        "EN r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1"
        " ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)), "
        "SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.s"
        "ign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)), SUM(r.sign * (C"
        "ASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badg"
        "e IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annotation_count > "
        "0 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_score"
        "rs_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)), SUM(r.sign * "
        "(CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', 'human_fail_automated_p"
        "ass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 E"
        "LSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)), S"
        "UM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)), SUM(r.s"
        'ign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (C'
        'ASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN'
        ' r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.rewar'
        'd >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4'
        ' AND r.reward < 0.5 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.r'
        'eward < 0.6 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < '
        '0.7 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN'
        ' 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE '
        '0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END))'
        ', SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN CAST(ROUND(r.co'
        'st_usd * 1000000000) AS BIGINT) ELSE 0 END)), SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AN'
        'D r.cost_usd <= 1000000 THEN 1 ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + r'
        '.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_out'
        'put_tokens IS NOT NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM old_trials WHE'
        "RE status NOT IN ('pending', 'running')) r JOIN rewards_task k ON k.id = r.task_id GROUP"
        ' BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode HAVING SUM(r.sign * '
        '(1)) <> 0 OR SUM(r.sign * (CAST(ROUND(r.reward * 1000000000) AS BIGINT))) <> 0 OR SUM(r.'
        'sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.score'
        "r_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdi"
        "ct IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdi"
        "ct IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('"
        "PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('"
        "UNPARSEABLE') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS'"
        ") THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') TH"
        'EN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 E'
        "ND)) <> 0 OR SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CA"
        "SE WHEN r.human_disagreement IN ('human_pass_automated_fail', 'human_fail_automated_pass"
        "') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN"
        " 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE"
        " 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELS"
        'E 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE'
        ' 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE '
        '0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0'
        ' END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 '
        'END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 E'
        'ND)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 EN'
        'D)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END'
        ')) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)'
        ') <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN CAST(ROU'
        'ND(r.cost_usd * 1000000000) AS BIGINT) ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.co'
        'st_usd >= 0 AND r.cost_usd <= 1000000 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (COALESCE'
        '(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign * (CASE WHEN r.n_input_to'
        'kens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) <> 0 ORDER BY r.j'
        'ob_id, r.task_id, r.agent_name, r.model_name, r.failure_mode) s (job_id, task_id, agent_'
        'name, model_name, failure_mode, trials, reward_units, valid, scorer_pass, scorer_ran, ju'
        'dge_pass, judge_decided, judge_unparseable, run_pass, run_done, reviewed, gate_disagreem'
        'ents, human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, b'
        'in3, bin4, bin5, bin6, bin7, bin8, bin9, cost_units, cost_n, tokens_sum, tokens_n) WHERE'
        ' review_jobtally.job_id = s.job_id AND review_jobtally.task_id = s.task_id AND review_jo'
        'btally.agent_name = s.agent_name AND review_jobtally.model_name = s.model_name AND revie'
        'w_jobtally.failure_mode = s.failure_mode;\nRETURN NULL;\nEND;\n$$;'
    ),
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_update() RETURNS trigger LANGUAGE plpgsql AS '
        '$$\nBEGIN\nUPDATE review_jobtally SET trials = review_jobtally.trials - s.trials, reward_u'
        'nits = review_jobtally.reward_units - s.reward_units, valid = review_jobtally.valid - s.'
        'valid, scorer_pass = review_jobtally.scorer_pass - s.scorer_pass, scorer_ran = review_jo'
        'btally.scorer_ran - s.scorer_ran, judge_pass = review_jobtally.judge_pass - s.judge_pass'
        ', judge_decided = review_jobtally.judge_decided - s.judge_decided, judge_unparseable = r'
        'eview_jobtally.judge_unparseable - s.judge_unparseable, run_pass = review_jobtally.run_p'
        'ass - s.run_pass, run_done = review_jobtally.run_done - s.run_done, reviewed = review_jo'
        'btally.reviewed - s.reviewed, gate_disagreements = review_jobtally.gate_disagreements - '
        's.gate_disagreements, human_disagreements = review_jobtally.human_disagreements - s.huma'
        'n_disagreements, verifier_pass = review_jobtally.verifier_pass - s.verifier_pass, human_'
        'pass = review_jobtally.human_pass - s.human_pass, human_decided = review_jobtally.human_'
        'decided - s.human_decided, bin0 = review_jobtally.bin0 - s.bin0, bin1 = review_jobtally.'
        'bin1 - s.bin1, bin2 = review_jobtally.bin2 - s.bin2, bin3 = review_jobtally.bin3 - s.bin'
        '3, bin4 = review_jobtally.bin4 - s.bin4, bin5 = review_jobtally.bin5 - s.bin5, bin6 = re'
        'view_jobtally.bin6 - s.bin6, bin7 = review_jobtally.bin7 - s.bin7, bin8 = review_jobtall'
        'y.bin8 - s.bin8, bin9 = review_jobtally.bin9 - s.bin9, cost_units = review_jobtally.cost'
        '_units - s.cost_units, cost_n = review_jobtally.cost_n - s.cost_n, tokens_sum = review_j'
        'obtally.tokens_sum - s.tokens_sum, tokens_n = review_jobtally.tokens_n - s.tokens_n FROM'
        ' (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode, SUM(r.sign * ('
        '1)), SUM(r.sign * (CAST(ROUND(r.reward * 1000000000) AS BIGINT))), SUM(r.sign * (CASE WH'
        "EN r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') "
        "THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1"
        " ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)), "
        "SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.s"
        "ign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)), SUM(r.sign * (C"
        "ASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badg"
        "e IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annotation_count > "
        "0 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_score"
        "rs_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)), SUM(r.sign * "
        "(CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', 'human_fail_automated_p"
        "ass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 E"
        "LSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)), S"
        "UM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)), SUM(r.s"
        'ign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (C'
        'ASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN'
        ' r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.rewar'
        'd >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4'
        ' AND r.reward < 0.5 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.r'
        'eward < 0.6 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < '
        '0.7 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN'
        ' 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE '
        '0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END))'
        ', SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN CAST(ROUND(r.co'
        'st_usd * 1000000000) AS BIGINT) ELSE 0 END)), SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AN'
        'D r.cost_usd <= 1000000 THEN 1 ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + r'
        '.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_out'
        'put_tokens IS NOT NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM old_trials WHE'
        "RE status NOT IN ('pending', 'running')) r JOIN rewards_task k ON k.id = r.task_id GROUP"
        ' BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode HAVING SUM(r.sign * '
        '(1)) <> 0 OR SUM(r.sign * (CAST(ROUND(r.reward * 1000000000) AS BIGINT))) <> 0 OR SUM(r.'
        'sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.score'
        "r_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdi"
        "ct IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdi"
        "ct IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('"
        "PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('"
        "UNPARSEABLE') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS'"
        ") THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') TH"
        'EN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 E'
        "ND)) <> 0 OR SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CA"
        "SE WHEN r.human_disagreement IN ('human_pass_automated_fail', 'human_fail_automated_pass"
        "') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN"
        " 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE"
        " 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELS"
        'E 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE'
        ' 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE '
        '0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0'
        ' END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 '
        'END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 E'
        'ND)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 EN'
        'D)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END'
        ')) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)'
        ') <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN CAST(ROU'
        'ND(r.cost_usd * 1000000000) AS BIGINT) ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.co'
        'st_usd >= 0 AND r.cost_usd <= 1000000 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (COALESCE'
        '(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign * (CASE WHEN r.n_input_to'
        'kens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) <> 0 ORDER BY r.j'
        'ob_id, r.task_id, r.agent_name, r.model_name, r.failure_mode) s (job_id, task_id, agent_'
        'name, model_name, failure_mode, trials, reward_units, valid, scorer_pass, scorer_ran, ju'
        'dge_pass, judge_decided, judge_unparseable, run_pass, run_done, reviewed, gate_disagreem'
        'ents, human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, b'
        'in3, bin4, bin5, bin6, bin7, bin8, bin9, cost_units, cost_n, tokens_sum, tokens_n) WHERE'
        ' review_jobtally.job_id = s.job_id AND review_jobtally.task_id = s.task_id AND review_jo'
        'btally.agent_name = s.agent_name AND review_jobtally.model_name = s.model_name AND revie'
        'w_jobtally.failure_mode = s.failure_mode;\nINSERT INTO review_jobtally (job_id, task_id, '
        'agent_name, model_name, failure_mode, trials, reward_units, valid, scorer_pass, scorer_r'
        'an, judge_pass, judge_decided, judge_unparseable, run_pass, run_done, reviewed, gate_dis'
        'agreements, human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, b'
        'in2, bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_units, cost_n, tokens_sum, tokens_n)'
        ' SELECT * FROM (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode, '
        'SUM(r.sign * (1)), SUM(r.sign * (CAST(ROUND(r.reward * 1000000000) AS BIGINT))), SUM(r.s'
        'ign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdic'
        "t IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 "
        "ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 "
        "END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)), S"
        "UM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE W"
        "HEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annot"
        "ation_count > 0 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('ju"
        "dge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', 'human_fa"
        "il_automated_pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= k.pass_thre"
        "shold THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 E"
        "LSE 0 END)), SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 "
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)), S'
        'UM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)), SUM(r.sig'
        'n * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)), SUM(r.sign * (CAS'
        'E WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r'
        '.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward '
        '>= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 A'
        'ND r.reward < 0.7 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.rew'
        'ard < 0.8 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.'
        '9 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN '
        '1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN C'
        'AST(ROUND(r.cost_usd * 1000000000) AS BIGINT) ELSE 0 END)), SUM(r.sign * (CASE WHEN r.co'
        'st_usd >= 0 AND r.cost_usd <= 1000000 THEN 1 ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_in'
        'put_tokens + r.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NU'
        'LL AND r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM '
        "new_trials WHERE status NOT IN ('pending', 'running')) r JOIN rewards_task k ON k.id = r"
        '.task_id GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode HAVING'
        ' SUM(r.sign * (1)) <> 0 OR SUM(r.sign * (CAST(ROUND(r.reward * 1000000000) AS BIGINT))) '
        '<> 0 OR SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CAS'
        "E WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN"
        " r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge"
        "_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge"
        "_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_ba"
        "dge IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PAS"
        "S', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 T"
        "HEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_s"
        "corers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SU"
        "M(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', 'human_fail_"
        "automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= k.pass_"
        "threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass"
        "') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fai"
        "l') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0"
        '.1 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.'
        '2 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3'
        ' THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 '
        'THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 T'
        'HEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 TH'
        'EN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THE'
        'N 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN'
        ' 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN '
        '1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN '
        '1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000'
        ' THEN CAST(ROUND(r.cost_usd * 1000000000) AS BIGINT) ELSE 0 END)) <> 0 OR SUM(r.sign * ('
        'CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.si'
        'gn * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0 OR SUM(r.sign * (CASE WHE'
        'N r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) <> '
        '0 ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode) s WHERE true'
        ' ON CONFLICT (job_id, task_id, agent_name, model_name, failure_mode) DO UPDATE SET trial'
        's = review_jobtally.trials + excluded.trials, reward_units = review_jobtally.reward_unit'
        's + excluded.reward_units, valid = review_jobtally.valid + excluded.valid, scorer_pass ='
        ' review_jobtally.scorer_pass + excluded.scorer_pass, scorer_ran = review_jobtally.scorer'
        '_ran + excluded.scorer_ran, judge_pass = review_jobtally.judge_pass + excluded.judge_pas'
        's, judge_decided = review_jobtally.judge_decided + excluded.judge_decided, judge_unparse'
        'able = review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = review'
        '_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + excluded.r'
        'un_done, reviewed = review_jobtally.reviewed + excluded.reviewed, gate_disagreements = r'
        'eview_jobtally.gate_disagreements + excluded.gate_disagreements, human_disagreements = r'
        'eview_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass = revie'
        'w_jobtally.verifier_pass + excluded.verifier_pass, human_pass = review_jobtally.human_pa'
        'ss + excluded.human_pass, human_decided = review_jobtally.human_decided + excluded.human'
        '_decided, bin0 = review_jobtally.bin0 + excluded.bin0, bin1 = review_jobtally.bin1 + exc'
        'luded.bin1, bin2 = review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + e'
        'xcluded.bin3, bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 +'
        ' excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = review_jobtally.bin7'
        ' + excluded.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, bin9 = review_jobtally.bi'
        'n9 + excluded.bin9, cost_units = review_jobtally.cost_units + excluded.cost_units, cost_'
        'n = review_jobtally.cost_n + excluded.cost_n, tokens_sum = review_jobtally.tokens_sum + '
        'excluded.tokens_sum, tokens_n = review_jobtally.tokens_n + excluded.tokens_n;\nRETURN NUL'
        'L;\nEND;\n$$;'
    ),
    (
        'DROP TRIGGER IF EXISTS review_jobtally_insert ON rewards_trial;'
    ),
    (
        'CREATE TRIGGER review_jobtally_insert AFTER INSERT ON rewards_trial REFERENCING NEW TABL'
        'E AS new_trials FOR EACH STATEMENT EXECUTE FUNCTION review_jobtally_insert();'
    ),
    (
        'DROP TRIGGER IF EXISTS review_jobtally_delete ON rewards_trial;'
    ),
    (
        'CREATE TRIGGER review_jobtally_delete AFTER DELETE ON rewards_trial REFERENCING OLD TABL'
        'E AS old_trials FOR EACH STATEMENT EXECUTE FUNCTION review_jobtally_delete();'
    ),
    (
        'DROP TRIGGER IF EXISTS review_jobtally_update ON rewards_trial;'
    ),
    (
        'CREATE TRIGGER review_jobtally_update AFTER UPDATE ON rewards_trial REFERENCING OLD TABL'
        'E AS old_trials NEW TABLE AS new_trials FOR EACH STATEMENT EXECUTE FUNCTION review_jobta'
        'lly_update();'
    ),
]

SQLITE_FORWARDS = [
    (
        'DROP TRIGGER IF EXISTS review_jobtally_insert;'
    ),
    (
        'DROP TRIGGER IF EXISTS review_jobtally_delete;'
    ),
    (
        'DROP TRIGGER IF EXISTS review_jobtally_update;'
    ),
    (
        'CREATE TRIGGER review_jobtally_insert AFTER INSERT ON rewards_trial WHEN NEW.status NOT '
        "IN ('pending', 'running') BEGIN INSERT INTO review_jobtally (job_id, task_id, agent_name"
        ', model_name, failure_mode, trials, reward_units, valid, scorer_pass, scorer_ran, judge_'
        'pass, judge_decided, judge_unparseable, run_pass, run_done, reviewed, gate_disagreements'
        ', human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, bin3,'
        ' bin4, bin5, bin6, bin7, bin8, bin9, cost_units, cost_n, tokens_sum, tokens_n) SELECT * '
        'FROM (SELECT NEW.job_id, NEW.task_id, NEW.agent_name, NEW.model_name, NEW.failure_mode, '
        '1 * (1), 1 * (CAST(ROUND(NEW.reward * 1000000000) AS BIGINT)), 1 * (CASE WHEN NEW.is_val'
        "id THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END),"
        " 1 * (CASE WHEN NEW.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHE"
        "N NEW.judge_verdict IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.judge_verdict IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.judge_verdict IN ('UNPARSEABLE')"
        " THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.run_badge IN ('PASS') THEN 1 ELSE 0 END), 1 * (C"
        "ASE WHEN NEW.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.annota"
        "tion_count > 0 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.gate_disagreement IN ('judge_pass_"
        "scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END), 1 * (CASE"
        " WHEN NEW.human_disagreement IN ('human_pass_automated_fail', 'human_fail_automated_pass"
        "') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= k.pass_threshold THEN 1 ELSE 0 END),"
        " 1 * (CASE WHEN NEW.human_judgment IN ('pass') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.hu"
        "man_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.0 AN"
        'D NEW.reward < 0.1 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.1 AND NEW.reward <'
        ' 0.2 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.2 AND NEW.reward < 0.3 THEN 1 EL'
        'SE 0 END), 1 * (CASE WHEN NEW.reward >= 0.3 AND NEW.reward < 0.4 THEN 1 ELSE 0 END), 1 *'
        ' (CASE WHEN NEW.reward >= 0.4 AND NEW.reward < 0.5 THEN 1 ELSE 0 END), 1 * (CASE WHEN NE'
        'W.reward >= 0.5 AND NEW.reward < 0.6 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.'
        '6 AND NEW.reward < 0.7 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.7 AND NEW.rewa'
        'rd < 0.8 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.8 AND NEW.reward < 0.9 THEN '
        '1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.9 AND NEW.reward <= 1.0 THEN 1 ELSE 0 END)'
        ', 1 * (CASE WHEN NEW.cost_usd >= 0 AND NEW.cost_usd <= 1000000 THEN CAST(ROUND(NEW.cost_'
        'usd * 1000000000) AS BIGINT) ELSE 0 END), 1 * (CASE WHEN NEW.cost_usd >= 0 AND NEW.cost_'
        'usd <= 1000000 THEN 1 ELSE 0 END), 1 * (COALESCE(NEW.n_input_tokens + NEW.n_output_token'
        's, 0)), 1 * (CASE WHEN NEW.n_input_tokens IS NOT NULL AND NEW.n_output_tokens IS NOT NUL'
        'L THEN 1 ELSE 0 END) FROM rewards_task k WHERE k.id = NEW.task_id) s WHERE true ON CONFL'
        'ICT (job_id, task_id, agent_name, model_name, failure_mode) DO UPDATE SET trials = revie'
        'w_jobtally.trials + excluded.trials, reward_units = review_jobtally.reward_units + exclu'
        'ded.reward_units, valid = review_jobtally.valid + excluded.valid, scorer_pass = review_j'
        'obtally.scorer_pass + excluded.scorer_pass, scorer_ran = review_jobtally.scorer_ran + ex'
        'cluded.scorer_ran, judge_pass = review_jobtally.judge_pass + excluded.judge_pass, judge_'
        'decided = review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = re'
        'view_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = review_jobtally'
        '.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + excluded.run_done, '
        'reviewed = review_jobtally.reviewed + excluded.reviewed, gate_disagreements = review_job'
        'tally.gate_disagreements + excluded.gate_disagreements, human_disagreements = review_job'
        'tally.human_disagreements + excluded.human_disagreements, verifier_pass = review_jobtall'
        'y.verifier_pass + excluded.verifier_pass, human_pass = review_jobtally.human_pass + excl'
        'uded.human_pass, human_decided = review_jobtally.human_decided + excluded.human_decided,'
        ' bin0 = review_jobtally.bin0 + excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin'
        '1, bin2 = review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.b'
        'in3, bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + excluded'
        '.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = review_jobtally.bin7 + exclud'
        'ed.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, bin9 = review_jobtally.bin9 + excl'
        'uded.bin9, cost_units = review_jobtally.cost_units + excluded.cost_units, cost_n = revie'
        'w_jobtally.cost_n + excluded.cost_n, tokens_sum = review_jobtally.tokens_sum + excluded.'
        'tokens_sum, tokens_n = review_jobtally.tokens_n + excluded.tokens_n; END;'
    ),
    (
        'CREATE TRIGGER review_jobtally_delete AFTER DELETE ON rewards_trial WHEN OLD.status NOT '
        "IN ('pending', 'running') BEGIN UPDATE review_jobtally SET trials = trials - (SELECT 1 F"
        'ROM rewards_task k WHERE k.id = OLD.task_id), reward_units = reward_units - (SELECT CAST'
        '(ROUND(OLD.reward * 1000000000) AS BIGINT) FROM rewards_task k WHERE k.id = OLD.task_id)'
        ', valid = valid - (SELECT CASE WHEN OLD.is_valid THEN 1 ELSE 0 END FROM rewards_task k W'
        'HERE k.id = OLD.task_id), scorer_pass = scorer_pass - (SELECT CASE WHEN OLD.scorer_verdi'
        "ct IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), scorer_r"
        "an = scorer_ran - (SELECT CASE WHEN OLD.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0"
        ' END FROM rewards_task k WHERE k.id = OLD.task_id), judge_pass = judge_pass - (SELECT CA'
        "SE WHEN OLD.judge_verdict IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id ="
        " OLD.task_id), judge_decided = judge_decided - (SELECT CASE WHEN OLD.judge_verdict IN ('"
        "PASS', 'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), judge_un"
        "parseable = judge_unparseable - (SELECT CASE WHEN OLD.judge_verdict IN ('UNPARSEABLE') T"
        'HEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), run_pass = run_pass - (S'
        "ELECT CASE WHEN OLD.run_badge IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHERE k."
        "id = OLD.task_id), run_done = run_done - (SELECT CASE WHEN OLD.run_badge IN ('PASS', 'FA"
        "IL') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), reviewed = reviewe"
        'd - (SELECT CASE WHEN OLD.annotation_count > 0 THEN 1 ELSE 0 END FROM rewards_task k WHE'
        'RE k.id = OLD.task_id), gate_disagreements = gate_disagreements - (SELECT CASE WHEN OLD.'
        "gate_disagreement IN ('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fa"
        "il') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), human_disagreement"
        "s = human_disagreements - (SELECT CASE WHEN OLD.human_disagreement IN ('human_pass_autom"
        "ated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.i"
        'd = OLD.task_id), verifier_pass = verifier_pass - (SELECT CASE WHEN OLD.reward >= k.pass'
        '_threshold THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), human_pass ='
        " human_pass - (SELECT CASE WHEN OLD.human_judgment IN ('pass') THEN 1 ELSE 0 END FROM re"
        'wards_task k WHERE k.id = OLD.task_id), human_decided = human_decided - (SELECT CASE WHE'
        "N OLD.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.i"
        'd = OLD.task_id), bin0 = bin0 - (SELECT CASE WHEN OLD.reward >= 0.0 AND OLD.reward < 0.1'
        ' THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin1 = bin1 - (SELECT '
        'CASE WHEN OLD.reward >= 0.1 AND OLD.reward < 0.2 THEN 1 ELSE 0 END FROM rewards_task k W'
        'HERE k.id = OLD.task_id), bin2 = bin2 - (SELECT CASE WHEN OLD.reward >= 0.2 AND OLD.rewa'
        'rd < 0.3 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin3 = bin3 - '
        '(SELECT CASE WHEN OLD.reward >= 0.3 AND OLD.reward < 0.4 THEN 1 ELSE 0 END FROM rewards_'
        'task k WHERE k.id = OLD.task_id), bin4 = bin4 - (SELECT CASE WHEN OLD.reward >= 0.4 AND '
        'OLD.reward < 0.5 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin5 ='
        ' bin5 - (SELECT CASE WHEN OLD.reward >= 0.5 AND OLD.reward < 0.6 THEN 1 ELSE 0 END FROM '
        'rewards_task k WHERE k.id = OLD.task_id), bin6 = bin6 - (SELECT CASE WHEN OLD.reward >= '
        '0.6 AND OLD.reward < 0.7 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id)'
        ', bin7 = bin7 - (SELECT CASE WHEN OLD.reward >= 0.7 AND OLD.reward < 0.8 THEN 1 ELSE 0 E'
        'ND FROM rewards_task k WHERE k.id = OLD.task_id), bin8 = bin8 - (SELECT CASE WHEN OLD.re'
        'ward >= 0.8 AND OLD.reward < 0.9 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.'
        'task_id), bin9 = bin9 - (SELECT CASE WHEN OLD.reward >= 0.9 AND OLD.reward <= 1.0 THEN 1'
        ' ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), cost_units = cost_units - (SE'
        'LECT CASE WHEN OLD.cost_usd >= 0 AND OLD.cost_usd <= 1000000 THEN CAST(ROUND(OLD.cost_us'
        'd * 1000000000) AS BIGINT) ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), cos'
        't_n = cost_n - (SELECT CASE WHEN OLD.cost_usd >= 0 AND OLD.cost_usd <= 1000000 THEN 1 EL'
        'SE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), tokens_sum = tokens_sum - (SELEC'
        'T COALESCE(OLD.n_input_tokens + OLD.n_output_tokens, 0) FROM rewards_task k WHERE k.id ='
        ' OLD.task_id), tokens_n = tokens_n - (SELECT CASE WHEN OLD.n_input_tokens IS NOT NULL AN'
        'D OLD.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD'
        '.task_id) WHERE job_id = OLD.job_id AND task_id = OLD.task_id AND agent_name = OLD.agent'
        '_name AND model_name = OLD.model_name AND failure_mode = OLD.failure_mode AND EXISTS (SE'
        'LECT 1 FROM rewards_task k WHERE k.id = OLD.task_id); END;'
    ),
    (
        'CREATE TRIGGER review_jobtally_update_old AFTER UPDATE ON rewards_trial WHEN OLD.status '
        "NOT IN ('pending', 'running') BEGIN UPDATE review_jobtally SET trials = trials - (SELECT"
        ' 1 FROM rewards_task k WHERE k.id = OLD.task_id), reward_units = reward_units - (SELECT '
        'CAST(ROUND(OLD.reward * 1000000000) AS BIGINT) FROM rewards_task k WHERE k.id = OLD.task'
        '_id), valid = valid - (SELECT CASE WHEN OLD.is_valid THEN 1 ELSE 0 END FROM rewards_task'
        ' k WHERE k.id = OLD.task_id), scorer_pass = scorer_pass - (SELECT CASE WHEN OLD.scorer_v'
        "erdict IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), scor"
        "er_ran = scorer_ran - (SELECT CASE WHEN OLD.scorer_verdict IN ('PASS', 'FAIL') THEN 1 EL"
        'SE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), judge_pass = judge_pass - (SELEC'
        "T CASE WHEN OLD.judge_verdict IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHERE k."
        'id = OLD.task_id), judge_decided = judge_decided - (SELECT CASE WHEN OLD.judge_verdict I'
        "N ('PASS', 'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), judg"
        "e_unparseable = judge_unparseable - (SELECT CASE WHEN OLD.judge_verdict IN ('UNPARSEABLE"
        "') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), run_pass = run_pass "
        "- (SELECT CASE WHEN OLD.run_badge IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHER"
        "E k.id = OLD.task_id), run_done = run_done - (SELECT CASE WHEN OLD.run_badge IN ('PASS',"
        " 'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), reviewed = rev"
        'iewed - (SELECT CASE WHEN OLD.annotation_count > 0 THEN 1 ELSE 0 END FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), gate_disagreements = gate_disagreements - (SELECT CASE WHEN '
        "OLD.gate_disagreement IN ('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisor"
        "y_fail') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), human_disagree"
        "ments = human_disagreements - (SELECT CASE WHEN OLD.human_disagreement IN ('human_pass_a"
        "utomated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END FROM rewards_task k WHERE"
        ' k.id = OLD.task_id), verifier_pass = verifier_pass - (SELECT CASE WHEN OLD.reward >= k.'
        'pass_threshold THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), human_pa'
        "ss = human_pass - (SELECT CASE WHEN OLD.human_judgment IN ('pass') THEN 1 ELSE 0 END FRO"
        'M rewards_task k WHERE k.id = OLD.task_id), human_decided = human_decided - (SELECT CASE'
        " WHEN OLD.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END FROM rewards_task k WHERE"
        ' k.id = OLD.task_id), bin0 = bin0 - (SELECT CASE WHEN OLD.reward >= 0.0 AND OLD.reward <'
        ' 0.1 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin1 = bin1 - (SEL'
        'ECT CASE WHEN OLD.reward >= 0.1 AND OLD.reward < 0.2 THEN 1 ELSE 0 END FROM rewards_task'
        ' k WHERE k.id = OLD.task_id), bin2 = bin2 - (SELECT CASE WHEN OLD.reward >= 0.2 AND OLD.'
        'reward < 0.3 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin3 = bin'
        '3 - (SELECT CASE WHEN OLD.reward >= 0.3 AND OLD.reward < 0.4 THEN 1 ELSE 0 END FROM rewa'
        'rds_task k WHERE k.id = OLD.task_id), bin4 = bin4 - (SELECT CASE WHEN OLD.reward >= 0.4 '
        'AND OLD.reward < 0.5 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bi'
        'n5 = bin5 - (SELECT CASE WHEN OLD.reward >= 0.5 AND OLD.reward < 0.6 THEN 1 ELSE 0 END F'
        'ROM rewards_task k WHERE k.id = OLD.task_id), bin6 = bin6 - (SELECT CASE WHEN OLD.reward'
        ' >= 0.6 AND OLD.reward < 0.7 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task'
        '_id), bin7 = bin7 - (SELECT CASE WHEN OLD.reward >= 0.7 AND OLD.reward < 0.8 THEN 1 ELSE'
        ' 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin8 = bin8 - (SELECT CASE WHEN OL'
        'D.reward >= 0.8 AND OLD.reward < 0.9 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), bin9 = bin9 - (SELECT CASE WHEN OLD.reward >= 0.9 AND OLD.reward <= 1.0 TH'
        'EN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), cost_units = cost_units -'
        ' (SELECT CASE WHEN OLD.cost_usd >= 0 AND OLD.cost_usd <= 1000000 THEN CAST(ROUND(OLD.cos'
        't_usd * 1000000000) AS BIGINT) ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id),'
        ' cost_n = cost_n - (SELECT CASE WHEN OLD.cost_usd >= 0 AND OLD.cost_usd <= 1000000 THEN '
        '1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), tokens_sum = tokens_sum - (S'
        'ELECT COALESCE(OLD.n_input_tokens + OLD.n_output_tokens, 0) FROM rewards_task k WHERE k.'
        'id = OLD.task_id), tokens_n = tokens_n - (SELECT CASE WHEN OLD.n_input_tokens IS NOT NUL'
        'L AND OLD.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id ='
        ' OLD.task_id) WHERE job_id = OLD.job_id AND task_id = OLD.task_id AND agent_name = OLD.a'
        'gent_name AND model_name = OLD.model_name AND failure_mode = OLD.failure_mode AND EXISTS'
        ' (SELECT 1 FROM rewards_task k WHERE k.id = OLD.task_id); END;'
    ),
    (
        'CREATE TRIGGER review_jobtally_update_new AFTER UPDATE ON rewards_trial WHEN NEW.status '
        "NOT IN ('pending', 'running') BEGIN INSERT INTO review_jobtally (job_id, task_id, agent_"
        'name, model_name, failure_mode, trials, reward_units, valid, scorer_pass, scorer_ran, ju'
        'dge_pass, judge_decided, judge_unparseable, run_pass, run_done, reviewed, gate_disagreem'
        'ents, human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2, b'
        'in3, bin4, bin5, bin6, bin7, bin8, bin9, cost_units, cost_n, tokens_sum, tokens_n) SELEC'
        'T * FROM (SELECT NEW.job_id, NEW.task_id, NEW.agent_name, NEW.model_name, NEW.failure_mo'
        'de, 1 * (1), 1 * (CAST(ROUND(NEW.reward * 1000000000) AS BIGINT)), 1 * (CASE WHEN NEW.is'
        "_valid THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.scorer_verdict IN ('PASS') THEN 1 ELSE 0 E"
        "ND), 1 * (CASE WHEN NEW.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE"
        " WHEN NEW.judge_verdict IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.judge_verdict"
        " IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.judge_verdict IN ('UNPARSEAB"
        "LE') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.run_badge IN ('PASS') THEN 1 ELSE 0 END), 1 "
        "* (CASE WHEN NEW.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.an"
        "notation_count > 0 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.gate_disagreement IN ('judge_p"
        "ass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END), 1 * ("
        "CASE WHEN NEW.human_disagreement IN ('human_pass_automated_fail', 'human_fail_automated_"
        "pass') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= k.pass_threshold THEN 1 ELSE 0 E"
        "ND), 1 * (CASE WHEN NEW.human_judgment IN ('pass') THEN 1 ELSE 0 END), 1 * (CASE WHEN NE"
        "W.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0."
        '0 AND NEW.reward < 0.1 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.1 AND NEW.rewa'
        'rd < 0.2 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.2 AND NEW.reward < 0.3 THEN '
        '1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.3 AND NEW.reward < 0.4 THEN 1 ELSE 0 END),'
        ' 1 * (CASE WHEN NEW.reward >= 0.4 AND NEW.reward < 0.5 THEN 1 ELSE 0 END), 1 * (CASE WHE'
        'N NEW.reward >= 0.5 AND NEW.reward < 0.6 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >'
        '= 0.6 AND NEW.reward < 0.7 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.7 AND NEW.'
        'reward < 0.8 THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.8 AND NEW.reward < 0.9 T'
        'HEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.9 AND NEW.reward <= 1.0 THEN 1 ELSE 0 '
        'END), 1 * (CASE WHEN NEW.cost_usd >= 0 AND NEW.cost_usd <= 1000000 THEN CAST(ROUND(NEW.c'
        'ost_usd * 1000000000) AS BIGINT) ELSE 0 END), 1 * (CASE WHEN NEW.cost_usd >= 0 AND NEW.c'
        'ost_usd <= 1000000 THEN 1 ELSE 0 END), 1 * (COALESCE(NEW.n_input_tokens + NEW.n_output_t'
        'okens, 0)), 1 * (CASE WHEN NEW.n_input_tokens IS NOT NULL AND NEW.n_output_tokens IS NOT'
        ' NULL THEN 1 ELSE 0 END) FROM rewards_task k WHERE k.id = NEW.task_id) s WHERE true ON C'
        'ONFLICT (job_id, task_id, agent_name, model_name, failure_mode) DO UPDATE SET trials = r'
        'eview_jobtally.trials + excluded.trials, reward_units = review_jobtally.reward_units + e'
        'xcluded.reward_units, valid = review_jobtally.valid + excluded.valid, scorer_pass = revi'
        'ew_jobtally.scorer_pass + excluded.scorer_pass, scorer_ran = review_jobtally.scorer_ran '
        '+ excluded.scorer_ran, judge_pass = review_jobtally.judge_pass + excluded.judge_pass, ju'
        'dge_decided = review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable '
        '= review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = review_jobt'
        'ally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done + excluded.run_do'
        'ne, reviewed = review_jobtally.reviewed + excluded.reviewed, gate_disagreements = review'
        '_jobtally.gate_disagreements + excluded.gate_disagreements, human_disagreements = review'
        '_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass = review_job'
        'tally.verifier_pass + excluded.verifier_pass, human_pass = review_jobtally.human_pass + '
        'excluded.human_pass, human_decided = review_jobtally.human_decided + excluded.human_deci'
        'ded, bin0 = review_jobtally.bin0 + excluded.bin0, bin1 = review_jobtally.bin1 + excluded'
        '.bin1, bin2 = review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 + exclud'
        'ed.bin3, bin4 = review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + excl'
        'uded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = review_jobtally.bin7 + ex'
        'cluded.bin7, bin8 = review_jobtally.bin8 + excluded.bin8, bin9 = review_jobtally.bin9 + '
        'excluded.bin9, cost_units = review_jobtally.cost_units + excluded.cost_units, cost_n = r'
        'eview_jobtally.cost_n + excluded.cost_n, tokens_sum = review_jobtally.tokens_sum + exclu'
        'ded.tokens_sum, tokens_n = review_jobtally.tokens_n + excluded.tokens_n; END;'
    ),
]

RECOUNT = [
    (
        'DELETE FROM review_jobtally'
    ),
    (
        'INSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, failure_mode, tria'
        'ls, reward_units, valid, scorer_pass, scorer_ran, judge_pass, judge_decided, judge_unpar'
        'seable, run_pass, run_done, reviewed, gate_disagreements, human_disagreements, verifier_'
        'pass, human_pass, human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8, b'
        'in9, cost_units, cost_n, tokens_sum, tokens_n) SELECT * FROM (SELECT r.job_id, r.task_id'
        ', r.agent_name, r.model_name, r.failure_mode, SUM(r.sign * (1)), SUM(r.sign * (CAST(ROUN'
        'D(r.reward * 1000000000) AS BIGINT))), SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 '
        "END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.s"
        "ign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * "
        "(CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.ju"
        "dge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_ver"
        "dict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PA"
        "SS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1"
        ' ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)), SUM(r'
        ".sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', 'scorers_pass_judg"
        "e_fail', 'advisory_fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_disagreem"
        "ent IN ('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END)), S"
        'UM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)), SUM(r.sign * (C'
        "ASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.hum"
        "an_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >="
        ' 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND'
        ' r.reward < 0.2 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.rewar'
        'd < 0.3 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 '
        'THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 E'
        'LSE 0 END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 EN'
        'D)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)), SUM'
        '(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)), SUM(r.sign '
        '* (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE '
        'WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.'
        'cost_usd >= 0 AND r.cost_usd <= 1000000 THEN CAST(ROUND(r.cost_usd * 1000000000) AS BIGI'
        'NT) ELSE 0 END)), SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN'
        ' 1 ELSE 0 END)), SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))), SUM('
        'r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN '
        "1 ELSE 0 END)) FROM (SELECT 1 AS sign, * FROM rewards_trial WHERE status NOT IN ('pendin"
        "g', 'running')) r JOIN rewards_task k ON k.id = r.task_id GROUP BY r.job_id, r.task_id, "
        'r.agent_name, r.model_name, r.failure_mode HAVING SUM(r.sign * (1)) <> 0 OR SUM(r.sign *'
        ' (CAST(ROUND(r.reward * 1000000000) AS BIGINT))) <> 0 OR SUM(r.sign * (CASE WHEN r.is_va'
        "lid THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THE"
        "N 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') TH"
        "EN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELS"
        "E 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELS"
        "E 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE"
        " 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> "
        "0 OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR"
        ' SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign *'
        " (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', 'scorers_pass_judge_fail'"
        ", 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.human_disagreem"
        "ent IN ('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END)) <>"
        ' 0 OR SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR S'
        "UM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.si"
        "gn * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.s"
        'ign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.si'
        'gn * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sig'
        'n * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign'
        ' * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign '
        '* (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign *'
        ' (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * ('
        'CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (C'
        'ASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CA'
        'SE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CA'
        'SE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN CAST(ROUND(r.cost_usd * 100000000'
        '0) AS BIGINT) ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_us'
        'd <= 1000000 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_o'
        'utput_tokens, 0))) <> 0 OR SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_'
        'output_tokens IS NOT NULL THEN 1 ELSE 0 END)) <> 0 ORDER BY r.job_id, r.task_id, r.agent'
        '_name, r.model_name, r.failure_mode) s WHERE true ON CONFLICT (job_id, task_id, agent_na'
        'me, model_name, failure_mode) DO UPDATE SET trials = review_jobtally.trials + excluded.t'
        'rials, reward_units = review_jobtally.reward_units + excluded.reward_units, valid = revi'
        'ew_jobtally.valid + excluded.valid, scorer_pass = review_jobtally.scorer_pass + excluded'
        '.scorer_pass, scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass '
        '= review_jobtally.judge_pass + excluded.judge_pass, judge_decided = review_jobtally.judg'
        'e_decided + excluded.judge_decided, judge_unparseable = review_jobtally.judge_unparseabl'
        'e + excluded.judge_unparseable, run_pass = review_jobtally.run_pass + excluded.run_pass,'
        ' run_done = review_jobtally.run_done + excluded.run_done, reviewed = review_jobtally.rev'
        'iewed + excluded.reviewed, gate_disagreements = review_jobtally.gate_disagreements + exc'
        'luded.gate_disagreements, human_disagreements = review_jobtally.human_disagreements + ex'
        'cluded.human_disagreements, verifier_pass = review_jobtally.verifier_pass + excluded.ver'
        'ifier_pass, human_pass = review_jobtally.human_pass + excluded.human_pass, human_decided'
        ' = review_jobtally.human_decided + excluded.human_decided, bin0 = review_jobtally.bin0 +'
        ' excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1, bin2 = review_jobtally.bin2'
        ' + excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, bin4 = review_jobtally.bi'
        'n4 + excluded.bin4, bin5 = review_jobtally.bin5 + excluded.bin5, bin6 = review_jobtally.'
        'bin6 + excluded.bin6, bin7 = review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtall'
        'y.bin8 + excluded.bin8, bin9 = review_jobtally.bin9 + excluded.bin9, cost_units = review'
        '_jobtally.cost_units + excluded.cost_units, cost_n = review_jobtally.cost_n + excluded.c'
        'ost_n, tokens_sum = review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = review_'
        'jobtally.tokens_n + excluded.tokens_n'
    ),
]

SQLITE_DROP_SPLIT = [
    "DROP TRIGGER IF EXISTS review_jobtally_update_old;",
    "DROP TRIGGER IF EXISTS review_jobtally_update_new;",
]


def _run(schema_editor, statements):
    with schema_editor.connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def forwards(apps, schema_editor):
    triggers = {"postgresql": POSTGRESQL_FORWARDS, "sqlite": SQLITE_FORWARDS}
    vendor = schema_editor.connection.vendor
    if vendor in triggers:
        _run(schema_editor, [*triggers[vendor], *RECOUNT])


def backwards(apps, schema_editor):
    exact = import_module("review.migrations.0010_exact_job_sums")
    triggers = {
        "postgresql": exact.POSTGRESQL_FORWARDS,
        "sqlite": [*SQLITE_DROP_SPLIT, *exact.SQLITE_FORWARDS],
    }
    vendor = schema_editor.connection.vendor
    if vendor in triggers:
        _run(schema_editor, [*triggers[vendor], *exact.RECOUNT])


class Migration(migrations.Migration):

    dependencies = [
        ("review", "0010_exact_job_sums"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards, elidable=False),
    ]
