"""Reward integrity in a browser: a finding's link lands on its step, and an expert settles
it without a reload."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from review.models import FindingReview
from rewards.models import Trial
from tests import review_factories as f
from tests.test_integrity_review import hacked_trial

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_expert_follows_a_finding_to_its_step_and_confirms_it_in_place(
    browse: Callable[..., Any],
) -> None:
    trial = hacked_trial()
    eve = f.make_user("eve", "expert")
    b = browse(eve)
    b.goto(f"/trials/{trial.pk}/")
    page = b.page
    card = page.locator("#integrity")
    assert "Writes the verifier's reward or logs" in card.inner_text()
    b.mark_document()

    card.locator("input[value=confirmed]").check()
    card.locator("textarea[name=rationale]").fill("It wrote /logs/verifier/reward.txt itself.")
    card.get_by_role("button", name="Save decision").click()
    page.get_by_text("Saved.").wait_for()
    assert b.same_document()
    assert "Confirmed by eve" in page.locator("#integrity").inner_text()
    assert FindingReview.objects.get().decision == "confirmed"
    assert Trial.objects.get(pk=trial.pk).reward == 1.0

    page.locator("#integrity a", has_text="step 2").click()
    page.wait_for_url(f"**/trials/{trial.pk}/?tab=trajectory#step-2")
    step = page.locator("#step-2")
    assert "echo 1 > /logs/verifier/reward.txt" in step.inner_text()
    assert step.is_visible()
    assert b.dialogs == []
    assert b.problems == []
