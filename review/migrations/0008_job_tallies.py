"""Per-job tallies: each job's figures and each trial's first review, kept by triggers
(review.science.job_tallies), and agreement's tallies per job, kept beside those of every trial
(review.models.JobJudgmentTally, JobPairTally).

The tables; the triggers on rewards_trial and review_annotation (PostgreSQL: per statement,
over transition tables; SQLite: per row); a first count of what is already stored.

The statements are written out as this migration ran them when it was first applied, for
each vendor (adjacent string literals, byte for byte the same text: the trigger functions
and the SQLite trigger definitions a database holds are the same whichever copy of this
file migrated it). A migration is history: it imports no live project code, and a later
change of the triggers comes with a migration of its own.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

POSTGRESQL_FORWARDS = [
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_insert() RETURNS trigger LANGUAGE'
        ' plpgsql AS $$\n'
        'BEGIN\n'
        'INSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, failure_mode,'
        ' trials, reward_sum, valid, scorer_pass, scorer_ran, judge_pass, judge_decided,'
        ' judge_unparseable, run_pass, run_done, reviewed, gate_disagreements,'
        ' human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2,'
        ' bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n)'
        ' SELECT *'
        ' FROM (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode,'
        ' SUM(r.sign * (1)),'
        ' SUM(r.sign * (r.reward)),'
        ' SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (COALESCE(r.cost_usd, 0))),'
        ' SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))),'
        ' SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT'
        ' NULL THEN 1 ELSE 0 END))'
        ' FROM (SELECT 1 AS sign, *'
        ' FROM new_trials) r'
        ' JOIN rewards_task k ON k.id = r.task_id'
        ' GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode'
        ' HAVING SUM(r.sign * (1)) <> 0'
        ' OR SUM(r.sign * (r.reward)) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0"
        ' END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END))"
        ' <> 0'
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END))"
        ' <> 0'
        " OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0"
        ' END)) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0'
        ' OR SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS'
        ' NOT NULL THEN 1 ELSE 0 END)) <> 0'
        ' ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode) s'
        ' WHERE true'
        ' ON CONFLICT (job_id, task_id, agent_name, model_name, failure_mode)'
        ' DO UPDATE SET trials = review_jobtally.trials + excluded.trials, reward_sum ='
        ' review_jobtally.reward_sum + excluded.reward_sum, valid = review_jobtally.valid +'
        ' excluded.valid, scorer_pass = review_jobtally.scorer_pass + excluded.scorer_pass,'
        ' scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass ='
        ' review_jobtally.judge_pass + excluded.judge_pass, judge_decided ='
        ' review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable ='
        ' review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass ='
        ' review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done'
        ' + excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed,'
        ' gate_disagreements = review_jobtally.gate_disagreements +'
        ' excluded.gate_disagreements, human_disagreements ='
        ' review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass'
        ' = review_jobtally.verifier_pass + excluded.verifier_pass, human_pass ='
        ' review_jobtally.human_pass + excluded.human_pass, human_decided ='
        ' review_jobtally.human_decided + excluded.human_decided, bin0 ='
        ' review_jobtally.bin0 + excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1,'
        ' bin2 = review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 +'
        ' excluded.bin3, bin4 = review_jobtally.bin4 + excluded.bin4, bin5 ='
        ' review_jobtally.bin5 + excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6,'
        ' bin7 = review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 +'
        ' excluded.bin8, bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum ='
        ' review_jobtally.cost_sum + excluded.cost_sum, cost_n = review_jobtally.cost_n +'
        ' excluded.cost_n, tokens_sum = review_jobtally.tokens_sum + excluded.tokens_sum,'
        ' tokens_n = review_jobtally.tokens_n + excluded.tokens_n;\n'
        'RETURN NULL;\n'
        'END;\n'
        '$$;'
    ),
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_delete() RETURNS trigger LANGUAGE'
        ' plpgsql AS $$\n'
        'BEGIN\n'
        'UPDATE review_jobtally SET trials = review_jobtally.trials - s.trials, reward_sum ='
        ' review_jobtally.reward_sum - s.reward_sum, valid = review_jobtally.valid -'
        ' s.valid, scorer_pass = review_jobtally.scorer_pass - s.scorer_pass, scorer_ran ='
        ' review_jobtally.scorer_ran - s.scorer_ran, judge_pass = review_jobtally.judge_pass'
        ' - s.judge_pass, judge_decided = review_jobtally.judge_decided - s.judge_decided,'
        ' judge_unparseable = review_jobtally.judge_unparseable - s.judge_unparseable,'
        ' run_pass = review_jobtally.run_pass - s.run_pass, run_done ='
        ' review_jobtally.run_done - s.run_done, reviewed = review_jobtally.reviewed -'
        ' s.reviewed, gate_disagreements = review_jobtally.gate_disagreements -'
        ' s.gate_disagreements, human_disagreements = review_jobtally.human_disagreements -'
        ' s.human_disagreements, verifier_pass = review_jobtally.verifier_pass -'
        ' s.verifier_pass, human_pass = review_jobtally.human_pass - s.human_pass,'
        ' human_decided = review_jobtally.human_decided - s.human_decided, bin0 ='
        ' review_jobtally.bin0 - s.bin0, bin1 = review_jobtally.bin1 - s.bin1, bin2 ='
        ' review_jobtally.bin2 - s.bin2, bin3 = review_jobtally.bin3 - s.bin3, bin4 ='
        ' review_jobtally.bin4 - s.bin4, bin5 = review_jobtally.bin5 - s.bin5, bin6 ='
        ' review_jobtally.bin6 - s.bin6, bin7 = review_jobtally.bin7 - s.bin7, bin8 ='
        ' review_jobtally.bin8 - s.bin8, bin9 = review_jobtally.bin9 - s.bin9, cost_sum ='
        ' review_jobtally.cost_sum - s.cost_sum, cost_n = review_jobtally.cost_n - s.cost_n,'
        ' tokens_sum = review_jobtally.tokens_sum - s.tokens_sum, tokens_n ='
        ' review_jobtally.tokens_n - s.tokens_n'
        ' FROM (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode,'
        ' SUM(r.sign * (1)),'
        ' SUM(r.sign * (r.reward)),'
        ' SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (COALESCE(r.cost_usd, 0))),'
        ' SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))),'
        ' SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT'
        ' NULL THEN 1 ELSE 0 END))'
        ' FROM (SELECT 1 AS sign, *'
        ' FROM old_trials) r'
        ' JOIN rewards_task k ON k.id = r.task_id'
        ' GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode'
        ' HAVING SUM(r.sign * (1)) <> 0'
        ' OR SUM(r.sign * (r.reward)) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0"
        ' END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END))"
        ' <> 0'
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END))"
        ' <> 0'
        " OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0"
        ' END)) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0'
        ' OR SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS'
        ' NOT NULL THEN 1 ELSE 0 END)) <> 0'
        ' ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode) s'
        ' (job_id, task_id, agent_name, model_name, failure_mode, trials, reward_sum, valid,'
        ' scorer_pass, scorer_ran, judge_pass, judge_decided, judge_unparseable, run_pass,'
        ' run_done, reviewed, gate_disagreements, human_disagreements, verifier_pass,'
        ' human_pass, human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8,'
        ' bin9, cost_sum, cost_n, tokens_sum, tokens_n)'
        ' WHERE review_jobtally.job_id = s.job_id AND review_jobtally.task_id = s.task_id'
        ' AND review_jobtally.agent_name = s.agent_name AND review_jobtally.model_name ='
        ' s.model_name AND review_jobtally.failure_mode = s.failure_mode;\n'
        'RETURN NULL;\n'
        'END;\n'
        '$$;'
    ),
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_update() RETURNS trigger LANGUAGE'
        ' plpgsql AS $$\n'
        'BEGIN\n'
        'UPDATE review_jobtally SET trials = review_jobtally.trials - s.trials, reward_sum ='
        ' review_jobtally.reward_sum - s.reward_sum, valid = review_jobtally.valid -'
        ' s.valid, scorer_pass = review_jobtally.scorer_pass - s.scorer_pass, scorer_ran ='
        ' review_jobtally.scorer_ran - s.scorer_ran, judge_pass = review_jobtally.judge_pass'
        ' - s.judge_pass, judge_decided = review_jobtally.judge_decided - s.judge_decided,'
        ' judge_unparseable = review_jobtally.judge_unparseable - s.judge_unparseable,'
        ' run_pass = review_jobtally.run_pass - s.run_pass, run_done ='
        ' review_jobtally.run_done - s.run_done, reviewed = review_jobtally.reviewed -'
        ' s.reviewed, gate_disagreements = review_jobtally.gate_disagreements -'
        ' s.gate_disagreements, human_disagreements = review_jobtally.human_disagreements -'
        ' s.human_disagreements, verifier_pass = review_jobtally.verifier_pass -'
        ' s.verifier_pass, human_pass = review_jobtally.human_pass - s.human_pass,'
        ' human_decided = review_jobtally.human_decided - s.human_decided, bin0 ='
        ' review_jobtally.bin0 - s.bin0, bin1 = review_jobtally.bin1 - s.bin1, bin2 ='
        ' review_jobtally.bin2 - s.bin2, bin3 = review_jobtally.bin3 - s.bin3, bin4 ='
        ' review_jobtally.bin4 - s.bin4, bin5 = review_jobtally.bin5 - s.bin5, bin6 ='
        ' review_jobtally.bin6 - s.bin6, bin7 = review_jobtally.bin7 - s.bin7, bin8 ='
        ' review_jobtally.bin8 - s.bin8, bin9 = review_jobtally.bin9 - s.bin9, cost_sum ='
        ' review_jobtally.cost_sum - s.cost_sum, cost_n = review_jobtally.cost_n - s.cost_n,'
        ' tokens_sum = review_jobtally.tokens_sum - s.tokens_sum, tokens_n ='
        ' review_jobtally.tokens_n - s.tokens_n'
        ' FROM (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode,'
        ' SUM(r.sign * (1)),'
        ' SUM(r.sign * (r.reward)),'
        ' SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (COALESCE(r.cost_usd, 0))),'
        ' SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))),'
        ' SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT'
        ' NULL THEN 1 ELSE 0 END))'
        ' FROM (SELECT 1 AS sign, *'
        ' FROM old_trials) r'
        ' JOIN rewards_task k ON k.id = r.task_id'
        ' GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode'
        ' HAVING SUM(r.sign * (1)) <> 0'
        ' OR SUM(r.sign * (r.reward)) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0"
        ' END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END))"
        ' <> 0'
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END))"
        ' <> 0'
        " OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0"
        ' END)) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0'
        ' OR SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS'
        ' NOT NULL THEN 1 ELSE 0 END)) <> 0'
        ' ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode) s'
        ' (job_id, task_id, agent_name, model_name, failure_mode, trials, reward_sum, valid,'
        ' scorer_pass, scorer_ran, judge_pass, judge_decided, judge_unparseable, run_pass,'
        ' run_done, reviewed, gate_disagreements, human_disagreements, verifier_pass,'
        ' human_pass, human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8,'
        ' bin9, cost_sum, cost_n, tokens_sum, tokens_n)'
        ' WHERE review_jobtally.job_id = s.job_id AND review_jobtally.task_id = s.task_id'
        ' AND review_jobtally.agent_name = s.agent_name AND review_jobtally.model_name ='
        ' s.model_name AND review_jobtally.failure_mode = s.failure_mode;\n'
        'INSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, failure_mode,'
        ' trials, reward_sum, valid, scorer_pass, scorer_ran, judge_pass, judge_decided,'
        ' judge_unparseable, run_pass, run_done, reviewed, gate_disagreements,'
        ' human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2,'
        ' bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n)'
        ' SELECT *'
        ' FROM (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode,'
        ' SUM(r.sign * (1)),'
        ' SUM(r.sign * (r.reward)),'
        ' SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (COALESCE(r.cost_usd, 0))),'
        ' SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))),'
        ' SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT'
        ' NULL THEN 1 ELSE 0 END))'
        ' FROM (SELECT 1 AS sign, *'
        ' FROM new_trials) r'
        ' JOIN rewards_task k ON k.id = r.task_id'
        ' GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode'
        ' HAVING SUM(r.sign * (1)) <> 0'
        ' OR SUM(r.sign * (r.reward)) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0"
        ' END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END))"
        ' <> 0'
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END))"
        ' <> 0'
        " OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0"
        ' END)) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0'
        ' OR SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS'
        ' NOT NULL THEN 1 ELSE 0 END)) <> 0'
        ' ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode) s'
        ' WHERE true'
        ' ON CONFLICT (job_id, task_id, agent_name, model_name, failure_mode)'
        ' DO UPDATE SET trials = review_jobtally.trials + excluded.trials, reward_sum ='
        ' review_jobtally.reward_sum + excluded.reward_sum, valid = review_jobtally.valid +'
        ' excluded.valid, scorer_pass = review_jobtally.scorer_pass + excluded.scorer_pass,'
        ' scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass ='
        ' review_jobtally.judge_pass + excluded.judge_pass, judge_decided ='
        ' review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable ='
        ' review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass ='
        ' review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done'
        ' + excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed,'
        ' gate_disagreements = review_jobtally.gate_disagreements +'
        ' excluded.gate_disagreements, human_disagreements ='
        ' review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass'
        ' = review_jobtally.verifier_pass + excluded.verifier_pass, human_pass ='
        ' review_jobtally.human_pass + excluded.human_pass, human_decided ='
        ' review_jobtally.human_decided + excluded.human_decided, bin0 ='
        ' review_jobtally.bin0 + excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1,'
        ' bin2 = review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 +'
        ' excluded.bin3, bin4 = review_jobtally.bin4 + excluded.bin4, bin5 ='
        ' review_jobtally.bin5 + excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6,'
        ' bin7 = review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 +'
        ' excluded.bin8, bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum ='
        ' review_jobtally.cost_sum + excluded.cost_sum, cost_n = review_jobtally.cost_n +'
        ' excluded.cost_n, tokens_sum = review_jobtally.tokens_sum + excluded.tokens_sum,'
        ' tokens_n = review_jobtally.tokens_n + excluded.tokens_n;\n'
        'RETURN NULL;\n'
        'END;\n'
        '$$;'
    ),
    (
        'CREATE OR REPLACE FUNCTION review_trialreviewed_insert() RETURNS trigger LANGUAGE'
        ' plpgsql AS $$\n'
        'BEGIN\n'
        'INSERT INTO review_trialreviewed (trial_id, job_id, first_at)'
        ' SELECT a.trial_id, t.job_id, MIN(a.created_at)'
        ' FROM new_annotations a'
        ' JOIN rewards_trial t ON t.id = a.trial_id'
        ' GROUP BY a.trial_id, t.job_id'
        ' ORDER BY a.trial_id'
        ' ON CONFLICT (trial_id)'
        ' DO UPDATE SET first_at = LEAST(review_trialreviewed.first_at, excluded.first_at);\n'
        'RETURN NULL;\n'
        'END;\n'
        '$$;'
    ),
    'DROP TRIGGER IF EXISTS review_jobtally_insert ON rewards_trial;',
    (
        'CREATE TRIGGER review_jobtally_insert AFTER INSERT ON rewards_trial'
        ' REFERENCING NEW TABLE AS new_trials'
        ' FOR EACH STATEMENT EXECUTE FUNCTION review_jobtally_insert();'
    ),
    'DROP TRIGGER IF EXISTS review_jobtally_delete ON rewards_trial;',
    (
        'CREATE TRIGGER review_jobtally_delete AFTER DELETE ON rewards_trial'
        ' REFERENCING OLD TABLE AS old_trials'
        ' FOR EACH STATEMENT EXECUTE FUNCTION review_jobtally_delete();'
    ),
    'DROP TRIGGER IF EXISTS review_jobtally_update ON rewards_trial;',
    (
        'CREATE TRIGGER review_jobtally_update AFTER UPDATE ON rewards_trial'
        ' REFERENCING OLD TABLE AS old_trials NEW TABLE AS new_trials'
        ' FOR EACH STATEMENT EXECUTE FUNCTION review_jobtally_update();'
    ),
    'DROP TRIGGER IF EXISTS review_trialreviewed_insert ON review_annotation;',
    (
        'CREATE TRIGGER review_trialreviewed_insert AFTER INSERT ON review_annotation'
        ' REFERENCING NEW TABLE AS new_annotations'
        ' FOR EACH STATEMENT EXECUTE FUNCTION review_trialreviewed_insert();'
    ),
    'DELETE FROM review_jobtally',
    'DELETE FROM review_trialreviewed',
    (
        'INSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, failure_mode,'
        ' trials, reward_sum, valid, scorer_pass, scorer_ran, judge_pass, judge_decided,'
        ' judge_unparseable, run_pass, run_done, reviewed, gate_disagreements,'
        ' human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2,'
        ' bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n)'
        ' SELECT *'
        ' FROM (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode,'
        ' SUM(r.sign * (1)),'
        ' SUM(r.sign * (r.reward)),'
        ' SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (COALESCE(r.cost_usd, 0))),'
        ' SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))),'
        ' SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT'
        ' NULL THEN 1 ELSE 0 END))'
        ' FROM (SELECT 1 AS sign, *'
        ' FROM rewards_trial) r'
        ' JOIN rewards_task k ON k.id = r.task_id'
        ' GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode'
        ' HAVING SUM(r.sign * (1)) <> 0'
        ' OR SUM(r.sign * (r.reward)) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0"
        ' END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END))"
        ' <> 0'
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END))"
        ' <> 0'
        " OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0"
        ' END)) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0'
        ' OR SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS'
        ' NOT NULL THEN 1 ELSE 0 END)) <> 0'
        ' ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode) s'
        ' WHERE true'
        ' ON CONFLICT (job_id, task_id, agent_name, model_name, failure_mode)'
        ' DO UPDATE SET trials = review_jobtally.trials + excluded.trials, reward_sum ='
        ' review_jobtally.reward_sum + excluded.reward_sum, valid = review_jobtally.valid +'
        ' excluded.valid, scorer_pass = review_jobtally.scorer_pass + excluded.scorer_pass,'
        ' scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass ='
        ' review_jobtally.judge_pass + excluded.judge_pass, judge_decided ='
        ' review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable ='
        ' review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass ='
        ' review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done'
        ' + excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed,'
        ' gate_disagreements = review_jobtally.gate_disagreements +'
        ' excluded.gate_disagreements, human_disagreements ='
        ' review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass'
        ' = review_jobtally.verifier_pass + excluded.verifier_pass, human_pass ='
        ' review_jobtally.human_pass + excluded.human_pass, human_decided ='
        ' review_jobtally.human_decided + excluded.human_decided, bin0 ='
        ' review_jobtally.bin0 + excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1,'
        ' bin2 = review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 +'
        ' excluded.bin3, bin4 = review_jobtally.bin4 + excluded.bin4, bin5 ='
        ' review_jobtally.bin5 + excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6,'
        ' bin7 = review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 +'
        ' excluded.bin8, bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum ='
        ' review_jobtally.cost_sum + excluded.cost_sum, cost_n = review_jobtally.cost_n +'
        ' excluded.cost_n, tokens_sum = review_jobtally.tokens_sum + excluded.tokens_sum,'
        ' tokens_n = review_jobtally.tokens_n + excluded.tokens_n'
    ),
    (
        'INSERT INTO review_trialreviewed (trial_id, job_id, first_at)'
        ' SELECT a.trial_id, t.job_id, MIN(a.created_at)'
        ' FROM review_annotation a'
        ' JOIN rewards_trial t ON t.id = a.trial_id'
        ' GROUP BY a.trial_id, t.job_id'
    ),
    (
        '\n'
        'INSERT INTO review_jobjudgmenttally (job_id, blind, judge_verdict, scorer_verdict,'
        ' verifier, failure_mode, source, judge_model, judgment, n)\n'
        'SELECT t.job_id, FALSE, l.judge_verdict, l.scorer_verdict, l.verifier,'
        ' l.failure_mode, l.source, l.judge_model, l.judgment, COUNT(*)'
        ' FROM review_latestjudgment l'
        ' JOIN rewards_trial t ON t.id = l.trial_id\n'
        'GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode,'
        ' l.source, l.judge_model, l.judgment\n'
        'UNION ALL\n'
        'SELECT t.job_id, TRUE, l.judge_verdict, l.scorer_verdict, l.verifier,'
        ' l.failure_mode, l.source, l.judge_model, l.blind_judgment, COUNT(*)'
        ' FROM review_latestjudgment l'
        ' JOIN rewards_trial t ON t.id = l.trial_id\n'
        "WHERE l.blind_judgment <> ''\n"
        'GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode,'
        ' l.source, l.judge_model, l.blind_judgment\n'
    ),
    (
        '\n'
        'INSERT INTO review_jobpairtally (job_id, blind, reviewer_a_id, reviewer_b_id,\n'
        '    judgment_a, judgment_b, raters, n)\n'
        '\n'
        'SELECT t.job_id, FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment,'
        ' a.raters, COUNT(*)\n'
        'FROM (\n'
        '   '
        ' SELECT trial_id, reviewer_id, judgment,\n'
        '        COUNT(*) OVER (PARTITION BY trial_id) AS raters\n'
        '   '
        ' FROM review_latestjudgment'
        " WHERE judgment IN ('pass', 'fail')\n"
        ') a\n'
        'JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id >'
        ' a.reviewer_id\n'
        "    AND b.judgment IN ('pass', 'fail')"
        ' JOIN rewards_trial t ON t.id = a.trial_id\n'
        'WHERE a.raters > 1\n'
        'GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters\n'
        '\n'
        'UNION ALL\n'
        '\n'
        'SELECT t.job_id, TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment,'
        ' b.blind_judgment, a.raters, COUNT(*)\n'
        'FROM (\n'
        '   '
        ' SELECT trial_id, reviewer_id, blind_judgment,\n'
        '        COUNT(*) OVER (PARTITION BY trial_id) AS raters\n'
        '   '
        ' FROM review_latestjudgment'
        " WHERE blind_judgment IN ('pass', 'fail')\n"
        ') a\n'
        'JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id >'
        ' a.reviewer_id\n'
        "    AND b.blind_judgment IN ('pass', 'fail')"
        ' JOIN rewards_trial t ON t.id = a.trial_id\n'
        'WHERE a.raters > 1\n'
        'GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.blind_judgment,'
        ' b.blind_judgment, a.raters\n'
        '\n'
    ),
]

POSTGRESQL_BACKWARDS = [
    'DROP TRIGGER IF EXISTS review_jobtally_insert ON rewards_trial;',
    'DROP TRIGGER IF EXISTS review_jobtally_delete ON rewards_trial;',
    'DROP TRIGGER IF EXISTS review_jobtally_update ON rewards_trial;',
    'DROP TRIGGER IF EXISTS review_trialreviewed_insert ON review_annotation;',
    'DROP FUNCTION IF EXISTS review_jobtally_insert();',
    'DROP FUNCTION IF EXISTS review_jobtally_delete();',
    'DROP FUNCTION IF EXISTS review_jobtally_update();',
    'DROP FUNCTION IF EXISTS review_trialreviewed_insert();',
]

SQLITE_FORWARDS = [
    'DROP TRIGGER IF EXISTS review_jobtally_insert;',
    'DROP TRIGGER IF EXISTS review_jobtally_delete;',
    'DROP TRIGGER IF EXISTS review_jobtally_update;',
    'DROP TRIGGER IF EXISTS review_trialreviewed_insert;',
    (
        'CREATE TRIGGER review_jobtally_insert AFTER INSERT ON rewards_trial'
        ' BEGIN INSERT INTO review_jobtally (job_id, task_id, agent_name, model_name,'
        ' failure_mode, trials, reward_sum, valid, scorer_pass, scorer_ran, judge_pass,'
        ' judge_decided, judge_unparseable, run_pass, run_done, reviewed,'
        ' gate_disagreements, human_disagreements, verifier_pass, human_pass, human_decided,'
        ' bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n,'
        ' tokens_sum, tokens_n)'
        ' SELECT *'
        ' FROM (SELECT NEW.job_id, NEW.task_id, NEW.agent_name, NEW.model_name,'
        ' NEW.failure_mode, 1 * (1), 1 * (NEW.reward), 1 * (CASE WHEN NEW.is_valid THEN 1'
        " ELSE 0 END), 1 * (CASE WHEN NEW.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END), 1 *"
        " (CASE WHEN NEW.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE"
        " WHEN NEW.judge_verdict IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN"
        " NEW.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN"
        " NEW.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END), 1 * (CASE WHEN"
        " NEW.run_badge IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.run_badge IN"
        " ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.annotation_count > 0 THEN"
        " 1 ELSE 0 END), 1 * (CASE WHEN NEW.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END), 1 * (CASE WHEN"
        " NEW.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >="
        " k.pass_threshold THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.human_judgment IN ('pass')"
        " THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.human_judgment IN ('pass', 'fail') THEN 1"
        ' ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.0 AND NEW.reward < 0.1 THEN 1 ELSE 0'
        ' END), 1 * (CASE WHEN NEW.reward >= 0.1 AND NEW.reward < 0.2 THEN 1 ELSE 0 END), 1'
        ' * (CASE WHEN NEW.reward >= 0.2 AND NEW.reward < 0.3 THEN 1 ELSE 0 END), 1 * (CASE'
        ' WHEN NEW.reward >= 0.3 AND NEW.reward < 0.4 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.4 AND NEW.reward < 0.5 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.5 AND NEW.reward < 0.6 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.6 AND NEW.reward < 0.7 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.7 AND NEW.reward < 0.8 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.8 AND NEW.reward < 0.9 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.9 AND NEW.reward <= 1.0 THEN 1 ELSE 0 END), 1 *'
        ' (COALESCE(NEW.cost_usd, 0)), 1 * (CASE WHEN NEW.cost_usd IS NOT NULL THEN 1 ELSE 0'
        ' END), 1 * (COALESCE(NEW.n_input_tokens + NEW.n_output_tokens, 0)), 1 * (CASE WHEN'
        ' NEW.n_input_tokens IS NOT NULL AND NEW.n_output_tokens IS NOT NULL THEN 1 ELSE 0'
        ' END)'
        ' FROM rewards_task k'
        ' WHERE k.id = NEW.task_id) s'
        ' WHERE true'
        ' ON CONFLICT (job_id, task_id, agent_name, model_name, failure_mode)'
        ' DO UPDATE SET trials = review_jobtally.trials + excluded.trials, reward_sum ='
        ' review_jobtally.reward_sum + excluded.reward_sum, valid = review_jobtally.valid +'
        ' excluded.valid, scorer_pass = review_jobtally.scorer_pass + excluded.scorer_pass,'
        ' scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass ='
        ' review_jobtally.judge_pass + excluded.judge_pass, judge_decided ='
        ' review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable ='
        ' review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass ='
        ' review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done'
        ' + excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed,'
        ' gate_disagreements = review_jobtally.gate_disagreements +'
        ' excluded.gate_disagreements, human_disagreements ='
        ' review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass'
        ' = review_jobtally.verifier_pass + excluded.verifier_pass, human_pass ='
        ' review_jobtally.human_pass + excluded.human_pass, human_decided ='
        ' review_jobtally.human_decided + excluded.human_decided, bin0 ='
        ' review_jobtally.bin0 + excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1,'
        ' bin2 = review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 +'
        ' excluded.bin3, bin4 = review_jobtally.bin4 + excluded.bin4, bin5 ='
        ' review_jobtally.bin5 + excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6,'
        ' bin7 = review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 +'
        ' excluded.bin8, bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum ='
        ' review_jobtally.cost_sum + excluded.cost_sum, cost_n = review_jobtally.cost_n +'
        ' excluded.cost_n, tokens_sum = review_jobtally.tokens_sum + excluded.tokens_sum,'
        ' tokens_n = review_jobtally.tokens_n + excluded.tokens_n;'
        ' END;'
    ),
    (
        'CREATE TRIGGER review_jobtally_delete AFTER DELETE ON rewards_trial'
        ' BEGIN UPDATE review_jobtally SET trials = trials - (SELECT 1'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), reward_sum = reward_sum - (SELECT OLD.reward'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), valid = valid - (SELECT CASE WHEN OLD.is_valid THEN 1'
        ' ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), scorer_pass = scorer_pass - (SELECT CASE WHEN'
        " OLD.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), scorer_ran = scorer_ran - (SELECT CASE WHEN'
        " OLD.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), judge_pass = judge_pass - (SELECT CASE WHEN'
        " OLD.judge_verdict IN ('PASS') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), judge_decided = judge_decided - (SELECT CASE WHEN'
        " OLD.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), judge_unparseable = judge_unparseable - (SELECT CASE'
        " WHEN OLD.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), run_pass = run_pass - (SELECT CASE WHEN OLD.run_badge'
        " IN ('PASS') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), run_done = run_done - (SELECT CASE WHEN OLD.run_badge'
        " IN ('PASS', 'FAIL') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), reviewed = reviewed - (SELECT CASE WHEN'
        ' OLD.annotation_count > 0 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), gate_disagreements = gate_disagreements - (SELECT CASE'
        " WHEN OLD.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), human_disagreements = human_disagreements - (SELECT'
        " CASE WHEN OLD.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), verifier_pass = verifier_pass - (SELECT CASE WHEN'
        ' OLD.reward >= k.pass_threshold THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), human_pass = human_pass - (SELECT CASE WHEN'
        " OLD.human_judgment IN ('pass') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), human_decided = human_decided - (SELECT CASE WHEN'
        " OLD.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin0 = bin0 - (SELECT CASE WHEN OLD.reward >= 0.0 AND'
        ' OLD.reward < 0.1 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin1 = bin1 - (SELECT CASE WHEN OLD.reward >= 0.1 AND'
        ' OLD.reward < 0.2 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin2 = bin2 - (SELECT CASE WHEN OLD.reward >= 0.2 AND'
        ' OLD.reward < 0.3 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin3 = bin3 - (SELECT CASE WHEN OLD.reward >= 0.3 AND'
        ' OLD.reward < 0.4 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin4 = bin4 - (SELECT CASE WHEN OLD.reward >= 0.4 AND'
        ' OLD.reward < 0.5 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin5 = bin5 - (SELECT CASE WHEN OLD.reward >= 0.5 AND'
        ' OLD.reward < 0.6 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin6 = bin6 - (SELECT CASE WHEN OLD.reward >= 0.6 AND'
        ' OLD.reward < 0.7 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin7 = bin7 - (SELECT CASE WHEN OLD.reward >= 0.7 AND'
        ' OLD.reward < 0.8 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin8 = bin8 - (SELECT CASE WHEN OLD.reward >= 0.8 AND'
        ' OLD.reward < 0.9 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin9 = bin9 - (SELECT CASE WHEN OLD.reward >= 0.9 AND'
        ' OLD.reward <= 1.0 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), cost_sum = cost_sum - (SELECT COALESCE(OLD.cost_usd, 0)'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), cost_n = cost_n - (SELECT CASE WHEN OLD.cost_usd IS NOT'
        ' NULL THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), tokens_sum = tokens_sum - (SELECT'
        ' COALESCE(OLD.n_input_tokens + OLD.n_output_tokens, 0)'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), tokens_n = tokens_n - (SELECT CASE WHEN'
        ' OLD.n_input_tokens IS NOT NULL AND OLD.n_output_tokens IS NOT NULL THEN 1 ELSE 0'
        ' END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id)'
        ' WHERE job_id = OLD.job_id AND task_id = OLD.task_id AND agent_name ='
        ' OLD.agent_name AND model_name = OLD.model_name AND failure_mode = OLD.failure_mode'
        ' AND EXISTS (SELECT 1'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id);'
        ' END;'
    ),
    (
        'CREATE TRIGGER review_jobtally_update AFTER UPDATE ON rewards_trial'
        ' BEGIN UPDATE review_jobtally SET trials = trials - (SELECT 1'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), reward_sum = reward_sum - (SELECT OLD.reward'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), valid = valid - (SELECT CASE WHEN OLD.is_valid THEN 1'
        ' ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), scorer_pass = scorer_pass - (SELECT CASE WHEN'
        " OLD.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), scorer_ran = scorer_ran - (SELECT CASE WHEN'
        " OLD.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), judge_pass = judge_pass - (SELECT CASE WHEN'
        " OLD.judge_verdict IN ('PASS') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), judge_decided = judge_decided - (SELECT CASE WHEN'
        " OLD.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), judge_unparseable = judge_unparseable - (SELECT CASE'
        " WHEN OLD.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), run_pass = run_pass - (SELECT CASE WHEN OLD.run_badge'
        " IN ('PASS') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), run_done = run_done - (SELECT CASE WHEN OLD.run_badge'
        " IN ('PASS', 'FAIL') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), reviewed = reviewed - (SELECT CASE WHEN'
        ' OLD.annotation_count > 0 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), gate_disagreements = gate_disagreements - (SELECT CASE'
        " WHEN OLD.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), human_disagreements = human_disagreements - (SELECT'
        " CASE WHEN OLD.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), verifier_pass = verifier_pass - (SELECT CASE WHEN'
        ' OLD.reward >= k.pass_threshold THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), human_pass = human_pass - (SELECT CASE WHEN'
        " OLD.human_judgment IN ('pass') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), human_decided = human_decided - (SELECT CASE WHEN'
        " OLD.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END"
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin0 = bin0 - (SELECT CASE WHEN OLD.reward >= 0.0 AND'
        ' OLD.reward < 0.1 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin1 = bin1 - (SELECT CASE WHEN OLD.reward >= 0.1 AND'
        ' OLD.reward < 0.2 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin2 = bin2 - (SELECT CASE WHEN OLD.reward >= 0.2 AND'
        ' OLD.reward < 0.3 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin3 = bin3 - (SELECT CASE WHEN OLD.reward >= 0.3 AND'
        ' OLD.reward < 0.4 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin4 = bin4 - (SELECT CASE WHEN OLD.reward >= 0.4 AND'
        ' OLD.reward < 0.5 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin5 = bin5 - (SELECT CASE WHEN OLD.reward >= 0.5 AND'
        ' OLD.reward < 0.6 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin6 = bin6 - (SELECT CASE WHEN OLD.reward >= 0.6 AND'
        ' OLD.reward < 0.7 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin7 = bin7 - (SELECT CASE WHEN OLD.reward >= 0.7 AND'
        ' OLD.reward < 0.8 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin8 = bin8 - (SELECT CASE WHEN OLD.reward >= 0.8 AND'
        ' OLD.reward < 0.9 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), bin9 = bin9 - (SELECT CASE WHEN OLD.reward >= 0.9 AND'
        ' OLD.reward <= 1.0 THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), cost_sum = cost_sum - (SELECT COALESCE(OLD.cost_usd, 0)'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), cost_n = cost_n - (SELECT CASE WHEN OLD.cost_usd IS NOT'
        ' NULL THEN 1 ELSE 0 END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), tokens_sum = tokens_sum - (SELECT'
        ' COALESCE(OLD.n_input_tokens + OLD.n_output_tokens, 0)'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id), tokens_n = tokens_n - (SELECT CASE WHEN'
        ' OLD.n_input_tokens IS NOT NULL AND OLD.n_output_tokens IS NOT NULL THEN 1 ELSE 0'
        ' END'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id)'
        ' WHERE job_id = OLD.job_id AND task_id = OLD.task_id AND agent_name ='
        ' OLD.agent_name AND model_name = OLD.model_name AND failure_mode = OLD.failure_mode'
        ' AND EXISTS (SELECT 1'
        ' FROM rewards_task k'
        ' WHERE k.id = OLD.task_id); INSERT INTO review_jobtally (job_id, task_id,'
        ' agent_name, model_name, failure_mode, trials, reward_sum, valid, scorer_pass,'
        ' scorer_ran, judge_pass, judge_decided, judge_unparseable, run_pass, run_done,'
        ' reviewed, gate_disagreements, human_disagreements, verifier_pass, human_pass,'
        ' human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8, bin9,'
        ' cost_sum, cost_n, tokens_sum, tokens_n)'
        ' SELECT *'
        ' FROM (SELECT NEW.job_id, NEW.task_id, NEW.agent_name, NEW.model_name,'
        ' NEW.failure_mode, 1 * (1), 1 * (NEW.reward), 1 * (CASE WHEN NEW.is_valid THEN 1'
        " ELSE 0 END), 1 * (CASE WHEN NEW.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END), 1 *"
        " (CASE WHEN NEW.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE"
        " WHEN NEW.judge_verdict IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN"
        " NEW.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN"
        " NEW.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END), 1 * (CASE WHEN"
        " NEW.run_badge IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.run_badge IN"
        " ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.annotation_count > 0 THEN"
        " 1 ELSE 0 END), 1 * (CASE WHEN NEW.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END), 1 * (CASE WHEN"
        " NEW.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.reward >="
        " k.pass_threshold THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.human_judgment IN ('pass')"
        " THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.human_judgment IN ('pass', 'fail') THEN 1"
        ' ELSE 0 END), 1 * (CASE WHEN NEW.reward >= 0.0 AND NEW.reward < 0.1 THEN 1 ELSE 0'
        ' END), 1 * (CASE WHEN NEW.reward >= 0.1 AND NEW.reward < 0.2 THEN 1 ELSE 0 END), 1'
        ' * (CASE WHEN NEW.reward >= 0.2 AND NEW.reward < 0.3 THEN 1 ELSE 0 END), 1 * (CASE'
        ' WHEN NEW.reward >= 0.3 AND NEW.reward < 0.4 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.4 AND NEW.reward < 0.5 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.5 AND NEW.reward < 0.6 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.6 AND NEW.reward < 0.7 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.7 AND NEW.reward < 0.8 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.8 AND NEW.reward < 0.9 THEN 1 ELSE 0 END), 1 * (CASE WHEN'
        ' NEW.reward >= 0.9 AND NEW.reward <= 1.0 THEN 1 ELSE 0 END), 1 *'
        ' (COALESCE(NEW.cost_usd, 0)), 1 * (CASE WHEN NEW.cost_usd IS NOT NULL THEN 1 ELSE 0'
        ' END), 1 * (COALESCE(NEW.n_input_tokens + NEW.n_output_tokens, 0)), 1 * (CASE WHEN'
        ' NEW.n_input_tokens IS NOT NULL AND NEW.n_output_tokens IS NOT NULL THEN 1 ELSE 0'
        ' END)'
        ' FROM rewards_task k'
        ' WHERE k.id = NEW.task_id) s'
        ' WHERE true'
        ' ON CONFLICT (job_id, task_id, agent_name, model_name, failure_mode)'
        ' DO UPDATE SET trials = review_jobtally.trials + excluded.trials, reward_sum ='
        ' review_jobtally.reward_sum + excluded.reward_sum, valid = review_jobtally.valid +'
        ' excluded.valid, scorer_pass = review_jobtally.scorer_pass + excluded.scorer_pass,'
        ' scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass ='
        ' review_jobtally.judge_pass + excluded.judge_pass, judge_decided ='
        ' review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable ='
        ' review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass ='
        ' review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done'
        ' + excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed,'
        ' gate_disagreements = review_jobtally.gate_disagreements +'
        ' excluded.gate_disagreements, human_disagreements ='
        ' review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass'
        ' = review_jobtally.verifier_pass + excluded.verifier_pass, human_pass ='
        ' review_jobtally.human_pass + excluded.human_pass, human_decided ='
        ' review_jobtally.human_decided + excluded.human_decided, bin0 ='
        ' review_jobtally.bin0 + excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1,'
        ' bin2 = review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 +'
        ' excluded.bin3, bin4 = review_jobtally.bin4 + excluded.bin4, bin5 ='
        ' review_jobtally.bin5 + excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6,'
        ' bin7 = review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 +'
        ' excluded.bin8, bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum ='
        ' review_jobtally.cost_sum + excluded.cost_sum, cost_n = review_jobtally.cost_n +'
        ' excluded.cost_n, tokens_sum = review_jobtally.tokens_sum + excluded.tokens_sum,'
        ' tokens_n = review_jobtally.tokens_n + excluded.tokens_n;'
        ' END;'
    ),
    (
        'CREATE TRIGGER review_trialreviewed_insert AFTER INSERT ON review_annotation'
        ' BEGIN INSERT INTO review_trialreviewed (trial_id, job_id, first_at)'
        ' SELECT NEW.trial_id, t.job_id, NEW.created_at'
        ' FROM rewards_trial t'
        ' WHERE t.id = NEW.trial_id'
        ' ON CONFLICT (trial_id)'
        ' DO UPDATE SET first_at = MIN(review_trialreviewed.first_at, excluded.first_at);'
        ' END;'
    ),
    'DELETE FROM review_jobtally',
    'DELETE FROM review_trialreviewed',
    (
        'INSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, failure_mode,'
        ' trials, reward_sum, valid, scorer_pass, scorer_ran, judge_pass, judge_decided,'
        ' judge_unparseable, run_pass, run_done, reviewed, gate_disagreements,'
        ' human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2,'
        ' bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_sum, cost_n, tokens_sum, tokens_n)'
        ' SELECT *'
        ' FROM (SELECT r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode,'
        ' SUM(r.sign * (1)),'
        ' SUM(r.sign * (r.reward)),'
        ' SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)),'
        " SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)),"
        " SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)),"
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (COALESCE(r.cost_usd, 0))),'
        ' SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)),'
        ' SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))),'
        ' SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT'
        ' NULL THEN 1 ELSE 0 END))'
        ' FROM (SELECT 1 AS sign, *'
        ' FROM rewards_trial) r'
        ' JOIN rewards_task k ON k.id = r.task_id'
        ' GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode'
        ' HAVING SUM(r.sign * (1)) <> 0'
        ' OR SUM(r.sign * (r.reward)) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.is_valid THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0"
        ' END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END))"
        ' <> 0'
        " OR SUM(r.sign * (CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END))"
        ' <> 0'
        " OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail',"
        " 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail',"
        " 'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0'
        " OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0"
        " OR SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0"
        ' END)) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0 END))'
        ' <> 0'
        ' OR SUM(r.sign * (COALESCE(r.cost_usd, 0))) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END)) <> 0'
        ' OR SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))) <> 0'
        ' OR SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS'
        ' NOT NULL THEN 1 ELSE 0 END)) <> 0'
        ' ORDER BY r.job_id, r.task_id, r.agent_name, r.model_name, r.failure_mode) s'
        ' WHERE true'
        ' ON CONFLICT (job_id, task_id, agent_name, model_name, failure_mode)'
        ' DO UPDATE SET trials = review_jobtally.trials + excluded.trials, reward_sum ='
        ' review_jobtally.reward_sum + excluded.reward_sum, valid = review_jobtally.valid +'
        ' excluded.valid, scorer_pass = review_jobtally.scorer_pass + excluded.scorer_pass,'
        ' scorer_ran = review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass ='
        ' review_jobtally.judge_pass + excluded.judge_pass, judge_decided ='
        ' review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable ='
        ' review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass ='
        ' review_jobtally.run_pass + excluded.run_pass, run_done = review_jobtally.run_done'
        ' + excluded.run_done, reviewed = review_jobtally.reviewed + excluded.reviewed,'
        ' gate_disagreements = review_jobtally.gate_disagreements +'
        ' excluded.gate_disagreements, human_disagreements ='
        ' review_jobtally.human_disagreements + excluded.human_disagreements, verifier_pass'
        ' = review_jobtally.verifier_pass + excluded.verifier_pass, human_pass ='
        ' review_jobtally.human_pass + excluded.human_pass, human_decided ='
        ' review_jobtally.human_decided + excluded.human_decided, bin0 ='
        ' review_jobtally.bin0 + excluded.bin0, bin1 = review_jobtally.bin1 + excluded.bin1,'
        ' bin2 = review_jobtally.bin2 + excluded.bin2, bin3 = review_jobtally.bin3 +'
        ' excluded.bin3, bin4 = review_jobtally.bin4 + excluded.bin4, bin5 ='
        ' review_jobtally.bin5 + excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6,'
        ' bin7 = review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 +'
        ' excluded.bin8, bin9 = review_jobtally.bin9 + excluded.bin9, cost_sum ='
        ' review_jobtally.cost_sum + excluded.cost_sum, cost_n = review_jobtally.cost_n +'
        ' excluded.cost_n, tokens_sum = review_jobtally.tokens_sum + excluded.tokens_sum,'
        ' tokens_n = review_jobtally.tokens_n + excluded.tokens_n'
    ),
    (
        'INSERT INTO review_trialreviewed (trial_id, job_id, first_at)'
        ' SELECT a.trial_id, t.job_id, MIN(a.created_at)'
        ' FROM review_annotation a'
        ' JOIN rewards_trial t ON t.id = a.trial_id'
        ' GROUP BY a.trial_id, t.job_id'
    ),
    (
        '\n'
        'INSERT INTO review_jobjudgmenttally (job_id, blind, judge_verdict, scorer_verdict,'
        ' verifier, failure_mode, source, judge_model, judgment, n)\n'
        'SELECT t.job_id, FALSE, l.judge_verdict, l.scorer_verdict, l.verifier,'
        ' l.failure_mode, l.source, l.judge_model, l.judgment, COUNT(*)'
        ' FROM review_latestjudgment l'
        ' JOIN rewards_trial t ON t.id = l.trial_id\n'
        'GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode,'
        ' l.source, l.judge_model, l.judgment\n'
        'UNION ALL\n'
        'SELECT t.job_id, TRUE, l.judge_verdict, l.scorer_verdict, l.verifier,'
        ' l.failure_mode, l.source, l.judge_model, l.blind_judgment, COUNT(*)'
        ' FROM review_latestjudgment l'
        ' JOIN rewards_trial t ON t.id = l.trial_id\n'
        "WHERE l.blind_judgment <> ''\n"
        'GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode,'
        ' l.source, l.judge_model, l.blind_judgment\n'
    ),
    (
        '\n'
        'INSERT INTO review_jobpairtally (job_id, blind, reviewer_a_id, reviewer_b_id,\n'
        '    judgment_a, judgment_b, raters, n)\n'
        '\n'
        'SELECT t.job_id, FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment,'
        ' a.raters, COUNT(*)\n'
        'FROM (\n'
        '   '
        ' SELECT trial_id, reviewer_id, judgment,\n'
        '        COUNT(*) OVER (PARTITION BY trial_id) AS raters\n'
        '   '
        ' FROM review_latestjudgment'
        " WHERE judgment IN ('pass', 'fail')\n"
        ') a\n'
        'JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id >'
        ' a.reviewer_id\n'
        "    AND b.judgment IN ('pass', 'fail')"
        ' JOIN rewards_trial t ON t.id = a.trial_id\n'
        'WHERE a.raters > 1\n'
        'GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters\n'
        '\n'
        'UNION ALL\n'
        '\n'
        'SELECT t.job_id, TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment,'
        ' b.blind_judgment, a.raters, COUNT(*)\n'
        'FROM (\n'
        '   '
        ' SELECT trial_id, reviewer_id, blind_judgment,\n'
        '        COUNT(*) OVER (PARTITION BY trial_id) AS raters\n'
        '   '
        ' FROM review_latestjudgment'
        " WHERE blind_judgment IN ('pass', 'fail')\n"
        ') a\n'
        'JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id >'
        ' a.reviewer_id\n'
        "    AND b.blind_judgment IN ('pass', 'fail')"
        ' JOIN rewards_trial t ON t.id = a.trial_id\n'
        'WHERE a.raters > 1\n'
        'GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.blind_judgment,'
        ' b.blind_judgment, a.raters\n'
        '\n'
    ),
]

SQLITE_BACKWARDS = [
    'DROP TRIGGER IF EXISTS review_jobtally_insert;',
    'DROP TRIGGER IF EXISTS review_jobtally_delete;',
    'DROP TRIGGER IF EXISTS review_jobtally_update;',
    'DROP TRIGGER IF EXISTS review_trialreviewed_insert;',
]


def _run(schema_editor, statements):
    with schema_editor.connection.cursor() as cursor:
        for sql in statements.get(schema_editor.connection.vendor, []):
            cursor.execute(sql)


def forwards(apps, schema_editor):
    # The triggers, then the recount: the job tallies and first reviews, then agreement's
    # tallies per job from the latest judgments (migration 0007).
    _run(schema_editor, {"postgresql": POSTGRESQL_FORWARDS, "sqlite": SQLITE_FORWARDS})


def backwards(apps, schema_editor):
    _run(schema_editor, {"postgresql": POSTGRESQL_BACKWARDS, "sqlite": SQLITE_BACKWARDS})


class Migration(migrations.Migration):

    dependencies = [
        ('review', '0007_latest_judgment'),
        ('rewards', '0009_trial_job_keyset_index'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='JobJudgmentTally',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('judge_verdict', models.CharField(blank=True, max_length=12)),
                ('scorer_verdict', models.CharField(blank=True, max_length=12)),
                ('verifier', models.CharField(max_length=4)),
                ('failure_mode', models.CharField(blank=True, max_length=255)),
                ('source', models.CharField(blank=True, max_length=255)),
                ('judge_model', models.CharField(blank=True, max_length=255)),
                ('blind', models.BooleanField()),
                ('judgment', models.CharField(choices=[('pass', 'pass'), ('fail', 'fail'), ('defer', 'defer')], max_length=8)),
                ('n', models.IntegerField(default=0)),
                ('job', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='rewards.job')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('job', 'blind', 'judge_verdict', 'scorer_verdict', 'verifier', 'failure_mode', 'source', 'judge_model', 'judgment'), name='jobjudgmenttally_key')],
            },
        ),
        migrations.CreateModel(
            name='JobPairTally',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('blind', models.BooleanField()),
                ('judgment_a', models.CharField(max_length=8)),
                ('judgment_b', models.CharField(max_length=8)),
                ('raters', models.PositiveSmallIntegerField()),
                ('n', models.IntegerField(default=0)),
                ('job', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='rewards.job')),
                ('reviewer_a', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('reviewer_b', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('job', 'blind', 'reviewer_a', 'reviewer_b', 'judgment_a', 'judgment_b', 'raters'), name='jobpairtally_key')],
            },
        ),
        migrations.CreateModel(
            name='JobTally',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('agent_name', models.CharField(blank=True, max_length=255)),
                ('model_name', models.CharField(blank=True, max_length=255)),
                ('failure_mode', models.CharField(blank=True, max_length=255)),
                ('trials', models.IntegerField(default=0)),
                ('reward_sum', models.FloatField(default=0.0)),
                ('valid', models.IntegerField(default=0)),
                ('scorer_pass', models.IntegerField(default=0)),
                ('scorer_ran', models.IntegerField(default=0)),
                ('judge_pass', models.IntegerField(default=0)),
                ('judge_decided', models.IntegerField(default=0)),
                ('judge_unparseable', models.IntegerField(default=0)),
                ('run_pass', models.IntegerField(default=0)),
                ('run_done', models.IntegerField(default=0)),
                ('reviewed', models.IntegerField(default=0)),
                ('gate_disagreements', models.IntegerField(default=0)),
                ('human_disagreements', models.IntegerField(default=0)),
                ('verifier_pass', models.IntegerField(default=0)),
                ('human_pass', models.IntegerField(default=0)),
                ('human_decided', models.IntegerField(default=0)),
                ('bin0', models.IntegerField(default=0)),
                ('bin1', models.IntegerField(default=0)),
                ('bin2', models.IntegerField(default=0)),
                ('bin3', models.IntegerField(default=0)),
                ('bin4', models.IntegerField(default=0)),
                ('bin5', models.IntegerField(default=0)),
                ('bin6', models.IntegerField(default=0)),
                ('bin7', models.IntegerField(default=0)),
                ('bin8', models.IntegerField(default=0)),
                ('bin9', models.IntegerField(default=0)),
                ('cost_sum', models.FloatField(default=0.0)),
                ('cost_n', models.IntegerField(default=0)),
                ('tokens_sum', models.BigIntegerField(default=0)),
                ('tokens_n', models.IntegerField(default=0)),
                ('job', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='rewards.job')),
                ('task', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='rewards.task')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('job', 'task', 'agent_name', 'model_name', 'failure_mode'), name='jobtally_key')],
            },
        ),
        migrations.CreateModel(
            name='TrialReviewed',
            fields=[
                ('trial', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='rewards.trial')),
                ('first_at', models.DateTimeField()),
                ('job', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='rewards.job')),
            ],
            options={
                'indexes': [models.Index(fields=['job', 'first_at'], name='trialreviewed_job_idx')],
            },
        ),
        migrations.RunPython(forwards, backwards, elidable=False),
    ]
