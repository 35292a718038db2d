"""The scoring rules of DESIGN §5 and the two seeds, one test (or table) per rule.

Each test is written so that a plausible wrong implementation fails it: valid inputs are
checked to carry no errors, invalid ones to carry one, and both sides of every boundary
are exercised.
"""

from __future__ import annotations

import itertools
import socket
import urllib.request
from typing import Any

import pytest

from rewards import formats, rules
from rewards.rules import FAIL, NA, PASS, UNPARSEABLE, ScorerOutcome

# --- reward.json -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"reward": 0.93}', 0.93),
        (b'{"reward": 0}', 0.0),
        (b'{"reward": 1}', 1.0),
        (b'{"reward": 0.0}', 0.0),
        (b'{"reward": 1.0}', 1.0),
        (b'{"reward": -0.0}', 0.0),
        (b'\xef\xbb\xbf{"reward": 0.5}', 0.5),  # a UTF-8 BOM is not an error
    ],
)
def test_valid_reward_is_read_as_is_without_errors(raw: bytes, expected: float) -> None:
    reading = rules.read_reward_json(raw)
    assert reading.reward == expected
    assert isinstance(reading.reward, float)
    assert reading.verifier_completed is True
    assert reading.errors == []


def test_reward_zero_is_stored_as_positive_zero() -> None:
    assert str(rules.read_reward_json(b'{"reward": -0.0}').reward) == "0.0"


def test_missing_reward_is_ingested_as_zero_and_not_completed() -> None:
    reading = rules.read_reward_json(None)
    assert reading.reward == 0.0
    assert reading.verifier_completed is False
    assert reading.errors  # the explorer says why


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b'{"reward": ', "unreadable"),
        (b"", "unreadable"),
        (b"\xff\xfe{}", "unreadable"),
        (b"[" * 5000 + b"]" * 5000, "unreadable"),  # too deep: an error, not a crash
        (b'{"reward": NaN}', "unreadable"),  # NaN is not JSON
        (b'{"reward": Infinity}', "unreadable"),
        (b"[0.5]", "not a JSON object"),
        (b"0.5", "not a JSON object"),
        (b"null", "not a JSON object"),
        (b'{"score": 0.5}', "no 'reward' key"),
        (b'{"reward": true}', "boolean"),
        (b'{"reward": false}', "boolean"),
        (b'{"reward": "0.5"}', "str"),
        (b'{"reward": null}', "NoneType"),
        (b'{"reward": [0.5]}', "list"),
        (b'{"reward": 1e400}', "not a finite number"),  # parses to inf
        (b'{"reward": 1' + b"0" * 400 + b"}", "not a finite number"),  # too big for a float
        (b'{"reward": -0.1}', "outside [0, 1]"),
        (b'{"reward": -1}', "outside [0, 1]"),
        (b'{"reward": 1.0000001}', "outside [0, 1]"),
        (b'{"reward": 2}', "outside [0, 1]"),
    ],
)
def test_bad_reward_file_is_zero_completed_with_the_reason(raw: bytes, reason: str) -> None:
    reading = rules.read_reward_json(raw)
    assert reading.reward == 0.0
    assert reading.verifier_completed is True
    assert len(reading.errors) == 1
    assert reason in reading.errors[0]


def test_other_numeric_keys_become_metrics_and_nothing_else_does() -> None:
    reading = rules.read_reward_json(
        b'{"reward": 0.5, "accuracy": 0.9, "n_tests": 12, "loss": -3.5, "passed": true,'
        b' "label": "ok", "nested": {"a": 1}, "items": [1], "none": null, "huge": 1e400}'
    )
    assert reading.reward == 0.5
    assert reading.metrics == {"accuracy": 0.9, "n_tests": 12.0, "loss": -3.5}
    assert all(type(v) is float for v in reading.metrics.values())


