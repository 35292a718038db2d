"""The JSON API (`/api/`): token auth, roles, every endpoint, errors as JSON, query budgets."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from review import tokens
from review.api.ninja import MAX_BUNDLES
from review.models import Annotation, ApiToken
from rewards.ingest.digest import content_digest
from rewards.ingest.writer import BundleWriter
from rewards.models import EvaluationResult, Job, Trial
from rewards.schemas import TrialBundle
from tests import review_factories as f

pytestmark = pytest.mark.django_db


# --- helpers ---------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def fast_passwords(settings: Any) -> None:
    # Users here never log in with their password; the default hasher costs ~0.3 s a user.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def make_token(username: str, *roles: str, staff: bool = False, discipline: str = "") -> str:
    user = f.make_user(username, *roles, staff=staff, discipline=discipline)
    return tokens.create_token(user, "test")[1]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def call(client: Client, method: str, url: str, token: str | None = None, body: Any = None) -> Any:
    headers = auth(token) if token else {}
    if method == "get":
        return client.get(url, headers=headers)
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return client.generic(
        method.upper(), url, data=data, content_type="application/json", headers=headers
    )


def bundle_json(bundle: TrialBundle) -> Any:
    return json.loads(bundle.model_dump_json())


@pytest.fixture
def trial() -> Trial:
    return f.make_trial(name="t-1", annotations=[f.annotation("carol", "pass")])


@pytest.fixture
def analyst() -> str:
    return make_token("ana", "analyst")


@pytest.fixture
def reviewer() -> str:
    return make_token("rita", "reviewer", discipline="electrical engineering")


@pytest.fixture
def staff() -> str:
    return make_token("admin", staff=True)


def endpoints(trial: Trial) -> list[tuple[str, str, Any]]:
    """Every operation of the API, with a body that would be accepted."""
    return [
        ("get", "/api/trials", None),
        ("get", f"/api/trials/{trial.pk}", None),
        ("get", f"/api/trials/{trial.pk}/annotations", None),
        ("post", f"/api/trials/{trial.pk}/annotations", {"judgment": "pass"}),
        ("get", "/api/jobs", None),
        ("get", f"/api/jobs/{trial.job_id}", None),
        ("post", "/api/ingest", bundle_json(f.bundle())),
    ]


def assert_json_error(response: Any, status: int) -> Any:
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert "detail" in body
    return body["detail"]


def locs(detail: list[dict[str, Any]]) -> list[list[Any]]:
    return [error["loc"] for error in detail]


# --- tokens ----------------------------------------------------------------------------------
def test_a_token_is_stored_only_as_its_sha256() -> None:
    user = f.make_user("ana", "analyst")
    row, token = tokens.create_token(user, "ci")
    assert token.startswith(f"tdk_{row.prefix}_")
    assert len(token) > 40
    assert row.digest == hashlib.sha256(token.encode()).hexdigest()
    secret = token.split("_", 2)[2]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {ApiToken._meta.db_table}")  # noqa: S608
        stored = json.dumps(cursor.fetchall(), default=str)
    assert token not in stored
    assert secret not in stored
    assert row.prefix in stored


def test_two_tokens_of_one_user_differ_and_both_work(client: Client) -> None:
    user = f.make_user("ana", "analyst")
    first = tokens.create_token(user)[1]
    second = tokens.create_token(user)[1]
    assert first != second
    assert call(client, "get", "/api/trials", first).status_code == 200
    assert call(client, "get", "/api/trials", second).status_code == 200


def test_a_revoked_token_is_refused(client: Client, analyst: str) -> None:
    assert call(client, "get", "/api/trials", analyst).status_code == 200
    assert tokens.revoke_token(analyst.split("_")[1]) is not None
    assert_json_error(call(client, "get", "/api/trials", analyst), 401)
    # Revoking twice finds no live token.
    assert tokens.revoke_token(analyst.split("_")[1]) is None


def test_the_token_of_an_inactive_user_is_refused(client: Client, analyst: str) -> None:
    User.objects.filter(username="ana").update(is_active=False)
    assert_json_error(call(client, "get", "/api/trials", analyst), 401)


def test_last_used_is_recorded_at_most_once_a_minute(client: Client, analyst: str) -> None:
    assert ApiToken.objects.get().last_used_at is None
    call(client, "get", "/api/jobs", analyst)
    first = ApiToken.objects.get().last_used_at
    assert first is not None
    call(client, "get", "/api/jobs", analyst)
    assert ApiToken.objects.get().last_used_at == first
    stale = first - tokens.LAST_USED_RESOLUTION
    ApiToken.objects.update(last_used_at=stale)
    call(client, "get", "/api/jobs", analyst)
    latest = ApiToken.objects.get().last_used_at
    assert latest is not None
    assert latest > stale


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer ",
        "Bearer tdk_00000000_not-a-real-token",
        "Bearer not-even-our-format",
        "Basic YWRtaW46YWRtaW4=",
        "Token {token}",
        "Bearer {token}x",
        "Bearer " + "x" * 5000,
    ],
)
def test_anything_but_a_live_bearer_token_is_401(client: Client, analyst: str, header: str) -> None:
    response = client.get("/api/trials", headers={"Authorization": header.format(token=analyst)})
    detail = assert_json_error(response, 401)
    assert "Bearer" in detail
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_logged_in_session_is_not_accepted_by_the_api(client: Client) -> None:
    f.login(client, "admin", staff=True)
    assert_json_error(client.get("/api/trials"), 401)
    response = client.post(
        "/api/ingest", data=json.dumps(bundle_json(f.bundle())), content_type="application/json"
    )
    assert_json_error(response, 401)
    assert not Trial.objects.exists()


# --- every endpoint: 401 and 403 -------------------------------------------------------------
@pytest.mark.parametrize("index", range(7))
def test_every_endpoint_answers_401_without_a_token(
    client: Client, trial: Trial, index: int
) -> None:
    method, url, body = endpoints(trial)[index]
    assert_json_error(call(client, method, url, None, body), 401)


@pytest.mark.parametrize("index", range(7))
@pytest.mark.parametrize("kind", ["revoked", "forged"])
def test_every_endpoint_answers_401_to_a_revoked_or_forged_token(
    client: Client, trial: Trial, staff: str, index: int, kind: str
) -> None:
    if kind == "revoked":
        tokens.revoke_token(staff.split("_")[1])
        token = staff
    else:
        # The right prefix with a made-up secret.
        token = staff[:13] + "x" * (len(staff) - 13)
    method, url, body = endpoints(trial)[index]
    assert_json_error(call(client, method, url, token, body), 401)
    assert not Annotation.objects.exclude(reviewer__username="carol").exists()


@pytest.mark.parametrize("index", range(7))
def test_every_endpoint_answers_403_to_a_user_without_a_role(
    client: Client, trial: Trial, index: int
) -> None:
    nobody = make_token("nobody")
    method, url, body = endpoints(trial)[index]
    detail = assert_json_error(call(client, method, url, nobody, body), 403)
    assert "role" in detail


@pytest.mark.parametrize("role", ["reviewer", "expert", "analyst"])
def test_only_staff_may_ingest(client: Client, role: str) -> None:
    token = make_token("someone", role)
    response = call(client, "post", "/api/ingest", token, bundle_json(f.bundle()))
    assert_json_error(response, 403)
    assert not Trial.objects.exists()


def test_an_analyst_may_read_but_not_annotate(client: Client, trial: Trial, analyst: str) -> None:
    for method, url, body in endpoints(trial)[:3] + endpoints(trial)[4:6]:
        assert call(client, method, url, analyst, body).status_code == 200, url
    response = call(
        client, "post", f"/api/trials/{trial.pk}/annotations", analyst, {"judgment": "pass"}
    )
    assert_json_error(response, 403)
    assert Annotation.objects.count() == 1


def test_the_role_is_checked_before_the_body(client: Client, trial: Trial, analyst: str) -> None:
    response = call(client, "post", "/api/ingest", analyst, "not json at all")
    assert_json_error(response, 403)
    response = call(client, "post", "/api/ingest", None, "not json at all")
    assert_json_error(response, 401)


# --- GET /api/trials -------------------------------------------------------------------------
def test_trials_lists_summaries_newest_first(client: Client, analyst: str) -> None:
    older = f.make_trial(name="t-old", agent="codex", reward=0.2, judges=[f.judge("FAIL")])
    newer = f.make_trial(name="t-new", agent="claude-code", reward=0.9)
    response = call(client, "get", "/api/trials", analyst)
    assert response.status_code == 200
    body = response.json()
    assert [item["id"] for item in body["items"]] == [newer.pk, older.pk]
    assert body["next_cursor"] is None
    item = body["items"][1]
    assert item["name"] == "t-old"
    assert item["uid"] == str(older.uid)
    assert item["agent"] == "codex"
    assert item["job"] == "nightly-42"
    assert item["task"] == "voltage-drop"
    assert item["reward"] == 0.2
    assert item["judge_verdict"] == "FAIL"
    assert item["scorer_verdict"] == "PASS"
    assert item["gate_disagreement"] == "scorers_pass_judge_fail"
    assert item["human_judgment"] == ""
    assert item["annotation_count"] == 0
    assert set(item) >= {
        "status",
        "is_valid",
        "scorer_mean",
        "run_badge",
        "human_disagreement",
        "started_at",
        "finished_at",
    }


def test_trials_take_the_explorers_filters(client: Client, analyst: str) -> None:
    f.make_trial(name="a", agent="codex", reward=0.2)
    f.make_trial(name="b", agent="claude-code", reward=0.9)
    f.make_trial(name="c", agent="claude-code", reward=0.4)

    def names(query: str) -> list[str]:
        response = call(client, "get", f"/api/trials?{query}", analyst)
        assert response.status_code == 200, response.content
        return [item["name"] for item in response.json()["items"]]

    assert names("agent=claude-code") == ["c", "b"]
    assert names("agent=claude-code&reward_min=0.5") == ["b"]
    assert names("sort=reward") == ["a", "c", "b"]
    assert names("q=zzz") == []


def test_trials_are_walked_by_cursor_without_gaps_or_repeats(client: Client, analyst: str) -> None:
    made = f.make_trials(7)
    seen: list[int] = []
    url = "/api/trials?limit=3&sort=reward"
    for _ in range(5):
        body = call(client, "get", url, analyst).json()
        seen.extend(item["id"] for item in body["items"])
        if body["next_cursor"] is None:
            break
        url = f"/api/trials?limit=3&sort=reward&cursor={body['next_cursor']}"
    assert sorted(seen) == sorted(t.pk for t in made)
    assert len(seen) == len(set(seen))


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("reward_min=2", "reward_min"),
        ("reward_min=abc", "reward_min"),
        ("reward_min=0.9&reward_max=0.1", "reward_max"),
        ("validity=bogus", "validity"),
        ("judge_verdict=maybe", "judge_verdict"),
        ("sort=-password", "sort"),
        ("job=999999", "job"),
        ("job=abc", "job"),
        ("q=" + "x" * 201, "q"),
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=ten", "limit"),
        ("cursor=%%%", "cursor"),
        ("cursor=WyJ4IiwxLDJd", "cursor"),
    ],
)
def test_an_invalid_filter_is_a_422_naming_the_parameter(
    client: Client, analyst: str, query: str, field: str
) -> None:
    f.make_trial()
    detail = assert_json_error(call(client, "get", f"/api/trials?{query}", analyst), 422)
    assert ["query", field] in locs(detail)


def test_a_cursor_made_for_another_sort_is_refused(client: Client, analyst: str) -> None:
    f.make_trials(3)
    cursor = call(client, "get", "/api/trials?limit=1", analyst).json()["next_cursor"]
    assert cursor
    detail = assert_json_error(
        call(client, "get", f"/api/trials?limit=1&sort=reward&cursor={cursor}", analyst), 422
    )
    assert locs(detail) == [["query", "cursor"]]


@pytest.mark.parametrize("count", [2, 60])
def test_trials_run_a_fixed_number_of_queries(
    client: Client, django_assert_num_queries: Callable[..., Any], analyst: str, count: int
) -> None:
    for i in range(count):
        f.make_trial(
            job=f"job-{i % 3}",
            scorers=[f.scorer(f"s{n}") for n in range(i % 4 + 1)],
            annotations=[f.annotation(f"rev{n}") for n in range(i % 3)],
        )
    ApiToken.objects.update(last_used_at=timezone.now())
    # 1 the token with its user, 2 the user's role groups, 3 the page (job and task joined)
    # newest run first, and 4 the trials without a start, only when those with one do not
    # fill the page.
    with django_assert_num_queries(3 if count > 50 else 4):
        assert call(client, "get", "/api/trials?limit=50", analyst).status_code == 200
    # Then the roles come from the cache; a job filter reads the newest jobs (then kept)
    # with their agents, models and datasets (what the pickers name them by), and the page
    # (in two parts: the job's trials do not fill it).
    job = Job.objects.values_list("id", flat=True).first()
    with django_assert_num_queries(5):
        response = call(client, "get", f"/api/trials?job={job}&error_category=x", analyst)
        assert response.status_code == 200


def test_hostile_text_comes_back_literally_as_json(client: Client, analyst: str) -> None:
    f.write(f.hostile_bundle())
    response = call(client, "get", "/api/trials", analyst)
    assert response["Content-Type"].startswith("application/json")
    assert response["X-Content-Type-Options"] == "nosniff"
    assert f.HOSTILE in response.json()["items"][0]["name"]


# --- GET /api/trials/{id} --------------------------------------------------------------------
def test_a_trial_is_its_bundle_with_annotations(client: Client, trial: Trial, analyst: str) -> None:
    response = call(client, "get", f"/api/trials/{trial.pk}", analyst)
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == trial.pk
    bundle = TrialBundle.model_validate_json(json.dumps(body["bundle"]), strict=True)
    assert bundle.trial.uid == trial.uid
    assert bundle.trial.name == "t-1"
    assert bundle.trial.trajectory is not None
    assert [a.reviewer_id for a in bundle.annotations] == ["carol"]
    assert bundle.scorers[0].name == "tests"
    assert bundle.judge_verdicts[0].verdict == "PASS"


@pytest.mark.parametrize("path", ["/api/trials/999999", "/api/trials/abc", "/api/trials/-1"])
def test_a_missing_trial_is_a_json_404(client: Client, analyst: str, path: str) -> None:
    assert_json_error(call(client, "get", path, analyst), 404)


def test_a_trial_exported_by_the_api_is_ingested_back_unchanged(
    client: Client, trial: Trial, staff: str
) -> None:
    exported = call(client, "get", f"/api/trials/{trial.pk}", staff).json()["bundle"]
    response = call(client, "post", "/api/ingest", staff, exported)
    assert response.status_code == 200
    assert response.json()["counts"] == {"ingested": 0, "unchanged": 1, "updated": 0, "invalid": 0}
    assert Annotation.objects.count() == 1


def test_a_trial_exported_by_the_api_recreates_itself_in_an_empty_database(
    client: Client, staff: str
) -> None:
    made = f.make_trial(name="t-roundtrip", earlier_rewards=[0.1])
    before = call(client, "get", f"/api/trials/{made.pk}", staff).json()["bundle"]
    Job.objects.all().delete()
    assert not Trial.objects.exists()

    response = call(client, "post", "/api/ingest", staff, before)
    assert response.json()["counts"]["ingested"] == 1
    new_id = response.json()["results"][0]["trial_id"]
    after = call(client, "get", f"/api/trials/{new_id}", staff).json()["bundle"]
    assert content_digest(TrialBundle.model_validate(after)) == content_digest(
        TrialBundle.model_validate(before)
    )
    assert after["trial"] == before["trial"]


# --- annotations -----------------------------------------------------------------------------
def test_annotations_are_listed_oldest_first(client: Client, trial: Trial, reviewer: str) -> None:
    call(client, "post", f"/api/trials/{trial.pk}/annotations", reviewer, {"judgment": "fail"})
    response = call(client, "get", f"/api/trials/{trial.pk}/annotations", reviewer)
    assert response.status_code == 200
    assert [(a["reviewer"], a["judgment"]) for a in response.json()] == [
        ("carol", "pass"),
        ("rita", "fail"),
    ]


def test_annotations_of_a_missing_trial_are_a_404(client: Client, reviewer: str) -> None:
    assert_json_error(call(client, "get", "/api/trials/999/annotations", reviewer), 404)
    response = call(client, "post", "/api/trials/999/annotations", reviewer, {"judgment": "pass"})
    assert_json_error(response, 404)


def test_an_annotation_is_made_as_the_token_user_and_leaves_the_reward(
    client: Client, trial: Trial, reviewer: str
) -> None:
    results_before = list(EvaluationResult.objects.values_list("id", "reward", "is_current"))
    response = call(
        client,
        "post",
        f"/api/trials/{trial.pk}/annotations",
        reviewer,
        {
            "judgment": "fail",
            "categories": [" unit  mismatch ", "tool failure"],
            "notes": "V vs mV",
        },
    )
    assert response.status_code == 201
    body = response.json()
    assert body["reviewer"] == "rita"
    assert body["reviewer_discipline"] == "electrical engineering"
    assert body["categories"] == ["unit mismatch", "tool failure"]
    assert body["reward_seen"] == trial.reward
    annotation = Annotation.objects.get(pk=body["id"])
    assert annotation.reviewer.username == "rita"
    fresh = Trial.objects.get(pk=trial.pk)
    assert fresh.reward == trial.reward
    assert fresh.annotation_count == 2
    assert fresh.human_judgment == "mixed"
    assert (
        list(EvaluationResult.objects.values_list("id", "reward", "is_current")) == results_before
    )


@pytest.mark.parametrize(
    "extra",
    [
        {"reviewer": "carol"},
        {"reviewer_id": "carol"},
        {"reviewer_discipline": "law"},
        {"reward": 1.0},
        {"reward_seen": 1.0},
        {"created_at": "2020-01-01T00:00:00Z"},
    ],
)
def test_an_annotation_cannot_name_its_reviewer_or_reward(
    client: Client, trial: Trial, reviewer: str, extra: dict[str, Any]
) -> None:
    response = call(
        client,
        "post",
        f"/api/trials/{trial.pk}/annotations",
        reviewer,
        {"judgment": "pass", **extra},
    )
    detail = assert_json_error(response, 422)
    assert locs(detail) == [["body", next(iter(extra))]]
    assert Annotation.objects.count() == 1
    assert Trial.objects.get(pk=trial.pk).reward == trial.reward


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "judgment"),
        ({"judgment": "maybe"}, "judgment"),
        ({"judgment": "pass", "categories": "a,b"}, "categories"),
        ({"judgment": "pass", "categories": ["x" * 65]}, "categories"),
        ({"judgment": "pass", "categories": ["a,b"]}, "categories"),
        ({"judgment": "pass", "categories": [f"c{i}" for i in range(21)]}, "categories"),
        ({"judgment": "pass", "notes": "x" * 20001}, "notes"),
        ({"judgment": "pass", "notes": 5}, "notes"),
    ],
)
def test_a_bad_annotation_is_a_422_naming_the_field(
    client: Client, trial: Trial, reviewer: str, body: dict[str, Any], field: str
) -> None:
    response = call(client, "post", f"/api/trials/{trial.pk}/annotations", reviewer, body)
    detail = assert_json_error(response, 422)
    assert any(field in loc for loc in locs(detail)), detail
    assert Annotation.objects.count() == 1


def test_a_duplicate_category_is_kept_once_as_on_the_trial_page(
    client: Client, trial: Trial, reviewer: str
) -> None:
    response = call(
        client,
        "post",
        f"/api/trials/{trial.pk}/annotations",
        reviewer,
        {"judgment": "defer", "categories": ["a", " a ", ""]},
    )
    assert response.status_code == 201
    assert response.json()["categories"] == ["a"]


def test_an_annotation_body_that_is_not_json_is_a_400(
    client: Client, trial: Trial, reviewer: str
) -> None:
    response = call(client, "post", f"/api/trials/{trial.pk}/annotations", reviewer, "{nope")
    assert_json_error(response, 400)


# --- jobs ------------------------------------------------------------------------------------
def test_jobs_list_their_trial_counts(
    client: Client, django_assert_num_queries: Callable[..., Any], analyst: str
) -> None:
    f.make_trials(3, job="job-a", reward=0.9)
    f.make_trials(2, job="job-b", reward=0.1, annotations=[f.annotation()])
    ApiToken.objects.update(last_used_at=timezone.now())
    # 1 the token, 2 role groups, 3 the jobs, 4 their kept tallies summed per job, 5 the
    # tasks confirmed defective (none; then cached: review.science.exclusions).
    with django_assert_num_queries(5):
        response = call(client, "get", "/api/jobs", analyst)
    assert response.status_code == 200
    assert response.json()["next_cursor"] is None
    jobs = {job["name"]: job for job in response.json()["items"]}
    assert jobs["job-a"]["summary"]["trial_count"] == 3
    assert jobs["job-b"]["summary"]["trial_count"] == 2
    assert jobs["job-b"]["summary"]["reviewed"] == 2
    assert jobs["job-a"]["summary"]["mean_reward"] == pytest.approx(0.9)


def test_jobs_are_listed_newest_first_a_keyset_page_at_a_time(
    client: Client, django_assert_num_queries: Callable[..., Any], analyst: str
) -> None:
    from rewards.models import Job

    for i in range(5):
        f.make_trial(job=f"job-{i}")
    newest_first = list(Job.objects.order_by("-id").values_list("name", flat=True))
    seen: list[str] = []
    url = "/api/jobs?limit=2"
    pages = 0
    while url:
        ApiToken.objects.update(last_used_at=timezone.now())
        # 1 the token, 2 role groups and 5 the tasks confirmed defective (the first page
        # only: then from the cache), 3 the page of jobs, 4 their kept tallies.
        with django_assert_num_queries(5 if pages == 0 else 3):
            body = call(client, "get", url, analyst).json()
        assert len(body["items"]) <= 2
        seen += [job["name"] for job in body["items"]]
        assert all(job["summary"]["trial_count"] == 1 for job in body["items"])
        cursor = body["next_cursor"]
        url = f"/api/jobs?limit=2&cursor={cursor}" if cursor else ""
        pages += 1
    assert pages == 3
    assert seen == newest_first


def test_a_mangled_jobs_cursor_is_a_validation_error(client: Client, analyst: str) -> None:
    f.make_trial()
    response = call(client, "get", "/api/jobs?cursor=not-a-cursor", analyst)
    assert_json_error(response, 422)


def test_a_job_has_its_summary_by_task_and_by_agent(client: Client, analyst: str) -> None:
    trials = f.make_trials(2, job="job-a", task="t1", agent="codex")
    f.make_trial(job="job-a", task="t2", agent="claude-code")
    response = call(client, "get", f"/api/jobs/{trials[0].job_id}", analyst)
    assert response.status_code == 200
    body = response.json()
    assert body["name"] == "job-a"
    assert body["summary"]["trial_count"] == 3
    assert {row["task"]: row["summary"]["trial_count"] for row in body["by_task"]} == {
        "t1": 2,
        "t2": 1,
    }
    assert {row["agent"] for row in body["by_agent"]} == {"codex", "claude-code"}
    assert "config" in body


def test_a_missing_job_is_a_json_404(client: Client, analyst: str) -> None:
    assert_json_error(call(client, "get", "/api/jobs/12345", analyst), 404)


# --- POST /api/ingest ------------------------------------------------------------------------
def test_ingest_stores_one_bundle_and_summarises(client: Client, staff: str) -> None:
    bundle = f.bundle(name="t-new")
    response = call(client, "post", "/api/ingest", staff, bundle_json(bundle))
    assert response.status_code == 200
    body = response.json()
    assert body["counts"] == {"ingested": 1, "unchanged": 0, "updated": 0, "invalid": 0}
    [result] = body["results"]
    assert result["status"] == "ingested"
    assert result["job"] == "nightly-42"
    assert result["trial"] == "t-new"
    assert result["reason"] == ""
    assert Trial.objects.get(pk=result["trial_id"]).uid == bundle.trial.uid


def test_ingest_counts_a_trial_stored_with_its_reward_rejected_as_invalid(
    client: Client, staff: str
) -> None:
    # As `manage.py ingest` counts it: stored (ingested), and invalid, the reason given.
    reason = "reward 0.93 rejected: the output does not parse, so only 0.0 is valid"
    rejected = [
        f.bundle(name=f"bad-{i}", reward=0.0, output_parseable=False, errors=[reason])
        for i in range(2)
    ]
    body = [bundle_json(b) for b in [*rejected, f.bundle(name="good")]]
    response = call(client, "post", "/api/ingest", staff, body)
    assert response.status_code == 200
    out = response.json()
    assert out["counts"] == {"ingested": 3, "unchanged": 0, "updated": 0, "invalid": 2}
    assert [(r["trial"], r["status"], r["reason"]) for r in out["results"]] == [
        ("bad-0", "ingested", f"stored as invalid: {reason}"),
        ("bad-1", "ingested", f"stored as invalid: {reason}"),
        ("good", "ingested", ""),
    ]
    assert sorted(Trial.objects.filter(is_valid=False).values_list("name", flat=True)) == [
        "bad-0",
        "bad-1",
    ]
    # The same bundles again change nothing, and nothing new is counted invalid.
    again = call(client, "post", "/api/ingest", staff, body).json()
    assert again["counts"] == {"ingested": 0, "unchanged": 3, "updated": 0, "invalid": 0}


def test_ingest_is_idempotent_and_reports_updates(client: Client, staff: str) -> None:
    bundles = [f.bundle(), f.bundle()]
    body = [bundle_json(b) for b in bundles]
    first = call(client, "post", "/api/ingest", staff, body).json()
    assert first["counts"] == {"ingested": 2, "unchanged": 0, "updated": 0, "invalid": 0}
    again = call(client, "post", "/api/ingest", staff, body).json()
    assert again["counts"] == {"ingested": 0, "unchanged": 2, "updated": 0, "invalid": 0}
    assert Trial.objects.count() == 2

    body[1]["results"][0]["reward"] = 0.25
    body[1]["results"][0]["artifact_digest"] = "b" * 64
    changed = call(client, "post", "/api/ingest", staff, body).json()
    assert changed["counts"] == {"ingested": 0, "unchanged": 1, "updated": 1, "invalid": 0}
    assert Trial.objects.get(uid=bundles[1].trial.uid).reward == 0.25


def test_ingest_reports_a_trial_it_cannot_store_as_invalid(client: Client, staff: str) -> None:
    good = f.bundle(name="good")
    clash = f.bundle(name="clash")
    f.write(clash)
    # Same uid as a stored trial, but another job and name: the writer refuses it.
    other = f.bundle(name="other", job="another-job")
    stolen = bundle_json(other)
    stolen["trial"]["uid"] = str(clash.trial.uid)
    response = call(client, "post", "/api/ingest", staff, [bundle_json(good), stolen])
    assert response.status_code == 200
    body = response.json()
    assert body["counts"] == {"ingested": 1, "unchanged": 0, "updated": 0, "invalid": 1}
    good_result, invalid = body["results"]
    assert (good_result["trial"], good_result["status"]) == ("good", "ingested")
    assert (invalid["job"], invalid["trial"], invalid["status"]) == (
        "another-job",
        "other",
        "invalid",
    )
    assert invalid["trial_id"] is None
    assert "uid" in invalid["reason"]
    assert Trial.objects.get(uid=clash.trial.uid).name == "clash"


def test_a_trial_the_writer_fails_on_is_invalid_and_the_others_are_stored(
    client: Client, staff: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_batch = BundleWriter._write_batch

    def failing(self: BundleWriter, batch: Any) -> Any:
        if any(b.name == "boom" for b in batch):
            raise RuntimeError("a bug while writing")
        return write_batch(self, batch)

    monkeypatch.setattr(BundleWriter, "_write_batch", failing)
    body = [bundle_json(f.bundle(name="fine")), bundle_json(f.bundle(name="boom"))]
    response = call(client, "post", "/api/ingest", staff, body)
    assert response.status_code == 200
    result = response.json()
    assert result["counts"] == {"ingested": 1, "unchanged": 0, "updated": 0, "invalid": 1}
    assert result["results"][1]["reason"] == "could not be stored (RuntimeError)"
    assert list(Trial.objects.values_list("name", flat=True)) == ["fine"]


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"job": {"name": "j"}}, ["body", "task"]),
        ("not json", ["body"]),
        ("[]", ["body"]),
        ('{"format": NaN}', ["body"]),
        ("[" * 200 + "]" * 200, ["body"]),
        (42, ["body"]),
    ],
)
def test_a_malformed_ingest_body_is_a_422_with_the_field_path(
    client: Client, staff: str, body: Any, loc: list[Any]
) -> None:
    detail = assert_json_error(call(client, "post", "/api/ingest", staff, body), 422)
    assert loc in locs(detail) or any(found[: len(loc)] == loc for found in locs(detail))
    assert not Trial.objects.exists()


# JSON literals no column can hold, as a .jsonl line may carry them (issue 26).
HUGE = "1" + "0" * 500 + ".5"  # a 501-digit number: beyond a double


def _with_literal(data: Any, literal: str) -> str:
    return json.dumps(data).replace('"PLACE"', literal)


@pytest.mark.parametrize(
    ("literal", "message"),
    [
        (HUGE, "a number outside a double's range"),
        ("1e400", "a number outside a double's range"),
        ("-Infinity", "Infinity is not a number"),
        ("NaN", "NaN is not a number"),
    ],
)
def test_a_number_no_column_can_hold_is_kept_as_text_and_listed_as_a_problem(
    client: Client, staff: str, literal: str, message: str
) -> None:
    body = bundle_json(f.bundle(name="t1"))
    body["trial"]["trajectory"]["steps"][0]["extra"] = {"score": "PLACE"}
    response = call(client, "post", "/api/ingest", staff, _with_literal(body, literal))
    assert response.status_code == 200, response.content
    assert response.json()["counts"]["ingested"] == 1
    trial = Trial.objects.get(name="t1")
    assert trial.reward == 0.9
    trajectory = trial.detail.trajectory
    assert trajectory is not None
    assert trajectory["steps"][0]["extra"] == {"score": None}
    assert trial.detail.ingest_problems == [
        {
            "file": "API body",
            "field": "trial.trajectory.steps[0].extra.score",
            "message": f"{message}: no column can hold it, kept as text only",
            "raw": literal,
        }
    ]
    assert trial.problem_count == 1


def test_each_mended_spot_of_a_list_body_lands_on_its_own_trial(client: Client, staff: str) -> None:
    clean, surrogate, huge = (bundle_json(f.bundle(name=n)) for n in ("clean", "text", "num"))
    surrogate["trial"]["final_response"] = "PLACE"
    huge["trial"]["config"] = {"fine": 0.5, "big": "PLACE"}
    text = _with_literal([clean, surrogate], '"x\\ud800y"')
    body = text[:-1] + ", " + _with_literal(huge, HUGE) + "]"
    response = call(client, "post", "/api/ingest", staff, body)
    assert response.status_code == 200, response.content
    assert response.json()["counts"]["ingested"] == 3
    stored = {t.name: t for t in Trial.objects.select_related("detail")}
    assert stored["clean"].detail.ingest_problems == []
    assert stored["text"].detail.final_response == "x\\ud800y"
    [escaped] = stored["text"].detail.ingest_problems
    assert (escaped["field"], escaped["raw"]) == ("trial.final_response", "x\\ud800y")
    [number] = stored["num"].detail.ingest_problems
    assert (number["field"], number["raw"]) == ("trial.config.big", HUGE)
    assert stored["num"].detail.config == {"fine": 0.5, "big": None}


def test_a_metric_no_column_can_hold_is_left_out_and_its_trial_stored(
    client: Client, staff: str
) -> None:
    """A mended metric is null, which a metric may not be: it is left out (its text in the
    problem), in a list body too, as a .jsonl line's is; a reward so mended stays a 422."""
    first, second = (bundle_json(f.bundle(name=n)) for n in ("first", "second"))
    second["results"][0]["metrics"]["odd"] = "PLACE"
    response = call(client, "post", "/api/ingest", staff, _with_literal([first, second], "NaN"))
    assert response.status_code == 200, response.content
    assert response.json()["counts"]["ingested"] == 2
    stored = Trial.objects.select_related("detail").get(name="second")
    [problem] = stored.detail.ingest_problems
    assert (problem["field"], problem["raw"]) == ("results[0].metrics.odd", "NaN")
    assert "odd" not in stored.results.get().metrics
    # A list too long is refused as a whole, mended numbers or not (a 422, never a 500).
    too_many = [first] * MAX_BUNDLES + [second]
    response = call(client, "post", "/api/ingest", staff, _with_literal(too_many, "NaN"))
    assert_json_error(response, 422)
    third = bundle_json(f.bundle(name="third"))
    third["results"][0]["reward"] = "PLACE"
    response = call(client, "post", "/api/ingest", staff, _with_literal(third, "NaN"))
    detail = assert_json_error(response, 422)
    assert ["body", "results", 0, "reward"] in locs(detail)
    assert not Trial.objects.filter(name="third").exists()


