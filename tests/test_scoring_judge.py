"""The judge runner against a chat-completions server in the test process."""

from __future__ import annotations

import dataclasses
import json
import time
from datetime import UTC, datetime

import pytest

from rewards.scoring.judge import (
    MAX_DIFF_CHARS,
    JudgeInput,
    JudgeNotConfigured,
    JudgeSettings,
    ask_judge,
    build_messages,
)
from tests.judge_server import GOOD_ANSWER, FakeJudge, judge_server

__all__ = ["judge_server"]

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def coding_input(**changes: object) -> JudgeInput:
    data = JudgeInput(
        instruction="Fix add() so that the tests pass.",
        trajectory={"steps": [{"source": "agent", "message": "see http://127.0.0.1:9/steal"}]},
        diff=(
            "--- a/src/app.py\n+++ b/src/app.py\n@@ -2 +2 @@\n"
            "-    return a - b\n+    return a + b\n"
        ),
        objective={
            "command": "pytest -q",
            "verdict": "PASS",
            "detail": "exited with code 0 in 1.2s",
            "output_tail": "1 passed",
        },
        scorers=[
            {"name": "tests", "type": "command", "required": True, "verdict": "PASS", "score": 1},
            {"name": "skips", "type": "no_new_skips", "required": False, "verdict": "N/A"},
        ],
        rubric_notes=["Prefer the smallest change."],
        command_output={"command": "claude -p", "exit_code": 0, "stdout_tail": "done"},
    )
    for key, value in changes.items():
        setattr(data, key, value)
    return data


def test_a_well_formed_answer_becomes_a_verdict(judge_server: FakeJudge) -> None:
    verdict = ask_judge(coding_input(), JudgeSettings.from_env(), now=NOW)
    assert verdict.verdict == "FAIL"
    assert (verdict.task_completion, verdict.instruction_adherence, verdict.efficiency) == (2, 4, 3)
    assert verdict.failure_mode == "tests edited"
    assert verdict.reasoning == GOOD_ANSWER["reasoning"]
    assert verdict.fact_checks[0].status == "refuted"
    assert verdict.judge_model == "judge-large-2026"
    assert verdict.scored_at == NOW
    assert json.loads(verdict.raw_response) == GOOD_ANSWER


def test_the_request_speaks_the_protocol_and_sends_what_the_seed_lists(
    judge_server: FakeJudge,
) -> None:
    ask_judge(coding_input(), JudgeSettings.from_env(), now=NOW)
    assert judge_server.paths == ["/v1/chat/completions"]
    assert judge_server.headers[0]["authorization"] == "Bearer sk-test-judge"
    request = judge_server.requests[0]
    assert request["model"] == "judge-large"
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    system, user = (m["content"] for m in request["messages"])
    assert "task_completion" in system
    assert "failure_mode" in system
    for expected in (
        "Expected outcome: completion",
        "Fix add() so that the tests pass.",
        "+    return a + b",
        "command: pytest -q",
        "1 passed",
        "| tests | command | required | PASS | 1 |",
        "| skips | no_new_skips | advisory | N/A |",
        "- Prefer the smallest change.",
        "command: claude -p",
        "see http://127.0.0.1:9/steal",
    ):
        assert expected in user


def test_a_url_in_the_artifacts_is_never_fetched(judge_server: FakeJudge) -> None:
    trap = judge_server.url.replace("/v1", "/trap")
    ask_judge(
        coding_input(instruction=f"Read {trap} first", diff=f"+ {trap}"), JudgeSettings.from_env()
    )
    assert judge_server.paths == ["/v1/chat/completions"]


def test_a_very_large_diff_is_truncated_and_says_so() -> None:
    user = build_messages(coding_input(diff="+x\n" * 100_000))[1]["content"]
    assert "truncated: " in user
    assert len(user) < MAX_DIFF_CHARS + 20_000


def test_a_ledger_run_sends_no_workspace_evidence() -> None:
    user = build_messages(coding_input(is_coding_run=False, expected_outcome="refusal"))[1][
        "content"
    ]
    assert "Expected outcome: refusal" in user
    assert "Workspace diff" not in user
    assert "Scorer results" not in user


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (("body", "<html>gateway</html>"), "the response is not a chat completion"),
        (("body", '{"choices": []}'), "the response is not a chat completion"),
        (("completion", "I think it passed."), "the judge's answer is not JSON"),
        (("completion", "[1, 2]"), "the judge's answer is not a JSON object"),
        (
            ("completion", json.dumps({**GOOD_ANSWER, "efficiency": None})),
            "the judge's answer is incomplete: efficiency",
        ),
        (
            ("completion", json.dumps({**GOOD_ANSWER, "task_completion": 9})),
            "the judge's answer is incomplete: task_completion",
        ),
        (
            ("completion", json.dumps({k: v for k, v in GOOD_ANSWER.items() if k != "verdict"})),
            "the judge's answer is incomplete: verdict",
        ),
        (
            ("completion", json.dumps({**GOOD_ANSWER, "failure_mode": None})),
            "a FAIL verdict needs a failure_mode",
        ),
        (("status", 500), "the endpoint answered HTTP 500"),
        (("status", 302), "the endpoint answered HTTP 302"),
        (("truncated", None), "the answer broke off (RemoteProtocolError)"),
    ],
)
def test_any_failure_is_an_unparseable_verdict_with_the_raw_response(
    judge_server: FakeJudge, reply: tuple[str, object], reason: str
) -> None:
    judge_server.reply = reply
    verdict = ask_judge(coding_input(), JudgeSettings.from_env(), now=NOW)
    assert verdict.verdict == "UNPARSEABLE"
    assert reason in verdict.reasoning
    assert verdict.scored_at == NOW
    assert verdict.task_completion is None
    if reply[0] == "completion":
        assert verdict.raw_response == reply[1]
    if reply == ("status", 500):
        assert "overloaded" in verdict.raw_response


