"""Agreement's tallies kept by database triggers, like the job tallies (migration 0008);
the job tallies follow a task's pass threshold.

Until now the application kept `LatestJudgment` and the four agreement tallies
(`JudgmentTally`, `PairTally`, `JobJudgmentTally`, `JobPairTally`) itself, in the annotation's
transaction and from a `post_save` receiver on trials: correct only while every write went
through `save()`, which bulk writes (`bulk_create`, `QuerySet.update`, the ingest writer's
COPY) do not. From here the database keeps them:

- an annotation inserted: its trial's latest judgments are rewritten from its annotations
  (each reviewer's newest by created_at, then id, and newest blind one), with the trial's
  gates;
- a trial or a task updated so that a trial's judgments are tallied under gates it no
  longer has (judge and scorer verdicts, verifier = reward at or above the task's pass
  threshold, failure mode, task source, judge model): its latest judgments take the new
  gates.

Either way the affected trials' counts are taken off the four tallies (an upsert of negative
counts), their latest judgments rewritten, and their counts added back: a tally moves by the
difference, in the writing statement's transaction. PostgreSQL runs one function,
`review_agreement_retally(trial ids)`, from statement triggers over transition tables (a
bulk insert is one call); SQLite has row triggers only, with the statements inline. A trial
with judgments cannot be deleted (annotations PROTECT and are append-only), so deletes need
no trigger. Tally keys are written in key order so that concurrent writers lock rows in the
same order.

The job tallies' triggers (migration 0008) watch the trials only, yet a trial's
`verifier_pass` counts its reward against its task's pass threshold: a task whose threshold
changes now moves that counter for its trials (`review_jobtally_task_update`).

Then everything is recounted once from the annotations (what `review.science.tallies.rebuild` does
today), so tallies kept by the old code, which missed bulk writes, start out right.

Migrations 0007 and 0008 were rewritten to hold literal SQL too, producing the same schema
and triggers as before, so databases migrated by the old files need nothing but this one.
The SQL here is frozen as of this migration: a later change of the rule comes with a
migration of its own, and a test checks the triggers' tallies against the live recount.
"""

from django.db import migrations

