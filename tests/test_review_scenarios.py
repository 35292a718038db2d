"""The staff scenario editor: versioned scorer lists; seeded tasks keep the version they froze."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from rewards.models import Scenario, ScenarioVersion, Task
from rewards.scoring import scenarios
from tests import review_factories as f

pytestmark = pytest.mark.django_db

SPECS: list[dict[str, Any]] = [
    {"name": "tests", "type": "command", "command": "pytest -q"},
    {"name": "skips", "type": "no_new_skips"},
]


def test_staff_see_the_scenarios(client: Client) -> None:
    scenarios.create_scenario("python-fix", SPECS, description="Fix a bug in a Python repo")
    f.login(client, "admin", staff=True)
    response = client.get("/scenarios/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "python-fix" in html
    assert "Fix a bug in a Python repo" in html
    assert "v1" in html


@pytest.mark.parametrize("count", [1, 6])
def test_the_pages_run_a_fixed_number_of_queries(
    client: Client, django_assert_num_queries: Callable[..., Any], count: int
) -> None:
    for i in range(count):
        version = scenarios.create_scenario(f"s-{i}", SPECS)
        scenarios.save_version(version.scenario, SPECS[:1])
    f.login(client, "admin", staff=True)
    # 1 user, 2 scenarios with their latest version and seeded-task counts (the session
    # comes from the cache; staff need no role groups read).
    with django_assert_num_queries(2):
        assert client.get("/scenarios/").status_code == 200
    scenario = Scenario.objects.first()
    assert scenario is not None
    # 1 user, 2 the scenario, 3 its versions with their seeded-task counts.
    with django_assert_num_queries(3):
        assert client.get(f"/scenarios/{scenario.pk}/").status_code == 200


@pytest.mark.parametrize("roles", [("reviewer",), ("expert",), ("analyst",), ()])
def test_only_staff_may_see_or_edit_scenarios(client: Client, roles: tuple[str, ...]) -> None:
    version = scenarios.create_scenario("python-fix", SPECS)
    f.login(client, "someone", *roles)
    pk = version.scenario_id
    assert client.get("/scenarios/").status_code == 403
    assert client.get(f"/scenarios/{pk}/").status_code == 403
    payload = {"name": "x", "scorers": json.dumps(SPECS)}
    assert client.post("/scenarios/new/", payload).status_code == 403
    assert client.post(f"/scenarios/{pk}/versions/", payload).status_code == 403
    assert ScenarioVersion.objects.count() == 1


def test_anonymous_users_are_sent_to_log_in(client: Client) -> None:
    response = client.get("/scenarios/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_wrong_methods_are_refused(client: Client) -> None:
    version = scenarios.create_scenario("python-fix", SPECS)
    f.login(client, "admin", staff=True)
    assert client.get("/scenarios/new/").status_code == 405
    assert client.post("/scenarios/").status_code == 405
    assert client.get(f"/scenarios/{version.scenario_id}/versions/").status_code == 405


def test_posts_need_the_csrf_token() -> None:
    client = Client(enforce_csrf_checks=True)
    f.login(client, "admin", staff=True)
    response = client.post("/scenarios/new/", {"name": "x", "scorers": json.dumps(SPECS)})
    assert response.status_code == 403
    assert not Scenario.objects.exists()


def test_creating_a_scenario_stores_version_one(client: Client) -> None:
    f.login(client, "admin", staff=True)
    response = client.post(
        "/scenarios/new/", {"name": "python-fix", "description": "", "scorers": json.dumps(SPECS)}
    )
    scenario = Scenario.objects.get(name="python-fix")
    assert response.status_code == 302
    assert response["Location"] == f"/scenarios/{scenario.pk}/"
    version = scenario.versions.get()
    assert (version.number, version.scorer_specs, version.created_by) == (1, SPECS, "admin")


@pytest.mark.parametrize(
    ("scorers", "message"),
    [
        ("[{", "The scorers are not valid JSON"),
        (
            json.dumps([{"name": "slow", "type": "command", "command": "x", "timeout_s": 7200}]),
            "scorer 1 (&#x27;slow&#x27;): field &#x27;timeout_s&#x27;",
        ),
        (json.dumps([{"name": "z", "type": "zip"}]), "&#x27;zip&#x27; is not a scorer type"),
    ],
)
def test_bad_scorers_are_refused_naming_the_scorer_and_field(
    client: Client, scorers: str, message: str
) -> None:
    f.login(client, "admin", staff=True)
    response = client.post("/scenarios/new/", {"name": "python-fix", "scorers": scorers})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Scenario.objects.exists()


def test_a_duplicate_name_is_refused(client: Client) -> None:
    scenarios.create_scenario("python-fix", SPECS)
    f.login(client, "admin", staff=True)
    response = client.post("/scenarios/new/", {"name": "python-fix", "scorers": "[]"})
    assert response.status_code == 400
    assert "already exists" in response.content.decode()


def test_saving_adds_a_version_and_seeded_tasks_keep_theirs(client: Client) -> None:
    first = scenarios.create_scenario("python-fix", SPECS)
    trial = f.make_trial(task="fix-add")
    Task.objects.filter(pk=trial.task_id).update(
        scenario_version=first, scorer_specs=scenarios.snapshot(first)
    )
    f.login(client, "admin", staff=True)
    edited = [{"name": "secrets", "type": "forbid_secrets", "required": False}]
    response = client.post(
        f"/scenarios/{first.scenario_id}/versions/",
        {"description": "now stricter", "scorers": json.dumps(edited)},
    )
    assert response.status_code == 302
    versions = list(ScenarioVersion.objects.order_by("number"))
    assert [(v.number, v.scorer_specs) for v in versions] == [(1, SPECS), (2, edited)]
    task = Task.objects.get(pk=trial.task_id)
    assert (task.scenario_version_id, task.scorer_specs) == (first.pk, SPECS)

    html = client.get(f"/scenarios/{first.scenario_id}/").content.decode()
    assert "now stricter" in html
    assert "forbid_secrets" in html
    assert "advisory" in html
    # The trial page says which version its task froze.
    f.login(client, "rita", "reviewer")
    page = client.get(f"/trials/{trial.pk}/").content.decode()
    assert "python-fix" in page
    assert "v1" in page


def test_a_bad_edit_saves_nothing(client: Client) -> None:
    first = scenarios.create_scenario("python-fix", SPECS)
    f.login(client, "admin", staff=True)
    response = client.post(
        f"/scenarios/{first.scenario_id}/versions/",
        {"scorers": json.dumps([{"name": "p", "type": "file_exists", "path": "../etc"}])},
    )
    assert response.status_code == 400
    assert "must not climb out" in response.content.decode()
    assert ScenarioVersion.objects.count() == 1


def test_hostile_text_is_shown_escaped(client: Client) -> None:
    hostile = "<script>alert(1)</script>"
    scenarios.create_scenario(hostile, [{"name": hostile, "type": "llm_judge", "rubric": hostile}])
    f.login(client, "admin", staff=True)
    scenario = Scenario.objects.get()
    for url in ("/scenarios/", f"/scenarios/{scenario.pk}/"):
        html = client.get(url).content.decode()
        assert hostile not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


# --- the row editor -----------------------------------------------------------------------
def rows_post(*rows: dict[str, str], description: str = "") -> dict[str, str]:
    data = {
        "editor": "rows",
        "description": description,
        "scorer-TOTAL_FORMS": str(len(rows)),
        "scorer-INITIAL_FORMS": "0",
        "scorer-MIN_NUM_FORMS": "0",
        "scorer-MAX_NUM_FORMS": "1000",
    }
    for index, row in enumerate(rows):
        data.update({f"scorer-{index}-{key}": value for key, value in row.items()})
    return data


def test_the_row_editor_shows_one_row_per_scorer(client: Client) -> None:
    version = scenarios.create_scenario(
        "python-fix",
        [
            *SPECS,
            {"name": "scope", "type": "allowed_paths", "patterns": ["src/*", "tests/*"]},
            {"name": "skips!", "type": "no_new_skips", "required": True},
        ],
    )
    f.login(client, "admin", staff=True)
    html = client.get(f"/scenarios/{version.scenario_id}/").content.decode()
    assert 'name="scorer-TOTAL_FORMS" value="6"' in html  # four scorers, two empty rows
    assert 'name="scorer-0-command" value="pytest -q"' in html
    assert "src/*\ntests/*</textarea>" in html
    assert '<option value="allowed_paths" selected>' in html
    assert '<option value="yes" selected>required</option>' in html


def test_saving_rows_stores_each_types_own_fields(client: Client) -> None:
    version = scenarios.create_scenario("python-fix", SPECS)
    f.login(client, "admin", staff=True)
    response = client.post(
        f"/scenarios/{version.scenario_id}/versions/",
        rows_post(
            # A row keeps only its type's fields, whatever else was typed into it.
            {
                "name": "tests",
                "type": "command",
                "command": "pytest -q",
                "timeout_s": "60",
                "limit": "3",
            },
            {
                "name": "scope",
                "type": "allowed_paths",
                "patterns": "src/*\n\n tests/* \n",
                "required": "no",
            },
            {"name": "", "type": ""},
            {"name": "gone", "type": "forbid_secrets", "DELETE": "on"},
            {"name": "style", "type": "llm_judge", "rubric": "Small diffs."},
            description="rows",
        ),
    )
    assert response.status_code == 302
    latest = ScenarioVersion.objects.get(number=2)
    assert latest.scorer_specs == [
        {"name": "tests", "type": "command", "command": "pytest -q", "timeout_s": 60},
        {
            "name": "scope",
            "type": "allowed_paths",
            "required": False,
            "patterns": ["src/*", "tests/*"],
        },
        {"name": "style", "type": "llm_judge", "rubric": "Small diffs."},
    ]
    assert latest.scenario.description == "rows"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"name": "size", "type": "max_files_changed", "limit": "-1"}, "field &#x27;limit&#x27;"),
        ({"name": "tests", "type": "command"}, "field &#x27;command&#x27;: is required"),
        ({"name": "scope", "type": "forbid_paths"}, "field &#x27;patterns&#x27;"),
        ({"name": "", "type": "forbid_secrets"}, "field &#x27;name&#x27;"),
        ({"name": "size", "type": "max_files_changed", "limit": "many"}, "wrong kind"),
    ],
)
def test_bad_rows_save_nothing_and_say_why(
    client: Client, row: dict[str, str], message: str
) -> None:
    version = scenarios.create_scenario("python-fix", SPECS)
    f.login(client, "admin", staff=True)
    response = client.post(f"/scenarios/{version.scenario_id}/versions/", rows_post(row))
    assert response.status_code == 400
    assert message in response.content.decode()
    assert ScenarioVersion.objects.count() == 1
