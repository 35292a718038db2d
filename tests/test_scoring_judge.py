"""The judge runner against a chat-completions server in the test process."""

from __future__ import annotations

import dataclasses
import email.utils
import json
import re
import time
from datetime import UTC, datetime, timedelta

import jsonschema
import pytest

from rewards.scoring.judge import (
    ANSWER_SCHEMA,
    MAX_DIFF_CHARS,
    RUBRIC_VERSION,
    SYSTEM_PROMPT,
    JudgeCalls,
    JudgeInput,
    JudgeNotConfigured,
    JudgeSettings,
    ask_judge,
    backoff,
    build_messages,
    retry_after,
    rubric_version,
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
        (("status", 500), "the endpoint answered HTTP 500 to the last of 4 tries"),
        (("status", 404), "the endpoint answered HTTP 404"),
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


def test_a_judge_still_busy_after_the_retries_is_unparseable_saying_how_many_tries(
    judge_server: FakeJudge,
) -> None:
    judge_server.reply = ("busy", 10)
    settings = dataclasses.replace(JudgeSettings.from_env(), retries=1)
    verdict = ask_judge(coding_input(), settings)
    assert (verdict.verdict, verdict.reasoning) == (
        "UNPARSEABLE",
        "the endpoint answered HTTP 429 to the last of 2 tries",
    )
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
    assert (settings.concurrency, settings.max_tokens) == (8, None)


def test_concurrency_and_max_tokens_come_from_the_environment_within_bounds() -> None:
    base = {"TRIALDESK_JUDGE_BASE_URL": "http://x/v1", "TRIALDESK_JUDGE_MODEL": "m"}
    settings = JudgeSettings.from_env(
        {**base, "TRIALDESK_JUDGE_CONCURRENCY": "16", "TRIALDESK_JUDGE_MAX_TOKENS": "800"}
    )
    assert (settings.concurrency, settings.max_tokens) == (16, 800)
    assert JudgeSettings.from_env({**base, "TRIALDESK_JUDGE_CONCURRENCY": "0"}).concurrency == 1
    assert JudgeSettings.from_env({**base, "TRIALDESK_JUDGE_CONCURRENCY": "999"}).concurrency == 64
    with pytest.raises(JudgeNotConfigured, match="TRIALDESK_JUDGE_CONCURRENCY must be a whole"):
        JudgeSettings.from_env({**base, "TRIALDESK_JUDGE_CONCURRENCY": "many"})


# --- 429 and 503: Retry-After, backoff, a bounded number of tries --------------------------------
def test_retry_after_is_read_as_seconds_or_as_an_http_date() -> None:
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "0"}) == 0.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    later = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 28 <= (retry_after({"retry-after": later}) or 0) <= 30
    past = email.utils.format_datetime(datetime(2020, 1, 1, tzinfo=UTC), usegmt=True)
    assert retry_after({"retry-after": past}) == 0.0
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None


def test_backoff_grows_exponentially_with_jitter_up_to_a_cap() -> None:
    for retried, full in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)]:
        waits = [backoff(retried) for _ in range(200)]
        assert all(full / 2 <= w <= full for w in waits)
        assert len(set(waits)) > 100  # jittered: calls refused together come back apart


def test_a_503_without_retry_after_is_asked_again_after_a_backoff(judge_server: FakeJudge) -> None:
    judge_server.reply = ("busy", 2)
    judge_server.busy_status = 503
    judge_server.retry_after = None
    verdict = ask_judge(coding_input(), JudgeSettings.from_env())
    assert verdict.verdict == "FAIL"
    assert len(judge_server.requests) == 3


def test_a_retry_after_given_as_an_http_date_is_waited_for(judge_server: FakeJudge) -> None:
    judge_server.reply = ("busy", 1)
    judge_server.busy_status = 503
    soon = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
    judge_server.retry_after = email.utils.format_datetime(soon, usegmt=True)
    verdict = ask_judge(coding_input(), JudgeSettings.from_env())
    assert verdict.verdict == "FAIL"
    assert datetime.now(UTC) >= soon  # not asked again before the date it named
    assert len(judge_server.requests) == 2


def test_a_retry_after_of_zero_is_asked_again_at_once(judge_server: FakeJudge) -> None:
    # The openai client, left to its own retries, backs off 0.5 s on a Retry-After of 0.
    judge_server.reply = ("busy", 3)
    judge_server.retry_after = "0"
    started = time.monotonic()
    verdict = ask_judge(coding_input(), JudgeSettings.from_env())
    assert verdict.verdict == "FAIL"
    assert len(judge_server.requests) == 4
    assert time.monotonic() - started < 1.0


def test_a_retry_after_past_the_deadline_gives_up_at_once(judge_server: FakeJudge) -> None:
    # Left to itself the openai client would wait up to two minutes whatever the deadline.
    judge_server.reply = ("busy", 1)
    judge_server.retry_after = "60"
    started = time.monotonic()
    verdict = ask_judge(coding_input(), JudgeSettings.from_env())  # a 5 s deadline
    assert time.monotonic() - started < 2
    assert verdict.verdict == "UNPARSEABLE"
    assert verdict.reasoning == (
        "the endpoint answered HTTP 429; the next try (60.0s later) would pass the 5s deadline"
    )
    assert len(judge_server.requests) == 1


def test_only_rate_limits_overload_and_gateway_errors_are_retried(judge_server: FakeJudge) -> None:
    judge_server.reply = ("status", 409)  # the openai client would retry a 409 on its own
    verdict = ask_judge(coding_input(), JudgeSettings.from_env())
    assert verdict.reasoning == "the endpoint answered HTTP 409"
    assert len(judge_server.requests) == 1


