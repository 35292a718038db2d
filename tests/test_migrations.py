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
