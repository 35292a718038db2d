"""The README's grading flows run as written: a trial directory (score, ingest, scenario,
grade, ledger grade), and stored Harbor trials (grade a job, then a filter)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.conftest import ROOT
from tests.ingest_helpers import lay_out
from tests.judge_server import FakeJudge, judge_server

__all__ = ["judge_server"]

MARKER = "<!-- grading-flow:"
STORED_MARKER = "<!-- grading-stored:"


def grading_flow(marker: str) -> str:
    readme = (ROOT / "README.md").read_text()
    after = readme[readme.index(marker) :]
    match = re.search(r"```sh\n(.*?)```", after, re.DOTALL)
    assert match is not None, "the grading flow's sh block is missing"
    return match.group(1)


def run_readme_block(
    marker: str, database: Path, **env_vars: str
) -> subprocess.CompletedProcess[str]:
    """Migrate a fresh SQLite database, then run the README's shell block under `marker` on it."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(SQLITE_PATH=str(database), **env_vars)
    python = str(ROOT / ".venv" / "bin" / "python")
    subprocess.run([python, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", grading_flow(marker)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_readme_grading_flow_works_as_written(judge_server: FakeJudge, tmp_path: Path) -> None:
    done = run_readme_block(MARKER, tmp_path / "flow.sqlite3", DEMO=str(tmp_path / "demo"))
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "Summary: ingested 1, unchanged 0, updated 0, invalid 0, unreadable 0" in out
    assert "python-fix v1: 6 scorers" in out
    assert (
        "scorers (scenario python-fix v1): OVERALL PASS · mean 1.0 · 4 PASS, 0 FAIL, 2 N/A" in out
    )
    assert "ingested: nightly/fix-add__2" in out
    assert "scorers: not run (no workspace: a ledger run is judged only)" in out
    assert out.count("judge: FAIL (judge-large-2026)") == 2
    assert "updated: nightly/fix-add__1" in out
    assert "OVERALL PASS" in done.stderr  # `score` summarises on standard error
    assert len(judge_server.requests) == 2


def test_the_readme_grades_a_stored_harbor_job_then_a_filter(
    judge_server: FakeJudge, tmp_path: Path
) -> None:
    jobs = lay_out(tmp_path / "jobs")
    done = run_readme_block(STORED_MARKER, tmp_path / "stored.sqlite3", JOBS=str(jobs.root))
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "Summary: ingested 2, unchanged 0, updated 0, invalid 0, unreadable 0" in out
    assert "Grading batch 1: 2 trials queued" in out
    # The stub judges both FAIL, so the filter finds both again.
    assert "Grading batch 2: 2 trials queued" in out
    assert len(judge_server.requests) == 4
    prompts = [r["messages"][1]["content"] for r in judge_server.requests]
    assert all("## Workspace diff" not in p for p in prompts)
    assert sum("AgentTimeoutError: Agent execution timed out" in p for p in prompts) == 2
