"""Judge calibration in a browser: staff tighten the admission rule on the page, and the job
page stops correcting the judge's pass rate, saying why."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from review.models import CalibrationRule
from tests import review_factories as f
from tests.test_judge_calibration import SALT, _make_parts, _run


def test_staff_tighten_the_rule_and_the_job_page_says_why_it_no_longer_corrects(
    browse: Callable[..., Any],
) -> None:
    CalibrationRule.objects.create(
        pk=1, split_salt=SALT, min_labelled=2, min_tpr_lower=0.3, min_tnr_lower=0.3
    )
    rita = f.make_user("rita", "reviewer")
    calib = [("PASS", "pass")] * 15 + [("FAIL", "pass")] * 3 + [("FAIL", "fail")] * 12
    calib += [("PASS", "fail")] * 6
    _make_parts(rita, test=[("PASS", "pass")] * 6 + [("FAIL", "fail")] * 6, calib=calib)
    job = _run("nightly-43", passed=6, failed=4)
    b = browse(f.make_user("boss", staff=True))
    page = b.page
    b.goto(f"/jobs/{job.pk}/")
    corrected = page.locator("section[aria-labelledby=corrected-title]")
    assert "53%" in corrected.inner_text()
    b.goto("/calibration/")
    versions = page.locator("section[aria-labelledby=versions-title]")
    assert "admitted" in versions.inner_text()
    assert "not admitted" not in versions.inner_text()
    page.get_by_label("TNR lower bound at least").fill("0.9")
    page.get_by_role("button", name="Save the rule").click()
    page.wait_for_url("**/calibration/")
    assert "not admitted" in versions.inner_text()
    assert "TNR's lower bound 0.61 is below 0.90" in versions.inner_text()
    b.goto(f"/jobs/{job.pk}/")
    assert "not corrected: not admitted" in corrected.inner_text()
    assert b.problems == []
    assert b.dialogs == []
