"""`manage.py score`: scorers.json out of a workspace, and `ingest` takes it as it is."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from rewards.models import ScorerResult, Trial
from tests.ingest_helpers import ingest, write_files
from tests.scoring_helpers import seeded_repo, write

SCORERS = [
    {"name": "tests", "type": "command", "command": "test -f src/app.py", "timeout_s": 60},
    {"name": "scope", "type": "allowed_paths", "patterns": ["src/*"]},
    {"name": "no ci edits", "type": "forbid_paths", "patterns": [".github/*"]},
    {"name": "small", "type": "max_files_changed", "limit": 1},
    {"name": "secrets", "type": "forbid_secrets"},
    {"name": "answer", "type": "file_exists", "path": "src/app.py"},
    {"name": "graded tests", "type": "tests_unmodified", "paths": ["tests/test_app.py"]},
    {"name": "scaffold", "type": "baseline_unmodified", "paths": ["conftest.py"]},
    {"name": "skips", "type": "no_new_skips"},
    {"name": "asserts", "type": "assertions_not_weakened"},
    {"name": "style", "type": "llm_judge", "rubric": "Small, readable change."},
]


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, str]:
    root, base = seeded_repo(
        tmp_path / "ws",
        {
            "src/app.py": "def add(a, b):\n    return a - b\n",
            "tests/test_app.py": "def test_add():\n    assert True\n",
            "conftest.py": "",
        },
    )
    write(root, {"src/app.py": "def add(a, b):\n    return a + b\n", "notes.txt": "hi\n"})
    return root, base


def score(*args: str | Path) -> str:
    out = io.StringIO()
    call_command("score", *[str(a) for a in args], stdout=out)
    return out.getvalue()


def test_score_writes_every_scorer_in_the_scorers_json_format(
    workspace: tuple[Path, str], tmp_path: Path
) -> None:
    root, base = workspace
    specs = write_files(tmp_path, {"scorers.json": SCORERS}) / "scorers.json"
    out = tmp_path / "result.json"
    score(root, "--baseline", base, "--scorers", specs, "-o", out)
    results = json.loads(out.read_text())
    assert [(r["name"], r["verdict"], r["required"]) for r in results] == [
        ("tests", "PASS", True),
        ("scope", "FAIL", True),  # notes.txt is outside src/*
        ("no ci edits", "PASS", True),
        ("small", "FAIL", True),  # two files changed, limit 1
        ("secrets", "PASS", True),
        ("answer", "PASS", True),
        ("graded tests", "PASS", True),
        ("scaffold", "PASS", True),
        ("skips", "N/A", False),
        ("asserts", "N/A", False),
        ("style", "N/A", False),
    ]
    assert set(results[0]) == {
        "name",
        "type",
        "required",
        "verdict",
        "score",
        "detail",
        "output_tail",
        "config",
    }


@pytest.mark.django_db
def test_ingest_takes_the_score_output_as_it_is(
    workspace: tuple[Path, str], tmp_path: Path
) -> None:
    root, base = workspace
    specs = write_files(tmp_path, {"scorers.json": SCORERS}) / "scorers.json"
    trial = write_files(
        tmp_path / "job-1" / "trial-1",
        {"logs/verifier/reward.json": {"reward": 1.0}},
    )
    score(root, "--baseline", base, "--scorers", specs, "-o", trial / "scorers.json")
    ran = ingest(trial)
    assert ran.error == ""
    stored = Trial.objects.get(name="trial-1")
    rows = list(ScorerResult.objects.filter(trial=stored).order_by("position"))
    assert [(r.name, r.verdict) for r in rows][-3:] == [
        ("skips", "NA"),
        ("asserts", "NA"),
        ("style", "NA"),
    ]
    assert stored.scorer_verdict == "FAIL"  # required scope and size scorers failed
    # Mean of the 8 applicable scorers: 6 passed.
    assert stored.scorer_mean == 0.75


def test_score_writes_to_stdout_and_summarises_on_stderr(
    workspace: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, base = workspace
    specs = write_files(tmp_path, {"s.json": [{"name": "s", "type": "forbid_secrets"}]})
    out = score(root, "--baseline", base, "--scorers", specs / "s.json")
    assert json.loads(out)[0]["verdict"] == "PASS"
    assert "OVERALL PASS · mean 1.0 · 1 PASS, 0 FAIL, 0 N/A" in capsys.readouterr().err


def test_a_bad_config_is_refused_before_anything_runs(
    workspace: tuple[Path, str], tmp_path: Path
) -> None:
    root, base = workspace
    specs = write_files(
        tmp_path,
        {
            "s.json": [
                {"name": "would run", "type": "command", "command": "touch ran"},
                {"name": "size", "type": "max_files_changed", "limit": "3"},
            ]
        },
    )
    with pytest.raises(CommandError, match=r"scorer 2 \('size'\): field 'limit'"):
        score(root, "--baseline", base, "--scorers", specs / "s.json")
    assert not (root / "ran").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "not valid JSON"), ('{"name": "x"}', "must be a JSON list")],
)
def test_an_unreadable_scorers_file_is_refused(
    workspace: tuple[Path, str], tmp_path: Path, content: str, message: str
) -> None:
    root, base = workspace
    (tmp_path / "s.json").write_text(content)
    with pytest.raises(CommandError, match=message):
        score(root, "--baseline", base, "--scorers", tmp_path / "s.json")


def test_a_bad_workspace_or_baseline_is_refused(
    workspace: tuple[Path, str], tmp_path: Path
) -> None:
    root, _ = workspace
    specs = write_files(tmp_path, {"s.json": [{"name": "s", "type": "forbid_secrets"}]})
    with pytest.raises(CommandError, match="is not a commit"):
        score(root, "--baseline", "v9", "--scorers", specs / "s.json")
    with pytest.raises(CommandError, match="not a directory"):
        score(tmp_path / "missing", "--baseline", "HEAD", "--scorers", specs / "s.json")
