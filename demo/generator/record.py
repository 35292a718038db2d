"""A generated trial's record and error tags.

The record: status, exception, timings, tokens and cost, and the blobs (trajectory, workspace
diff, command output, verifier stdout, CTRF).
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta
from typing import Any

from demo.cases import HOSTILE, HOSTILE_PAYLOAD
from demo.catalogue import SCENARIO_FULL
from demo.generator.context import TrialContext
from demo.generator.grading import REASONING_ON_FAILURE
from demo.plan import iso

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


def _exception(ctx: TrialContext) -> tuple[str, str, str]:
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


def _status(ctx: TrialContext) -> str:
    if ctx.exception in {"running", "pending", "cancelled"}:
        return ctx.exception
    if ctx.exception in {"", "agent_timeout_with_reward"}:
        return "completed"  # Harbor ran the verifier after the timeout: the run completed
    return "failed"


def _phases(ctx: TrialContext) -> list[tuple[str, datetime, datetime]]:
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


def trial_record(ctx: TrialContext, current: dict[str, Any]) -> dict[str, Any]:
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
        "timings": {name: {"started_at": iso(s), "finished_at": iso(e)} for name, s, e in phases},
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


def _final_response(ctx: TrialContext) -> str:
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


def _command_output(ctx: TrialContext, final: str) -> tuple[str, int | None, str, str]:
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
    }[profile.agent].format(model=profile.qualified_model)
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


def _trial_config(ctx: TrialContext) -> dict[str, Any]:
    """Harbor's TrialConfig without the trial's identity (trial_name, trials_dir, job_id)."""
    profile, task = ctx.profile, ctx.task
    env_key = "ANTHROPIC_API_KEY" if profile.provider == "anthropic" else "OPENAI_API_KEY"
    return {
        "task": {"path": f"datasets/{task.source}/{task.short}", "source": task.source},
        "timeout_multiplier": 1.0,
        "agent_timeout_multiplier": 3.0 if task.kind == "pinch" else None,
        "agent": {
            "name": profile.agent,
            "model_name": profile.qualified_model,
            "kwargs": {"version": profile.version, "max_tokens": 8192},
            "env": {env_key: "${" + env_key + "}"},
        },
        "environment": {"type": "docker", "force_build": False, "delete": True},
        "verifier": {"override_timeout_sec": None, "disable": False},
    }


def _trajectory(ctx: TrialContext, final: str) -> dict[str, Any]:
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
    if "tests_unmodified" in ctx.failing:
        # The edit its workspace diff shows (`_DIFF_HUNKS`), made in a step: the trial page's
        # integrity card links the finding to it.
        edit = "sed -i 's/12, 13, 14]/12, 13, 15]/' tests/test_core.py"
        calls.append(("bash", {"command": edit}, ""))
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
            "model_name": profile.qualified_model,
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


def _workspace_diff(ctx: TrialContext) -> str:
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


def _verifier_stdout(ctx: TrialContext, current: dict[str, Any]) -> str:
    if not current["validity"]["verifier_completed"]:
        return ""
    task = ctx.plan.record_of(ctx.task)
    lines = [f"+ bash {task.verifier_script}"]
    if ctx.task.expected_output_path:
        lines.append(f"reading {ctx.task.expected_output_path}")
    lines += current["validity"]["errors"]
    lines.append(f"writing {task.reward_path}")
    return "\n".join(lines)


def _ctrf(ctx: TrialContext) -> dict[str, Any]:
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


def error_tags(ctx: TrialContext, current: dict[str, Any]) -> list[dict[str, Any]]:
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
            REASONING_ON_FAILURE[:120],
            "judge",
        )
    if ctx.hostile:
        tag("prompt injection", ctx.lead, "judge")
    return tags
