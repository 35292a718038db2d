"""The job page's plots: numbers counted by the database, laid out as SVG geometry here.

Each plot is one aggregate query (or part of one); this module turns the counts into bars
with their position and size in SVG user units, so the template only places `<rect>`
elements with attributes (the Content Security Policy forbids style attributes) and no
script draws anything. Every bar that stands for a set of trials links to the explorer
filtered to exactly those trials (review progress: the explorer's "reviewed by" filter).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db.models import Count, Exists, F, OuterRef, Q, Sum
from django.db.models.functions import TruncDate
from django.http import QueryDict
from django.urls import reverse

from review.models import Annotation
from review.stats import Summary
from rewards.models import Job, Trial

BINS = 10
# Bar charts are drawn in a fixed user space; the SVG scales to its box.
WIDTH = 480
HEIGHT = 200
LABEL_WIDTH = 150  # horizontal bar charts: the label column
MAX_COLUMN_WIDTH = 48
MAX_FAILURE_MODES = 10
MAX_GROUPS = 10
MAX_DAYS = 60
# The explorer's reward filters are inclusive at both ends; a bin [lo, hi) links with
# reward_max just below hi. A reward within this distance under a bin edge is counted in
# its bin but falls outside its link (no stored reward is that close to an edge in practice:
# the rubric rounds to four decimals).
EDGE = 1e-9


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    text: str  # the value as the chart prints it
    url: str
    x: float
    y: float
    width: float
    height: float

    @property
    def text_x(self) -> float:
        return self.x + self.width / 2

    @property
    def text_y(self) -> float:
        return self.y - 4

    @property
    def label_y(self) -> float:
        return self.y + self.height / 2 + 4

    @property
    def value_x(self) -> float:
        return self.x + self.width + 6


@dataclass(frozen=True)
class Chart:
    title: str
    bars: list[Bar]
    width: int
    height: int
    note: str = ""
    kind: str = "columns"  # vertical bars; "rows" for horizontal ones with labels

    @property
    def baseline(self) -> int:
        return self.height - 20


def _explorer(job: Job, **params: str) -> str:
    query = QueryDict(mutable=True)
    query["job"] = str(job.pk)
    for name, value in params.items():
        query[name] = value
    return f"{reverse('review:explorer')}?{query.urlencode()}"


def _columns(items: Sequence[tuple[str, float, str, str]], title: str, note: str = "") -> Chart:
    """Vertical bars, one per item (label, value, printed value, link), scaled to the tallest."""
    top = max((value for _, value, _, _ in items), default=0) or 1
    plot_height = HEIGHT - 40
    slot = WIDTH / max(len(items), 1)
    width = min(slot * 0.8, MAX_COLUMN_WIDTH)
    bars = []
    for i, (label, value, text, url) in enumerate(items):
        height = plot_height * value / top
        bars.append(
            Bar(
                label=label,
                value=value,
                text=text,
                url=url,
                x=round(i * slot + (slot - width) / 2, 2),
                y=round(HEIGHT - 20 - height, 2),
                width=round(width, 2),
                height=round(height, 2),
            )
        )
    return Chart(title=title, bars=bars, width=WIDTH, height=HEIGHT, note=note)


def _rows(
    items: Sequence[tuple[str, float, str, str]],
    title: str,
    scale: float | None = None,
    note: str = "",
) -> Chart:
    """Horizontal bars with their label on the left; `scale` is the full-width value."""
    top = scale or max((value for _, value, _, _ in items), default=0) or 1
    row = 26
    plot_width = WIDTH - LABEL_WIDTH - 85
    bars = [
        Bar(
            label=label,
            value=value,
            text=text,
            url=url,
            x=LABEL_WIDTH,
            y=i * row + 4,
            width=round(plot_width * value / top, 2),
            height=row - 8,
        )
        for i, (label, value, text, url) in enumerate(items)
    ]
    return Chart(
        title=title,
        bars=bars,
        width=WIDTH,
        height=max(len(items), 1) * row + 8,
        note=note,
        kind="rows",
    )


# --- the figures ---------------------------------------------------------------------------
def _bin_edges(i: int) -> tuple[float, float]:
    return i / BINS, (i + 1) / BINS


def reward_histogram(job: Job, trials: Any) -> Chart:
    counts: dict[str, Count] = {}
    for i in range(BINS):
        low, high = _bin_edges(i)
        upper = Q(reward__lte=high) if i == BINS - 1 else Q(reward__lt=high)
        counts[f"bin{i}"] = Count("id", filter=Q(reward__gte=low) & upper)
    totals = trials.aggregate(**counts)
    items = []
    for i in range(BINS):
        low, high = _bin_edges(i)
        top = high if i == BINS - 1 else high - EDGE
        n = totals[f"bin{i}"] or 0
        items.append(
            (
                f"{low:.1f}",
                n,
                str(n),
                _explorer(job, reward_min=f"{low:.1f}", reward_max=f"{top:.9f}"),
            )
        )
    return _columns(
        items, "Reward histogram", "Trials per reward bin of 0.1; the last includes 1.0."
    )


def gate_rates(job: Job, summary: Summary, trials: Any) -> Chart:
    """The summary's gate rates, plus the verifier outcome and the human judgment (one query)."""
    counts = trials.aggregate(
        verifier_pass=Count("id", filter=Q(reward__gte=F("task__pass_threshold"))),
        human_pass=Count("id", filter=Q(human_judgment="pass")),
        human_decided=Count("id", filter=Q(human_judgment__in=["pass", "fail"])),
    )
    total = summary.trial_count
    verifier_rate = counts["verifier_pass"] / total if total else None
    decided = counts["human_decided"]
    human_rate = counts["human_pass"] / decided if decided else None
    gates = [
        ("Valid", summary.valid_rate, _explorer(job, validity="valid")),
        ("Scorers OVERALL", summary.scorer_rate, _explorer(job, scorer_verdict="PASS")),
        ("Judge verdict", summary.judge_rate, _explorer(job, judge_verdict="PASS")),
        ("Run badge", summary.run_rate, _explorer(job, run_badge="PASS")),
        ("Verifier outcome", verifier_rate, _explorer(job, outcome="pass")),
        ("Human judgment", human_rate, _explorer(job, human_judgment="pass")),
    ]
    items = [
        (label, rate or 0.0, "—" if rate is None else f"{rate * 100:.0f}%", url)
        for label, rate, url in gates
    ]
    return _rows(
        items,
        "Gate pass rates",
        scale=1.0,
        note="Each bar: the passing share of the trials the gate decided.",
    )


