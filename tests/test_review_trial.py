"""The Agent Trace page (`/trials/<id>/`): cards, tabs, scorer rows, roles, query counts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from review.adjudication import adjudicate
from review.models import add_annotation
from rewards.models import Trial
from rewards.schemas import ErrorTag, IngestProblem
from tests import review_factories as f

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def _url(trial: Trial, suffix: str = "") -> str:
    return f"/trials/{trial.pk}/{suffix}"


@pytest.fixture
def full_trial() -> Trial:
    return f.make_trial(
        name="t-full",
        reward=0.93,
        scorers=[
            f.scorer("tests", "command", "PASS", output_tail="3 passed"),
            f.scorer("scope", "forbid_paths", "FAIL", detail="touched .github/workflows"),
            f.scorer("skips", "no_new_skips", "FAIL", detail="+1 skip marker"),
            f.scorer("content", "tests_unmodified", "N/A"),
        ],
        judges=[
            f.judge(
                "PASS",
                fact_checks=[("drop is 3.2 V", "supported", "calc output")],
                reasoning="Correct formula.",
            )
        ],
        error_tags=[ErrorTag(category="scope", description="edited CI", source="mechanical")],
        earlier_rewards=[0.4],
    )


def test_trial_page_shows_header_gates_cards_and_annotations(
    client: Client, full_trial: Trial
) -> None:
    f.login(client, "rita", "reviewer")
    response = client.get(_url(full_trial))
    html = response.content.decode()
    assert response.status_code == 200
    for text in (
        "t-full",
        "nightly-42",
        "claude-code",
        "m-large",
        "1,200 / 45,000 / 420",
        "$0.0123",
        "0.930",
        "Output parseable",
        "Objective and checks",
        "Judge verdict",
        "Run badge",
        "Judge PASS, scorers FAIL",
        "Semantically plausible output",
        "Scorers",
        "OVERALL",
        "advisory",
        "Task completion",
        "drop is 3.2 V",
        "Judged by",
        "judge-1",
        "voltage_drop_v",
        "within 2%",
        "edited CI",
        "Earlier results",
        "0.400",
        "Annotations",
        "Save annotation",
        "Trajectory",
        "V = I * R.",
    ):
        assert text in html, text


def test_trial_page_answers_only_get(client: Client, full_trial: Trial) -> None:
    f.login(client, "rita", "reviewer")
    assert client.post(_url(full_trial)).status_code == 405


def test_trial_page_sends_anonymous_visitors_to_the_login_page(
    client: Client, full_trial: Trial
) -> None:
    response = client.get(_url(full_trial))
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_trial_page_refuses_a_user_without_a_role(client: Client, full_trial: Trial) -> None:
    f.login(client, "nobody")
    assert client.get(_url(full_trial)).status_code == 403
    assert client.get(_url(full_trial, "?tab=diff"), headers=HX).status_code == 403
    assert client.get(_url(full_trial, "scorers/0/?expanded=1"), headers=HX).status_code == 403


def test_an_unknown_trial_is_not_found(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    assert client.get("/trials/999999/").status_code == 404


def test_an_analyst_sees_the_page_without_the_annotation_form(
    client: Client, full_trial: Trial
) -> None:
    f.login(client, "ann", "analyst")
    html = client.get(_url(full_trial)).content.decode()
    assert "Annotations" in html
    assert "Save annotation" not in html
    assert "can read annotations but not add them" in html


def test_hard_failures_start_expanded_and_other_rows_collapsed(
    client: Client, full_trial: Trial
) -> None:
    f.login(client, "rita", "reviewer")
    html = client.get(_url(full_trial)).content.decode()
    # The required FAIL (forbid_paths) is open; the advisory FAIL and the rest are not.
    assert "touched .github/workflows" in html
    assert "+1 skip marker" not in html
    assert "3 passed" not in html
    assert 'class="scorer hard-failure expanded"' in html
    assert html.count('aria-expanded="true"') == 1
    assert 'class="scorer not-applicable"' in html


def test_the_open_parameter_expands_rows_without_javascript(
    client: Client, full_trial: Trial
) -> None:
    f.login(client, "rita", "reviewer")
    html = client.get(_url(full_trial, "?open=0,2")).content.decode()
    assert "3 passed" in html
    assert "+1 skip marker" in html
    assert "touched .github/workflows" not in html


def test_an_htmx_scorer_row_request_returns_only_that_row_expanded(
    client: Client, full_trial: Trial
) -> None:
    f.login(client, "rita", "reviewer")
    response = client.get(_url(full_trial, "scorers/0/?expanded=1"), headers=HX)
    html = response.content.decode()
    assert response.status_code == 200
    assert f.is_fragment(html)
    assert html.lstrip().startswith('<tbody id="scorer-0"')
    assert 'aria-expanded="true"' in html
    assert "3 passed" in html
    assert "HX-Request" in response["Vary"]

    collapsed = client.get(_url(full_trial, "scorers/0/?expanded=0"), headers=HX)
    assert 'aria-expanded="false"' in collapsed.content.decode()
    assert "3 passed" not in collapsed.content.decode()


def test_a_plain_scorer_row_request_redirects_to_the_page_with_the_row_open(
    client: Client, full_trial: Trial
) -> None:
    f.login(client, "rita", "reviewer")
    response = client.get(_url(full_trial, "scorers/0/?expanded=1"))
    assert response.status_code == 302
    assert response["Location"] == _url(full_trial, "?open=0#scorer-0")


def test_scorer_rows_of_another_trial_are_not_found(client: Client, full_trial: Trial) -> None:
    f.login(client, "rita", "reviewer")
    other = f.make_trial(scorers=[])
    assert client.get(_url(other, "scorers/0/?expanded=1"), headers=HX).status_code == 404
    assert client.post(_url(full_trial, "scorers/0/")).status_code == 405


def test_the_scorers_card_is_hidden_when_the_trial_has_no_scorers(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    trial = f.make_trial(scorers=[])
    html = client.get(_url(trial)).content.decode()
    assert 'id="scorers"' not in html
    assert "no scorers" in html


def test_an_unparseable_judge_shows_its_raw_response(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    trial = f.make_trial(judges=[f.judge("UNPARSEABLE", raw_response="{not json at all")])
    html = client.get(_url(trial)).content.decode()
    assert "UNPARSEABLE" in html
    assert "{not json at all" in html
    assert "does not fail the run" in html


def test_long_judge_reasoning_folds_into_details(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    trial = f.make_trial(judges=[f.judge("FAIL", failure_mode="gave up", reasoning="word " * 400)])
    html = client.get(_url(trial)).content.decode()
    assert "Read the full reasoning" in html
    assert "gave up" in html


@pytest.mark.parametrize(
    ("tab", "expected"),
    [
        ("trajectory", '<code class="tool-name">exec</code>'),
        ("diff", 'class="dl dl-add"'),
        ("output", "claude -p"),
        ("verifier", "test_answer"),
    ],
)
def test_each_tab_is_a_plain_link_and_an_htmx_fragment(
    client: Client, full_trial: Trial, tab: str, expected: str
) -> None:
    f.login(client, "rita", "reviewer")
    page = client.get(_url(full_trial, f"?tab={tab}")).content.decode()
    assert expected in page
    assert "<html" in page
    response = client.get(_url(full_trial, f"?tab={tab}"), headers=HX)
    fragment = response.content.decode()
    assert f.is_fragment(fragment)
    assert fragment.lstrip().startswith('<section id="tabs"')
    assert expected in fragment
    assert "Save annotation" not in fragment
    assert "HX-Request" in response["Vary"]


def test_the_trajectory_filter_shows_only_the_chosen_step_kinds(
    client: Client, full_trial: Trial
) -> None:
    f.login(client, "rita", "reviewer")
    html = client.get(
        _url(full_trial, "?tab=trajectory&filtered=1&show=tool_call"), headers=HX
    ).content.decode()
    assert '<code class="tool-name">exec</code>' in html
    assert "V = I * R." not in html
    assert "3.2 V" not in html
    nothing = client.get(_url(full_trial, "?tab=trajectory&filtered=1"), headers=HX)
    assert "No step has the selected kinds." in nothing.content.decode()


def test_the_diff_is_coloured_by_line_class_not_by_markup(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    trial = f.make_trial(
        detail={
            "workspace_diff": (
                "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-<b>old</b>\n+new\n"
            )
        }
    )
    html = client.get(_url(trial, "?tab=diff"), headers=HX).content.decode()
    assert '<span class="dl dl-del">-&lt;b&gt;old&lt;/b&gt;</span>' in html
    assert '<span class="dl dl-add">+new</span>' in html
    assert '<span class="dl dl-hunk">@@ -1 +1 @@</span>' in html


# --- query budget -----------------------------------------------------------------------------
def _cards(response: Any) -> str:
    """The page's cards above its tabs: the reward, the gates, scorers, judge, breakdown."""
    html: str = response.content.decode()
    return html.split('<div class="trial-grid">', 1)[1].split('<section id="tabs"', 1)[0]


