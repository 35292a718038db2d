"""Exact job tallies (issue 26): `JobTally`'s reward and cost sums become whole units of
1e-9 (BIGINT), so a kept figure equals a recount whatever was written, updated or deleted.

Until now the triggers of migration 0008 added and subtracted the float rewards and costs
themselves: the kept sums drifted from a recount in the last digits, and many re-ingests
grew the drift. From here each trial adds `CAST(ROUND(x * 1000000000) AS BIGINT)`, the same
expression in the triggers and in the recount (review.science.job_tallies), and integer sums
are exact. A cost counts only within [0, 1,000,000] dollars, so no trial's cost can overflow
the sum (nor stop the trial from being written); `cost_n` counts the same trials.

The columns are renamed for their unit (`reward_sum` to `reward_units`, `cost_sum` to
`cost_units`), the trial triggers and the kept rows dropped around the change of type
(SQLite rebuilds the table), the new functions and triggers written, and the job tallies
recounted from the trials (the drifted float sums are not worth converting). On SQLite the
trigger of migration 0009 that names the table is dropped and written again around the
rebuild, unchanged. Going back restores migration 0008's triggers and recount from that
migration's own text.

The statements are frozen as this migration first ran them, for each vendor; a later change
of the rule comes with a migration of its own, and a test checks the triggers' tallies
against the live recount.
"""

from importlib import import_module

from django.db import migrations, models

POSTGRESQL_DROP = [
    'DROP TRIGGER IF EXISTS review_jobtally_insert ON rewards_trial;',
    'DROP TRIGGER IF EXISTS review_jobtally_delete ON rewards_trial;',
    'DROP TRIGGER IF EXISTS review_jobtally_update ON rewards_trial;',
]

# SQLite also drops migration 0009's trigger on tasks, which names the table: SQLite would
# refuse to rename the rebuilt table under it. It comes back unchanged.
SQLITE_DROP = [
    'DROP TRIGGER IF EXISTS review_jobtally_insert;',
    'DROP TRIGGER IF EXISTS review_jobtally_delete;',
    'DROP TRIGGER IF EXISTS review_jobtally_update;',
    'DROP TRIGGER IF EXISTS review_jobtally_task_update;',
]

SQLITE_TASK_TRIGGER = '''
CREATE TRIGGER review_jobtally_task_update AFTER UPDATE ON rewards_task
WHEN OLD.pass_threshold <> NEW.pass_threshold
BEGIN
UPDATE review_jobtally SET verifier_pass = verifier_pass + (
    SELECT COALESCE(SUM(CASE WHEN t.reward >= NEW.pass_threshold THEN 1 ELSE 0 END
        - CASE WHEN t.reward >= OLD.pass_threshold THEN 1 ELSE 0 END), 0)
    FROM rewards_trial t
    WHERE t.job_id = review_jobtally.job_id AND t.task_id = review_jobtally.task_id
        AND t.agent_name = review_jobtally.agent_name
        AND t.model_name = review_jobtally.model_name
        AND t.failure_mode = review_jobtally.failure_mode
)
WHERE task_id = NEW.id;
END
'''