def failure_modes(job: Job, trials: Any) -> Chart:
    rows = (
        trials.exclude(failure_mode="")
        .values("failure_mode")
        .annotate(n=Count("id"))
        .order_by("-n", "failure_mode")[:MAX_FAILURE_MODES]
    )
    items = [
        (
            row["failure_mode"],
            row["n"],
            str(row["n"]),
            _explorer(job, failure_mode=row["failure_mode"]),
        )
        for row in rows
    ]
    return _rows(items, "Failure modes", note="The judge's failure modes, most frequent first.")


@dataclass(frozen=True)
class CostRow:
    agent: str
    model: str
    passing: int
    cost: float | None
    tokens: int | None

    @property
    def cost_per_pass(self) -> float | None:
        return self.cost / self.passing if self.passing and self.cost is not None else None

    @property
    def tokens_per_pass(self) -> float | None:
        return self.tokens / self.passing if self.passing and self.tokens is not None else None


def cost_per_pass(job: Job, trials: Any) -> tuple[Chart, Chart]:
    """Cost and tokens spent, over all trials of an agent and model, per passing trial."""
    rows = (
        trials.values("agent_name", "model_name")
        .annotate(
            passing=Count("id", filter=Q(reward__gte=F("task__pass_threshold"))),
            cost=Sum("cost_usd"),
            tokens=Sum(F("n_input_tokens") + F("n_output_tokens")),
        )
        .order_by("agent_name", "model_name")[:MAX_GROUPS]
    )
    groups = [
        CostRow(r["agent_name"], r["model_name"], r["passing"], r["cost"], r["tokens"])
        for r in rows
    ]

    def item(
        g: CostRow, value: float | None, text: str, spent: float | None
    ) -> tuple[str, float, str, str]:
        label = f"{g.agent or '—'} · {g.model or '—'}"
        url = _explorer(job, agent=g.agent, model=g.model, outcome="pass")
        if not g.passing:
            text = "no pass"
        elif spent is None:
            text = "not recorded"
        return (label, value or 0.0, text, url)

    cost = _rows(
        [item(g, g.cost_per_pass, f"${g.cost_per_pass or 0:.4f}", g.cost) for g in groups],
        "Cost per passing trial",
        note="All the agent's cost divided by its passing trials (reward ≥ pass threshold).",
    )
    tokens = _rows(
        [item(g, g.tokens_per_pass, f"{g.tokens_per_pass or 0:,.0f}", g.tokens) for g in groups],
        "Tokens per passing trial",
        note="Input and output tokens over all trials, divided by the passing ones.",
    )
    return cost, tokens


def review_progress(job: Job, summary: Summary) -> Chart:
    """Trials reviewed so far, day by day: a trial counts on the day of its first annotation."""
    earlier = Annotation.objects.filter(trial=OuterRef("trial")).filter(
        Q(created_at__lt=OuterRef("created_at"))
        | Q(created_at=OuterRef("created_at"), id__lt=OuterRef("id"))
    )
    days: list[tuple[date, int]] = [
        (row["day"], row["n"])
        for row in Annotation.objects.filter(trial__job=job)
        .filter(~Exists(earlier))
        .annotate(day=TruncDate("created_at"))
        .values("day")
        .annotate(n=Count("id"))
        .order_by("day")
    ]
    shown = days[-MAX_DAYS:]
    total = sum(n for _, n in days[: len(days) - len(shown)])
    items = []
    for day, n in shown:
        total += n
        share = total / summary.trial_count if summary.trial_count else 0
        url = _explorer(job, reviewed_by=day.isoformat())
        items.append((day.isoformat(), total, f"{share * 100:.0f}%", url))
    return _columns(
        items,
        "Review progress",
        f"Trials with at least one annotation, cumulative by day (of {summary.trial_count});"
        " each bar lists the trials reviewed by the end of its day.",
    )


def job_plots(job: Job, summary: Summary) -> dict[str, Any]:
    trials = Trial.objects.filter(job=job).order_by()
    cost, tokens = cost_per_pass(job, trials)
    return {
        "histogram": reward_histogram(job, trials),
        "gates": gate_rates(job, summary, trials),
        "failure_modes": failure_modes(job, trials),
        "cost": cost,
        "tokens": tokens,
        "progress": review_progress(job, summary),
    }