def _busy_trial(size: int) -> Trial:
    tags = [ErrorTag(category=f"c{i}", source="mechanical") for i in range(size)]
    trial = f.make_trial(
        scorers=[f.scorer(f"s{i}", verdict="FAIL" if i % 2 else "PASS") for i in range(size)],
        judges=[
            f.judge("PASS", fact_checks=[(f"claim {i}", "supported", "e") for i in range(size)])
            for _ in range(size)
        ],
        error_tags=tags,
        earlier_rewards=[0.1 * (i % 10) for i in range(size - 1)],
        annotations=[f.annotation(f"rev{i}", "pass") for i in range(size)],
    )
    f.make_trials(size - 1)
    return trial


@pytest.mark.parametrize("size", [1, 20])
@pytest.mark.parametrize(
    ("tab", "expected"),
    [
        ("", 11),
        ("diff", 11),
        ("output", 11),
        ("verifier", 12),
        # The tabs read from the trial's folder read no row more.
        ("agent-logs", 11),
        ("trial-log", 11),
        ("artifacts", 11),
        ("analysis", 11),
        ("exception", 11),
    ],
)
def test_the_trial_page_runs_a_fixed_number_of_queries(
    client: Client,
    django_assert_num_queries: Callable[..., Any],
    size: int,
    tab: str,
    expected: int,
) -> None:
    trial = _busy_trial(size)
    reviewer = f.login(client, "rita", "reviewer", discipline="power systems")
    add_annotation(trial_id=trial.pk, reviewer=reviewer, judgment="fail")
    eve = f.make_user("eve", "expert")
    for i in range(size):
        adjudicate(trial_id=trial.pk, adjudicator=eve, verdict="pass", rationale=f"r{i}")
    # 1 the user, 2 their role groups, 3 the trial with its job, task and the
    # open tab's blobs (nothing else of them), 4 its results (raw artifacts deferred), 5
    # step comments with their authors (beside the steps and in the annotations panel), 6
    # scorers, 7 judge verdicts, 8 error tags, 9 annotations with their reviewers, 10 the
    # reviewer's profile (discipline), 11 adjudications with their adjudicators; the
    # verifier tab adds 12, the current result's raw artifacts.
    url = _url(trial, f"?tab={tab}" if tab else "")
    with django_assert_num_queries(expected):
        response = client.get(url)
    assert response.status_code == 200
    # Viewed again, the user's roles are kept (rewards.cache) and so are the cards rendered
    # (results, scorers, verdicts and tags): none of their rows is read.
    with django_assert_num_queries(expected - 5):
        again = client.get(url)
    assert _cards(again) == _cards(response)


