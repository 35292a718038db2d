"""The pages' reads are plain ORM queries: the trial page's lists in one query each, the
explorer's keyset page as one row comparison on the sort's index, new rows seen at once."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.http import QueryDict
from django.test import Client

from review import adjudication
from review.adjudication import adjudicate
from review.filtering.form import TrialFilterForm
from review.models import Annotation, add_annotation
from review.pages.trial_list import ROWS
from review.views.trial import (
    annotation_history,
    error_tags_of,
    results_of,
    scorers_of,
    verdicts_of,
)
from rewards.models import Job, Trial
from rewards.schemas import ErrorTag as ErrorTagRecord
from tests import review_factories as f

pytestmark = pytest.mark.django_db


# --- the trial page's lists ------------------------------------------------------------------
def test_the_trial_pages_lists_come_in_their_order_in_one_query_each(
    django_assert_num_queries: Callable[..., Any],
) -> None:
    unscored = f.judge("FAIL", scored_at=None, fact_checks=[("claim", "supported", "e")])
    later = f.judge("PASS", scored_at=f.START + timedelta(hours=1))
    trial: Trial = f.make_trial(
        scorers=[f.scorer(f"s{i}", verdict="FAIL" if i % 2 else "PASS") for i in range(4)],
        judges=[f.judge("PASS"), unscored, later],
        error_tags=[ErrorTagRecord(category=f"c{i}", source="mechanical") for i in range(3)],
        earlier_rewards=[0.1, 0.2],
    )
    with django_assert_num_queries(1):
        results = results_of(trial.pk)
    assert [r.is_current for r in results] == [True, False, False]
    assert [r.created_at for r in results[1:]] == sorted(
        (r.created_at for r in results[1:]), reverse=True
    )
    # The raw artifacts (the files verbatim) are not read with the list.
    assert all("raw_artifacts" in r.get_deferred_fields() for r in results)
    with django_assert_num_queries(1):
        scorers = scorers_of(trial.pk)
    assert [s.name for s in scorers] == ["s0", "s1", "s2", "s3"]
    assert isinstance(scorers[0].required, bool)
    with django_assert_num_queries(1):
        verdicts = verdicts_of(trial.pk)
    # The latest first; the verdict without a scoring time last; JSON decoded.
    assert verdicts[0].scored_at == later.scored_at
    assert verdicts[-1].scored_at is None
    assert isinstance(verdicts[-1].fact_checks, list)
    with django_assert_num_queries(1):
        tags = error_tags_of(trial.pk)
    assert [t.category for t in tags] == ["c0", "c1", "c2"]


def test_another_trials_rows_are_never_read() -> None:
    one, other = f.make_trial(scorers=[f.scorer("a")]), f.make_trial(scorers=[f.scorer("b")])
    assert [s.name for s in scorers_of(one.pk)] == ["a"]
    assert [s.name for s in scorers_of(other.pk)] == ["b"]
    assert scorers_of(10**9) == []


def test_annotations_and_adjudications_come_with_their_authors_in_one_query_each(
    django_assert_num_queries: Callable[..., Any],
) -> None:
    trial = f.make_trial()
    rita = f.make_user("rita", "reviewer")
    sam = f.make_user("sam", "reviewer")
    judge = f.make_user("ada", "adjudicator")
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass")
    add_annotation(trial_id=trial.pk, reviewer=sam, judgment="fail")
    adjudicate(trial_id=trial.pk, adjudicator=judge, verdict="pass", rationale="the tests pass")

    with django_assert_num_queries(1):
        annotations = annotation_history(trial.pk)
        names = [a.reviewer.get_username() for a in annotations]
    history = list(Annotation.objects.for_trial(trial).history())
    assert [a.pk for a in annotations] == [a.pk for a in history]
    assert names == ["rita", "sam"]

    with django_assert_num_queries(1):
        (verdict,) = adjudication.verdicts(trial, annotations)
        assert verdict.adjudication.adjudicator.get_username() == "ada"
    assert [a.pk for a in verdict.settled] == [a.pk for a in annotations]


def test_an_unknown_trial_is_not_found(client: Client) -> None:
    trial = f.make_trial()
    f.login(client, "rita", "reviewer")
    assert client.get(f"/trials/{trial.pk}/").status_code == 200
    assert client.get(f"/trials/{trial.pk + 1000}/").status_code == 404
    assert client.get(f"/trials/{trial.pk + 1000}/?sort=-reward&tab=diff").status_code == 404


# --- the explorer's keyset page --------------------------------------------------------------
def _page_query(query: str) -> Any:
    """The queryset of the explorer's page for `query` (a cursor in it), as the page runs."""
    from review.filtering.paging import SORT_KEYS, decode_cursor, first_rows_query

    form = TrialFilterForm(QueryDict(query))
    sort = form.current_sort
    cursor = form._value("after")
    after = decode_cursor(cursor, sort) if cursor else None
    key = SORT_KEYS[sort.lstrip("-")]
    assert key.field != "id"
    rows = form.filter(ROWS.all())
    if key.nullable:  # the segment of rows with a value, as `first_rows` reads it
        rows = rows.filter(**{f"{key.field}__isnull": False})
    return first_rows_query(rows, sort, after, 51)


