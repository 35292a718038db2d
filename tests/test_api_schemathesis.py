"""Property-based run of the whole API from its own OpenAPI schema (Schemathesis).

Every operation gets valid and invalid requests generated from /api/openapi.json, sent
through the WSGI app in process (no network), as a staff user, who may call everything. The
one property checked: no request, however malformed, gets a server error.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import hypothesis
import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from schemathesis.checks import not_a_server_error

from config.wsgi import application
from review import tokens
from tests import review_factories as f

schema = schemathesis.openapi.from_wsgi("/api/openapi.json", application)

# Ids that exist while the test runs, so generated paths hit real rows as well as 404s.
KNOWN: dict[str, list[int]] = {"trial_id": [], "job_id": []}


@schema.hook
def map_path_parameters(
    context: Any, path_parameters: dict[str, Any] | None
) -> dict[str, Any] | None:
    if not path_parameters:
        return path_parameters
    for name, ids in KNOWN.items():
        value = path_parameters.get(name)
        if ids and isinstance(value, int) and not isinstance(value, bool) and value % 2 == 0:
            path_parameters[name] = ids[value % len(ids)]
    return path_parameters


@pytest.fixture
def in_test_transaction() -> Iterator[None]:
    """Requests go straight to the WSGI app, whose request signals would close the database
    connection inside the test's transaction (PostgreSQL then refuses to reopen it); Django's
    own test client disconnects the same handler while it runs."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@pytest.fixture
def staff_token(db: None, settings: Any, in_test_transaction: None) -> Iterator[str]:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    trials = f.write(
        f.bundle(annotations=[f.annotation("carol", "fail")]),
        f.bundle(job="nightly-43", scorers=[f.scorer(verdict="FAIL")]),
        f.hostile_bundle(),
    )
    KNOWN["trial_id"] = [t.pk for t in trials]
    KNOWN["job_id"] = sorted({t.job_id for t in trials})
    user = f.make_user("admin", staff=True)
    yield tokens.create_token(user, "schemathesis")[1]
    KNOWN["trial_id"], KNOWN["job_id"] = [], []


@schema.parametrize()
@hypothesis.settings(
    max_examples=30,
    deadline=None,
    # The token and the rows are made once per operation, not per example: that is the point.
    suppress_health_check=[
        hypothesis.HealthCheck.function_scoped_fixture,
        hypothesis.HealthCheck.too_slow,
    ],
)
def test_no_request_gets_a_server_error(case: Any, staff_token: str) -> None:
    case.call_and_validate(
        headers={"Authorization": f"Bearer {staff_token}"}, checks=[not_a_server_error]
    )
