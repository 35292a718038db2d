"""Previous / next on the trial page: the explorer's filter and sort, walked by keyset."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from itertools import pairwise
from typing import Any

import pytest
from django.test import Client

from review.models import add_annotation
from rewards.models import Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def _nav_links(html: str) -> dict[str, str]:
    """rel -> href of the page's previous / next links (entities decoded)."""
    nav = re.search(r'<nav id="trial-nav".*?</nav>', html, re.S)
    assert nav, "no trial-nav on the page"
    return {
        rel: href.replace("&amp;", "&")
        for rel, href in re.findall(r'rel="(prev|next)"[^>]*href="([^"]*)"', nav.group(0))
    }


def _walk(client: Client, start: str) -> list[str]:
    """Follow "next →" from `start` to the end; the trial names in order."""
    seen: list[str] = []
    url: str | None = start
    while url:
        html = client.get(url).content.decode()
        seen.append(re.search(r"<h1>([^<]+)</h1>", html).group(1))  # type: ignore[union-attr]
        url = _nav_links(html).get("next")
        assert len(seen) <= 50, "the walk does not end"
    return seen


def _explorer_names(client: Client, query: str) -> list[str]:
    html = client.get(f"/?{query}").content.decode()
    return re.findall(r'class="clip" href="/trials/\d+/[^"]*" title="([^"]+)"', html)


@pytest.fixture
def mixed() -> list[Trial]:
    """Judge FAIL and PASS trials with rewards that tie, so the id breaks ties."""
    rewards = [0.2, 0.9, 0.5, 0.5, 0.7, 0.5, 0.1]
    return [
        f.make_trial(
            name=f"t{i}", reward=r, judges=[f.judge("FAIL" if i % 3 else "PASS")], agent=f"a{i % 2}"
        )
        for i, r in enumerate(rewards)
    ]


