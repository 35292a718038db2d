"""The generator of synthetic trials: trial `i` of a plan as a `TrialBundle` plus Harbor hints.

The bundles go to the writer (`demo.loaders.seed_with_writer`), become rows for the fast COPY
path (`demo.loaders.FastLoader`, from a bounded set of archetypes) and files for the Harbor
writer (`demo.harbor`). Everything is drawn from `random.Random` seeded with `(seed, trial
index)`: the same seed gives the same content, and any trial can be made on its own (the fast
path and the Harbor writer rely on that). Each part of a trial has its module: `grading`
(scorers, judge, reviews), `artifacts` (the agent's output, the verifier's files, the results)
and `record` (status, exception, timings, blobs, error tags); they draw from the trial's one
random stream in the order `DemoGenerator.trial` calls them.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from demo.cases import (
    HOSTILE,
    HOSTILE_EVERY,
    LONG_EVERY,
    NO_VERIFIER,
    NOT_GRADED,
    VALID,
    GateCase,
)
from demo.catalogue import TASKS, TaskTemplate
from demo.generator import artifacts, grading, record
from demo.generator.context import HarborHints, TrialContext
from demo.plan import DemoPlan
from rewards import rules, schemas
from rewards.ingest.mapping import summary_of
from rewards.schemas import TrialBundle


@dataclass
class DemoTrial:
    """One generated trial: the bundle, the Harbor writer's hints and the cases it meant."""

    index: int
    bundle: TrialBundle
    harbor: HarborHints
    gate: GateCase
    validity: str
    exception: str
    hostile: bool
    long: bool


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
        ctx = TrialContext(
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
        # The parts draw from `rng` in this order; changing it changes every seed's data.
        scorers = grading.scorer_results(ctx)
        judges = grading.judge_verdicts(ctx)
        results, hints = artifacts.evaluation_results(ctx)
        trial = record.trial_record(ctx, results[-1])
        tags = record.error_tags(ctx, results[-1])
        data = {
            "job": {
                "name": job.name,
                "started_at": job.started_at,
                "finished_at": job.finished_at,
                "config": job.config(),
                "stats": {},
            },
            "task": plan.record_of(task).model_dump(),
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
                schemas.Annotation.model_validate(note) for note in grading.reviews(ctx, seen)
            ]
        # Harbor leaves model_info null for some agents whatever the provider.
        hints.model_info_null = not ctx.profile.provider or i % 9 == 4
        hints.extra_keys = i % 4 == 1
        if task.kind == "claw":
            hints.steps = artifacts.claw_steps(ctx, bundle)
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
    def _sanity_check(ctx: TrialContext, bundle: TrialBundle) -> None:
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
