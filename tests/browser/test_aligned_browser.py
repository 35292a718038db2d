"""Two trials of a task side by side in a browser (issue 24): from the trial page's "Other
trials of this task", the aligned view opens and its "first divergence" link lands on the
marker, on the page of steps that holds it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests import review_factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _run(prefix: str) -> dict[str, Any]:
    steps = [
        {
            "step_id": i,
            "source": "agent",
            "tool_calls": [
                {
                    "function_name": "exec",
                    "arguments": {"command": f"step {i}" if i < 300 else f"{prefix} {i}"},
                }
            ],
        }
        for i in range(1, 401)
    ]
    return {"steps": steps}


def test_the_divergence_marker_is_found_from_the_trial_page(browse: Callable[..., Any]) -> None:
    mine = f.make_trial(name="run-a", detail={"trajectory": _run("a")})
    f.make_trial(name="run-b", detail={"trajectory": _run("b")})
    b = browse(f.make_user("ann", "analyst"))
    page = b.page
    b.goto(f"/trials/{mine.pk}/")
    page.get_by_role("link", name="Other trials of this task").click()
    page.get_by_role("link", name="Side by side").click()
    page.get_by_role("heading", name="Trajectories aligned").wait_for()
    assert page.locator("#divergence").count() == 0  # row 300 is on the second page
    page.get_by_role("link", name="first divergence at row 300").click()
    marker = page.locator("#divergence")
    marker.wait_for()
    assert "First divergence" in marker.inner_text()
    top = marker.evaluate("e => e.getBoundingClientRect().top")
    assert 0 <= top < page.viewport_size["height"]
    assert page.locator("tr.aligned-changed").first.inner_text().startswith("#300")
    assert b.problems == []
