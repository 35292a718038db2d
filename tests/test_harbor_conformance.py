"""Conformance: real Harbor output (../shared/harbor_samples/) ingests as Harbor recorded it.

The tests are those of test_ingest_harbor.py for the shapes Harbor writes, run here with the
real samples and the values they must give. The samples sit beside the project in its
development checkout, not in a user's clone: without them this module is skipped with one
line saying so. CI sets TRIALDESK_REQUIRE_SAMPLES=1, which turns that skip into a failure, so
the check always runs there. The suite's own fixtures (tests/fixtures/harbor/) cover the same
shapes for everyone else.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rewards.models import Trial
from tests.conftest import ROOT
from tests.ingest_helpers import HarborSet, ingest, write_files

# The promises every set of Harbor files must keep, run here against the real samples
# (`harbor_set` below); pytest collects them again in this module.
from tests.test_ingest_harbor import (  # noqa: F401
    jobs,
    test_job_result_json_fills_the_job,
    test_job_without_result_json_is_named_after_its_folder,
    test_multistep_headline_is_the_aggregate_not_the_last_step,
    test_multistep_trial_uses_the_top_level_aggregate,
    test_passing_trial_reward_comes_from_reward_txt_with_null_model_info,
    test_single_step_trial_keeps_harbors_reward_metrics_agent_and_model,
    test_single_step_trial_stores_the_trajectory_and_the_reward_file_verbatim,
    test_timeout_trial_keeps_its_real_reward_and_the_agent_timeout_error,
)

SAMPLES = ROOT.parent / "shared" / "harbor_samples"

CALENDAR_JOB = "2026-05-27__16-03-14"
CALENDAR = "task-calendar__8A83BnJ"
TIMEOUT = "task-log-hdfs-block-ops__nvME2du"
CLAW_JOB = "2026-06-09__20-28-28"
MULTISTEP = "t4-delegation-repair__x8HNRDi"
SKILLS_JOB = "2026-04-13__06-09-31"
PROFILER = "pyutils__line_profiler.a646bf0f.__UPWAM6C"

# sample file -> path inside the jobs folder (the samples' README, "Path in source repo")
SAMPLE_LAYOUT = {
    "pinchbench_task-calendar__result.json": f"{CALENDAR_JOB}/{CALENDAR}/result.json",
    "pinchbench_task-calendar__verifier_reward.json": (
        f"{CALENDAR_JOB}/{CALENDAR}/verifier/reward.json"
    ),
    "pinchbench_task-calendar__agent_trajectory.atif.json": (
        f"{CALENDAR_JOB}/{CALENDAR}/agent/trajectory.json"
    ),
    "pinchbench_task-log-hdfs-block-ops__result_timeout.json": (
        f"{CALENDAR_JOB}/{TIMEOUT}/result.json"
    ),
    "clawbench_t4-delegation-repair__result_multistep.json": f"{CLAW_JOB}/{MULTISTEP}/result.json",
    "clawbench_t4-delegation-repair__steps_run_verifier_reward.json": (
        f"{CLAW_JOB}/{MULTISTEP}/steps/run/verifier/reward.json"
    ),
    "clawbench_t4-delegation-repair__steps_run_verifier_clawbench_details.json": (
        f"{CLAW_JOB}/{MULTISTEP}/steps/run/verifier/clawbench_details.json"
    ),
    "evolving-skills_job_2026-04-13__06-09-31__job_result.json": f"{SKILLS_JOB}/result.json",
    "evolving-skills_line_profiler__result_pass_forkfields.json": (
        f"{SKILLS_JOB}/{PROFILER}/result.json"
    ),
    "evolving-skills_line_profiler__verifier_reward.txt": (
        f"{SKILLS_JOB}/{PROFILER}/verifier/reward.txt"
    ),
    "evolving-skills_line_profiler__verifier_ctrf.json": (
        f"{SKILLS_JOB}/{PROFILER}/verifier/ctrf.json"
    ),
}
GOLDEN_TRAJECTORY = "harbor_golden_terminus2_hello-world-invalid-json.trajectory.json"

if not SAMPLES.is_dir():
    _missing = f"real Harbor samples not found at {SAMPLES} (they live beside the project)"
    if os.environ.get("TRIALDESK_REQUIRE_SAMPLES") == "1":
        pytest.fail(_missing, pytrace=False)
    pytest.skip(_missing, allow_module_level=True)

pytestmark = pytest.mark.django_db

REAL_SET = HarborSet(
    source=SAMPLES,
    layout=SAMPLE_LAYOUT,
    single_job=CALENDAR_JOB,
    single=CALENDAR,
    timeout=TIMEOUT,
    multi_job=CLAW_JOB,
    multistep=MULTISTEP,
    pass_job=SKILLS_JOB,
    passing=PROFILER,
    single_reward="pinchbench_task-calendar__verifier_reward.json",
    multistep_result="clawbench_t4-delegation-repair__result_multistep.json",
    expect={
        "single_metric": "automated.file_created",
        # One identity for a task however it was referenced: (dataset, bare name).
        "single_task": ("task-calendar", "pinchbench"),
        "single_checksum": "aac3f0428ada4c5d9c43d694b81865692abae86482e55f7fea2682e94dd87344",
        "single_uid": "96c9156f-078f-4ad7-ac38-e990172a5bc3",
        "single_agent": ("openclaw", "OpenClaw 2026.5.22 (a374c3a)"),
        "single_model": ("kimi-k2.6", "anthropic"),
        "single_tokens": (1160, 45056, 424),
        "single_started_at": datetime(2026, 5, 27, 13, 0, 36, 531019, tzinfo=UTC),
        "single_agent_seconds": 30.618,
        "single_steps": 6,
        "single_final_start": "Done. Created `/app/events/project-sync",
        "single_config_model": "anthropic/kimi-k2.6",
        "timeout_reward": 0.25,
        "timeout_metrics": {"llm_judge": 0.2, "automated.lifecycle_traced": 0.5},
        "timeout_message": "Agent execution timed out after 540.0 seconds",
        "timeout_occurred_at": "2026-05-27T21:55:27.479763+00:00",
        "multistep_reward": 0.2296,
        "multistep_metric": ("clawbench.trajectory_score", 0.4667),
        "multistep_failure_mode": ("clawbench.failure_mode", "verification_skipped"),
        "multistep_details": "steps/run/verifier/clawbench_details.json",
        "multistep_verifier_seconds": 1.726,
        "passing_model": ("qwen3.5-27b", ""),
        "passing_agent": ("claude-code", "2.1.104"),
        "passing_ctrf_passed": 1,
        "job_started_at": datetime(2026, 4, 13, 6, 9, 31, 371119, tzinfo=UTC),
        "job_finished_at": datetime(2026, 4, 13, 6, 20, 54, 666933, tzinfo=UTC),
        "job_eval": "claude-code__swesmith-train",
    },
)


@pytest.fixture
def harbor_set() -> HarborSet:
    return REAL_SET


@pytest.fixture
def harbor_samples() -> Path:
    return SAMPLES


def test_golden_terminus_trajectory_is_stored_with_its_final_message(
    harbor_samples: Path, tmp_path: Path
) -> None:
    result = json.loads((harbor_samples / "pinchbench_task-calendar__result.json").read_text())
    trajectory = (harbor_samples / GOLDEN_TRAJECTORY).read_text()
    write_files(
        tmp_path / "job" / "golden",
        {"result.json": result, "agent/trajectory.json": trajectory},
    )

    assert ingest(tmp_path / "job").error == ""

    detail = Trial.objects.get().detail
    assert detail.trajectory == json.loads(trajectory)
    agent_messages = [
        s["message"]
        for s in json.loads(trajectory)["steps"]
        if s.get("source") == "agent" and s.get("message", "").strip()
    ]
    assert detail.final_response == agent_messages[-1]
