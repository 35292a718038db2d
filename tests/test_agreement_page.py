"""The agreement page: confusion matrices, kappa, breakdowns and reviewer pairs, counted in SQL.

The fixture's judgments (each reviewer's latest per trial; rita changed her mind on t2):

    trial  judge        reward  scorers  rita          sam
    t1     PASS         0.9     PASS     pass          pass
    t2     PASS         0.2     FAIL     pass → fail   pass
    t3     FAIL units   0.1     FAIL     fail          fail
    t4     FAIL units   0.8     PASS     pass          -
    t5     UNPARSEABLE  0.6     PASS     defer         -
    t6     PASS         0.9     PASS     -             -
"""

from __future__ import annotations

import re
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from django.http import QueryDict
from django.test import Client
from pytest_django import DjangoAssertNumQueries

from review.filtering.form import TrialFilterForm
from review.models import add_annotation
from review.science import agreement
from rewards.models import Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewers() -> tuple[User, User]:
    return f.make_user("rita", "reviewer"), f.make_user("sam", "expert")


@pytest.fixture
def trials(reviewers: tuple[User, User]) -> dict[str, Trial]:
    rita, sam = reviewers
    fail = [f.scorer(verdict="FAIL")]
    made = f.write(
        f.bundle(name="t1", reward=0.9, judges=[f.judge("PASS")]),
        f.bundle(name="t2", reward=0.2, scorers=fail, judges=[f.judge("PASS")]),
        f.bundle(
            name="t3",
            reward=0.1,
            scorers=fail,
            judges=[f.judge("FAIL", failure_mode="units", judge_model="judge-2")],
            task_source="mechanical",
        ),
        f.bundle(name="t4", reward=0.8, judges=[f.judge("FAIL", failure_mode="units")]),
        f.bundle(name="t5", reward=0.6, judges=[f.judge("UNPARSEABLE")]),
        f.bundle(name="t6", reward=0.9, judges=[f.judge("PASS")]),
    )
    by_name = {t.name: t for t in made}
    for name, reviewer, judgment in [
        ("t1", rita, "pass"),
        ("t1", sam, "pass"),
        ("t2", rita, "pass"),
        ("t2", sam, "pass"),
        ("t2", rita, "fail"),
        ("t3", rita, "fail"),
        ("t3", sam, "fail"),
        ("t4", rita, "pass"),
        ("t5", rita, "defer"),
    ]:
        add_annotation(trial_id=by_name[name].pk, reviewer=reviewer, judgment=judgment)
    return by_name


def _trials_at(url: str) -> list[str]:
    """The trial names the explorer lists at `url` (the filter form, as the explorer runs it)."""
    query = QueryDict(urlsplit(url).query)
    return sorted(f.names(TrialFilterForm(query).filter(Trial.objects.all())))


def test_judge_against_humans_counts_each_reviewers_latest_judgment(trials: dict[str, Any]) -> None:
    result = agreement.report(TrialFilterForm({}))
    judge = result.comparisons[0]
    assert judge.comparison.key == "judge"
    # Rows judge PASS / FAIL, columns human pass / fail: t1 x2 and sam's t2 are PASS·pass,
    # rita's latest t2 is PASS·fail, t3 x2 FAIL·fail, t4 FAIL·pass; t5's defer abstains.
    assert judge.overall.counts == [[3, 1], [1, 2]]
    # p_o = 5/7; rows 4, 3; columns 4, 3; p_e = (16 + 9) / 49; κ = (10/49) / (24/49) = 5/12.
    assert judge.overall.kappa == pytest.approx(5 / 12)
    # Seven judgments, but four trials: too few for an interval (it used to show one,
    # resampling the seven judgments as if independent).
    assert judge.overall.interval is None
    assert judge.overall.no_interval == "fewer than 10 trials"
    assert result.judgments == 8
    assert result.defers == 1