@pytest.mark.parametrize(
    ("section", "field", "value"),
    [
        ("trial", "started_at", "0001-01-01T00:00:00+05:00"),
        ("job", "finished_at", "9999-12-31T23:59:59-05:00"),
        ("trial", "n_input_tokens", 10**30),
        ("trial", "exit_code", 10**12),
    ],
)
def test_an_out_of_range_value_is_a_422_not_a_500(
    client: Client, staff: str, section: str, field: str, value: Any
) -> None:
    body = bundle_json(f.bundle())
    body[section][field] = value
    detail = assert_json_error(call(client, "post", "/api/ingest", staff, body), 422)
    assert locs(detail)[0][0] == "body"
    assert not Trial.objects.exists()


def test_an_invalid_bundle_in_a_list_is_named_by_its_index(client: Client, staff: str) -> None:
    good = bundle_json(f.bundle())
    bad = bundle_json(f.bundle())
    bad["results"][0]["reward"] = "0.9"
    bad["trial"]["uid"] = "not-a-uuid"
    detail = assert_json_error(call(client, "post", "/api/ingest", staff, [good, bad]), 422)
    assert ["body", 1, "trial", "uid"] in locs(detail)
    assert ["body", 1, "results", 0, "reward"] in locs(detail)
    # All or nothing per request body: nothing is stored when any bundle does not validate.
    assert not Trial.objects.exists()


