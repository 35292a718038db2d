"""Evidence at the step (issue 24): the trial page of a long trajectory with step comments,
and two long trajectories side by side, timed against the same bare 50-row page as the
explorer.

    DATABASE_URL=postgres://… .venv/bin/python bench/evidence.py [--repeat 15]

(`bench/run.py evidence` runs the same figures.) It makes its own data, once, and keeps it:
a job of its own (`EVIDENCE_JOB`) holding two trials of one task, each a trajectory of
2,000 generated steps (tool calls, reasoning, observations of a few hundred bytes to a few
KB, about 3 MB of JSON a trial), written by the ingest writer, and 20 step comments on the
first by a reviewer of its own, eight of them on a range of text. Step comments are
append-only records, so the trials are kept between runs, as the judging benchmark keeps
its job; a database that already holds them is only read.

Figures (ours sampled alternately with the bare page, `bench.run.compare`):
- the trial page's first screen (`/trials/<id>/`, opening on the trajectory, seen by the
  commenting reviewer): at most 4 times the bare page, the trial page's budget;
- the aligned view of the two trials (`/compare/trials/<a>/<b>/`, the alignment kept from
  an earlier view, as every view after the first finds it): at most 3 times;
- the trial page against the newest other trial's page (a few steps, no comments), seen by
  the same reviewer: what the steps and comments add, shown;
- the same two pages with the bench's cache emptied before each request (the first view of
  a trial or a pair since it was stored: the steps presented, the alignment computed): shown,
  no budget.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.run import Figure, compare, ensure_trials, page_fetcher, say, setup_django, table

if TYPE_CHECKING:
    from django.test import Client

EVIDENCE_JOB = "bench-evidence-2000-steps"
EVIDENCE_TASK = "bench-evidence-long-task"
EVIDENCE_REVIEWER = "bench-evidence-reviewer"
STEPS = 2000
# Where the two runs part: the same steps up to here, then each its own way (with steps
# only one of them takes).
COMMON_STEPS = 1200
COMMENTS = 20
TRIAL_PAGE_BUDGET = "<= 4"
ALIGNED_BUDGET = "<= 3"
START = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)

_COMMANDS = (
    "ls -la src/",
    "cat src/parser.py",
    "python -m pytest -q tests/test_parser.py",
    "grep -rn 'def parse' src/",
    "git diff --stat",
    "sed -n 1,80p src/tokenizer.py",
    "python scripts/check_schema.py --strict",
    "pip list --format=freeze",
)
_WORDS = [
    "parser",
    "token",
    "stream",
    "buffer",
    "offset",
    "schema",
    "field",
    "value",
    "error",
    "line",
    "column",
    "test",
    "case",
    "fixture",
    "module",
    "import",
    "function",
    "return",
    "None",
    "list",
    "dict",
    "key",
    "index",
    "range",
    "slice",
    "path",
    "config",
    "option",
    "default",
    "retry",
    "timeout",
    "status",
    "result",
    "output",
    "expected",
    "actual",
    "assert",
]


def _text(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    length = 0
    while length < chars:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:chars]


def _observation(rng: random.Random, command: str) -> str:
    """Terminal output of a few hundred bytes to a few KB."""
    lines = []
    for number in range(rng.randint(4, 60)):
        lines.append(f"{command.split()[0]}:{number:04d}: {_text(rng, rng.randint(20, 90))}")
    return "\n".join(lines)


def _step(rng: random.Random, number: int, tag: str) -> dict[str, Any]:
    when = START + timedelta(seconds=7 * number)
    metrics = {
        "prompt_tokens": rng.randint(2_000, 40_000),
        "completion_tokens": rng.randint(20, 600),
        "cost_usd": round(rng.uniform(0.001, 0.02), 5),
    }
    if rng.random() < 0.1:
        return {
            "step_id": number,
            "timestamp": when.isoformat(),
            "source": "agent",
            "model_name": "bench-model",
            "message": f"{tag}: " + _text(rng, rng.randint(120, 900)),
            "metrics": metrics,
        }
    command = f"{rng.choice(_COMMANDS)} # {tag}"
    return {
        "step_id": number,
        "timestamp": when.isoformat(),
        "source": "agent",
        "model_name": "bench-model",
        "message": _text(rng, rng.randint(40, 300)),
        "reasoning_content": _text(rng, rng.randint(80, 600)),
        "tool_calls": [
            {
                "tool_call_id": f"call-{number}",
                "function_name": "exec",
                "arguments": {"command": command, "timeout": 120},
            }
        ],
        "observation": {"results": [{"content": _observation(rng, command)}]},
        "metrics": metrics,
    }


def trajectory(side: str) -> dict[str, Any]:
    """`STEPS` steps: the first `COMMON_STEPS` the same for both sides (the same seed), then
    each side's own, with a step of its own every so often."""
    common = random.Random(24)
    steps: list[dict[str, Any]] = [
        {"step_id": 1, "timestamp": START.isoformat(), "source": "user", "message": "Fix it."}
    ]
    steps += [_step(common, number, "common") for number in range(2, COMMON_STEPS + 1)]
    own = random.Random(f"evidence-{side}")
    for number in range(COMMON_STEPS + 1, STEPS + 1):
        # Every tenth step is each side's own; the others stay alike (both sides draw them
        # from the same generator), so the alignment has runs in common and steps changed.
        mine = number % 10 == 0
        steps.append(_step(own if mine else common, number, side if mine else "common"))
    return {"schema_version": "ATIF-v1.7", "session_id": f"bench-{side}", "steps": steps}


