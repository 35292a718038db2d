"""The cache every process shares (CACHES): how the settings choose it, and how test processes
stay out of each other's entries.

The suite runs once with local memory and once with Redis (`.ci/run`); these tests hold for
both.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import ImproperlyConfigured

from config.settings import cache_from_url
from tests.conftest import ROOT, clear_own_cache

LOCMEM = "django.core.cache.backends.locmem.LocMemCache"
REDIS = "django.core.cache.backends.redis.RedisCache"


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


def test_a_test_process_clears_its_own_redis_keys_and_no_one_elses() -> None:
    if not isinstance(caches["default"], RedisCache):
        pytest.skip("a local-memory cache is the process's own (the Redis run covers this)")
    location = settings.CACHES["default"]["LOCATION"]
    other = RedisCache(location, {"KEY_PREFIX": f"{cache.key_prefix}-other-run"})
    try:
        other.set("kept", "theirs")
        cache.set("kept", "ours")
        clear_own_cache()
        assert cache.get("kept") is None
        assert other.get("kept") == "theirs"
    finally:
        other.delete("kept")
