"""What Trialdesk keeps between requests: every key of Django's cache framework, named here
with what makes it stale.

The cache is shared by every process (CACHES: local memory for `make run`, Redis in
production), so a value one worker computes, every other worker reads, and a change one
process makes (a job saved, an ingest) reaches them all.

- `interval:v3:<statistic>:<digest>`: a bootstrap interval (κ's, compare's delta), or the
  reason there is none (`rewards.agreement.NoInterval`). It is a deterministic function of
  what the digest covers (the units resampled, the replicates, the level and the seed), so
  it never goes stale: a changed count is another key. Kept `INTERVAL_TTL`, so that
  intervals no page shows any more leave. Bump `v3` when `rewards.agreement.Interval` or
  `NoInterval` changes shape or meaning.
- `roles:v1:<user id>` (`roles_key`): the user's role groups (review.roles), read once and
  then kept; dropped when the user's groups change (either side of the relation) and when a
  group is renamed or deleted; `ROLES_TTL` bounds what a write outside both leaves stale.
- `jobs:newest:v4` (`JOB_CHOICES`): the newest jobs for the job <select>s (review.choices),
  with their labels (agent, model, dataset, trial count, state), when each finished and its
  trial count (a filter by a finished job asks no "is it running?" and counts no trials; an
  ingest that finishes a job saves it). Derived from rows: dropped when a Job is saved or
  deleted, and by the ingest writer when it creates jobs in bulk (no signal then) or adds
  trials to a finished job; `JOB_CHOICES_TTL` bounds what a write outside both
  leaves stale (SQL, the demo seed's bulk path).
- `calibration:v1:<digest>` (`calibration_key`): judge calibration over every judge version
  (review.science.calibration.report), under the rule's settings and salt, the newest
  judge verdict, annotation and adjudication ids, and what the exclusion reasons name and
  whether the switches count it. Those tables are append-only (a re-ingested trial's
  verdicts are new rows), and a new confirmation is another set of names, so a change is a
  new key and nothing needs dropping; `CALIBRATION_TTL` lets unused reports leave (and
  bounds what a deleted trial leaves stale).
- `judge-versions:v2:<job id>:<newest verdict id>:<digest>` (`judge_versions_key`): a job's
  shown judge verdicts counted by judge version (review.science.calibration.shown_versions),
  without the trials left out (the digest), the same way.
- `alignment:v1:<trial a>:<trial b>:<digest>` (`alignment_key`): two trials' trajectories
  aligned step by step (`rewards.alignment`), keyed by both trials' versions (content digest
  and last update), so a trial stored again is another key and nothing needs dropping; kept
  `ALIGNMENT_TTL` as `…:head` and `…:<page size>:<page>` (the rows of each page). The page
  showing it keeps each rendered page under the same key (`{% cache %}` aligned-steps).
  Bump `v1` when `rewards.alignment.Head` or `Row` changes shape.
- `steps:v1:<trial>:<digest>` (`steps_key`): a trial's trajectory as the trial page presents
  it (`review.pages.steps`), keyed by the trial's version (`trial_version`) like an
  alignment, so a trial stored again is another key and nothing needs dropping; kept
  `STEPS_TTL` as `…:<chunk size>:<chunk>` (the presented steps of each chunk), and its head
  (step count, counts by kind, schema, and this key) as `steps:v1:<trial>:head`
  (`steps_head_key`), looked up before the trial is read and overwritten when another
  version is presented. A running trial's steps are never kept (its trajectory grows).
  The page keeps each rendered chunk (`{% cache %}` trajectory-steps) under this key, the
  filter, the followed citation and the chunk's comments. Bump `v1` when
  `review.pages.steps.Head` or `review.pages.presenters.Step` / `StepPart` changes shape.
- `exclusions:named:v1` (`LEFT_OUT`): what pass rates leave out by default
  (review.science.exclusions.named_now): the tasks confirmed defective and the trials with a
  confirmed reward hack, read in one query. Dropped (`forget_left_out`) when a ledger entry
  is recorded (review.defects.record) and when a finding is confirmed or dismissed
  (review.models.review_finding); kept at most `LEFT_OUT_TTL`.
- `template.cache.<fragment>.*`: page fragments kept by `{% cache %}` under what they show:
  the explorer's rows (their values, the filter their links carry and the next page's
  cursor), agreement's sections (each comparison, the reviewer pairs), a job's figures and
  compare's job pickers, each under `fingerprint` of its data, so a change is another key
  and nothing needs dropping; kept 600 s.
- `template.cache.trajectory-steps.*`, `.step-comment-list.*`, `.step-comment-fields.*`: the
  trial page's rendered chunk of steps (under its kept steps' key, the filter, the followed
  citation and the ids of the chunk's comments, with the links' query and the user, whose
  own comments carry a "Correct" link), its list of step comments (their ids: comments are
  append-only, a correction is a newer id) and the unbound comment form's fields (their
  initial values); `.annotation-fields.*`, the unbound annotation form's fields likewise.
  Nothing needs dropping; kept 600 s (a renamed author shows under the old name until then).
- `template.cache.trial-validity.*`, `.trial-scorers.*`, `.trial-judge-head.*`, `.trial-judge.*`,
  `.trial-breakdown.*`, `.trial-earlier-results.*`: the trial page's cards of its stored
  outcome (the current result's validity, the scorers, the judge verdict, the breakdown with
  the error tags, the earlier results), under the trial's version (`trial_version`: every
  writer of its results, scorer results, verdicts and tags saves the trial, an ingest with
  new content changes its digest) and the time zone the times are shown in
  (`review.views.trial.StoredOutcome.key`); the scorers card also under the page's query,
  which its links carry and whose `open` expands rows. A kept card reads none of its rows.
  Nothing in them depends on the reader: the staff's re-judge form (a CSRF token) is
  rendered outside them. Nothing needs dropping; kept 600 s.
- `template.cache.explorer-sidebar.*`: the explorer's filter sidebar (`{% cache %}` in
  review/explorer.html), keyed by the filter's values and the job choices above
  (`TrialFilterForm.sidebar_key`): a new list of jobs is a new key, so it needs no dropping.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_delete
from django.dispatch import receiver

# --- bootstrap intervals ---------------------------------------------------------------------
INTERVAL_TTL = 24 * 60 * 60


def interval_key(statistic: str, *inputs: Hashable) -> str:
    """The key of `statistic`'s interval for `inputs`, everything that decides it."""
    digest = hashlib.blake2b(repr(inputs).encode(), digest_size=16).hexdigest()
    return f"interval:v3:{statistic}:{digest}"


