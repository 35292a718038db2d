"""Agreement and comparison figures as JSON (token API) and CSV, matching the pages."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.test import Client

from review import tokens
from review.models import add_annotation
from rewards.models import Job
from tests import review_factories as f, test_agreement_page, test_compare_runs

# The pages' own fixtures, so the figures are checked against the same hand-computed values.
reviewers = test_agreement_page.reviewers
trials = test_agreement_page.trials
runs = test_compare_runs.runs

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _token(*roles: str, name: str = "pipeline") -> dict[str, str]:
    user = f.make_user(name, *roles)
    return {"Authorization": f"Bearer {tokens.create_token(user, 'test')[1]}"}


def _csv(response: Any) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_agreement_json_has_the_matrices_kappa_and_alpha(
    client: Client, trials: dict[str, Any]
) -> None:
    response = client.get("/api/agreement?by=failure_mode", headers=_token("analyst"))
    assert response.status_code == 200
    data = response.json()
    judge = data["comparisons"][0]
    assert judge["key"] == "judge"
    assert judge["overall"]["counts"] == [[3, 1], [1, 2]]
    assert judge["overall"]["kappa"] == pytest.approx(5 / 12)
    # Four trials: too few for an interval, and the figure says so.
    assert judge["overall"]["kappa_ci"] is None
    assert judge["overall"]["kappa_no_interval"] == "fewer than 10 trials"
    assert {g["value"] for g in judge["groups"]} == {"", "units"}
    assert data["reviewers"]["krippendorff_alpha"] == pytest.approx(4 / 9)
    assert data["reviewers"]["pairs"][0]["a"] == "rita"


def test_agreement_json_refuses_a_bad_filter_and_needs_a_token(
    client: Client, trials: dict[str, Any]
) -> None:
    headers = _token("analyst")
    bad = client.get("/api/agreement?reward_min=7", headers=headers)
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"] == ["query", "reward_min"]
    assert client.get("/api/agreement?by=colour", headers=headers).status_code == 422
    assert client.get("/api/agreement").status_code == 401


def test_compare_json_pairs_the_runs(client: Client, runs: tuple[Job, Job]) -> None:
    a, b = runs
    response = client.get(f"/api/compare?a={a.pk}&b={b.pk}", headers=_token("analyst"))
    assert response.status_code == 200
    data = response.json()
    verifier = data["outcomes"][0]
    assert verifier["key"] == "verifier"
    # task7 tied in A: not paired, counted apart (test_compare_runs.py).
    assert (verifier["both_pass"], verifier["a_only"], verifier["b_only"]) == (1, 1, 1)
    assert verifier["tied_tasks"] == 1
    assert verifier["delta"] == pytest.approx(0.0)
    assert verifier["delta_ci"] is None
    assert verifier["delta_no_interval"] == "fewer than 10 paired tasks"
    assert verifier["mcnemar_p"] == pytest.approx(1.0)
    assert [flip["task"] for flip in data["verifier_flips"]["pass_to_fail"]] == ["task2"]
    incomplete = client.get(f"/api/compare?a={a.pk}", headers=_token("reviewer", name="bot"))
    assert incomplete.status_code == 422


def test_agreement_csv_matches_the_page(client: Client, trials: dict[str, Any]) -> None:
    f.login(client, "ann", "analyst")
    response = client.get("/agreement.csv?by=judge_model")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = _csv(response)
    overall = next(r for r in rows if r["comparison"] == "judge" and r["group"] == "(all)")
    assert [overall[k] for k in ("pass_pass", "pass_fail", "fail_pass", "fail_fail")] == [
        "3",
        "1",
        "1",
        "2",
    ]
    assert float(overall["kappa"]) == pytest.approx(5 / 12)
    assert any(r["breakdown"] == "judge_model" and r["group"] == "judge-2" for r in rows)
    assert any(r["comparison"] == "reviewer_pair" and r["group"] == "rita | sam" for r in rows)
    assert client.get("/agreement.csv?reward_min=7").status_code == 400


def test_agreement_csv_neutralises_cells_a_spreadsheet_would_run(client: Client) -> None:
    trial = f.make_trial(judges=[f.judge("FAIL", failure_mode="=HYPERLINK(1)")])
    add_annotation(trial_id=trial.pk, reviewer=f.make_user("rev", "reviewer"), judgment="fail")
    f.login(client, "ann", "analyst")
    body = client.get("/agreement.csv?by=failure_mode").content.decode()
    assert "\n=HYPERLINK" not in body
    assert ",=HYPERLINK" not in body
    assert "'=HYPERLINK(1)" in body


def test_compare_csv_has_one_row_per_outcome(client: Client, runs: tuple[Job, Job]) -> None:
    a, b = runs
    f.login(client, "ann", "analyst")
    rows = _csv(client.get(f"/compare.csv?a={a.pk}&b={b.pk}"))
    assert [r["outcome"] for r in rows] == ["verifier", "judge", "human"]
    assert float(rows[0]["delta"]) == pytest.approx(0.0)
    assert rows[0]["tied_tasks"] == "1"
    assert rows[0]["delta_no_interval"] == "fewer than 10 paired tasks"
    assert client.get(f"/compare.csv?a={a.pk}&b={a.pk}").status_code == 400


@pytest.mark.parametrize("url", ["/agreement.csv", "/compare.csv"])
def test_csv_figures_need_login_and_a_role(client: Client, url: str) -> None:
    assert client.get(url).status_code == 302
    f.login(client, "nobody")
    assert client.get(url).status_code == 403
