"""Migrations that change data: they must leave stored rows as the domain code would."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection

from rewards import rules
from rewards.models import Trial
from rewards.schemas import ErrorTag
from tests.review_factories import START, bundle, judge, write


@pytest.mark.django_db(transaction=True)
def test_summary_backfill_gives_what_refresh_summary_gives() -> None:
    tags = [
        ErrorTag(category="units", source="mechanical"),
        ErrorTag(category="tool failure", source="judge"),
        ErrorTag(category="units", source="judge"),
    ]
    later = judge("FAIL", failure_mode="x").model_copy(update={"task_completion": 1})
    unscored = judge("PASS", scored_at=None).model_copy(update={"efficiency": 5})
    write(bundle(name="a", judges=[judge("PASS"), later, unscored], error_tags=tags))
    write(bundle(name="b", judges=[], error_tags=[]))
    expected = {
        t.name: (t.judge_task_completion, t.judge_efficiency, t.error_categories)
        for t in Trial.objects.all()
    }
    assert expected["a"] == (1, 3, "units; tool failure")

    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE rewards_trial SET judge_task_completion = NULL, judge_efficiency = NULL,"
            " error_categories = ''"
        )
    call_command("migrate", "rewards", "0001", verbosity=0)
    call_command("migrate", "rewards", verbosity=0)

    got = {
        t.name: (t.judge_task_completion, t.judge_efficiency, t.error_categories)
        for t in Trial.objects.all()
    }
    assert got == expected
    assert rules.join_categories(["b", "a", "b"]) == "b; a"


@pytest.mark.django_db(transaction=True)
def test_judge_model_backfill_is_the_shown_verdicts_model() -> None:
    older = judge("FAIL", failure_mode="x", judge_model="judge-old")
    newer = judge("PASS", judge_model="judge-new", scored_at=START + timedelta(hours=1))
    unscored = judge("PASS", judge_model="unscored", scored_at=None)
    write(bundle(name="a", judges=[newer, older, unscored]))
    write(bundle(name="b", judges=[]))
    write(bundle(name="c", judges=[unscored]))
    with connection.cursor() as cursor:
        cursor.execute("UPDATE rewards_trial SET judge_model = ''")

    call_command("migrate", "rewards", "0007", verbosity=0)
    call_command("migrate", verbosity=0)

    got = dict(Trial.objects.values_list("name", "judge_model"))
    assert got == {"a": "judge-new", "b": "", "c": "unscored"}
    for trial in Trial.objects.select_related("task"):
        trial.refresh_summary()
        assert trial.judge_model == got[trial.name]


@pytest.mark.django_db(transaction=True)
def test_latest_judgments_and_tallies_are_filled_and_verdicts_become_human_judgments() -> None:
    from review import adjudication
    from review.models import JudgmentTally, LatestJudgment, PairTally, add_annotation
    from tests.conftest import purge_review_data
    from tests.review_factories import make_user

    rita, sam, eve = (make_user(name, "expert") for name in ("rita", "sam", "eve"))
    split, other = write(bundle(name="split"), bundle(name="other", judges=[judge("FAIL")]))
    add_annotation(trial_id=split.pk, reviewer=rita, judgment="pass", blind=True)
    add_annotation(trial_id=split.pk, reviewer=sam, judgment="fail")
    add_annotation(trial_id=other.pk, reviewer=rita, judgment="fail")
    adjudication.adjudicate(trial_id=split.pk, adjudicator=eve, verdict="fail", rationale="x")

    def kept() -> tuple[object, ...]:
        return (
            sorted(
                LatestJudgment.objects.values_list(
                    "trial_id",
                    "reviewer_id",
                    "annotation_id",
                    "judgment",
                    "blind_judgment",
                    "verifier",
                )
            ),
            sorted(JudgmentTally.objects.exclude(n=0).values_list(*JudgmentTally.KEY, "n")),
            sorted(PairTally.objects.exclude(n=0).values_list(*PairTally.KEY, "n")),
            dict(Trial.objects.values_list("name", "human_judgment")),
        )

    try:
        before = kept()
        assert before[3] == {"split": "fail", "other": "fail"}
        with connection.cursor() as cursor:
            cursor.execute("UPDATE rewards_trial SET human_judgment = 'mixed' WHERE name = 'split'")

        call_command("migrate", "review", "0006", verbosity=0)
        call_command("migrate", verbosity=0)

        assert kept() == before
    finally:
        # Annotations are append-only: the flush after this test could not empty them.
        purge_review_data()


@pytest.mark.django_db(transaction=True)
def test_large_columns_use_lz4_on_postgresql_and_the_migration_reverses() -> None:
    import importlib

    from django.apps import apps

    lz4 = importlib.import_module("rewards.migrations.0010_large_columns_lz4")

    def compressions() -> dict[str, str]:
        if connection.vendor != "postgresql":
            return {}
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT attname, attcompression FROM pg_attribute"
                " WHERE attrelid = 'rewards_trialdetail'::regclass AND attnum > 0"
            )
            return {name: method for name, method in cursor.fetchall() if method}

    with connection.schema_editor() as editor:
        lz4.compression("default")(apps, editor)
    assert compressions() == {}
    with connection.schema_editor() as editor:
        lz4.compression("lz4")(apps, editor)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression'"
            )
            has_lz4 = "lz4" in cursor.fetchone()[0]
        expected = dict.fromkeys(lz4.LARGE["rewards_trialdetail"], "l") if has_lz4 else {}
        assert compressions() == expected
    else:
        assert compressions() == {}  # nothing to do elsewhere, and nothing fails


def _indexes() -> dict[str, tuple[str, list[str]]]:
    """Each index of the trial, result and scorer tables (unique constraints' included), by
    name: its table and its columns, leading column first."""
    found = {}
    with connection.cursor() as cursor:
        for table in ("rewards_trial", "rewards_evaluationresult", "rewards_scorerresult"):
            constraints = connection.introspection.get_constraints(cursor, table)
            for name, info in constraints.items():
                if info["index"] or info["unique"] or info["primary_key"]:
                    found[name] = (table, list(info["columns"] or []))
    return found


def _covering_job_index() -> bool:
    """Whether trial_job_id_idx carries other columns (INCLUDE, PostgreSQL only)."""
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'trial_job_id_idx'")
        return "INCLUDE" in cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_foreign_keys_are_served_by_the_indexes_leading_with_them_and_the_migration_reverses() -> (
    None
):
    import importlib

    from django.apps import apps

    fewer = importlib.import_module("rewards.migrations.0011_fewer_indexes")
    dropped = {index for index, _, _ in fewer.FOREIGN_KEY_INDEXES}
    indexes = _indexes()
    assert not dropped & set(indexes)
    # Each dropped index's column still leads another index of its table.
    for _, table, column in fewer.FOREIGN_KEY_INDEXES:
        leading = [
            n for n, (t, columns) in indexes.items() if t == table and columns[:1] == [column]
        ]
        assert leading, (table, column)
    assert not _covering_job_index()

    # Backwards: the single-column indexes and (on PostgreSQL) the covering job index return.
    with connection.schema_editor() as editor:
        fewer._job_index.cover(apps, editor)
        for index, table, column in fewer.FOREIGN_KEY_INDEXES:
            editor.execute(f'CREATE INDEX "{index}" ON "{table}" ("{column}")')
    try:
        assert dropped <= set(_indexes())
        assert _covering_job_index() == (connection.vendor == "postgresql")
    finally:
        with connection.schema_editor() as editor:
            for index, _, _ in fewer.FOREIGN_KEY_INDEXES:
                editor.execute(f'DROP INDEX IF EXISTS "{index}"')
            fewer._job_index.uncover(apps, editor)
    assert _indexes() == indexes
    assert not _covering_job_index()
