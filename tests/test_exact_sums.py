"""Every sum the job tallies keep is exact (issue 26): after any sequence of writes, updates
and deletions the kept figures equal a recount with `==`, on SQLite and PostgreSQL alike.

Rewards and costs are floats; the tallies keep them as whole units of 1e-9
(`job_tallies.SCALE`), each trial's value rounded by the same SQL in the triggers and in the
recount, so what is added and subtracted is exact integers. Float sums drifted from a recount
in the last digits, more with every re-ingest.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.models import Avg, Sum

from review.models import JobTally
from review.science import job_tallies, stats
from rewards.models import Job, Trial
from rewards.schemas import TrialBundle
from tests import review_factories as f

JOBS = ("nightly-1", "nightly-2")
# Rewards whose float sums drift: thirds, tenths, and values with every digit used.
AWKWARD = (0.1, 0.2, 0.3, 1 / 3, 2 / 3, 0.7, 1.0, 0.0, 1e-12, 0.999999999999)


def kept() -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """Every kept tally row's counters, exactly as stored (no rounding)."""
    key = job_tallies.KEY
    rows = JobTally.objects.exclude(trials=0).values_list(*key, *job_tallies.COUNTER_NAMES)
    return {tuple(row[: len(key)]): tuple(row[len(key) :]) for row in rows}


def recounted() -> dict[tuple[Any, ...], tuple[Any, ...]]:
    job_tallies.rebuild(connection)
    return kept()


def _reward(rng: random.Random) -> float:
    return rng.choice(AWKWARD) if rng.random() < 0.5 else rng.random()


def _cost(rng: random.Random) -> float | None:
    # Costs of every size a pipeline may write, a nonsense one among them.
    return rng.choice([None, 0.0, 0.1, 0.0123, rng.random() * 7, rng.random() / 1e4, 1e300])


def _bundle(rng: random.Random, name: str, job: str) -> TrialBundle:
    made = f.bundle(
        name=name,
        job=job,
        reward=_reward(rng),
        agent=rng.choice(["alpha", "beta"]),
        judges=[f.judge(rng.choice(["PASS", "FAIL"]), failure_mode="units")],
    )
    trial = made.trial.model_copy(update={"cost_usd": _cost(rng)})
    return made.model_copy(update={"trial": trial})


def _random_writes(rng: random.Random, steps: int) -> None:
    names: list[tuple[str, str]] = []
    for step in range(steps):
        move = rng.choice(["ingest", "ingest", "reingest", "reingest", "delete", "update"])
        if move == "ingest" or not names:
            batch = [(rng.choice(JOBS), f"t{step}-{i}") for i in range(rng.randint(1, 6))]
            f.write(*(_bundle(rng, name, job) for job, name in batch))
            names.extend(batch)
        elif move == "reingest":
            # New artifacts for trials already stored: their rewards and costs change.
            chosen = rng.sample(names, min(len(names), rng.randint(1, 4)))
            f.write(*(_bundle(rng, name, job) for job, name in chosen))
        elif move == "delete":
            job, name = names.pop(rng.randrange(len(names)))
            Trial.objects.filter(job__name=job, name=name).delete()
        else:
            # A bulk update around the domain code (a statement over many rows).
            job = rng.choice(JOBS)
            Trial.objects.filter(job__name=job, reward__lt=0.5).update(
                reward=_reward(rng), cost_usd=_cost(rng)
            )


@pytest.mark.django_db
@pytest.mark.parametrize("seed", [7, 26, 2026])
def test_kept_sums_equal_a_recount_exactly_after_random_writes(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(4):
        _random_writes(rng, 15)
        assert kept() == recounted()
    assert Trial.objects.exists()


@pytest.mark.django_db
def test_the_shown_mean_and_cost_are_the_trials_own() -> None:
    rng = random.Random(11)
    _random_writes(rng, 30)
    for job in Job.objects.all():
        trials = Trial.objects.filter(job=job)
        expected = trials.aggregate(mean=Avg("reward"))["mean"]
        got = stats.job_breakdown(job).summary.mean_reward
        if expected is None:
            continue
        # Each reward is kept to 1e-9: the mean moves by less than that, never visibly.
        assert abs(got - expected) <= 1e-9
        counted = trials.filter(cost_usd__gte=0, cost_usd__lte=job_tallies.MAX_COUNTED_COST)
        cost = counted.aggregate(total=Sum("cost_usd"))["total"] or 0.0
        totals = stats.job_breakdown(job).totals
        assert abs(totals["cost_sum"] - cost) <= 1e-9 * max(1, counted.count())
        assert totals["cost_n"] == counted.count()


@pytest.mark.django_db
def test_a_reward_is_kept_as_whole_units_of_a_billionth() -> None:
    f.write(f.bundle(name="a", reward=0.1), f.bundle(name="b", reward=0.2))
    f.write(f.bundle(name="c", reward=1 / 3))
    (row,) = JobTally.objects.all()
    assert row.reward_units == 100_000_000 + 200_000_000 + 333_333_333
    assert row.cost_units == 3 * 12_300_000
    Trial.objects.filter(name="c").delete()
    row.refresh_from_db()
    assert row.reward_units == 300_000_000


@pytest.mark.django_db
def test_a_nonsense_cost_is_not_counted_and_does_not_stop_the_trial() -> None:
    huge = f.bundle(name="huge")
    huge = huge.model_copy(update={"trial": huge.trial.model_copy(update={"cost_usd": 1e300})})
    negative = f.bundle(name="negative")
    negative = negative.model_copy(
        update={"trial": negative.trial.model_copy(update={"cost_usd": -5.0})}
    )
    f.write(huge, negative, f.bundle(name="plain"))
    assert Trial.objects.count() == 3
    (row,) = JobTally.objects.all()
    assert (row.trials, row.cost_n, row.cost_units) == (3, 1, 12_300_000)
    assert kept() == recounted()


@pytest.mark.django_db(transaction=True)
def test_migration_0010_recounts_the_float_tallies_into_units_and_back() -> None:
    rng = random.Random(3)
    _random_writes(rng, 12)
    expected = kept()

    call_command("migrate", "review", "0009", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute("SELECT SUM(trials), SUM(reward_sum) FROM review_jobtally")
        trials, reward_sum = cursor.fetchone()
    assert trials == Trial.objects.count()
    assert reward_sum == pytest.approx(Trial.objects.aggregate(s=Sum("reward"))["s"])

    call_command("migrate", "review", verbosity=0)
    assert kept() == expected
    # The triggers written by the migration keep counting.
    _random_writes(rng, 12)
    assert kept() == recounted()