def cached_intervals[A, V](
    wanted: Mapping[str, A], compute: Callable[[dict[str, A]], Mapping[str, V]]
) -> dict[str, V]:
    """The value of each key of `wanted`: read from the cache in one round trip, those it
    lacks computed by one call of `compute` (given their keys and inputs) and stored."""
    values: dict[str, V] = cache.get_many(list(wanted))
    missing = {key: inputs for key, inputs in wanted.items() if key not in values}
    if missing:
        computed = compute(missing)
        cache.set_many(dict(computed), INTERVAL_TTL)
        values.update(computed)
    return values


# --- aligned trajectories ----------------------------------------------------------------------
ALIGNMENT_TTL = 24 * 60 * 60


def alignment_key(a: int, a_version: Hashable, b: int, b_version: Hashable) -> str:
    digest = hashlib.blake2b(repr((a_version, b_version)).encode(), digest_size=16).hexdigest()
    return f"alignment:v1:{a}:{b}:{digest}"


# --- a trial's presented steps ---------------------------------------------------------------
STEPS_TTL = 6 * 60 * 60


def trial_version(trial: Any) -> tuple[str, str]:
    """What changes when a trial is stored again: its content digest and last update."""
    return trial.content_digest, trial.updated_at.isoformat() if trial.updated_at else ""