POSTGRESQL_FORWARDS = [
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_insert() RETURNS trigger LANGUAGE '
        'plpgsql AS $$\n'
        'BEGIN\n'
        'INSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, '
        'failure_mode, trials, reward_units, valid, scorer_pass, scorer_ran, judge_pass, '
        'judge_decided, judge_unparseable, run_pass, run_done, reviewed, '
        'gate_disagreements, human_disagreements, verifier_pass, human_pass, '
        'human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8, bin9, '
        'cost_units, cost_n, tokens_sum, tokens_n) SELECT * FROM (SELECT r.job_id, '
        'r.task_id, r.agent_name, r.model_name, r.failure_mode, SUM(r.sign * (1)), '
        'SUM(r.sign * (CAST(ROUND(r.reward * 1000000000) AS BIGINT))), SUM(r.sign * (CASE'
        ' WHEN r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict '
        "IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN"
        " ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN"
        " ('UNPARSEABLE') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN "
        "('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN"
        ' 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.gate_disagreement IN '
        "('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 "
        'ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)), '
        "SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)), "
        "SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 "
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0'
        ' END)), SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN '
        'CAST(ROUND(r.cost_usd * 1000000000) AS BIGINT) ELSE 0 END)), SUM(r.sign * (CASE '
        'WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN 1 ELSE 0 END)), SUM(r.sign *'
        ' (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN '
        'r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 '
        'END)) FROM (SELECT 1 AS sign, * FROM new_trials) r JOIN rewards_task k ON k.id ='
        ' r.task_id GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode HAVING SUM(r.sign * (1)) <> 0 OR SUM(r.sign * '
        '(CAST(ROUND(r.reward * 1000000000) AS BIGINT))) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.is_valid THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict '
        "IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict"
        " IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * "
        "(CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR '
        "SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN"
        ' r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE '
        "WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE"
        " WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR "
        'SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) '
        '<> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0'
        ' END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1'
        ' ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4'
        ' THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND '
        'r.reward < 0.5 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= '
        '0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)) '
        '<> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE '
        '0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= '
        '1000000 THEN CAST(ROUND(r.cost_usd * 1000000000) AS BIGINT) ELSE 0 END)) <> 0 OR'
        ' SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN 1 ELSE 0'
        ' END)) <> 0 OR SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0)))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND '
        'r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) <> 0 ORDER BY r.job_id, '
        'r.task_id, r.agent_name, r.model_name, r.failure_mode) s WHERE true ON CONFLICT '
        '(job_id, task_id, agent_name, model_name, failure_mode) DO UPDATE SET trials = '
        'review_jobtally.trials + excluded.trials, reward_units = '
        'review_jobtally.reward_units + excluded.reward_units, valid = '
        'review_jobtally.valid + excluded.valid, scorer_pass = '
        'review_jobtally.scorer_pass + excluded.scorer_pass, scorer_ran = '
        'review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass = '
        'review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = '
        'review_jobtally.run_done + excluded.run_done, reviewed = '
        'review_jobtally.reviewed + excluded.reviewed, gate_disagreements = '
        'review_jobtally.gate_disagreements + excluded.gate_disagreements, '
        'human_disagreements = review_jobtally.human_disagreements + '
        'excluded.human_disagreements, verifier_pass = review_jobtally.verifier_pass + '
        'excluded.verifier_pass, human_pass = review_jobtally.human_pass + '
        'excluded.human_pass, human_decided = review_jobtally.human_decided + '
        'excluded.human_decided, bin0 = review_jobtally.bin0 + excluded.bin0, bin1 = '
        'review_jobtally.bin1 + excluded.bin1, bin2 = review_jobtally.bin2 + '
        'excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, bin4 = '
        'review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + '
        'excluded.bin8, bin9 = review_jobtally.bin9 + excluded.bin9, cost_units = '
        'review_jobtally.cost_units + excluded.cost_units, cost_n = '
        'review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n;\n'
        'RETURN NULL;\n'
        'END;\n'
        '$$;'
    ),
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_delete() RETURNS trigger LANGUAGE '
        'plpgsql AS $$\n'
        'BEGIN\n'
        'UPDATE review_jobtally SET trials = review_jobtally.trials - s.trials, '
        'reward_units = review_jobtally.reward_units - s.reward_units, valid = '
        'review_jobtally.valid - s.valid, scorer_pass = review_jobtally.scorer_pass - '
        's.scorer_pass, scorer_ran = review_jobtally.scorer_ran - s.scorer_ran, '
        'judge_pass = review_jobtally.judge_pass - s.judge_pass, judge_decided = '
        'review_jobtally.judge_decided - s.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable - s.judge_unparseable, run_pass = '
        'review_jobtally.run_pass - s.run_pass, run_done = review_jobtally.run_done - '
        's.run_done, reviewed = review_jobtally.reviewed - s.reviewed, gate_disagreements'
        ' = review_jobtally.gate_disagreements - s.gate_disagreements, '
        'human_disagreements = review_jobtally.human_disagreements - '
        's.human_disagreements, verifier_pass = review_jobtally.verifier_pass - '
        's.verifier_pass, human_pass = review_jobtally.human_pass - s.human_pass, '
        'human_decided = review_jobtally.human_decided - s.human_decided, bin0 = '
        'review_jobtally.bin0 - s.bin0, bin1 = review_jobtally.bin1 - s.bin1, bin2 = '
        'review_jobtally.bin2 - s.bin2, bin3 = review_jobtally.bin3 - s.bin3, bin4 = '
        'review_jobtally.bin4 - s.bin4, bin5 = review_jobtally.bin5 - s.bin5, bin6 = '
        'review_jobtally.bin6 - s.bin6, bin7 = review_jobtally.bin7 - s.bin7, bin8 = '
        'review_jobtally.bin8 - s.bin8, bin9 = review_jobtally.bin9 - s.bin9, cost_units '
        '= review_jobtally.cost_units - s.cost_units, cost_n = review_jobtally.cost_n - '
        's.cost_n, tokens_sum = review_jobtally.tokens_sum - s.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n - s.tokens_n FROM (SELECT r.job_id, r.task_id, '
        'r.agent_name, r.model_name, r.failure_mode, SUM(r.sign * (1)), SUM(r.sign * '
        '(CAST(ROUND(r.reward * 1000000000) AS BIGINT))), SUM(r.sign * (CASE WHEN '
        'r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN '
        "('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN"
        " ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN"
        " ('UNPARSEABLE') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN "
        "('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN"
        ' 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.gate_disagreement IN '
        "('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 "
        'ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)), '
        "SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)), "
        "SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 "
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0'
        ' END)), SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN '
        'CAST(ROUND(r.cost_usd * 1000000000) AS BIGINT) ELSE 0 END)), SUM(r.sign * (CASE '
        'WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN 1 ELSE 0 END)), SUM(r.sign *'
        ' (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN '
        'r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 '
        'END)) FROM (SELECT 1 AS sign, * FROM old_trials) r JOIN rewards_task k ON k.id ='
        ' r.task_id GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode HAVING SUM(r.sign * (1)) <> 0 OR SUM(r.sign * '
        '(CAST(ROUND(r.reward * 1000000000) AS BIGINT))) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.is_valid THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict '
        "IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict"
        " IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * "
        "(CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR '
        "SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN"
        ' r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE '
        "WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE"
        " WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR "
        'SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) '
        '<> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0'
        ' END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1'
        ' ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4'
        ' THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND '
        'r.reward < 0.5 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= '
        '0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)) '
        '<> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE '
        '0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= '
        '1000000 THEN CAST(ROUND(r.cost_usd * 1000000000) AS BIGINT) ELSE 0 END)) <> 0 OR'
        ' SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN 1 ELSE 0'
        ' END)) <> 0 OR SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0)))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND '
        'r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) <> 0 ORDER BY r.job_id, '
        'r.task_id, r.agent_name, r.model_name, r.failure_mode) s (job_id, task_id, '
        'agent_name, model_name, failure_mode, trials, reward_units, valid, scorer_pass, '
        'scorer_ran, judge_pass, judge_decided, judge_unparseable, run_pass, run_done, '
        'reviewed, gate_disagreements, human_disagreements, verifier_pass, human_pass, '
        'human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8, bin9, '
        'cost_units, cost_n, tokens_sum, tokens_n) WHERE review_jobtally.job_id = '
        's.job_id AND review_jobtally.task_id = s.task_id AND review_jobtally.agent_name '
        '= s.agent_name AND review_jobtally.model_name = s.model_name AND '
        'review_jobtally.failure_mode = s.failure_mode;\n'
        'RETURN NULL;\n'
        'END;\n'
        '$$;'
    ),
    (
        'CREATE OR REPLACE FUNCTION review_jobtally_update() RETURNS trigger LANGUAGE '
        'plpgsql AS $$\n'
        'BEGIN\n'
        'UPDATE review_jobtally SET trials = review_jobtally.trials - s.trials, '
        'reward_units = review_jobtally.reward_units - s.reward_units, valid = '
        'review_jobtally.valid - s.valid, scorer_pass = review_jobtally.scorer_pass - '
        's.scorer_pass, scorer_ran = review_jobtally.scorer_ran - s.scorer_ran, '
        'judge_pass = review_jobtally.judge_pass - s.judge_pass, judge_decided = '
        'review_jobtally.judge_decided - s.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable - s.judge_unparseable, run_pass = '
        'review_jobtally.run_pass - s.run_pass, run_done = review_jobtally.run_done - '
        's.run_done, reviewed = review_jobtally.reviewed - s.reviewed, gate_disagreements'
        ' = review_jobtally.gate_disagreements - s.gate_disagreements, '
        'human_disagreements = review_jobtally.human_disagreements - '
        's.human_disagreements, verifier_pass = review_jobtally.verifier_pass - '
        's.verifier_pass, human_pass = review_jobtally.human_pass - s.human_pass, '
        'human_decided = review_jobtally.human_decided - s.human_decided, bin0 = '
        'review_jobtally.bin0 - s.bin0, bin1 = review_jobtally.bin1 - s.bin1, bin2 = '
        'review_jobtally.bin2 - s.bin2, bin3 = review_jobtally.bin3 - s.bin3, bin4 = '
        'review_jobtally.bin4 - s.bin4, bin5 = review_jobtally.bin5 - s.bin5, bin6 = '
        'review_jobtally.bin6 - s.bin6, bin7 = review_jobtally.bin7 - s.bin7, bin8 = '
        'review_jobtally.bin8 - s.bin8, bin9 = review_jobtally.bin9 - s.bin9, cost_units '
        '= review_jobtally.cost_units - s.cost_units, cost_n = review_jobtally.cost_n - '
        's.cost_n, tokens_sum = review_jobtally.tokens_sum - s.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n - s.tokens_n FROM (SELECT r.job_id, r.task_id, '
        'r.agent_name, r.model_name, r.failure_mode, SUM(r.sign * (1)), SUM(r.sign * '
        '(CAST(ROUND(r.reward * 1000000000) AS BIGINT))), SUM(r.sign * (CASE WHEN '
        'r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN '
        "('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN"
        " ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN"
        " ('UNPARSEABLE') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN "
        "('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN"
        ' 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.gate_disagreement IN '
        "('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 "
        'ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)), '
        "SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)), "
        "SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 "
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0'
        ' END)), SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN '
        'CAST(ROUND(r.cost_usd * 1000000000) AS BIGINT) ELSE 0 END)), SUM(r.sign * (CASE '
        'WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN 1 ELSE 0 END)), SUM(r.sign *'
        ' (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN '
        'r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 '
        'END)) FROM (SELECT 1 AS sign, * FROM old_trials) r JOIN rewards_task k ON k.id ='
        ' r.task_id GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode HAVING SUM(r.sign * (1)) <> 0 OR SUM(r.sign * '
        '(CAST(ROUND(r.reward * 1000000000) AS BIGINT))) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.is_valid THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict '
        "IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict"
        " IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * "
        "(CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR '
        "SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN"
        ' r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE '
        "WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE"
        " WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR "
        'SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) '
        '<> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0'
        ' END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1'
        ' ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4'
        ' THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND '
        'r.reward < 0.5 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= '
        '0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)) '
        '<> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE '
        '0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= '
        '1000000 THEN CAST(ROUND(r.cost_usd * 1000000000) AS BIGINT) ELSE 0 END)) <> 0 OR'
        ' SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN 1 ELSE 0'
        ' END)) <> 0 OR SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0)))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND '
        'r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) <> 0 ORDER BY r.job_id, '
        'r.task_id, r.agent_name, r.model_name, r.failure_mode) s (job_id, task_id, '
        'agent_name, model_name, failure_mode, trials, reward_units, valid, scorer_pass, '
        'scorer_ran, judge_pass, judge_decided, judge_unparseable, run_pass, run_done, '
        'reviewed, gate_disagreements, human_disagreements, verifier_pass, human_pass, '
        'human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8, bin9, '
        'cost_units, cost_n, tokens_sum, tokens_n) WHERE review_jobtally.job_id = '
        's.job_id AND review_jobtally.task_id = s.task_id AND review_jobtally.agent_name '
        '= s.agent_name AND review_jobtally.model_name = s.model_name AND '
        'review_jobtally.failure_mode = s.failure_mode;\n'
        'INSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, '
        'failure_mode, trials, reward_units, valid, scorer_pass, scorer_ran, judge_pass, '
        'judge_decided, judge_unparseable, run_pass, run_done, reviewed, '
        'gate_disagreements, human_disagreements, verifier_pass, human_pass, '
        'human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8, bin9, '
        'cost_units, cost_n, tokens_sum, tokens_n) SELECT * FROM (SELECT r.job_id, '
        'r.task_id, r.agent_name, r.model_name, r.failure_mode, SUM(r.sign * (1)), '
        'SUM(r.sign * (CAST(ROUND(r.reward * 1000000000) AS BIGINT))), SUM(r.sign * (CASE'
        ' WHEN r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict '
        "IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN"
        " ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN"
        " ('UNPARSEABLE') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN "
        "('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN"
        ' 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.gate_disagreement IN '
        "('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 "
        'ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)), '
        "SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)), "
        "SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 "
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0'
        ' END)), SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN '
        'CAST(ROUND(r.cost_usd * 1000000000) AS BIGINT) ELSE 0 END)), SUM(r.sign * (CASE '
        'WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN 1 ELSE 0 END)), SUM(r.sign *'
        ' (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN '
        'r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 '
        'END)) FROM (SELECT 1 AS sign, * FROM new_trials) r JOIN rewards_task k ON k.id ='
        ' r.task_id GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode HAVING SUM(r.sign * (1)) <> 0 OR SUM(r.sign * '
        '(CAST(ROUND(r.reward * 1000000000) AS BIGINT))) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.is_valid THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict '
        "IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict"
        " IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * "
        "(CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR '
        "SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN"
        ' r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE '
        "WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE"
        " WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR "
        'SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) '
        '<> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0'
        ' END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1'
        ' ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4'
        ' THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND '
        'r.reward < 0.5 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= '
        '0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)) '
        '<> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE '
        '0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= '
        '1000000 THEN CAST(ROUND(r.cost_usd * 1000000000) AS BIGINT) ELSE 0 END)) <> 0 OR'
        ' SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN 1 ELSE 0'
        ' END)) <> 0 OR SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0)))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND '
        'r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) <> 0 ORDER BY r.job_id, '
        'r.task_id, r.agent_name, r.model_name, r.failure_mode) s WHERE true ON CONFLICT '
        '(job_id, task_id, agent_name, model_name, failure_mode) DO UPDATE SET trials = '
        'review_jobtally.trials + excluded.trials, reward_units = '
        'review_jobtally.reward_units + excluded.reward_units, valid = '
        'review_jobtally.valid + excluded.valid, scorer_pass = '
        'review_jobtally.scorer_pass + excluded.scorer_pass, scorer_ran = '
        'review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass = '
        'review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = '
        'review_jobtally.run_done + excluded.run_done, reviewed = '
        'review_jobtally.reviewed + excluded.reviewed, gate_disagreements = '
        'review_jobtally.gate_disagreements + excluded.gate_disagreements, '
        'human_disagreements = review_jobtally.human_disagreements + '
        'excluded.human_disagreements, verifier_pass = review_jobtally.verifier_pass + '
        'excluded.verifier_pass, human_pass = review_jobtally.human_pass + '
        'excluded.human_pass, human_decided = review_jobtally.human_decided + '
        'excluded.human_decided, bin0 = review_jobtally.bin0 + excluded.bin0, bin1 = '
        'review_jobtally.bin1 + excluded.bin1, bin2 = review_jobtally.bin2 + '
        'excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, bin4 = '
        'review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + '
        'excluded.bin8, bin9 = review_jobtally.bin9 + excluded.bin9, cost_units = '
        'review_jobtally.cost_units + excluded.cost_units, cost_n = '
        'review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n;\n'
        'RETURN NULL;\n'
        'END;\n'
        '$$;'
    ),
    (
        'DROP TRIGGER IF EXISTS review_jobtally_insert ON rewards_trial;'
    ),
    (
        'CREATE TRIGGER review_jobtally_insert AFTER INSERT ON rewards_trial REFERENCING '
        'NEW TABLE AS new_trials FOR EACH STATEMENT EXECUTE FUNCTION '
        'review_jobtally_insert();'
    ),
    (
        'DROP TRIGGER IF EXISTS review_jobtally_delete ON rewards_trial;'
    ),
    (
        'CREATE TRIGGER review_jobtally_delete AFTER DELETE ON rewards_trial REFERENCING '
        'OLD TABLE AS old_trials FOR EACH STATEMENT EXECUTE FUNCTION '
        'review_jobtally_delete();'
    ),
    (
        'DROP TRIGGER IF EXISTS review_jobtally_update ON rewards_trial;'
    ),
    (
        'CREATE TRIGGER review_jobtally_update AFTER UPDATE ON rewards_trial REFERENCING '
        'OLD TABLE AS old_trials NEW TABLE AS new_trials FOR EACH STATEMENT EXECUTE '
        'FUNCTION review_jobtally_update();'
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
        'CREATE TRIGGER review_jobtally_insert AFTER INSERT ON rewards_trial BEGIN INSERT'
        ' INTO review_jobtally (job_id, task_id, agent_name, model_name, failure_mode, '
        'trials, reward_units, valid, scorer_pass, scorer_ran, judge_pass, judge_decided,'
        ' judge_unparseable, run_pass, run_done, reviewed, gate_disagreements, '
        'human_disagreements, verifier_pass, human_pass, human_decided, bin0, bin1, bin2,'
        ' bin3, bin4, bin5, bin6, bin7, bin8, bin9, cost_units, cost_n, tokens_sum, '
        'tokens_n) SELECT * FROM (SELECT NEW.job_id, NEW.task_id, NEW.agent_name, '
        'NEW.model_name, NEW.failure_mode, 1 * (1), 1 * (CAST(ROUND(NEW.reward * '
        '1000000000) AS BIGINT)), 1 * (CASE WHEN NEW.is_valid THEN 1 ELSE 0 END), 1 * '
        "(CASE WHEN NEW.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.judge_verdict IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.run_badge IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.run_badge IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.annotation_count > 0 "
        'THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.gate_disagreement IN '
        "('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 "
        'ELSE 0 END), 1 * (CASE WHEN NEW.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END), 1"
        ' * (CASE WHEN NEW.reward >= k.pass_threshold THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        "NEW.human_judgment IN ('pass') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        'NEW.reward >= 0.0 AND NEW.reward < 0.1 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.1 AND NEW.reward < 0.2 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.2 AND NEW.reward < 0.3 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.3 AND NEW.reward < 0.4 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.4 AND NEW.reward < 0.5 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.5 AND NEW.reward < 0.6 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.6 AND NEW.reward < 0.7 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.7 AND NEW.reward < 0.8 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.8 AND NEW.reward < 0.9 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.9 AND NEW.reward <= 1.0 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.cost_usd >= 0 AND NEW.cost_usd <= 1000000 THEN CAST(ROUND(NEW.cost_usd * '
        '1000000000) AS BIGINT) ELSE 0 END), 1 * (CASE WHEN NEW.cost_usd >= 0 AND '
        'NEW.cost_usd <= 1000000 THEN 1 ELSE 0 END), 1 * (COALESCE(NEW.n_input_tokens + '
        'NEW.n_output_tokens, 0)), 1 * (CASE WHEN NEW.n_input_tokens IS NOT NULL AND '
        'NEW.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END) FROM rewards_task k WHERE '
        'k.id = NEW.task_id) s WHERE true ON CONFLICT (job_id, task_id, agent_name, '
        'model_name, failure_mode) DO UPDATE SET trials = review_jobtally.trials + '
        'excluded.trials, reward_units = review_jobtally.reward_units + '
        'excluded.reward_units, valid = review_jobtally.valid + excluded.valid, '
        'scorer_pass = review_jobtally.scorer_pass + excluded.scorer_pass, scorer_ran = '
        'review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass = '
        'review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = '
        'review_jobtally.run_done + excluded.run_done, reviewed = '
        'review_jobtally.reviewed + excluded.reviewed, gate_disagreements = '
        'review_jobtally.gate_disagreements + excluded.gate_disagreements, '
        'human_disagreements = review_jobtally.human_disagreements + '
        'excluded.human_disagreements, verifier_pass = review_jobtally.verifier_pass + '
        'excluded.verifier_pass, human_pass = review_jobtally.human_pass + '
        'excluded.human_pass, human_decided = review_jobtally.human_decided + '
        'excluded.human_decided, bin0 = review_jobtally.bin0 + excluded.bin0, bin1 = '
        'review_jobtally.bin1 + excluded.bin1, bin2 = review_jobtally.bin2 + '
        'excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, bin4 = '
        'review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + '
        'excluded.bin8, bin9 = review_jobtally.bin9 + excluded.bin9, cost_units = '
        'review_jobtally.cost_units + excluded.cost_units, cost_n = '
        'review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n; END;'
    ),
    (
        'CREATE TRIGGER review_jobtally_delete AFTER DELETE ON rewards_trial BEGIN UPDATE'
        ' review_jobtally SET trials = trials - (SELECT 1 FROM rewards_task k WHERE k.id '
        '= OLD.task_id), reward_units = reward_units - (SELECT CAST(ROUND(OLD.reward * '
        '1000000000) AS BIGINT) FROM rewards_task k WHERE k.id = OLD.task_id), valid = '
        'valid - (SELECT CASE WHEN OLD.is_valid THEN 1 ELSE 0 END FROM rewards_task k '
        'WHERE k.id = OLD.task_id), scorer_pass = scorer_pass - (SELECT CASE WHEN '
        "OLD.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id "
        '= OLD.task_id), scorer_ran = scorer_ran - (SELECT CASE WHEN OLD.scorer_verdict '
        "IN ('PASS', 'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = "
        'OLD.task_id), judge_pass = judge_pass - (SELECT CASE WHEN OLD.judge_verdict IN '
        "('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        "judge_decided = judge_decided - (SELECT CASE WHEN OLD.judge_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        'judge_unparseable = judge_unparseable - (SELECT CASE WHEN OLD.judge_verdict IN '
        "('UNPARSEABLE') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id),"
        " run_pass = run_pass - (SELECT CASE WHEN OLD.run_badge IN ('PASS') THEN 1 ELSE 0"
        ' END FROM rewards_task k WHERE k.id = OLD.task_id), run_done = run_done - '
        "(SELECT CASE WHEN OLD.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END FROM "
        'rewards_task k WHERE k.id = OLD.task_id), reviewed = reviewed - (SELECT CASE '
        'WHEN OLD.annotation_count > 0 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id ='
        ' OLD.task_id), gate_disagreements = gate_disagreements - (SELECT CASE WHEN '
        "OLD.gate_disagreement IN ('judge_pass_scorers_fail', 'scorers_pass_judge_fail', "
        "'advisory_fail') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = "
        'OLD.task_id), human_disagreements = human_disagreements - (SELECT CASE WHEN '
        "OLD.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = "
        'OLD.task_id), verifier_pass = verifier_pass - (SELECT CASE WHEN OLD.reward >= '
        'k.pass_threshold THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), human_pass = human_pass - (SELECT CASE WHEN OLD.human_judgment IN '
        "('pass') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        "human_decided = human_decided - (SELECT CASE WHEN OLD.human_judgment IN ('pass',"
        " 'fail') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin0 ="
        ' bin0 - (SELECT CASE WHEN OLD.reward >= 0.0 AND OLD.reward < 0.1 THEN 1 ELSE 0 '
        'END FROM rewards_task k WHERE k.id = OLD.task_id), bin1 = bin1 - (SELECT CASE '
        'WHEN OLD.reward >= 0.1 AND OLD.reward < 0.2 THEN 1 ELSE 0 END FROM rewards_task '
        'k WHERE k.id = OLD.task_id), bin2 = bin2 - (SELECT CASE WHEN OLD.reward >= 0.2 '
        'AND OLD.reward < 0.3 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), bin3 = bin3 - (SELECT CASE WHEN OLD.reward >= 0.3 AND OLD.reward <'
        ' 0.4 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin4 = '
        'bin4 - (SELECT CASE WHEN OLD.reward >= 0.4 AND OLD.reward < 0.5 THEN 1 ELSE 0 '
        'END FROM rewards_task k WHERE k.id = OLD.task_id), bin5 = bin5 - (SELECT CASE '
        'WHEN OLD.reward >= 0.5 AND OLD.reward < 0.6 THEN 1 ELSE 0 END FROM rewards_task '
        'k WHERE k.id = OLD.task_id), bin6 = bin6 - (SELECT CASE WHEN OLD.reward >= 0.6 '
        'AND OLD.reward < 0.7 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), bin7 = bin7 - (SELECT CASE WHEN OLD.reward >= 0.7 AND OLD.reward <'
        ' 0.8 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin8 = '
        'bin8 - (SELECT CASE WHEN OLD.reward >= 0.8 AND OLD.reward < 0.9 THEN 1 ELSE 0 '
        'END FROM rewards_task k WHERE k.id = OLD.task_id), bin9 = bin9 - (SELECT CASE '
        'WHEN OLD.reward >= 0.9 AND OLD.reward <= 1.0 THEN 1 ELSE 0 END FROM rewards_task'
        ' k WHERE k.id = OLD.task_id), cost_units = cost_units - (SELECT CASE WHEN '
        'OLD.cost_usd >= 0 AND OLD.cost_usd <= 1000000 THEN CAST(ROUND(OLD.cost_usd * '
        '1000000000) AS BIGINT) ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id),'
        ' cost_n = cost_n - (SELECT CASE WHEN OLD.cost_usd >= 0 AND OLD.cost_usd <= '
        '1000000 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), '
        'tokens_sum = tokens_sum - (SELECT COALESCE(OLD.n_input_tokens + '
        'OLD.n_output_tokens, 0) FROM rewards_task k WHERE k.id = OLD.task_id), tokens_n '
        '= tokens_n - (SELECT CASE WHEN OLD.n_input_tokens IS NOT NULL AND '
        'OLD.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id'
        ' = OLD.task_id) WHERE job_id = OLD.job_id AND task_id = OLD.task_id AND '
        'agent_name = OLD.agent_name AND model_name = OLD.model_name AND failure_mode = '
        'OLD.failure_mode AND EXISTS (SELECT 1 FROM rewards_task k WHERE k.id = '
        'OLD.task_id); END;'
    ),
    (
        'CREATE TRIGGER review_jobtally_update AFTER UPDATE ON rewards_trial BEGIN UPDATE'
        ' review_jobtally SET trials = trials - (SELECT 1 FROM rewards_task k WHERE k.id '
        '= OLD.task_id), reward_units = reward_units - (SELECT CAST(ROUND(OLD.reward * '
        '1000000000) AS BIGINT) FROM rewards_task k WHERE k.id = OLD.task_id), valid = '
        'valid - (SELECT CASE WHEN OLD.is_valid THEN 1 ELSE 0 END FROM rewards_task k '
        'WHERE k.id = OLD.task_id), scorer_pass = scorer_pass - (SELECT CASE WHEN '
        "OLD.scorer_verdict IN ('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id "
        '= OLD.task_id), scorer_ran = scorer_ran - (SELECT CASE WHEN OLD.scorer_verdict '
        "IN ('PASS', 'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = "
        'OLD.task_id), judge_pass = judge_pass - (SELECT CASE WHEN OLD.judge_verdict IN '
        "('PASS') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        "judge_decided = judge_decided - (SELECT CASE WHEN OLD.judge_verdict IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        'judge_unparseable = judge_unparseable - (SELECT CASE WHEN OLD.judge_verdict IN '
        "('UNPARSEABLE') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id),"
        " run_pass = run_pass - (SELECT CASE WHEN OLD.run_badge IN ('PASS') THEN 1 ELSE 0"
        ' END FROM rewards_task k WHERE k.id = OLD.task_id), run_done = run_done - '
        "(SELECT CASE WHEN OLD.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END FROM "
        'rewards_task k WHERE k.id = OLD.task_id), reviewed = reviewed - (SELECT CASE '
        'WHEN OLD.annotation_count > 0 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id ='
        ' OLD.task_id), gate_disagreements = gate_disagreements - (SELECT CASE WHEN '
        "OLD.gate_disagreement IN ('judge_pass_scorers_fail', 'scorers_pass_judge_fail', "
        "'advisory_fail') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = "
        'OLD.task_id), human_disagreements = human_disagreements - (SELECT CASE WHEN '
        "OLD.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = "
        'OLD.task_id), verifier_pass = verifier_pass - (SELECT CASE WHEN OLD.reward >= '
        'k.pass_threshold THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), human_pass = human_pass - (SELECT CASE WHEN OLD.human_judgment IN '
        "('pass') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), "
        "human_decided = human_decided - (SELECT CASE WHEN OLD.human_judgment IN ('pass',"
        " 'fail') THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin0 ="
        ' bin0 - (SELECT CASE WHEN OLD.reward >= 0.0 AND OLD.reward < 0.1 THEN 1 ELSE 0 '
        'END FROM rewards_task k WHERE k.id = OLD.task_id), bin1 = bin1 - (SELECT CASE '
        'WHEN OLD.reward >= 0.1 AND OLD.reward < 0.2 THEN 1 ELSE 0 END FROM rewards_task '
        'k WHERE k.id = OLD.task_id), bin2 = bin2 - (SELECT CASE WHEN OLD.reward >= 0.2 '
        'AND OLD.reward < 0.3 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), bin3 = bin3 - (SELECT CASE WHEN OLD.reward >= 0.3 AND OLD.reward <'
        ' 0.4 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin4 = '
        'bin4 - (SELECT CASE WHEN OLD.reward >= 0.4 AND OLD.reward < 0.5 THEN 1 ELSE 0 '
        'END FROM rewards_task k WHERE k.id = OLD.task_id), bin5 = bin5 - (SELECT CASE '
        'WHEN OLD.reward >= 0.5 AND OLD.reward < 0.6 THEN 1 ELSE 0 END FROM rewards_task '
        'k WHERE k.id = OLD.task_id), bin6 = bin6 - (SELECT CASE WHEN OLD.reward >= 0.6 '
        'AND OLD.reward < 0.7 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = '
        'OLD.task_id), bin7 = bin7 - (SELECT CASE WHEN OLD.reward >= 0.7 AND OLD.reward <'
        ' 0.8 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), bin8 = '
        'bin8 - (SELECT CASE WHEN OLD.reward >= 0.8 AND OLD.reward < 0.9 THEN 1 ELSE 0 '
        'END FROM rewards_task k WHERE k.id = OLD.task_id), bin9 = bin9 - (SELECT CASE '
        'WHEN OLD.reward >= 0.9 AND OLD.reward <= 1.0 THEN 1 ELSE 0 END FROM rewards_task'
        ' k WHERE k.id = OLD.task_id), cost_units = cost_units - (SELECT CASE WHEN '
        'OLD.cost_usd >= 0 AND OLD.cost_usd <= 1000000 THEN CAST(ROUND(OLD.cost_usd * '
        '1000000000) AS BIGINT) ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id),'
        ' cost_n = cost_n - (SELECT CASE WHEN OLD.cost_usd >= 0 AND OLD.cost_usd <= '
        '1000000 THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id = OLD.task_id), '
        'tokens_sum = tokens_sum - (SELECT COALESCE(OLD.n_input_tokens + '
        'OLD.n_output_tokens, 0) FROM rewards_task k WHERE k.id = OLD.task_id), tokens_n '
        '= tokens_n - (SELECT CASE WHEN OLD.n_input_tokens IS NOT NULL AND '
        'OLD.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END FROM rewards_task k WHERE k.id'
        ' = OLD.task_id) WHERE job_id = OLD.job_id AND task_id = OLD.task_id AND '
        'agent_name = OLD.agent_name AND model_name = OLD.model_name AND failure_mode = '
        'OLD.failure_mode AND EXISTS (SELECT 1 FROM rewards_task k WHERE k.id = '
        'OLD.task_id); INSERT INTO review_jobtally (job_id, task_id, agent_name, '
        'model_name, failure_mode, trials, reward_units, valid, scorer_pass, scorer_ran, '
        'judge_pass, judge_decided, judge_unparseable, run_pass, run_done, reviewed, '
        'gate_disagreements, human_disagreements, verifier_pass, human_pass, '
        'human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8, bin9, '
        'cost_units, cost_n, tokens_sum, tokens_n) SELECT * FROM (SELECT NEW.job_id, '
        'NEW.task_id, NEW.agent_name, NEW.model_name, NEW.failure_mode, 1 * (1), 1 * '
        '(CAST(ROUND(NEW.reward * 1000000000) AS BIGINT)), 1 * (CASE WHEN NEW.is_valid '
        "THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.scorer_verdict IN ('PASS') THEN 1 ELSE 0 "
        "END), 1 * (CASE WHEN NEW.scorer_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), "
        "1 * (CASE WHEN NEW.judge_verdict IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.run_badge IN ('PASS') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.run_badge IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.annotation_count > 0 "
        'THEN 1 ELSE 0 END), 1 * (CASE WHEN NEW.gate_disagreement IN '
        "('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 "
        'ELSE 0 END), 1 * (CASE WHEN NEW.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END), 1"
        ' * (CASE WHEN NEW.reward >= k.pass_threshold THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        "NEW.human_judgment IN ('pass') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        "NEW.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END), 1 * (CASE WHEN "
        'NEW.reward >= 0.0 AND NEW.reward < 0.1 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.1 AND NEW.reward < 0.2 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.2 AND NEW.reward < 0.3 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.3 AND NEW.reward < 0.4 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.4 AND NEW.reward < 0.5 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.5 AND NEW.reward < 0.6 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.6 AND NEW.reward < 0.7 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.7 AND NEW.reward < 0.8 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.8 AND NEW.reward < 0.9 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.reward >= 0.9 AND NEW.reward <= 1.0 THEN 1 ELSE 0 END), 1 * (CASE WHEN '
        'NEW.cost_usd >= 0 AND NEW.cost_usd <= 1000000 THEN CAST(ROUND(NEW.cost_usd * '
        '1000000000) AS BIGINT) ELSE 0 END), 1 * (CASE WHEN NEW.cost_usd >= 0 AND '
        'NEW.cost_usd <= 1000000 THEN 1 ELSE 0 END), 1 * (COALESCE(NEW.n_input_tokens + '
        'NEW.n_output_tokens, 0)), 1 * (CASE WHEN NEW.n_input_tokens IS NOT NULL AND '
        'NEW.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END) FROM rewards_task k WHERE '
        'k.id = NEW.task_id) s WHERE true ON CONFLICT (job_id, task_id, agent_name, '
        'model_name, failure_mode) DO UPDATE SET trials = review_jobtally.trials + '
        'excluded.trials, reward_units = review_jobtally.reward_units + '
        'excluded.reward_units, valid = review_jobtally.valid + excluded.valid, '
        'scorer_pass = review_jobtally.scorer_pass + excluded.scorer_pass, scorer_ran = '
        'review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass = '
        'review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = '
        'review_jobtally.run_done + excluded.run_done, reviewed = '
        'review_jobtally.reviewed + excluded.reviewed, gate_disagreements = '
        'review_jobtally.gate_disagreements + excluded.gate_disagreements, '
        'human_disagreements = review_jobtally.human_disagreements + '
        'excluded.human_disagreements, verifier_pass = review_jobtally.verifier_pass + '
        'excluded.verifier_pass, human_pass = review_jobtally.human_pass + '
        'excluded.human_pass, human_decided = review_jobtally.human_decided + '
        'excluded.human_decided, bin0 = review_jobtally.bin0 + excluded.bin0, bin1 = '
        'review_jobtally.bin1 + excluded.bin1, bin2 = review_jobtally.bin2 + '
        'excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, bin4 = '
        'review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + '
        'excluded.bin8, bin9 = review_jobtally.bin9 + excluded.bin9, cost_units = '
        'review_jobtally.cost_units + excluded.cost_units, cost_n = '
        'review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n; END;'
    ),
]

RECOUNT = [
    (
        'DELETE FROM review_jobtally'
    ),
    (
        'INSERT INTO review_jobtally (job_id, task_id, agent_name, model_name, '
        'failure_mode, trials, reward_units, valid, scorer_pass, scorer_ran, judge_pass, '
        'judge_decided, judge_unparseable, run_pass, run_done, reviewed, '
        'gate_disagreements, human_disagreements, verifier_pass, human_pass, '
        'human_decided, bin0, bin1, bin2, bin3, bin4, bin5, bin6, bin7, bin8, bin9, '
        'cost_units, cost_n, tokens_sum, tokens_n) SELECT * FROM (SELECT r.job_id, '
        'r.task_id, r.agent_name, r.model_name, r.failure_mode, SUM(r.sign * (1)), '
        'SUM(r.sign * (CAST(ROUND(r.reward * 1000000000) AS BIGINT))), SUM(r.sign * (CASE'
        ' WHEN r.is_valid THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict '
        "IN ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.scorer_verdict IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN"
        " ('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN "
        "('PASS', 'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.judge_verdict IN"
        " ('UNPARSEABLE') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN "
        "('PASS') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', "
        "'FAIL') THEN 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN"
        ' 1 ELSE 0 END)), SUM(r.sign * (CASE WHEN r.gate_disagreement IN '
        "('judge_pass_scorers_fail', 'scorers_pass_judge_fail', 'advisory_fail') THEN 1 "
        'ELSE 0 END)), SUM(r.sign * (CASE WHEN r.human_disagreement IN '
        "('human_pass_automated_fail', 'human_fail_automated_pass') THEN 1 ELSE 0 END)), "
        'SUM(r.sign * (CASE WHEN r.reward >= k.pass_threshold THEN 1 ELSE 0 END)), '
        "SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)), "
        "SUM(r.sign * (CASE WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 "
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND r.reward < 0.5 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.5 AND r.reward < 0.6 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 '
        'END)), SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE 0'
        ' END)), SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN '
        'CAST(ROUND(r.cost_usd * 1000000000) AS BIGINT) ELSE 0 END)), SUM(r.sign * (CASE '
        'WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN 1 ELSE 0 END)), SUM(r.sign *'
        ' (COALESCE(r.n_input_tokens + r.n_output_tokens, 0))), SUM(r.sign * (CASE WHEN '
        'r.n_input_tokens IS NOT NULL AND r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 '
        'END)) FROM (SELECT 1 AS sign, * FROM rewards_trial) r JOIN rewards_task k ON '
        'k.id = r.task_id GROUP BY r.job_id, r.task_id, r.agent_name, r.model_name, '
        'r.failure_mode HAVING SUM(r.sign * (1)) <> 0 OR SUM(r.sign * '
        '(CAST(ROUND(r.reward * 1000000000) AS BIGINT))) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.is_valid THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict '
        "IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.scorer_verdict"
        " IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN "
        "r.judge_verdict IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * "
        "(CASE WHEN r.judge_verdict IN ('UNPARSEABLE') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.run_badge IN ('PASS', 'FAIL') THEN 1 ELSE 0 END)) <> 0"
        ' OR SUM(r.sign * (CASE WHEN r.annotation_count > 0 THEN 1 ELSE 0 END)) <> 0 OR '
        "SUM(r.sign * (CASE WHEN r.gate_disagreement IN ('judge_pass_scorers_fail', "
        "'scorers_pass_judge_fail', 'advisory_fail') THEN 1 ELSE 0 END)) <> 0 OR "
        "SUM(r.sign * (CASE WHEN r.human_disagreement IN ('human_pass_automated_fail', "
        "'human_fail_automated_pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN"
        ' r.reward >= k.pass_threshold THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE '
        "WHEN r.human_judgment IN ('pass') THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE"
        " WHEN r.human_judgment IN ('pass', 'fail') THEN 1 ELSE 0 END)) <> 0 OR "
        'SUM(r.sign * (CASE WHEN r.reward >= 0.0 AND r.reward < 0.1 THEN 1 ELSE 0 END)) '
        '<> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.1 AND r.reward < 0.2 THEN 1 ELSE 0'
        ' END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.2 AND r.reward < 0.3 THEN 1'
        ' ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.3 AND r.reward < 0.4'
        ' THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.4 AND '
        'r.reward < 0.5 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.reward >= '
        '0.5 AND r.reward < 0.6 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * (CASE WHEN '
        'r.reward >= 0.6 AND r.reward < 0.7 THEN 1 ELSE 0 END)) <> 0 OR SUM(r.sign * '
        '(CASE WHEN r.reward >= 0.7 AND r.reward < 0.8 THEN 1 ELSE 0 END)) <> 0 OR '
        'SUM(r.sign * (CASE WHEN r.reward >= 0.8 AND r.reward < 0.9 THEN 1 ELSE 0 END)) '
        '<> 0 OR SUM(r.sign * (CASE WHEN r.reward >= 0.9 AND r.reward <= 1.0 THEN 1 ELSE '
        '0 END)) <> 0 OR SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= '
        '1000000 THEN CAST(ROUND(r.cost_usd * 1000000000) AS BIGINT) ELSE 0 END)) <> 0 OR'
        ' SUM(r.sign * (CASE WHEN r.cost_usd >= 0 AND r.cost_usd <= 1000000 THEN 1 ELSE 0'
        ' END)) <> 0 OR SUM(r.sign * (COALESCE(r.n_input_tokens + r.n_output_tokens, 0)))'
        ' <> 0 OR SUM(r.sign * (CASE WHEN r.n_input_tokens IS NOT NULL AND '
        'r.n_output_tokens IS NOT NULL THEN 1 ELSE 0 END)) <> 0 ORDER BY r.job_id, '
        'r.task_id, r.agent_name, r.model_name, r.failure_mode) s WHERE true ON CONFLICT '
        '(job_id, task_id, agent_name, model_name, failure_mode) DO UPDATE SET trials = '
        'review_jobtally.trials + excluded.trials, reward_units = '
        'review_jobtally.reward_units + excluded.reward_units, valid = '
        'review_jobtally.valid + excluded.valid, scorer_pass = '
        'review_jobtally.scorer_pass + excluded.scorer_pass, scorer_ran = '
        'review_jobtally.scorer_ran + excluded.scorer_ran, judge_pass = '
        'review_jobtally.judge_pass + excluded.judge_pass, judge_decided = '
        'review_jobtally.judge_decided + excluded.judge_decided, judge_unparseable = '
        'review_jobtally.judge_unparseable + excluded.judge_unparseable, run_pass = '
        'review_jobtally.run_pass + excluded.run_pass, run_done = '
        'review_jobtally.run_done + excluded.run_done, reviewed = '
        'review_jobtally.reviewed + excluded.reviewed, gate_disagreements = '
        'review_jobtally.gate_disagreements + excluded.gate_disagreements, '
        'human_disagreements = review_jobtally.human_disagreements + '
        'excluded.human_disagreements, verifier_pass = review_jobtally.verifier_pass + '
        'excluded.verifier_pass, human_pass = review_jobtally.human_pass + '
        'excluded.human_pass, human_decided = review_jobtally.human_decided + '
        'excluded.human_decided, bin0 = review_jobtally.bin0 + excluded.bin0, bin1 = '
        'review_jobtally.bin1 + excluded.bin1, bin2 = review_jobtally.bin2 + '
        'excluded.bin2, bin3 = review_jobtally.bin3 + excluded.bin3, bin4 = '
        'review_jobtally.bin4 + excluded.bin4, bin5 = review_jobtally.bin5 + '
        'excluded.bin5, bin6 = review_jobtally.bin6 + excluded.bin6, bin7 = '
        'review_jobtally.bin7 + excluded.bin7, bin8 = review_jobtally.bin8 + '
        'excluded.bin8, bin9 = review_jobtally.bin9 + excluded.bin9, cost_units = '
        'review_jobtally.cost_units + excluded.cost_units, cost_n = '
        'review_jobtally.cost_n + excluded.cost_n, tokens_sum = '
        'review_jobtally.tokens_sum + excluded.tokens_sum, tokens_n = '
        'review_jobtally.tokens_n + excluded.tokens_n'
    ),
]


def _run(schema_editor, statements):
    with schema_editor.connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def drop_triggers(apps, schema_editor):
    # The kept rows go too: they are recounted once the columns have their new type (a
    # float sum beyond a BIGINT would stop the change of type on PostgreSQL).
    drop = {"postgresql": POSTGRESQL_DROP, "sqlite": SQLITE_DROP}
    _run(schema_editor, [*drop.get(schema_editor.connection.vendor, []), *RECOUNT[:1]])


def create_triggers_and_recount(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    triggers = {
        "postgresql": POSTGRESQL_FORWARDS,
        "sqlite": [*SQLITE_FORWARDS, SQLITE_TASK_TRIGGER],
    }
    if vendor in triggers:
        _run(schema_editor, triggers[vendor])
        _run(schema_editor, RECOUNT)


def restore_float_triggers(apps, schema_editor):
    # Migration 0008's own text (history, not live code): its job-tally triggers and its
    # recount of the job tallies and first reviews; agreement's per-job tallies, which it
    # also filled, are left as they are.
    old = import_module("review.migrations.0008_job_tallies")
    statements = {"postgresql": old.POSTGRESQL_FORWARDS, "sqlite": old.SQLITE_FORWARDS}
    vendor = schema_editor.connection.vendor
    _run(
        schema_editor,
        [
            sql
            for sql in statements.get(vendor, [])
            if "review_jobjudgmenttally" not in sql and "review_jobpairtally" not in sql
        ],
    )
    if vendor == "sqlite":
        _run(schema_editor, [SQLITE_TASK_TRIGGER])


class Migration(migrations.Migration):

    dependencies = [
        ("review", "0009_agreement_tally_triggers"),
    ]

    operations = [
        migrations.RunPython(drop_triggers, restore_float_triggers, elidable=False),
        migrations.RenameField(model_name="jobtally", old_name="reward_sum", new_name="reward_units"),
        migrations.AlterField(
            model_name="jobtally", name="reward_units", field=models.BigIntegerField(default=0)
        ),
        migrations.RenameField(model_name="jobtally", old_name="cost_sum", new_name="cost_units"),
        migrations.AlterField(
            model_name="jobtally", name="cost_units", field=models.BigIntegerField(default=0)
        ),
        migrations.RunPython(create_triggers_and_recount, drop_triggers, elidable=False),
    ]
