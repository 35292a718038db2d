"""Harbor folders ingest with what Harbor recorded: reward, metrics, exception, agent, model.

The authored Harbor-shaped files (tests/fixtures/harbor/) are laid out as Harbor writes them
(`tests.ingest_helpers.LAYOUT`); the variations are those files with one thing changed. The
same promises are checked against real Harbor output in test_harbor_conformance.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rewards.models import EvaluationResult, Job, Trial
from tests.ingest_helpers import (
    FIXTURE_SET,
    PASS_JOB,
    SINGLE_JOB,
    TIMEOUT,
    HarborSet,
    Jobs,
    harbor_trial,
    ingest,
    lay_out,
    write_files,
)

pytestmark = pytest.mark.django_db

RESULT = "single_result.json"


@pytest.fixture
def harbor_set() -> HarborSet:
    """The set of Harbor files the shape tests below read (the conformance module swaps in
    real Harbor output)."""
    return FIXTURE_SET


@pytest.fixture
def jobs(harbor_set: HarborSet, tmp_path: Path) -> Jobs:
    laid_out = lay_out(tmp_path / "jobs", harbor_set.source, harbor_set.layout)
    ran = ingest(laid_out.root)
    assert ran.error == ""
    assert ran.summary() == ("Summary: ingested 4, unchanged 0, updated 0, invalid 0, unreadable 0")
    return laid_out


def current(trial: Trial) -> EvaluationResult:
    return trial.results.get(is_current=True)


# --- the shapes Harbor writes: the same promises for every set of files ----------------------
def test_single_step_trial_keeps_harbors_reward_metrics_agent_and_model(
    jobs: Jobs, harbor_set: HarborSet
) -> None:
    expect = harbor_set.expect
    trial = Trial.objects.get(name=harbor_set.single)
    result = current(trial)
    assert result.reward == 0.0
    assert result.metrics[expect["single_metric"]] == 0.0
    assert "reward" not in result.metrics
    assert result.verifier_completed is True
    assert result.output_parseable is True
    assert result.errors == []
    assert trial.problem_count == 0
    assert trial.job.name == harbor_set.single_job
    assert (trial.task.name, trial.task.source) == expect["single_task"]
    assert trial.task.checksum == expect["single_checksum"]
    assert str(trial.uid) == expect["single_uid"]
    assert (trial.agent_name, trial.agent_version) == expect["single_agent"]
    assert (trial.model_name, trial.model_provider) == expect["single_model"]
    tokens = (trial.n_input_tokens, trial.n_cache_tokens, trial.n_output_tokens)
    assert tokens == expect["single_tokens"]
    assert trial.cost_usd is None
    assert trial.status == Trial.Status.COMPLETED
    assert trial.exception_type == ""
    assert trial.started_at == expect["single_started_at"]
    seconds = trial.timings["agent_execution"]["seconds"]
    assert seconds == pytest.approx(expect["single_agent_seconds"], abs=0.001)


def test_single_step_trial_stores_the_trajectory_and_the_reward_file_verbatim(
    jobs: Jobs, harbor_set: HarborSet
) -> None:
    expect = harbor_set.expect
    trial = Trial.objects.get(name=harbor_set.single)
    detail = trial.detail
    assert detail.trajectory is not None
    assert detail.trajectory["schema_version"] == "ATIF-v1.7"
    assert len(detail.trajectory["steps"]) == expect["single_steps"]
    assert detail.final_response.startswith(expect["single_final_start"])
    assert detail.config["agent"]["model_name"] == expect["single_config_model"]
    raw = (harbor_set.source / harbor_set.single_reward).read_text()
    assert current(trial).raw_artifacts == {"verifier/reward.json": raw}


def test_timeout_trial_keeps_its_real_reward_and_the_agent_timeout_error(
    jobs: Jobs, harbor_set: HarborSet
) -> None:
    expect = harbor_set.expect
    trial = Trial.objects.get(name=harbor_set.timeout)
    result = current(trial)
    assert result.reward == expect["timeout_reward"]
    for name, value in expect["timeout_metrics"].items():
        assert result.metrics[name] == value
    assert trial.exception_type == "AgentTimeoutError"
    assert trial.exception_message == expect["timeout_message"]
    assert "harbor.trial.trial.AgentTimeoutError" in trial.detail.exception_traceback
    assert trial.status == Trial.Status.FAILED
    assert trial.run_badge == "FAIL"
    # exception_info.occurred_at is naive local time, as Harbor writes it: read as UTC.
    assert trial.timings["exception_occurred_at"] == expect["timeout_occurred_at"]


def test_multistep_trial_uses_the_top_level_aggregate(jobs: Jobs, harbor_set: HarborSet) -> None:
    expect = harbor_set.expect
    trial = Trial.objects.get(name=harbor_set.multistep)
    result = current(trial)
    assert result.reward == expect["multistep_reward"]
    metric, value = expect["multistep_metric"]
    assert result.metrics[metric] == value
    assert result.breakdown is not None
    key, mode = expect["multistep_failure_mode"]
    assert result.breakdown["run"][key] == mode
    assert set(result.raw_artifacts) == {
        "steps/run/verifier/reward.json",
        expect["multistep_details"],
    }
    seconds = trial.timings["steps"]["run"]["verifier"]["seconds"]
    assert seconds == pytest.approx(expect["multistep_verifier_seconds"], abs=1e-3)
    # agent_result is null at the top: the tokens are the steps' sum.
    assert trial.n_input_tokens == 0


def test_multistep_headline_is_the_aggregate_not_the_last_step(
    harbor_set: HarborSet, tmp_path: Path
) -> None:
    data = json.loads((harbor_set.source / harbor_set.multistep_result).read_text())
    second = json.loads(json.dumps(data["step_results"][0]))
    second["step_name"] = "check"
    second["verifier_result"]["rewards"]["reward"] = 0.9
    data["step_results"].append(second)
    write_files(tmp_path / "job" / "multi", {"result.json": data})

    assert ingest(tmp_path / "job").error == ""

    assert current(Trial.objects.get()).reward == harbor_set.expect["multistep_reward"]


def test_passing_trial_reward_comes_from_reward_txt_with_null_model_info(
    jobs: Jobs, harbor_set: HarborSet
) -> None:
    expect = harbor_set.expect
    trial = Trial.objects.get(name=harbor_set.passing)
    result = current(trial)
    assert result.reward == 1.0
    assert result.raw_artifacts == {"verifier/reward.txt": "1\n"}
    # model_info is null: config.agent.model_name has no provider part.
    assert (trial.model_name, trial.model_provider) == expect["passing_model"]
    assert (trial.agent_name, trial.agent_version) == expect["passing_agent"]
    assert trial.detail.ctrf is not None
    assert trial.detail.ctrf["results"]["summary"]["passed"] == expect["passing_ctrf_passed"]
    # A fork-only top-level key (with an exception of its own) is ignored, not a problem.
    assert result.errors == []
    assert trial.problem_count == 0
    assert trial.exception_type == ""


def test_job_result_json_fills_the_job(jobs: Jobs, harbor_set: HarborSet) -> None:
    expect = harbor_set.expect
    job = Job.objects.get(name=harbor_set.pass_job)
    # Naive in the file: read as UTC.
    assert job.started_at == expect["job_started_at"]
    assert job.finished_at == expect["job_finished_at"]
    assert job.stats["n_total_trials"] == 2
    evals = job.stats["evals"][expect["job_eval"]]
    assert evals["metrics"] == [{"mean": 0.5}]
    # Trial names per reward grow with the job: stored as counts (each trial has its reward).
    assert evals["reward_stats"] == {"reward": {"1.0": 1, "0.0": 1}}
    assert evals["exception_stats"] == {}
    assert job.source_path.endswith(harbor_set.pass_job)


def test_job_without_result_json_is_named_after_its_folder(
    jobs: Jobs, harbor_set: HarborSet
) -> None:
    job = Job.objects.get(name=harbor_set.multi_job)
    assert job.started_at is None
    assert job.trials.get().name == harbor_set.multistep


# --- variations of the authored files -----------------------------------------------------------
def test_job_config_json_is_stored_on_the_job(harbor_files: Path, tmp_path: Path) -> None:
    job_dir = tmp_path / "nightly"
    harbor_trial(job_dir, "t1", harbor_files)
    write_files(job_dir, {"config.json": {"job_name": "nightly", "n_attempts": 1}})

    assert ingest(job_dir).error == ""

    assert Job.objects.get(name="nightly").config == {"job_name": "nightly", "n_attempts": 1}


def test_a_trial_folder_given_directly_is_filed_under_its_parents_name(
    harbor_files: Path, tmp_path: Path
) -> None:
    jobs = lay_out(tmp_path)

    ran = ingest(jobs.trial(SINGLE_JOB, TIMEOUT))

    assert ran.summary().startswith("Summary: ingested 1,")
    assert Trial.objects.get().job.name == SINGLE_JOB


def test_job_option_overrides_the_folder_name(harbor_files: Path, tmp_path: Path) -> None:
    jobs = lay_out(tmp_path)

    assert ingest(jobs.job(PASS_JOB), "--job", "renamed").error == ""

    job = Job.objects.get()
    assert job.name == "renamed"
    assert job.stats["n_total_trials"] == 2


def test_reward_json_wins_over_reward_txt(harbor_files: Path, tmp_path: Path) -> None:
    # No verifier_result in result.json: the reward files speak (to say why it is 0.0).
    folder = harbor_trial(tmp_path / "job", "t1", harbor_files, verifier_result=None)
    write_files(folder, {"verifier/reward.json": {"reward": 0.3}, "verifier/reward.txt": "0.9"})

    assert ingest(tmp_path / "job").error == ""

    result = current(Trial.objects.get())
    assert result.reward == 0.0
    assert result.errors == [
        "Harbor recorded no verifier result; the reward file's 0.3 is not used"
    ]
    assert result.raw_artifacts == {
        "verifier/reward.json": '{"reward": 0.3}',
        "verifier/reward.txt": "0.9",
    }


@pytest.mark.parametrize(
    ("files", "error"),
    [
        ({"verifier/reward.json": "{not json"}, "reward file unreadable: not valid JSON at line 1"),
        ({"verifier/reward.json": ""}, "reward file unreadable: not valid JSON at line 1"),
        ({"verifier/reward.json": {"score": 1}}, "reward file has no 'reward' key"),
        ({"verifier/reward.json": {"reward": "1"}}, "reward is of type str, not a number"),
        ({"verifier/reward.txt": ""}, "reward.txt does not hold a number"),
        ({"verifier/reward.txt": "one"}, "reward.txt does not hold a number"),
    ],
)
def test_malformed_reward_file_without_verifier_result_is_zero_with_the_reason(
    harbor_files: Path, tmp_path: Path, files: dict[str, object], error: str
) -> None:
    folder = harbor_trial(
        tmp_path / "job",
        "t1",
        harbor_files,
        verifier_result=None,
        exception_info={
            "exception_type": "RewardFileEmptyError",
            "exception_message": "reward file is empty or malformed",
        },
    )
    write_files(folder, files)

    assert ingest(tmp_path / "job").error == ""

    trial = Trial.objects.get()
    result = current(trial)
    assert (result.reward, result.verifier_completed) == (0.0, True)
    assert result.errors == [error]
    assert trial.exception_type == "RewardFileEmptyError"
    assert set(result.raw_artifacts) == set(files)


def test_missing_verifier_result_and_reward_file_is_zero_and_not_completed(
    harbor_files: Path, tmp_path: Path
) -> None:
    harbor_trial(
        tmp_path / "job",
        "t1",
        harbor_files,
        verifier_result=None,
        exception_info={"exception_type": "EnvironmentStartTimeoutError"},
    )

    assert ingest(tmp_path / "job").error == ""

    trial = Trial.objects.get()
    result = current(trial)
    assert (result.reward, result.verifier_completed) == (0.0, False)
    assert trial.exception_type == "EnvironmentStartTimeoutError"
    assert trial.status == Trial.Status.FAILED
    assert trial.is_valid is False


def test_out_of_range_reward_recorded_by_harbor_is_zero_with_the_reason(
    harbor_files: Path, tmp_path: Path
) -> None:
    harbor_trial(tmp_path / "job", "t1", harbor_files, verifier_result={"rewards": {"reward": 7}})

    assert ingest(tmp_path / "job").error == ""

    result = current(Trial.objects.get())
    assert result.reward == 0.0
    assert result.errors == ["result.json verifier_result: reward 7.0 is outside [0, 1]"]


def test_unknown_keys_are_ignored(harbor_files: Path, tmp_path: Path) -> None:
    harbor_trial(
        tmp_path / "job",
        "t1",
        harbor_files,
        brand_new_field={"nested": [1, 2, 3]},
        agent_info={"name": "a", "version": "1", "model_info": None, "extra": True},
    )

    assert ingest(tmp_path / "job").error == ""

    trial = Trial.objects.get()
    assert current(trial).errors == []
    assert trial.agent_name == "a"


def test_a_known_field_of_the_wrong_type_is_dropped_with_a_recorded_error(
    harbor_files: Path, tmp_path: Path
) -> None:
    harbor_trial(
        tmp_path / "job",
        "t1",
        harbor_files,
        agent_result={"n_input_tokens": "many", "n_output_tokens": 5},
        started_at="yesterday",
    )

    assert ingest(tmp_path / "job").error == ""

    trial = Trial.objects.get()
    assert current(trial).errors == []
    problems = {(p["file"], p["field"]): p for p in trial.detail.ingest_problems}
    assert set(problems) == {
        ("result.json", "agent_result.n_input_tokens"),
        ("result.json", "started_at"),
    }
    assert problems["result.json", "agent_result.n_input_tokens"]["raw"] == "many"
    assert trial.problem_count == 2
    assert (trial.n_input_tokens, trial.n_output_tokens, trial.started_at) == (None, 5, None)
    # The reward Harbor recorded is untouched by the bad fields.
    assert current(trial).reward == 0.0
    assert current(trial).verifier_completed is True


def test_naive_and_aware_datetimes_are_both_read_as_utc(harbor_files: Path, tmp_path: Path) -> None:
    harbor_trial(
        tmp_path / "job",
        "t1",
        harbor_files,
        started_at="2026-05-27T13:00:36",
        finished_at="2026-05-27T15:01:46+02:00",
    )

    assert ingest(tmp_path / "job").error == ""

    trial = Trial.objects.get()
    assert trial.started_at == datetime(2026, 5, 27, 13, 0, 36, tzinfo=UTC)
    assert trial.finished_at == datetime(2026, 5, 27, 13, 1, 46, tzinfo=UTC)


def test_exception_txt_is_read_when_result_json_has_no_exception_info(
    harbor_files: Path, tmp_path: Path
) -> None:
    folder = harbor_trial(tmp_path / "job", "t1", harbor_files)
    write_files(
        folder,
        {
            "exception.txt": (
                'Traceback (most recent call last):\n  File "x.py", line 1\n'
                "harbor.trial.errors.VerifierTimeoutError: verifier took too long\n"
            )
        },
    )

    assert ingest(tmp_path / "job").error == ""

    trial = Trial.objects.get()
    assert trial.exception_type == "VerifierTimeoutError"
    assert trial.exception_message == "verifier took too long"
    assert trial.detail.exception_traceback.startswith("Traceback")
    assert trial.status == Trial.Status.FAILED


def test_status_follows_finished_at_and_exceptions(harbor_files: Path, tmp_path: Path) -> None:
    job = tmp_path / "job"
    harbor_trial(job, "running", harbor_files, finished_at=None)
    harbor_trial(job, "pending", harbor_files, finished_at=None, started_at=None)
    harbor_trial(
        job, "cancelled", harbor_files, exception_info={"exception_type": "CancelledError"}
    )

    assert ingest(job).error == ""

    statuses = dict(Trial.objects.values_list("name", "status"))
    assert statuses == {"running": "running", "pending": "pending", "cancelled": "cancelled"}


def test_reward_details_json_is_the_breakdown_and_never_the_reward(
    harbor_files: Path, tmp_path: Path
) -> None:
    folder = harbor_trial(tmp_path / "job", "t1", harbor_files)
    details = {"correctness": {"criteria": [{"name": "date", "value": 1.0}]}}
    write_files(folder, {"verifier/reward-details.json": details})

    assert ingest(tmp_path / "job").error == ""

    result = current(Trial.objects.get())
    assert result.breakdown == details
    assert result.reward == 0.0
    assert "verifier/reward-details.json" in result.raw_artifacts


def test_verifier_stdout_is_kept(harbor_files: Path, tmp_path: Path) -> None:
    folder = harbor_trial(tmp_path / "job", "t1", harbor_files)
    write_files(folder, {"verifier/test-stdout.txt": "1 passed in 0.01s\n"})

    assert ingest(tmp_path / "job").error == ""

    assert Trial.objects.get().detail.verifier_stdout == "1 passed in 0.01s\n"


def test_config_json_is_read_when_result_json_embeds_no_config(
    harbor_files: Path, tmp_path: Path
) -> None:
    folder = harbor_trial(tmp_path / "job", "t1", harbor_files, config=None, agent_info=None)
    write_files(folder, {"config.json": {"agent": {"name": "oracle", "model_name": "p/m"}}})

    assert ingest(tmp_path / "job").error == ""

    trial = Trial.objects.get()
    assert (trial.agent_name, trial.model_name, trial.model_provider) == ("oracle", "m", "p")
    assert trial.detail.config["agent"]["name"] == "oracle"


def test_a_job_sub_folder_without_result_json_is_named_as_unreadable(
    harbor_files: Path, tmp_path: Path
) -> None:
    jobs = lay_out(tmp_path)
    (jobs.job(PASS_JOB) / "unfinished__abc" / "agent").mkdir(parents=True)

    ran = ingest(jobs.job(PASS_JOB))

    assert ran.error == ""
    assert ran.summary().endswith("unreadable 1")
    assert (
        f"unreadable: {jobs.job(PASS_JOB) / 'unfinished__abc'}: no result.json: "
        "not a Harbor trial, or it has not finished"
    ) in ran.lines


def test_a_result_json_that_is_not_a_trial_result_is_named(tmp_path: Path) -> None:
    write_files(tmp_path / "job" / "t1", {"result.json": [1, 2]})

    ran = ingest(tmp_path / "job")

    assert f"unreadable: {tmp_path / 'job' / 't1' / 'result.json'}: " in ran.out
    assert ran.error != ""  # nothing at all could be read from that PATH


def test_job_config_lists_that_grow_with_the_job_are_kept_short(
    harbor_files: Path, tmp_path: Path
) -> None:
    job_dir = tmp_path / "big"
    harbor_trial(job_dir, "t1", harbor_files)
    tasks = [{"path": f"tasks/t{i}"} for i in range(5000)]
    write_files(job_dir, {"config.json": {"job_name": "big", "tasks": tasks, "agents": [1, 2]}})

    assert ingest(job_dir).error == ""

    config = Job.objects.get(name="big").config
    assert config["agents"] == [1, 2]
    assert config["tasks"]["omitted_list"]["length"] == 5000
    assert config["tasks"]["omitted_list"]["first"][0] == {"path": "tasks/t0"}


def test_nested_reward_details_are_stored_verbatim(harbor_files: Path, tmp_path: Path) -> None:
    """Newer Harbor releases nest groups of criteria in reward-details.json (RewardKit)."""
    details = {
        "correctness": {
            "score": 0.5,
            "criteria": [
                {"name": "parses", "value": 1.0, "weight": 1},
                {"name": "matches", "value": 0.0, "error": "judge timed out after 300s"},
            ],
        },
        "style": {"criteria": [{"name": "lint", "value": 1.0}]},
    }
    folder = harbor_trial(tmp_path / "job", "t1", harbor_files)
    write_files(folder, {"verifier/reward-details.json": details})

    assert ingest(tmp_path / "job").error == ""

    trial = Trial.objects.get()
    assert current(trial).breakdown == details
    assert trial.problem_count == 0
