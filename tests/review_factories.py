"""Test data for the review app, made the way production makes it: TrialBundles through the
one BundleWriter (so summary columns, children and signals are all real)."""

from __future__ import annotations

import hashlib
import itertools
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth.models import Group, User
from django.db.models import Aggregate, Avg, Count, Q

from review.models import ReviewerProfile
from rewards import rules
from rewards.ingest.writer import BundleWriter
from rewards.models import Trial
from rewards.schemas import (
    Annotation,
    ErrorTag,
    FactCheck,
    JobRecord,
    JudgeVerdict,
    ResultRecord,
    ScorerResult,
    TaskRecord,
    TrialBundle,
    TrialRecord,
    ValidityCheck,
)

PASSWORD = "a-test-password-123"

# One string that tries every way in: a script element, an event handler, a javascript: URL,
# an attribute break-out and a template-looking string.
HOSTILE = (
    '<script>window.__pwned=1;alert("xss")</script>'
    '<img src=x onerror="window.__pwned=2;alert(1)">'
    '<a href="javascript:alert(3)">click</a>'
    '"\' onmouseover="alert(4)" {{ request.user }}'
)

START = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
_counter = itertools.count(1)


def _digest(*parts: object) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


def scorer(
    name: str = "tests",
    type: str = "command",
    verdict: str = "PASS",
    score: float | None = None,
    required: bool | None = None,
    detail: str = "",
    output_tail: str = "",
    config: dict[str, Any] | None = None,
) -> ScorerResult:
    return ScorerResult(
        name=name,
        type=type,
        verdict=verdict,
        score=score,
        required=required,
        detail=detail,
        output_tail=output_tail,
        config=config or {},
    )


def judge(
    verdict: str = "PASS",
    *,
    failure_mode: str | None = None,
    reasoning: str = "The agent computed the voltage drop correctly.",
    fact_checks: Sequence[tuple[str, str, str]] = (),
    raw_response: str = "",
    judge_model: str = "judge-1",
    scored_at: datetime | None = START,
) -> JudgeVerdict:
    rubric = (
        {}
        if verdict == "UNPARSEABLE"
        else {
            "task_completion": 4,
            "instruction_adherence": 5,
            "efficiency": 3,
        }
    )
    return JudgeVerdict(
        verdict=verdict,
        failure_mode=failure_mode,
        reasoning=reasoning,
        judge_model=judge_model,
        scored_at=scored_at,
        fact_checks=[FactCheck(claim=c, status=s, evidence=e) for c, s, e in fact_checks],
        raw_response=raw_response,
        **rubric,
    )


def annotation(
    reviewer: str = "carol",
    judgment: str = "pass",
    at: datetime | None = None,
    **extra: Any,
) -> Annotation:
    return Annotation(
        reviewer_id=reviewer,
        timestamp=at or START + timedelta(hours=1),
        judgment=judgment,
        **extra,
    )