POSTGRESQL_FORWARDS = [
    """
CREATE OR REPLACE FUNCTION review_agreement_retally(trial_ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
IF cardinality(trial_ids) = 0 THEN
    RETURN;
END IF;
INSERT INTO review_judgmenttally (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, -COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id = ANY(trial_ids)
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, -COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id = ANY(trial_ids) AND l.blind_judgment <> ''
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
ON CONFLICT (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_judgmenttally.n + excluded.n;
INSERT INTO review_pairtally (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = ANY(trial_ids) AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = ANY(trial_ids) AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6
ON CONFLICT (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_pairtally.n + excluded.n;
INSERT INTO review_jobjudgmenttally (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, -COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id = ANY(trial_ids)
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT t.job_id, TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, -COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id = ANY(trial_ids) AND l.blind_judgment <> ''
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9
ON CONFLICT (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_jobjudgmenttally.n + excluded.n;
INSERT INTO review_jobpairtally (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = ANY(trial_ids) AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT t.job_id, TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = ANY(trial_ids) AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7
ON CONFLICT (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_jobpairtally.n + excluded.n;
INSERT INTO review_latestjudgment (trial_id, reviewer_id, annotation_id, judgment,
    blind_annotation_id, blind_judgment, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model)
SELECT l.trial_id, l.reviewer_id, l.id, l.judgment, b.id, COALESCE(b.judgment, ''),
    t.judge_verdict, t.scorer_verdict,
    CASE WHEN t.reward >= k.pass_threshold THEN 'PASS' ELSE 'FAIL' END,
    t.failure_mode, k.source, t.judge_model
FROM (
    SELECT trial_id, reviewer_id, id, judgment,
        ROW_NUMBER() OVER (PARTITION BY trial_id, reviewer_id
                           ORDER BY created_at DESC, id DESC) AS newest
    FROM review_annotation WHERE trial_id = ANY(trial_ids)
) l
LEFT JOIN (
    SELECT trial_id, reviewer_id, id, judgment,
        ROW_NUMBER() OVER (PARTITION BY trial_id, reviewer_id
                           ORDER BY created_at DESC, id DESC) AS newest
    FROM review_annotation WHERE trial_id = ANY(trial_ids) AND blind
) b ON b.trial_id = l.trial_id AND b.reviewer_id = l.reviewer_id AND b.newest = 1
JOIN rewards_trial t ON t.id = l.trial_id
JOIN rewards_task k ON k.id = t.task_id
WHERE l.newest = 1
ON CONFLICT (trial_id, reviewer_id) DO UPDATE SET annotation_id = excluded.annotation_id,
    judgment = excluded.judgment, blind_annotation_id = excluded.blind_annotation_id,
    blind_judgment = excluded.blind_judgment, judge_verdict = excluded.judge_verdict,
    scorer_verdict = excluded.scorer_verdict, verifier = excluded.verifier,
    failure_mode = excluded.failure_mode, source = excluded.source,
    judge_model = excluded.judge_model;
INSERT INTO review_judgmenttally (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id = ANY(trial_ids)
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id = ANY(trial_ids) AND l.blind_judgment <> ''
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
ON CONFLICT (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_judgmenttally.n + excluded.n;
INSERT INTO review_pairtally (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = ANY(trial_ids) AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = ANY(trial_ids) AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6
ON CONFLICT (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_pairtally.n + excluded.n;
INSERT INTO review_jobjudgmenttally (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id = ANY(trial_ids)
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT t.job_id, TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id = ANY(trial_ids) AND l.blind_judgment <> ''
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9
ON CONFLICT (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_jobjudgmenttally.n + excluded.n;
INSERT INTO review_jobpairtally (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = ANY(trial_ids) AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT t.job_id, TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = ANY(trial_ids) AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7
ON CONFLICT (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_jobpairtally.n + excluded.n;
END;
$$
""",
    """
CREATE OR REPLACE FUNCTION review_agreement_annotation_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
PERFORM review_agreement_retally(ARRAY(
    SELECT DISTINCT trial_id FROM new_annotations
));
RETURN NULL;
END;
$$
""",
    """
CREATE OR REPLACE FUNCTION review_agreement_trial_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
PERFORM review_agreement_retally(ARRAY(
    SELECT DISTINCT l.trial_id FROM review_latestjudgment l
    JOIN new_trials t ON t.id = l.trial_id JOIN rewards_task k ON k.id = t.task_id
    WHERE (l.judge_verdict <> t.judge_verdict OR l.scorer_verdict <> t.scorer_verdict
        OR l.verifier <> CASE WHEN t.reward >= k.pass_threshold THEN 'PASS' ELSE 'FAIL' END
        OR l.failure_mode <> t.failure_mode OR l.source <> k.source
        OR l.judge_model <> t.judge_model)
));
RETURN NULL;
END;
$$
""",
    """
CREATE OR REPLACE FUNCTION review_agreement_task_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
PERFORM review_agreement_retally(ARRAY(
    SELECT DISTINCT l.trial_id FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id JOIN new_tasks k ON k.id = t.task_id
    WHERE (l.judge_verdict <> t.judge_verdict OR l.scorer_verdict <> t.scorer_verdict
        OR l.verifier <> CASE WHEN t.reward >= k.pass_threshold THEN 'PASS' ELSE 'FAIL' END
        OR l.failure_mode <> t.failure_mode OR l.source <> k.source
        OR l.judge_model <> t.judge_model)
));
RETURN NULL;
END;
$$
""",
    """
CREATE TRIGGER review_agreement_annotation_insert AFTER INSERT ON review_annotation REFERENCING NEW TABLE AS new_annotations
    FOR EACH STATEMENT EXECUTE FUNCTION review_agreement_annotation_insert()
""",
    """
CREATE TRIGGER review_agreement_trial_update AFTER UPDATE ON rewards_trial REFERENCING NEW TABLE AS new_trials
    FOR EACH STATEMENT EXECUTE FUNCTION review_agreement_trial_update()
""",
    """
CREATE TRIGGER review_agreement_task_update AFTER UPDATE ON rewards_task REFERENCING NEW TABLE AS new_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION review_agreement_task_update()
""",
    """
CREATE OR REPLACE FUNCTION review_jobtally_task_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
UPDATE review_jobtally SET verifier_pass = review_jobtally.verifier_pass + s.moved
FROM (
    SELECT t.job_id, t.task_id, t.agent_name, t.model_name, t.failure_mode,
        SUM(CASE WHEN t.reward >= n.pass_threshold THEN 1 ELSE 0 END
            - CASE WHEN t.reward >= o.pass_threshold THEN 1 ELSE 0 END) AS moved
    FROM rewards_trial t
    JOIN new_tasks n ON n.id = t.task_id
    JOIN old_tasks o ON o.id = n.id
    WHERE n.pass_threshold <> o.pass_threshold
    GROUP BY t.job_id, t.task_id, t.agent_name, t.model_name, t.failure_mode
) s
WHERE review_jobtally.job_id = s.job_id AND review_jobtally.task_id = s.task_id
    AND review_jobtally.agent_name = s.agent_name AND review_jobtally.model_name = s.model_name
    AND review_jobtally.failure_mode = s.failure_mode;
RETURN NULL;
END;
$$
""",
    """
CREATE TRIGGER review_jobtally_task_update AFTER UPDATE ON rewards_task
    REFERENCING OLD TABLE AS old_tasks NEW TABLE AS new_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION review_jobtally_task_update()
""",
]
SQLITE_FORWARDS = [
    """
CREATE TRIGGER review_agreement_annotation_insert AFTER INSERT ON review_annotation
BEGIN
INSERT INTO review_judgmenttally (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, -COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id = NEW.trial_id
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, -COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id = NEW.trial_id AND l.blind_judgment <> ''
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
ON CONFLICT (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_judgmenttally.n + excluded.n;
INSERT INTO review_pairtally (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.trial_id AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.trial_id AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6
ON CONFLICT (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_pairtally.n + excluded.n;
INSERT INTO review_jobjudgmenttally (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, -COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id = NEW.trial_id
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT t.job_id, TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, -COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id = NEW.trial_id AND l.blind_judgment <> ''
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9
ON CONFLICT (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_jobjudgmenttally.n + excluded.n;
INSERT INTO review_jobpairtally (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.trial_id AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT t.job_id, TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.trial_id AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7
ON CONFLICT (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_jobpairtally.n + excluded.n;
INSERT INTO review_latestjudgment (trial_id, reviewer_id, annotation_id, judgment,
    blind_annotation_id, blind_judgment, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model)
SELECT l.trial_id, l.reviewer_id, l.id, l.judgment, b.id, COALESCE(b.judgment, ''),
    t.judge_verdict, t.scorer_verdict,
    CASE WHEN t.reward >= k.pass_threshold THEN 'PASS' ELSE 'FAIL' END,
    t.failure_mode, k.source, t.judge_model
FROM (
    SELECT trial_id, reviewer_id, id, judgment,
        ROW_NUMBER() OVER (PARTITION BY trial_id, reviewer_id
                           ORDER BY created_at DESC, id DESC) AS newest
    FROM review_annotation WHERE trial_id = NEW.trial_id
) l
LEFT JOIN (
    SELECT trial_id, reviewer_id, id, judgment,
        ROW_NUMBER() OVER (PARTITION BY trial_id, reviewer_id
                           ORDER BY created_at DESC, id DESC) AS newest
    FROM review_annotation WHERE trial_id = NEW.trial_id AND blind
) b ON b.trial_id = l.trial_id AND b.reviewer_id = l.reviewer_id AND b.newest = 1
JOIN rewards_trial t ON t.id = l.trial_id
JOIN rewards_task k ON k.id = t.task_id
WHERE l.newest = 1
ON CONFLICT (trial_id, reviewer_id) DO UPDATE SET annotation_id = excluded.annotation_id,
    judgment = excluded.judgment, blind_annotation_id = excluded.blind_annotation_id,
    blind_judgment = excluded.blind_judgment, judge_verdict = excluded.judge_verdict,
    scorer_verdict = excluded.scorer_verdict, verifier = excluded.verifier,
    failure_mode = excluded.failure_mode, source = excluded.source,
    judge_model = excluded.judge_model;
INSERT INTO review_judgmenttally (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id = NEW.trial_id
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id = NEW.trial_id AND l.blind_judgment <> ''
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
ON CONFLICT (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_judgmenttally.n + excluded.n;
INSERT INTO review_pairtally (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.trial_id AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.trial_id AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6
ON CONFLICT (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_pairtally.n + excluded.n;
INSERT INTO review_jobjudgmenttally (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id = NEW.trial_id
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT t.job_id, TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id = NEW.trial_id AND l.blind_judgment <> ''
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9
ON CONFLICT (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_jobjudgmenttally.n + excluded.n;
INSERT INTO review_jobpairtally (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.trial_id AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT t.job_id, TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.trial_id AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7
ON CONFLICT (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_jobpairtally.n + excluded.n;
END
""",
    """
CREATE TRIGGER review_agreement_trial_update AFTER UPDATE ON rewards_trial
WHEN EXISTS (
    SELECT 1 FROM review_latestjudgment l JOIN rewards_task k ON k.id = NEW.task_id
    WHERE l.trial_id = NEW.id AND (l.judge_verdict <> NEW.judge_verdict OR l.scorer_verdict <> NEW.scorer_verdict
        OR l.verifier <> CASE WHEN NEW.reward >= k.pass_threshold THEN 'PASS' ELSE 'FAIL' END
        OR l.failure_mode <> NEW.failure_mode OR l.source <> k.source
        OR l.judge_model <> NEW.judge_model)
)
BEGIN
INSERT INTO review_judgmenttally (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, -COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id = NEW.id
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, -COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id = NEW.id AND l.blind_judgment <> ''
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
ON CONFLICT (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_judgmenttally.n + excluded.n;
INSERT INTO review_pairtally (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.id AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.id AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6
ON CONFLICT (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_pairtally.n + excluded.n;
INSERT INTO review_jobjudgmenttally (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, -COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id = NEW.id
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT t.job_id, TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, -COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id = NEW.id AND l.blind_judgment <> ''
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9
ON CONFLICT (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_jobjudgmenttally.n + excluded.n;
INSERT INTO review_jobpairtally (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.id AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT t.job_id, TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.id AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7
ON CONFLICT (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_jobpairtally.n + excluded.n;
INSERT INTO review_latestjudgment (trial_id, reviewer_id, annotation_id, judgment,
    blind_annotation_id, blind_judgment, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model)
SELECT l.trial_id, l.reviewer_id, l.id, l.judgment, b.id, COALESCE(b.judgment, ''),
    t.judge_verdict, t.scorer_verdict,
    CASE WHEN t.reward >= k.pass_threshold THEN 'PASS' ELSE 'FAIL' END,
    t.failure_mode, k.source, t.judge_model
FROM (
    SELECT trial_id, reviewer_id, id, judgment,
        ROW_NUMBER() OVER (PARTITION BY trial_id, reviewer_id
                           ORDER BY created_at DESC, id DESC) AS newest
    FROM review_annotation WHERE trial_id = NEW.id
) l
LEFT JOIN (
    SELECT trial_id, reviewer_id, id, judgment,
        ROW_NUMBER() OVER (PARTITION BY trial_id, reviewer_id
                           ORDER BY created_at DESC, id DESC) AS newest
    FROM review_annotation WHERE trial_id = NEW.id AND blind
) b ON b.trial_id = l.trial_id AND b.reviewer_id = l.reviewer_id AND b.newest = 1
JOIN rewards_trial t ON t.id = l.trial_id
JOIN rewards_task k ON k.id = t.task_id
WHERE l.newest = 1
ON CONFLICT (trial_id, reviewer_id) DO UPDATE SET annotation_id = excluded.annotation_id,
    judgment = excluded.judgment, blind_annotation_id = excluded.blind_annotation_id,
    blind_judgment = excluded.blind_judgment, judge_verdict = excluded.judge_verdict,
    scorer_verdict = excluded.scorer_verdict, verifier = excluded.verifier,
    failure_mode = excluded.failure_mode, source = excluded.source,
    judge_model = excluded.judge_model;
INSERT INTO review_judgmenttally (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id = NEW.id
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id = NEW.id AND l.blind_judgment <> ''
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
ON CONFLICT (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_judgmenttally.n + excluded.n;
INSERT INTO review_pairtally (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.id AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.id AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6
ON CONFLICT (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_pairtally.n + excluded.n;
INSERT INTO review_jobjudgmenttally (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id = NEW.id
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT t.job_id, TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id = NEW.id AND l.blind_judgment <> ''
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9
ON CONFLICT (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_jobjudgmenttally.n + excluded.n;
INSERT INTO review_jobpairtally (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.id AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT t.job_id, TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id = NEW.id AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7
ON CONFLICT (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_jobpairtally.n + excluded.n;
END
""",
    """
CREATE TRIGGER review_agreement_task_update AFTER UPDATE ON rewards_task
WHEN OLD.source <> NEW.source OR OLD.pass_threshold <> NEW.pass_threshold
BEGIN
INSERT INTO review_judgmenttally (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, -COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id)
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, -COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id) AND l.blind_judgment <> ''
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
ON CONFLICT (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_judgmenttally.n + excluded.n;
INSERT INTO review_pairtally (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id) AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id) AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6
ON CONFLICT (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_pairtally.n + excluded.n;
INSERT INTO review_jobjudgmenttally (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, -COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id)
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT t.job_id, TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, -COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id) AND l.blind_judgment <> ''
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9
ON CONFLICT (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_jobjudgmenttally.n + excluded.n;
INSERT INTO review_jobpairtally (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id) AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT t.job_id, TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        -COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id) AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7
ON CONFLICT (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_jobpairtally.n + excluded.n;
INSERT INTO review_latestjudgment (trial_id, reviewer_id, annotation_id, judgment,
    blind_annotation_id, blind_judgment, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model)
SELECT l.trial_id, l.reviewer_id, l.id, l.judgment, b.id, COALESCE(b.judgment, ''),
    t.judge_verdict, t.scorer_verdict,
    CASE WHEN t.reward >= k.pass_threshold THEN 'PASS' ELSE 'FAIL' END,
    t.failure_mode, k.source, t.judge_model
FROM (
    SELECT trial_id, reviewer_id, id, judgment,
        ROW_NUMBER() OVER (PARTITION BY trial_id, reviewer_id
                           ORDER BY created_at DESC, id DESC) AS newest
    FROM review_annotation WHERE trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id)
) l
LEFT JOIN (
    SELECT trial_id, reviewer_id, id, judgment,
        ROW_NUMBER() OVER (PARTITION BY trial_id, reviewer_id
                           ORDER BY created_at DESC, id DESC) AS newest
    FROM review_annotation WHERE trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id) AND blind
) b ON b.trial_id = l.trial_id AND b.reviewer_id = l.reviewer_id AND b.newest = 1
JOIN rewards_trial t ON t.id = l.trial_id
JOIN rewards_task k ON k.id = t.task_id
WHERE l.newest = 1
ON CONFLICT (trial_id, reviewer_id) DO UPDATE SET annotation_id = excluded.annotation_id,
    judgment = excluded.judgment, blind_annotation_id = excluded.blind_annotation_id,
    blind_judgment = excluded.blind_judgment, judge_verdict = excluded.judge_verdict,
    scorer_verdict = excluded.scorer_verdict, verifier = excluded.verifier,
    failure_mode = excluded.failure_mode, source = excluded.source,
    judge_model = excluded.judge_model;
INSERT INTO review_judgmenttally (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id)
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, COUNT(*)
    FROM review_latestjudgment l
    WHERE l.trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id) AND l.blind_judgment <> ''
    GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
ON CONFLICT (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_judgmenttally.n + excluded.n;
INSERT INTO review_pairtally (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id) AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id) AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    WHERE a.raters > 1
    GROUP BY a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6
ON CONFLICT (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_pairtally.n + excluded.n;
INSERT INTO review_jobjudgmenttally (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id)
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
    UNION ALL
    SELECT t.job_id, TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, COUNT(*)
    FROM review_latestjudgment l
    JOIN rewards_trial t ON t.id = l.trial_id
    WHERE l.trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id) AND l.blind_judgment <> ''
    GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9
ON CONFLICT (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment) DO UPDATE SET n = review_jobjudgmenttally.n + excluded.n;
INSERT INTO review_jobpairtally (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters, n)
SELECT * FROM (
    SELECT t.job_id, FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id) AND judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
    UNION ALL
    SELECT t.job_id, TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
        COUNT(*)
    FROM (
        SELECT trial_id, reviewer_id, blind_judgment,
            COUNT(*) OVER (PARTITION BY trial_id) AS raters
        FROM review_latestjudgment
        WHERE trial_id IN (SELECT id FROM rewards_trial WHERE task_id = NEW.id) AND blind_judgment IN ('pass', 'fail')
    ) a
    JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        AND b.blind_judgment IN ('pass', 'fail')
    JOIN rewards_trial t ON t.id = a.trial_id
    WHERE a.raters > 1
    GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
) s WHERE true ORDER BY 1, 2, 3, 4, 5, 6, 7
ON CONFLICT (job_id, blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b, raters) DO UPDATE SET n = review_jobpairtally.n + excluded.n;
END
""",
    """
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
""",
]

