"""Judge calibration: each judge version against the humans, its admission, and pass rates
corrected for its errors (the formulas are in `review.science.judge_error`).

- **A judge version** is a judge model and a rubric version, as each verdict records them
  (`JudgeVerdict.judge_model`, `rubric_version`; an ingested verdict may have no rubric version).
- **The human reference** of a trial is its human judgment (`Trial.human_judgment`, kept by
  `review.models.refresh_human_summary`): the latest adjudicated verdict where there is one,
  else the reviewers' latest judgments when they agree (defers abstain). A trial whose
  reviewers disagree and are not adjudicated, or only deferred, is not labelled.
- **A labelled trial** counts once per judge version that decided it (PASS or FAIL; that
  version's latest decided verdict of the trial). Positive is PASS: the true positive rate
  (TPR) is the share of human-pass trials the judge passed, the true negative rate (TNR) the
  share of human-fail trials it failed.
- **The split**: each labelled trial is in the calibration part or the test part, by a hash
  of its id with the rule's salt (`CalibrationRule.split_salt`, made once). A hash rather than
  a row written when a trial is first labelled: trials are labelled by annotations from the
  page, the API, bundles and adjudications, and a hash needs no hook in any of them, yet
  gives each trial one part for good. The salt keeps the parts from being predictable from
  trial ids. About half the trials fall in each part.
- **Status** is decided on the test part only, so a rule tuned while looking at the
  calibration figures is still checked on trials it did not see: *too few labels* unless
  there are `min_labelled` human-pass and as many human-fail trials, else *admitted* when
  the lower bounds of TPR and TNR (Wilson, 95%) reach the rule's thresholds, else *not
  admitted*.
- **The correction** uses the calibration part's TPR and TNR (the test part having been
  spent on the admission), for an admitted version only.
- **Left out** (`review.science.exclusions`): by default the labelled trials of tasks
  confirmed defective and those with a confirmed reward hack do not count, in the report nor
  in a job's counts by judge version, so a broken task's or a hacked trial's label does not
  move a judge's rates and a corrected pass rate counts the trials the job page counts. The
  same switches as the job page's (`include_defective=1`, `include_hacks=1`) count them, and
  the report says how many labelled trials the reasons name.

Reading: one query for the rule and one for every decided verdict of a labelled trial (driven
by `TrialReviewed`, which holds only reviewed trials), then Python counts. The labelled trials
are what people reviewed, thousands rather than millions. The report and each job's counts
by judge version are kept in the shared cache (`rewards.cache.calibration_key`,
`judge_versions_key`) under the newest verdict, annotation and adjudication ids, which the
rule's query reads too, and what the exclusion reasons leave out: while nothing is judged,
reviewed or confirmed, a page reads one row.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db.models import Count, Q, Subquery

from review.models import Adjudication, Annotation, CalibrationRule, TrialReviewed
from review.science import exclusions, judge_error
from rewards.agreement import LEVEL, SEED, Interval
from rewards.cache import (
    CALIBRATION_TTL,
    cached_intervals,
    calibration_key,
    interval_key,
    judge_versions_key,
)
from rewards.models import HumanJudgment, Job, JudgeVerdict, Trial

CALIBRATION = "calibration"
TEST = "test"

ADMITTED = "admitted"
NOT_ADMITTED = "not admitted"
TOO_FEW = "too few labels"

_HUMAN_DECIDED = (HumanJudgment.PASS, HumanJudgment.FAIL)
_JUDGE_DECIDED = (JudgeVerdict.Outcome.PASS, JudgeVerdict.Outcome.FAIL)


def part_of(trial_id: int, salt: str) -> str:
    """The part a labelled trial is in, for good: the first 64 bits of sha256(salt:id),
    below half the range for calibration."""
    digest = hashlib.sha256(f"{salt}:{trial_id}".encode()).digest()
    return CALIBRATION if int.from_bytes(digest[:8], "big") < 2**63 else TEST


@dataclass(frozen=True)
class Version:
    judge_model: str
    rubric_version: str

    def __str__(self) -> str:
        return (
            f"{self.judge_model or '(no model)'} · {self.rubric_version or '(no rubric version)'}"
        )


@dataclass
class Confusion:
    """A judge version against the human reference: PASS is positive."""

    true_pos: int = 0  # judge PASS, human pass
    false_neg: int = 0  # judge FAIL, human pass
    true_neg: int = 0  # judge FAIL, human fail
    false_pos: int = 0  # judge PASS, human fail

    def add(self, judge: str, human: str) -> None:
        if human == HumanJudgment.PASS:
            if judge == JudgeVerdict.Outcome.PASS:
                self.true_pos += 1
            else:
                self.false_neg += 1
        elif judge == JudgeVerdict.Outcome.FAIL:
            self.true_neg += 1
        else:
            self.false_pos += 1

    @property
    def positives(self) -> int:
        return self.true_pos + self.false_neg

    @property
    def negatives(self) -> int:
        return self.true_neg + self.false_pos

    @property
    def n(self) -> int:
        return self.positives + self.negatives

    @property
    def tpr(self) -> float | None:
        return self.true_pos / self.positives if self.positives else None

    @property
    def tnr(self) -> float | None:
        return self.true_neg / self.negatives if self.negatives else None

    @property
    def tpr_interval(self) -> Interval | None:
        return judge_error.wilson_interval(self.true_pos, self.positives)

    @property
    def tnr_interval(self) -> Interval | None:
        return judge_error.wilson_interval(self.true_neg, self.negatives)


@dataclass
class Calibration:
    """One judge version's figures on each part and its status under the rule."""

    version: Version
    calibration: Confusion = field(default_factory=Confusion)
    test: Confusion = field(default_factory=Confusion)
    status: str = TOO_FEW
    reason: str = ""

    @property
    def admitted(self) -> bool:
        return self.status == ADMITTED

    def judge(self, rule: CalibrationRule) -> None:
        """Set the status from the test part under `rule`."""
        test = self.test
        if test.positives < rule.min_labelled or test.negatives < rule.min_labelled:
            self.status = TOO_FEW
            self.reason = (
                f"the test part has {test.positives} human-pass and {test.negatives} "
                f"human-fail trials; the rule asks for {rule.min_labelled} of each"
            )
            return
        tpr, tnr = test.tpr_interval, test.tnr_interval
        # Both kinds have trials here, so both rates have an interval.
        assert tpr is not None
        assert tnr is not None
        short = []
        if tpr.low < rule.min_tpr_lower:
            short.append(f"TPR's lower bound {tpr.low:.2f} is below {rule.min_tpr_lower:.2f}")
        if tnr.low < rule.min_tnr_lower:
            short.append(f"TNR's lower bound {tnr.low:.2f} is below {rule.min_tnr_lower:.2f}")
        self.status = NOT_ADMITTED if short else ADMITTED
        self.reason = "; ".join(short)


