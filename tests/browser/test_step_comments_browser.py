"""Step comments in a browser: select text inside a step, comment, find it highlighted after a
reload, and follow a #step-N deep link from another tab."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from review.models import StepComment
from tests import review_factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SELECT = """([step, start, end]) => {
  const pre = document.querySelector(`#step-${step} .part-tool_call [data-part-text]`);
  const range = document.createRange();
  range.setStart(pre.firstChild, start);
  range.setEnd(pre.firstChild, end);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  pre.dispatchEvent(new MouseEvent("mouseup", { bubbles: true }));
}"""

IN_VIEW = """(id) => {
  const box = document.getElementById(id).getBoundingClientRect();
  return box.top >= -1 && box.top < window.innerHeight;
}"""


def test_a_range_selected_in_a_step_is_commented_highlighted_and_deep_linked(
    browse: Callable[..., Any],
) -> None:
    steps = [
        {
            "source": "agent",
            "message": f"Trying case {i}.",
            "tool_calls": [{"function_name": "exec", "arguments": f"pytest -k case{i}"}],
            "observation": f"1 passed <b>{i}</b>",
        }
        for i in range(60)
    ]
    trial = f.make_trial(name="t-long", detail={"trajectory": {"steps": steps}})
    b = browse(f.make_user("rita", "reviewer"))
    page = b.page
    b.goto(f"/trials/{trial.pk}/")
    b.mark_document()

    # "case39" in step 40's tool call: the form moves into the step, aimed at the range.
    page.evaluate(SELECT, [40, 10, 16])
    form = page.locator("#step-40 #step-comment")
    form.wait_for()
    assert form.locator("[data-comment-selection]").inner_text() == "On the selected text: “case39”"
    form.get_by_label("Comment").fill("Why only <i>this</i> case?")
    form.get_by_role("button", name="Add comment").click()
    mark = page.locator("#step-40 mark.range-mark")
    mark.wait_for()
    assert b.same_document()
    assert mark.inner_text() == "case39"
    shown = page.locator("#step-40 .step-comments").inner_text()
    assert "Why only <i>this</i> case?" in shown
    comment = StepComment.objects.get()
    assert (comment.step, comment.part, comment.start, comment.end) == (40, "tool_call", 10, 16)

    # After a reload: still highlighted, listed in the annotations panel, linked to its step.
    page.reload()
    assert page.locator("#step-40 mark.range-mark").inner_text() == "case39"
    link = page.locator("#annotations a[data-step-link='40']")
    assert link.inner_text() == "Step 40"
    assert link.get_attribute("href").endswith("tab=trajectory#step-40")

    # "Correct" aims the form at the same range, superseding the comment.
    page.locator("#step-40 a.comment-correct").click()
    form = page.locator("#step-40 #step-comment")
    assert form.locator("[data-comment-selection]").inner_text() == (
        "Correcting your comment on “case39”."
    )
    form.get_by_label("Comment").fill("Only case39 ran: the rest were deselected.")
    form.get_by_role("button", name="Add comment").click()
    page.locator("#step-40 .step-comments", has_text="deselected").wait_for()
    assert "Why only" not in page.locator("#step-40 .step-comments").inner_text()
    assert page.locator("#annotations .superseded").count() == 1
    correction = StepComment.objects.get(supersedes=comment)
    assert (correction.start, correction.end) == (10, 16)

    # A deep link from another tab opens the trajectory and scrolls to the step.
    b.goto(f"/trials/{trial.pk}/?tab=diff#step-40")
    page.wait_for_url("**tab=trajectory&at=40#step-40")
    page.locator("#step-40.step-target").wait_for()
    assert page.evaluate(IN_VIEW, "step-40")
    assert page.locator("#step-40 mark.range-mark").inner_text() == "case39"

    # The page shows 50 steps at first; the next ones load when the list's end is reached.
    b.goto(f"/trials/{trial.pk}/")
    assert page.locator("#step-51").count() == 0
    page.locator("li.steps-more").scroll_into_view_if_needed()
    page.locator("#step-60").wait_for()
    assert page.locator("li.steps-more").count() == 0
    # A deep link to a step past the first 50 opens the steps holding it.
    b.goto(f"/trials/{trial.pk}/?tab=trajectory#step-55")
    page.wait_for_url("**at=55#step-55")
    page.locator("#step-55.step-target").wait_for()
    assert page.evaluate(IN_VIEW, "step-55")
    assert b.dialogs == []
    assert b.problems == []
