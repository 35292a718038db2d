"""Shared fixtures. Real Harbor output lives in ../shared/harbor_samples/."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HARBOR_SAMPLES = ROOT.parent / "shared" / "harbor_samples"


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    """Each test starts with an empty cache (the job choices live there between requests)."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def harbor_samples() -> Path:
    if not HARBOR_SAMPLES.is_dir():
        pytest.fail(f"the real Harbor samples are missing: {HARBOR_SAMPLES}")
    return HARBOR_SAMPLES


def purge_review_data() -> None:
    """Empty every trial table, annotations included, for tests that need an empty database.

    Annotations are append-only by trigger (review migration 0002); the triggers are dropped
    for the purge and put back at once, exactly as the migration made them.
    """
    import importlib

    from django.db import connection

    from review.models import Annotation
    from rewards.models import Job, Task

    migration = importlib.import_module("review.migrations.0002_annotation_append_only")
    migration.drop_triggers(connection)
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {Annotation._meta.db_table}")  # noqa: S608
        Job.objects.all().delete()
        Task.objects.all().delete()
    finally:
        migration.create_triggers(connection)
