"""The Data Explorer page (`/`): roles, methods, htmx fragments, pagination, query counts."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from django.test import Client

from review.filtering.paging import PAGE_SIZE
from rewards.cache import forget_job_choices
from rewards.models import Trial
from rewards.schemas import IngestProblem
from tests import review_factories as f

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def _next_url(html: str) -> str | None:
    match = re.search(r'<a rel="next" href="([^"]+)"', html)
    return match.group(1).replace("&amp;", "&") if match else None


def test_explorer_lists_one_row_per_trial_with_its_gates(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trial(name="t-ok", agent="claude-code", model="m-large", reward=0.93)
    f.make_trial(
        name="t-disagree",
        scorers=[f.scorer(verdict="FAIL")],
        judges=[f.judge("PASS")],
    )
    response = client.get("/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "t-ok" in html
    assert "t-disagree" in html
    assert "claude-code" in html
    assert "m-large" in html
    assert "0.93" in html
    assert "Judge PASS, scorers FAIL" in html
    assert 'class="disagrees"' in html
    assert "End of the list." in html


def test_explorer_answers_only_get(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    assert client.post("/").status_code == 405


def test_explorer_sends_anonymous_visitors_to_the_login_page(client: Client) -> None:
    response = client.get("/?agent=x")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_explorer_refuses_a_user_without_a_role(client: Client) -> None:
    f.login(client, "nobody")
    assert client.get("/").status_code == 403


@pytest.mark.parametrize("role", ["reviewer", "expert", "analyst"])
def test_every_role_may_browse_the_explorer(client: Client, role: str) -> None:
    f.login(client, "someone", role)
    assert client.get("/").status_code == 200


def test_staff_may_browse_the_explorer_without_a_group(client: Client) -> None:
    f.login(client, "boss", staff=True)
    assert client.get("/").status_code == 200


def test_an_htmx_filter_request_gets_only_the_results_and_a_clean_pushed_url(
    client: Client,
) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trial(name="t-alpha", agent="alpha")
    f.make_trial(name="t-beta", agent="beta")
    response = client.get("/?q=&agent=alpha&job=&sort=-id", headers=HX)
    html = response.content.decode()
    assert response.status_code == 200
    assert f.is_fragment(html)
    assert html.lstrip().startswith('<div id="results"')
    assert "t-alpha" in html
    assert "t-beta" not in html
    assert 'id="filter-form"' not in html
    assert response["HX-Push-Url"] == "/?agent=alpha&sort=-id"
    assert "HX-Request" in response["Vary"]


def test_scrolling_on_gets_only_the_next_rows(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trials(PAGE_SIZE + 3)
    first = client.get("/").content.decode()
    next_url = _next_url(first)
    assert next_url is not None
    response = client.get(next_url, headers=HX)
    html = response.content.decode()
    assert f.is_fragment(html)
    assert html.lstrip().startswith("<tr")
    assert html.count('class="cell-trial"') == 3
    assert "HX-Push-Url" not in response


def test_a_boosted_or_history_restore_request_gets_the_whole_page(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    boosted = client.get("/", headers={**HX, "HX-Boosted": "true"}).content.decode()
    restore = client.get("/", headers={**HX, "HX-History-Restore-Request": "true"})
    assert "<html" in boosted
    assert "<html" in restore.content.decode()


def test_the_next_link_walks_every_trial_once_without_javascript(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    made = {t.name for t in f.make_trials(PAGE_SIZE * 2 + 5, reward=0.5)}
    seen: list[str] = []
    url: str | None = "/?sort=-reward"
    while url:
        html = client.get(url).content.decode()
        seen += re.findall(r'class="clip" href="/trials/\d+/(?:\?[^"]*)?" title="([^"]+)"', html)
        url = _next_url(html)
    assert len(seen) == len(made)
    assert set(seen) == made


def test_sort_links_keep_the_filter_and_drop_the_cursor(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trials(3, agent="alpha")
    html = client.get("/?agent=alpha&after=abc").content.decode()
    assert 'href="/?agent=alpha&amp;sort=-reward"' in html
    assert "after=" not in re.findall(r'class="sort"[^>]*href="([^"]+)"', html)[0]


def test_invalid_filters_are_reported_not_fatal(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trial(name="t-1")
    response = client.get("/?reward_min=lots&sort=nonsense")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Some filters were not applied" in html
    assert "t-1" in html


# --- query budget ----------------------------------------------------------------------------
def _explorer_queries(
    client: Client, django_assert_num_queries: Callable[..., Any], url: str, expected: int
) -> None:
    with django_assert_num_queries(expected):
        assert client.get(url).status_code == 200


@pytest.mark.parametrize("count", [1, 20])
def test_the_explorer_runs_a_fixed_number_of_queries(
    client: Client, django_assert_num_queries: Callable[..., Any], count: int
) -> None:
    f.login(client, "rita", "reviewer")
    for i in range(count):
        f.make_trial(
            job=f"job-{i % 3}",
            task=f"task-{i % 4}",
            scorers=[f.scorer(f"s{n}") for n in range(i % 5 + 1)],
            annotations=[f.annotation(f"rev{n}") for n in range(i % 3)],
        )
    # 1 the user, 2 their role groups (then cached), 3 the page of trials (with job and
    # task joined, LIMIT 51) in the default order, newest run first, and 4 the trials
    # without a start that come after them (read only because the page is not full yet),
    # 5 the count (a sum over the kept tallies), 6 the jobs for the job filter's <select>
    # and 7 their agents, models and datasets (both then cached).
    _explorer_queries(client, django_assert_num_queries, "/", 7)
    # The roles and the job choices come from the cache now: the user, the page, the count.
    _explorer_queries(client, django_assert_num_queries, "/?sort=reward", 3)
    # Filtering by one of the cached newest jobs: the form finds it there; the count is a
    # capped probe of the matching ids (the error category is not tallied), and one EXISTS
    # asks whether the job is still running (its rows then refresh themselves); the page
    # is not full, so the trials without a start are asked for too.
    job = Trial.objects.values_list("job_id", flat=True).first()
    _explorer_queries(client, django_assert_num_queries, f"/?job={job}&error_category=x", 5)


def test_the_list_of_a_finished_job_asks_nothing_about_its_state(
    client: Client, django_assert_num_queries: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from review import choices

    f.login(client, "rita", "reviewer")
    ended = f.make_trial(job="ended").job
    ended.finished_at = datetime(2026, 11, 1, tzinfo=UTC)
    ended.save(update_fields=["finished_at"])  # as an ingest records a job's end
    newer = f.make_trial(job="newer").job
    assert client.get("/").status_code == 200  # the roles and the newest jobs, cached
    # A job among the cached newest: they say when it finished and how many trials it has,
    # so a finished job is known not to be running, and counted, without a query
    # (`Job.is_running`, `choices.finished_job_trials`): 1 the user, 2 the page of trials,
    # 3 the trials without a start (the page is not full).
    with django_assert_num_queries(3):
        html = client.get(f"/?job={ended.pk}").content.decode()
    assert "<strong>1</strong> trial " in html
    assert "data-live" not in html
    # A trial ingested into the finished job drops the kept choices: counted anew.
    f.make_trial(job="ended")
    html = client.get(f"/?job={ended.pk}").content.decode()
    assert "<strong>2</strong> trials " in html
    # The newest job alone is kept now: the finished one is looked up, with its end, and
    # counted from its kept tallies (the same three, 4 the count and 5 the job).
    monkeypatch.setattr(choices, "JOB_CHOICES_LIMIT", 0)
    forget_job_choices()
    assert choices.newest_job(str(newer.pk)) is not None
    assert choices.newest_job(str(ended.pk)) is None
    with django_assert_num_queries(5):
        html = client.get(f"/?job={ended.pk}").content.decode()
    assert f'<option value="{ended.pk}" selected>ended</option>' in html
    assert "data-live" not in html
    # A job without an end is asked whether it is running (see tests/test_live_pages.py).
    with django_assert_num_queries(5):
        assert client.get(f"/?job={newer.pk}").status_code == 200


def test_the_job_select_is_cached_and_follows_jobs_being_added_and_deleted(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    from rewards.models import Job

    f.login(client, "rita", "reviewer")
    f.make_trial(job="nightly-1")
    assert ">nightly-1 ·" in client.get("/").content.decode()
    added = Job.objects.create(name="nightly-2")
    assert ">nightly-2 ·" in client.get("/").content.decode()
    added.delete()
    html = client.get("/").content.decode()
    assert ">nightly-2 ·" not in html
    assert ">nightly-1 ·" in html


def test_the_job_select_lists_at_most_the_newest_two_hundred_jobs(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    from rewards.models import Job

    f.login(client, "rita", "reviewer")
    Job.objects.bulk_create(Job(name=f"job-{i:03}") for i in range(250))
    oldest = Job.objects.order_by("id").first()
    assert oldest is not None
    html = client.get("/").content.decode()
    select = html.split('name="job"')[1].split("</select>")[0]
    assert select.count("<option") == 201  # "All jobs" and the 200 newest
    assert ">job-249 ·" in select
    assert ">job-000 ·" not in select
    # A job past the limit named in the URL is still selected (and filters): the form looks
    # it up (1 the user, 2 the job, 3 the page of trials, 4 those without a start (the page
    # is not full), 5 the count from the job's tallies, 6 whether the job is still running;
    # the roles from the cache).
    with django_assert_num_queries(6):
        html = client.get(f"/?job={oldest.pk}").content.decode()
    select = html.split('name="job"')[1].split("</select>")[0]
    assert f'<option value="{oldest.pk}" selected>' in select
    # A job id that names no job is refused, as before, and filters nothing.
    html = client.get("/?job=999999").content.decode()
    assert "Select a valid choice" in html


@pytest.mark.parametrize("count", [1, 20])
def test_the_explorer_fragment_runs_a_fixed_number_of_queries(
    client: Client, django_assert_num_queries: Callable[..., Any], count: int
) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trials(count)
    # 1 the user, 2 their role groups, 3 the page of trials, 4 the count; no <select> in
    # a fragment.
    with django_assert_num_queries(4):
        assert client.get("/?sort=reward", headers=HX).status_code == 200


def test_the_ingestion_problems_filter_is_on_the_page_and_narrows_the_rows(
    client: Client,
) -> None:
    problem = IngestProblem(file="judge.json", message="efficiency: Field required")
    f.write(
        f.bundle(name="clean-trial"),
        f.bundle(name="troubled-trial", detail={"ingest_problems": [problem]}),
    )
    f.login(client, "rita", "reviewer")

    page = client.get("/").content.decode()
    filtered = client.get("/?problems=with").content.decode()

    assert 'name="problems"' in page
    assert "Has ingestion problems" in page
    assert "troubled-trial" in filtered
    assert "clean-trial" not in filtered


@pytest.mark.parametrize(
    ("role", "shown", "hidden"),
    [
        ("reviewer", {"Queue"}, {"Adjudication", "Scenarios", "Admin"}),
        ("expert", {"Queue", "Adjudication"}, {"Scenarios", "Admin"}),
        ("analyst", set(), {"Queue", "Adjudication", "Scenarios", "Admin"}),
    ],
)
def test_the_navigation_offers_what_the_role_may_do(
    client: Client, role: str, shown: set[str], hidden: set[str]
) -> None:
    f.login(client, "someone", role)
    nav = client.get("/").content.decode().split('<nav class="mainnav"', 1)[1].split("</nav>")[0]
    for label in shown:
        assert f">{label}</a>" in nav, label
    for label in hidden:
        assert f">{label}</a>" not in nav, label


def test_staff_are_offered_every_page(client: Client) -> None:
    client.force_login(f.make_user("boss", staff=True))
    nav = client.get("/").content.decode().split('<nav class="mainnav"', 1)[1].split("</nav>")[0]
    for label in ("Queue", "Adjudication", "Scenarios", "Admin"):
        assert f">{label}</a>" in nav, label


def test_the_sidebar_kept_per_filter_and_jobs_shows_each_pages_values_and_errors(
    client: Client,
) -> None:
    from rewards.cache import forget_job_choices

    f.login(client, "rita", "reviewer")
    f.make_trial(job="nightly-1")
    first = client.get("/?task=alpha").content.decode()
    again = client.get("/?task=alpha").content.decode()
    other = client.get("/?task=beta").content.decode()
    assert 'name="task" value="alpha"' in first
    assert 'name="task" value="alpha"' in again
    assert 'name="task" value="beta"' in other
    assert 'value="alpha"' not in other
    # A job written since: once the list of jobs is read again (its cache expires), the
    # select offers it (the jobs are part of the sidebar's key).
    assert ">nightly-2 ·" not in again
    f.make_trial(job="nightly-2")
    forget_job_choices()
    assert ">nightly-2 ·" in client.get("/?task=alpha").content.decode()
    # A value in error is reported on every view, with the value as given.
    for _ in range(2):
        html = client.get("/?reward_min=abc").content.decode()
        assert 'value="abc"' in html
        assert "Enter a number." in html
    # The page's cursor does not change the sidebar, and hostile values stay escaped.
    html = client.get("/?task=%3Cscript%3E").content.decode()
    assert "<script>" not in html.split('id="filter-form"')[1].split("</form>")[0]
    assert "&lt;script&gt;" in html