def _bundle(side: str) -> Any:
    from rewards.schemas import (
        JobRecord,
        ResultRecord,
        TaskRecord,
        TrialBundle,
        TrialRecord,
        ValidityCheck,
    )

    name = f"{EVIDENCE_JOB}-{side}"
    return TrialBundle(
        job=JobRecord(name=EVIDENCE_JOB, started_at=START),
        task=TaskRecord(name=EVIDENCE_TASK, source="bench", instruction="Fix the parser."),
        trial=TrialRecord(
            name=name,
            uid=uuid.uuid5(uuid.NAMESPACE_URL, f"trialdesk-bench:{name}"),
            agent_name="bench-agent",
            model_name="bench-model",
            started_at=START,
            finished_at=START + timedelta(seconds=7 * STEPS),
            trajectory=trajectory(side),
            workspace_diff="diff --git a/src/parser.py b/src/parser.py\n",
        ),
        results=[
            ResultRecord(
                reward=0.5,
                validity=ValidityCheck(
                    output_parseable=True, schema_valid=True, verifier_completed=True
                ),
                artifact_digest=hashlib.sha256(name.encode()).hexdigest(),
            )
        ],
    )


def ensure_evidence_trials() -> tuple[int, int]:
    """The two trials, written once (ingest writer), and the 20 comments on the first."""
    from django.contrib.auth.models import Group, User

    from review.models import CommentTarget, StepComment, add_step_comment
    from rewards.ingest.writer import BundleWriter
    from rewards.models import Trial, TrialDetail

    names = [f"{EVIDENCE_JOB}-{side}" for side in ("a", "b")]
    found = dict(Trial.objects.filter(job__name=EVIDENCE_JOB).values_list("name", "id"))
    if set(names) - set(found):
        say(f"  writing two trials of {STEPS:,} steps (job {EVIDENCE_JOB})")
        outcomes = BundleWriter().write_many([_bundle("a"), _bundle("b")])
        assert all(o.status != "invalid" for o in outcomes), outcomes
        found = dict(Trial.objects.filter(job__name=EVIDENCE_JOB).values_list("name", "id"))
    a, b = found[names[0]], found[names[1]]
    reviewer, _ = User.objects.get_or_create(username=EVIDENCE_REVIEWER)
    reviewer.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    have = StepComment.objects.filter(trial_id=a).count()
    if have < COMMENTS:
        say(f"  adding {COMMENTS - have} step comments")
        raw = TrialDetail.objects.filter(trial_id=a).values_list("trajectory", flat=True).get()
        assert isinstance(raw, dict)
        steps = raw["steps"]
        for n in range(have, COMMENTS):
            # Spread over the run, a few on the first screen, every other one on a range
            # of the command's output.
            number = 2 + n * 97 if n >= 4 else 2 + n * 3
            step = steps[number - 1]
            ranged = n % 5 < 2 and "observation" in step
            if ranged:
                text = step["observation"]["results"][0]["content"]
                target = CommentTarget(number, "observation", 0, quote=text[10:60])
            else:
                target = CommentTarget(number, "message")
            add_step_comment(
                trial_id=a,
                author=reviewer,
                target=target,
                text=f"Step {number}: the agent reads the same file again (note {n + 1}).",
            )
    return a, b


def reviewer_client() -> Client:
    from django.contrib.auth.models import User
    from django.test import Client

    client = Client()
    client.force_login(User.objects.get(username=EVIDENCE_REVIEWER))
    return client


def bench_evidence(repeat: int) -> list[Figure]:
    from django.core.cache import cache
    from django.db import connection

    from rewards.models import Trial

    say(f"evidence: two trials of {STEPS:,} steps, {COMMENTS} step comments, {connection.vendor}")
    a, b = ensure_evidence_trials()
    client = reviewer_client()

    get = page_fetcher(client)
    bare = get("/bench/bare-50/")
    trial_page = get(f"/trials/{a}/")
    aligned = get(f"/compare/trials/{a}/{b}/")
    newest = (
        Trial.objects.exclude(job__name=EVIDENCE_JOB)
        .order_by("-id")
        .values_list("id", flat=True)
        .first()
    )
    return [
        compare(
            f"trial page, {STEPS:,} steps, {COMMENTS} step comments / bare page",
            trial_page,
            bare,
            TRIAL_PAGE_BUDGET,
            repeat,
        ),
        compare(
            f"aligned view, two {STEPS:,}-step trajectories, kept / bare page",
            aligned,
            bare,
            ALIGNED_BUDGET,
            repeat,
        ),
        # What the steps and comments add: the page of the newest other trial (a few steps,
        # no comments), seen by the same reviewer.
        compare(
            "trial page, 2,000 steps, 20 step comments / the newest other trial's page",
            trial_page,
            get(f"/trials/{newest}/"),
            "",
            repeat,
        ),
        compare(
            "trial page, nothing kept / bare page",
            trial_page,
            bare,
            "",
            max(3, repeat // 3),
            before=cache.clear,
        ),
        compare(
            "aligned view, nothing kept (alignment computed) / bare page",
            aligned,
            bare,
            "",
            max(3, repeat // 3),
            before=cache.clear,
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=None, help="trials in the database")
    parser.add_argument("--repeat", type=int, default=15, help="samples per page timing")
    args = parser.parse_args()
    setup_django()
    from django.db import connection

    # The bare page's 50 rows, as in every other figure (seeded if missing; never migrated
    # here: `bench/run.py` migrates a fresh database first).
    ensure_trials(args.trials or (1_000_000 if connection.vendor == "postgresql" else 20_000))
    figures = bench_evidence(args.repeat)
    print(table(figures))
    sys.exit(0 if all(f.ok is not False for f in figures) else 1)


if __name__ == "__main__":
    main()
