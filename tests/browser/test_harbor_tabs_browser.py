"""A Harbor trial of each kind in a browser: each tab opens through htmx and shows its part
of the trial folder; colour and markdown render, the raw toggle shows the text as stored,
and the hostile text in the logs stays inert."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rewards.models import Trial
from tests import review_factories as f
from tests.harbor_desk import ingest_desk, trial_name

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# kind -> [(tab label, text that tab shows)]
EXPECTED = {
    "trajectory": [
        ("Trajectory", "Wrote 58 bytes to /app/report/weather.md"),
        ("Verifier logs", "1 failed, 1 passed"),
        ("Trial log", "verifier done"),
    ],
    "logs-only": [
        ("Trajectory", "No trajectory was recorded for this trial"),
        ("Agent logs", "I will list the repository, then fix the failing parser."),
        ("Agent logs", "ALL CHECKS PASSED"),
        ("Trial log", "agent exited with code 0"),
    ],
    "timeout": [
        ("Exception", "raise AgentTimeoutError(message) from exc"),
        ("Agent logs", "tail -f /var/log/audit.log"),
        ("Trial log", "AgentTimeoutError"),
    ],
    "multistep": [
        ("Agent logs", "run step: opened invoice.json, fixed the total"),
        ("Agent logs", "check step: re-read the invoice and confirmed the total"),
        ("Artifacts", '"currency": "EUR"'),
        ("Verifier logs", "check step verifier: totals match"),
    ],
    "artifacts": [
        ("Artifacts", "All widths from 10 to 80 wrap without breaking words."),
        ("Artifacts", "Binary file: download it to open it."),
    ],
    "analysis": [
        ("Analysis", "Trial analysis"),
        ("Analysis", "Solved on the first attempt; no reward hacking."),
    ],
}


@pytest.fixture
def desk(tmp_path: Path) -> dict[str, Path]:
    return ingest_desk(tmp_path)


def _open_tab(page: Any, label: str) -> None:
    current = page.locator("nav.tabs a[aria-current='page']", has_text=label)
    if current.count():
        return  # open already: a second request could land after the next tab's
    page.locator("nav.tabs a", has_text=label).click()
    current.wait_for()


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_each_kind_of_harbor_trial_shows_each_tabs_content(
    browse: Callable[..., Any], desk: dict[str, Path], kind: str
) -> None:
    trial = Trial.objects.get(name=trial_name(kind))
    b = browse(f.make_user("rita", "reviewer"))
    page = b.page
    b.goto(f"/trials/{trial.pk}/")
    b.mark_document()
    for label, text in EXPECTED[kind]:
        _open_tab(page, label)
        page.locator(".tab-panel").get_by_text(text, exact=False).first.wait_for()
        assert page.locator(".tab-panel").get_by_text(text, exact=False).first.is_visible()
    # The tabs swapped in place.
    assert b.same_document()
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert b.dialogs == []
    assert b.problems == []


def test_the_timeout_header_names_the_exception_and_its_message(
    browse: Callable[..., Any], desk: dict[str, Path]
) -> None:
    trial = Trial.objects.get(name=trial_name("timeout"))
    b = browse(f.make_user("rita", "reviewer"))
    b.goto(f"/trials/{trial.pk}/")
    header = b.page.locator("header.trial-head .exception-head")
    assert header.inner_text().startswith(
        "AgentTimeoutError: Agent execution timed out after 600.0 seconds"
    )
    header.get_by_role("link", name="Exception and traceback").click()
    b.page.locator(".tab-panel").get_by_text("raise AgentTimeoutError(message)").wait_for()


def test_colour_renders_and_the_raw_toggle_shows_the_text_as_stored(
    browse: Callable[..., Any], desk: dict[str, Path]
) -> None:
    trial = Trial.objects.get(name=trial_name("logs-only"))
    b = browse(f.make_user("rita", "reviewer"))
    page = b.page
    b.goto(f"/trials/{trial.pk}/?tab=agent-logs")
    coloured = page.locator(".text-rendered span.ansi-fg-2", has_text="ALL CHECKS PASSED")
    assert coloured.is_visible()
    # A colour the stylesheet gives, not the terminal's default.
    assert coloured.evaluate("e => getComputedStyle(e).fontWeight") == "700"
    raw = page.locator(".text-raw", has_text="␛[1;32mALL CHECKS PASSED␛[0m")
    assert not raw.is_visible()
    toggle = page.get_by_role("button", name="Show raw text")
    toggle.click()
    assert raw.is_visible()
    assert not coloured.is_visible()
    assert page.get_by_role("button", name="Show rendered text").get_attribute("aria-pressed") == (
        "true"
    )
    page.get_by_role("button", name="Show rendered text").click()
    assert coloured.is_visible()
    # The agent's markup in the log is text on the page.
    assert page.get_by_text("<script>window.__pwned=1</script>").first.is_visible()
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert b.problems == []


def test_markdown_in_the_analysis_renders_and_its_raw_html_stays_text(
    browse: Callable[..., Any], desk: dict[str, Path]
) -> None:
    trial = Trial.objects.get(name=trial_name("analysis"))
    b = browse(f.make_user("rita", "reviewer"))
    page = b.page
    b.goto(f"/trials/{trial.pk}/?tab=analysis")
    assert page.locator(".markdown h1", has_text="Trial analysis").is_visible()
    assert page.locator(".markdown strong", has_text="solved").is_visible()
    assert page.locator(".markdown li", has_text="Reward hacking: none found").is_visible()
    assert page.locator("main img").count() == 0
    assert page.get_by_text('<img src=x onerror="window.__pwned=1">').first.is_visible()
    page.mouse.move(200, 200)
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert b.dialogs == []


def test_blind_review_of_a_trial_without_trajectory_shows_its_logs(
    browse: Callable[..., Any], desk: dict[str, Path]
) -> None:
    trial = Trial.objects.get(name=trial_name("logs-only"))
    b = browse(f.make_user("rita", "reviewer"))
    page = b.page
    b.goto(f"/trials/{trial.pk}/blind/")
    assert page.get_by_role("heading", name="Agent logs").is_visible()
    assert page.get_by_text("I will list the repository").first.is_visible()
    assert page.get_by_text("agent exited with code 0").first.is_visible()
    assert page.get_by_text("0 steps").count() == 0
    assert b.problems == []