# --- structured output, and plain JSON where it is refused ---------------------------------------
def test_the_answer_is_asked_for_with_the_rubrics_json_schema(judge_server: FakeJudge) -> None:
    verdict = ask_judge(coding_input(), JudgeSettings.from_env())
    asked = judge_server.requests[0]["response_format"]
    assert asked == {
        "type": "json_schema",
        "json_schema": {"name": "judge_verdict", "schema": ANSWER_SCHEMA, "strict": True},
    }
    assert verdict.request_settings["response_format"] == "json_schema"
    # The schema is JudgeAnswer's in the form strict mode takes: every object closed, every
    # property required, the rubric tiles bounded, and a well-formed answer fits it.
    jsonschema.validate(GOOD_ANSWER, ANSWER_SCHEMA)
    objects = [ANSWER_SCHEMA, *ANSWER_SCHEMA["$defs"].values()]
    for schema in objects:
        assert schema["additionalProperties"] is False
        assert schema["required"] == list(schema["properties"])
    assert ANSWER_SCHEMA["properties"]["efficiency"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 5,
    }
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**GOOD_ANSWER, "efficiency": 6}, ANSWER_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**GOOD_ANSWER, "verdict": "MAYBE"}, ANSWER_SCHEMA)


def test_an_endpoint_refusing_structured_output_is_asked_for_plain_json_from_then_on(
    judge_server: FakeJudge,
) -> None:
    judge_server.refused_formats = {"json_schema"}
    first = ask_judge(coding_input(), JudgeSettings.from_env())
    assert first.verdict == "FAIL"
    assert first.request_settings["response_format"] == "json_object"
    second = ask_judge(coding_input(), JudgeSettings.from_env())
    assert second.request_settings["response_format"] == "json_object"
    kinds = [r.get("response_format", {}).get("type") for r in judge_server.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]  # remembered: asked once
    # Remembered per base URL and model: another model of the endpoint is asked afresh.
    other = dataclasses.replace(JudgeSettings.from_env(), model="judge-small")
    ask_judge(coding_input(), other)
    assert judge_server.requests[-2]["response_format"]["type"] == "json_schema"
    assert judge_server.requests[-1]["response_format"]["type"] == "json_object"


def test_an_endpoint_refusing_any_response_format_is_asked_without_one(
    judge_server: FakeJudge,
) -> None:
    judge_server.refused_formats = {"json_schema", "json_object"}
    verdict = ask_judge(coding_input(), JudgeSettings.from_env())
    assert verdict.verdict == "FAIL"
    assert verdict.request_settings["response_format"] == "none"
    assert "response_format" not in judge_server.requests[-1]
    assert len(judge_server.requests) == 3


# --- what a verdict records -----------------------------------------------------------------------
def test_every_verdict_records_the_rubric_version_and_the_request_settings(
    judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIALDESK_JUDGE_MAX_TOKENS", "900")
    settings = JudgeSettings.from_env()
    expected = {
        "temperature": 0,
        "response_format": "json_schema",
        "max_tokens": 900,
        "endpoint": judge_server.url.split("/")[2],  # 127.0.0.1:<port>
        "timeout_s": 5.0,
        "retries": 3,
    }
    verdict = ask_judge(coding_input(), settings)
    assert verdict.judge_model == "judge-large-2026"  # as the endpoint answered
    assert verdict.rubric_version == RUBRIC_VERSION
    assert re.fullmatch(r"rubric-[0-9a-f]{12}", RUBRIC_VERSION)
    assert verdict.request_settings == expected
    assert judge_server.requests[0]["max_tokens"] == 900
    assert judge_server.requests[0]["temperature"] == 0
    assert "sk-test-judge" not in json.dumps(verdict.request_settings)
    judge_server.answer("not json")
    failed = ask_judge(coding_input(), settings)
    assert failed.verdict == "UNPARSEABLE"
    assert (failed.rubric_version, failed.request_settings) == (RUBRIC_VERSION, expected)


def test_the_recorded_endpoint_is_the_host_never_a_key_in_the_url() -> None:
    settings = JudgeSettings(base_url="https://user:sk-secret@llm.example:8443/v1?key=k", model="m")
    assert settings.endpoint_host == "llm.example:8443"
    assert JudgeSettings(base_url="https://api.openai.com/v1", model="m").endpoint_host == (
        "api.openai.com"
    )


def test_the_rubric_version_changes_with_the_prompt_or_the_schema() -> None:
    assert rubric_version() == RUBRIC_VERSION  # stable
    assert rubric_version(SYSTEM_PROMPT + " Be terse.") != RUBRIC_VERSION
    narrower = {**ANSWER_SCHEMA, "required": ["verdict"]}
    assert rubric_version(SYSTEM_PROMPT, narrower) != RUBRIC_VERSION


# --- many calls in flight -------------------------------------------------------------------------
def test_many_calls_are_in_flight_at_once_on_one_client(judge_server: FakeJudge) -> None:
    # The judge holds every answer until eight requests are held together: the calls are
    # only answered if they are all in flight at once.
    judge_server.open_gate_at(in_flight=8)
    with JudgeCalls(JudgeSettings.from_env()) as calls:
        futures = [calls.submit(coding_input()) for _ in range(8)]
        verdicts = [future.result(timeout=60) for future in futures]
    assert [v.verdict for v in verdicts] == ["FAIL"] * 8
    assert judge_server.max_in_flight == 8


def test_leaving_judge_calls_cancels_the_calls_in_flight(judge_server: FakeJudge) -> None:
    judge_server.reply = ("gate", None)
    with JudgeCalls(JudgeSettings.from_env()) as calls:
        pending = calls.submit(coding_input())
        deadline = time.monotonic() + 5
        while not judge_server.requests and time.monotonic() < deadline:
            time.sleep(0.01)
    assert pending.cancelled()
    judge_server.gate.set()
