"""Step comments: a reviewer's note on a step of a trajectory or on a range of its text,
append-only, shown beside its step with the range highlighted, listed in the annotations
panel, hidden in blind review until the reviewer has submitted."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.template.loader import render_to_string
from django.test import Client

from review.models import (
    AppendOnlyError,
    CommentTarget,
    CommentTargetError,
    StepComment,
    add_annotation,
    add_step_comment,
    resolve_target,
)
from review.pages import steps
from review.pages.highlight import Range, Segment, highlight
from rewards.models import Trial
from tests import review_factories as f
from tests.conftest import purge_review_data
from tests.test_api import call, make_token

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}

TRAJECTORY = {
    "steps": [
        {"source": "user", "message": "Compute the voltage drop."},
        {
            "source": "agent",
            "message": "Running it twice: run, run.",
            "tool_calls": [
                {"function_name": "exec", "arguments": "ls"},
                {"function_name": "exec", "arguments": "pytest -q"},
            ],
            "observation": "14 passed",
        },
    ]
}


def _trial(name: str = "t-comments", trajectory: Any = None) -> Trial:
    return f.make_trial(name=name, detail={"trajectory": trajectory or TRAJECTORY})


def _post(client: Client, trial: Trial, headers: dict[str, str] | None = None, **data: Any) -> Any:
    return client.post(f"/trials/{trial.pk}/comments/?tab=trajectory", data, headers=headers)


# --- the highlight helper ----------------------------------------------------------------------
def test_highlight_cuts_the_text_at_every_range_and_names_overlaps_once() -> None:
    segments = highlight("abcdefgh", [Range(2, 5, "c-1", "one"), Range(4, 7, "c-2")])
    assert segments == [
        Segment("ab"),
        Segment("cd", ("c-1",), ("one",)),
        Segment("e", ("c-1", "c-2"), ("one",)),
        Segment("fg", ("c-2",)),
        Segment("h"),
    ]
    assert "".join(s.text for s in segments) == "abcdefgh"


def test_highlight_clamps_ranges_to_the_shown_text_and_drops_empty_ones() -> None:
    assert highlight("abc", [Range(2, 99, "c-1"), Range(5, 9, "c-2"), Range(1, 1, "c-3")]) == [
        Segment("ab"),
        Segment("c", ("c-1",)),
    ]
    assert highlight("abc", []) == [Segment("abc")]


def test_highlighted_text_is_escaped_inside_and_outside_the_mark() -> None:
    text = "<b>x</b> then <script>alert(1)</script>"
    html = render_to_string(
        "review/includes/highlighted_text.html",
        {"segments": highlight(text, [Range(14, len(text), "comment-1", '"><img>')])},
    )
    assert "<script>" not in html
    assert "<b>" not in html
    assert '<mark class="range-mark" data-refs="comment-1" title="&quot;&gt;&lt;img&gt;">' in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;</mark>" in html


# --- the target: step, part, range ------------------------------------------------------------
def test_a_quote_at_its_range_is_kept_and_one_elsewhere_moves_the_range_to_it() -> None:
    target = CommentTarget(step=2, part="message", start=18, end=21, quote="run")
    assert resolve_target(TRAJECTORY, target) == CommentTarget(2, "message", 0, 18, 21, "run")
    # The browser counted in the rendered text: the occurrence nearest its offset wins.
    moved = resolve_target(TRAJECTORY, CommentTarget(step=2, part="message", start=22, quote="run"))
    assert (moved.start, moved.end) == (23, 26)
    # The second tool call of the step, by its index among tool calls.
    call = resolve_target(TRAJECTORY, CommentTarget(2, "tool_call", 1, 0, 6, "pytest"))
    assert (call.start, call.end, call.quote) == (0, 6, "pytest")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (CommentTarget(3, "message"), "no step 3"),
        (CommentTarget(1, "observation"), "no such observation"),
        (CommentTarget(2, "tool_call", 2), "no such tool call"),
        (CommentTarget(2, "observation", quote="15 passed"), "not in that part"),
        (CommentTarget(2, "observation", start=3, end=99), "outside"),
    ],
)
def test_a_target_not_in_the_trajectory_is_refused(target: CommentTarget, message: str) -> None:
    with pytest.raises(CommentTargetError, match=message):
        resolve_target(TRAJECTORY, target)


def test_a_range_without_a_quote_takes_its_quote_from_the_stored_text() -> None:
    resolved = resolve_target(TRAJECTORY, CommentTarget(2, "observation", start=0, end=2))
    assert resolved.quote == "14"


# --- append-only --------------------------------------------------------------------------------
def test_step_comments_are_append_only_in_code_and_in_the_database() -> None:
    trial = _trial()
    rita = f.make_user("rita", "reviewer")
    comment = add_step_comment(
        trial_id=trial.pk, author=rita, target=CommentTarget(2, "observation"), text="ok"
    )
    comment.text = "changed"
    with pytest.raises(AppendOnlyError):
        comment.save()
    with pytest.raises(AppendOnlyError):
        comment.delete()
    with pytest.raises(AppendOnlyError):
        StepComment.objects.filter(pk=comment.pk).update(text="x")
    with pytest.raises(AppendOnlyError):
        StepComment.objects.all().delete()
    table = StepComment._meta.db_table
    for sql in (f"UPDATE {table} SET text = 'x'", f"DELETE FROM {table}"):  # noqa: S608
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql)
    assert StepComment.objects.get().text == "ok"


def test_a_correction_is_a_newer_comment_and_the_older_one_leaves_the_step() -> None:
    trial = _trial()
    rita = f.make_user("rita", "reviewer")
    target = CommentTarget(2, "observation", start=0, end=2)
    first = add_step_comment(trial_id=trial.pk, author=rita, target=target, text="wrong")
    add_step_comment(trial_id=trial.pk, author=rita, target=target, text="right", supersedes=first)
    client = Client()
    client.force_login(rita)
    html = client.get(f"/trials/{trial.pk}/").content.decode()
    step = html.split('id="step-2"')[1].split('id="annotations"')[0]
    assert "right" in step
    assert "wrong" not in step
    panel = html.split('id="annotations"')[1]
    assert "wrong" in panel
    assert "Corrected by a newer comment." in panel


# --- the page ---------------------------------------------------------------------------------
def test_a_reviewer_comments_on_a_range_and_finds_it_highlighted_beside_its_step(
    client: Client,
) -> None:
    trial = _trial()
    rita = f.login(client, "rita", "reviewer")
    response = _post(
        client,
        trial,
        step="2",
        part="observation",
        start="0",
        end="2",
        quote="14",
        text="Only <em>14</em>?",
    )
    assert response.status_code == 302
    assert response["Location"].endswith("#step-2")
    assert "tab=trajectory" in response["Location"]
    comment = StepComment.objects.get()
    assert (comment.author, comment.step, comment.part, comment.start, comment.end) == (
        rita,
        2,
        "observation",
        0,
        2,
    )
    html = client.get(response["Location"]).content.decode()
    assert 'id="step-1"' in html
    assert 'id="step-2"' in html
    assert f'<mark class="range-mark" data-refs="comment-{comment.pk}"' in html
    assert "14</mark> passed" in html
    assert f'id="comment-{comment.pk}"' in html
    assert "Only &lt;em&gt;14&lt;/em&gt;?" in html
    assert "<em>14</em>" not in html
    # Listed in the annotations panel, linked to its step.
    panel = html.split('id="annotations"')[1]
    assert "Only &lt;em&gt;14&lt;/em&gt;?" in panel
    assert 'tab=trajectory#step-2"' in panel


def test_a_comment_with_htmx_returns_the_trajectory_tab_and_the_panel(client: Client) -> None:
    trial = _trial()
    f.login(client, "rita", "reviewer")
    response = _post(
        client, trial, headers=HX, step="2", part="tool_call", part_index="1", text="why?"
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert f.is_fragment(html)
    assert html.lstrip().startswith('<section id="tabs"')
    assert '<section id="annotations"' in html
    assert 'hx-swap-oob="true"' in html
    assert StepComment.objects.get().part_index == 1


def test_a_quote_that_is_not_in_the_step_is_refused_and_nothing_is_stored(
    client: Client,
) -> None:
    trial = _trial()
    f.login(client, "rita", "reviewer")
    response = _post(client, trial, step="2", part="observation", quote="99 failed", text="x")
    assert response.status_code == 400
    assert "The selected text is not in that part of the step." in response.content.decode()
    assert not StepComment.objects.exists()
    fragment = _post(client, trial, headers=HX, step="9", part="message", text="x")
    assert "The trajectory has no step 9." in fragment.content.decode()
    assert not StepComment.objects.exists()


def test_commenting_needs_a_login_a_reviewer_role_and_a_post(client: Client) -> None:
    trial = _trial()
    url = f"/trials/{trial.pk}/comments/"
    data = {"step": "1", "part": "message", "text": "x"}
    assert client.post(url, data).status_code == 302  # to the login page
    f.login(client, "ann", "analyst")
    assert client.post(url, data).status_code == 403
    assert "Comment on a step" not in client.get(f"/trials/{trial.pk}/").content.decode()
    f.login(client, "rita", "reviewer")
    assert client.get(url).status_code == 405
    assert not StepComment.objects.exists()


def test_a_chunk_of_steps_needs_a_login_a_browsing_role_and_a_get(client: Client) -> None:
    trial = _trial()
    url = f"/trials/{trial.pk}/steps/?at=1"
    assert client.get(url).status_code == 302  # to the login page
    f.login(client, "nobody")
    assert client.get(url).status_code == 403
    f.login(client, "ann", "analyst")
    chunk = client.get(url).content.decode()
    assert 'id="step-2"' in chunk
    assert "step-comment-link" not in chunk  # an analyst does not comment
    assert client.post(url).status_code == 405
    assert client.get(f"/trials/{trial.pk + 1000}/steps/").status_code == 404


def test_another_trials_comment_cannot_be_superseded(client: Client) -> None:
    trial, other = _trial("t-a"), _trial("t-b")
    rita = f.login(client, "rita", "reviewer")
    elsewhere = add_step_comment(
        trial_id=other.pk, author=rita, target=CommentTarget(1, "message"), text="there"
    )
    response = _post(
        client, trial, step="1", part="message", text="x", supersedes=str(elsewhere.pk)
    )
    assert response.status_code == 400
    assert StepComment.objects.count() == 1


def test_a_reviewer_corrects_only_their_own_comments(client: Client) -> None:
    trial = _trial()
    otto = f.make_user("otto", "reviewer")
    theirs = add_step_comment(
        trial_id=trial.pk, author=otto, target=CommentTarget(1, "message"), text="otto's"
    )
    rita = f.login(client, "rita", "reviewer")
    refused = _post(client, trial, step="1", part="message", text="x", supersedes=str(theirs.pk))
    assert refused.status_code == 400
    assert "You can correct only your own comments" in refused.content.decode()
    mine = add_step_comment(
        trial_id=trial.pk,
        author=rita,
        target=CommentTarget(2, "observation", quote="passed"),
        text="mine",
    )
    html = client.get(f"/trials/{trial.pk}/").content.decode()
    # "Correct" on the reviewer's own comment only.
    assert f'data-correct="{mine.pk}"' in html
    assert f'data-correct="{theirs.pk}"' not in html
    # Without JavaScript, its link opens the form aimed where the comment is.
    html = client.get(f"/trials/{trial.pk}/?tab=trajectory&correct={mine.pk}").content.decode()
    form = html.split('id="step-comment"')[1]
    assert 'name="step" value="2"' in form
    assert f'name="supersedes" value="{mine.pk}"' in form
    assert 'name="quote" value="passed"' in form
    assert "Correcting your comment" in form
    fixed = _post(
        client,
        trial,
        step="2",
        part="observation",
        quote="passed",
        start="3",
        text="fixed",
        supersedes=str(mine.pk),
    )
    assert fixed.status_code == 302
    assert StepComment.objects.get(text="fixed").supersedes == mine


def test_a_steps_comment_link_opens_the_form_on_that_step_without_javascript(
    client: Client,
) -> None:
    trial = _trial()
    f.login(client, "rita", "reviewer")
    html = client.get(f"/trials/{trial.pk}/").content.decode()
    assert "comment_step=2#step-comment" in html
    html = client.get(f"/trials/{trial.pk}/?tab=trajectory&comment_step=2").content.decode()
    assert 'name="step" value="2"' in html


def test_a_2000_step_trajectory_with_20_comments_reads_the_same_queries_as_a_bare_one(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    steps = [{"source": "agent", "message": f"step {i} says hello"} for i in range(2000)]
    long = _trial("t-long", {"steps": steps})
    bare = _trial("t-bare")
    rita = f.login(client, "rita", "reviewer")
    for i in range(20):
        add_step_comment(
            trial_id=long.pk,
            author=f.make_user(f"r{i}", "reviewer") if i % 2 else rita,
            # Steps 1, 2, 3, then 98, 195, … 1747.
            target=CommentTarget(i + 1 if i < 3 else i * 97 + 1, "message", quote="hello"),
            text=f"comment {i}",
        )
    for trial in (long, bare):
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass")
    # 1 the user, 2 their role groups, 3 the trial with its trajectory (its steps then
    # presented and kept), 4 results, 5 the step comments with their authors (one query
    # for the steps and the panel alike), 6 scorers, 7 judge verdicts, 8 annotations with
    # their reviewers, 9 the reviewer's discipline, 10 adjudications.
    with django_assert_num_queries(10):
        first = client.get(f"/trials/{long.pk}/").content.decode()
    # Later views: the roles, the presented steps and the cards are kept: neither the
    # trajectory nor results, scorers and verdicts are read.
    with django_assert_num_queries(6) as queries:
        html = client.get(f"/trials/{long.pk}/").content.decode()
    assert not any("trajectory" in q["sql"] for q in queries.captured_queries)
    assert html.count('class="step ') == first.count('class="step ') == 50
    # The first screen is the first chunk of steps, its three comments highlighted; the
    # panel lists all 20; the next chunk is one link (htmx loads it when reached).
    assert 'id="step-50"' in html
    assert 'id="step-51"' not in html
    assert html.count('class="range-mark"') == 3
    assert html.count("data-step-link=") == 20
    assert "Steps 51\N{EN DASH}100 of 2000" in html
    assert f'hx-get="/trials/{long.pk}/steps/?tab=trajectory&amp;at=51"' in html
    # The same as the bare trial's, its steps kept since its first view.
    client.get(f"/trials/{bare.pk}/")
    with django_assert_num_queries(6):
        client.get(f"/trials/{bare.pk}/")
    # The trajectory tab alone: 1 the user, 2 the trial, 3 the comments.
    with django_assert_num_queries(3):
        fragment = client.get(f"/trials/{long.pk}/?tab=trajectory", headers=HX)
    assert fragment.content.decode().count('class="range-mark"') == 3
    # A later chunk, as htmx loads it: its steps, its comment and the link to the next.
    with django_assert_num_queries(3):
        chunk = client.get(f"/trials/{long.pk}/steps/?tab=trajectory&at=1701").content.decode()
    assert chunk.lstrip().startswith('<li class="step')
    assert 'id="step-1701"' in chunk
    assert 'id="step-1750"' in chunk
    assert 'id="step-1751"' not in chunk
    assert chunk.count('class="range-mark"') == 1  # comment 18, on step 1747
    assert "Steps 1751\N{EN DASH}1800 of 2000" in chunk
    # The page opened at a step (a deep link past the first chunk): the chunk holding it.
    at = client.get(f"/trials/{long.pk}/?at=1747").content.decode()
    assert 'id="step-1747"' in at
    assert 'id="step-1700"' not in at
    assert "Steps 1651\N{EN DASH}1700" in at  # the previous chunk, a plain link


def test_a_new_comment_shows_on_the_kept_chunk_of_steps(client: Client) -> None:
    """The chunk's rendered steps are kept under its comments: a new one is another key."""
    steps = [{"source": "agent", "message": f"step {i} says hello"} for i in range(120)]
    trial = _trial("t-kept", {"steps": steps})
    f.login(client, "rita", "reviewer")
    url = f"/trials/{trial.pk}/?tab=trajectory&at=60"
    assert 'class="range-mark"' not in client.get(url).content.decode()
    assert (
        _post(client, trial, step=60, part="message", text="Seen.", quote="hello").status_code
        == 302
    )
    html = client.get(url).content.decode()
    assert html.count('class="range-mark"') == 1
    assert "Seen." in html
    # A trial stored again is presented again: its steps are another key.
    Trial.objects.filter(pk=trial.pk).update(content_digest="stored-again")
    assert 'id="step-60"' in client.get(url).content.decode()