def test_verifier_and_scorers_against_humans(trials: dict[str, Any]) -> None:
    result = agreement.report(TrialFilterForm({}))
    verifier, scorers = result.comparisons[1], result.comparisons[2]
    # reward ≥ 0.5 passes: t1, t4 (and t5, whose only judgment is a defer).
    assert verifier.overall.counts == [[3, 0], [1, 3]]
    # p_o = 6/7; rows 3, 4; columns 4, 3; p_e = 24/49; κ = (18/49) / (25/49) = 0.72.
    assert verifier.overall.kappa == pytest.approx(0.72)
    assert scorers.overall.counts == [[3, 0], [1, 3]]


def test_breakdown_by_failure_mode_and_by_judge_model(trials: dict[str, Any]) -> None:
    by_mode = agreement.report(TrialFilterForm({}), "failure_mode").comparisons[0]
    groups = {g.label: g.matrix.counts for g in by_mode.groups}
    assert groups == {"(none)": [[3, 1], [0, 0]], "units": [[0, 0], [1, 2]]}
    by_model = agreement.report(TrialFilterForm({}), "judge_model").comparisons[0]
    groups = {g.label: g.matrix.counts for g in by_model.groups}
    assert groups == {"judge-1": [[3, 1], [1, 0]], "judge-2": [[0, 0], [0, 2]]}
    by_source = agreement.report(TrialFilterForm({}), "source").comparisons[1]
    assert {g.label: g.matrix.n for g in by_source.groups} == {"electrical": 5, "mechanical": 2}


def test_each_cell_links_to_exactly_its_trials(trials: dict[str, Any]) -> None:
    result = agreement.report(TrialFilterForm({}), "failure_mode")
    judge, verifier = result.comparisons[0], result.comparisons[1]
    (pass_pass, pass_fail), (fail_pass, fail_fail) = judge.overall.urls
    assert _trials_at(pass_pass) == ["t1", "t2"]  # sam's pass on t2 is its latest
    assert _trials_at(pass_fail) == ["t2"]
    assert _trials_at(fail_pass) == ["t4"]
    assert _trials_at(fail_fail) == ["t3"]
    assert _trials_at(verifier.overall.urls[1][0]) == ["t2"]  # reward 0.2, sam pass
    assert _trials_at(verifier.overall.urls[0][1]) == []
    none_group = next(g for g in judge.groups if g.label == "(none)")
    assert _trials_at(none_group.matrix.urls[0][0]) == ["t1", "t2"]
    units = next(g for g in judge.groups if g.label == "units")
    assert _trials_at(units.matrix.urls[1][1]) == ["t3"]


def test_cell_links_keep_the_page_filter(trials: dict[str, Any]) -> None:
    result = agreement.report(TrialFilterForm({"task": "voltage-drop", "reward_min": "0.5"}))
    url = result.comparisons[0].overall.urls[0][0]
    query = parse_qs(urlsplit(url).query)
    assert query["task"] == ["voltage-drop"]
    assert query["reward_min"] == ["0.5"]
    assert _trials_at(url) == ["t1"]
    assert result.comparisons[0].overall.counts == [[2, 0], [1, 0]]


def test_reviewer_pairs_and_krippendorffs_alpha(trials: dict[str, Any]) -> None:
    reviewers = agreement.report(TrialFilterForm({})).reviewers
    assert len(reviewers.pairs) == 1
    pair = reviewers.pairs[0]
    assert (pair.a, pair.b) == ("rita", "sam")
    # t1 (pass, pass), t2 (fail, pass), t3 (fail, fail): p_o = 2/3, p_e = 4/9, κ = 0.4.
    assert pair.matrix.counts == [[1, 0], [1, 1]]
    assert pair.kappa == pytest.approx(0.4)
    # Coincidences [[2, 1], [1, 2]] → alpha = 1 - 5 · 2 / 18 = 4/9.
    assert reviewers.alpha == pytest.approx(4 / 9)
    assert reviewers.pairable == 6


def _followed(client: Client, html: str, section: str) -> list[list[str]]:
    """The trials the explorer lists at each link of the page's `section`, in order."""
    part = html[html.index(f'id="{section}"') :]
    part = part[: part.index("</section>")]
    listed = []
    for href in re.findall(r'href="([^"]+)"', part):
        response = client.get(unescape(href))
        assert response.status_code == 200
        listed.append(sorted(row["name"] for row in response.context["page"].rows))
    return listed