def test_ingest_validation_errors_never_echo_the_input(client: Client, staff: str) -> None:
    bad = bundle_json(f.bundle())
    bad["trial"]["uid"] = f.HOSTILE
    bad["trial"]["status"] = f.HOSTILE
    bad["results"][0]["reward"] = f.HOSTILE
    bad["task"]["output_format"] = f.HOSTILE
    bad["job"][f.HOSTILE] = 1
    response = call(client, "post", "/api/ingest", staff, bad)
    assert_json_error(response, 422)
    text = response.content.decode()
    assert "<script>" not in text
    assert "alert" not in text
    assert "onerror" not in text


def test_ingest_takes_at_most_1000_bundles(client: Client, staff: str) -> None:
    detail = assert_json_error(call(client, "post", "/api/ingest", staff, [{}] * 1001), 422)
    assert detail == [
        {
            "loc": ["body"],
            "msg": "List should have at most 1000 items after validation, not 1001",
            "type": "too_long",
        }
    ]


def test_a_body_over_the_upload_limit_is_a_json_413(
    client: Client, staff: str, settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    detail = assert_json_error(
        call(client, "post", "/api/ingest", staff, bundle_json(f.bundle())), 413
    )
    assert "1000-byte" in detail
    assert not Trial.objects.exists()


# --- errors are JSON, always -----------------------------------------------------------------
@pytest.mark.parametrize("path", ["/api/", "/api/nope", "/api/trials/", "/api/trials/1/x"])
def test_unknown_api_paths_are_json_404s(client: Client, analyst: str, path: str) -> None:
    assert_json_error(call(client, "get", path, analyst), 404)


def test_no_api_path_asks_for_a_csrf_token(staff: str) -> None:
    client = Client(enforce_csrf_checks=True)
    body = json.dumps(bundle_json(f.bundle()))
    response = client.post(
        "/api/ingest", data=body, content_type="application/json", headers=auth(staff)
    )
    assert response.status_code == 200
    for path in ("/api/nope", "/api/trials/abc/annotations", "/api/openapi.json", "/api/docs"):
        response = client.post(path, data="{}", content_type="application/json")
        assert response.status_code in (404, 405), path
        assert response["Content-Type"].startswith("application/json"), path


def test_a_wrong_method_is_a_json_405(client: Client, analyst: str) -> None:
    response = call(client, "delete", "/api/trials", analyst)
    assert_json_error(response, 405)
    assert "GET" in response["Allow"]


def test_a_server_error_is_json_without_a_traceback(
    client: Client, analyst: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    f.make_trial()

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr("review.api.trials.TrialListItem.of", boom)
    response = call(client, "get", "/api/trials", analyst)
    detail = assert_json_error(response, 500)
    assert "secret" not in json.dumps(detail)


# --- OpenAPI and docs ------------------------------------------------------------------------
def test_the_openapi_schema_describes_every_operation(client: Client) -> None:
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    schema = response.json()
    assert set(schema["paths"]) == {
        "/api/trials",
        "/api/trials/{trial_id}",
        "/api/trials/{trial_id}/annotations",
        "/api/trials/{trial_id}/comments",
        "/api/trials/{trial_id}/findings",
        "/api/jobs",
        "/api/jobs/{job_id}",
        "/api/ingest",
        "/api/agreement",
        "/api/compare",
        "/api/calibration",
        "/api/batches",
        "/api/batches/{batch_id}",
        "/api/batches/{batch_id}/cancel",
        "/api/defects",
        "/api/defects/{task_id}",
        "/api/defects/manifest",
    }
    names = {p["name"] for p in schema["paths"]["/api/trials"]["get"]["parameters"]}
    assert {"limit", "cursor", "agent", "reward_min", "disagreement", "integrity", "sort"} <= names
    assert "after" not in names
    assert "TrialBundle" in schema["components"]["schemas"]
    assert schema["components"]["securitySchemes"]["TokenAuth"]["scheme"] == "bearer"


def test_the_docs_page_needs_a_login(client: Client) -> None:
    response = client.get("/api/docs")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_the_docs_page_uses_local_assets_and_no_inline_script(client: Client) -> None:
    f.login(client, "reader", "analyst")
    response = client.get("/api/docs")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/ninja/swagger-ui-bundle.js" in html
    assert "cdn" not in html.lower()
    for tag in html.split("<script")[1:]:
        head = tag.split(">", 1)[0]
        assert "src=" in head or 'type="application/json"' in head
    assert "unsafe-inline" not in response.get("Content-Security-Policy", "")


# --- create_token ----------------------------------------------------------------------------
def test_create_token_prints_a_token_that_works_until_revoked(client: Client) -> None:
    f.make_user("ana", "analyst")
    out, err = io.StringIO(), io.StringIO()
    call_command("create_token", "ana", "--name", "nightly", stdout=out, stderr=err)
    token = out.getvalue().strip()
    assert token.startswith("tdk_")
    assert "nightly" in ApiToken.objects.get().name
    assert token not in err.getvalue()
    assert call(client, "get", "/api/trials", token).status_code == 200

    listing = io.StringIO()
    call_command("create_token", "ana", "--list", stdout=listing)
    prefix = token.split("_")[1]
    assert prefix in listing.getvalue()
    assert token not in listing.getvalue()
    assert "active" in listing.getvalue()

    call_command("create_token", "--revoke", prefix, stdout=io.StringIO())
    assert_json_error(call(client, "get", "/api/trials", token), 401)
    listing = io.StringIO()
    call_command("create_token", "ana", "--list", stdout=listing)
    assert "revoked" in listing.getvalue()


def test_create_token_refuses_unknown_and_inactive_users() -> None:
    with pytest.raises(CommandError):
        call_command("create_token", "ghost", stdout=io.StringIO())
    user = f.make_user("gone", "analyst")
    user.is_active = False
    user.save()
    with pytest.raises(CommandError):
        call_command("create_token", "gone", stdout=io.StringIO())
    with pytest.raises(CommandError):
        call_command("create_token", "--revoke", "00000000", stdout=io.StringIO())
    assert not ApiToken.objects.exists()
