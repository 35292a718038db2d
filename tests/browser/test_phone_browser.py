"""A 390 px phone: navigation in a menu, filters behind a button, the key columns first."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from tests import review_factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


def _usable(locator: Any) -> bool:
    """Visible and inside the phone's width: a finger can reach it."""
    box = locator.bounding_box()
    return (
        locator.is_visible()
        and box is not None
        and box["x"] >= 0
        and box["x"] + box["width"] <= PHONE["width"]
    )


def _settles_usable(locator: Any, seconds: float = 5.0) -> bool:
    """`_usable` once the page has settled: asked again until it holds or `seconds` pass
    (htmx may still be swapping the results in and laying them out)."""
    deadline = time.monotonic() + seconds
    while not _usable(locator):
        if time.monotonic() > deadline:
            return False
        locator.page.wait_for_timeout(100)
    return True


def test_a_phone_finds_navigation_filters_and_the_reward_column_usable(
    browse: Callable[..., Any],
) -> None:
    f.make_trial(name="hello-world__aXy7Qz", agent="claude-code", reward=0.25)
    f.make_trial(name="hello-world__bK2mPq", agent="codex", reward=0.75)
    b = browse(f.make_user("rita", "reviewer"), **PHONE)
    b.goto("/")
    page = b.page
    # The page is the phone's width: nothing hides off to the side.
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    # Navigation: folded into the menu, which opens on a tap and leads to the jobs.
    jobs_link = page.get_by_role("link", name="Jobs", exact=True)
    assert not jobs_link.is_visible()
    menu = page.locator(".navmenu > summary")
    assert _usable(menu)
    menu.click()
    jobs_link.wait_for(state="visible")
    assert _usable(jobs_link)
    assert _usable(page.get_by_role("button", name="Log out"))
    menu.click()
    jobs_link.wait_for(state="hidden")

    # The key columns: the full trial names, the reward and the run; the rest folded away.
    for name in ("hello-world__aXy7Qz", "hello-world__bK2mPq"):
        assert _usable(page.get_by_role("link", name=name))
    assert _usable(page.locator("td.reward").first)
    assert _usable(page.locator("td.cell-run").first)
    assert not page.locator("td.cell-agent").first.is_visible()

    # Before the first trial: the filters' button, not the filters.
    agent = page.locator("#id_agent")
    assert not agent.is_visible()
    filters = page.locator(".filters-panel > summary")
    first_row = page.locator("td.cell-trial").first.bounding_box()
    assert filters.bounding_box()["y"] < first_row["y"] < PHONE["height"]
    filters.click()
    agent.wait_for(state="visible")
    assert _usable(agent)
    agent.fill("codex")
    page.get_by_role("button", name="Apply filters").click()
    page.locator('.filter-chip:has-text("codex")').wait_for()
    page.get_by_role("link", name="hello-world__aXy7Qz").wait_for(state="detached")
    # The field's change and the button's submit each swap the results: let both land.
    page.wait_for_load_state("networkidle")

    # The reward column's header sorts, by a tap.
    reward = page.locator("th a.sort", has_text="Reward")
    reward.wait_for(state="visible")  # the swapped-in header, once it has landed
    assert _settles_usable(reward)
    reward.click()
    page.wait_for_url("**sort=-reward**")
    assert b.problems == []
