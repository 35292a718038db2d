"""Keyboard review in a real browser: j / k walk the list, p / f / d judge, ? shows help."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from rewards.models import Trial
from tests import review_factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def reviewer() -> Any:
    return f.make_user("rita", "reviewer")


@pytest.fixture
def listed() -> list[Trial]:
    """Judge FAIL trials with distinct rewards, plus a PASS one the filter leaves out."""
    made = [
        f.make_trial(name=f"fail-{r}", reward=r, judges=[f.judge("FAIL")]) for r in (0.3, 0.8, 0.5)
    ]
    f.make_trial(name="pass-0.6", reward=0.6, judges=[f.judge("PASS")])
    return made


def _assert_clean(browsing: Any) -> None:
    assert browsing.dialogs == []
    assert browsing.problems == []


def _title(page: Any) -> str:
    return str(page.locator("main h1").inner_text())


def test_j_and_k_walk_the_filtered_list_and_keep_the_open_tab(
    browse: Callable[..., Any], reviewer: Any, listed: list[Trial]
) -> None:
    by_reward = {t.reward: t for t in listed}
    b = browse(reviewer)
    page = b.page
    # Opened from the explorer's row, the page knows its list: judge FAIL, reward descending.
    b.goto("/?judge_verdict=FAIL&sort=-reward")
    page.locator("#trial-rows a", has_text="fail-0.8").click()
    page.wait_for_url(re.compile(rf"/trials/{by_reward[0.8].pk}/\?judge_verdict=FAIL"))
    # Open a tab through htmx; the previous / next links follow it.
    page.locator("nav.tabs a", has_text="Workspace diff").click()
    page.wait_for_url(re.compile(r"tab=diff"))
    page.locator("#trial-nav a[rel='next'][href*='tab=diff']").wait_for()

    page.keyboard.press("j")
    page.wait_for_url(re.compile(rf"/trials/{by_reward[0.5].pk}/\?.*tab=diff"))
    assert _title(page) == "fail-0.5"
    assert page.locator("nav.tabs a[aria-current='page']").inner_text() == "Workspace diff"

    page.keyboard.press("j")
    page.wait_for_url(re.compile(rf"/trials/{by_reward[0.3].pk}/\?.*tab=diff"))
    assert _title(page) == "fail-0.3"
    # The last trial of the list: j does nothing, and the PASS trial is never reached.
    assert page.locator("#trial-nav a[rel='next']").count() == 0

    page.keyboard.press("k")
    page.wait_for_url(re.compile(rf"/trials/{by_reward[0.5].pk}/\?.*tab=diff"))
    page.keyboard.press("k")
    page.wait_for_url(re.compile(rf"/trials/{by_reward[0.8].pk}/\?.*tab=diff"))
    assert _title(page) == "fail-0.8"
    assert page.locator("nav.tabs a[aria-current='page']").inner_text() == "Workspace diff"
    _assert_clean(b)


def test_question_mark_opens_the_help_and_escape_closes_it(
    browse: Callable[..., Any], reviewer: Any, listed: list[Trial]
) -> None:
    b = browse(reviewer)
    page = b.page
    b.goto(f"/trials/{listed[0].pk}/")
    help_dialog = page.locator("#shortcuts")
    assert not help_dialog.is_visible()

    page.keyboard.press("?")
    help_dialog.wait_for(state="visible")
    text = help_dialog.inner_text()
    for line in ("Next trial", "Previous trial", "pass", "fail", "defer", "Search"):
        assert line in text
    page.keyboard.press("Escape")
    help_dialog.wait_for(state="hidden")

    # "?" toggles, and the topbar button opens it too.
    page.keyboard.press("?")
    help_dialog.wait_for(state="visible")
    page.keyboard.press("?")
    help_dialog.wait_for(state="hidden")
    page.locator("[data-shortcuts-toggle]").click()
    help_dialog.wait_for(state="visible")
    page.get_by_role("button", name="Close the shortcuts").click()
    help_dialog.wait_for(state="hidden")
    _assert_clean(b)


def test_p_f_d_pick_the_judgment(
    browse: Callable[..., Any], reviewer: Any, listed: list[Trial]
) -> None:
    b = browse(reviewer)
    page = b.page
    b.goto(f"/trials/{listed[0].pk}/")
    checked = "#annotations input[name='judgment']:checked"
    for key, value in (("p", "pass"), ("f", "fail"), ("d", "defer"), ("p", "pass")):
        page.keyboard.press(key)
        assert page.locator(checked).get_attribute("value") == value
    _assert_clean(b)


def test_keys_are_ignored_while_typing(
    browse: Callable[..., Any], reviewer: Any, listed: list[Trial]
) -> None:
    b = browse(reviewer)
    page = b.page
    url = f"/trials/{listed[1].pk}/"
    b.goto(url)
    page.locator("#id_notes").click()
    page.keyboard.type("just a fine pdf? jk")
    assert page.locator("#id_notes").input_value() == "just a fine pdf? jk"
    assert page.locator("#annotations input[name='judgment']:checked").count() == 0
    assert not page.locator("#shortcuts").is_visible()
    assert page.url.endswith(url)
    _assert_clean(b)


def test_slash_focuses_the_explorer_search(
    browse: Callable[..., Any], reviewer: Any, listed: list[Trial]
) -> None:
    b = browse(reviewer)
    page = b.page
    b.goto("/")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "id_q"
    _assert_clean(b)


def test_the_queue_hands_out_a_trial_and_next_in_queue_follows_an_annotation(
    browse: Callable[..., Any], reviewer: Any, listed: list[Trial]
) -> None:
    b = browse(reviewer)
    page = b.page
    b.goto("/queue/?judge_verdict=FAIL")
    page.get_by_role("button", name="Start reviewing →").click()
    page.wait_for_url(re.compile(r"/trials/\d+/\?judge_verdict=FAIL&queue=1"))
    first = page.url
    page.keyboard.press("f")
    page.get_by_role("button", name="Save annotation").click()
    page.get_by_text("Annotation saved.").wait_for()
    # The queue bar was swapped out of band: the trial is reviewed, the next one is offered.
    page.locator("#queue-bar.queue-bar-done").wait_for()
    page.locator("#annotations").get_by_role("button", name="Next in queue →").click()
    page.wait_for_url(re.compile(r"/trials/\d+/\?judge_verdict=FAIL&queue=1"))
    assert page.url != first
    _assert_clean(b)


def test_the_saved_views_menu_loads_when_opened_and_opens_a_view(
    browse: Callable[..., Any], reviewer: Any, listed: list[Trial]
) -> None:
    from review.models import SavedView

    SavedView.objects.create(
        owner=reviewer, name="Only failures", query_string="judge_verdict=FAIL"
    )
    b = browse(reviewer)
    page = b.page
    b.goto("/")
    page.locator(".views-menu summary").click()
    page.locator(".view-menu a", has_text="Only failures").click()
    page.wait_for_url(re.compile(r"/\?judge_verdict=FAIL$"))
    assert "pass-0.6" not in page.locator("#trial-rows").inner_text()
    _assert_clean(b)
