"""Honest badges and lists (issue 22): the run badge says what it measures."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from rewards import rules
from tests import review_factories as f

pytestmark = pytest.mark.django_db

RUN_COLUMN = 6  # trial, task, agent · model, reward, scorers, judge, run, …


@pytest.mark.parametrize(
    ("badge", "exception_type", "outcome"),
    [
        ("PASS", "", "completed"),
        ("FAIL", "AgentTimeoutError", "timed out"),
        ("FAIL", "VerifierTimeoutError", "timed out"),
        ("FAIL", "RuntimeError", "errored"),
        ("FAIL", "", "errored"),
        ("FAIL", "CancelledError", "cancelled"),
        ("", "", "running"),
    ],
)
def test_the_run_badge_reads_as_what_the_run_did(
    badge: str, exception_type: str, outcome: str
) -> None:
    assert rules.run_outcome(badge, exception_type) == outcome


def _cells(html: str, trial_name: str) -> list[str]:
    rows = re.findall(r"<tr[^>]*>\s*(<td class=\"cell-trial\">.*?)</tr>", html, re.S)
    row = next(r for r in rows if f">{trial_name}<" in r)
    return re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)


def test_a_completed_run_with_reward_zero_is_never_a_green_pass(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trial(name="t-zero", reward=0.0)
    f.make_trial(name="t-timeout", reward=0.0, status="failed", exception_type="AgentTimeoutError")
    f.make_trial(name="t-broken", reward=0.0, status="failed", exception_type="RuntimeError")
    html = client.get("/").content.decode()

    zero = _cells(html, "t-zero")[RUN_COLUMN]
    assert "completed" in zero
    assert "badge-pass" not in zero
    assert "PASS" not in zero
    timeout = _cells(html, "t-timeout")[RUN_COLUMN]
    assert "timed out" in timeout
    assert 'title="AgentTimeoutError"' in timeout
    broken = _cells(html, "t-broken")[RUN_COLUMN]
    assert "errored" in broken
    assert "badge-fail" in broken


def test_the_run_filter_names_what_it_measures(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    html = client.get("/").content.decode()
    assert '<option value="PASS">Completed</option>' in html
    assert '<option value="FAIL">Errored or timed out</option>' in html
