"""Pages of a running job refresh themselves (htmx polling), and stop once it has ended.

Only regions without a form poll: the job page's figures, the explorer's rows, a running
trial's artifact tabs; never the filters, the saved-view form or the annotation form. The
polled answer is the region itself, without its polling hook once the job (or trial) is over.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from django.test import Client

from rewards.models import Job, Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
POLL = 'hx-trigger="every 3s"'


def _polled(html: str) -> list[str]:
    """The id of every element that polls."""
    return re.findall(r'<\w+ id="([\w-]+)"[^>]*' + re.escape(POLL), html)


@pytest.fixture
def running(client: Client) -> Trial:
    """A job with one finished and one running trial, its result.json not written yet."""
    f.login(client, "rita", "reviewer")
    f.make_trial(name="done", job="live-job")
    return f.make_trial(name="busy", job="live-job", status="running", judges=[], reward=0.0)


def _finish(job: Job) -> None:
    Trial.objects.filter(job=job).update(status="completed")
    Job.objects.filter(pk=job.pk).update(finished_at=datetime(2026, 11, 1, tzinfo=UTC))


def test_a_running_jobs_page_polls_its_figures_until_the_job_ends(
    client: Client, running: Trial, django_assert_num_queries: Callable[..., Any]
) -> None:
    url = f"/jobs/{running.job_id}/"
    html = client.get(url).content.decode()
    assert _polled(html) == ["job-live"]
    assert f'hx-get="{url}"' in html
    assert "running</span>" in html
    # The poll: the region alone, still polling; the state came with the job (same query
    # count as a finished job's page: 1 the user, 2 the job and its state, 3 its kept
    # tally rows, 4 first annotations by day, 5 the calibration rule with the newest ids,
    # under which the judged trials by judge version, read by the first visit, are kept).
    with django_assert_num_queries(5):
        fragment = client.get(url, headers=HX).content.decode()
    assert f.is_fragment(fragment)
    assert fragment.lstrip().startswith('<div id="job-live"')
    assert _polled(fragment) == ["job-live"]

    _finish(running.job)
    fragment = client.get(url, headers=HX).content.decode()
    assert fragment.lstrip().startswith('<div id="job-live"')
    assert _polled(fragment) == []
    assert _polled(client.get(url).content.decode()) == []


def test_a_harbor_job_is_running_from_its_start_until_its_result_records_the_end(
    client: Client,
) -> None:
    f.login(client, "rita", "reviewer")
    trial = f.make_trial(job="harbor-job")
    job = trial.job
    assert not job.is_running  # not from Harbor, no unfinished trial: a finished import
    # Harbor 0.24's job result.json as the job starts: started_at and the trial count.
    Job.objects.filter(pk=job.pk).update(
        started_at=datetime(2026, 11, 1, tzinfo=UTC), stats={"n_total_trials": 2}
    )
    assert Job.objects.with_running().get(pk=job.pk).is_running
    assert list(Job.objects.running()) == [job]
    assert _polled(client.get(f"/jobs/{job.pk}/").content.decode()) == ["job-live"]
    Job.objects.filter(pk=job.pk).update(finished_at=datetime(2026, 11, 2, tzinfo=UTC))
    assert not Job.objects.get(pk=job.pk).is_running
    assert not Job.objects.running().exists()


def test_the_explorer_of_a_running_job_polls_its_rows_only(
    client: Client, running: Trial, django_assert_num_queries: Callable[..., Any]
) -> None:
    url = f"/?job={running.job_id}"
    html = client.get(url).content.decode()
    assert _polled(html) == ["trial-rows"]
    assert f'hx-get="/?job={running.job_id}"' in html
    # The rows come back alone (no filter form, no saved-view form), the hook on them,
    # without the count they are shown under: 1 the user, 2 the page of trials, 3 those
    # without a start (the page is not full), 4 whether the job is still running.
    with django_assert_num_queries(4):
        response = client.get(url, headers={**HX, "HX-Target": "trial-rows"})
    fragment = response.content.decode()
    assert fragment.lstrip().startswith('<tbody id="trial-rows"')
    assert "<form" not in fragment
    assert _polled(fragment) == ["trial-rows"]
    assert ">busy</a>" in fragment
    # Unfiltered, or filtered to a job that has ended: nothing polls.
    assert _polled(client.get("/").content.decode()) == []
    _finish(running.job)
    fragment = client.get(url, headers={**HX, "HX-Target": "trial-rows"}).content.decode()
    assert _polled(fragment) == []


def test_a_running_trials_page_polls_its_artifacts_never_the_annotation_form(
    client: Client, running: Trial
) -> None:
    client.logout()
    f.login(client, "eve", "expert")
    url = f"/trials/{running.pk}/"
    html = client.get(url).content.decode()
    assert _polled(html) == ["tabs"]
    tabs = html.split('<section id="tabs"')[1].split('<section id="annotations"')[0]
    # Only the trajectory's step filter (a GET the poll repeats, its state in the URL).
    assert 'method="post"' not in tabs
    assert "<textarea" not in tabs
    assert 'id="annotations"' in html  # the form is on the page, outside the polled region
    fragment = client.get(url, headers=HX).content.decode()
    assert _polled(fragment) == ["tabs"]
    Trial.objects.filter(pk=running.pk).update(status="completed")
    assert _polled(client.get(url, headers=HX).content.decode()) == []
    done = Trial.objects.get(name="done")
    assert _polled(client.get(f"/trials/{done.pk}/").content.decode()) == []


def test_the_polled_regions_need_a_login_like_their_pages(client: Client, running: Trial) -> None:
    client.logout()
    for url in (f"/jobs/{running.job_id}/", f"/?job={running.job_id}", f"/trials/{running.pk}/"):
        response = client.get(url, headers={**HX, "HX-Target": "trial-rows"})
        assert response.status_code == 302
        assert "/login" in response["Location"] or "login" in response["Location"]
