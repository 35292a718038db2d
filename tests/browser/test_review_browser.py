"""What only a browser shows: htmx swaps without reloads, history, and inert hostile text."""

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


def _assert_clean(browsing: Any) -> None:
    assert browsing.dialogs == []
    assert browsing.problems == []


def test_expanding_a_scorer_row_shows_its_detail_without_a_reload(
    browse: Callable[..., Any], reviewer: Any
) -> None:
    trial = f.make_trial(
        scorers=[
            f.scorer("tests", verdict="PASS", output_tail="===== 3 passed in 0.12s ====="),
            f.scorer("scope", "forbid_paths", "FAIL", detail="touched .github/workflows"),
        ]
    )
    b = browse(reviewer)
    b.goto(f"/trials/{trial.pk}/")
    page = b.page
    toggle = page.locator("#scorer-0 a.toggle")
    assert toggle.get_attribute("aria-expanded") == "false"
    # The hard failure starts open.
    assert page.locator("#scorer-1 a.toggle").get_attribute("aria-expanded") == "true"
    assert page.get_by_text("touched .github/workflows").is_visible()
    b.mark_document()

    toggle.click()
    page.get_by_text("3 passed in 0.12s").wait_for()
    assert page.locator("#scorer-0 a.toggle").get_attribute("aria-expanded") == "true"
    assert b.same_document()
    assert page.url.endswith(f"/trials/{trial.pk}/")

    page.locator("#scorer-0 a.toggle").click()
    page.get_by_text("3 passed in 0.12s").wait_for(state="detached")
    assert page.locator("#scorer-0 a.toggle").get_attribute("aria-expanded") == "false"
    assert b.same_document()
    _assert_clean(b)


def test_annotating_updates_the_history_and_the_human_gate_without_a_reload(
    browse: Callable[..., Any], reviewer: Any
) -> None:
    trial = f.make_trial(reward=0.9)
    b = browse(reviewer)
    b.goto(f"/trials/{trial.pk}/")
    page = b.page
    assert "unreviewed" in page.locator("#human-gate").inner_text()
    b.mark_document()

    page.locator("label.judgment-fail").click()
    page.fill("#id_categories", "unit mismatch")
    page.fill("#id_notes", "Reported mV as V.")
    page.get_by_role("button", name="Save annotation").click()
    page.get_by_text("Annotation saved.").wait_for()

    history = page.locator("#annotations .history")
    assert "Reported mV as V." in history.inner_text()
    assert "unit mismatch" in history.inner_text()
    gate = page.locator("#human-gate").inner_text()
    assert "fail" in gate
    assert "Human fail, automated pass" in gate
    assert b.same_document()
    # The form is fresh for the next judgment.
    assert page.locator("#id_notes").input_value() == ""
    _assert_clean(b)


def test_a_filter_pushes_the_url_and_the_back_button_restores_the_list(
    browse: Callable[..., Any], reviewer: Any
) -> None:
    f.make_trial(name="t-pass", judges=[f.judge("PASS")])
    f.make_trial(name="t-fail", judges=[f.judge("FAIL")])
    b = browse(reviewer)
    b.goto("/")
    page = b.page
    rows = page.locator("#trial-rows td.cell-trial a")  # each trial's name
    assert sorted(rows.all_inner_texts()) == ["t-fail", "t-pass"]

    page.select_option("#id_judge_verdict", "FAIL")
    page.wait_for_url(re.compile(r"judge_verdict=FAIL"))
    page.locator("#trial-rows", has_not_text="t-pass").wait_for()
    assert rows.all_inner_texts() == ["t-fail"]

    page.go_back()
    page.wait_for_url(re.compile(r"/$"))
    page.get_by_text("t-pass").wait_for()
    assert len(rows.all_inner_texts()) == 2
    assert page.locator("#id_judge_verdict").input_value() == ""
    _assert_clean(b)


def test_scrolling_to_the_end_loads_the_next_rows(
    browse: Callable[..., Any], reviewer: Any
) -> None:
    f.make_trials(55)
    b = browse(reviewer)
    b.goto("/")
    page = b.page
    assert page.locator("#trial-rows td.cell-trial").count() == 50
    page.locator("tr.more-row").scroll_into_view_if_needed()
    page.get_by_text("End of the list.").wait_for()
    assert page.locator("#trial-rows td.cell-trial").count() == 55
    _assert_clean(b)


def test_a_tab_loads_on_demand_and_keeps_its_own_url(
    browse: Callable[..., Any], reviewer: Any
) -> None:
    trial = f.make_trial()
    b = browse(reviewer)
    b.goto(f"/trials/{trial.pk}/")
    page = b.page
    b.mark_document()
    page.locator("nav.tabs a", has_text="Workspace diff").click()
    page.locator(".dl-add").first.wait_for()
    page.wait_for_url(re.compile(r"\?tab=diff$"))
    assert b.same_document()
    _assert_clean(b)


def test_hostile_text_stays_inert_everywhere_it_is_shown(
    browse: Callable[..., Any], reviewer: Any
) -> None:
    trial: Trial = f.write(f.hostile_bundle())[0]
    b = browse(reviewer)
    page = b.page
    for path in ("/", "/?q=script", f"/trials/{trial.pk}/", "/jobs/", f"/jobs/{trial.job_id}/"):
        b.goto(path)
        page.wait_for_load_state("networkidle")
        assert page.evaluate("typeof window.__pwned") == "undefined", path
        assert page.locator("main img, main iframe, main script").count() == 0, path
    b.goto(f"/trials/{trial.pk}/")
    # Expand every scorer and open every tab through htmx: swapped content is inert too.
    for index in range(2):
        row = page.locator(f"#scorer-{index} a.toggle")
        if row.get_attribute("aria-expanded") == "false":
            row.click()
            page.locator(f"#scorer-{index} .scorer-detail:not([hidden])").wait_for()
    for tab in ("Workspace diff", "Command output", "Verifier", "Trajectory"):
        page.locator("nav.tabs a", has_text=tab).click()
        page.locator("nav.tabs a[aria-current='page']", has_text=tab).wait_for()
    page.locator("label.judgment-fail").click()
    page.fill("#id_notes", f.HOSTILE)
    page.get_by_role("button", name="Save annotation").click()
    page.get_by_text("Annotation saved.").wait_for()
    page.mouse.move(300, 300)
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("main img, main iframe, main script").count() == 0
    assert page.get_by_text('<script>window.__pwned=1;alert("xss")</script>').first.is_visible()
    _assert_clean(b)
