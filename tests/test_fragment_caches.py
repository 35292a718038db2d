"""Page fragments kept in the cache ({% cache %} under what they show) never show old data.

The explorer's rows, agreement's report and a job's figures are kept under a digest of the
values they render; a page viewed again after its data changed renders the change.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client

from review.models import add_annotation
from rewards.models import Trial
from rewards.schemas import ErrorTag
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


# --- the trial page's cards -----------------------------------------------------------------
# Kept under the trial's version (content digest and last update), which every writer of its
# results, scorers, verdicts and tags moves; the scorers card also under the page's query.
def _card(html: str, section: str) -> str:
    return html.split(f'<section id="{section}"', 1)[1].split("</section>", 1)[0]


def test_a_kept_judge_card_shows_a_new_verdict(client: Client) -> None:
    from rewards.scoring.grading import store_verdict

    trial = f.make_trial(name="t-1", judges=[f.judge("PASS", judge_model="judge-1")])
    f.login(client, "ana", "analyst")
    url = f"/trials/{trial.pk}/"
    assert "judge-1" in _card(client.get(url).content.decode(), "judge")
    assert "judge-1" in _card(client.get(url).content.decode(), "judge")  # kept
    later = f.judge("FAIL", judge_model="judge-9", scored_at=f.START + timedelta(days=2))
    store_verdict(Trial.objects.get(pk=trial.pk), later)
    card = _card(client.get(url).content.decode(), "judge")
    assert "<strong>judge-9</strong>" in card
    assert "1 earlier verdict" in card


def test_kept_cards_show_a_reingested_trials_results(client: Client) -> None:
    trial = f.make_trial(
        name="t-1",
        scorers=[f.scorer("tests", verdict="PASS")],
        error_tags=[ErrorTag(category="scope", source="mechanical")],
    )
    f.login(client, "ana", "analyst")
    url = f"/trials/{trial.pk}/"
    for _ in range(2):  # the second view reads the kept cards
        page = client.get(url).content.decode()
        assert "tests" in _card(page, "scorers")
        assert "scope" in _card(page, "error-tags")
    f.write(
        f.bundle(
            name="t-1",
            scorers=[f.scorer("lint", verdict="FAIL")],
            error_tags=[ErrorTag(category="timeout", source="mechanical")],
        )
    )
    assert Trial.objects.get(pk=trial.pk).content_digest != trial.content_digest
    page = client.get(url).content.decode()
    assert "lint" in _card(page, "scorers")
    assert ">tests<" not in _card(page, "scorers")
    assert "timeout" in _card(page, "error-tags")
    assert "scope" not in _card(page, "error-tags")


def test_a_kept_scorers_card_shows_scorers_run_again(client: Client, tmp_path: Path) -> None:
    from rewards.scoring import scenarios
    from rewards.scoring.grading import score_stored
    from tests.scoring_helpers import seeded_repo, write

    trial = f.make_trial(name="t-1", scorers=[f.scorer("tests", verdict="PASS")])
    f.login(client, "ana", "analyst")
    url = f"/trials/{trial.pk}/"
    client.get(url)
    assert "tests" in _card(client.get(url).content.decode(), "scorers")
    root, base = seeded_repo(tmp_path / "ws", {"wrap.py": "def wrap(s):\n    return s\n"})
    write(root, {"wrap.py": "def wrap(s):\n    return s.split()\n"})
    scenarios.create_scenario(
        "textkit", [{"name": "wrapped", "type": "command", "command": "grep -q split wrap.py"}]
    )
    score_stored(Trial.objects.get(pk=trial.pk), root, base, scenario="textkit")
    card = _card(client.get(url).content.decode(), "scorers")
    assert "wrapped" in card
    assert ">tests<" not in card


def test_a_kept_scorers_card_is_kept_per_query(client: Client) -> None:
    trial = f.make_trial(name="t-1", scorers=[f.scorer("a"), f.scorer("b")])
    f.login(client, "ana", "analyst")
    url = f"/trials/{trial.pk}/"
    client.get(url)
    opened = _card(client.get(f"{url}?open=1").content.decode(), "scorers")
    assert 'aria-expanded="true"' in opened
    assert f'href="{url}?open=#scorer-1"' in opened  # its link closes the row again
    closed = _card(client.get(url).content.decode(), "scorers")
    assert 'aria-expanded="true"' not in closed


def test_the_staff_judge_form_never_shows_to_another_role(client: Client) -> None:
    trial = f.make_trial(name="t-1", judges=[f.judge("PASS")])
    url = f"/trials/{trial.pk}/"
    rejudge = f'action="/trials/{trial.pk}/rejudge/"'
    f.login(client, "sam", "analyst", staff=True)
    staff_page = client.get(url).content.decode()
    assert rejudge in staff_page
    assert "Re-judge" in staff_page
    f.login(client, "ana", "analyst")  # the cards now kept
    page = client.get(url).content.decode()
    assert rejudge not in page
    assert "Re-judge" not in page
    assert 'name="csrfmiddlewaretoken"' not in _card(page, "judge")
    # And the other way round: kept for a reader without the form, staff still get theirs,
    # with their own token.
    other = Client()
    f.login(other, "tess", "analyst", staff=True)
    tess_page = other.get(url).content.decode()
    assert rejudge in tess_page
    token = tess_page.split(rejudge, 1)[1].split('name="csrfmiddlewaretoken" value="', 1)[1]
    assert token.split('"', 1)[0] not in staff_page
