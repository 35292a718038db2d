"""The cache every process shares (CACHES, rewards/cache.py): how the settings choose it, what
it keeps between requests, what drops it, and how test processes stay out of each other's.

The suite runs once with local memory and once with Redis (`.ci/run`); these tests hold for
both. A second request answering with the computation patched to fail is what another worker
process sees: it has only the cache to read.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from config.settings import cache_from_url
from review.models import add_annotation
from rewards import agreement
from rewards.cache import JOB_CHOICES
from rewards.models import Job, Trial
from tests import review_factories as f
from tests.conftest import ROOT, RecordCalls, clear_own_cache

LOCMEM = "django.core.cache.backends.locmem.LocMemCache"
REDIS = "django.core.cache.backends.redis.RedisCache"


def _failing(*args: object) -> None:
    raise AssertionError("computed, not read from the cache")


# --- settings ----------------------------------------------------------------------------------
def test_without_a_cache_url_each_process_keeps_its_own_in_memory() -> None:
    assert cache_from_url("")["BACKEND"] == LOCMEM
    assert cache_from_url("locmem://")["BACKEND"] == LOCMEM


@pytest.mark.parametrize(
    "url",
    ["redis://cache:6379/0", "rediss://:secret@cache:6380/2", "unix:///run/redis.sock?db=1"],
)
def test_a_redis_url_selects_djangos_redis_cache_at_that_location(url: str) -> None:
    assert cache_from_url(url, "td") == {"BACKEND": REDIS, "LOCATION": url, "KEY_PREFIX": "td"}


def test_a_cache_url_of_another_scheme_is_refused_without_showing_the_rest_of_it() -> None:
    with pytest.raises(ImproperlyConfigured, match="CACHE_URL must be a redis://") as refused:
        cache_from_url("memcached://user:hunter2@cache:11211")
    assert "'memcached'" in str(refused.value)
    assert "hunter2" not in str(refused.value)


def _settings_of_a_new_process(cache_url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "CACHE_URL": cache_url}
    env.pop("CACHE_KEY_PREFIX", None)
    shown = (
        "from django.conf import settings; c = settings.CACHES['default']; "
        "print(c['BACKEND'], c['KEY_PREFIX'], c.get('LOCATION', '-'))"
    )
    return subprocess.run(
        [sys.executable, "-c", shown],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_settings_read_cache_url_from_the_environment() -> None:
    assert _settings_of_a_new_process("").stdout.split() == [LOCMEM, "trialdesk", "-"]
    redis = _settings_of_a_new_process("redis://127.0.0.1:6379/12").stdout.split()
    assert redis == [REDIS, "trialdesk", "redis://127.0.0.1:6379/12"]
    refused = _settings_of_a_new_process("memcached://cache:11211")
    assert refused.returncode != 0
    assert "ImproperlyConfigured: CACHE_URL must be a redis://" in refused.stderr


# --- the test processes' own keys --------------------------------------------------------------
def test_each_test_process_keys_its_entries_by_its_worker_and_process() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    assert settings.CACHES["default"]["KEY_PREFIX"].endswith(f"-test-{worker}-{os.getpid()}")


def test_a_test_process_clears_its_own_keys_and_no_one_elses() -> None:
    # Another run's entries: on Redis, under another prefix on the same server; in local
    # memory, another cache of the process (a run of its own keeps its memory to itself).
    if isinstance(caches["default"], RedisCache):
        location = settings.CACHES["default"]["LOCATION"]
        other: BaseCache = RedisCache(location, {"KEY_PREFIX": f"{cache.key_prefix}-other-run"})
    else:
        other = LocMemCache("another-run", {})
    try:
        other.set("kept", "theirs")
        cache.set("kept", "ours")
        clear_own_cache()
        assert cache.get("kept") is None
        assert other.get("kept") == "theirs"
    finally:
        other.delete("kept")


# --- intervals ---------------------------------------------------------------------------------
def _csv(body: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(body.decode())))


def _judged_trials() -> dict[str, Trial]:
    rita, sam = f.make_user("rita", "reviewer"), f.make_user("sam", "expert")
    made = f.write(
        *(
            f.bundle(name=f"t{i}", reward=0.9, judges=[f.judge("PASS" if i % 3 else "FAIL")])
            for i in range(16)
        )
    )
    # Sixteen trials: enough for κ's interval (ten or more, rewards.agreement.MIN_UNITS).
    for i, trial in enumerate(made):
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass" if i % 2 else "fail")
        if i < 11:
            add_annotation(trial_id=trial.pk, reviewer=sam, judgment="pass" if i % 4 else "fail")
    return {t.name: t for t in made}


@pytest.mark.django_db
def test_agreement_intervals_are_computed_once_and_read_by_any_process_afterwards(
    client: Client, monkeypatch: pytest.MonkeyPatch, record_calls: RecordCalls
) -> None:
    trials = _judged_trials()
    f.login(client, "ann", "analyst")
    computed = record_calls(agreement, "_kappa_intervals")
    assert client.get("/agreement/").status_code == 200
    first = client.get("/agreement.csv").content
    seen = {cells for call in computed for cells in call[0]}
    assert seen
    assert any(row["kappa_ci_low"] for row in _csv(first))

    with monkeypatch.context() as another_process:
        another_process.setattr(agreement, "_kappa_intervals", _failing)
        assert client.get("/agreement/").status_code == 200
        assert client.get("/agreement.csv").content == first

    # A new judgment changes some counts: their intervals are new, the others are read.
    computed.clear()
    add_annotation(trial_id=trials["t7"].pk, reviewer=f.make_user("uma", "expert"), judgment="fail")
    changed = client.get("/agreement.csv").content
    assert changed != first
    assert computed
    assert not {cells for call in computed for cells in call[0]} & seen


@pytest.mark.django_db
def test_compare_intervals_are_computed_once_and_read_by_any_process_afterwards(
    client: Client, monkeypatch: pytest.MonkeyPatch, record_calls: RecordCalls
) -> None:
    # Run A passes every task, run B every other one (twelve tasks: enough for an interval).
    for job, rewards in (("run-a", [0.9] * 12), ("run-b", [0.1, 0.9] * 6)):
        f.write(
            *(
                f.bundle(job=job, task=f"task{i}", reward=reward, judges=[f.judge("PASS")])
                for i, reward in enumerate(rewards)
            )
        )
    a, b = Job.objects.get(name="run-a"), Job.objects.get(name="run-b")
    f.login(client, "ann", "analyst")
    url = f"/compare.csv?a={a.pk}&b={b.pk}"
    computed = record_calls(agreement, "_delta_interval")
    first = client.get(url).content
    assert computed
    assert any(row["delta_ci_low"] for row in _csv(first))

    with monkeypatch.context() as another_process:
        another_process.setattr(agreement, "_delta_interval", _failing)
        assert client.get(f"/compare/?a={a.pk}&b={b.pk}").status_code == 200
        assert client.get(url).content == first

    # A task both runs now have: the paired counts, and so the interval, are new.
    computed.clear()
    f.write(f.bundle(job="run-b", task="task12", reward=0.1, judges=[f.judge("PASS")]))
    f.write(f.bundle(job="run-a", task="task12", reward=0.9, judges=[f.judge("PASS")]))
    assert client.get(url).content != first
    assert computed


# --- the newest jobs and the explorer's sidebar -------------------------------------------------
@pytest.mark.django_db
def test_a_job_ingested_is_offered_at_once_by_the_cached_sidebar(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trial(job="nightly-1")
    before = client.get("/?task=alpha").content.decode()
    assert ">nightly-1 ·" in before
    # The writer inserts jobs in bulk (no post_save): it drops the newest jobs itself, and
    # the sidebar, keyed by them, is rendered anew.
    f.make_trial(job="nightly-2")
    after = client.get("/?task=alpha").content.decode()
    assert ">nightly-2 ·" in after
    assert ">nightly-1 ·" in after


@pytest.mark.django_db
def test_the_newest_jobs_are_dropped_again_when_the_writing_transaction_commits(
    django_capture_on_commit_callbacks: Callable[..., Any],
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        Job.objects.create(name="nightly-3")
        # Another process reads the jobs as they were before this transaction, and keeps them.
        cache.set(JOB_CHOICES, [("1", "nightly-1")], 60)
        assert cache.get(JOB_CHOICES) is not None
    assert cache.get(JOB_CHOICES) is None
