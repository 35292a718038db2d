"""A Harbor job folder with one trial of each kind the trial page's tabs show.

Each trial is one of the suite's Harbor result files (tests/fixtures/harbor/) under its own
name and id, with the rest of its folder from tests/fixtures/harbor/desk/<kind>/: agent
logs, trial.log, verifier logs, artifacts (text and binary), `harbor analyze` output, and
hostile text (markup, javascript: links, escape sequences) where a reviewer would read it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.ingest_helpers import HARBOR_FIXTURES, harbor_trial, ingest

DESK = HARBOR_FIXTURES / "desk"
JOB = "2026-11-02__10-00-00"

# kind -> (result file, the suite's files laid beside it: fixture -> path in the trial)
KINDS: dict[str, tuple[str, dict[str, str]]] = {
    "trajectory": (
        "single_result.json",
        {
            "single_trajectory.json": "agent/trajectory.json",
            "single_verifier_reward.json": "verifier/reward.json",
        },
    ),
    "logs-only": ("single_result.json", {"single_verifier_reward.json": "verifier/reward.json"}),
    "timeout": ("timeout_result.json", {}),
    "multistep": (
        "multistep_result.json",
        {"multistep_step_reward.json": "steps/run/verifier/reward.json"},
    ),
    "artifacts": ("pass_result.json", {"pass_reward.txt": "verifier/reward.txt"}),
    "analysis": ("pass_result.json", {"pass_reward.txt": "verifier/reward.txt"}),
}


def trial_name(kind: str) -> str:
    return f"desk-{kind}__K{len(kind)}x"


def lay_out_desk(root: Path) -> dict[str, Path]:
    """The job folder under `root`; kind -> its trial folder."""
    job = root / JOB
    folders = {}
    for kind, (result, beside) in KINDS.items():
        folder = harbor_trial(
            job, trial_name(kind), HARBOR_FIXTURES, template=result, trial_name=trial_name(kind)
        )
        for fixture, target in beside.items():
            (folder / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(HARBOR_FIXTURES / fixture, folder / target)
        shutil.copytree(DESK / kind, folder, dirs_exist_ok=True)
        folders[kind] = folder
    return folders


def ingest_desk(root: Path) -> dict[str, Path]:
    """The desk job laid out under `root` and ingested."""
    folders = lay_out_desk(root)
    ran = ingest(root / JOB)
    assert not ran.error, ran.out
    return folders
