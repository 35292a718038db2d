"""The benchmark harness's arithmetic and its export baseline (the timings are bench/'s job)."""

from __future__ import annotations

import json
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from django.db import connection

from bench.run import (
    Figure,
    compare,
    harbor_job_list,
    harbor_results,
    same_columns_copy,
    table,
)
from review.exports import export_select
from rewards.models import Trial
from rewards.scoring.judge import JudgeInput, JudgeSettings, ask_judge
from tests import review_factories as f


def test_a_figure_is_judged_by_its_ratio_against_the_budget() -> None:
    assert Figure("page", 10.0, 4.0, "ms", "<= 2.5").ok is True
    assert Figure("page", 11.0, 4.0, "ms", "<= 2.5").ok is False
    assert Figure("rows/s", 60.0, 100.0, "rows/s", ">= 0.5").ok is True
    assert Figure("rows/s", 40.0, 100.0, "rows/s", ">= 0.5").ok is False
    assert Figure("search", 99.0, 1.0, "ms").ok is None  # informative
    assert Figure("page", 10.0, 4.0, "ms").ratio == pytest.approx(2.5)


def test_the_table_has_one_line_per_figure_with_its_verdict() -> None:
    text = table(
        [Figure("first page / bare page", 9.0, 4.0, "ms", "<= 2.5"), Figure("q", 1.0, 1.0, "ms")]
    )
    lines = text.splitlines()
    assert lines[0].split(" | ")[0].strip() == "figure"
    assert "within budget?" in lines[0]
    assert "2.25x" in lines[2]
    assert lines[2].rstrip().endswith("yes")
    assert lines[3].rstrip().endswith("(informative)")


@pytest.mark.django_db
def test_the_export_baseline_reads_the_exports_own_columns_and_rows() -> None:
    f.make_trials(3)
    sql, params = export_select(Trial.objects.all(), as_text=False)
    text_sql, text_params = export_select(Trial.objects.all(), as_text=True)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        typed = cursor.fetchall()
        cursor.execute(text_sql, text_params)
        assert len(cursor.description) == len(typed[0])
    assert len(typed) == 3
    if connection.vendor != "postgresql":
        assert same_columns_copy() == 3  # rows fetched
    else:
        assert same_columns_copy() > 0  # bytes of CSV from COPY


def test_a_speed_figure_reads_how_many_times_as_fast_ours_is() -> None:
    figure = compare(
        "list / viewer", lambda: None, lambda: time.sleep(0.005), ">= 100", 3, as_speed=True
    )
    assert figure.unit == "lists/s"
    assert figure.ours > figure.baseline  # answers per second: ours does nothing
    assert figure.ratio == pytest.approx(figure.ours / figure.baseline)
    assert Figure("list / viewer", 500.0, 2.0, "lists/s", ">= 100").ok is True
    assert Figure("list / viewer", 150.0, 2.0, "lists/s", ">= 100").ok is False


@pytest.mark.django_db
def test_the_harbor_viewer_baseline_lists_every_trial_of_the_job(tmp_path: Path) -> None:
    results = harbor_results(tmp_path, 3, seed=11, jobs=1)
    assert len(results) == 3
    answer = json.loads(harbor_job_list(results))
    listed = {trial["trial_name"]: trial for trial in answer["trials"]}
    assert set(listed) == {path.parent.name for path in results}
    for path in results:
        written = json.loads(path.read_bytes())
        trial = listed[path.parent.name]
        assert trial["task_name"] == written["task_name"]
        assert trial["agent"] == written["agent_info"]["name"]
        assert isinstance(trial["reward"], float | int | None)
    # Folders only: the database is not touched.
    assert not Trial.objects.exists()


def test_the_every_file_baseline_reads_each_file_of_each_trial_once(tmp_path: Path) -> None:
    from bench.run import read_trial_files

    results = harbor_results(tmp_path, 2, seed=12, jobs=1)
    on_disk = sum(1 for r in results for p in r.parent.rglob("*") if p.is_file())
    assert on_disk > 2 * 2  # more than result.json and one other file a trial
    assert read_trial_files(results) == on_disk


@pytest.mark.django_db
def test_the_database_cpu_is_read_from_its_process_on_this_machine() -> None:
    from bench.run import database_cpu_seconds

    if connection.vendor != "postgresql":
        assert database_cpu_seconds() is None  # no server process to read
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        command = Path(f"/proc/{cursor.fetchone()[0]}/cmdline")
    local = command.exists() and command.read_bytes().startswith(b"postgres")
    before = database_cpu_seconds()
    if not local:  # a server elsewhere: its process cannot be read from here
        assert before is None
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM generate_series(1, 3000000)")
    after = database_cpu_seconds()
    assert before is not None
    assert after is not None
    assert after - before > 0.05  # the server's own work, not this process's


@pytest.mark.parametrize(
    ("busy_every", "verdict", "reasoning"),
    [
        (0, "PASS", "The agent did what the task asked."),
        (1, "UNPARSEABLE", "the endpoint answered HTTP 429 to the last of 4 tries"),
    ],
)
def test_the_judging_stub_answers_the_rubric_or_a_429_to_every_nth_request(
    monkeypatch: pytest.MonkeyPatch, busy_every: int, verdict: str, reasoning: str
) -> None:
    from bench.judge_stub import handler

    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(0.0, busy_every, "0"))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        answer = ask_judge(JudgeInput(instruction="x"), JudgeSettings(base_url=url, model="m"))
    finally:
        server.shutdown()
        server.server_close()
    assert (answer.verdict, answer.reasoning) == (verdict, reasoning)


def test_the_evidence_trajectories_are_long_realistic_and_part_where_said() -> None:
    from bench.evidence import COMMON_STEPS, STEPS, trajectory
    from rewards import alignment

    a, b = trajectory("a"), trajectory("b")
    assert len(a["steps"]) == len(b["steps"]) == STEPS
    assert a["steps"][:COMMON_STEPS] == b["steps"][:COMMON_STEPS]
    assert trajectory("a") == a  # the same data on every database
    outputs = [
        len(step["observation"]["results"][0]["content"])
        for step in a["steps"]
        if "observation" in step
    ]
    assert min(outputs) >= 100
    assert 300 < sorted(outputs)[len(outputs) // 2] < 5000
    assert max(outputs) > 3000
    assert 2_000_000 < len(json.dumps(a)) < 8_000_000
    aligned = alignment.align(a, b)
    # The first step of one side's own (step 1210) is the first divergence; every tenth
    # step after it is each side's own too.
    assert aligned.divergence == COMMON_STEPS + 9
    kinds = [row.kind for row in aligned.rows]
    assert kinds.count("same") > STEPS * 0.9
    assert "changed" in kinds
