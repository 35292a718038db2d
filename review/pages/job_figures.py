"""A job page's figures, computed when the page first reads them."""

from __future__ import annotations

from datetime import date
from functools import cached_property
from typing import Any

from review.science import plots
from review.science.stats import JobBreakdown, Summary, breakdown_of
from rewards.cache import fingerprint
from rewards.models import Job


class JobFigures:
    """A job's summary, breakdowns and plots from its kept rows (`job_tally_rows`,
    `reviewed_by_day`), each computed the first time the page reads it: a page whose figures'
    HTML is kept under `key` computes none of them."""

    def __init__(self, job: Job, rows: list[tuple[Any, ...]], days: list[tuple[date, int]]):
        self.job = job
        self.rows = rows
        self.days = days

    @cached_property
    def key(self) -> str:
        """What the figures show, as a cache key: the job and the rows they come from."""
        return fingerprint(self.job.pk, self.rows, self.days)

    @cached_property
    def breakdown(self) -> JobBreakdown:
        return breakdown_of(self.rows)

    @property
    def summary(self) -> Summary:
        return self.breakdown.summary

    @property
    def by_task(self) -> list[tuple[str, str, Summary]]:
        return self.breakdown.by_task

    @property
    def by_agent(self) -> list[tuple[str, str, Summary]]:
        return self.breakdown.by_agent

    @cached_property
    def charts(self) -> list[plots.Chart]:
        return list(plots.job_plots(self.job, self.breakdown, self.days).values())
