"""The README's grading flow runs as written (score, ingest, scenario, grade, ledger grade)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.conftest import ROOT
from tests.judge_server import FakeJudge, judge_server

__all__ = ["judge_server"]

MARKER = "<!-- grading-flow:"


def grading_flow() -> str:
    readme = (ROOT / "README.md").read_text()
    after = readme[readme.index(MARKER) :]
    match = re.search(r"```sh\n(.*?)```", after, re.DOTALL)
    assert match is not None, "the grading flow's sh block is missing"
    return match.group(1)


def test_the_readme_grading_flow_works_as_written(judge_server: FakeJudge, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(SQLITE_PATH=str(tmp_path / "flow.sqlite3"), DEMO=str(tmp_path / "demo"))
    python = str(ROOT / ".venv" / "bin" / "python")
    subprocess.run([python, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", grading_flow()],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
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
