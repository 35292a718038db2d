"""The defective-task ledger in a browser: a reviewer proposes a task from a trial's page, an
expert confirms it from the task's history, and the job page leaves its trials out of the
figures, saying how many, until the switch counts them again."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from review.models import DefectEntry
from rewards.models import Job, Trial
from tests import review_factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _stat(page: Any, label: str) -> str:
    card = page.locator(".stat", has=page.locator(".stat-label", has_text=re.compile(f"^{label}$")))
    return str(card.locator(".stat-value").inner_text()).strip()


def test_a_proposed_then_confirmed_task_is_left_out_of_the_job_page_until_switched_back(
    browse: Callable[..., Any],
) -> None:
    f.write(
        f.bundle(job="run-a", task="sound", reward=0.9),
        f.bundle(job="run-a", task="sound", reward=0.8),
        f.bundle(job="run-a", task="broken", reward=0.1),
        f.bundle(job="run-a", task="broken", reward=0.2),
        f.bundle(job="run-a", task="broken", reward=0.0),
    )
    job = Job.objects.get(name="run-a")
    trial = Trial.objects.filter(task__name="broken").order_by("id").first()
    assert trial is not None
    rewards_before = dict(Trial.objects.values_list("pk", "reward"))

    # A reviewer proposes the task from one of its trials.
    rita = browse(f.make_user("rita", "reviewer"))
    page = rita.page
    rita.goto(f"/trials/{trial.pk}/")
    page.get_by_role("link", name="Report this task as defective").click()
    page.wait_for_url(f"**/defects/report/?trial={trial.pk}")
    form = page.locator("form.defect-form")
    # The trial is the evidence already; a reviewer may only propose.
    assert form.locator("textarea[name=evidence]").input_value().strip() == f"/trials/{trial.pk}/"
    assert form.locator("select[name=state] option").all_inner_texts() == ["proposed"]
    form.locator("select[name=task]").select_option(str(trial.task_id))
    form.locator("select[name=category]").select_option("broken_test")
    form.locator("textarea[name=rationale]").fill("Expects mV; the instruction says V.")
    form.locator("textarea[name=evidence]").fill(f"/trials/{trial.pk}/#step-2")
    form.get_by_role("button", name="Add to the ledger").click()
    page.wait_for_url(f"**/defects/tasks/{trial.task_id}/")
    assert "proposed" in page.locator(".page-head").inner_text()
    assert page.locator(f'a[href="/trials/{trial.pk}/#step-2"]').count() == 1
    # A proposal alone changes no figure.
    rita.goto(f"/jobs/{job.pk}/")
    assert _stat(page, "Trials") == "5"
    assert page.locator(".banner-exclusions").count() == 0

    # An expert confirms it from the ledger.
    eve = browse(f.make_user("eve", "expert"))
    page = eve.page
    eve.goto("/defects/")
    page.get_by_role("link", name="broken").first.click()
    page.wait_for_url(f"**/defects/tasks/{trial.task_id}/")
    assert "Expects mV; the instruction says V." in page.inner_text("body")
    form = page.locator("form.defect-form")
    form.locator("select[name=state]").select_option("confirmed")
    form.locator("select[name=category]").select_option("broken_test")
    form.locator("textarea[name=rationale]").fill("Confirmed: the test compares mV with V.")
    form.get_by_role("button", name="Add to the ledger").click()
    # The same address after the redirect: wait for the new standing itself.
    page.locator(".page-head .badge-defect-confirmed").wait_for()
    assert "now confirmed" in page.locator(".page-head").inner_text()
    assert [e.state for e in DefectEntry.objects.order_by("id")] == ["proposed", "confirmed"]

    # The job page leaves the task's three trials out and says so.
    eve.goto(f"/jobs/{job.pk}/")
    note = page.locator(".banner-exclusions")
    assert "3 trials of 1 task left out" in note.inner_text()
    assert _stat(page, "Trials") == "2"
    assert _stat(page, "Mean reward") == "0.850"
    # The switch counts them again, and says so.
    note.get_by_role("link", name="include them").click()
    page.wait_for_url(lambda url: "include_defective=1" in url)
    note = page.locator(".banner-exclusions")
    assert "3 trials of 1 task counted" in note.inner_text()
    assert _stat(page, "Trials") == "5"
    assert _stat(page, "Mean reward") == "0.400"
    note.get_by_role("link", name="leave them out").click()
    page.wait_for_url(lambda url: "include_defective" not in url)
    assert _stat(page, "Trials") == "2"

    # The stored rewards never changed.
    assert dict(Trial.objects.values_list("pk", "reward")) == rewards_before
    assert rita.dialogs == eve.dialogs == []
    assert rita.problems == eve.problems == []