def test_reviewer_pair_cells_link_to_exactly_their_trials(
    client: Client, trials: dict[str, Any]
) -> None:
    pair = agreement.report(TrialFilterForm({})).reviewers.pairs[0]
    (pass_pass, pass_fail), (fail_pass, fail_fail) = pair.matrix.urls
    assert _trials_at(pass_pass) == ["t1"]
    assert _trials_at(pass_fail) == []
    assert _trials_at(fail_pass) == ["t2"]  # rita's latest on t2 is fail, sam's pass
    assert _trials_at(fail_fail) == ["t3"]
    # Following the page's own links: rita pass · sam fail counted nothing and has none.
    f.login(client, "ann", "analyst")
    html = client.get("/agreement/").content.decode()
    assert _followed(client, html, "reviewers-title") == [["t1"], ["t2"], ["t3"]]


def test_judge_card_links_keep_the_page_filter_and_list_exactly_their_trials(
    client: Client, trials: dict[str, Any]
) -> None:
    f.login(client, "ann", "analyst")
    html = client.get("/agreement/?by=source&reviewer_judgment=pass").content.decode()
    # The page's filter keeps the trials some reviewer passed (t1, t2, t4). PASS·pass holds
    # t1's two passes and sam's on t2, PASS·fail rita's t2, FAIL·pass t4; FAIL·fail counted
    # nothing and has no link. The same again in the one source group, "electrical".
    cells = [["t1", "t2"], ["t2"], ["t4"]]
    assert _followed(client, html, "cmp-judge") == cells + cells


def test_pair_cells_under_a_page_filtered_by_judgments_add_their_own(
    client: Client, trials: dict[str, Any]
) -> None:
    result = agreement.report(TrialFilterForm(QueryDict("judged=sam:pass")))
    (pass_pass, pass_fail), (fail_pass, fail_fail) = result.reviewers.pairs[0].matrix.urls
    assert result.reviewers.pairs[0].matrix.counts == [[1, 0], [1, 0]]
    assert parse_qs(urlsplit(fail_pass).query)["judged"] == ["sam:pass", "rita:fail", "sam:pass"]
    assert _trials_at(pass_pass) == ["t1"]
    assert _trials_at(fail_pass) == ["t2"]
    assert _trials_at(pass_fail) == _trials_at(fail_fail) == []
    blind = agreement.report(TrialFilterForm(QueryDict("counted=blind")))
    assert blind.judgments == 0
    assert blind.reviewers.pairs == []


