"""The append-only tables refuse TRUNCATE on PostgreSQL (rewards.append_only, review 0014).

Row triggers refuse UPDATE and DELETE on both databases (tests/test_review_models.py,
tests/test_adjudication.py); TRUNCATE fires none of them, so PostgreSQL gets a statement
trigger of its own. SQLite has no TRUNCATE statement at all (its nearest, `DELETE FROM`
without WHERE, is refused by the DELETE triggers, tested there), so these tests skip there:
there is no statement to refuse.
"""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from review import adjudication
from review.models import Adjudication, Annotation, GoldLabel, add_annotation
from tests import review_factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _postgresql_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip(
            "SQLite has no TRUNCATE statement, so there is nothing to refuse; its DELETE FROM"
            " is refused by the row triggers, tested with the other append-only rules"
        )


def _truncate(sql: str) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        # The test's own inserts left deferred foreign-key checks pending, and PostgreSQL
        # refuses any TRUNCATE while they are: run them first, so the trigger is what answers.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(sql)


def _refused(sql: str) -> None:
    with pytest.raises(DatabaseError, match="append-only: TRUNCATE is not allowed"):
        _truncate(sql)


def test_truncating_annotations_or_adjudications_is_refused() -> None:
    trial = f.make_trial(name="split", judges=[f.judge("PASS")])
    rita, sam = f.make_user("rita", "reviewer"), f.make_user("sam", "expert")
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass")
    add_annotation(trial_id=trial.pk, reviewer=sam, judgment="fail")
    adjudication.adjudicate(
        trial_id=trial.pk, adjudicator=f.make_user("eve", "expert"), verdict="pass", rationale="."
    )

    _refused("TRUNCATE review_annotation CASCADE")
    _refused("TRUNCATE review_adjudication")
    # Through the tables that reference them, too: a cascade truncates them as well.
    _refused("TRUNCATE rewards_trial CASCADE")
    _refused("TRUNCATE rewards_job, rewards_task, rewards_trial CASCADE")

    assert Annotation.objects.count() == 2
    assert Adjudication.objects.count() == 1


def test_an_empty_append_only_table_can_be_truncated() -> None:
    # Nothing recorded is removed: what Django's flush of the test database does after a
    # transactional test, once the tests that annotated have purged their annotations.
    trial = f.make_trial(name="t")
    _truncate("TRUNCATE review_adjudication")
    add_annotation(trial_id=trial.pk, reviewer=f.make_user("rita", "reviewer"), judgment="pass")
    _refused("TRUNCATE review_annotation CASCADE")
    assert Annotation.objects.count() == 1


def test_a_table_made_append_only_later_refuses_truncate_too() -> None:
    trial = f.make_trial(name="gold")
    GoldLabel.objects.create(
        trial=trial, reference="pass", rationale="r", author=f.make_user("boss", staff=True)
    )
    _refused("TRUNCATE review_goldlabel")
    _refused("TRUNCATE rewards_trial CASCADE")
    assert GoldLabel.objects.count() == 1