def bundle(
    *,
    name: str | None = None,
    job: str = "nightly-42",
    task: str = "voltage-drop",
    task_source: str = "electrical",
    agent: str = "claude-code",
    model: str = "m-large",
    reward: float = 0.9,
    output_parseable: bool = True,
    errors: Sequence[str] = (),
    scorers: Sequence[ScorerResult] | None = None,
    judges: Sequence[JudgeVerdict] | None = None,
    error_tags: Sequence[ErrorTag] = (),
    annotations: Sequence[Annotation] = (),
    breakdown: dict[str, Any] | None = None,
    instruction: str = "Compute the voltage drop and write /workspace/answer.json.",
    pass_threshold: float = 0.5,
    status: str = "completed",
    exception_type: str = "",
    detail: dict[str, Any] | None = None,
    earlier_rewards: Sequence[float] = (),
) -> TrialBundle:
    """A complete, valid bundle; every keyword changes one aspect of it."""
    number = next(_counter)
    name = name or f"trial-{number:04d}"
    started = START + timedelta(minutes=number)
    results = [
        ResultRecord(
            reward=r,
            validity=ValidityCheck(
                output_parseable=True, schema_valid=True, verifier_completed=True
            ),
            artifact_digest=_digest(name, "earlier", i, r),
            raw_artifacts={"reward.json": f'{{"reward": {r}}}'},
            is_current=False,
            created_at=started - timedelta(days=1, minutes=i),
        )
        for i, r in enumerate(earlier_rewards)
    ]
    results.append(
        ResultRecord(
            reward=reward,
            metrics={"automated": reward},
            validity=ValidityCheck(
                output_parseable=output_parseable,
                schema_valid=output_parseable,
                verifier_completed=True,
                errors=list(errors),
            ),
            breakdown=breakdown
            if breakdown is not None
            else {
                "voltage_drop_v": {"score": 0.95, "max_score": 1.0, "evidence": "within 2%"},
                "compliance": {"score": 1.0, "max_score": 1.0, "evidence": "flagged compliant"},
            },
            artifact_digest=_digest(name, reward, output_parseable, *errors),
            raw_artifacts={"reward.json": f'{{"reward": {reward}}}'},
            created_at=started + timedelta(minutes=5),
        )
    )
    details = {
        "trajectory": {
            "schema_version": "ATIF-v1.7",
            "steps": [
                {"step_id": 1, "source": "user", "message": "Compute the voltage drop."},
                {
                    "step_id": 2,
                    "source": "agent",
                    "model_name": model,
                    "message": "I will compute it.",
                    "reasoning_content": "V = I * R.",
                    "tool_calls": [
                        {
                            "tool_call_id": "c1",
                            "function_name": "exec",
                            "arguments": {"command": "python calc.py"},
                        }
                    ],
                    "observation": {"results": [{"content": "3.2 V"}]},
                },
            ],
        },
        "workspace_diff": (
            "diff --git a/answer.json b/answer.json\n"
            "--- a/answer.json\n+++ b/answer.json\n@@ -1 +1 @@\n"
            '-{"v": 0}\n+{"v": 3.2}\n'
        ),
        "command": "claude -p 'solve'",
        "exit_code": 0,
        "stdout_tail": "done",
        "stderr_tail": "",
        "final_response": "The voltage drop is 3.2 V.",
        "verifier_stdout": "1 passed",
        "ctrf": {
            "results": {
                "tool": {"name": "pytest", "version": "8.4.1"},
                "summary": {"tests": 1, "passed": 1, "failed": 0, "skipped": 0},
                "tests": [{"name": "test_answer", "status": "passed", "duration": 0.01}],
            }
        },
    }
    details.update(detail or {})
    return TrialBundle(
        job=JobRecord(name=job, started_at=START),
        task=TaskRecord(
            name=task,
            source=task_source,
            instruction=instruction,
            expected_output_path="/workspace/answer.json",
            output_format="json",
            pass_threshold=pass_threshold,
        ),
        trial=TrialRecord(
            name=name,
            uid=uuid.uuid4(),
            agent_name=agent,
            agent_version="2.1",
            model_name=model,
            model_provider="acme",
            status=status,
            started_at=started,
            finished_at=started + timedelta(minutes=4, seconds=10),
            timings={
                "agent_execution": {
                    "started_at": started.isoformat(),
                    "finished_at": (started + timedelta(minutes=4)).isoformat(),
                }
            },
            n_input_tokens=1200,
            n_cache_tokens=45000,
            n_output_tokens=420,
            cost_usd=0.0123,
            exception_type=exception_type,
            **details,
        ),
        results=results,
        scorers=list(scorers) if scorers is not None else [scorer()],
        judge_verdicts=list(judges) if judges is not None else [judge()],
        error_tags=list(error_tags),
        annotations=list(annotations),
    )


def write(*bundles: TrialBundle) -> list[Trial]:
    outcomes = BundleWriter().write_many(list(bundles))
    bad = [o for o in outcomes if o.status == "invalid"]
    assert not bad, bad
    ids = [o.trial_id for o in outcomes]
    by_id = Trial.objects.in_bulk(ids)
    return [by_id[i] for i in ids]


def make_trial(**kwargs: Any) -> Trial:
    return write(bundle(**kwargs))[0]


def make_trials(count: int, **kwargs: Any) -> list[Trial]:
    return write(*(bundle(**kwargs) for _ in range(count)))