def test_metrics_are_kept_even_when_the_reward_is_rejected() -> None:
    reading = rules.read_reward_json(b'{"reward": 7, "accuracy": 0.9}')
    assert reading.reward == 0.0
    assert reading.metrics == {"accuracy": 0.9}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(b"0.75\n", 0.75), (b"1", 1.0), (b"0", 0.0), (b"  0.25  ", 0.25), (b"\xef\xbb\xbf0.5", 0.5)],
)
def test_reward_txt_is_a_bare_number_meaning_reward(raw: bytes, expected: float) -> None:
    reading = rules.read_reward_txt(raw)
    assert (reading.reward, reading.verifier_completed, reading.errors) == (expected, True, [])


@pytest.mark.parametrize("raw", [b"", b"abc", b'{"reward": 0.5}', b"1.5", b"-0.5", b"nan", b"inf"])
def test_bad_reward_txt_is_zero_completed_with_the_reason(raw: bytes) -> None:
    reading = rules.read_reward_txt(raw)
    assert reading.reward == 0.0
    assert reading.verifier_completed is True
    assert reading.errors


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, True),
        (1, True),
        (0.5, True),
        (True, False),
        (False, False),
        ("0.5", False),
        (None, False),
        (float("nan"), False),
        (float("inf"), False),
        (-0.0001, False),
        (1.0001, False),
        (10**400, False),
    ],
)
def test_is_unit_number(value: Any, expected: bool) -> None:
    assert rules.is_unit_number(value) is expected


# --- validity gate ---------------------------------------------------------------------------

PARSES = {
    "json": b'{"voltage_drop_v": 3.2}',
    "jsonl": b'{"a": 1}\n\n{"b": 2}\n',
    "csv": b"name,value\nvoltage,3.2\ncurrent,1\n",
    "toml": b'voltage = 3.2\nunit = "V"\n',
    "yaml": b"voltage: 3.2\nunit: V\n",
    "text": b"The voltage drop is 3.2 V.\n",
}
DOES_NOT_PARSE = {
    "json": [b'{"voltage_drop_v": ', b"", b"NaN", b"\xff\xfe"],
    "jsonl": [b'{"a": 1}\nnot json\n', b'{\n  "a": 1\n}\n'],
    "csv": [b'name,value\n"voltage,3.2\n', b"name,value\nvoltage,3.2,extra\n"],
    "toml": [b"voltage = \n", b"a = 1\na = 2\n", b"a = " + b"[" * 5000],
    "yaml": [b"voltage: [3.2\n", b"!!python/object/apply:os.system ['true']\n"],
    "text": [b"\xff\xfe\x00broken"],
}


@pytest.mark.parametrize("fmt", sorted(PARSES))
def test_output_in_its_declared_format_parses(fmt: str) -> None:
    check = rules.check_output(
        PARSES[fmt], expected_output_path="/workspace/out", output_format=fmt, output_schema=None
    )
    assert (check.output_parseable, check.schema_valid, check.errors) == (True, True, [])


@pytest.mark.parametrize(
    ("fmt", "raw"), [(fmt, raw) for fmt, raws in DOES_NOT_PARSE.items() for raw in raws]
)
def test_output_not_in_its_declared_format_does_not_parse(fmt: str, raw: bytes) -> None:
    check = rules.check_output(
        raw, expected_output_path="/workspace/out", output_format=fmt, output_schema=None
    )
    assert check.output_parseable is False
    assert len(check.errors) == 1
    assert f"as {fmt}" in check.errors[0]


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        ("/workspace/answer.json", "json"),
        ("/workspace/ANSWER.JSON", "json"),
        ("/workspace/rows.jsonl", "jsonl"),
        ("/workspace/rows.ndjson", "jsonl"),
        ("/workspace/table.csv", "csv"),
        ("/workspace/config.toml", "toml"),
        ("/workspace/config.yaml", "yaml"),
        ("/workspace/config.yml", "yaml"),
        ("/workspace/answer.txt", "text"),
        ("/workspace/answer", "text"),
    ],
)
def test_undeclared_format_is_inferred_from_the_file_name(path: str, fmt: str) -> None:
    assert formats.declared_format("", path) == fmt


