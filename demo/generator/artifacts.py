"""A generated trial's files and results.

The agent's output file, the verifier's reward and details files, the evaluation results read
from them (through the domain's own readers, `rules` and `rubric`), and multi-step rewards.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from datetime import timedelta
from typing import Any

import yaml

from demo.cases import CONFIDENCE_EVERY, NOT_GRADED, RESULT_HISTORY_EVERY
from demo.generator.context import HarborHints, TrialContext
from rewards import rubric, rules
from rewards.schemas import DetailsFile, TrialBundle


def _good_output(ctx: TrialContext) -> Any:
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


def _output(ctx: TrialContext) -> str | None:
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


def _dims(ctx: TrialContext) -> dict[str, dict[str, Any]]:
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


def _reward_payload(ctx: TrialContext, intended: float) -> tuple[str, dict[str, Any]]:
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


def evaluation_results(ctx: TrialContext) -> tuple[list[dict[str, Any]], HarborHints]:
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


def _intended_check(ctx: TrialContext, output: str | None) -> rules.OutputCheck:
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


def _confidence(ctx: TrialContext, reward: float) -> dict[str, Any]:
    spread = round(ctx.rng.uniform(0.02, 0.12), 3)
    return {
        "method": "bootstrap",
        "n": 200,
        "ci_low": round(max(0.0, reward - spread), 4),
        "ci_high": round(min(1.0, reward + spread), 4),
    }


def _digest(artifacts: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(artifacts, sort_keys=True).encode()).hexdigest()


def claw_steps(ctx: TrialContext, bundle: TrialBundle) -> list[tuple[str, float]]:
    """Multi-step Harbor trials: per-step rewards whose aggregate (the mean) is not the last."""
    reward = bundle.current_result.reward
    if not 0 < reward < 1:
        return [("plan", reward), ("run", reward)]
    first = round(min(1.0, reward * 1.5), 4)
    return [("plan", first), ("run", round(max(0.0, 2 * reward - first), 4))]