@dataclass(frozen=True)
class Counted:
    """The versions' calibrations, and the labelled trials the exclusion reasons name."""

    versions: list[Calibration]
    named: dict[str, int] = field(default_factory=dict)  # reason key: its labelled trials
    named_trials: int = 0  # labelled trials any reason names (each once)
    named_tasks: int = 0  # of how many tasks
    left_out: int = 0  # of those, the labelled trials the report leaves out


@dataclass(frozen=True)
class Report:
    rule: CalibrationRule
    versions: list[Calibration]
    # The exclusion reasons as the switches apply them, and what they name of the labelled
    # trials (`Counted`): the page's note.
    applied: list[exclusions.Applied] = field(default_factory=list)
    counted: Counted | None = None

    def of(self, version: Version) -> Calibration | None:
        return next((c for c in self.versions if c.version == version), None)


def _version_filter(versions: Iterable[Version]) -> Q:
    q = Q(pk__in=[])
    for v in versions:
        q |= Q(judge_model=v.judge_model, rubric_version=v.rubric_version)
    return q


@dataclass(frozen=True)
class Newest:
    """The newest judge verdict, annotation and adjudication ids: what the kept figures
    depend on (each table is append-only, so a change is a higher id)."""

    verdict: int | None
    annotation: int | None
    adjudication: int | None


def _newest_id(model: type[JudgeVerdict] | type[Annotation] | type[Adjudication]) -> Subquery:
    return Subquery(model.objects.order_by("-pk").values("pk")[:1])


def rule_and_newest() -> tuple[CalibrationRule, Newest]:
    """The rule and the newest ids, in one query (the rule made on first use)."""
    found = (
        CalibrationRule.objects.filter(pk=1)
        .annotate(
            newest_verdict=_newest_id(JudgeVerdict),
            newest_annotation=_newest_id(Annotation),
            newest_adjudication=_newest_id(Adjudication),
        )
        .first()
    )
    if found is None:
        CalibrationRule.current()
        return rule_and_newest()
    newest = Newest(
        found.newest_verdict,
        found.newest_annotation,
        found.newest_adjudication,
    )
    return found, newest


