"""Migrations that change data: they must leave stored rows as the domain code would."""

import pytest
from django.core.management import call_command
from django.db import connection

from rewards import rules
from rewards.models import Trial
from rewards.schemas import ErrorTag
from tests.review_factories import bundle, judge, write


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