@pytest.mark.parametrize("sort", ["reward", "-reward", "agent", "-model", "-started", "started"])
def test_a_page_after_a_cursor_is_one_row_comparison(sort: str) -> None:
    f.make_trials(4)
    first = TrialFilterForm(QueryDict(f"sort={sort}")).page(ROWS.all(), size=2)
    assert first.next_cursor
    sql = str(_page_query(f"sort={sort}&after={first.next_cursor}").query)
    operator = "<" if sort.startswith("-") else ">"
    # (sort value, id) against the cursor's: no OR of column comparisons.
    assert f'."id") {operator} (' in sql
    assert " OR " not in sql


@pytest.mark.parametrize(
    ("sort", "index"),
    [
        ("reward", "trial_reward_id_idx"),
        ("-reward", "trial_reward_id_idx"),
        ("agent", "trial_agent_id_idx"),
        ("-model", "trial_model_id_idx"),
        # "Newest", the default: when the trial ran.
        ("-started", "trial_started_id_idx"),
        ("started", "trial_started_id_idx"),
        ("", "trial_started_id_idx"),
    ],
)
def test_the_row_comparison_starts_the_sort_index_at_the_cursor(sort: str, index: str) -> None:
    f.make_trials(3)
    first = TrialFilterForm(QueryDict(f"sort={sort}")).page(ROWS.all(), size=1)
    assert first.next_cursor
    rows = _page_query(f"sort={sort}&after={first.next_cursor}")
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            plan = "\n".join(str(row[-1]) for row in cursor.fetchall())
            assert index in plan
            return
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(line for (line,) in cursor.fetchall())
    assert index in plan
    assert "ROW(" in plan  # the index condition is the row comparison itself


def test_the_explorer_reads_new_trials_and_a_job_that_appears(client: Client) -> None:
    f.make_trials(2, job="j-late-a")
    missing = max(Job.objects.values_list("id", flat=True)) + 1000
    f.login(client, "rita", "reviewer")

    def rows(query: str) -> list[int]:
        form = TrialFilterForm(QueryDict(query))
        return [row["id"] for row in form.page(ROWS.all(), size=3).rows]

    # A job not there yet: the field is in error and filters nothing...
    assert len(rows(f"job={missing}")) == 2
    # ...and once it exists, the same URL filters by it.
    Job.objects.create(pk=missing, name="j-late-b")
    created = f.make_trial(job="j-late-b")
    assert rows(f"job={missing}") == [created.pk]
    later = f.make_trial(job="j-late-b")
    assert rows(f"job={missing}") == [later.pk, created.pk]
    assert client.get(f"/?job={missing}").status_code == 200