POSTGRESQL_BACKWARDS = [
    "DROP TRIGGER IF EXISTS review_agreement_annotation_insert ON review_annotation",
    "DROP TRIGGER IF EXISTS review_agreement_trial_update ON rewards_trial",
    "DROP TRIGGER IF EXISTS review_agreement_task_update ON rewards_task",
    "DROP FUNCTION IF EXISTS review_agreement_annotation_insert()",
    "DROP FUNCTION IF EXISTS review_agreement_trial_update()",
    "DROP FUNCTION IF EXISTS review_agreement_task_update()",
    "DROP FUNCTION IF EXISTS review_agreement_retally(bigint[])",
    "DROP TRIGGER IF EXISTS review_jobtally_task_update ON rewards_task",
    "DROP FUNCTION IF EXISTS review_jobtally_task_update()",
]
SQLITE_BACKWARDS = [
    "DROP TRIGGER IF EXISTS review_agreement_annotation_insert",
    "DROP TRIGGER IF EXISTS review_agreement_trial_update",
    "DROP TRIGGER IF EXISTS review_agreement_task_update",
    "DROP TRIGGER IF EXISTS review_jobtally_task_update",
]

# The recount: the same for both vendors (window functions).
RECOUNT = [
    "DELETE FROM review_jobpairtally",
    "DELETE FROM review_jobjudgmenttally",
    "DELETE FROM review_pairtally",
    "DELETE FROM review_judgmenttally",
    "DELETE FROM review_latestjudgment",
    """
INSERT INTO review_latestjudgment (trial_id, reviewer_id, annotation_id, judgment,
    blind_annotation_id, blind_judgment, judge_verdict, scorer_verdict, verifier,
    failure_mode, source, judge_model)
SELECT l.trial_id, l.reviewer_id, l.id, l.judgment, b.id, COALESCE(b.judgment, ''),
    t.judge_verdict, t.scorer_verdict,
    CASE WHEN t.reward >= k.pass_threshold THEN 'PASS' ELSE 'FAIL' END,
    t.failure_mode, k.source, t.judge_model
FROM (
    SELECT trial_id, reviewer_id, id, judgment,
        ROW_NUMBER() OVER (PARTITION BY trial_id, reviewer_id
                           ORDER BY created_at DESC, id DESC) AS newest
    FROM review_annotation
) l
LEFT JOIN (
    SELECT trial_id, reviewer_id, id, judgment,
        ROW_NUMBER() OVER (PARTITION BY trial_id, reviewer_id
                           ORDER BY created_at DESC, id DESC) AS newest
    FROM review_annotation WHERE blind
) b ON b.trial_id = l.trial_id AND b.reviewer_id = l.reviewer_id AND b.newest = 1
JOIN rewards_trial t ON t.id = l.trial_id
JOIN rewards_task k ON k.id = t.task_id
WHERE l.newest = 1
""",
    """
INSERT INTO review_judgmenttally (blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, COUNT(*) FROM review_latestjudgment l
GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
UNION ALL
SELECT TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, COUNT(*) FROM review_latestjudgment l
WHERE l.blind_judgment <> ''
GROUP BY l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
""",
    """
INSERT INTO review_pairtally (blind, reviewer_a_id, reviewer_b_id,
    judgment_a, judgment_b, raters, n)

SELECT FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters, COUNT(*)
FROM (
    SELECT trial_id, reviewer_id, judgment,
        COUNT(*) OVER (PARTITION BY trial_id) AS raters
    FROM review_latestjudgment WHERE judgment IN ('pass', 'fail')
) a
JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
    AND b.judgment IN ('pass', 'fail')
WHERE a.raters > 1
GROUP BY a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters

UNION ALL

SELECT TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters, COUNT(*)
FROM (
    SELECT trial_id, reviewer_id, blind_judgment,
        COUNT(*) OVER (PARTITION BY trial_id) AS raters
    FROM review_latestjudgment WHERE blind_judgment IN ('pass', 'fail')
) a
JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
    AND b.blind_judgment IN ('pass', 'fail')
WHERE a.raters > 1
GROUP BY a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters

""",
    """
INSERT INTO review_jobjudgmenttally (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT t.job_id, FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, COUNT(*) FROM review_latestjudgment l JOIN rewards_trial t ON t.id = l.trial_id
GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
UNION ALL
SELECT t.job_id, TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, COUNT(*) FROM review_latestjudgment l JOIN rewards_trial t ON t.id = l.trial_id
WHERE l.blind_judgment <> ''
GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
""",
    """
INSERT INTO review_jobpairtally (job_id, blind, reviewer_a_id, reviewer_b_id,
    judgment_a, judgment_b, raters, n)

SELECT t.job_id, FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters, COUNT(*)
FROM (
    SELECT trial_id, reviewer_id, judgment,
        COUNT(*) OVER (PARTITION BY trial_id) AS raters
    FROM review_latestjudgment WHERE judgment IN ('pass', 'fail')
) a
JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
    AND b.judgment IN ('pass', 'fail') JOIN rewards_trial t ON t.id = a.trial_id
WHERE a.raters > 1
GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters

UNION ALL

SELECT t.job_id, TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters, COUNT(*)
FROM (
    SELECT trial_id, reviewer_id, blind_judgment,
        COUNT(*) OVER (PARTITION BY trial_id) AS raters
    FROM review_latestjudgment WHERE blind_judgment IN ('pass', 'fail')
) a
JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
    AND b.blind_judgment IN ('pass', 'fail') JOIN rewards_trial t ON t.id = a.trial_id
WHERE a.raters > 1
GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters

""",
]


def _run(schema_editor, statements):
    with schema_editor.connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def forwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    triggers = {"postgresql": POSTGRESQL_FORWARDS, "sqlite": SQLITE_FORWARDS}
    _run(schema_editor, triggers.get(vendor, []))
    _run(schema_editor, RECOUNT)


def backwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    triggers = {"postgresql": POSTGRESQL_BACKWARDS, "sqlite": SQLITE_BACKWARDS}
    _run(schema_editor, triggers.get(vendor, []))


class Migration(migrations.Migration):

    dependencies = [
        ("review", "0008_job_tallies"),
        ("rewards", "0011_fewer_indexes"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards, elidable=False),
    ]