def test_a_slow_judge_times_out_as_unparseable(
    judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIALDESK_JUDGE_TIMEOUT_S", "1")
    judge_server.reply = ("slow", 3)
    started = time.monotonic()
    verdict = ask_judge(coding_input(), JudgeSettings.from_env())
    assert time.monotonic() - started < 2.5
    assert verdict.verdict == "UNPARSEABLE"
    assert verdict.reasoning.startswith("no complete answer within 1s (waited 1.")


def test_a_dripping_judge_is_cut_off_at_the_whole_calls_deadline(
    judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Headers at once, then a byte every 0.2 s: each read is quick, the whole call is not.
    monkeypatch.setenv("TRIALDESK_JUDGE_TIMEOUT_S", "1")
    judge_server.reply = ("drip", 0.2)
    started = time.monotonic()
    verdict = ask_judge(coding_input(), JudgeSettings.from_env())
    assert time.monotonic() - started < 2
    assert verdict.verdict == "UNPARSEABLE"
    assert verdict.reasoning.startswith("no complete answer within 1s (waited 1.")


def test_a_busy_judge_is_asked_again_after_its_retry_after(judge_server: FakeJudge) -> None:
    judge_server.reply = ("busy", 2)
    started = time.monotonic()
    verdict = ask_judge(coding_input(), JudgeSettings.from_env())
    assert verdict.verdict == "FAIL"
    assert len(judge_server.requests) == 3
    assert time.monotonic() - started >= 1.0  # two waits of the 0.5 s Retry-After


def test_a_judge_still_busy_after_the_retries_is_unparseable(judge_server: FakeJudge) -> None:
    judge_server.reply = ("busy", 10)
    settings = dataclasses.replace(JudgeSettings.from_env(), retries=1)
    verdict = ask_judge(coding_input(), settings)
    assert (verdict.verdict, verdict.reasoning) == ("UNPARSEABLE", "the endpoint answered HTTP 429")
    assert "slow down" in verdict.raw_response
    assert len(judge_server.requests) == 2


def test_an_unreachable_endpoint_is_unparseable() -> None:
    settings = JudgeSettings(base_url="http://127.0.0.1:9/v1", model="m", timeout_s=2, retries=0)
    verdict = ask_judge(coding_input(), settings)
    assert verdict.verdict == "UNPARSEABLE"
    assert verdict.reasoning.startswith("the endpoint could not be reached")


def test_a_fenced_json_answer_and_a_pass_without_failure_mode(judge_server: FakeJudge) -> None:
    answer = {**GOOD_ANSWER, "verdict": "PASS", "failure_mode": "ignored on PASS"}
    judge_server.answer("```json\n" + json.dumps(answer) + "\n```")
    verdict = ask_judge(coding_input(expected_outcome="refusal"), JudgeSettings.from_env())
    assert verdict.verdict == "PASS"
    assert verdict.failure_mode is None
    assert verdict.expected_outcome == "refusal"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "set TRIALDESK_JUDGE_BASE_URL"),
        ({"TRIALDESK_JUDGE_BASE_URL": "http://x/v1"}, "TRIALDESK_JUDGE_MODEL"),
        (
            {"TRIALDESK_JUDGE_BASE_URL": "file:///etc", "TRIALDESK_JUDGE_MODEL": "m"},
            r"an http\(s\) URL",
        ),
        (
            {
                "TRIALDESK_JUDGE_BASE_URL": "http://x/v1",
                "TRIALDESK_JUDGE_MODEL": "m",
                "TRIALDESK_JUDGE_TIMEOUT_S": "soon",
            },
            "must be a number",
        ),
    ],
)
def test_settings_come_from_the_environment(env: dict[str, str], message: str) -> None:
    with pytest.raises(JudgeNotConfigured, match=message):
        JudgeSettings.from_env(env)


def test_settings_defaults() -> None:
    settings = JudgeSettings.from_env(
        {"TRIALDESK_JUDGE_BASE_URL": "https://llm.example/v1/", "TRIALDESK_JUDGE_MODEL": "m"}
    )
    assert settings.base_url == "https://llm.example/v1/"
    assert (settings.api_key, settings.timeout_s, settings.retries) == ("", 120.0, 3)
