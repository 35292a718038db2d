"""Reading stored artifacts back for display: any shape arrives, nothing breaks."""

from __future__ import annotations

from typing import Any

import pytest

from review.pages import presenters
from rewards import reports


def test_diff_lines_are_classified_with_headers_only_before_the_first_hunk() -> None:
    text = (
        "diff --git a/src/x.py b/src/x.py\n"
        "index 1..2 100644\n"
        "--- a/src/x.py\n"
        "+++ b/src/x.py\n"
        "@@ -1,3 +1,3 @@\n"
        " keep\n"
        "--- removed line that starts with dashes\n"
        "+++ added line that starts with pluses\n"
        "\\ No newline at end of file\n"
    )
    diff = presenters.diff(text)
    assert [line.kind for line in diff.lines] == [
        "file",
        "meta",
        "meta",
        "meta",
        "hunk",
        "ctx",
        "del",
        "add",
        "note",
    ]
    assert diff.files == [presenters.DiffFile("src/x.py", 1, 1)]


def test_a_huge_diff_is_cut_and_says_so() -> None:
    diff = presenters.diff("+x\n" * 10, limit=9)
    assert diff.cut == 21
    assert len(diff.lines) == 3


def test_atif_steps_split_into_kinds_and_filter() -> None:
    raw = {
        "schema_version": "ATIF-v1.7",
        "steps": [
            {"step_id": 1, "source": "user", "message": "hi"},
            {
                "step_id": 2,
                "source": "agent",
                "message": [{"type": "text", "text": "multi-part"}],
                "reasoning_content": "think",
                "tool_calls": [{"function_name": "exec", "arguments": {"command": "ls"}}],
                "observation": {"results": [{"content": "a.txt"}, {"content": None}]},
            },
        ],
    }
    everything = presenters.trajectory(raw, ["message", "tool_call", "observation", "reasoning"])
    assert everything.total_steps == 2
    assert everything.counts == {"message": 2, "tool_call": 1, "observation": 1, "reasoning": 1}
    assert [p.kind for p in everything.steps[1].parts] == [
        "reasoning",
        "message",
        "tool_call",
        "observation",
    ]
    assert '"multi-part"' in everything.steps[1].parts[1].text
    only_tools = presenters.trajectory(raw, ["tool_call"])
    assert [s.number for s in only_tools.steps] == ["2"]
    assert (only_tools.steps[0].parts[0].label, only_tools.steps[0].parts[0].name) == (
        "Tool call",
        "exec",
    )


@pytest.mark.parametrize("raw", [None, "text", 42, {"steps": "nope"}, [1, "two", None], {"x": 1}])
def test_any_trajectory_shape_reads_without_error(raw: Any) -> None:
    result = presenters.trajectory(raw, ["message"])
    assert isinstance(result.steps, list)


def test_a_step_source_outside_the_known_set_gets_a_neutral_class() -> None:
    raw = {"steps": [{"source": '" onclick="x', "message": "m"}]}
    step = presenters.trajectory(raw, ["message"]).steps[0]
    assert step.source_class == "other"


def test_fact_check_tone_comes_from_known_statuses_and_keeps_the_text() -> None:
    rows = presenters.fact_check_rows(
        [
            {"claim": "a", "status": "Supported", "evidence": "e"},
            {"claim": "b", "status": "contradicted"},
            {"claim": "c", "status": "who knows"},
            "bare string",
        ]
    )
    assert [(r.claim, r.status, r.tone) for r in rows] == [
        ("a", "Supported", "ok"),
        ("b", "contradicted", "bad"),
        ("c", "who knows", "neutral"),
        ("bare string", "", "neutral"),
    ]


def test_breakdown_rows_normalise_and_show_odd_dimensions_as_they_are() -> None:
    rows = presenters.breakdown_rows(
        {
            "v": {"score": 3, "max_score": 4, "evidence": "ok", "weight": 2},
            "zero": {"score": 1, "max_score": 0},
            "odd": ["not", "a", "dimension"],
            "flag": True,
        }
    )
    by_name = {row.name: row for row in rows}
    assert by_name["v"].kind == "dimension"
    assert by_name["v"].normalised == pytest.approx(0.75)
    assert by_name["v"].fields == (("weight", "2"),)
    assert by_name["zero"].normalised is None
    assert by_name["odd"].kind == "group"
    assert [(r.name, r.depth, r.text) for r in rows if r.depth == 1] == [
        ("[0]", 1, "not"),
        ("[1]", 1, "a"),
        ("[2]", 1, "dimension"),
    ]
    assert (by_name["flag"].kind, by_name["flag"].text) == ("value", "true")


