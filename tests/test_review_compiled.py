"""Queries compiled once (review.compiled.ByTrial) give what the ORM gives, query for query."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from review.adjudication import _ADJUDICATIONS, adjudicate
from review.compiled import ByTrial, model_rows
from review.models import Annotation, add_annotation
from review.views.trial import _ANNOTATIONS, _ERROR_TAGS, _RESULTS, _SCORERS, _VERDICTS
from rewards.models import ErrorTag, EvaluationResult, Job, JudgeVerdict, ScorerResult, Trial
from rewards.schemas import ErrorTag as ErrorTagRecord
from tests import review_factories as f
from tests.conftest import RecordCalls

pytestmark = pytest.mark.django_db


def _fields(row: Any, model: Any, leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        field.attname: getattr(row, field.attname)
        for field in model._meta.concrete_fields
        if field.name not in leave_out
    }


def test_the_trial_pages_lists_match_the_orm_in_one_query_each(
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
    expected: dict[str, list[Any]] = {
        "results": list(
            EvaluationResult.objects.filter(trial=trial)
            .defer("raw_artifacts")
            .order_by("-is_current", "-created_at", "-id")
        ),
        "scorers": list(ScorerResult.objects.filter(trial=trial).order_by("position")),
        "verdicts": list(
            JudgeVerdict.objects.filter(trial=trial).order_by(*JudgeVerdict.LATEST_FIRST)
        ),
        "tags": list(ErrorTag.objects.filter(trial=trial).order_by("id")),
    }
    lists: dict[str, ByTrial[Any]] = {
        "results": _RESULTS,
        "scorers": _SCORERS,
        "verdicts": _VERDICTS,
        "tags": _ERROR_TAGS,
    }
    for name, rows in lists.items():
        with django_assert_num_queries(1):
            got = rows(trial.pk)
        want = expected[name]
        assert [row.pk for row in got] == [row.pk for row in want], name
        model = type(want[0])
        leave_out = ("raw_artifacts",) if name == "results" else ()
        assert [_fields(row, model, leave_out) for row in got] == [
            _fields(row, model, leave_out) for row in want
        ], name
    # The verdict without a scoring time comes last (NULLS LAST), JSON comes back decoded.
    verdicts = _VERDICTS(trial.pk)
    assert verdicts[-1].scored_at is None
    assert isinstance(verdicts[-1].fact_checks, list)
    assert isinstance(_SCORERS(trial.pk)[0].required, bool)


def test_another_trials_rows_are_never_read() -> None:
    one, other = f.make_trial(scorers=[f.scorer("a")]), f.make_trial(scorers=[f.scorer("b")])
    assert [s.name for s in _SCORERS(one.pk)] == ["a"]
    assert [s.name for s in _SCORERS(other.pk)] == ["b"]
    assert _SCORERS(10**9) == []


def test_a_querys_own_parameters_are_kept_and_the_trial_id_taken_each_time() -> None:
    one = f.make_trial(scorers=[f.scorer("x"), f.scorer("y")])
    other = f.make_trial(scorers=[f.scorer("x")])
    named_x = ByTrial(lambda pk: ScorerResult.objects.filter(trial_id=pk, name="x"))
    assert [(s.trial_id, s.name) for s in named_x(one.pk)] == [(one.pk, "x")]
    assert [(s.trial_id, s.name) for s in named_x(other.pk)] == [(other.pk, "x")]
    # A query that takes the trial twice cannot be kept: which place is the trial's?
    twice = ByTrial(lambda pk: ScorerResult.objects.filter(trial_id=pk, trial__job__trials=pk))
    with pytest.raises(ValueError, match="exactly once"):
        twice(one.pk)


def test_annotations_and_adjudications_come_with_their_authors_in_one_query_each(
    django_assert_num_queries: Callable[..., Any],
) -> None:
    trial = f.make_trial()
    rita = f.make_user("rita", "reviewer")
    sam = f.make_user("sam", "reviewer")
    judge = f.make_user("ada", "adjudicator")
    judge.email = "ada@example.org"
    judge.save()
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass")
    add_annotation(trial_id=trial.pk, reviewer=sam, judgment="fail")
    adjudicate(trial_id=trial.pk, adjudicator=judge, verdict="pass", rationale="the tests pass")

    with django_assert_num_queries(1):
        annotations = _ANNOTATIONS(trial.pk)
        names = [a.reviewer.get_username() for a in annotations]
    history = list(Annotation.objects.for_trial(trial).history())
    assert [a.pk for a in annotations] == [a.pk for a in history]
    assert names == [a.reviewer.get_username() for a in history] == ["rita", "sam"]
    assert [_fields(a, Annotation) for a in annotations] == [
        _fields(a, Annotation) for a in history
    ]

    with django_assert_num_queries(1):
        (made,) = _ADJUDICATIONS(trial.pk)
        assert made.adjudicator.get_username() == "ada"
    # The user's other fields were not read with it: asking for one reads it, rightly.
    with django_assert_num_queries(1):
        assert made.adjudicator.email == "ada@example.org"


# --- the explorer's rows, their SQL kept per filter (review.compiled.value_rows) -----------
def _explorer_page(query: str) -> tuple[list[Any], list[Any]]:
    """The explorer's rows for `query` with the SQL kept, and as the ORM builds them anew."""
    from django.http import QueryDict

    from review.filters import TrialFilterForm
    from review.views.explorer import ROWS

    kept = TrialFilterForm(QueryDict(query)).page(ROWS.all(), size=3, remember_as="explorer")
    fresh = TrialFilterForm(QueryDict(query)).page(ROWS.all(), size=3)
    return kept.rows, fresh.rows


