"""A reviewer works through a queue with gold trials mixed in, then reads their accuracy and
time to review on the reviewers page."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import override_settings

from review.models import Claim, GoldLabel, add_annotation
from tests import review_factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TRIAL_IN_QUEUE = re.compile(r"/trials/(\d+)/\?queue=1$")


@override_settings(TRIALDESK_GOLD_RATE=1.0)
def test_a_reviewer_meets_gold_trials_in_the_queue_and_finds_their_accuracy(
    browse: Callable[..., Any],
) -> None:
    boss = f.make_user("boss", staff=True)
    sam = f.make_user("sam", "reviewer")
    gold_pass, gold_fail = f.make_trial(name="first"), f.make_trial(name="second")
    plain = f.make_trial(name="third")
    for trial, reference in ((gold_pass, "pass"), (gold_fail, "fail")):
        # Reviewed already by someone else: only gold mixing hands these out again.
        add_annotation(trial_id=trial.pk, reviewer=sam, judgment=reference)
        GoldLabel.objects.create(
            trial=trial, reference=reference, rationale="settled by staff", author=boss
        )
    rita = f.make_user("rita", "reviewer")
    b = browse(rita)
    page = b.page

    b.goto("/queue/")
    page.get_by_role("button", name="Start reviewing →").click()
    page.wait_for_url(TRIAL_IN_QUEUE)
    seen = [int(TRIAL_IN_QUEUE.search(page.url).group(1))]  # type: ignore[union-attr]
    for _ in range(2):
        assert "gold" not in page.content().lower()
        page.get_by_label("pass", exact=True).check()
        page.get_by_role("button", name="Save annotation").click()
        page.get_by_text("Annotation saved.").wait_for()
        page.locator("#annotations").get_by_role("button", name="Next in queue →").click()
        page.wait_for_url(_away_from(list(seen)))
        seen.append(_trial_of(page.url))
    # Both gold trials came first (the rate is 1), then the unreviewed one.
    assert set(seen[:2]) == {gold_pass.pk, gold_fail.pk}
    assert seen[2] == plain.pk
    assert not Claim.objects.filter(trial_id__in=seen[:2]).exists()

    b.goto("/reviewers/")
    row = page.locator("tr", has=page.get_by_role("rowheader", name="rita"))
    # Right on the pass reference, wrong on the fail one: 1 of 2.
    assert row.locator('[data-figure="accuracy"]').inner_text().startswith("50%")
    assert "1 of 2" in row.inner_text()
    assert re.match(r"\d+\.\d s over 2", row.locator('[data-figure="time"]').inner_text())
    assert b.dialogs == []
    assert b.problems == []


def _trial_of(url: str) -> int:
    match = re.search(r"/trials/(\d+)/", url)
    return int(match.group(1)) if match else -1


def _away_from(trials: list[int]) -> Callable[[str], bool]:
    return lambda url: _trial_of(url) not in trials