def test_agreement_page_renders_the_figures_in_a_fixed_number_of_queries(
    client: Client, trials: dict[str, Any], django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    f.login(client, "ann", "analyst")
    # the user, their role groups, the tasks confirmed defective (none; read once, then
    # cached: review.science.exclusions), the grouped counts, the reviewer pairs with their
    # names, the trials judged more than once (the units of κ's intervals, kept tallies).
    with django_assert_num_queries(6):
        response = client.get("/agreement/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Judge verdict vs humans" in html
    assert "0.42" in html  # judge κ = 5/12
    assert "0.72" in html
    assert "0.44" in html  # alpha
    assert "?judge_verdict=PASS&amp;judged=fail" in html


def test_agreement_page_query_count_does_not_grow_with_the_data(
    client: Client, trials: dict[str, Any], django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    rita = User.objects.get(username="rita")
    for trial in f.make_trials(5, judges=[f.judge("FAIL", failure_mode="crash")]):
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment="fail")
    f.login(client, "ann", "analyst")
    # as above, the tasks confirmed defective included.
    with django_assert_num_queries(6):
        response = client.get("/agreement/?by=judge_model")
    assert response.status_code == 200


def test_a_filtered_agreement_page_groups_its_trials_in_a_fixed_number_of_queries(
    client: Client, trials: dict[str, Any], django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    job = trials["t1"].job_id
    f.login(client, "ann", "analyst")
    # the user, their role groups (kept in the cache from here on), the newest jobs and
    # their agents, models and datasets (the filter finds the job among them; cached from
    # here on), the tasks confirmed defective (none; cached from here on), the grouped
    # judgments of the filter's trials, their reviewer pairs with the reviewers' names, their
    # trials judged more than once.
    with django_assert_num_queries(8):
        response = client.get(f"/agreement/?job={job}&reward_min=0&by=source")
    assert response.status_code == 200
    assert response.context["report"].judgments == 8
    # The job alone: the user, its kept judgment tallies and pair tallies instead, the same
    # figures (the roles and the job found in the cache), and its trials judged more than once
    # (kept too).
    with django_assert_num_queries(4):
        alone = client.get(f"/agreement/?job={job}&by=source")
    assert alone.context["report"].judgments == 8
    assert [c.overall.counts for c in alone.context["report"].comparisons] == [
        c.overall.counts for c in response.context["report"].comparisons
    ]


def test_hostile_reviewer_names_are_escaped_in_the_pairs_and_their_links_still_work(
    client: Client,
) -> None:
    # An imported reviewer's name is any text: a script, quotes, a colon and spaces.
    hostile = '<script>window.__pwned=1</script>" a:b'
    f.write(
        f.bundle(name="h", annotations=[f.annotation(hostile, "pass"), f.annotation("sam", "fail")])
    )
    f.login(client, "ann", "analyst")
    html = client.get("/agreement/").content.decode()
    assert "<script>window.__pwned" not in html
    assert "&lt;script&gt;window.__pwned" in html
    assert _followed(client, html, "reviewers-title") == [["h"]]


def test_agreement_page_reports_an_invalid_filter(client: Client, trials: dict[str, Any]) -> None:
    f.login(client, "ann", "analyst")
    response = client.get("/agreement/?reward_min=2&by=nonsense")
    assert response.status_code == 200
    assert "Some filters were not applied" in response.content.decode()


def test_agreement_page_needs_login_and_a_role_and_answers_only_get(client: Client) -> None:
    assert client.get("/agreement/").status_code == 302
    f.login(client, "nobody")
    assert client.get("/agreement/").status_code == 403
    client.logout()
    f.login(client, "ann", "analyst")
    assert client.post("/agreement/").status_code == 405


def test_hostile_names_are_escaped_on_the_agreement_page(client: Client) -> None:
    trial = f.write(f.hostile_bundle())[0]
    add_annotation(trial_id=trial.pk, reviewer=f.make_user("rev", "reviewer"), judgment="pass")
    f.login(client, "ann", "analyst")
    html = client.get("/agreement/").content.decode()
    assert "<script>window.__pwned" not in html
    assert "&lt;script&gt;window.__pwned" in html


def test_a_section_keeps_its_key_until_its_counts_change(
    trials: dict[str, Any], reviewers: tuple[User, User]
) -> None:
    rita, sam = reviewers

    def keys() -> tuple[dict[str, str], str, int]:
        report = agreement.report(TrialFilterForm(QueryDict()))
        sections = {result.comparison.key: key for result, key in report.sections}
        return sections, report.reviewers_fingerprint, report.defers

    before, pairs_before, defers = keys()
    assert len(set(before.values())) == 3
    # rita defers on t6: a defer abstains, so no matrix changes (only the summary's count).
    add_annotation(trial_id=trials["t6"].pk, reviewer=rita, judgment="defer")
    after, pairs_after, more_defers = keys()
    assert (after, pairs_after, more_defers) == (before, pairs_before, defers + 1)
    # She passes it: every gate decided t6, so every comparison's section changes; t6 has
    # one reviewer, so the pairs keep their key.
    add_annotation(trial_id=trials["t6"].pk, reviewer=rita, judgment="pass")
    passed, pairs_passed, _ = keys()
    assert all(passed[key] != after[key] for key in after)
    assert pairs_passed == pairs_after
    # sam judges it too: now a pair's trial.
    add_annotation(trial_id=trials["t6"].pk, reviewer=sam, judgment="fail")
    assert keys()[1] != pairs_passed