def test_the_explorer_links_each_row_with_its_filter_and_sort(
    client: Client, mixed: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    html = client.get("/?judge_verdict=FAIL&sort=-reward&job=&q=").content.decode()
    trial = next(t for t in mixed if t.name == "t1")
    # Only the parameters in use, in the explorer's canonical form.
    assert f'href="/trials/{trial.pk}/?judge_verdict=FAIL&amp;sort=-reward"' in html
    plain = client.get("/").content.decode()
    assert f'href="/trials/{trial.pk}/"' in plain


@pytest.mark.parametrize(
    "query",
    [
        "",
        "sort=-reward",
        "sort=reward&judge_verdict=FAIL",
        "sort=task&agent=a1",
        "sort=-task",
        "sort=-job",
        "sort=-id",
    ],
)
def test_next_walks_the_same_trials_in_the_same_order_as_the_explorer(
    client: Client, mixed: list[Trial], query: str
) -> None:
    f.login(client, "rita", "reviewer")
    listed = _explorer_names(client, query)
    first = re.search(
        r'class="clip" href="(/trials/\d+/[^"]*)"', client.get(f"/?{query}").content.decode()
    )
    assert first
    assert _walk(client, first.group(1).replace("&amp;", "&")) == listed


def test_previous_and_next_are_the_neighbours_in_the_filter_and_keep_the_tab(
    client: Client, mixed: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    by_name = {t.name: t for t in mixed}
    # judge FAIL: t1 0.9, t2 0.5, t4 0.7, t5 0.5; by reward descending, ties by id descending:
    # t1, t4, t5, t2.
    url = f"/trials/{by_name['t4'].pk}/?judge_verdict=FAIL&sort=-reward&tab=diff"
    links = _nav_links(client.get(url).content.decode())
    assert links == {
        "prev": f"/trials/{by_name['t1'].pk}/?judge_verdict=FAIL&sort=-reward&tab=diff",
        "next": f"/trials/{by_name['t5'].pk}/?judge_verdict=FAIL&sort=-reward&tab=diff",
    }


def test_the_first_trial_has_no_previous_and_the_last_no_next(
    client: Client, mixed: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    by_name = {t.name: t for t in mixed}
    first = client.get(f"/trials/{by_name['t1'].pk}/?judge_verdict=FAIL&sort=-reward")
    last = client.get(f"/trials/{by_name['t2'].pk}/?judge_verdict=FAIL&sort=-reward")
    assert set(_nav_links(first.content.decode())) == {"next"}
    assert set(_nav_links(last.content.decode())) == {"prev"}
    assert "This is the first trial in the list" in first.content.decode()
    assert "This is the last trial in the list" in last.content.decode()


def test_a_trial_outside_the_filter_still_gets_the_neighbours_around_its_place(
    client: Client, mixed: list[Trial]
) -> None:
    """A trial just annotated leaves an "unreviewed" list; next still goes on from it."""
    reviewer = f.login(client, "rita", "reviewer")
    by_name = {t.name: t for t in mixed}
    add_annotation(trial_id=by_name["t3"].pk, reviewer=reviewer, judgment="pass")
    html = client.get(f"/trials/{by_name['t3'].pk}/?human_judgment=unreviewed").content.decode()
    assert _nav_links(html) == {
        "prev": f"/trials/{by_name['t4'].pk}/?human_judgment=unreviewed&tab=trajectory",
        "next": f"/trials/{by_name['t2'].pk}/?human_judgment=unreviewed&tab=trajectory",
    }


def test_without_a_filter_the_neighbours_are_the_explorer_default_newest_first(
    client: Client, mixed: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    middle = mixed[3]
    links = _nav_links(client.get(f"/trials/{middle.pk}/").content.decode())
    assert links == {
        "prev": f"/trials/{mixed[4].pk}/?tab=trajectory",
        "next": f"/trials/{mixed[2].pk}/?tab=trajectory",
    }


@pytest.fixture
def run_times() -> list[Trial]:
    """Trials ingested in another order than they ran: two started at the same minute, two
    never started (a start time is optional), judge FAIL and PASS mixed."""
    trials = []
    for i, minutes in enumerate([20, None, 30, 10, None, 20, 40]):
        trial = f.make_trial(name=f"r{i}", judges=[f.judge("FAIL" if i % 3 else "PASS")])
        started = None if minutes is None else f.START + timedelta(minutes=minutes)
        Trial.objects.filter(pk=trial.pk).update(started_at=started)
        trials.append(trial)
    return trials


@pytest.mark.parametrize(
    "query", ["", "sort=-started", "sort=started", "sort=-started&judge_verdict=FAIL"]
)
def test_next_and_previous_walk_the_run_order_with_unstarted_trials_last(
    client: Client, run_times: list[Trial], query: str
) -> None:
    f.login(client, "rita", "reviewer")
    listed = _explorer_names(client, query)
    if query in ("", "sort=-started"):
        # Newest run first, ties by id, newest first; never started: after, newest first.
        assert listed == ["r6", "r2", "r5", "r0", "r3", "r4", "r1"]
    first = re.search(
        r'class="clip" href="(/trials/\d+/[^"]*)"', client.get(f"/?{query}").content.decode()
    )
    assert first
    assert _walk(client, first.group(1).replace("&amp;", "&")) == listed
    # Previous walks the same list backwards, across the unstarted ones too.
    by_name = {t.name: t for t in run_times}
    for before, here in pairwise(listed):
        suffix = f"?{query}&tab=trajectory" if query else "?tab=trajectory"
        html = client.get(f"/trials/{by_name[here].pk}/{suffix}").content.decode()
        assert _nav_links(html)["prev"].startswith(f"/trials/{by_name[before].pk}/")


def test_the_links_carry_the_hotkeys_the_keyboard_script_reads(
    client: Client, mixed: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    html = client.get(f"/trials/{mixed[3].pk}/").content.decode()
    assert re.search(r'<a class="button-quiet" rel="prev" data-hotkey="k"', html)
    assert re.search(r'<a class="button-quiet" rel="next" data-hotkey="j"', html)


def test_tabs_breadcrumb_and_forms_keep_the_filter(client: Client, mixed: list[Trial]) -> None:
    f.login(client, "rita", "reviewer")
    html = client.get(f"/trials/{mixed[3].pk}/?judge_verdict=FAIL&sort=-reward").content.decode()
    base = f"/trials/{mixed[3].pk}/?judge_verdict=FAIL&amp;sort=-reward"
    assert f'href="{base}&amp;tab=diff#tabs"' in html
    assert 'href="/?judge_verdict=FAIL&amp;sort=-reward">Explorer</a>' in html
    # The trajectory filter form resubmits the list's filter as hidden fields.
    assert '<input type="hidden" name="judge_verdict" value="FAIL">' in html
    assert '<input type="hidden" name="sort" value="-reward">' in html
    assert (
        f'action="/trials/{mixed[3].pk}/annotations/?judge_verdict=FAIL&amp;sort=-reward'
        '&amp;tab=trajectory"' in html
    )


def test_a_tab_fragment_swaps_the_links_out_of_band_with_the_new_tab(
    client: Client, mixed: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    response = client.get(f"/trials/{mixed[3].pk}/?sort=-reward&tab=output", headers=HX)
    html = response.content.decode()
    assert f.is_fragment(html)
    assert html.lstrip().startswith('<section id="tabs"')
    assert (
        '<nav id="trial-nav" class="trial-nav" aria-label="Trials in this list" hx-swap-oob="true">'
        in html
    )
    assert all("tab=output" in href for href in _nav_links(html).values())
    assert "HX-Request" in response["Vary"]


def test_a_plain_annotation_post_comes_back_to_the_same_list_and_tab(
    client: Client, mixed: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    trial = mixed[3]
    response = client.post(
        f"/trials/{trial.pk}/annotations/?judge_verdict=FAIL&sort=-reward&tab=diff",
        {"judgment": "pass"},
    )
    assert response.status_code == 302
    assert response["Location"] == (
        f"/trials/{trial.pk}/?judge_verdict=FAIL&sort=-reward&tab=diff#annotations"
    )


def test_a_plain_scorer_row_request_keeps_the_list_and_tab(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    trial = f.make_trial(scorers=[f.scorer("tests")])
    response = client.get(
        f"/trials/{trial.pk}/scorers/0/?expanded=1&judge_verdict=FAIL&tab=diff&open="
    )
    assert response["Location"] == (
        f"/trials/{trial.pk}/?judge_verdict=FAIL&open=0&tab=diff#scorer-0"
    )
    page = client.get(f"/trials/{trial.pk}/?judge_verdict=FAIL").content.decode()
    # The row's htmx request carries the page's query, so its swapped-in links keep it too.
    assert f'hx-get="/trials/{trial.pk}/scorers/0/?judge_verdict=FAIL&amp;expanded=1"' in page


def test_an_invalid_filter_value_narrows_nothing_and_the_page_still_works(
    client: Client, mixed: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    response = client.get(f"/trials/{mixed[3].pk}/?sort=bogus&reward_min=x&judge_verdict=NOPE")
    assert response.status_code == 200
    assert _nav_links(response.content.decode())["next"].startswith(f"/trials/{mixed[2].pk}/")


def test_an_analyst_gets_previous_and_next_too(client: Client, mixed: list[Trial]) -> None:
    f.login(client, "ann", "analyst")
    html = client.get(f"/trials/{mixed[3].pk}/").content.decode()
    assert set(_nav_links(html)) == {"prev", "next"}


# --- query budget ----------------------------------------------------------------------------
def _many(size: int) -> list[Trial]:
    return f.make_trials(size, judges=[f.judge("FAIL")], scorers=[f.scorer("a"), f.scorer("b")])


@pytest.mark.parametrize("size", [3, 40])
def test_previous_and_next_cost_no_extra_query_whatever_the_data_size(
    client: Client, django_assert_num_queries: Callable[..., Any], size: int
) -> None:
    trials = _many(size)
    f.login(client, "rita", "reviewer")
    middle = trials[len(trials) // 2]
    # 1 the user, 2 their role groups, 3 the trial with its job, task and open
    # tab's blobs AND its previous and next ids (two keyset subqueries, LIMIT 1 each, in the
    # same SELECT), 4 results, 5 step comments, 6 scorers, 7 judge verdicts, 8 the
    # reviewer's profile: the same 8 as the page without a list (no annotation and no
    # error tag yet: neither annotations, adjudications nor tags are read).
    with django_assert_num_queries(8):
        html = client.get(
            f"/trials/{middle.pk}/?judge_verdict=FAIL&sort=-reward&tab=diff"
        ).content.decode()
    assert set(_nav_links(html)) == {"prev", "next"}
    # A job filter adds two: the newest jobs, among which the form finds the job, and their
    # agents, models and datasets (what the pickers name them by; both cached from then
    # on); the roles come from the cache now, and so do the cards but the scorers (kept
    # under the page's query, which their links carry): results and verdicts are not read.
    with django_assert_num_queries(7):
        assert client.get(f"/trials/{middle.pk}/?job={middle.job_id}").status_code == 200


@pytest.mark.parametrize("size", [3, 40])
def test_the_tab_fragment_with_its_links_runs_a_fixed_number_of_queries(
    client: Client, django_assert_num_queries: Callable[..., Any], size: int
) -> None:
    trials = _many(size)
    f.login(client, "rita", "reviewer")
    # 1 the user, 2 their role groups, 3 the trial with its neighbours and the
    # tab's blobs.
    with django_assert_num_queries(3):
        response = client.get(f"/trials/{trials[1].pk}/?sort=-reward&tab=diff", headers=HX)
    assert set(_nav_links(response.content.decode())) == {"prev", "next"}
    # Sorted by a name (task, job), the neighbours are read after the trial, a walk each
    # way from its place: 3 and 5 the task names from its own on, 4 and 6 the previous and
    # next trial among its name's (the roles from the cache now).
    with django_assert_num_queries(6):
        response = client.get(f"/trials/{trials[1].pk}/?sort=task&tab=diff", headers=HX)
    assert set(_nav_links(response.content.decode())) == {"prev", "next"}


def test_a_trial_that_joins_the_list_is_its_neighbours_neighbour_at_once(
    client: Client, mixed: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    query = "judge_verdict=FAIL&sort=-reward&tab=diff"
    for trial in mixed:
        assert client.get(f"/trials/{trial.pk}/?{query}").status_code == 200
    # A trial that joins the list between two others is their neighbour at once.
    newcomer = f.make_trial(name="newcomer", reward=0.6, judges=[f.judge("FAIL")])
    walked = _walk(client, f"/trials/{mixed[1].pk}/?{query}")
    assert "newcomer" in walked
    assert walked == _explorer_names(client, "judge_verdict=FAIL&sort=-reward")
    # A search finds the trial's list too.
    assert client.get(f"/trials/{newcomer.pk}/?q=newcomer").status_code == 200
    # An unknown trial is not found, in a list or not.
    assert client.get(f"/trials/{newcomer.pk + 1000}/?{query}").status_code == 404


# --- the main navigation ---------------------------------------------------------------------
def _main_nav(html: str) -> str:
    nav = re.search(r'<nav class="mainnav" aria-label="Main">(.*?)</nav>', html, re.S)
    assert nav, "no main navigation on the page"
    return nav.group(1)


def test_the_main_navigation_offers_what_the_role_may_follow_and_marks_the_current_page(
    client: Client,
) -> None:
    f.login(client, "ana", "analyst")
    nav = _main_nav(client.get("/jobs/").content.decode())
    labels = re.findall(r">([^<]+)</a>", nav)
    assert labels == ["Explorer", "Saved views", "Jobs", "Agreement", "Compare", "Defective tasks"]
    assert re.findall(r'<a href="([^"]+)" aria-current="page">', nav) == ["/jobs/"]

    f.login(client, "boss", "reviewer", staff=True)
    nav = _main_nav(client.get("/").content.decode())
    labels = re.findall(r">([^<]+)</a>", nav)
    assert {"Queue", "Scenarios", "Admin"} <= set(labels)
    assert re.findall(r'<a href="([^"]+)" aria-current="page">', nav) == ["/"]