def steps_key(trial: int, version: Hashable) -> str:
    digest = hashlib.blake2b(repr(version).encode(), digest_size=16).hexdigest()
    return f"steps:v1:{trial}:{digest}"


def steps_head_key(trial: int) -> str:
    return f"steps:v1:{trial}:head"


# --- page fragments ---------------------------------------------------------------------------
def fingerprint(*values: Any) -> str:
    """What a page fragment shows, as a key for `{% cache %}`: a digest of the values' repr,
    which for the dataclasses the figures are made of holds every field, nested."""
    return hashlib.blake2b(repr(values).encode(), digest_size=16).hexdigest()


# --- judge calibration ------------------------------------------------------------------------
CALIBRATION_TTL = 600


def calibration_key(*inputs: Hashable) -> str:
    """The calibration report's key for `inputs`: the rule's settings and the newest ids."""
    digest = hashlib.blake2b(repr(inputs).encode(), digest_size=16).hexdigest()
    return f"calibration:v1:{digest}"


def judge_versions_key(job_id: int, newest_verdict: int | None, left_out: Hashable) -> str:
    """A job's counts by judge version under the newest verdict id, without the trials
    `left_out` names (what the exclusion reasons leave out: tasks and trials)."""
    digest = hashlib.blake2b(repr(left_out).encode(), digest_size=16).hexdigest()
    return f"judge-versions:v2:{job_id}:{newest_verdict}:{digest}"


# --- what pass rates leave out ------------------------------------------------------------------
LEFT_OUT = "exclusions:named:v1"
LEFT_OUT_TTL = 300


def forget_left_out() -> None:
    """Drop the kept list now and again once the transaction commits, so that a page that
    filled it in between (without the new record) does not keep it."""
    cache.delete(LEFT_OUT)
    transaction.on_commit(lambda: cache.delete(LEFT_OUT))


# --- a user's roles ----------------------------------------------------------------------------
ROLES_TTL = 300


def roles_key(user_id: int) -> str:
    return f"roles:v1:{user_id}"


@receiver(m2m_changed, sender=User.groups.through, dispatch_uid="rewards.forget_roles")
def forget_roles(
    instance: Any, action: str, reverse: bool, pk_set: set[int] | None, **kwargs: Any
) -> None:
    """A user's groups changed (from the user's side or the group's): their roles are read
    again on their next request."""
    if not action.startswith("post_"):
        return
    if not reverse:
        users = [instance.pk]
    elif pk_set is not None:
        users = list(pk_set)
    else:  # a group's members cleared: whoever they were
        users = list(User.objects.filter(groups=instance).values_list("pk", flat=True))
    cache.delete_many([roles_key(pk) for pk in users])


@receiver(pre_delete, sender=Group, dispatch_uid="rewards.forget_roles_of_group")
@receiver(post_save, sender=Group, dispatch_uid="rewards.forget_roles_of_renamed_group")
def forget_roles_of_group(instance: Group, **kwargs: Any) -> None:
    """A group renamed or deleted: its members' roles are read again."""
    members = User.objects.filter(groups=instance).values_list("pk", flat=True)
    cache.delete_many([roles_key(pk) for pk in members])


# --- the newest jobs -------------------------------------------------------------------------
JOB_CHOICES = "jobs:newest:v4"
JOB_CHOICES_TTL = 60


@receiver(post_save, sender="rewards.Job", dispatch_uid="rewards.forget_job_choices_on_save")
@receiver(post_delete, sender="rewards.Job", dispatch_uid="rewards.forget_job_choices_on_delete")
def forget_job_choices(**kwargs: Any) -> None:
    """Drop the newest jobs now and again when the transaction commits: in between, another
    process may read the rows as they were before it and keep them."""
    cache.delete(JOB_CHOICES)
    transaction.on_commit(lambda: cache.delete(JOB_CHOICES))
