"""Page fragments kept in the cache ({% cache %} under what they show) never show old data.

The explorer's rows, agreement's report and a job's figures are kept under a digest of the
values they render; a page viewed again after its data changed renders the change.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client

from review.models import add_annotation
from rewards.models import Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def test_the_explorer_shows_a_changed_row_after_its_html_was_kept(client: Client) -> None:
    trial = f.make_trial(name="t-1", judges=[f.judge("PASS")])
    f.login(client, "ana", "analyst")

    def agents(html: str) -> list[str]:  # the rows' agents (the job picker names them too)
        return re.findall(r'<td class="cell-agent[^"]*"><span class="clip" title="([^"]*)"', html)

    assert agents(client.get("/").content.decode()) == ["claude-code"]
    assert agents(client.get("/").content.decode()) == ["claude-code"]  # the rows' HTML kept
    Trial.objects.filter(pk=trial.pk).update(agent_name="other-agent")
    assert agents(client.get("/").content.decode()) == ["other-agent"]


def test_the_explorer_rows_kept_for_one_filter_link_with_the_filter_of_another(
    client: Client,
) -> None:
    trial = f.make_trial(name="t-1", agent="alpha")
    f.login(client, "ana", "analyst")
    # The same rows under two filters: each page's links carry its own filter.
    assert f'href="/trials/{trial.pk}/" title="t-1"' in client.get("/").content.decode()
    filtered = client.get("/?agent=alpha").content.decode()
    assert f'href="/trials/{trial.pk}/?agent=alpha" title="t-1"' in filtered


def test_the_agreement_page_counts_an_annotation_made_after_it_was_kept(client: Client) -> None:
    trial = f.make_trial(name="t-1", judges=[f.judge("PASS")])
    rita = f.make_user("rita", "reviewer")
    f.login(client, "ana", "analyst")
    assert (
        'Judgments counted</div><div class="stat-value">0<'
        in client.get("/agreement/").content.decode()
    )
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass")
    page = client.get("/agreement/").content.decode()
    assert 'Judgments counted</div><div class="stat-value">1<' in page


def test_the_job_page_shows_a_trial_added_after_it_was_kept(client: Client) -> None:
    trial = f.make_trial(name="t-1", job="nightly-42")
    f.login(client, "ana", "analyst")
    url = f"/jobs/{trial.job_id}/"
    assert 'Trials</div><div class="stat-value">1<' in client.get(url).content.decode()
    f.make_trial(name="t-2", job="nightly-42")
    assert 'Trials</div><div class="stat-value">2<' in client.get(url).content.decode()


def test_a_kept_agreement_report_asks_for_no_interval(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rewards import agreement

    trial = f.make_trial(name="t-1", judges=[f.judge("PASS")])
    add_annotation(trial_id=trial.pk, reviewer=f.make_user("rita", "reviewer"), judgment="pass")
    f.login(client, "ana", "analyst")
    calls: list[int] = []
    computed = agreement.kappa_intervals

    def counting(tables: list[tuple[agreement.Clusters, int]]) -> list[agreement.IntervalResult]:
        calls.append(len(tables))
        return computed(tables)

    monkeypatch.setattr(agreement, "kappa_intervals", counting)
    first = client.get("/agreement/")
    assert first.status_code == 200
    assert len(calls) == 1  # every matrix's interval together
    client.get("/agreement/")
    assert len(calls) == 1  # the report's HTML kept: no interval asked for


def test_the_explorer_header_kept_per_filter_and_sort_links_each_pages_own(
    client: Client,
) -> None:
    f.make_trial(name="t-1", judges=[f.judge("PASS")])
    f.make_trial(name="t-2", judges=[f.judge("FAIL", failure_mode="x")])
    f.login(client, "ana", "analyst")
    fail = client.get("/?judge_verdict=FAIL").content.decode()
    passed = client.get("/?judge_verdict=PASS").content.decode()
    by_reward = client.get("/?judge_verdict=PASS&sort=reward").content.decode()
    assert 'href="/?judge_verdict=FAIL&amp;sort=-reward"' in fail
    assert 'href="/?judge_verdict=PASS&amp;sort=-reward"' in passed
    # Sorted by reward ascending, its header links to the descending sort, and says so.
    assert 'href="/?judge_verdict=PASS&amp;sort=-reward"' in by_reward
    assert 'aria-sort="ascending"' in by_reward
    assert 'aria-sort="ascending"' not in passed
