"""The Harbor trial folder read when a page shows it (rewards.ingest.trial_files): what it
reads, per step, within bounds, inside the folder only, and what it says when it cannot."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rewards.ingest import trial_files
from rewards.ingest.files import ArtifactError
from rewards.ingest.trial_files import TrialFolder, TrialFolderGone, agent_log_text
from tests.harbor_desk import lay_out_desk
from tests.ingest_helpers import write_files


@pytest.fixture
def desk(tmp_path: Path) -> dict[str, Path]:
    return lay_out_desk(tmp_path / "jobs")


def _paths(sections: list[trial_files.Section]) -> list[tuple[str, list[str]]]:
    return [(s.step, [f.path for f in s.files]) for s in sections]


def test_agent_logs_are_the_agents_text_files_without_its_trajectory(
    desk: dict[str, Path],
) -> None:
    logs = TrialFolder(str(desk["logs-only"])).agent_logs()
    assert _paths(logs) == [
        (
            "",
            [
                "agent/claude-code.txt",
                "agent/command-0/stderr.txt",
                "agent/command-0/stdout.txt",
            ],
        )
    ]
    assert "fix the failing parser" in logs[0].files[0].text
    # The trajectory has its own tab.
    assert TrialFolder(str(desk["trajectory"])).agent_logs() == []


def test_a_multi_step_trials_parts_come_per_step_in_the_order_harbor_ran_them(
    desk: dict[str, Path],
) -> None:
    folder = TrialFolder(str(desk["multistep"]), step_order=["run", "check"])
    assert _paths(folder.agent_logs()) == [
        ("run", ["steps/run/agent/agent.txt"]),
        ("check", ["steps/check/agent/agent.txt"]),
    ]
    assert _paths(folder.verifier_logs()) == [("check", ["steps/check/verifier/test-stderr.txt"])]
    [artifacts] = folder.artifacts()
    assert artifacts.step == "run"
    assert artifacts.manifest is not None
    assert '"invoice.json"' in artifacts.manifest.text
    assert [a.path for a in artifacts.artifacts] == ["steps/run/artifacts/invoice.json"]
    # Without an order, steps come by name.
    unordered = TrialFolder(str(desk["multistep"]))
    assert [s.step for s in unordered.agent_logs()] == ["check", "run"]


def test_the_verifier_logs_leave_out_what_ingest_stored(desk: dict[str, Path]) -> None:
    [section] = TrialFolder(str(desk["trajectory"])).verifier_logs()
    assert [f.path for f in section.files] == ["verifier/test-stderr.txt"]


def test_artifacts_show_text_and_offer_binaries(desk: dict[str, Path]) -> None:
    [section] = TrialFolder(str(desk["artifacts"])).artifacts()
    assert section.manifest is not None
    assert "plots/wrap-widths.png" in section.manifest.text
    by_path = {a.path: a for a in section.artifacts}
    assert by_path["artifacts/results.csv"].text == "width,lines\n10,14\n40,4\n80,2\n"
    png = by_path["artifacts/plots/wrap-widths.png"]
    assert png.text is None
    assert png.size == 69
    data, kind = TrialFolder(str(desk["artifacts"])).download("artifacts/plots/wrap-widths.png")
    assert data.startswith(b"\x89PNG")
    assert kind == "image/png"


def test_analysis_is_read_as_harbor_analyze_wrote_it(desk: dict[str, Path]) -> None:
    analysis = TrialFolder(str(desk["analysis"])).analysis()
    assert analysis is not None
    assert analysis.markdown is not None
    assert analysis.markdown.text.startswith("# Trial analysis")
    assert analysis.data is not None
    assert '"reward_hacking"' in analysis.data.text
    assert TrialFolder(str(desk["trajectory"])).analysis() is None


def test_a_long_log_shows_its_end_and_says_how_much_was_left_out(tmp_path: Path) -> None:
    size = trial_files.FILE_BYTES + 1000
    write_files(tmp_path, {"agent/run.log": "a" * (size - 4) + "END\n", "trial.log": "x"})
    [section] = TrialFolder(str(tmp_path)).agent_logs()
    [log] = section.files
    assert log.text.endswith("END\n")
    assert len(log.text) == trial_files.FILE_BYTES
    assert log.cut == 1000


def test_a_tab_reads_at_most_its_budget(tmp_path: Path) -> None:
    write_files(tmp_path, {f"agent/{i}.txt": "b" * 1000 for i in range(5)})
    [section] = TrialFolder(str(tmp_path)).agent_logs(budget=2500)
    shown = [len(f.text) for f in section.files]
    assert sum(shown) <= 2500
    assert shown[:2] == [1000, 1000]
    assert section.files[-1].error == "not read: this tab shows enough already"


def test_a_listing_stops_at_its_bound_and_counts_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trial_files, "MAX_ENTRIES", 3)
    write_files(tmp_path, {f"artifacts/{i}.txt": str(i) for i in range(5)})
    [section] = TrialFolder(str(tmp_path)).artifacts()
    assert len(section.artifacts) == 3
    assert section.more == 2


def test_nothing_outside_the_trial_folder_is_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("TOP SECRET")
    trial = tmp_path / "trial"
    write_files(trial, {"agent/ok.txt": "fine", "artifacts/a.txt": "a"})
    os.symlink(outside, trial / "agent" / "leak.txt")
    os.symlink(outside, trial / "artifacts" / "leak.txt")
    os.symlink(tmp_path, trial / "artifacts" / "up")
    os.symlink(outside, trial / "trial.log")
    folder = TrialFolder(str(trial))
    logs = {f.path: f for f in folder.agent_logs()[0].files}
    assert logs["agent/ok.txt"].text == "fine"
    assert logs["agent/leak.txt"].error == "a symlink that points outside the folder given"
    assert "TOP SECRET" not in repr(folder.artifacts())
    trial_log = folder.trial_log()
    assert trial_log is not None
    assert trial_log.error
    assert not trial_log.text
    for path in ("artifacts/leak.txt", "trial.log", "artifacts/up/secret.txt"):
        with pytest.raises(ArtifactError, match="outside the folder"):
            folder.download(path)
    for path in ("../secret.txt", "artifacts/../../secret.txt"):
        with pytest.raises(ArtifactError, match="leads outside the trial directory"):
            folder.download(path)
    with pytest.raises(FileNotFoundError):
        folder.download("artifacts/none.txt")


def test_a_fifo_is_never_opened_for_a_download(tmp_path: Path) -> None:
    write_files(tmp_path, {"artifacts/a.txt": "a"})
    os.mkfifo(tmp_path / "artifacts" / "pipe")
    folder = TrialFolder(str(tmp_path))
    with pytest.raises(ArtifactError, match="not a regular file"):
        folder.download("artifacts/pipe")
    [section] = folder.artifacts()
    assert {a.path: a.error for a in section.artifacts}["artifacts/pipe"] == "not a regular file"


def test_a_download_larger_than_its_bound_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trial_files, "DOWNLOAD_BYTES", 10)
    write_files(tmp_path, {"artifacts/big.bin": b"x" * 11})
    with pytest.raises(ArtifactError, match="larger than the 10-byte limit"):
        TrialFolder(str(tmp_path)).download("artifacts/big.bin")


@pytest.mark.parametrize("path", ["", "/no/such/trial/folder"])
def test_a_folder_that_is_gone_says_so(path: str) -> None:
    with pytest.raises(TrialFolderGone) as gone:
        TrialFolder(path)
    expected = "not ingested from a folder" if not path else "is not there any more"
    assert expected in str(gone.value)
    assert agent_log_text(path) == ""


def test_the_agent_logs_as_one_bounded_text_for_a_judge(desk: dict[str, Path]) -> None:
    text = agent_log_text(str(desk["logs-only"]))
    assert text.startswith("== agent/claude-code.txt ==\n")
    assert "== agent/command-0/stdout.txt ==" in text
    assert len(agent_log_text(str(desk["logs-only"]), max_chars=50)) == 50


def test_a_symlinked_folder_inside_the_trial_is_listed_not_walked(tmp_path: Path) -> None:
    write_files(tmp_path, {"artifacts/a.txt": "a", "artifacts/sub/b.txt": "b"})
    # Each would lead round in a loop if walked.
    for i in range(20):
        os.symlink(tmp_path / "artifacts", tmp_path / "artifacts" / "sub" / f"loop{i}")
    [section] = TrialFolder(str(tmp_path)).artifacts()
    by_path = {a.path: a for a in section.artifacts}
    assert by_path["artifacts/a.txt"].text == "a"
    assert by_path["artifacts/sub/b.txt"].text == "b"
    assert by_path["artifacts/sub/loop0"].error == "not a regular file"
    assert len(section.artifacts) == 22
