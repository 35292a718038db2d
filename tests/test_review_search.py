"""The explorer's search (`q`): names containing the text; trigram indexes on PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from review.filtering.search import search
from rewards.models import Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def _found(q: str) -> list[str]:
    return sorted(search(Trial.objects.all(), q).values_list("name", flat=True))


def test_search_matches_trial_task_agent_and_model_names_ignoring_case() -> None:
    f.make_trial(name="alpha-1", task="voltage-drop", agent="claude-code", model="m-large")
    f.make_trial(name="beta-2", task="wire-gauge", agent="terminus", model="m-small")
    f.make_trial(name="gamma-3", task="fuse-rating", agent="openhands", model="gpt-x")
    assert _found("ALPHA") == ["alpha-1"]
    assert _found("gauge") == ["beta-2"]
    assert _found("Termin") == ["beta-2"]
    assert _found("gpt") == ["gamma-3"]
    assert _found("m-") == ["alpha-1", "beta-2"]
    assert _found("nothing-like-it") == []


def test_search_treats_like_wildcards_as_text() -> None:
    f.make_trial(name="run_100%", task="t1")
    f.make_trial(name="run-1000", task="t2")
    assert _found("_100%") == ["run_100%"]


def test_explorer_search_lists_only_matching_trials(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trial(name="alpha-1", task="voltage-drop")
    f.make_trial(name="beta-2", task="wire-gauge")
    client.get("/")  # the job choices are cached from here on
    # 1 the user, 2 the tasks whose name matches, 3 the page of trials and 4 those without a
    # start (the page is not full), then the count: 5 the matching tasks again and 6 a
    # capped probe of the matching ids (the roles from the cache).
    with django_assert_num_queries(6):
        html = client.get("/?q=wire").content.decode()
    assert "beta-2" in html
    assert "alpha-1" not in html


def _trigram_indexes() -> set[str]:
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        else:
            cursor.execute("SELECT indexname FROM pg_indexes")
        return {name for (name,) in cursor.fetchall() if name.endswith("_trgm_idx")}


def test_trigram_indexes_exist_on_postgresql_only() -> None:
    expected = {
        "trial_name_trgm_idx",
        "trial_agent_name_trgm_idx",
        "trial_model_name_trgm_idx",
        "task_name_trgm_idx",
    }
    assert _trigram_indexes() == (expected if connection.vendor == "postgresql" else set())


def test_the_search_query_can_be_answered_from_the_indexes() -> None:
    """On PostgreSQL, with scans of the table ruled out, the plan reads the trigram indexes.

    An OR reaching across the join to the task table would leave the planner no way but a
    scan of every trial; with the matching tasks as constants it combines the indexes.
    """
    f.make_trials(3, task="voltage-drop")
    rows = search(Trial.objects.order_by(), "volt").values("id")
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            assert cursor.fetchall()  # SQLite: a plain scan, and the query runs
            return
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(line for (line,) in cursor.fetchall())
    assert "BitmapOr" in plan
    for index in ("trial_name_trgm_idx", "trial_agent_name_trgm_idx", "trial_model_name_trgm_idx"):
        assert index in plan
