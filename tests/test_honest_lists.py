"""Honest badges and lists (issue 22): the run badge says what it measures."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.http import QueryDict
from django.test import Client
from django.test.utils import CaptureQueriesContext

from review.filtering.form import TrialFilterForm
from review.pages.trial_list import ROWS
from review.science import counting
from rewards import rules
from rewards.cache import forget_job_choices
from rewards.models import Job, Trial
from tests import review_factories as f
from tests.ingest_helpers import harbor_trial, ingest

pytestmark = pytest.mark.django_db

RUN_COLUMN = 6  # trial, task, agent · model, reward, scorers, judge, run, …


@pytest.mark.parametrize(
    ("badge", "exception_type", "outcome"),
    [
        ("PASS", "", "completed"),
        ("FAIL", "AgentTimeoutError", "timed out"),
        ("FAIL", "VerifierTimeoutError", "timed out"),
        ("FAIL", "RuntimeError", "errored"),
        ("FAIL", "", "errored"),
        ("FAIL", "CancelledError", "cancelled"),
        ("", "", "running"),
    ],
)
def test_the_run_badge_reads_as_what_the_run_did(
    badge: str, exception_type: str, outcome: str
) -> None:
    assert rules.run_outcome(badge, exception_type) == outcome


def _cells(html: str, trial_name: str) -> list[str]:
    rows = re.findall(r"<tr[^>]*>\s*(<td class=\"cell-trial\">.*?)</tr>", html, re.S)
    row = next(r for r in rows if f">{trial_name}<" in r)
    return re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)


def test_a_completed_run_with_reward_zero_is_never_a_green_pass(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trial(name="t-zero", reward=0.0)
    f.make_trial(name="t-timeout", reward=0.0, status="failed", exception_type="AgentTimeoutError")
    f.make_trial(name="t-broken", reward=0.0, status="failed", exception_type="RuntimeError")
    html = client.get("/").content.decode()

    zero = _cells(html, "t-zero")[RUN_COLUMN]
    assert "completed" in zero
    assert "badge-pass" not in zero
    assert "PASS" not in zero
    timeout = _cells(html, "t-timeout")[RUN_COLUMN]
    assert "timed out" in timeout
    assert 'title="AgentTimeoutError"' in timeout
    broken = _cells(html, "t-broken")[RUN_COLUMN]
    assert "errored" in broken
    assert "badge-fail" in broken


def test_the_run_filter_names_what_it_measures(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trial()
    html = client.get("/").content.decode()
    assert '<option value="PASS">Completed</option>' in html
    assert '<option value="FAIL">Errored or timed out</option>' in html


# --- the explorer's count ---------------------------------------------------------------------
def _count_text(html: str) -> str:
    match = re.search(r'<p class="results-count"[^>]*>(.*?)</p>', html, re.S)
    assert match
    return " ".join(re.sub(r"<[^>]+>", "", match.group(1)).split())


def test_the_explorer_says_how_many_trials_match_from_the_kept_tallies(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    for i in range(5):
        f.make_trial(job="nightly-1" if i < 3 else "nightly-2", agent="a" if i % 2 else "b")
    job = Trial.objects.filter(job__name="nightly-1").values_list("job_id", flat=True)[0]
    assert _count_text(client.get("/").content.decode()).startswith("5 trials in all")
    with CaptureQueriesContext(connection) as queries:
        html = client.get(f"/?job={job}&agent=a").content.decode()
    assert _count_text(html).startswith("1 trial matching the filters")
    # Counted from the tallies: no query counts the trials themselves.
    assert not any("COUNT(" in q["sql"].upper() for q in queries.captured_queries)


def test_any_other_filter_is_counted_by_a_capped_probe(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trials(4, judges=[f.judge("FAIL")])
    f.make_trials(2, judges=[f.judge("PASS")])
    with CaptureQueriesContext(connection) as queries:
        html = client.get("/?judge_verdict=FAIL").content.decode()
    assert _count_text(html).startswith("4 trials matching the filters")
    (probe,) = [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()]
    assert "LIMIT 1001" in probe

    # Past the probe's limit: a lower bound, and the tallies' count as the upper one.
    monkeypatch.setattr(counting, "PROBE_LIMIT", 3)
    html = client.get("/?judge_verdict=FAIL").content.decode()
    assert _count_text(html).startswith("more than 3 trials (at most 6) matching the filters")


def test_reviewer_filters_are_counted_in_the_latest_judgments_alone(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from review.models import add_annotation

    rita = f.login(client, "rita", "reviewer")
    sam = f.make_user("sam", "reviewer")
    trials = f.make_trials(6)
    # rita: fail, fail, fail, fail, pass, then fail changed to pass; sam fails the first two.
    for trial, judgment in zip(trials, ["fail"] * 4 + ["pass", "fail"], strict=True):
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment=judgment)
    add_annotation(trial_id=trials[5].pk, reviewer=rita, judgment="pass")
    for trial in trials[:2]:
        add_annotation(trial_id=trial.pk, reviewer=sam, judgment="fail")
    with CaptureQueriesContext(connection) as queries:
        html = client.get("/?reviewer_judgment=fail").content.decode()
    # Four trials, six failing latest judgments (the first two trials' count once each).
    assert _count_text(html).startswith("4 trials matching the filters")
    (probe,) = [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()]
    assert "review_latestjudgment" in probe
    assert "rewards_trial" not in probe  # the trials themselves are not read
    html = client.get("/?judged=sam:pass").content.decode()
    assert _count_text(html).startswith("0 trials matching the filters")

    # Past the probe's limit: agreement's tallies bound it by the latest judgments of each
    # condition's kind (six fails; two passes, one of them changed from a fail).
    monkeypatch.setattr(counting, "PROBE_LIMIT", 1)
    html = client.get("/?reviewer_judgment=fail").content.decode()
    assert _count_text(html).startswith("more than 1 trials (at most 6) matching the filters")
    html = client.get("/?judged=rita:fail&judged=defer").content.decode()
    assert _count_text(html).startswith("0 trials matching the filters")
    html = client.get("/?judged=rita:fail&judged=pass").content.decode()
    assert _count_text(html).startswith("0 trials matching the filters")
    html = client.get("/?judged=rita:pass").content.decode()
    assert _count_text(html).startswith("more than 1 trials (at most 2) matching the filters")
    # With another filter, the trials are probed as for any filter.
    html = client.get("/?reviewer_judgment=fail&validity=valid").content.decode()
    assert _count_text(html).startswith("more than 1 trial")


@pytest.mark.parametrize("blind", [False, True])
def test_a_reviewer_pairs_cell_is_counted_exactly_by_the_pair_tallies(
    client: Client, monkeypatch: pytest.MonkeyPatch, blind: bool
) -> None:
    from review.models import add_annotation

    rita = f.login(client, "rita", "reviewer")
    sam = f.make_user("sam", "reviewer")
    trials = f.make_trials(5)
    # Both fail the first three (one of sam's seen, not blind); rita passes the other two,
    # sam fails the fourth, and only rita judges the fifth.
    for i, trial in enumerate(trials):
        add_annotation(
            trial_id=trial.pk, reviewer=rita, judgment="fail" if i < 3 else "pass", blind=True
        )
        if i < 4:
            add_annotation(trial_id=trial.pk, reviewer=sam, judgment="fail", blind=i != 1)
    counted = "&counted=blind" if blind else ""
    # However many match, the tallies count them exactly: past the probe's limit too.
    monkeypatch.setattr(counting, "PROBE_LIMIT", 0)
    for query, expected in [
        ("judged=rita:fail&judged=sam:fail", 2 if blind else 3),
        ("judged=sam:fail&judged=rita:fail", 2 if blind else 3),  # either order
        ("judged=rita:pass&judged=sam:fail", 1),
        ("judged=rita:pass&judged=sam:pass", 0),
    ]:
        with CaptureQueriesContext(connection) as queries:
            html = client.get(f"/?{query}{counted}").content.decode()
        assert _count_text(html).startswith(f"{expected} trial"), query
        assert not any("COUNT(" in q["sql"].upper() for q in queries.captured_queries)
        form = TrialFilterForm(QueryDict(f"{query}{counted}"))
        assert len(form.filter(Trial.objects.all())) == expected, query
    # A defer is no pair's judgment: probed.
    html = client.get(f"/?judged=rita:fail&judged=sam:defer{counted}").content.decode()
    assert _count_text(html).startswith("0 trials")


# --- active filter chips ----------------------------------------------------------------------
def test_each_active_filter_is_a_chip_whose_link_removes_it(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trial(agent="alpha", judges=[f.judge("FAIL")])
    html = client.get("/?agent=alpha&judge_verdict=FAIL&sort=reward").content.decode()
    chips = re.findall(r'<li class="filter-chip">(.*?)</li>', html, re.S)
    assert len(chips) == 2
    agent_chip = next(c for c in chips if "Agent" in c)
    assert "alpha" in agent_chip
    remove = re.search(r'class="filter-chip-remove" href="([^"]+)"', agent_chip)
    assert remove
    href = remove.group(1).replace("&amp;", "&")
    assert "agent=" not in href
    assert "judge_verdict=FAIL" in href
    assert "sort=reward" in href
    # Following it leaves one chip, the other filter.
    rest = re.findall(r'<li class="filter-chip">', client.get(href).content.decode())
    assert len(rest) == 1


def test_no_chips_without_a_filter(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trial()
    assert 'class="filter-chip"' not in client.get("/?sort=reward").content.decode()


# --- "newest" is when the trial ran -----------------------------------------------------------
def _walk(sort: str, size: int) -> list[str]:
    names: list[str] = []
    after = ""
    while True:
        data = {"sort": sort} if sort else {}
        form = TrialFilterForm({**data, "after": after} if after else data)
        page = form.page(ROWS.all(), size=size)
        assert not form.errors
        names += [row["name"] for row in page.rows]
        if not page.next_cursor:
            return names
        after = page.next_cursor


@pytest.mark.parametrize("size", [1, 2, 3, 10])
def test_sorting_by_start_walks_every_trial_in_run_order_with_unstarted_ones_oldest(
    size: int,
) -> None:
    # Ingested in another order than they ran, two of them with no start time at all.
    for name, minutes in [("b", 20), ("x", None), ("a", 30), ("c", 10), ("y", None), ("d", 20)]:
        (trial,) = f.write(f.bundle(name=name))
        started = None if minutes is None else f.START + timedelta(minutes=minutes)
        Trial.objects.filter(pk=trial.pk).update(started_at=started)
    # Ties in the start time break by id, in the sort's direction.
    assert _walk("-started", size) == ["a", "d", "b", "c", "y", "x"]
    assert _walk("started", size) == ["x", "y", "c", "b", "d", "a"]


def test_the_explorer_says_it_is_sorted_by_start_and_shows_the_start_with_its_zone(
    client: Client,
) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trial(name="t-1")
    html = client.get("/?sort=-started").content.decode()
    assert "sorted by started, newest first" in html
    assert re.search(r"<time datetime=\"[^\"]+\">\d{4}-\d\d-\d\d \d\d:\d\d UTC</time>", html)
    # "Newest" is the default order; the order of ingestion is a sort of its own.
    assert "sorted by started, newest first" in client.get("/").content.decode()
    assert "sorted by ingested, newest first" in client.get("/?sort=-id").content.decode()


def test_the_default_order_is_when_the_trial_ran_not_when_it_was_ingested(
    client: Client,
) -> None:
    f.login(client, "rita", "reviewer")
    # Ingested late, run early; ingested early, run late; one never started.
    for name, minutes in [("ran-late", 50), ("unstarted", None), ("ran-early", 5)]:
        (trial,) = f.write(f.bundle(name=name))
        started = None if minutes is None else f.START + timedelta(minutes=minutes)
        Trial.objects.filter(pk=trial.pk).update(started_at=started)
    html = client.get("/").content.decode()
    names = re.findall(r'class="clip" href="/trials/\d+/[^"]*" title="([^"]+)"', html)
    assert names == ["ran-late", "ran-early", "unstarted"]
    assert _walk("", 1) == names


# --- jobs: who ran them on what, their size and state, by start --------------------------------
def test_jobs_show_agent_model_dataset_count_and_state_sorted_by_start(client: Client) -> None:
    f.login(client, "ann", "analyst")
    f.make_trials(2, job="late", agent="claude-code", model="m-large", task_source="terminal-bench")
    f.make_trial(job="early", agent="codex", model="m-small", task_source="swebench")
    f.make_trial(job="early", agent="oracle", model="m-small", task_source="swebench")
    # Ingested in the other order than they started; one of them has finished.
    Job.objects.filter(name="late").update(started_at=f.START + timedelta(days=2))
    Job.objects.filter(name="early").update(
        started_at=f.START, finished_at=f.START + timedelta(hours=1)
    )
    forget_job_choices()

    html = client.get("/jobs/").content.decode()
    assert re.findall(r'href="/jobs/\d+/">([^<]+)</a>', html) == ["late", "early"]
    rows = {
        name: " ".join(re.sub(r"<[^>]+>", " ", row).split())
        for row, name in re.findall(
            r'(<tr>\s*<td class="cell-name"><a [^>]*>([^<]+)</a>.*?</tr>)', html, re.S
        )
    }
    assert "claude-code m-large terminal-bench" in rows["late"]
    assert "running" in rows["late"]
    assert "codex, oracle m-small swebench" in rows["early"]
    assert "finished" in rows["early"]
    assert "UTC" in rows["early"]

    # The compare page's pickers (and the explorer's) name the same.
    compare = client.get("/compare/").content.decode()
    options = re.findall(r"<option value=\"\d+\"[^>]*>([^<]+)</option>", compare)
    assert "late · claude-code · m-large · terminal-bench · 2 trials · running" in options
    assert "early · 2 agents · m-small · swebench · 2 trials · finished" in options
    assert options.index("late · claude-code · m-large · terminal-bench · 2 trials · running") < (
        options.index("early · 2 agents · m-small · swebench · 2 trials · finished")
    )


# --- one identity for a Harbor task -----------------------------------------------------------
def test_a_harbor_task_referenced_by_registry_name_and_by_path_is_one_task(
    client: Client, tmp_path: Path, harbor_files: Path
) -> None:
    job = tmp_path / "jobs" / "mixed-refs"
    # The same task (same checksum): named "<dataset>/<task>" with its dataset recorded, as a
    # registry reference gives it; then run from its folder, named by it, with no dataset.
    harbor_trial(
        job, "by-registry", harbor_files, task_name="fixturebench/weather", source="fixturebench"
    )
    harbor_trial(job, "by-name", harbor_files, task_name="fixturebench/weather", source=None)
    harbor_trial(job, "by-path", harbor_files, task_name="weather", source="fixturebench")
    assert not ingest(job).error
    assert Trial.objects.count() == 3
    assert set(Trial.objects.values_list("task__source", "task__name")) == {
        ("fixturebench", "weather")
    }

    f.login(client, "ann", "analyst")
    page = client.get(f"/jobs/{Job.objects.get(name='mixed-refs').pk}/").content.decode()
    by_task = page.split('id="by-task-title"')[1].split("</table>")[0]
    tasks = re.findall(r"&amp;task=[^\"]*\">([^<]+)</a>", by_task)
    assert tasks == ["weather"]


# --- compare: a pass next to a fail; "—" where nothing is paired -------------------------------
def test_a_flipped_task_opens_a_passing_trial_next_to_a_failing_one(client: Client) -> None:
    # Passed in A by majority, its first trial failing; failed in B, its first trial passing.
    a = [f.make_trial(job="run-a", task="flaky", reward=r) for r in (0.1, 0.9, 0.8)]
    b = [f.make_trial(job="run-b", task="flaky", reward=r) for r in (0.9, 0.1, 0.2)]
    f.login(client, "ann", "analyst")
    html = client.get(f"/compare/?a={a[0].job_id}&b={b[0].job_id}").content.decode()
    assert "Passed in A, failed in B" in html
    links = re.findall(r'href="/compare/trials/(\d+)/(\d+)/[^"]*">flaky</a>', html)
    assert links == [(str(a[1].pk), str(b[1].pk))]


def test_an_outcome_no_task_pairs_shows_a_dash_not_p_one(client: Client) -> None:
    a = f.make_trial(job="run-a", task="t1", reward=0.9)
    b = f.make_trial(job="run-b", task="t1", reward=0.1)
    f.login(client, "ann", "analyst")
    html = client.get(f"/compare/?a={a.job_id}&b={b.job_id}").content.decode()
    rows = dict(re.findall(r'<th scope="row">([^<]+)</th>(.*?)</tr>', html, re.S))
    # Nobody reviewed either run: no paired task, no test.
    human = re.findall(r'<td class="num">(.*?)</td>', rows["Human judgment"], re.S)
    assert "0 tasks" in human[2]  # the paired tasks, beside Δ
    assert ">—<" in human[-1]
    assert "1.0" not in human[-1]
    # The verifier paired the task: its test is shown.
    verifier = re.findall(r'<td class="num">(.*?)</td>', rows["Verifier outcome"], re.S)
    assert "exact" in verifier[-1]


# --- first day: themed error pages ------------------------------------------------------------
def test_a_server_error_gets_the_themed_page_without_a_request_context() -> None:
    from django.test import RequestFactory
    from django.views.defaults import server_error

    response = server_error(RequestFactory().get("/boom"))
    html = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong" in html
    assert "Traceback" not in html
    assert 'href="/static/css/' in html or "css/app" in html


def test_times_on_the_jobs_and_adjudication_pages_name_their_zone(client: Client) -> None:
    f.make_trial(job="nightly-1")
    f.login(client, "ann", "analyst")
    job = Job.objects.get(name="nightly-1")
    for url in ("/jobs/", f"/jobs/{job.pk}/"):
        times = re.findall(r"<time [^>]*>([^<]+)</time>", client.get(url).content.decode())
        assert times
        assert all(t.endswith("UTC") for t in times), (url, times)


def test_an_empty_database_welcomes_with_how_to_ingest(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    html = client.get("/").content.decode()
    assert "Welcome to Trialdesk" in html
    assert "manage.py ingest PATH" in html
    assert 'id="filter-form"' not in html
    # A filter on an empty database is still the explorer, saying nothing matches.
    assert "No trial matches" in client.get("/?agent=x").content.decode()
    f.make_trial()
    assert 'id="filter-form"' in client.get("/").content.decode()


def test_every_time_on_the_trial_page_says_its_zone(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    trial = f.make_trial(
        name="t-1",
        judges=[f.judge("PASS")],
        annotations=[f.annotation("rita")],
    )
    html = client.get(f"/trials/{trial.pk}/").content.decode()
    times = re.findall(r"<time[^>]*>([^<]*)</time>", html)
    assert len(times) >= 3  # the start, the verdict and the annotation at least
    for shown in times:
        assert shown.endswith("UTC"), shown
