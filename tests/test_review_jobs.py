"""The jobs pages: counts, mean reward, gate pass rates and review progress, fixed queries."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from django.test import Client

from review.models import CalibrationRule, add_annotation
from review.science import stats
from rewards.models import Job, Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def job() -> Job:
    trials = f.write(
        f.bundle(job="nightly-1", reward=1.0, scorers=[f.scorer()], judges=[f.judge("PASS")]),
        f.bundle(
            job="nightly-1",
            reward=0.5,
            scorers=[f.scorer(verdict="FAIL")],
            judges=[f.judge("FAIL")],
        ),
        f.bundle(
            job="nightly-1", reward=0.0, scorers=[], judges=[f.judge("UNPARSEABLE")], task="other"
        ),
        f.bundle(
            job="nightly-1",
            reward=0.5,
            agent="beta",
            scorers=[f.scorer()],
            judges=[f.judge("PASS")],
        ),
        f.bundle(job="smoke", reward=0.2),
    )
    add_annotation(trial_id=trials[0].pk, reviewer=f.make_user("rita", "reviewer"), judgment="pass")
    return Job.objects.get(name="nightly-1")


def test_job_list_shows_each_job_with_its_rates(client: Client, job: Job) -> None:
    f.login(client, "ann", "analyst")
    response = client.get("/jobs/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "nightly-1" in html
    assert "smoke" in html
    # nightly-1: 4 trials, mean 0.5, scorers 2 of 3, judge 2 of 3 decided, 1 reviewed.
    assert ">0.500<" in html
    assert "67%" in html
    assert "1 / 4" in html


def test_job_detail_breaks_the_job_down_by_task_and_agent(client: Client, job: Job) -> None:
    f.login(client, "ann", "analyst")
    response = client.get(f"/jobs/{job.pk}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "By task" in html
    assert "voltage-drop" in html
    assert "other" in html
    assert "By agent and model" in html
    assert "beta" in html
    assert "1 unparseable" in html
    assert f"/?job={job.pk}" in html


@pytest.mark.parametrize("url", ["/jobs/", "/jobs/{pk}/"])
def test_jobs_pages_answer_only_get(client: Client, job: Job, url: str) -> None:
    f.login(client, "ann", "analyst")
    assert client.post(url.format(pk=job.pk)).status_code == 405


@pytest.mark.parametrize("url", ["/jobs/", "/jobs/{pk}/"])
def test_jobs_pages_send_anonymous_visitors_to_login(client: Client, job: Job, url: str) -> None:
    response = client.get(url.format(pk=job.pk))
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("url", ["/jobs/", "/jobs/{pk}/"])
def test_jobs_pages_refuse_a_user_without_a_role(client: Client, job: Job, url: str) -> None:
    f.login(client, "nobody")
    assert client.get(url.format(pk=job.pk)).status_code == 403


def test_an_unknown_job_is_not_found(client: Client) -> None:
    f.login(client, "ann", "analyst")
    assert client.get("/jobs/999999/").status_code == 404


def test_the_jobs_list_is_walked_newest_first_by_next_links(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:

    f.login(client, "ann", "analyst")
    Job.objects.bulk_create(Job(name=f"run-{i:03}") for i in range(stats.JOBS_PAGE + 5))
    newest_first = list(Job.objects.order_by("-id").values_list("name", flat=True))
    # 1 the user, 2 their role groups, 3 the page of jobs, 4 their kept tallies summed per
    # job, 5 the tasks confirmed defective (none; then cached: review.science.exclusions),
    # 6 the same rows' agents, models and datasets.
    with django_assert_num_queries(6):
        first = client.get("/jobs/").content.decode()
    shown = re.findall(r'href="/jobs/\d+/">([^<]+)</a>', first)
    assert shown == newest_first[: stats.JOBS_PAGE]
    next_url = re.search(r'<a rel="next" href="([^"]+)"', first)
    assert next_url is not None
    second = client.get(next_url.group(1)).content.decode()
    assert re.findall(r'href="/jobs/\d+/">([^<]+)</a>', second) == newest_first[stats.JOBS_PAGE :]
    assert 'rel="next"' not in second
    assert "Newest jobs" in second


def test_a_mangled_jobs_page_link_shows_the_newest_jobs(client: Client) -> None:
    f.login(client, "ann", "analyst")
    f.make_trial(job="nightly-9")
    response = client.get("/jobs/?after=<script>")
    assert response.status_code == 200
    assert "nightly-9" in response.content.decode()


@pytest.mark.parametrize("count", [1, 20])
def test_jobs_pages_run_a_fixed_number_of_queries(
    client: Client, django_assert_num_queries: Callable[..., Any], count: int
) -> None:
    f.login(client, "ann", "analyst")
    for i in range(count):
        f.make_trial(job=f"job-{i % 4}", task=f"task-{i % 3}", agent=f"agent-{i % 2}")
    job = Job.objects.first()
    assert job is not None
    # 1 the user, 2 their role groups, 3 the page of jobs, 4 their kept tallies
    # summed per job (one GROUP BY over a few rows a job, whatever the trials), 5 the tasks
    # confirmed defective (none; read once, then cached: review.science.exclusions), 6 the
    # same rows' agents, models and datasets.
    with django_assert_num_queries(6):
        assert client.get("/jobs/").status_code == 200
    CalibrationRule.current()  # made on the first read of any calibration (a write)
    # 1 the user, 2 the job, 3 its kept tally rows (totals, by task, by agent and model,
    # failure modes, the histogram: all added up from them), 4 first annotations by day,
    # 5 the calibration rule with the newest ids, 6 its judged trials counted by judge
    # version, 7 those versions' verdicts of labelled trials; the roles and the tasks
    # confirmed defective from the cache.
    with django_assert_num_queries(7):
        assert client.get(f"/jobs/{job.pk}/").status_code == 200


# --- a job's trials counted from them (the kept tallies' check) ----------------------------------
def test_the_jobs_list_figures_are_the_jobs_trials_own_aggregates(client: Client) -> None:
    f.login(client, "ann", "analyst")
    f.make_trials(3, job="job-a", reward=0.9)
    f.make_trials(2, job="job-b", reward=0.2, annotations=[f.annotation()])
    gone = Trial.objects.filter(job__name="job-a").first()
    assert gone is not None
    gone.delete()
    listed = {job.name: summary for job, summary, _ in stats.jobs_page().rows}
    for job in Job.objects.all():
        counted = stats.Summary.of(
            Trial.objects.filter(job=job).aggregate(**f.summary_aggregates())
        )
        # The mean is a sum over a count here, an average there: equal up to rounding.
        assert listed[job.name].mean_reward == pytest.approx(counted.mean_reward)
        assert replace(listed[job.name], mean_reward=None) == replace(counted, mean_reward=None)
    assert listed["job-a"].trial_count == 2
    assert listed["job-b"].reviewed == 2