def report(
    versions: Sequence[Version] | None = None, included: frozenset[str] = frozenset()
) -> Report:
    """Every judge version's calibration (or only `versions`'), leaving out what the exclusion
    reasons name unless `included` names the reason: one query while the kept report is
    current (and what the reasons name is kept), two more when it is not."""
    rule, newest = rule_and_newest()
    applied = exclusions.chosen(included)[0]
    return _report_under(rule, newest, applied, versions)


def _applied_key(applied: Sequence[exclusions.Applied]) -> tuple[Hashable, ...]:
    """What decides the figures of the exclusion reasons as applied: each one's tasks and
    trials, and whether its switch counts them (which matters only when it names any)."""
    return tuple(
        (
            a.reason.key,
            a.included and bool(a.excluded),
            sorted(a.excluded.task_ids),
            sorted(a.excluded.trial_ids),
        )
        for a in applied
    )


def _report_under(
    rule: CalibrationRule,
    newest: Newest,
    applied: Sequence[exclusions.Applied],
    versions: Sequence[Version] | None = None,
) -> Report:
    key = calibration_key(
        rule.min_tpr_lower,
        rule.min_tnr_lower,
        rule.min_labelled,
        rule.split_salt,
        newest,
        _applied_key(applied),
    )
    found: Counted | None = cache.get(key)
    if found is None:
        found = _calibrations(rule, applied)
        cache.set(key, found, CALIBRATION_TTL)
    chosen = found.versions
    if versions is not None:
        wanted = set(versions)
        chosen = [c for c in chosen if c.version in wanted]
    return Report(rule, chosen, list(applied), found)


def _calibrations(rule: CalibrationRule, applied: Sequence[exclusions.Applied]) -> Counted:
    """Every judge version's calibration, read and counted, without the labelled trials the
    reasons leave out (and counting those they name)."""
    verdicts = JudgeVerdict.objects.filter(
        trial__in=TrialReviewed.objects.values("trial"),
        trial__human_judgment__in=_HUMAN_DECIDED,
        verdict__in=_JUDGE_DECIDED,
    )
    rows = verdicts.order_by(
        "trial_id", "judge_model", "rubric_version", *JudgeVerdict.LATEST_FIRST
    ).values_list(
        "trial_id",
        "trial__task_id",
        "judge_model",
        "rubric_version",
        "verdict",
        "trial__human_judgment",
    )
    found: dict[Version, Calibration] = {}
    seen: set[tuple[int, Version]] = set()
    named: dict[str, set[int]] = {a.reason.key: set() for a in applied if a.excluded}
    named_tasks: set[int] = set()
    left_out: set[int] = set()
    for trial_id, task_id, model, rubric, verdict, human in rows:
        leave_out = False
        for a in applied:
            if trial_id in a.excluded.trial_ids or task_id in a.excluded.task_ids:
                named[a.reason.key].add(trial_id)
                named_tasks.add(task_id)
                leave_out = leave_out or not a.included
        if leave_out:
            left_out.add(trial_id)
            continue
        version = Version(model, rubric)
        if (trial_id, version) in seen:
            continue  # an older verdict of the same version: the latest counts
        seen.add((trial_id, version))
        calibration = found.setdefault(version, Calibration(version))
        part = part_of(trial_id, rule.split_salt)
        (calibration.calibration if part == CALIBRATION else calibration.test).add(verdict, human)
    for calibration in found.values():
        calibration.judge(rule)
    versions = sorted(
        found.values(), key=lambda c: (c.version.judge_model, c.version.rubric_version)
    )
    return Counted(
        versions,
        named={key: len(trials) for key, trials in named.items() if trials},
        named_trials=len(set().union(*named.values())),
        named_tasks=len(named_tasks),
        left_out=len(left_out),
    )


# --- corrected pass rates --------------------------------------------------------------------
@dataclass(frozen=True)
class CorrectedRate:
    """A run's judge pass rate under one judge version, and corrected when it may be."""

    version: Version
    passed: int
    judged: int
    status: str  # the version's calibration status ('' when it has no labelled trials)
    corrected: judge_error.Corrected | None  # for an admitted version only
    reason: str  # why there is no corrected rate; '' when there is one

    @property
    def raw(self) -> float:
        return self.passed / self.judged