def test_a_filters_sql_kept_gives_the_rows_the_orm_gives() -> None:
    from review.compiled import forget_value_rows

    forget_value_rows()
    trials = [
        f.make_trial(
            job="j-a" if i % 2 else "j-b",
            reward=i / 10,
            scorers=[f.scorer(verdict="FAIL" if i % 3 else "PASS")],
            judges=[f.judge("PASS" if i % 2 else "FAIL")],
            task_source="" if i % 4 else "electrical",
            output_parseable=bool(i % 5),
        )
        for i in range(9)
    ]
    add_annotation(trial_id=trials[2].pk, reviewer=f.make_user("rita", "reviewer"), judgment="fail")
    job = trials[1].job_id
    queries = [
        "",
        f"job={job}",
        f"job={job}&sort=reward",
        "reward_min=0.2&reward_max=0.7&sort=-reward",
        "validity=invalid",
        "disagreement=gate",
        "human_judgment=unreviewed",
        "judged=rita:fail",
        "reviewed_by=2100-01-01",
        "source=(none)&outcome=pass",
        "sort=agent",
    ]
    for query in queries:
        for _ in range(2):  # compiled, then kept
            kept, fresh = _explorer_page(query)
            assert kept == fresh, query
    # Every value typed as the ORM types it (SQLite's 0/1 become booleans).
    assert {type(row["is_valid"]) for row in _explorer_page("")[0]} == {bool}
    # Page two, after the cursor of page one, with the kept SQL.
    from django.http import QueryDict

    from review.filters import TrialFilterForm
    from review.views.explorer import ROWS

    first = TrialFilterForm(QueryDict("sort=reward")).page(ROWS.all(), 3, remember_as="explorer")
    assert first.next_cursor
    second_query = f"sort=reward&after={first.next_cursor}"
    kept, fresh = _explorer_page(second_query)
    assert kept == fresh
    assert [r["id"] for r in kept] != [r["id"] for r in first.rows]


