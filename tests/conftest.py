"""Shared fixtures. The suite's own Harbor-shaped files live in tests/fixtures/harbor/."""

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import HARBOR_FIXTURES

ROOT = Path(__file__).resolve().parent.parent


def clear_own_cache() -> None:
    """Drop this test process's entries from the cache, and only those.

    A Redis cache is shared by the suite's workers (and by any other run on that server):
    Django's `cache.clear()` would empty the whole database, so the keys under this
    process's KEY_PREFIX (tests/settings.py) are deleted instead. A local-memory cache is
    the process's own.
    """
    from django.conf import settings
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    if not isinstance(caches["default"], RedisCache):
        caches["default"].clear()
        return
    client = _redis(settings.CACHES["default"]["LOCATION"])
    prefix = settings.CACHES["default"]["KEY_PREFIX"]
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        client.delete(*keys)


@functools.cache
def _redis(location: str) -> Any:
    import redis

    return redis.Redis.from_url(location)


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    """Each test starts with an empty cache (job choices, intervals and fragments live there
    between requests)."""
    clear_own_cache()


@pytest.fixture(autouse=True, scope="session")
def _cache_left_empty() -> Iterator[None]:
    """A run leaves nothing of its own in a shared cache."""
    yield
    clear_own_cache()


@pytest.fixture
def harbor_files() -> Path:
    return HARBOR_FIXTURES


type RecordCalls = Callable[[object, str], list[tuple[Any, ...]]]


@pytest.fixture
def record_calls(monkeypatch: pytest.MonkeyPatch) -> RecordCalls:
    """`record_calls(owner, name)`: `owner.name` still called, each call's positional
    arguments recorded in the list returned (what a test counts: compiles, listings, reads)."""

    def record(owner: object, name: str) -> list[tuple[Any, ...]]:
        real = getattr(owner, name)
        calls: list[tuple[Any, ...]] = []

        def recorded(*args: Any, **kwargs: Any) -> Any:
            calls.append(args)
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, recorded)
        return calls

    return record


def purge_review_data() -> None:
    """Empty every trial table, annotations (and what is kept from them) included, for tests
    that need an empty database.

    Annotations and adjudications (review migrations 0002 and 0005), gold labels, step
    comments, the defect ledger and finding reviews (`rewards.append_only`) are append-only
    by trigger; the triggers are dropped for the purge and put back at once, exactly as the
    migrations made them.
    """
    import importlib

    from django.db import connection

    from review.models import (
        Adjudication,
        Annotation,
        DefectEntry,
        FindingReview,
        GoldLabel,
        JudgmentTally,
        LatestJudgment,
        MultiRatedTally,
        PairTally,
        StepComment,
    )
    from rewards import append_only
    from rewards.models import Job, Task

    # Append-only tables made by `rewards.append_only` (migrations after review 0011).
    later = [
        GoldLabel._meta.db_table,
        StepComment._meta.db_table,
        DefectEntry._meta.db_table,
        FindingReview._meta.db_table,
    ]

    migrations = [
        importlib.import_module("review.migrations.0002_annotation_append_only"),
        importlib.import_module("review.migrations.0005_adjudication"),
    ]
    for migration in migrations:
        migration.drop_triggers(connection)
    for table in later:
        append_only.drop_triggers(connection, table)
    try:
        with connection.cursor() as cursor:
            for table in (
                *later,
                *(
                    model._meta.db_table
                    for model in (
                        MultiRatedTally,
                        PairTally,
                        JudgmentTally,
                        LatestJudgment,
                        Adjudication,
                        Annotation,
                    )
                ),
            ):
                cursor.execute(f"DELETE FROM {table}")  # noqa: S608
        Job.objects.all().delete()
        Task.objects.all().delete()
    finally:
        for migration in migrations:
            migration.create_triggers(connection)
        for table in later:
            append_only.create_triggers(connection, table)