def test_nested_reward_details_are_a_tree() -> None:
    """RewardKit's recursive details: groups of criteria, each named by its own name."""
    rows = presenters.breakdown_rows(
        {
            "correctness": {
                "score": 0.5,
                "criteria": [
                    {"name": "parses", "value": 1, "weight": 1},
                    {"id": "matches", "value": 0, "error": "judge timed out"},
                ],
            },
            "style": {"lint": {"score": 2, "max_score": 2}},
        }
    )
    # Each group and criterion fills the score and max columns (a RewardKit value is out of
    # 1); a criterion's error is its evidence, its other fields ride along.
    assert [(r.name, r.depth, r.kind, r.score, r.max_score) for r in rows] == [
        ("correctness", 0, "dimension", 0.5, 1.0),
        ("parses", 1, "dimension", 1.0, 1.0),
        ("matches", 1, "dimension", 0.0, 1.0),
        ("style", 0, "group", None, None),
        ("lint", 1, "dimension", 2, 2),
    ]
    parses, matches = rows[1], rows[2]
    assert parses.fields == (("weight", "1"),)
    assert matches.evidence == "judge timed out"
    assert rows[4].normalised == pytest.approx(1.0)


def test_a_breakdown_deeper_than_the_limit_is_shown_as_its_text() -> None:
    deep: Any = {"leaf": [1, [2]]}
    for level in range(presenters.BREAKDOWN_DEPTH + 2):
        deep = {f"l{level}": deep}
    rows = presenters.breakdown_rows(deep)
    assert max(r.depth for r in rows) == presenters.BREAKDOWN_DEPTH
    assert rows[-1].kind == "value"
    assert rows[-1].text.startswith("{")


def test_ctrf_summary_and_tests_are_read_leniently() -> None:
    report = reports.ctrf(
        {
            "results": {
                "tool": {"name": "pytest", "version": "8"},
                "summary": {"tests": 2, "passed": 1, "failed": 1},
                "tests": [
                    {"name": "t1", "status": "passed", "duration": 0.5},
                    {"name": "t2", "status": "failed", "message": "boom"},
                    "junk",
                ],
            }
        }
    )
    assert report is not None
    assert report.tool == "pytest 8"
    assert ("failed", "1") in report.summary
    assert [(t.name, t.duration, t.message) for t in report.tests] == [
        ("t1", "0.500 s", ""),
        ("t2", "", "boom"),
    ]
    assert reports.ctrf({"results": "x"}) is None


def test_phase_timings_skip_blocks_without_both_times() -> None:
    timings = {
        "agent_execution": {
            "started_at": "2026-05-27T13:01:13.408455Z",
            "finished_at": "2026-05-27T13:01:44.026917Z",
        },
        "verifier": {"started_at": "2026-05-27T13:01:44Z", "finished_at": None},
        "junk": "x",
    }
    [(name, seconds)] = presenters.phase_timings(timings)
    assert name == "agent execution"
    assert seconds == pytest.approx(30.618462)


def test_scorer_rows_open_hard_failures_by_default_and_toggle_links_flip_one_row() -> None:
    class FakeScorer:
        def __init__(self, position: int, hard: bool) -> None:
            self.position = position
            self.is_hard_failure = hard
            self.config: dict[str, Any] = {}

    scorers = [FakeScorer(0, False), FakeScorer(1, True), FakeScorer(2, False)]
    rows = presenters.scorer_rows(scorers, None)  # type: ignore[arg-type]
    assert [r.expanded for r in rows] == [False, True, False]
    assert [r.toggle_open for r in rows] == ["0,1", "", "1,2"]
    explicit = presenters.scorer_rows(scorers, {2})  # type: ignore[arg-type]
    assert [r.expanded for r in explicit] == [False, False, True]