def shown_versions(
    job: Job, newest: Newest | None = None, left_out: exclusions.Excluded | None = None
) -> list[tuple[Version, int, int]]:
    """The job's shown judge verdicts (each trial's latest, `Trial.judge_verdict`) that
    decided, counted by judge version: (version, passed, decided), without the trials
    `left_out` names. Kept in the cache under the newest verdict id (`newest`) and what is
    left out; counted afresh by one grouped query over the job's judged trials, the version
    read from the trial rows (`Trial.judge_model` and `judge_rubric_version`, kept with the
    shown verdict)."""
    if newest is None:
        return _count_versions(job, left_out)
    leaving = (sorted(left_out.task_ids), sorted(left_out.trial_ids)) if left_out else None
    key = judge_versions_key(job.pk, newest.verdict, leaving)
    counted: list[tuple[Version, int, int]] | None = cache.get(key)
    if counted is None:
        counted = _count_versions(job, left_out)
        cache.set(key, counted, CALIBRATION_TTL)
    return counted


def _count_versions(
    job: Job, left_out: exclusions.Excluded | None = None
) -> list[tuple[Version, int, int]]:
    trials = Trial.objects.filter(job=job, judge_verdict__in=_JUDGE_DECIDED)
    if left_out:
        trials = trials.exclude(exclusions.trials_of(left_out))
    # Counting a column of trial_job_judge_version_idx (the id is not one) lets PostgreSQL
    # answer from that index alone: a few pages for a 10,000-trial job, not its rows. Left-out
    # trials are told by their task and id, so a job with some reads its rows (then kept).
    rows = (
        trials.order_by()
        .values("judge_model", "judge_rubric_version")
        .annotate(
            judged=Count("judge_verdict"),
            passed=Count("judge_verdict", filter=Q(judge_verdict=JudgeVerdict.Outcome.PASS)),
        )
        .values_list("judge_model", "judge_rubric_version", "passed", "judged")
    )
    return sorted(
        ((Version(model, rubric or ""), passed, judged) for model, rubric, passed, judged in rows),
        key=lambda row: (-row[2], str(row[0])),  # most judged first
    )


def corrected_rates(
    counts: list[tuple[Version, int, int]], calibrations: Report
) -> list[CorrectedRate]:
    """Each version's raw pass rate, corrected by its calibration part where it is admitted.

    The correction's interval is a Monte Carlo of 20,000 draws (a few ms each): kept in the
    shared cache under everything that decides it (`rewards.cache.interval_key`: the counts,
    the level, the draws and the seed), read for every version in one round trip."""
    wanted: dict[str, tuple[int, ...]] = {}
    for version, passed, judged in counts:
        calibration = calibrations.of(version)
        if calibration is not None and calibration.admitted:
            wanted[_correction_key(passed, judged, calibration)] = _correction_inputs(
                passed, judged, calibration
            )
    kept = cached_intervals(wanted, _corrections) if wanted else {}
    rates = []
    for version, passed, judged in counts:
        calibration = calibrations.of(version)
        if calibration is None:
            rates.append(CorrectedRate(version, passed, judged, "", None, "no labelled trials"))
            continue
        if not calibration.admitted:
            reason = f"{calibration.status}: {calibration.reason}"
            rates.append(CorrectedRate(version, passed, judged, calibration.status, None, reason))
            continue
        corrected = kept[_correction_key(passed, judged, calibration)]
        reason = ""
        if corrected is None or corrected.estimate is None:
            reason = f"calibration part: {corrected.reason if corrected else 'nothing judged'}"
        rates.append(CorrectedRate(version, passed, judged, calibration.status, corrected, reason))
    return rates


def _correction_inputs(passed: int, judged: int, calibration: Calibration) -> tuple[int, ...]:
    part = calibration.calibration
    return (passed, judged, part.true_pos, part.positives, part.true_neg, part.negatives)


def _correction_key(passed: int, judged: int, calibration: Calibration) -> str:
    inputs = _correction_inputs(passed, judged, calibration)
    return interval_key("corrected-pass-rate", *inputs, LEVEL, judge_error.CORRECTION_DRAWS, SEED)


def _corrections(
    missing: dict[str, tuple[int, ...]],
) -> dict[str, judge_error.Corrected | None]:
    return {key: judge_error.corrected_pass_rate(*inputs) for key, inputs in missing.items()}


