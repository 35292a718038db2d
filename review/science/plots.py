"""The job page's plots: numbers counted by the database, laid out as SVG geometry here.

Each plot reads the job's kept tallies (review.science.job_tallies) or their sums; this module
turns the counts into bars with their position and size in SVG user units, so the template
only places `<rect>` elements with attributes (the Content Security Policy forbids style
attributes) and no script draws anything. Every bar that stands for a set of trials links
to the explorer filtered to exactly those trials (review progress: the explorer's "reviewed
by" filter).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any
from urllib.parse import urlencode

from django.db.models import Count
from django.db.models.functions import TruncDate

from review.http import path_of
from review.models import TrialReviewed
from review.science.stats import JobBreakdown, Summary
from rewards.models import Job

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

    @property
    def label_x(self) -> float:
        """A horizontal bar's label, right-aligned before the bar."""
        return self.x - 8


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

    @property
    def label_y(self) -> int:
        """A vertical bar's label, under the baseline."""
        return self.height - 5


def _explorer(job: Job, **params: str) -> str:
    """The explorer filtered to the job and `params` (a page has dozens of these links)."""
    return f"{path_of('review:explorer')}?{urlencode({'job': job.pk, **params})}"


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


def reward_histogram(job: Job, totals: dict[str, Any]) -> Chart:
    items = []
    for i in range(BINS):
        low, high = _bin_edges(i)
        top = high if i == BINS - 1 else high - EDGE
        n = totals.get(f"bin{i}") or 0
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


def gate_rates(job: Job, summary: Summary, totals: dict[str, Any]) -> Chart:
    """The summary's gate rates, plus the verifier outcome and the human judgment."""
    total = summary.trial_count
    verifier_rate = (totals.get("verifier_pass") or 0) / total if total else None
    decided = totals.get("human_decided") or 0
    human_rate = (totals.get("human_pass") or 0) / decided if decided else None
    gates = [
        ("Valid", summary.valid_rate, _explorer(job, validity="valid")),
        ("Scorers OVERALL", summary.scorer_rate, _explorer(job, scorer_verdict="PASS")),
        ("Judge verdict", summary.judge_rate, _explorer(job, judge_verdict="PASS")),
        ("Runs completed", summary.run_rate, _explorer(job, run_badge="PASS")),
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


def failure_modes(job: Job, modes: Sequence[tuple[str, int]]) -> Chart:
    items = [
        (mode, n, str(n), _explorer(job, failure_mode=mode))
        for mode, n in modes[:MAX_FAILURE_MODES]
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


def cost_per_pass(
    job: Job, agents: Sequence[tuple[str, str, dict[str, Any]]]
) -> tuple[Chart, Chart]:
    """Cost and tokens spent, over all trials of an agent and model, per passing trial.

    `agents`: the job's kept counters per agent and model (`JobBreakdown.agent_totals`).
    """
    groups = [
        CostRow(
            agent,
            model,
            r["verifier_pass"],
            r["cost_sum"] if r["cost_n"] else None,
            r["tokens_sum"] if r["tokens_n"] else None,
        )
        for agent, model, r in agents[:MAX_GROUPS]
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


def reviewed_by_day(job: Job) -> list[tuple[date, int]]:
    """The job's trials first reviewed on each day, in the current time zone (kept per trial
    in `TrialReviewed`): one query."""
    per_day = (
        TrialReviewed.objects.filter(job=job)
        .annotate(day=TruncDate("first_at"))  # in the current time zone
        .values("day")
        .annotate(n=Count("first_at"))
        .order_by("day")
    )
    return [(row["day"], row["n"]) for row in per_day]


def review_progress(job: Job, summary: Summary, days: list[tuple[date, int]]) -> Chart:
    """Trials reviewed so far, day by day (`reviewed_by_day`): a trial counts on the day of
    its first annotation."""
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


def job_plots(job: Job, breakdown: JobBreakdown, days: list[tuple[date, int]]) -> dict[str, Any]:
    """Every plot of the job page, from its kept tallies and its trials reviewed by day."""
    cost, tokens = cost_per_pass(job, breakdown.agent_totals)
    return {
        "histogram": reward_histogram(job, breakdown.totals),
        "gates": gate_rates(job, breakdown.summary, breakdown.totals),
        "failure_modes": failure_modes(job, breakdown.failure_modes),
        "cost": cost,
        "tokens": tokens,
        "progress": review_progress(job, breakdown.summary, days),
    }
