"""A fact check's citation in a browser (issue 24): clicked in the Judge card's matrix, it
lands on its step, far down a long trajectory, with the quote marked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rewards.schemas import Citation, FactCheck
from tests import review_factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_citation_lands_on_its_step_with_the_quote_marked(browse: Callable[..., Any]) -> None:
    steps = [
        {"step_id": i, "source": "agent", "observation": f"ran check {i}: all green"}
        for i in range(1, 121)
    ]
    steps[89]["observation"] = f"collected 14 items\n\n14   passed in 0.3s {f.HOSTILE}"
    judge = f.judge("PASS")
    judge.fact_checks = [
        FactCheck(
            claim="the tests pass",
            status="verified",
            evidence="pytest said so",
            citations=[Citation(step=90, quote="14 passed in 0.3s")],
        ),
        FactCheck(
            claim="it ran twice",
            status="refuted",
            citations=[Citation(step=3, quote="ran twice")],
        ),
    ]
    trial = f.make_trial(judges=[judge], detail={"trajectory": {"steps": steps}})
    b = browse(f.make_user("rita", "reviewer"))
    page = b.page
    b.goto(f"/trials/{trial.pk}/")
    matrix = page.locator("table.fact-checks")
    assert matrix.get_by_text("citation not found").is_visible()
    matrix.get_by_role("link", name="step 90").click()
    page.wait_for_url(f"**/trials/{trial.pk}/?cite=*#step-90")

    mark = page.locator("#step-90 mark")
    mark.wait_for()
    assert mark.inner_text() == "14   passed in 0.3s"
    assert page.locator("mark").count() == 1
    # The page scrolled to the cited step: the quote is on screen.
    top = mark.evaluate("e => e.getBoundingClientRect().top")
    assert 0 <= top < page.viewport_size["height"]
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert b.dialogs == []
    assert b.problems == []
