"""Annotations: append-only in code and in the database; the human summary; bundle import."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.db.models import ProtectedError

from review.models import Annotation, AppendOnlyError, ReviewerProfile, add_annotation
from rewards.models import Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def _annotate(trial: Trial, user: User, judgment: str, **extra: object) -> Annotation:
    return add_annotation(trial_id=trial.pk, reviewer=user, judgment=judgment, **extra)  # type: ignore[arg-type]


# --- append-only ------------------------------------------------------------------------
def test_saving_an_existing_annotation_is_refused() -> None:
    annotation = _annotate(f.make_trial(), f.make_user("rita", "reviewer"), "pass")
    annotation.notes = "changed my mind"
    with pytest.raises(AppendOnlyError):
        annotation.save()
    annotation.refresh_from_db()
    assert annotation.notes == ""


def test_deleting_an_annotation_is_refused() -> None:
    annotation = _annotate(f.make_trial(), f.make_user("rita", "reviewer"), "pass")
    with pytest.raises(AppendOnlyError):
        annotation.delete()
    assert Annotation.objects.filter(pk=annotation.pk).exists()


def test_bulk_update_and_delete_through_the_queryset_are_refused() -> None:
    _annotate(f.make_trial(), f.make_user("rita", "reviewer"), "pass")
    with pytest.raises(AppendOnlyError):
        Annotation.objects.all().update(judgment="fail")
    with pytest.raises(AppendOnlyError):
        Annotation.objects.all().delete()
    with pytest.raises(AppendOnlyError):
        Annotation.objects.bulk_update(list(Annotation.objects.all()), ["notes"])
    assert Annotation.objects.get().judgment == "pass"


def test_raw_sql_update_of_an_annotation_is_refused_by_the_database_trigger() -> None:
    annotation = _annotate(f.make_trial(), f.make_user("rita", "reviewer"), "pass")
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("UPDATE review_annotation SET judgment = 'fail'")
    annotation.refresh_from_db()
    assert annotation.judgment == "pass"


def test_raw_sql_delete_of_an_annotation_is_refused_by_the_database_trigger() -> None:
    _annotate(f.make_trial(), f.make_user("rita", "reviewer"), "pass")
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("DELETE FROM review_annotation")
    assert Annotation.objects.count() == 1


def test_a_reviewed_trial_cannot_be_deleted() -> None:
    trial = f.make_trial()
    _annotate(trial, f.make_user("rita", "reviewer"), "pass")
    with pytest.raises(ProtectedError):
        trial.delete()
    assert Trial.objects.filter(pk=trial.pk).exists()


def test_an_unreviewed_trial_can_still_be_deleted() -> None:
    trial = f.make_trial()
    trial.delete()
    assert not Trial.objects.filter(pk=trial.pk).exists()


# --- the human summary ----------------------------------------------------------------------
def test_adding_an_annotation_updates_the_trials_human_summary() -> None:
    trial = f.make_trial(reward=0.2, pass_threshold=0.5)
    annotation = _annotate(
        trial, f.make_user("rita", "reviewer"), "pass", categories=["units"], notes="fine"
    )
    trial.refresh_from_db()
    assert trial.human_judgment == "pass"
    assert trial.annotation_count == 1
    assert trial.human_disagreement == "human_pass_automated_fail"
    assert annotation.reward_seen == pytest.approx(0.2)
    assert annotation.judge_verdict_seen == "PASS"


def test_the_latest_annotation_of_each_reviewer_is_the_one_that_counts() -> None:
    trial = f.make_trial(reward=0.9)
    rita = f.make_user("rita", "reviewer")
    sam = f.make_user("sam", "expert")
    _annotate(trial, rita, "fail")
    _annotate(trial, rita, "pass")
    trial.refresh_from_db()
    assert (trial.human_judgment, trial.annotation_count) == ("pass", 2)

    _annotate(trial, sam, "fail")
    trial.refresh_from_db()
    assert (trial.human_judgment, trial.annotation_count) == ("mixed", 3)

    _annotate(trial, sam, "defer")
    trial.refresh_from_db()
    assert trial.human_judgment == "pass"
    assert Annotation.objects.filter(trial=trial).count() == 4


# --- annotations arriving with a bundle --------------------------------------------------
def test_a_bundles_annotations_are_stored_with_their_reviewer_and_time() -> None:
    rita = f.make_user("rita", "reviewer")
    at = f.START + timedelta(hours=2)
    trial = f.write(
        f.bundle(
            reward=0.9,
            annotations=[
                f.annotation("rita", "fail", at=at, notes="wrong units", categories=["units"]),
            ],
        )
    )[0]
    stored = Annotation.objects.get(trial=trial)
    assert stored.reviewer == rita
    assert stored.created_at == at
    assert (stored.judgment, stored.notes, stored.categories) == ("fail", "wrong units", ["units"])
    trial.refresh_from_db()
    assert trial.human_judgment == "fail"
    assert trial.human_disagreement == "human_fail_automated_pass"


def test_an_unknown_bundle_reviewer_is_created_inactive_without_a_password() -> None:
    f.write(f.bundle(annotations=[f.annotation("ghost", "pass")]))
    ghost = User.objects.get(username="ghost")
    assert not ghost.is_active
    assert not ghost.has_usable_password()


def test_writing_a_bundle_again_does_not_duplicate_its_annotations() -> None:
    notes = [f.annotation("rita", "pass"), f.annotation("sam", "fail")]
    first = f.bundle(name="t-1", annotations=notes)
    f.write(first)
    # Changed artifacts make the writer update the trial and send its annotations again.
    changed = first.model_copy(
        update={"trial": first.trial.model_copy(update={"stdout_tail": "new output"})}
    )
    f.write(changed)
    trial = Trial.objects.get(name="t-1")
    assert Annotation.objects.filter(trial=trial).count() == 2
    assert trial.annotation_count == 2
    assert trial.human_judgment == "mixed"


def test_a_bundle_with_an_extra_annotation_adds_only_the_new_one() -> None:
    first = f.bundle(name="t-1", annotations=[f.annotation("rita", "pass")])
    f.write(first)
    later = first.model_copy(
        update={
            "annotations": [
                *first.annotations,
                f.annotation("rita", "fail", at=f.START + timedelta(days=1)),
            ],
            "trial": first.trial.model_copy(update={"stdout_tail": "rerun"}),
        }
    )
    f.write(later)
    trial = Trial.objects.get(name="t-1")
    assert list(Annotation.objects.filter(trial=trial).values_list("judgment", flat=True)) == [
        "pass",
        "fail",
    ]
    assert trial.human_judgment == "fail"


# --- roles and demo users ---------------------------------------------------------------------
def test_the_role_groups_exist_after_migrating() -> None:
    assert set(Group.objects.values_list("name", flat=True)) >= {"reviewer", "expert", "analyst"}


def test_demo_users_creates_one_user_per_role_and_is_idempotent() -> None:
    out = io.StringIO()
    call_command("demo_users", stdout=out)
    call_command("demo_users", stdout=io.StringIO())
    table = out.getvalue()
    for username in ("reviewer", "expert", "analyst", "admin"):
        assert username in table
    assert User.objects.filter(username__in=["reviewer", "expert", "analyst", "admin"]).count() == 4
    reviewer = User.objects.get(username="reviewer")
    assert reviewer.check_password("reviewer-demo-2026")
    assert list(reviewer.groups.values_list("name", flat=True)) == ["reviewer"]
    assert ReviewerProfile.objects.get(user__username="expert").discipline
    assert User.objects.get(username="admin").is_staff
    assert not User.objects.get(username="analyst").groups.filter(name="reviewer").exists()