def test_a_comment_past_the_first_chunk_redirects_to_its_chunk(client: Client) -> None:
    steps = [{"source": "agent", "message": f"step {i} says hello"} for i in range(120)]
    trial = _trial("t-far", {"steps": steps})
    f.login(client, "rita", "reviewer")
    response = _post(client, trial, step=101, part="message", text="Far.")
    assert response.status_code == 302
    assert "at=101" in response["Location"]
    assert response["Location"].endswith("#step-101")
    assert "Far." in client.get(response["Location"]).content.decode()
    # With htmx: the tab comes back on the chunk holding the step.
    fragment = _post(client, trial, HX, step=102, part="message", text="Farther.")
    assert 'id="step-102"' in fragment.content.decode()
    assert "Farther." in fragment.content.decode()


# --- blind review -----------------------------------------------------------------------------
def test_blind_review_takes_comments_and_shows_none_of_another_reviewers(client: Client) -> None:
    trial = _trial()
    otto = f.make_user("otto", "reviewer")
    add_step_comment(
        trial_id=trial.pk, author=otto, target=CommentTarget(2, "message"), text="OTTO-NOTE"
    )
    f.login(client, "rita", "reviewer")
    url = f"/trials/{trial.pk}/blind/"
    html = client.get(url).content.decode()
    assert "OTTO-NOTE" not in html
    assert 'id="step-2"' in html
    assert "Comment on a step" in html

    response = client.post(
        f"{url}comments/",
        {"step": "2", "part": "observation", "quote": "passed", "start": "3", "text": "MINE"},
    )
    assert response.status_code == 302
    assert response["Location"].startswith(url)
    assert response["Location"].endswith("#step-2")
    html = client.get(url).content.decode()
    assert "MINE" in html
    assert "OTTO-NOTE" not in html
    assert "passed</mark>" in html
    refused = client.post(f"{url}comments/", {"step": "7", "part": "message", "text": "x"})
    assert refused.status_code == 400
    assert "OTTO-NOTE" not in refused.content.decode()

    # Once submitted, the trial page shows everyone's.
    client.post(url, {"judgment": "pass"})
    revealed = client.get(f"/trials/{trial.pk}/").content.decode()
    assert "OTTO-NOTE" in revealed
    assert "MINE" in revealed


