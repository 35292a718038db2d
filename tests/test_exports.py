"""Exports: CSV, JSONL, Parquet and annotations, from the URLs and the command."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from review.exports import BASE_COLUMNS, neutralise
from review.models import add_annotation
from rewards.models import Trial
from tests.conftest import purge_review_data
from tests.review_factories import (
    START,
    annotation,
    bundle,
    hostile_bundle,
    judge,
    login,
    make_user,
    scorer,
    write,
)

pytestmark = pytest.mark.django_db


def _body(response: Any) -> bytes:
    return b"".join(response.streaming_content)


def _csv_rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode())))


@pytest.fixture
def analyst(client: Client) -> User:
    return login(client, "ana", "analyst")


# --- roles and methods -------------------------------------------------------------------
@pytest.mark.parametrize("url", ["/export.csv", "/export.jsonl", "/export.parquet"])
def test_analysts_and_staff_may_export(client: Client, url: str) -> None:
    write(bundle())
    login(client, "ana", "analyst")
    assert client.get(url).status_code == 200
    login(client, "root", staff=True)
    assert client.get(url).status_code == 200


@pytest.mark.parametrize("role", ["reviewer", "expert"])
def test_reviewers_may_not_export(client: Client, role: str) -> None:
    login(client, "rev", role)
    assert client.get("/export.csv").status_code == 403
    assert client.get("/export/annotations.csv").status_code == 403


def test_a_user_without_a_role_may_not_export(client: Client) -> None:
    login(client, "nobody")
    assert client.get("/export.jsonl").status_code == 403


def test_anonymous_export_redirects_to_login(client: Client) -> None:
    response = client.get("/export.csv")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_export_answers_only_get(client: Client, analyst: User) -> None:
    assert client.post("/export.csv").status_code == 405


# --- CSV -------------------------------------------------------------------------------------
def test_csv_has_the_documented_columns_then_one_column_per_reviewer(
    client: Client, analyst: User
) -> None:
    (trial,) = write(bundle())
    add_annotation(trial_id=trial.pk, reviewer=make_user("zoe", "reviewer"), judgment="fail")
    add_annotation(trial_id=trial.pk, reviewer=make_user("bob", "reviewer"), judgment="pass")

    header = _body(client.get("/export.csv")).decode().splitlines()[0].split(",")

    assert header == [c.name for c in BASE_COLUMNS] + ["reviewer:bob", "reviewer:zoe"]


def test_csv_row_carries_reward_validity_gates_judge_tiles_and_the_human_side(
    client: Client, analyst: User
) -> None:
    (trial,) = write(
        bundle(
            name="t-1",
            reward=0.25,
            errors=["output does not match the schema at (root): x"],
            scorers=[scorer(verdict="FAIL"), scorer("skips", "no_new_skips", "NA")],
            judges=[judge("PASS")],
            earlier_rewards=[0.9],
        )
    )
    reviewer = make_user("bob", "reviewer")
    add_annotation(trial_id=trial.pk, reviewer=reviewer, judgment="fail")
    add_annotation(trial_id=trial.pk, reviewer=reviewer, judgment="pass")

    (row,) = _csv_rows(_body(client.get("/export.csv")))

    assert row["trial"] == "t-1"
    assert row["trial_id"] == str(trial.pk)
    assert row["trial_uid"] == str(trial.uid)
    assert float(row["reward"]) == 0.25
    assert json.loads(row["metrics"]) == {"automated": 0.25}
    assert row["is_valid"] == "false"
    assert row["verifier_completed"] == "true"
    assert json.loads(row["validity_errors"]) == ["output does not match the schema at (root): x"]
    assert row["scorers_overall"] == "FAIL"
    assert float(row["scorers_mean"]) == 0.0
    assert row["judge_verdict"] == "PASS"
    assert (row["judge_task_completion"], row["judge_instruction_adherence"]) == ("4", "5")
    assert row["judge_efficiency"] == "3"
    assert row["gate_disagreement"] == "judge_pass_scorers_fail"
    assert trial.started_at is not None
    assert row["started_at"] == trial.started_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert row["annotation_count"] == "2"
    # The latest judgment per reviewer counts: bob changed his mind to pass.
    assert row["reviewer:bob"] == "pass"
    assert row["human_consensus"] == "pass"
    assert row["human_disagreement"] == "human_pass_automated_fail"


def test_csv_shows_the_current_result_not_an_earlier_one(client: Client, analyst: User) -> None:
    write(bundle(reward=0.4, earlier_rewards=[0.9, 0.1]))
    (row,) = _csv_rows(_body(client.get("/export.csv")))
    assert float(row["reward"]) == 0.4
    assert json.loads(row["metrics"]) == {"automated": 0.4}


def test_csv_judge_tiles_come_from_the_latest_verdict(client: Client, analyst: User) -> None:
    later = judge("FAIL", failure_mode="wrong units", scored_at=START + timedelta(hours=2))
    later = later.model_copy(update={"task_completion": 1})
    write(bundle(judges=[judge("PASS"), later]))
    (row,) = _csv_rows(_body(client.get("/export.csv")))
    assert row["judge_verdict"] == "FAIL"
    assert row["judge_task_completion"] == "1"
    assert row["failure_mode"] == "wrong units"


@pytest.mark.parametrize("formula", ["=1+2", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=x"])
def test_csv_neutralises_cells_a_spreadsheet_would_execute(
    client: Client, analyst: User, formula: str
) -> None:
    write(bundle(name=formula, agent=formula, model=formula, task=formula, job=formula))
    (row,) = _csv_rows(_body(client.get("/export.csv")))
    for column in ("trial", "agent", "model", "task", "job"):
        assert row[column] == "'" + formula, column
    # Numbers are not text and stay numbers.
    assert not row["reward"].startswith("'")


def test_csv_neutralises_a_hostile_reviewer_name_in_the_header(
    client: Client, analyst: User
) -> None:
    (trial,) = write(bundle())
    add_annotation(trial_id=trial.pk, reviewer=make_user("=cmd", "reviewer"), judgment="pass")
    header = _body(client.get("/export.csv")).decode().splitlines()[0]
    assert header.endswith(",reviewer:=cmd")  # the prefix keeps the cell from starting with =


def test_neutralise_leaves_ordinary_text_alone() -> None:
    assert neutralise("claude-code") == "claude-code"
    assert neutralise("=A1") == "'=A1"
    assert neutralise("") == ""


def test_csv_keeps_hostile_text_literal(client: Client, analyst: User) -> None:
    hostile = hostile_bundle()
    write(hostile)
    (row,) = _csv_rows(_body(client.get("/export.csv")))
    assert row["trial"] == hostile.trial.name
    assert row["agent"] == hostile.trial.agent_name


def test_csv_follows_the_explorer_filter_and_order(client: Client, analyst: User) -> None:
    write(
        bundle(name="a", reward=0.2, judges=[judge("FAIL", failure_mode="x")]),
        bundle(name="b", reward=0.9),
        bundle(name="c", reward=0.6, judges=[judge("FAIL", failure_mode="x")]),
    )
    rows = _csv_rows(_body(client.get("/export.csv?judge_verdict=FAIL&sort=-reward")))
    assert [r["trial"] for r in rows] == ["c", "a"]


def test_an_invalid_filter_is_refused_with_the_reason_as_plain_text(
    client: Client, analyst: User
) -> None:
    write(bundle())
    response = client.get("/export.csv?reward_min=2&validity=<script>")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/plain")
    body = response.content.decode()
    assert "reward_min" in body
    assert "validity" in body


def test_csv_export_streams_with_a_fixed_number_of_queries(client: Client, analyst: User) -> None:
    def queries_for(count: int) -> int:
        write(*(bundle() for _ in range(count)))
        with CaptureQueriesContext(connection) as captured:
            rows = _csv_rows(_body(client.get("/export.csv")))
        assert len(rows) == Trial.objects.count()
        return len(captured)

    # the user, reviewers of the export, then the rows in one SELECT (the role groups and
    # the tasks confirmed defective for the manifest, read by the first export, from the
    # cache); on PostgreSQL that SELECT runs inside COPY on psycopg's cursor, which Django
    # does not log.
    first, second = queries_for(2), queries_for(40)
    expected = 2 if connection.vendor == "postgresql" else 3
    assert (first, second) == (expected + 2, expected)


def test_export_is_a_streamed_attachment(client: Client, analyst: User) -> None:
    write(bundle())
    response = client.get("/export.csv")
    assert response.streaming
    assert response["Content-Disposition"].startswith('attachment; filename="trialdesk-')
    assert response["Content-Disposition"].endswith('.csv"')


# --- Parquet ---------------------------------------------------------------------------------
def test_parquet_has_the_csv_rows_and_columns_with_types(client: Client, analyst: User) -> None:
    (trial,) = write(bundle(name="p-1", reward=0.75), bundle(name="=p-2", reward=0.1))[:1]
    add_annotation(trial_id=trial.pk, reviewer=make_user("bob", "reviewer"), judgment="fail")

    table = pq.read_table(io.BytesIO(_body(client.get("/export.parquet"))))
    csv_rows = _csv_rows(_body(client.get("/export.csv")))

    assert table.column_names == list(csv_rows[0])
    assert table.num_rows == len(csv_rows) == 2
    types = {field.name: str(field.type) for field in table.schema}
    assert types["reward"] == "double"
    assert types["is_valid"] == "bool"
    assert types["started_at"] == "timestamp[us, tz=UTC]"
    assert types["annotation_count"] == "int64"
    data = table.to_pylist()
    by_name = {row["trial"]: row for row in data}
    # Typed values, not spreadsheet-neutralised text.
    assert set(by_name) == {"p-1", "=p-2"}
    assert by_name["p-1"]["reward"] == 0.75
    assert by_name["p-1"]["reviewer:bob"] == "fail"
    assert by_name["p-1"]["trial_uid"] == str(trial.uid)
    assert json.loads(by_name["p-1"]["metrics"]) == {"automated": 0.75}


def test_parquet_of_an_empty_filter_is_a_valid_empty_file(client: Client, analyst: User) -> None:
    table = pq.read_table(io.BytesIO(_body(client.get("/export.parquet"))))
    assert table.num_rows == 0
    assert "reward" in table.column_names


# --- JSONL and the round trip -----------------------------------------------------------------
def test_jsonl_holds_one_bundle_per_trial_with_its_annotations(
    client: Client, analyst: User
) -> None:
    (trial,) = write(bundle(name="j-1"))
    add_annotation(
        trial_id=trial.pk,
        reviewer=make_user("bob", "expert", discipline="electrical"),
        judgment="defer",
        categories=["units"],
        notes="check mV",
        reviewer_discipline="electrical",
    )
    lines = _body(client.get("/export.jsonl")).decode().splitlines()
    assert len(lines) == 1
    exported = json.loads(lines[0])
    assert exported["trial"]["name"] == "j-1"
    (note,) = exported["annotations"]
    assert (note["reviewer_id"], note["judgment"], note["categories"]) == (
        "bob",
        "defer",
        ["units"],
    )
    assert note["reviewer_discipline"] == "electrical"


def test_jsonl_export_ingests_into_an_empty_database_and_exports_identically(
    tmp_path: Path,
) -> None:
    trials = write(
        bundle(name="r-1", earlier_rewards=[0.3]),
        bundle(name="r-2", annotations=[annotation("carol", "fail")]),
        hostile_bundle(),
    )
    add_annotation(
        trial_id=trials[0].pk,
        reviewer=make_user("bob", "reviewer"),
        judgment="pass",
        seconds_to_review=95,
        guideline_version="guide-0123456789ab",
    )
    first = tmp_path / "first.jsonl"
    call_command("export", format="jsonl", output=str(first), verbosity=0)
    stamped = [
        note
        for line in first.read_text().splitlines()
        for note in json.loads(line)["annotations"]
        if note["reviewer_id"] == "bob"
    ]
    assert [(n["seconds_to_review"], n["guideline_version"]) for n in stamped] == [
        (95, "guide-0123456789ab")
    ]

    purge_review_data()
    User.objects.filter(username__in=["bob", "carol"]).delete()
    assert not Trial.objects.exists()
    call_command("ingest", str(first), verbosity=0)
    second = tmp_path / "second.jsonl"
    call_command("export", format="jsonl", output=str(second), verbosity=0)

    assert second.read_bytes() == first.read_bytes()
    # Reviewers that did not exist come back by username, inactive.
    assert not User.objects.get(username="bob").is_active


# --- annotations -----------------------------------------------------------------------------
def test_annotations_export_has_one_row_per_annotation(client: Client, analyst: User) -> None:
    first, second = write(bundle(name="a-1"), bundle(name="a-2"))
    bob = make_user("bob", "reviewer")
    add_annotation(trial_id=first.pk, reviewer=bob, judgment="fail", categories=["x", "=y"])
    add_annotation(trial_id=first.pk, reviewer=bob, judgment="pass", notes="=HYPERLINK(1)")
    add_annotation(trial_id=second.pk, reviewer=bob, judgment="defer")
    add_annotation(
        trial_id=first.pk,
        reviewer=make_user("ann", "reviewer"),
        judgment="fail",
        seconds_to_review=42,
        guideline_version="guide-aaaaaaaaaaaa",
    )

    rows = _csv_rows(_body(client.get("/export/annotations.csv?q=a-1")))
    stamped = rows.pop()
    assert (stamped["seconds_to_review"], stamped["guideline_version"]) == (
        "42",
        "guide-aaaaaaaaaaaa",
    )
    assert (rows[0]["seconds_to_review"], rows[0]["guideline_version"]) == ("", "")

    assert [(r["trial"], r["judgment"]) for r in rows] == [("a-1", "fail"), ("a-1", "pass")]
    assert rows[0]["categories"] == "x; =y"
    assert rows[1]["notes"] == "'=HYPERLINK(1)"
    assert rows[0]["reviewer"] == "bob"


# --- the command -----------------------------------------------------------------------------
def test_export_command_writes_the_filtered_csv(tmp_path: Path) -> None:
    write(bundle(name="keep", reward=0.9), bundle(name="drop", reward=0.1))
    target = tmp_path / "out.csv"
    call_command("export", format="csv", filter="reward_min=0.5", output=str(target), verbosity=0)
    assert [r["trial"] for r in _csv_rows(target.read_bytes())] == ["keep"]


def test_export_command_refuses_an_invalid_filter() -> None:
    with pytest.raises(CommandError, match="reward_min"):
        call_command("export", format="csv", filter="reward_min=abc", verbosity=0)


def test_export_command_reports_an_unwritable_output(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="cannot write"):
        call_command(
            "export", format="csv", output=str(tmp_path / "missing" / "x.csv"), verbosity=0
        )


def test_the_explorer_offers_the_exports_of_its_filter_to_analysts(client: Client) -> None:
    write(bundle())
    login(client, "ana", "analyst")
    html = client.get("/?judge_verdict=FAIL").content.decode()
    for url in ("/export.csv", "/export.parquet", "/export.jsonl", "/export/annotations.csv"):
        assert f'href="{url}?judge_verdict=FAIL"' in html


def test_the_explorer_shows_no_export_to_reviewers(client: Client) -> None:
    write(bundle())
    login(client, "rev", "reviewer")
    assert "/export.csv" not in client.get("/").content.decode()


# --- cost ------------------------------------------------------------------------------------
def test_an_export_is_sorted_only_when_the_filter_chose_a_sort() -> None:
    from django.http import QueryDict

    from review.filtering.form import TrialFilterForm, filtered_trials

    def sql(query: str) -> str:
        form = TrialFilterForm(QueryDict(query))
        assert form.is_valid()
        return str(filtered_trials(form).query)

    assert "ORDER BY" not in sql("judge_verdict=FAIL")
    assert "ORDER BY" in sql("judge_verdict=FAIL&sort=-reward")


def test_csv_without_a_sort_holds_every_matching_row(client: Client, analyst: User) -> None:
    write(*(bundle(name=f"t-{i}", reward=i / 10) for i in range(6)))
    rows = _csv_rows(_body(client.get("/export.csv?reward_min=0.2")))
    assert sorted(r["trial"] for r in rows) == ["t-2", "t-3", "t-4", "t-5"]