def test_inferred_format_is_what_the_output_must_parse_as() -> None:
    not_json = b"voltage is 3.2"
    as_json = rules.check_output(
        not_json, expected_output_path="/w/a.json", output_format="", output_schema=None
    )
    as_text = rules.check_output(
        not_json, expected_output_path="/w/a.txt", output_format="", output_schema=None
    )
    assert as_json.output_parseable is False
    assert as_text.output_parseable is True


def test_declared_format_wins_over_the_file_name() -> None:
    check = rules.check_output(
        b"plain words", expected_output_path="/w/a.json", output_format="text", output_schema=None
    )
    assert check.output_parseable is True


def test_no_declared_output_has_nothing_to_fail() -> None:
    check = rules.check_output(
        None, expected_output_path="", output_format="json", output_schema={"type": "object"}
    )
    assert (check.output_parseable, check.schema_valid, check.errors) == (True, True, [])


def test_declared_output_that_is_missing_does_not_parse() -> None:
    check = rules.check_output(
        None, expected_output_path="/workspace/a.json", output_format="json", output_schema=None
    )
    assert check.output_parseable is False
    assert check.errors == ["output file missing: /workspace/a.json"]


SCHEMA = {
    "type": "object",
    "required": ["voltage_drop_v"],
    "properties": {"voltage_drop_v": {"type": "number"}},
}


def test_output_matching_the_schema_is_schema_valid() -> None:
    check = rules.check_output(
        b'{"voltage_drop_v": 3.2}',
        expected_output_path="/w/a.json",
        output_format="json",
        output_schema=SCHEMA,
    )
    assert (check.output_parseable, check.schema_valid, check.errors) == (True, True, [])


def test_schema_mismatch_is_schema_invalid_but_still_parseable() -> None:
    check = rules.check_output(
        b'{"voltage_drop_v": "3.2 V"}',
        expected_output_path="/w/a.json",
        output_format="json",
        output_schema=SCHEMA,
    )
    assert check.output_parseable is True
    assert check.schema_valid is False
    assert len(check.errors) == 1
    assert "voltage_drop_v" in check.errors[0]