def blind_long_trial() -> Trial:
    """120 steps, a reward, a judge's verdict and another reviewer's comment past the first
    chunk: what blind review hides, and what its chunks must hide too."""
    steps = [{"source": "agent", "message": f"step {i} says hello"} for i in range(120)]
    trial = f.make_trial(
        name="t-blind-long",
        reward=0.731,
        judges=[f.judge("FAIL", reasoning="SECRET-JUDGE-REASONING")],
        detail={"trajectory": {"steps": steps}},
    )
    otto = f.make_user("otto", "reviewer")
    add_step_comment(
        trial_id=trial.pk, author=otto, target=CommentTarget(60, "message"), text="OTTO-NOTE"
    )
    return trial


BLIND_SECRETS = ("0.731", "SECRET-JUDGE-REASONING", "OTTO-NOTE")


def test_blind_review_shows_the_trajectory_a_chunk_at_a_time_hiding_the_same(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    trial = blind_long_trial()
    rita = f.login(client, "rita", "reviewer")
    add_step_comment(
        trial_id=trial.pk, author=rita, target=CommentTarget(75, "message"), text="MINE-75"
    )
    page = client.get(f"/trials/{trial.pk}/blind/?blind=1").content.decode()
    assert page.count('class="step ') == 50
    assert 'id="step-50"' in page
    assert 'id="step-51"' not in page
    assert "120 steps" in page
    assert "Steps 51\N{EN DASH}100 of 120" in page
    chunk_url = f"/trials/{trial.pk}/blind/steps/?blind=1&queue=1&at=51"
    assert f'hx-get="{chunk_url.replace("&", "&amp;")}"' in page
    for secret in BLIND_SECRETS:
        assert secret not in page

    # The next chunk, as htmx loads it: the steps, the reviewer's own comment, the link on;
    # no other reviewer's comment, nothing the blind page hides. Its steps (and the roles)
    # are kept since the page: 1 the user, 2 the blind record, 3 their own comments.
    with django_assert_num_queries(3) as queries:
        chunk = client.get(chunk_url).content.decode()
    assert not any("trajectory" in q["sql"] for q in queries.captured_queries)
    assert chunk.lstrip().startswith('<li class="step')
    assert 'id="step-51"' in chunk
    assert 'id="step-100"' in chunk
    assert 'id="step-101"' not in chunk
    assert "MINE-75" in chunk
    assert "Steps 101\N{EN DASH}120 of 120" in chunk
    assert f"/trials/{trial.pk}/blind/steps/?blind=1&amp;queue=1&amp;at=101" in chunk
    assert "comment_step=60#step-comment" in chunk  # each step links to the blind form
    for secret in BLIND_SECRETS:
        assert secret not in chunk
    last = client.get(f"/trials/{trial.pk}/blind/steps/?at=101").content.decode()
    assert 'id="step-120"' in last
    assert "steps-more" not in last
    # The page's fixed number (test_blind_review), the roles kept, the trajectory not read.
    with django_assert_num_queries(6) as queries:
        client.get(f"/trials/{trial.pk}/blind/")
    assert not any("trajectory" in q["sql"] for q in queries.captured_queries)


def test_a_blind_comment_past_the_first_chunk_comes_back_on_its_chunk(client: Client) -> None:
    trial = blind_long_trial()
    f.login(client, "rita", "reviewer")
    url = f"/trials/{trial.pk}/blind/"
    response = client.post(f"{url}comments/", {"step": "101", "part": "message", "text": "FAR"})
    assert response.status_code == 302
    assert "at=101" in response["Location"]
    assert response["Location"].endswith("#step-101")
    html = client.get(response["Location"]).content.decode()
    assert 'id="step-101"' in html
    assert "FAR" in html
    assert "Steps 51\N{EN DASH}100" in html  # the previous chunk, a plain link
    # The comment form opened on a step shows that step's chunk.
    html = client.get(f"{url}?comment_step=70").content.decode()
    assert 'id="step-70"' in html
    assert 'name="step" value="70"' in html
    for secret in BLIND_SECRETS:
        assert secret not in html


def test_a_blind_chunk_needs_a_login_an_annotating_role_and_a_get(client: Client) -> None:
    trial = _trial()
    url = f"/trials/{trial.pk}/blind/steps/?at=1"
    assert client.get(url).status_code == 302  # to the login page
    f.login(client, "ann", "analyst")
    assert client.get(url).status_code == 403  # blind review is a reviewer's
    f.login(client, "rita", "reviewer")
    assert 'id="step-2"' in client.get(url).content.decode()
    assert client.post(url).status_code == 405
    assert client.get(f"/trials/{trial.pk + 1000}/blind/steps/").status_code == 404


# --- bundles, exports, the API ----------------------------------------------------------------
def _two_comments(trial: Trial) -> tuple[StepComment, StepComment]:
    rita = f.make_user("rita", "reviewer")
    first = add_step_comment(
        trial_id=trial.pk,
        author=rita,
        target=CommentTarget(2, "observation", start=0, end=2),
        text='=HYPERLINK("x") <b>',
    )
    second = add_step_comment(
        trial_id=trial.pk,
        author=rita,
        target=CommentTarget(2, "tool_call", 1, quote="pytest"),
        text="corrected",
        supersedes=first,
    )
    return first, second


def test_step_comments_survive_export_and_ingest_into_an_empty_database(
    tmp_path: Path,
) -> None:
    trial = _trial()
    first, second = _two_comments(trial)
    exported = tmp_path / "first.jsonl"
    call_command("export", format="jsonl", output=str(exported), verbosity=0)
    line = json.loads(exported.read_text())
    assert [c["uid"] for c in line["step_comments"]] == [str(first.uid), str(second.uid)]
    assert line["step_comments"][1]["supersedes"] == str(first.uid)

    purge_review_data()
    User.objects.filter(username="rita").delete()
    assert not StepComment.objects.exists()
    call_command("ingest", str(exported), verbosity=0)
    again = tmp_path / "second.jsonl"
    call_command("export", format="jsonl", output=str(again), verbosity=0)
    assert again.read_bytes() == exported.read_bytes()
    back = StepComment.objects.get(uid=second.uid)
    assert back.supersedes is not None
    assert back.supersedes.uid == first.uid
    assert (back.part, back.part_index, back.start, back.end) == ("tool_call", 1, 0, 6)
    assert not back.author.is_active  # an author we did not know comes back inactive
    # Ingesting the same file again stores nothing twice.
    call_command("ingest", str(exported), verbosity=0)
    assert StepComment.objects.count() == 2


def test_the_comments_csv_has_one_neutralised_row_per_comment(client: Client) -> None:
    trial = _trial()
    first, second = _two_comments(trial)
    f.login(client, "ann", "analyst")
    response = client.get("/export/comments.csv")
    assert response.status_code == 200
    body = b"".join(response.streaming_content)  # type: ignore[attr-defined]
    rows = list(csv.DictReader(io.StringIO(body.decode())))
    assert [r["comment_uid"] for r in rows] == [str(first.uid), str(second.uid)]
    assert rows[0]["text"] == '\'=HYPERLINK("x") <b>'
    assert (rows[0]["step"], rows[0]["part"], rows[0]["start"], rows[0]["end"]) == (
        "2",
        "observation",
        "0",
        "2",
    )
    assert rows[1]["supersedes"] == str(first.uid)
    assert rows[1]["quote"] == "pytest"


def test_the_api_lists_and_adds_step_comments_checked_like_the_page(client: Client) -> None:
    trial = _trial()
    first, _ = _two_comments(trial)
    token = make_token("rita2", "reviewer")
    listed = call(client, "get", f"/api/trials/{trial.pk}/comments", token).json()
    assert [c["text"] for c in listed] == ['=HYPERLINK("x") <b>', "corrected"]
    assert listed[1]["supersedes"] == str(first.uid)

    body = {"step": 2, "part": "message", "quote": "run", "start": 22, "text": "twice?"}
    created = call(client, "post", f"/api/trials/{trial.pk}/comments", token, body)
    assert created.status_code == 201
    assert (created.json()["author"], created.json()["start"]) == ("rita2", 23)
    refused = call(
        client, "post", f"/api/trials/{trial.pk}/comments", token, {**body, "quote": "walk"}
    )
    assert refused.status_code == 422
    assert "not in that part" in refused.text
    analyst = make_token("ann", "analyst")
    assert (
        call(client, "post", f"/api/trials/{trial.pk}/comments", analyst, body).status_code == 403
    )
    bundle = call(client, "get", f"/api/trials/{trial.pk}", analyst).json()["bundle"]
    assert len(bundle["step_comments"]) == 3


def test_a_running_trials_steps_are_read_anew_on_every_view(client: Client) -> None:
    """Its trajectory grows: its presented steps are never kept."""
    trial = f.make_trial(name="t-running", status="running", detail={"trajectory": TRAJECTORY})
    f.login(client, "ann", "analyst")
    assert 'id="step-2"' in client.get(f"/trials/{trial.pk}/").content.decode()
    assert steps.kept_head(trial.pk) is None
    finished = _trial("t-finished")
    client.get(f"/trials/{finished.pk}/")
    head = steps.kept_head(finished.pk)
    assert head is not None
    assert head.total_steps == 2