def test_kept_sql_is_run_afresh_each_time_and_compiled_once(
    record_calls: RecordCalls, django_assert_num_queries: Callable[..., Any]
) -> None:
    from review import compiled

    compiled.forget_value_rows()
    f.make_trials(2, job="j-kept")
    compiles = record_calls(compiled, "_compile_rows")
    job = Trial.objects.values_list("job_id", flat=True).first()
    assert len(_explorer_page(f"job={job}")[0]) == 2
    f.make_trials(1, job="j-kept")  # new rows: the kept SQL finds them
    with django_assert_num_queries(1):
        from django.http import QueryDict

        from review.filters import TrialFilterForm
        from review.views.explorer import ROWS

        form = TrialFilterForm(QueryDict(f"job={job}"))
        assert form.is_valid()  # the job (cached among the newest) costs no query
        rows = form.page(ROWS.all(), size=3, remember_as="explorer").rows
    assert len(rows) == 3
    assert len(compiles) == 1


def test_a_form_in_error_a_search_or_a_name_sort_is_never_kept() -> None:
    from review import compiled

    compiled.forget_value_rows()
    f.make_trials(2, job="j-late-a")
    missing = max(Job.objects.values_list("id", flat=True)) + 1000
    # A job not there yet: the field is in error and filters nothing...
    kept, fresh = _explorer_page(f"job={missing}")
    assert kept == fresh
    assert len(kept) == 2
    for query in ("q=j-late", "sort=task", "sort=-job", "after=garbage"):
        assert _explorer_page(query)[0] == _explorer_page(query)[1]
    assert len(compiled._VALUE_ROWS) == 0
    # ...and once it exists, the same URL filters by it: nothing was kept from before.
    Job.objects.create(pk=missing, name="j-late-b")
    created = f.make_trial(job="j-late-b")
    assert created.job_id == missing
    assert [row["id"] for row in _explorer_page(f"job={missing}")[0]] == [created.pk]


def test_a_filters_sql_key_is_its_query_string_and_time_zone_when_they_decide_the_sql() -> None:
    from django.http import QueryDict
    from django.utils import timezone

    from review.filters import TrialFilterForm

    job = f.make_trial(job="j-key").job_id

    def key(query: str) -> tuple[str, str] | None:
        form = TrialFilterForm(QueryDict(query))
        form.is_valid()
        return form.sql_key()

    # The parameters in use, as the query string holds them (the page's cursor is not part
    # of the filter), with the time zone the days of `reviewed_by` are read in.
    assert key(f"job={job}&after=xyz&sort=reward&agent=") == (
        f"job={job}&sort=reward",
        timezone.get_current_timezone_name(),
    )
    with timezone.override("Asia/Tokyo"):
        assert key(f"job={job}") == (f"job={job}", "Asia/Tokyo")
    assert key("q=j-key") is None  # a search looks tasks up first
    assert key(f"job={job + 1000}") is None  # in error: the job may appear later
    assert key("reward_min=abc") is None


def test_value_rows_wants_a_values_queryset() -> None:
    from review.compiled import value_rows

    f.make_trial()
    with pytest.raises(ValueError, match="values"):
        value_rows(("models",), lambda: Trial.objects.only("id", "name"))


# --- model instances from SQL written once (review.compiled.model_rows) -------------------
@pytest.mark.parametrize(
    "columns",
    [
        "*",
        # fewer columns, in another order, and one that is no field
        "name, id, required, upper(name) AS shouted",
    ],
)
def test_model_rows_gives_what_raw_gives(columns: str) -> None:
    trial = f.make_trial(scorers=[f.scorer("alpha"), f.scorer("beta", required=False)])
    table = ScorerResult._meta.db_table
    sql = f"SELECT {columns} FROM {table} WHERE trial_id = %s ORDER BY id"  # noqa: S608
    want = list(ScorerResult.objects.raw(sql, [trial.pk]))
    for _ in range(2):  # the second run uses the columns matched on the first
        got = model_rows(ScorerResult, sql, [trial.pk])
        assert [type(row) for row in got] == [ScorerResult] * 2
        assert [row.get_deferred_fields() for row in got] == [
            row.get_deferred_fields() for row in want
        ]
        loaded = [
            field.attname
            for field in ScorerResult._meta.concrete_fields
            if field.attname not in want[0].get_deferred_fields()
        ]
        assert [[getattr(row, name) for name in loaded] for row in got] == [
            [getattr(row, name) for name in loaded] for row in want
        ]
        assert [row.required for row in got] == [True, False]  # booleans typed on SQLite too
        assert all(row._state.adding is False for row in got)
    if "shouted" in columns:
        assert [vars(row)["shouted"] for row in got] == ["ALPHA", "BETA"]
        # A field the statement did not read is read when asked for, as with raw().
        assert got[0].trial_id == trial.pk
    assert model_rows(ScorerResult, sql, [10**9]) == []