@pytest.mark.parametrize("cursor", [False, True])
def test_the_trials_without_a_start_are_read_by_their_own_partial_index(cursor: bool) -> None:
    from review.filtering.paging import first_rows_query

    for trial in f.make_trials(4):
        Trial.objects.filter(pk=trial.pk).update(started_at=None)
    rows = TrialFilterForm(QueryDict("")).filter(ROWS.all()).filter(started_at__isnull=True)
    after = (
        (None, Trial.objects.order_by("-id").values_list("id", flat=True)[1]) if cursor else None
    )
    sql, params = first_rows_query(rows, "-id", after, 51).query.sql_with_params()
    with connection.cursor() as db:
        if connection.vendor != "postgresql":
            # SQLite reads `started_at IS NULL` as an equality: the (started_at, id) index
            # gives those rows in id order as well.
            db.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            plan = "\n".join(str(row[-1]) for row in db.fetchall())
            assert "trial_unstarted_idx" in plan or "trial_started_id_idx (started_at=?" in plan
            assert "TEMP B-TREE" not in plan  # no sort
            return
        db.execute("SET LOCAL enable_seqscan = off")
        db.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(line for (line,) in db.fetchall())
    assert "trial_unstarted_idx" in plan
    assert "Sort" not in plan


@pytest.mark.parametrize("query", ["reviewer_judgment=fail", "judged=rita:fail&judged=sam:fail"])
def test_reviewer_filters_walk_only_the_reviewed_trials_newest_first(query: str) -> None:
    """Newest run first, the reviewers' filters read the reviewed trials' own index in the
    sort's order (each probed in the latest judgments), not every trial's."""
    from review.filtering.paging import first_rows_query

    rita, sam = f.make_user("rita", "reviewer"), f.make_user("sam", "reviewer")
    trials = f.make_trials(6)
    unstarted = trials[0]
    Trial.objects.filter(pk=unstarted.pk).update(started_at=None)
    for trial in trials[:4]:
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment="fail")
        add_annotation(trial_id=trial.pk, reviewer=sam, judgment="fail")
    started = sorted(trials[1:4], key=lambda t: (t.started_at, t.pk), reverse=True)
    form = TrialFilterForm(QueryDict(query))
    # Newest run first, then the trial without a start; and the other way round.
    assert [row["id"] for row in form.page(ROWS.all()).rows] == [
        *(t.pk for t in started),
        unstarted.pk,
    ]
    oldest_first = TrialFilterForm(QueryDict(f"{query}&sort=started"))
    assert [row["id"] for row in oldest_first.page(ROWS.all()).rows] == [
        unstarted.pk,
        *(t.pk for t in reversed(started)),
    ]
    # Under another sort, the filter is the filter: its index is the sort's.
    by_job = TrialFilterForm(QueryDict(f"{query}&sort=-job")).listed(ROWS.all())
    assert "annotation_count" not in str(by_job.query)
    assert "annotation_count" in str(form.listed(ROWS.all()).query)
    rows = form.listed(ROWS.all()).filter(started_at__isnull=False)
    sql, params = first_rows_query(rows, "-started", None, 51).query.sql_with_params()
    with connection.cursor() as db:
        if connection.vendor != "postgresql":
            # SQLite, knowing nothing of the tables' sizes, starts from the latest judgments
            # and looks the trials up by their key: it does not scan every trial either.
            db.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            plan = "\n".join(str(row[-1]) for row in db.fetchall())
            assert "SCAN rewards_trial" not in plan, plan
            return
        # A handful of test rows are cheaper sorted than walked: asked to walk an index in
        # the sort's order, as at a million trials, the planner takes the reviewed trials'.
        db.execute("SET LOCAL enable_seqscan = off")
        db.execute("SET LOCAL enable_sort = off")
        db.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(line for (line,) in db.fetchall())
    assert "Index Scan Backward using trial_reviewed_started_idx" in plan, plan