def test_schema_applies_to_every_format_that_parses_to_data() -> None:
    check = rules.check_output(
        b"voltage_drop_v: high\n",
        expected_output_path="/w/a.yaml",
        output_format="",
        output_schema=SCHEMA,
    )
    assert (check.output_parseable, check.schema_valid) == (True, False)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "no-such-type"},
        {"properties": {"a": {"minimum": "zero"}}},
        {"$ref": "#/$defs/missing"},
        {"$ref": "#"},  # a reference cycle: RecursionError inside jsonschema
        {"properties": {"a": {"pattern": "(unclosed"}}},
    ],
)
def test_invalid_schema_is_recorded_without_crashing(schema: dict[str, Any]) -> None:
    check = rules.check_output(
        b'{"a": 1}', expected_output_path="/w/a.json", output_format="json", output_schema=schema
    )
    assert check.output_parseable is True
    assert check.schema_valid is False
    assert len(check.errors) == 1
    assert "schema" in check.errors[0]


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every attempt to reach the network; the test asserts there were none.

    Recording (not raising) matters: `schema_error` catches every exception, so a raising
    stub would let a fetch go unnoticed.
    """
    attempts: list[str] = []

    def record(*args: Any, **kwargs: Any) -> Any:
        attempts.append(repr(args[:1]))
        raise OSError("network disabled in tests")

    monkeypatch.setattr(urllib.request, "urlopen", record)
    monkeypatch.setattr(socket, "create_connection", record)
    monkeypatch.setattr(socket, "getaddrinfo", record)
    monkeypatch.setattr(socket.socket, "connect", record)
    return attempts


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "http://schemas.example.invalid/answer.json"},
        {"properties": {"a": {"$ref": "https://schemas.example.invalid/a.json#/x"}}},
        # A relative $ref under a remote $id resolves to a remote URL too.
        {"$id": "https://schemas.example.invalid/root.json", "$ref": "other.json"},
    ],
)
def test_remote_ref_is_never_fetched(no_network: list[str], schema: dict[str, Any]) -> None:
    check = rules.check_output(
        b'{"a": 1}', expected_output_path="/w/a.json", output_format="json", output_schema=schema
    )
    assert no_network == []
    assert check.schema_valid is False
    assert "cannot be resolved" in check.errors[0]


def test_local_refs_and_known_meta_schemas_still_work(no_network: list[str]) -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {"volts": {"type": "number"}},
        "properties": {"v": {"$ref": "#/$defs/volts"}},
    }
    good = rules.check_output(
        b'{"v": 3}', expected_output_path="/w/a.json", output_format="", output_schema=schema
    )
    bad = rules.check_output(
        b'{"v": "3"}', expected_output_path="/w/a.json", output_format="", output_schema=schema
    )
    assert (good.schema_valid, bad.schema_valid) == (True, False)
    assert no_network == []


def test_is_valid_needs_parseable_output_a_completed_verifier_and_no_errors() -> None:
    assert rules.is_valid(True, True, []) is True
    assert rules.is_valid(False, True, []) is False
    assert rules.is_valid(True, False, []) is False
    assert rules.is_valid(True, True, ["reward 2 is outside [0, 1]"]) is False


@pytest.mark.parametrize(
    ("reward", "parseable", "rejected"),
    [
        (0.5, False, True),
        (1.0, False, True),
        (1e-9, False, True),
        (0.0, False, False),
        (0.5, True, False),
        (0.0, True, False),
    ],
)
def test_cross_field_rule_rejects_only_nonzero_reward_for_unparseable_output(
    reward: float, parseable: bool, rejected: bool
) -> None:
    assert (rules.cross_field_error(reward, parseable) is not None) is rejected


# --- scorers (seed 003) ----------------------------------------------------------------------

REQUIRED_BY_DEFAULT = [
    "command",
    "allowed_paths",
    "forbid_paths",
    "max_files_changed",
    "forbid_secrets",
    "file_exists",
    "tests_unmodified",
    "baseline_unmodified",
]


def test_the_catalog_has_eleven_types_split_eight_required_three_advisory() -> None:
    assert len(rules.SCORER_TYPES) == 11
    assert [t for t in rules.SCORER_TYPES if rules.default_required(t)] == REQUIRED_BY_DEFAULT
    assert {t for t in rules.SCORER_TYPES if not rules.default_required(t)} == {
        "no_new_skips",
        "assertions_not_weakened",
        "llm_judge",
    }


def test_llm_judge_is_advisory_even_when_marked_required() -> None:
    assert rules.is_advisory("llm_judge", required=True) is True
    assert rules.is_advisory("llm_judge", required=False) is True


def test_heuristic_detectors_gate_when_explicitly_required() -> None:
    assert rules.is_advisory("no_new_skips", required=True) is False
    assert rules.is_advisory("assertions_not_weakened", required=True) is False
    assert rules.is_advisory("command", required=False) is True


def outcome(
    verdict: str, type_: str = "command", required: bool | None = None, score: float | None = None
) -> ScorerOutcome:
    return ScorerOutcome(
        required=rules.default_required(type_) if required is None else required,
        type=type_,
        verdict=verdict,
        score=(1.0 if verdict == PASS else 0.0) if score is None else score,
    )


@pytest.mark.parametrize(
    ("scorers", "overall"),
    [
        ([], ""),  # no scorers: no OVERALL (ledger runs have no Scorers card)
        ([outcome(PASS)], PASS),
        ([outcome(FAIL)], FAIL),
        ([outcome(PASS), outcome(FAIL, "file_exists")], FAIL),
        ([outcome(NA)], PASS),  # N/A neither passes nor fails
        ([outcome(NA), outcome(NA, "forbid_paths")], PASS),
        ([outcome(PASS), outcome(NA, "tests_unmodified")], PASS),
        ([outcome(PASS), outcome(FAIL, "no_new_skips")], PASS),  # advisory by default
        ([outcome(PASS), outcome(FAIL, "assertions_not_weakened")], PASS),
        ([outcome(PASS), outcome(FAIL, "no_new_skips", required=True)], FAIL),
        ([outcome(PASS), outcome(FAIL, "llm_judge", required=True)], PASS),  # never gates
        ([outcome(PASS), outcome(FAIL, "command", required=False)], PASS),
        ([outcome(FAIL, "command", required=False), outcome(FAIL, "forbid_secrets")], FAIL),
    ],
)
def test_overall_fails_iff_a_required_applicable_scorer_fails(
    scorers: list[ScorerOutcome], overall: str
) -> None:
    assert rules.scorers_overall(scorers) == overall


def test_mean_counts_only_applicable_scorers() -> None:
    scorers = [outcome(PASS, score=1.0), outcome(FAIL, score=0.0), outcome(NA, score=0.0)]
    assert rules.scorers_mean(scorers) == 0.5


def test_mean_treats_the_spelling_n_slash_a_as_not_applicable() -> None:
    assert rules.scorers_mean([outcome(PASS, score=1.0), outcome("N/A", score=0.0)]) == 1.0


def test_mean_includes_advisory_scorers_and_rounds_to_four_decimals() -> None:
    scorers = [outcome(PASS, score=1.0), outcome(FAIL, "no_new_skips", score=0.0), outcome(PASS)]
    assert rules.scorers_mean(scorers) == 0.6667


def test_mean_is_none_without_applicable_scorers() -> None:
    assert rules.scorers_mean([]) is None
    assert rules.scorers_mean([outcome(NA)]) is None


def test_advisory_failed_sees_only_advisory_failures() -> None:
    assert rules.advisory_failed([outcome(FAIL, "no_new_skips")]) is True
    assert rules.advisory_failed([outcome(FAIL, "llm_judge", required=True)]) is True
    assert rules.advisory_failed([outcome(FAIL)]) is False
    assert rules.advisory_failed([outcome(NA, "no_new_skips"), outcome(PASS)]) is False


# --- gates -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "exception_type", "verifier_completed", "badge"),
    [
        ("completed", "", True, PASS),
        ("completed", "AgentTimeoutError", True, FAIL),
        ("completed", "", False, FAIL),
        ("failed", "", True, FAIL),
        ("cancelled", "", True, FAIL),
        ("running", "", False, ""),
        ("pending", "", False, ""),
    ],
)
def test_run_badge(status: str, exception_type: str, verifier_completed: bool, badge: str) -> None:
    assert rules.run_badge(status, exception_type, verifier_completed) == badge


NAMED = {
    (PASS, FAIL, False): rules.JUDGE_PASS_SCORERS_FAIL,
    (PASS, FAIL, True): rules.JUDGE_PASS_SCORERS_FAIL,
    (FAIL, PASS, False): rules.SCORERS_PASS_JUDGE_FAIL,
    (FAIL, PASS, True): rules.SCORERS_PASS_JUDGE_FAIL,
    (PASS, PASS, True): rules.ADVISORY_FAIL,
}


@pytest.mark.parametrize(
    ("judge", "scorers", "advisory_fail"),
    list(itertools.product([PASS, FAIL, UNPARSEABLE, ""], [PASS, FAIL, ""], [False, True])),
)
def test_gate_disagreement_names_exactly_the_three_seed_cases(
    judge: str, scorers: str, advisory_fail: bool
) -> None:
    expected = NAMED.get((judge, scorers, advisory_fail), "")
    assert rules.gate_disagreement(scorers, judge, advisory_fail) == expected


def summarise(scorers: list[ScorerOutcome], judge: str, **overrides: Any) -> rules.TrialSummary:
    values: dict[str, Any] = {
        "reward": 0.8,
        "is_valid": True,
        "verifier_completed": True,
        "scorers": scorers,
        "judge_verdict": judge,
        "failure_mode": "gave up",
        "status": "completed",
        "exception_type": "",
    }
    return rules.summarise(**(values | overrides))


def test_summary_names_both_pass_with_advisory_fail_from_the_scorers() -> None:
    summary = summarise([outcome(PASS), outcome(FAIL, "no_new_skips")], PASS)
    assert summary.scorer_verdict == PASS
    assert summary.gate_disagreement == rules.ADVISORY_FAIL


def test_summary_judge_failure_does_not_fail_the_run() -> None:
    summary = summarise([outcome(PASS)], UNPARSEABLE)
    assert summary.judge_verdict == UNPARSEABLE
    assert summary.run_badge == PASS
    assert summary.gate_disagreement == ""


def test_summary_keeps_failure_mode_only_on_a_fail() -> None:
    assert summarise([], FAIL).failure_mode == "gave up"
    assert summarise([], PASS).failure_mode == ""
    assert summarise([], UNPARSEABLE).failure_mode == ""


def test_summary_gates_are_independent_of_the_reward() -> None:
    low = summarise([outcome(PASS)], PASS, reward=0.0)
    high = summarise([outcome(PASS)], PASS, reward=1.0)
    assert (low.scorer_verdict, low.judge_verdict, low.run_badge) == (PASS, PASS, PASS)
    assert (high.scorer_verdict, high.judge_verdict, high.run_badge) == (PASS, PASS, PASS)


# --- humans ----------------------------------------------------------------------------------


def test_latest_judgment_per_reviewer_counts() -> None:
    annotations = [
        ("ada", (1, 1), "fail"),
        ("bob", (1, 2), "pass"),
        ("ada", (3, 3), "pass"),  # ada changed her mind
        ("bob", (0, 4), "fail"),  # older than bob's pass although read later
    ]
    assert sorted(rules.latest_per_reviewer(annotations)) == ["pass", "pass"]


def test_latest_judgment_tie_goes_to_the_later_annotation() -> None:
    assert rules.latest_per_reviewer([("ada", 5, "pass"), ("ada", 5, "fail")]) == ["fail"]


@pytest.mark.parametrize(
    ("latest", "consensus"),
    [
        ([], ""),
        (["pass"], "pass"),
        (["fail", "fail"], "fail"),
        (["defer"], "defer"),
        (["defer", "defer"], "defer"),
        (["pass", "defer"], "pass"),  # a defer abstains
        (["fail", "defer"], "fail"),
        (["pass", "fail"], "mixed"),
        (["pass", "fail", "defer"], "mixed"),
    ],
)
def test_human_consensus(latest: list[str], consensus: str) -> None:
    assert rules.human_consensus(latest) == consensus


@pytest.mark.parametrize(
    ("judgment", "reward", "threshold", "expected"),
    [
        ("pass", 0.49, 0.5, rules.HUMAN_PASS_AUTOMATED_FAIL),
        ("pass", 0.5, 0.5, ""),  # exactly at the threshold is an automated pass
        ("fail", 0.5, 0.5, rules.HUMAN_FAIL_AUTOMATED_PASS),
        ("fail", 0.49, 0.5, ""),
        ("fail", 0.8, 0.9, ""),  # the task's own threshold, not a global 0.5
        ("pass", 0.8, 0.9, rules.HUMAN_PASS_AUTOMATED_FAIL),
        ("pass", 0.0, 0.0, ""),
        ("fail", 1.0, 1.0, rules.HUMAN_FAIL_AUTOMATED_PASS),
        ("defer", 0.0, 0.5, ""),
        ("mixed", 1.0, 0.5, ""),
        ("", 1.0, 0.5, ""),
    ],
)
def test_human_disagreement_uses_the_task_pass_threshold(
    judgment: str, reward: float, threshold: float, expected: str
) -> None:
    assert rules.human_disagreement(judgment, reward, threshold) == expected


def test_automated_pass_is_reward_at_or_above_the_threshold() -> None:
    assert rules.automated_pass(0.7, 0.7) is True
    assert rules.automated_pass(0.6999, 0.7) is False


# --- determinism -----------------------------------------------------------------------------


def test_same_reward_file_gives_the_same_reading_every_time() -> None:
    raw = b'{"reward": 0.8125, "accuracy": 0.75, "extra": "x"}'
    first = rules.read_reward_json(raw)
    assert all(rules.read_reward_json(raw) == first for _ in range(20))


def test_same_output_gives_the_same_validity_every_time() -> None:
    results = [
        rules.check_output(
            b'{"voltage_drop_v": "x"}',
            expected_output_path="/w/a.json",
            output_format="",
            output_schema=SCHEMA,
        )
        for _ in range(10)
    ]
    assert all(r == results[0] for r in results)