def test_model_rows_wants_the_primary_key() -> None:
    from django.core.exceptions import FieldDoesNotExist

    table = ScorerResult._meta.db_table
    with pytest.raises(FieldDoesNotExist, match="primary key"):
        model_rows(ScorerResult, f"SELECT name FROM {table}", [])  # noqa: S608


# --- one instance with its related rows, SQL written once (review.compiled.instance_by_pk) ---
def _trial_query(pk: int) -> Any:
    from django.http import QueryDict

    from review.filters import TrialFilterForm

    return (
        Trial.objects.select_related("job", "task")
        .defer("timings", "job__config")
        .annotate(**TrialFilterForm(QueryDict("sort=-reward")).neighbours())
        .filter(pk=pk)
    )


def test_instance_by_pk_gives_what_the_orm_gives_with_its_related_rows(
    record_calls: RecordCalls, django_assert_num_queries: Callable[..., Any]
) -> None:
    from review import compiled

    compiled.forget_instances()
    trials = [f.make_trial(job=f"j-{i % 2}", task=f"task-{i}", reward=i / 4) for i in range(4)]
    compiles = record_calls(compiled, "_compile_instance")
    for trial in trials:
        want = _trial_query(trial.pk).get()
        with django_assert_num_queries(1):
            got = compiled.instance_by_pk(("test trial",), _trial_query, trial.pk)
            assert got is not None
            # The related rows came with it, as select_related gives them.
            assert (got.job.name, got.task.name) == (want.job.name, want.task.name)
        assert got.get_deferred_fields() == want.get_deferred_fields() == {"timings"}
        assert got.job.get_deferred_fields() == want.job.get_deferred_fields() == {"config"}
        assert (got.previous_id, got.next_id) == (want.previous_id, want.next_id)
        assert [
            getattr(got, f.attname) for f in Trial._meta.concrete_fields if f.name != "timings"
        ] == [getattr(want, f.attname) for f in Trial._meta.concrete_fields if f.name != "timings"]
        assert got._state.adding is False
        assert got.timings == want.timings  # a deferred field is read when asked for
    assert len(compiles) == 1
    # A new trial between two others: the kept SQL finds it as the neighbour.
    middle = f.make_trial(job="j-0", reward=0.3)
    got = compiled.instance_by_pk(("test trial",), _trial_query, trials[1].pk)
    assert got is not None
    assert middle.pk in (got.previous_id, got.next_id)
    assert compiled.instance_by_pk(("test trial",), _trial_query, middle.pk + 1000) is None
    assert len(compiles) == 1


def test_instance_by_pk_wants_a_query_that_takes_the_key_once() -> None:
    from review import compiled

    compiled.forget_instances()
    trial = f.make_trial()
    with pytest.raises(ValueError, match="once"):
        compiled.instance_by_pk(
            ("test twice",), lambda pk: Trial.objects.filter(pk=pk, job__trials__pk=pk), trial.pk
        )
    with pytest.raises(ValueError, match="once"):
        compiled.instance_by_pk(("test never",), lambda pk: Trial.objects.filter(pk=1), trial.pk)
