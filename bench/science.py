"""The review-science pages timed against the same bare 50-row page as the explorer.

    DATABASE_URL=postgres://… .venv/bin/python bench/science.py [--trials 1000000]

(`bench/run.py science` runs the same figures.) It seeds demo trials like `bench/run.py
explorer`. The fast (COPY) seed path writes no annotations, so `ensure_annotations` adds
them in SQL first, once: a quarter of the trials judged by one reviewer, an eighth (all of
them also among the first reviewer's) by a second, a third of each reviewer's judgments
blind, and every fortieth trial judged twice by the first reviewer (an earlier judgment it
changed its mind about). The trials' human summary columns are brought up to date the way
the review app keeps them; the latest judgments, agreement's tallies and the job tallies
follow the annotations and trials by themselves (database triggers), SQL written around the
application included.

Each page is sampled alternately with the bare page (`bench.run.compare`). "Intervals
remembered" keeps the bootstrap's intervals in the cache, as repeated views of the same
counts find them (every process reads the intervals of the counts any process has seen).
"First view after a new annotation" has a reviewer judge one more trial before each request
(untimed, rolled back at the end), so the page's matrices that hold it have new counts and
new intervals (and the report's kept HTML another key). "Nothing kept" empties the cache
before each request (the bench's own, in memory): every interval computed and every
fragment rendered, as on the first view of counts no process has seen; shown, without a
budget.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.run import Figure, compare, ensure_trials, logged_in_client, say, setup_django, table

BENCH_REVIEWERS = ("bench-rita", "bench-sam")
BUDGET = "<= 3"

# (reviewer index, which trials, a spread of 0-99 per trial, minutes after the trial started,
# the spread below which the judgment is noise). `%%` is SQL's modulo: the statements run
# with parameters.
# Judgments follow the verifier outcome, except a noisy share that says the opposite and a
# few defers; a third of them (spread divisible by 3) are blind.
_JUDGED = (
    (0, "t.id %% 4 = 0", "(t.id * 7919) %% 100", 60, 15),
    (1, "t.id %% 8 = 0", "(t.id * 104729) %% 100", 120, 25),
)
_ANNOTATE = """
INSERT INTO review_annotation (trial_id, reviewer_id, reviewer_discipline, created_at,
    judgment, categories, notes, reward_seen, judge_verdict_seen, blind)
SELECT t.id, %s, '', {created}, {judgment}, '[]', '',
    CASE WHEN {spread} %% 3 = 0 THEN NULL ELSE t.reward END,
    CASE WHEN {spread} %% 3 = 0 THEN '' ELSE t.judge_verdict END,
    {spread} %% 3 = 0
FROM rewards_trial t JOIN rewards_task k ON k.id = t.task_id
WHERE {which}
"""
_HUMAN_SUMMARY = """
UPDATE rewards_trial SET annotation_count = s.n, human_judgment = s.consensus,
    human_disagreement = CASE
        WHEN s.consensus = 'pass' AND rewards_trial.reward < s.threshold
            THEN 'human_pass_automated_fail'
        WHEN s.consensus = 'fail' AND rewards_trial.reward >= s.threshold
            THEN 'human_fail_automated_pass'
        ELSE '' END
