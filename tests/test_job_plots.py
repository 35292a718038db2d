"""The job page's plots: counts from the database, bars as SVG attributes, bars link to trials."""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.http import QueryDict
from django.test import Client

from review.filtering.form import TrialFilterForm
from review.models import add_annotation
from review.science import plots
from review.science.stats import job_breakdown
from rewards.models import Job, Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def job() -> Job:
    f.write(
        f.bundle(job="run", reward=0.0, judges=[f.judge("FAIL", failure_mode="units")]),
        f.bundle(job="run", reward=0.05, judges=[f.judge("FAIL", failure_mode="units")]),
        f.bundle(job="run", reward=0.1, judges=[f.judge("FAIL", failure_mode="crash")]),
        f.bundle(job="run", reward=0.95, agent="beta"),
        f.bundle(job="run", reward=1.0, judges=[f.judge("FAIL", failure_mode="units")]),
        f.bundle(job="other", reward=0.5),
    )
    return Job.objects.get(name="run")


def _trials_at(url: str) -> list[float]:
    form = TrialFilterForm(QueryDict(urlsplit(url).query))
    assert form.is_valid(), form.errors
    return sorted(t.reward for t in form.filter(Trial.objects.all()))


def test_reward_histogram_counts_each_bin_and_links_to_exactly_its_trials(job: Job) -> None:
    chart = plots.job_plots(job, job_breakdown(job), plots.reviewed_by_day(job))["histogram"]
    assert [bar.value for bar in chart.bars] == [2, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert _trials_at(chart.bars[0].url) == [0.0, 0.05]
    assert _trials_at(chart.bars[1].url) == [0.1]
    assert _trials_at(chart.bars[9].url) == [0.95, 1.0]  # the last bin includes 1.0
    # The tallest bar fills the plot height; an empty bin has no height.
    assert chart.bars[0].height == chart.bars[9].height > 0
    assert chart.bars[2].height == 0


def test_gate_rates_are_shares_of_decided_trials(job: Job) -> None:
    chart = plots.job_plots(job, job_breakdown(job), plots.reviewed_by_day(job))["gates"]
    by_label = {bar.label: bar for bar in chart.bars}
    # Judge: 1 PASS of 5 decided; verifier: 0.95 and 1.0 of 5 reach the 0.5 threshold.
    assert by_label["Judge verdict"].text == "20%"
    assert by_label["Verifier outcome"].text == "40%"
    assert by_label["Human judgment"].text == "—"
    assert _trials_at(by_label["Verifier outcome"].url) == [0.95, 1.0]


def test_failure_modes_are_ranked_and_link_to_their_trials(job: Job) -> None:
    chart = plots.job_plots(job, job_breakdown(job), plots.reviewed_by_day(job))["failure_modes"]
    assert [(bar.label, bar.value) for bar in chart.bars] == [("units", 3), ("crash", 1)]
    assert _trials_at(chart.bars[0].url) == [0.0, 0.05, 1.0]


def test_cost_and_tokens_per_passing_trial(job: Job) -> None:
    result = plots.job_plots(job, job_breakdown(job), plots.reviewed_by_day(job))
    cost = {bar.label: bar for bar in result["cost"].bars}
    # claude-code: 4 trials at $0.0123, one passes (1.0) → $0.0492 per pass; beta: 1 of 1.
    assert cost["claude-code · m-large"].text == "$0.0492"
    assert cost["beta · m-large"].text == "$0.0123"
    tokens = {bar.label: bar for bar in result["tokens"].bars}
    # 4 x (1200 in + 420 out) = 6480 tokens for one passing trial.
    assert tokens["claude-code · m-large"].text == "6,480"
    assert _trials_at(cost["beta · m-large"].url) == [0.95]


def test_review_progress_counts_each_trial_once_on_its_first_day(job: Job) -> None:
    rita, sam = f.make_user("rita", "reviewer"), f.make_user("sam", "reviewer")
    first, second = Trial.objects.filter(job=job).order_by("id")[:2]
    add_annotation(trial_id=first.pk, reviewer=rita, judgment="pass")
    add_annotation(trial_id=first.pk, reviewer=sam, judgment="fail")
    add_annotation(trial_id=second.pk, reviewer=rita, judgment="pass")
    chart = plots.job_plots(job, job_breakdown(job), plots.reviewed_by_day(job))["progress"]
    assert [bar.value for bar in chart.bars] == [2]
    assert chart.bars[0].text == "40%"


def test_each_review_progress_bar_links_to_the_trials_reviewed_by_its_day() -> None:
    day1, day3 = f.START + timedelta(hours=1), f.START + timedelta(days=2, hours=1)
    f.write(
        f.bundle(job="run", name="a", annotations=[f.annotation("rita", "pass", at=day1)]),
        f.bundle(
            job="run",
            name="b",
            annotations=[
                f.annotation("rita", "fail", at=day3),
                f.annotation("sam", "pass", at=day3),
            ],
        ),
        f.bundle(job="run", name="c"),
    )
    # Another job's trial reviewed on day 1 is not this job's.
    f.write(f.bundle(job="other", name="x", annotations=[f.annotation("rita", at=day1)]))
    job = Job.objects.get(name="run")
    chart = plots.job_plots(job, job_breakdown(job), plots.reviewed_by_day(job))["progress"]
    assert [(bar.label, bar.value, bar.text) for bar in chart.bars] == [
        (day1.date().isoformat(), 1, "33%"),
        (day3.date().isoformat(), 2, "67%"),
    ]
    listed = [
        sorted(
            f.names(TrialFilterForm(QueryDict(urlsplit(bar.url).query)).filter(Trial.objects.all()))
        )
        for bar in chart.bars
    ]
    assert listed == [["a"], ["a", "b"]]


def test_job_page_draws_the_plots_as_svg_without_style_attributes_or_script(
    client: Client, job: Job
) -> None:
    f.login(client, "ann", "analyst")
    response = client.get(f"/jobs/{job.pk}/")
    html = response.content.decode()
    assert response.status_code == 200
    # Five plots have bars; nobody has reviewed yet, so review progress has nothing to draw.
    assert html.count("<svg") == 5
    assert "Nothing to plot yet." in html
    assert "<rect" in html
    assert "Reward histogram" in html
    assert "style=" not in html
    assert "<script>" not in html
    assert "style-src 'self'" in response["Content-Security-Policy"]
    # Bars are links into the explorer, attributes quoted and escaped.
    assert re.search(r'<a href="/\?job=\d+&amp;reward_min=0\.0&amp;reward_max=0\.0999', html)


def test_hostile_failure_modes_are_escaped_in_the_plots(client: Client) -> None:
    trial = f.write(f.hostile_bundle())[0]
    f.login(client, "ann", "analyst")
    html = client.get(f"/jobs/{trial.job_id}/").content.decode()
    assert "<script>window.__pwned" not in html
    assert "<img src=x" not in html


def test_the_job_pages_figures_read_new_annotations(job: Job) -> None:
    from django.utils import timezone

    before = job_breakdown(job)
    assert [
        bar.value
        for bar in plots.job_plots(job, before, plots.reviewed_by_day(job))["progress"].bars
    ] == []
    first = Trial.objects.filter(job=job).order_by("id").first()
    assert first is not None
    add_annotation(trial_id=first.pk, reviewer=f.make_user("rita", "reviewer"), judgment="fail")
    after = job_breakdown(job)
    assert after != before
    assert [
        bar.value
        for bar in plots.job_plots(job, after, plots.reviewed_by_day(job))["progress"].bars
    ] == [1]
    # The days are the current time zone's: the trial is counted in any of them.
    with timezone.override("Asia/Tokyo"):
        assert [
            bar.value
            for bar in plots.job_plots(job, after, plots.reviewed_by_day(job))["progress"].bars
        ] == [1]
    # Another job's figures are its own.
    assert job_breakdown(Job.objects.get(name="other")) != after