@pytest.mark.parametrize(("role", "expected"), [("reviewer", 9), ("analyst", 8)])
def test_an_unreviewed_trial_reads_no_annotations_and_no_adjudications(
    client: Client, django_assert_num_queries: Callable[..., Any], role: str, expected: int
) -> None:
    trial = f.make_trial(
        name="t-unreviewed",
        scorers=[f.scorer("a"), f.scorer("b")],
        judges=[f.judge("FAIL")],
        error_tags=[ErrorTag(category="timeout", source="mechanical")],
    )
    assert trial.annotation_count == 0
    f.login(client, "una", role)
    # 1 the user, 2 their role groups, 3 the trial, 4 results, 5 step comments, 6
    # scorers, 7 judge verdicts, 8 error tags, and for a reviewer 9 their profile (the
    # form's discipline): the kept annotation count says there is nothing more to read.
    with django_assert_num_queries(expected):
        response = client.get(_url(trial))
    html = response.content.decode()
    assert "No one has reviewed this trial yet." in html
    assert 'id="verdicts-title"' not in html
    assert "timeout" in html


def test_a_trial_without_judge_or_error_tags_reads_neither(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    trial = f.make_trial(name="t-bare", scorers=[f.scorer("a")], judges=[], error_tags=[])
    assert trial.judge_verdict == ""
    assert trial.error_categories == ""
    f.login(client, "ann", "analyst")
    # 1 the user, 2 their role groups, 3 the trial, 4 results, 5 step comments, 6
    # scorers: its kept judge verdict and error categories are empty, so no verdict or tag
    # is read.
    with django_assert_num_queries(6):
        response = client.get(_url(trial))
    html = response.content.decode()
    assert "No judge verdict for this trial." in html
    assert 'id="error-tags"' not in html
    # Viewed again: the user's roles are kept, and its results and scorers kept rendered.
    with django_assert_num_queries(3):
        assert _cards(client.get(_url(trial))) == _cards(response)


@pytest.mark.parametrize("size", [1, 20])
def test_a_tab_fragment_runs_a_fixed_number_of_queries(
    client: Client, django_assert_num_queries: Callable[..., Any], size: int
) -> None:
    trial = _busy_trial(size)
    f.login(client, "rita", "reviewer")
    # 1 the user, 2 their role groups, 3 the trial with the tab's blobs, 4 the
    # current result's raw artifacts (the verifier tab shows them).
    with django_assert_num_queries(4):
        assert client.get(_url(trial, "?tab=verifier"), headers=HX).status_code == 200


# --- ingestion problems, unknown catalog entries, the breakdown tree ------------------------
HOSTILE_RAW = '<script>alert("raw")</script>'


def _trial_with_problems() -> Trial:
    return f.make_trial(
        name="t-problems",
        reward=0.7,
        scorers=[f.scorer("vision", "screenshot_diff", "PASS")],
        error_tags=[ErrorTag(category="flaky network", source="pipeline-v9")],
        breakdown={
            "correctness": {"criteria": [{"name": "parses", "value": 1, "error": ""}]},
            "style": {"score": 2, "max_score": 4, "evidence": "two warnings"},
        },
        detail={
            "ingest_problems": [
                IngestProblem(
                    file="trial.json",
                    field="error_tags[0]",
                    message="category: Field required",
                    raw=HOSTILE_RAW,
                ),
                IngestProblem(file="judge.json", message="efficiency: Field required"),
            ]
        },
    )


def test_ingestion_problems_are_listed_with_their_raw_part_escaped(client: Client) -> None:
    trial = _trial_with_problems()
    f.login(client, "rita", "reviewer")

    html = client.get(_url(trial)).content.decode()

    assert 'id="ingest-problems"' in html
    assert "error_tags[0]" in html
    assert "category: Field required" in html
    assert "efficiency: Field required" in html
    assert "whole file" in html
    assert HOSTILE_RAW not in html
    assert "&lt;script&gt;alert(&quot;raw&quot;)&lt;/script&gt;" in html


def test_a_trial_without_problems_shows_no_problems_card(client: Client, full_trial: Trial) -> None:
    f.login(client, "rita", "reviewer")
    assert 'id="ingest-problems"' not in client.get(_url(full_trial)).content.decode()


def test_unknown_scorer_types_and_error_sources_are_shown_as_unknown(client: Client) -> None:
    trial = _trial_with_problems()
    f.login(client, "rita", "reviewer")

    html = client.get(_url(trial)).content.decode()

    assert "Screenshot diff" in html
    assert "unknown type" in html
    assert "pipeline-v9" in html
    assert "unknown source" in html


def test_the_breakdown_is_shown_as_a_tree(client: Client) -> None:
    trial = _trial_with_problems()
    f.login(client, "rita", "reviewer")

    html = client.get(_url(trial)).content.decode()

    assert '<tr class="breakdown-group">' in html
    assert '<th scope="row" class="depth-2">parses</th>' in html
    assert '<th scope="row" class="depth-0">style</th>' in html
    assert "two warnings" in html


def test_the_judge_card_shows_the_rubric_version_and_request_settings_escaped(
    client: Client,
) -> None:
    f.login(client, "rita", "reviewer")
    asked = f.judge("PASS").model_copy(
        update={
            "rubric_version": "rubric-0123456789ab",
            "request_settings": {
                "temperature": 0,
                "response_format": "json_schema",
                "max_tokens": None,
                "endpoint": "<script>alert(1)</script>",
            },
        }
    )
    html = client.get(_url(f.make_trial(judges=[asked]))).content.decode()
    assert (
        '<p class="hint judge-request">Rubric <code>rubric-0123456789ab</code> · endpoint '
        "&lt;script&gt;alert(1)&lt;/script&gt; · max_tokens — · response_format json_schema"
        " · temperature 0</p>"
    ) in html
    assert "<script>alert(1)" not in html
    # An ingested verdict that does not say how it was asked shows no such line.
    plain = client.get(_url(f.make_trial(name="t-plain", judges=[f.judge("PASS")])))
    assert "judge-request" not in plain.content.decode()
