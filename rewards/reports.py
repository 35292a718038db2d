"""The run's own reports, read leniently: ATIF trajectories and CTRF test reports.

Both are written by the agent under evaluation or by its verifier (DESIGN §9), so any shape
may arrive: what is readable is read, the rest is skipped, nothing is trusted as markup. The
trial page (`review.pages.presenters`) shows them and the judge (`rewards.scoring.grading`)
reads them, from this one reading.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

STEP_PART_KINDS = ("message", "tool_call", "observation", "reasoning")


def as_text(value: Any) -> str:
    """Any JSON value as display text: strings as they are, the rest as indented JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


# --- ATIF -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Part:
    """One part of a trajectory step, its text whole (the reader bounds it)."""

    kind: str  # one of STEP_PART_KINDS
    label: str
    text: str
    name: str = ""  # the tool's name, as the agent wrote it


def _part(kind: str, label: str, value: Any, name: str = "") -> Part | None:
    text = as_text(value)
    return Part(kind, label, text, name) if text.strip() else None


def step_parts(step: Mapping[str, Any]) -> list[Part]:
    """An ATIF step's reasoning, message, tool calls and observations, in that order."""
    parts: list[Part | None] = [
        _part("reasoning", "Reasoning", step.get("reasoning_content")),
        _part("message", "Message", step.get("message")),
    ]
    calls = step.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, Mapping):
            name = as_text(call.get("function_name") or call.get("name") or "tool")
            arguments = call.get("arguments")
            parts.append(_part("tool_call", "Tool call", arguments if arguments else "{}", name))
        else:
            parts.append(_part("tool_call", "Tool call", call))
    observation = step.get("observation")
    if isinstance(observation, Mapping) and isinstance(observation.get("results"), list):
        for result in observation["results"]:
            content = result.get("content") if isinstance(result, Mapping) else result
            parts.append(_part("observation", "Observation", content))
    elif observation is not None:
        parts.append(_part("observation", "Observation", observation))
    return [p for p in parts if p is not None]


def steps(raw: Any) -> list[Mapping[str, Any]] | None:
    """An ATIF document's steps (a bare list is taken as the steps; a step that is not an
    object becomes its message); None when there are no steps to read."""
    found = raw.get("steps") if isinstance(raw, Mapping) else raw
    if not isinstance(found, list):
        return None
    return [
        item if type(item) is dict or isinstance(item, Mapping) else {"message": item}
        for item in found
    ]


def stages(raw: Any) -> list[tuple[str, Any]]:
    """A multi-step trial's trajectories by step name (`{"multi_step": [{step_name,
    trajectory}]}`, as the Harbor reader stores them), or the one trajectory unnamed."""
    staged = raw.get("multi_step") if isinstance(raw, Mapping) else None
    if not isinstance(staged, list):
        return [("", raw)]
    return [
        (as_text(s.get("step_name")), s.get("trajectory")) for s in staged if isinstance(s, Mapping)
    ]


def numbered_steps(raw: Any) -> list[Mapping[str, Any]]:
    """Every ATIF step of a trajectory in order, a multi-step trial's stages one after the
    other: step N (what the judge is shown as `[step N]` and cites) is item N - 1. A stage
    that is not ATIF has no steps."""
    found: list[Mapping[str, Any]] = []
    for _, trajectory in stages(raw):
        found.extend(steps(trajectory) or [])
    return found


def first_user_message(raw: Any) -> str:
    """The first message a user step gave the agent: the task as the agent received it."""
    for _, trajectory in stages(raw):
        for step in steps(trajectory) or []:
            if step.get("source") == "user" and (text := as_text(step.get("message")).strip()):
                return text
    return ""


# --- CTRF -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CtrfTest:
    name: str
    status: str
    duration: str
    message: str


@dataclass(frozen=True)
class Ctrf:
    tool: str
    summary: list[tuple[str, str]]
    tests: list[CtrfTest]


def ctrf(raw: Any) -> Ctrf | None:
    """A CTRF report (`{results: {tool, summary, tests}}`), whatever of it is readable."""
    if not isinstance(raw, Mapping):
        return None
    results = raw.get("results")
    if not isinstance(results, Mapping):
        return None
    tool = results.get("tool")
    tool_name = ""
    if isinstance(tool, Mapping):
        tool_name = " ".join(as_text(tool.get(k)) for k in ("name", "version") if tool.get(k))
    summary_raw = results.get("summary")
    summary = []
    if isinstance(summary_raw, Mapping):
        for key in ("tests", "passed", "failed", "skipped", "pending", "other"):
            if key in summary_raw:
                summary.append((key, as_text(summary_raw[key])))
    tests = []
    tests_raw = results.get("tests")
    for item in tests_raw if isinstance(tests_raw, list) else []:
        if isinstance(item, Mapping):
            duration = item.get("duration")
            tests.append(
                CtrfTest(
                    name=as_text(item.get("name")),
                    status=as_text(item.get("status")),
                    duration=f"{duration:.3f} s"
                    if isinstance(duration, int | float) and not isinstance(duration, bool)
                    else as_text(duration),
                    message=as_text(item.get("message") or item.get("trace") or ""),
                )
            )
    return Ctrf(tool=tool_name, summary=summary, tests=tests)
