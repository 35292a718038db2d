"""Blind review in a browser: nothing of the hidden values reaches the page before submit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests import review_factories as f
from tests.test_blind_review import SECRETS, secret_trial
from tests.test_step_comments import BLIND_SECRETS, blind_long_trial

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_blind_review_hides_everything_until_submit_then_reveals_it(
    browse: Callable[..., Any],
) -> None:
    trial = secret_trial()
    b = browse(f.make_user("rita", "reviewer"))
    page = b.page
    bodies: list[str] = []
    page.on(
        "response",
        lambda response: (
            bodies.append(response.url)
            if "text/html" in (response.headers.get("content-type") or "")
            else None
        ),
    )
    # Otto reviewed the trial already: a queue of two reviewers per trial still waits for one.
    b.goto("/queue/?blind=1&overlap=2")
    assert "Blind review" in page.content()
    with page.expect_response(lambda r: f"/trials/{trial.pk}/blind/" in r.url) as served:
        page.get_by_role("button", name="Start reviewing →").click()
    page.wait_for_load_state()
    assert f"/trials/{trial.pk}/blind/" in page.url
    # The HTML as the server sent it and the document as the browser holds it: neither
    # carries the reward, the judge's reasoning or failure mode, nor another reviewer.
    sent = served.value.text()
    shown = page.content()
    for secret in SECRETS:
        assert secret not in sent, secret
        assert secret not in shown, secret
    assert page.get_by_text("I will compute it.").is_visible()

    page.get_by_label("pass", exact=True).check()
    page.get_by_label("Notes").fill("blind and sure")
    page.get_by_role("button", name="Submit and reveal").click()
    page.wait_for_url(f"**/trials/{trial.pk}/?**")
    revealed = page.content()
    assert "0.731" in revealed
    assert "SECRET-OTHER-NOTES" in revealed
    assert "blind and sure" in revealed
    assert b.dialogs == []
    assert b.problems == []
    # Every HTML document loaded before the submit was a queue or blind page.
    before_submit = bodies[: bodies.index(served.value.url) + 1]
    assert all("/queue/" in url or "/blind/" in url for url in before_submit)


def test_blind_review_loads_the_next_steps_when_the_list_ends_hiding_the_same(
    browse: Callable[..., Any],
) -> None:
    trial = blind_long_trial()
    b = browse(f.make_user("rita", "reviewer"))
    page = b.page
    chunks: list[Any] = []
    page.on("response", lambda r: chunks.append(r) if "/blind/steps/" in r.url else None)
    b.goto(f"/trials/{trial.pk}/blind/?blind=1")
    assert page.locator("li.step").count() == 50
    assert page.locator("#step-51").count() == 0
    page.locator("li.steps-more").scroll_into_view_if_needed()
    page.locator("#step-100").wait_for()
    page.locator("li.steps-more").scroll_into_view_if_needed()
    page.locator("#step-120").wait_for()
    assert page.locator("li.steps-more").count() == 0
    assert page.locator("li.step").count() == 120
    assert len(chunks) == 2
    shown = page.content()
    for secret in BLIND_SECRETS:
        assert secret not in shown, secret
    for chunk in chunks:
        for secret in BLIND_SECRETS:
            assert secret not in chunk.text(), secret
    assert b.dialogs == []
    assert b.problems == []