def job_corrected_rates(
    jobs: Sequence[Job], left_out: exclusions.Exclusions | None = None
) -> dict[int, list[CorrectedRate]]:
    """Each job's corrected judge pass rates, with the exclusion reasons as the page's
    switches apply them (`left_out`, the page's; None: every reason leaves its trials out)
    in the counts and in the calibration alike: one query per job, then two for the versions.
    A job none of whose trials are left out is counted over all of them (the same kept
    counts whatever the switches say)."""
    rule, newest = rule_and_newest()
    if left_out is None:
        left_out = exclusions.for_jobs([job.pk for job in jobs])
    active = left_out.active
    counts = {
        job.pk: shown_versions(job, newest, active if left_out.leaves_out_of(job.pk) else None)
        for job in jobs
    }
    versions = sorted({v for rows in counts.values() for v, _, _ in rows}, key=str)
    if not versions:
        return {pk: [] for pk in counts}
    calibrations = _report_under(rule, newest, left_out.applied, versions)
    return {pk: corrected_rates(rows, calibrations) for pk, rows in counts.items()}


# --- the figures as data: JSON for the API, rows for CSV --------------------------------------
CSV_COLUMNS = [
    "judge_model",
    "rubric_version",
    "status",
    "reason",
    "part",
    "labelled",
    "true_pos",
    "false_neg",
    "true_neg",
    "false_pos",
    "tpr",
    "tpr_ci_low",
    "tpr_ci_high",
    "tnr",
    "tnr_ci_low",
    "tnr_ci_high",
]


def _bounds(interval: Interval | None) -> list[float | None] | None:
    return [interval.low, interval.high] if interval else None


def confusion_dict(c: Confusion) -> dict[str, object]:
    return {
        "labelled": c.n,
        "true_pos": c.true_pos,
        "false_neg": c.false_neg,
        "true_neg": c.true_neg,
        "false_pos": c.false_pos,
        "tpr": c.tpr,
        "tpr_ci": _bounds(c.tpr_interval),
        "tnr": c.tnr,
        "tnr_ci": _bounds(c.tnr_interval),
    }


def left_out_dict(result: Report) -> dict[str, object]:
    """What the exclusion reasons name of the labelled trials, and whether the report counts
    them (each reason's switch)."""
    counted = result.counted or Counted([])
    return {
        "labelled_trials": counted.named_trials,
        "tasks": counted.named_tasks,
        "left_out": counted.left_out,
        "reasons": [
            {
                "reason": a.reason.key,
                "label": a.reason.label,
                "switch": f"{a.reason.param}=1",
                "counted": a.included,
                "labelled_trials": counted.named.get(a.reason.key, 0),
            }
            for a in result.applied
        ],
    }


def report_dict(result: Report) -> dict[str, object]:
    rule = result.rule
    return {
        "interval": "Wilson score, 95%",
        "reference": (
            "the trial's human judgment: the adjudicated verdict, else unanimous reviewers"
        ),
        "rule": {
            "min_tpr_lower": rule.min_tpr_lower,
            "min_tnr_lower": rule.min_tnr_lower,
            "min_labelled": rule.min_labelled,
            "status_from": TEST,
        },
        "left_out": left_out_dict(result),
        "versions": [
            {
                "judge_model": c.version.judge_model,
                "rubric_version": c.version.rubric_version,
                "status": c.status,
                "reason": c.reason,
                CALIBRATION: confusion_dict(c.calibration),
                TEST: confusion_dict(c.test),
            }
            for c in result.versions
        ],
    }


def csv_rows(result: Report) -> Iterable[list[object]]:
    """One row per judge version and part."""
    for c in result.versions:
        for part, confusion in ((CALIBRATION, c.calibration), (TEST, c.test)):
            figures = confusion_dict(confusion)
            tpr_ci = _bounds(confusion.tpr_interval) or [None, None]
            tnr_ci = _bounds(confusion.tnr_interval) or [None, None]
            yield [
                c.version.judge_model,
                c.version.rubric_version,
                c.status,
                c.reason,
                part,
                confusion.n,
                confusion.true_pos,
                confusion.false_neg,
                confusion.true_neg,
                confusion.false_pos,
                figures["tpr"],
                *tpr_ci,
                figures["tnr"],
                *tnr_ci,
            ]
