"""Shared fixtures. The suite's own Harbor-shaped files live in tests/fixtures/harbor/."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.ingest_helpers import HARBOR_FIXTURES

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    """Each test starts with an empty cache (the job choices live there between requests)."""
    from django.core.cache import cache

    cache.clear()


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

    Annotations and adjudications are append-only by trigger (review migrations 0002 and
    0005); the triggers are dropped for the purge and put back at once, exactly as the
    migrations made them.
    """
    import importlib

    from django.db import connection

    from review.models import Adjudication, Annotation, JudgmentTally, LatestJudgment, PairTally
    from rewards.models import Job, Task

    migrations = [
        importlib.import_module("review.migrations.0002_annotation_append_only"),
        importlib.import_module("review.migrations.0005_adjudication"),
    ]
    for migration in migrations:
        migration.drop_triggers(connection)
    try:
        with connection.cursor() as cursor:
            for model in (PairTally, JudgmentTally, LatestJudgment, Adjudication, Annotation):
                cursor.execute(f"DELETE FROM {model._meta.db_table}")  # noqa: S608
        Job.objects.all().delete()
        Task.objects.all().delete()
    finally:
        for migration in migrations:
            migration.create_triggers(connection)