FROM (
    SELECT l.trial_id, MAX(l.n) AS n, MAX(k.pass_threshold) AS threshold,
        CASE COUNT(DISTINCT CASE WHEN l.judgment <> 'defer' THEN l.judgment END)
            WHEN 0 THEN 'defer'
            WHEN 1 THEN MAX(CASE WHEN l.judgment <> 'defer' THEN l.judgment END)
            ELSE 'mixed' END AS consensus
    FROM (
        SELECT a.trial_id, a.judgment,
            ROW_NUMBER() OVER (PARTITION BY a.trial_id, a.reviewer_id
                               ORDER BY a.created_at DESC, a.id DESC) AS position,
            COUNT(*) OVER (PARTITION BY a.trial_id) AS n
        FROM review_annotation a
    ) l
    JOIN rewards_trial t ON t.id = l.trial_id JOIN rewards_task k ON k.id = t.task_id
    WHERE l.position = 1
    GROUP BY l.trial_id
) s
WHERE rewards_trial.id = s.trial_id
"""


def _created(minutes: str) -> str:
    from django.db import connection

    start = "COALESCE(t.started_at, CURRENT_TIMESTAMP)"
    if connection.vendor == "postgresql":
        return f"{start} + ({minutes}) * INTERVAL '1 minute'"
    return f"strftime('%%Y-%%m-%%d %%H:%%M:%%f', {start}, '+' || ({minutes}) || ' minutes')"


def ensure_annotations() -> int:
    """Judge the trials as the module docstring says, unless already done; the total."""
    from django.contrib.auth.models import Group, User
    from django.db import connection, transaction

    from review.models import Annotation

    group, _ = Group.objects.get_or_create(name="reviewer")
    users = []
    for name in BENCH_REVIEWERS:
        user, _ = User.objects.get_or_create(username=name)
        user.groups.add(group)
        users.append(user)
    if Annotation.objects.filter(reviewer__in=users).exists():
        return Annotation.objects.count()
    say("  adding annotations")
    passed = "t.reward >= k.pass_threshold"
    with transaction.atomic(), connection.cursor() as cursor:
        for index, which, spread, minutes, flip in _JUDGED:
            agrees = f"CASE WHEN {passed} THEN 'pass' ELSE 'fail' END"
            differs = f"CASE WHEN {passed} THEN 'fail' ELSE 'pass' END"
            judgment = (
                f"CASE WHEN {spread} < 3 THEN 'defer' WHEN {spread} < {flip} THEN {differs}"
                f" ELSE {agrees} END"
            )
            cursor.execute(
                _ANNOTATE.format(
                    created=_created(str(minutes)), judgment=judgment, spread=spread, which=which
                ),
                [users[index].pk],
            )
            if index == 0:
                # An earlier judgment on every fortieth trial, the opposite of the later one.
                earlier = (
                    f"CASE WHEN {spread} < 3 OR {spread} >= {flip} THEN {differs} ELSE {agrees} END"
                )
                cursor.execute(
                    _ANNOTATE.format(
                        created=_created(str(minutes - 30)),
                        judgment=earlier,
                        spread=spread,
                        which="t.id %% 40 = 0",
                    ),
                    [users[index].pk],
                )
        cursor.execute(_HUMAN_SUMMARY)
    return Annotation.objects.count()


def bench_science(trials: int, repeat: int) -> list[Figure]:
    from django.core.cache import cache
    from django.db import connection, transaction
    from django.db.models import Count

    from rewards.models import Job

    say(f"science: {trials:,} trials on {connection.vendor}")
    ensure_trials(trials)
    annotations = ensure_annotations()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    client = logged_in_client()
    (a_id, a_n), (b_id, b_n) = (
        Job.objects.annotate(n=Count("trials")).order_by("-n", "id").values_list("id", "n")[:2]
    )
    a, b = Job.objects.get(pk=a_id), Job.objects.get(pk=b_id)
    say(f"  {annotations:,} annotations; jobs of {a_n:,} and {b_n:,} trials")

    def get(url: str, fresh: bool = False) -> Callable[[], object]:
        def fetch() -> object:
            if fresh:
                # Nothing kept: no interval, no fragment, no role (the bench's own cache).
                cache.clear()
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            return response

        return fetch

    bare = get("/bench/bare-50/")
    remembered, fresh = "intervals remembered", "nothing kept"
    budgeted = [
        (f"agreement, whole database, {remembered}", "/agreement/"),
        (f"agreement by judge model, {remembered}", "/agreement/?by=judge_model"),
        (f"agreement, blind only, {remembered}", "/agreement/?counted=blind"),
        (f"agreement of one job, {remembered}", f"/agreement/?job={a.pk}"),
        (f"compare two jobs, {remembered}", f"/compare/?a={a.pk}&b={b.pk}"),
        ("job page with plots", f"/jobs/{a.pk}/"),
        ("explorer, a reviewer's latest is fail", "/?reviewer_judgment=fail"),
        ("explorer, a pair's cell", pair_cell_url()),
    ]
    figures = [
        compare(f"{name} / bare page", get(url), bare, BUDGET, repeat) for name, url in budgeted
    ]
    # The usual first view: a reviewer has just judged a trial, so the page's counts that
    # trial is in changed and their intervals are new; the others are remembered.
    judge = one_new_annotation_each_time(a.pk)
    with transaction.atomic():
        for name, url in [
            ("agreement, whole database, first view after a new annotation", "/agreement/"),
            ("agreement of one job, first view after a new annotation", f"/agreement/?job={a.pk}"),
        ]:
            figures.append(
                compare(f"{name} / bare page", get(url), bare, BUDGET, repeat, before=judge)
            )
        transaction.set_rollback(True)  # the benchmark's annotations are not kept
    # Counts no process has seen yet (the cache holds nothing of them): every interval of
    # the page computed, every fragment rendered. Shown, not budgeted: a first view.
    figures += [
        compare(f"{name}, {fresh} / bare page", get(url, fresh=True), bare, "", repeat)
        for name, url in [
            ("agreement, whole database", "/agreement/"),
            ("agreement of one job", f"/agreement/?job={a.pk}"),
            ("compare two jobs", f"/compare/?a={a.pk}&b={b.pk}"),
        ]
    ]
    return figures


def one_new_annotation_each_time(job: int) -> Callable[[], None]:
    """Each call: the first benchmark reviewer judges one more trial of `job` it had not
    judged (the newest first, alternately pass and fail), through the review app, which
    updates the tallies as a reviewer's annotation does."""
    from django.contrib.auth.models import User

    from review.models import add_annotation
    from rewards.models import Trial

    reviewer = User.objects.get(username=BENCH_REVIEWERS[0])
    # The first reviewer judged the trials whose id is a multiple of 4: these it did not.
    unjudged = iter(
        Trial.objects.filter(job_id=job)
        .exclude(annotations__reviewer=reviewer)
        .order_by("-id")
        .values_list("id", flat=True)[:1000]
    )
    count = 0

    def judge() -> None:
        nonlocal count
        count += 1
        add_annotation(
            trial_id=next(unjudged),
            reviewer=reviewer,
            judgment="pass" if count % 2 else "fail",
            categories=[],
            notes="",
            reviewer_discipline="",
        )

    return judge


def pair_cell_url() -> str:
    """The explorer link of the benchmark reviewers' "both fail" cell."""
    from django.http import QueryDict

    from review.filtering.form import TrialFilterForm
    from review.science.agreement import report

    pairs = report(TrialFilterForm(QueryDict())).reviewers.pairs
    return pairs[0].matrix.urls[1][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=None, help="trials in the database")
    parser.add_argument("--repeat", type=int, default=7, help="samples per page timing")
    args = parser.parse_args()
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    trials = args.trials or (1_000_000 if connection.vendor == "postgresql" else 20_000)
    figures = bench_science(trials, args.repeat)
    print(table(figures))
    sys.exit(0 if all(f.ok is not False for f in figures) else 1)


if __name__ == "__main__":
    main()