def hostile_bundle() -> TrialBundle:
    """A trial whose every agent-writable string carries HOSTILE."""
    h = HOSTILE
    return bundle(
        name=f"hostile-{next(_counter)} {h}",
        job=f"job {h}",
        task=f"task {h}",
        task_source=f"src {h}",
        agent=f"agent {h}"[:255],
        model=f"model {h}"[:255],
        reward=0.2,
        errors=[f"error {h}"],
        instruction=f"instruction {h}",
        exception_type=f"Err {h}"[:255],
        breakdown={f"dim {h}": {"score": 0.5, "max_score": 1.0, "evidence": f"evidence {h}"}},
        scorers=[
            scorer(
                name=f"scorer {h}"[:255],
                verdict="FAIL",
                detail=f"detail {h}",
                output_tail=f"tail {h}",
                config={"command": h},
            ),
            scorer(name="advisory", type="no_new_skips", verdict="FAIL", detail=h),
        ],
        judges=[
            judge(
                "FAIL",
                failure_mode=f"mode {h}",
                reasoning=f"reasoning {h}",
                fact_checks=[(f"claim {h}", f"status {h}"[:64], f"evidence {h}")],
                judge_model=f"model {h}"[:255],
            )
        ],
        error_tags=[ErrorTag(category=f"cat {h}"[:255], description=f"desc {h}", source="judge")],
        annotations=[
            annotation(
                reviewer=f"rev{h}"[:150],
                judgment="fail",
                notes=f"notes {h}",
                categories=[f"category {h}"],
                reviewer_discipline=f"discipline {h}"[:100],
                judge_verdict_seen="FAIL",
            )
        ],
        detail={
            "trajectory": {
                "steps": [
                    {
                        "step_id": h,
                        "source": h,
                        "message": f"message {h}",
                        "reasoning_content": f"reasoning {h}",
                        "tool_calls": [{"function_name": h, "arguments": {"cmd": h}}],
                        "observation": {"results": [{"content": f"observation {h}"}]},
                    }
                ]
            },
            "workspace_diff": f"diff --git a/{h} b/{h}\n@@ -1 +1 @@\n-{h}\n+{h}\n",
            "command": h,
            "stdout_tail": f"stdout {h}",
            "stderr_tail": f"stderr {h}",
            "final_response": f"final {h}",
            "exception_traceback": f"traceback {h}",
            "verifier_stdout": f"verifier {h}",
            "ctrf": {"results": {"tool": {"name": h}, "tests": [{"name": h, "status": h}]}},
        },
    )


# --- users -------------------------------------------------------------------------------
def make_user(username: str, *roles: str, staff: bool = False, discipline: str = "") -> User:
    user = User.objects.create_user(username=username, password=PASSWORD, is_staff=staff)
    for role in roles:
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    if discipline:
        ReviewerProfile.objects.create(user=user, discipline=discipline)
    return user


def names(trials: Iterable[Trial]) -> list[str]:
    return [t.name for t in trials]


def login(
    client: Any, username: str, *roles: str, staff: bool = False, discipline: str = ""
) -> User:
    """A user with `roles`, logged in on the test client."""
    user = make_user(username, *roles, staff=staff, discipline=discipline)
    client.force_login(user)
    return user


def is_fragment(html: str) -> bool:
    return "<html" not in html and "<body" not in html


# --- the jobs pages' figures, counted from trials --------------------------------------------
GATE_KINDS = [rules.JUDGE_PASS_SCORERS_FAIL, rules.SCORERS_PASS_JUDGE_FAIL, rules.ADVISORY_FAIL]
HUMAN_KINDS = [rules.HUMAN_PASS_AUTOMATED_FAIL, rules.HUMAN_FAIL_AUTOMATED_PASS]


def summary_aggregates(prefix: str = "") -> dict[str, Aggregate]:
    """The jobs pages' figures counted from trials (Count/Avg expressions; `prefix` is the
    path to them, `trials__` from Job): what the kept tallies must add up to."""
    p = prefix

    def count(**condition: Any) -> Count:
        return Count(f"{p}id", filter=Q(**{f"{p}{k}": v for k, v in condition.items()}))

    return {
        "trial_count": Count(f"{p}id"),
        "mean_reward": Avg(f"{p}reward"),
        "valid_count": count(is_valid=True),
        "scorer_pass": count(scorer_verdict="PASS"),
        "scorer_ran": count(scorer_verdict__in=["PASS", "FAIL"]),
        "judge_pass": count(judge_verdict="PASS"),
        "judge_decided": count(judge_verdict__in=["PASS", "FAIL"]),
        "judge_unparseable": count(judge_verdict="UNPARSEABLE"),
        "run_pass": count(run_badge="PASS"),
        "run_done": count(run_badge__in=["PASS", "FAIL"]),
        "reviewed": count(annotation_count__gt=0),
        "gate_disagreements": count(gate_disagreement__in=GATE_KINDS),
        "human_disagreements": count(human_disagreement__in=HUMAN_KINDS),
    }


GATE_KINDS = [rules.JUDGE_PASS_SCORERS_FAIL, rules.SCORERS_PASS_JUDGE_FAIL, rules.ADVISORY_FAIL]
HUMAN_KINDS = [rules.HUMAN_PASS_AUTOMATED_FAIL, rules.HUMAN_FAIL_AUTOMATED_PASS]
