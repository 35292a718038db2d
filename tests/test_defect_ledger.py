"""The defective-task ledger: append-only entries, who may propose, confirm and clear, evidence
inside Trialdesk, and confirmed tasks left out of the job page's and compare's figures by default
(a switch counts them again), never changing a stored reward.

The fixture, rewards (pass threshold 0.5; judge verdicts in brackets):

    task        run A                          run B
    sound       0.9 [PASS], 0.8 [PASS]         0.9 [PASS]
    broken      0.1 [FAIL], 0.2 [FAIL], 0.0    0.9 [PASS]       (confirmed defective below)
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pyarrow.parquet as pq
import pytest
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, transaction
from django.http import QueryDict
from django.test import Client
from pytest_django import DjangoAssertNumQueries

from review import defects
from review.filtering.form import TrialFilterForm
from review.models import AppendOnlyError, DefectEntry, add_annotation
from review.science import agreement, compare, exclusions, stats
from rewards.models import Job, Task, Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs() -> tuple[Job, Job]:
    f.write(
        f.bundle(job="run-a", task="sound", reward=0.9, judges=[f.judge("PASS")]),
        f.bundle(job="run-a", task="sound", reward=0.8, judges=[f.judge("PASS")]),
        f.bundle(job="run-a", task="broken", reward=0.1, judges=[f.judge("FAIL")]),
        f.bundle(job="run-a", task="broken", reward=0.2, judges=[f.judge("FAIL")]),
        f.bundle(job="run-a", task="broken", reward=0.0, judges=[]),
        f.bundle(job="run-b", task="sound", reward=0.9, judges=[f.judge("PASS")]),
        f.bundle(job="run-b", task="broken", reward=0.9, judges=[f.judge("PASS")]),
    )
    return Job.objects.get(name="run-a"), Job.objects.get(name="run-b")


def _task(name: str) -> Task:
    return Task.objects.get(name=name)


def _confirm(task: Task, state: str = "confirmed") -> DefectEntry:
    expert = f.make_user(f"expert-{DefectEntry.objects.count()}", "expert")
    return defects.record(
        task_id=task.pk,
        author=expert,
        can_settle=True,
        state=state,
        category="broken_test",
        rationale="The test asserts the wrong unit.",
    )


def _stat(html: str, label: str) -> str:
    found = re.search(
        rf'<div class="stat-label">{label}</div><div class="stat-value">([^<]*)</div>', html
    )
    assert found, label
    return found.group(1)


# --- the ledger itself ------------------------------------------------------------------------
def test_entries_are_append_only_in_code(runs: tuple[Job, Job]) -> None:
    entry = _confirm(_task("broken"))
    entry.rationale = "changed"
    with pytest.raises(AppendOnlyError):
        entry.save()
    with pytest.raises(AppendOnlyError):
        entry.delete()
    with pytest.raises(AppendOnlyError):
        DefectEntry.objects.filter(pk=entry.pk).update(state="cleared")
    with pytest.raises(AppendOnlyError):
        DefectEntry.objects.all().delete()


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE review_defectentry SET state = 'cleared'",
        "DELETE FROM review_defectentry",
    ],
)
def test_entries_are_append_only_in_the_database(runs: tuple[Job, Job], sql: str) -> None:
    _confirm(_task("broken"))
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql)
    assert DefectEntry.objects.get().state == "confirmed"


def test_the_newest_entry_says_where_a_task_stands(runs: tuple[Job, Job]) -> None:
    broken = _task("broken")
    _confirm(broken, "proposed")
    assert defects.current_state(broken) == "proposed"
    _confirm(broken, "confirmed")
    assert list(DefectEntry.objects.confirmed().values_list("task_id", flat=True)) == [broken.pk]
    _confirm(broken, "cleared")
    assert defects.current_state(broken) == "cleared"
    assert not DefectEntry.objects.confirmed().exists()
    _confirm(broken, "confirmed")  # reopened
    assert DefectEntry.objects.confirmed().get().task_id == broken.pk
    assert [e.state for e in defects.history(broken)] == [
        "proposed",
        "confirmed",
        "cleared",
        "confirmed",
    ]


def test_a_reviewer_proposes_but_cannot_confirm_clear_or_undo_a_confirmation(
    runs: tuple[Job, Job],
) -> None:
    broken = _task("broken")
    rita = f.make_user("rita", "reviewer")

    def propose(state: str, rationale: str) -> None:
        defects.record(
            task_id=broken.pk,
            author=rita,
            can_settle=False,
            state=state,
            category="environment",
            rationale=rationale,
        )

    propose("proposed", "Network down in the sandbox.")
    for state in ("confirmed", "cleared"):
        with pytest.raises(defects.LedgerRefused):
            propose(state, "x")
    _confirm(broken)
    with pytest.raises(defects.LedgerRefused, match="confirmed defective"):
        propose("proposed", "again")
    assert defects.current_state(broken) == "confirmed"


# --- evidence --------------------------------------------------------------------------------
def test_evidence_links_are_kept_as_paths_inside_trialdesk(runs: tuple[Job, Job]) -> None:
    trial = Trial.objects.filter(task__name="broken").first()
    assert trial is not None
    job = runs[0]
    links = defects.clean_evidence(
        f"http://testserver/trials/{trial.pk}/#step-3\n{trial.pk}, /jobs/{job.pk}/"
        f" /?task=broken&job={job.pk} /trials/{trial.pk}/#annotations",
        host="testserver",
    )
    assert links == [
        f"/trials/{trial.pk}/#step-3",
        f"/trials/{trial.pk}/",
        f"/jobs/{job.pk}/",
        f"/?task=broken&job={job.pk}",
        f"/trials/{trial.pk}/#annotations",
    ]


@pytest.mark.parametrize(
    "link",
    [
        "https://evil.example/trials/1/",
        "javascript:alert(1)",
        "//evil.example/trials/1/",
        "/nowhere/",
        "/admin/",
        "/trials/999999/",
        "999999",
        "/trials/{pk}/#<script>",
        "trials/{pk}/",
    ],
)
def test_evidence_outside_trialdesk_or_to_nothing_is_refused(
    runs: tuple[Job, Job], link: str
) -> None:
    trial = Trial.objects.first()
    assert trial is not None
    with pytest.raises(ValidationError):
        defects.clean_evidence(link.format(pk=trial.pk), host="testserver")


# --- the pages -------------------------------------------------------------------------------
def test_a_reviewer_reports_a_task_from_its_trial(client: Client, runs: tuple[Job, Job]) -> None:
    trial = Trial.objects.filter(task__name="broken").first()
    assert trial is not None
    f.login(client, "rita", "reviewer")
    page = client.get(f"/trials/{trial.pk}/").content.decode()
    assert f'href="/defects/report/?trial={trial.pk}"' in page
    form = client.get(f"/defects/report/?trial={trial.pk}").content.decode()
    assert f'value="/trials/{trial.pk}/"' not in form  # a textarea, not an input
    assert f"/trials/{trial.pk}/</textarea>" in form
    assert 'value="confirmed"' not in form  # a reviewer only proposes
    response = client.post(
        "/defects/report/",
        {
            "task": trial.task_id,
            "state": "proposed",
            "category": "broken_test",
            "rationale": "Expects mV, the instruction says V.",
            "evidence": f"/trials/{trial.pk}/#step-2",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == f"/defects/tasks/{trial.task_id}/"
    entry = DefectEntry.objects.get()
    assert (entry.state, entry.author.username, entry.evidence) == (
        "proposed",
        "rita",
        [f"/trials/{trial.pk}/#step-2"],
    )
    history = client.get(response["Location"]).content.decode()
    assert "Expects mV, the instruction says V." in history
    assert f'href="/trials/{trial.pk}/#step-2"' in history


def test_the_report_form_from_a_job_offers_the_jobs_tasks(
    client: Client, runs: tuple[Job, Job]
) -> None:
    f.make_trial(job="other", task="elsewhere")
    a, _ = runs
    f.login(client, "rita", "reviewer")
    assert f'href="/defects/report/?job={a.pk}"' in client.get(f"/jobs/{a.pk}/").content.decode()
    form = client.get(f"/defects/report/?job={a.pk}").content.decode()
    assert ">electrical/broken</option>" in form
    assert ">electrical/sound</option>" in form
    assert "elsewhere" not in form
    assert f"/jobs/{a.pk}/</textarea>" in form


def test_only_experts_and_staff_confirm_and_a_reviewer_cannot_reopen(
    client: Client, runs: tuple[Job, Job]
) -> None:
    broken = _task("broken")
    post = {"task": broken.pk, "category": "broken_test", "rationale": "Wrong unit."}
    f.login(client, "rita", "reviewer")
    refused = client.post("/defects/report/", {**post, "state": "confirmed"})
    assert refused.status_code == 400  # not a choice a reviewer has
    assert not DefectEntry.objects.exists()
    f.login(client, "eve", "expert")
    assert client.post("/defects/report/", {**post, "state": "confirmed"}).status_code == 302
    f.login(client, "rob", "reviewer")
    again = client.post("/defects/report/", {**post, "state": "proposed"})
    assert again.status_code == 403
    assert "confirmed defective" in again.content.decode()
    assert defects.current_state(broken) == "confirmed"
    f.login(client, "sam", staff=True)
    assert client.post("/defects/report/", {**post, "state": "cleared"}).status_code == 302
    assert defects.current_state(broken) == "cleared"


def test_analysts_read_the_ledger_but_report_nothing_and_anonymous_users_log_in(
    client: Client, runs: tuple[Job, Job]
) -> None:
    _confirm(_task("broken"))
    assert client.get("/defects/").status_code == 302
    f.login(client, "ann", "analyst")
    ledger = client.get("/defects/")
    assert ledger.status_code == 200
    assert "broken" in ledger.content.decode()
    assert client.get("/defects/report/?job=1").status_code == 403
    post = {"task": _task("sound").pk, "state": "proposed", "category": "environment"}
    assert client.post("/defects/report/", {**post, "rationale": "x"}).status_code == 403
    assert client.post("/defects/").status_code == 405
    history = client.get(f"/defects/tasks/{_task('broken').pk}/").content.decode()
    assert "The test asserts the wrong unit." in history
    assert "Add an entry" not in history


def test_the_ledger_lists_each_task_once_with_its_newest_state_in_two_queries(
    client: Client, runs: tuple[Job, Job], django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    broken, sound = _task("broken"), _task("sound")
    _confirm(broken, "proposed")
    _confirm(broken, "confirmed")
    _confirm(sound, "proposed")
    f.login(client, "ann", "analyst")
    client.get("/defects/")  # the roles, cached
    # the user, the ledger's newest entries with their tasks, authors and entry counts.
    with django_assert_num_queries(2):
        html = client.get("/defects/").content.decode()
    rows = re.findall(r'href="/defects/tasks/(\d+)/"', html)
    assert rows == [str(broken.pk), str(sound.pk)]  # confirmed first
    fragment = client.get("/defects/?state=proposed", headers={"HX-Request": "true"})
    assert f.is_fragment(fragment.content.decode())
    assert re.findall(r'href="/defects/tasks/(\d+)/"', fragment.content.decode()) == [str(sound.pk)]


def test_hostile_rationale_is_escaped(client: Client, runs: tuple[Job, Job]) -> None:
    expert = f.make_user("eve", "expert")
    defects.record(
        task_id=_task("broken").pk,
        author=expert,
        can_settle=True,
        state="confirmed",
        category="environment",
        rationale=f.HOSTILE,
    )
    f.login(client, "ann", "analyst")
    html = client.get(f"/defects/tasks/{_task('broken').pk}/").content.decode()
    assert "<script>window.__pwned" not in html
    assert "&lt;script&gt;" in html


# --- exclusion from the figures --------------------------------------------------------------
def test_confirming_a_defect_changes_the_job_page_only_through_the_switch(
    client: Client, runs: tuple[Job, Job]
) -> None:
    a, _ = runs
    rewards_before = dict(Trial.objects.values_list("pk", "reward"))
    f.login(client, "ann", "analyst")
    before = client.get(f"/jobs/{a.pk}/").content.decode()
    assert _stat(before, "Trials") == "5"
    assert "left out" not in before
    _confirm(_task("broken"))
    after = client.get(f"/jobs/{a.pk}/").content.decode()
    assert _stat(after, "Trials") == "2"
    assert _stat(after, "Mean reward") == "0.850"
    assert _stat(after, "Judge pass") == "100%"
    assert "3 trials of 1 task left out" in after
    assert "include_defective=1" in after
    assert ">broken</a>" not in after  # its row is gone from "By task"
    switched = client.get(f"/jobs/{a.pk}/?include_defective=1").content.decode()
    assert _stat(switched, "Trials") == "5"
    assert _stat(switched, "Mean reward") == _stat(before, "Mean reward")
    assert "3 trials of 1 task counted" in switched
    assert dict(Trial.objects.values_list("pk", "reward")) == rewards_before


def test_figures_without_the_defective_task_equal_a_count_of_the_other_trials(
    runs: tuple[Job, Job],
) -> None:
    a, _ = runs
    _confirm(_task("broken"))
    left_out = exclusions.for_jobs([a.pk])
    shown = stats.breakdown_of(stats.job_tally_rows(a) + left_out.job_rows(a.pk))
    kept = Trial.objects.filter(job=a).exclude(task__name="broken")
    assert shown.summary.trial_count == kept.count()
    assert shown.summary.mean_reward == pytest.approx(sum(t.reward for t in kept) / kept.count())
    assert shown.totals["bin0"] == 0  # the three low rewards were all the broken task's
    assert [name for name, _, _ in shown.by_task] == ["sound"]


def test_clearing_a_task_counts_its_trials_again(client: Client, runs: tuple[Job, Job]) -> None:
    a, _ = runs
    broken = _task("broken")
    _confirm(broken)
    _confirm(broken, "cleared")
    f.login(client, "ann", "analyst")
    html = client.get(f"/jobs/{a.pk}/").content.decode()
    assert _stat(html, "Trials") == "5"
    assert "left out" not in html


def test_job_page_queries_with_a_confirmed_defect(
    client: Client, runs: tuple[Job, Job], django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    a, _ = runs
    f.login(client, "ann", "analyst")
    client.get(f"/jobs/{a.pk}/")  # the roles and the ledger's confirmed tasks, cached
    # 1 the user, 2 the job, 3 its kept tally rows, 4 first annotations by day, 5 the judge
    # calibration rule with the newest ids (the judge's corrected pass rate, kept): what the
    # page read before the ledger existed.
    with django_assert_num_queries(5):
        assert client.get(f"/jobs/{a.pk}/").status_code == 200
    _confirm(_task("broken"))
    client.get(f"/jobs/{a.pk}/")  # the confirmed tasks, cached again
    # ... and, as this job has trials of a confirmed task, 3 their counts (one grouped
    # query over those trials alone).
    with django_assert_num_queries(6):
        assert client.get(f"/jobs/{a.pk}/").status_code == 200


def test_confirming_a_defect_changes_compare_only_through_the_switch(
    client: Client, runs: tuple[Job, Job], django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    a, b = runs
    verifier = compare.compare(a, b).results[0].counts
    assert (verifier.n, verifier.b_only) == (2, 1)  # broken fails in A, passes in B
    _confirm(_task("broken"))
    f.login(client, "ann", "analyst")
    client.get(f"/compare/?a={a.pk}&b={b.pk}")  # the roles, job choices, ledger, cached
    # the user, job A, job B (form), the confirmed tasks' trials' counts in either run, the
    # two runs' tallies summed per task; no task flipped once the defective one is left
    # out, so no first trials are looked for; the judge calibration rule with the newest ids
    # (each run's counts by judge version kept from the first visit).
    with django_assert_num_queries(6):
        html = client.get(f"/compare/?a={a.pk}&b={b.pk}").content.decode()
    assert "4 trials of 1 task left out" in html
    assert "Failed in A, passed in B" in html
    assert "/compare/trials/" not in html  # the only flip was the defective task's
    left_out = exclusions.for_jobs([a.pk, b.pk])
    assert compare.compare(a, b, left_out).results[0].counts.n == 1
    switched = client.get(f"/compare/?a={a.pk}&b={b.pk}&include_defective=1").content.decode()
    assert "4 trials of 1 task counted" in switched
    assert "/compare/trials/" in switched
    lines = client.get(f"/compare.csv?a={a.pk}&b={b.pk}").content.decode().splitlines()
    assert lines[1].startswith("verifier,1,")
    url = f"/compare.csv?a={a.pk}&b={b.pk}&include_defective=1"
    assert client.get(url).content.decode().splitlines()[1].startswith("verifier,2,")


# --- the exports' manifest -------------------------------------------------------------------
def test_an_export_of_a_job_lists_the_excluded_tasks_and_confirmed_entries_in_its_manifest(
    client: Client, runs: tuple[Job, Job]
) -> None:
    a, _ = runs
    entry = _confirm(_task("broken"))
    f.login(client, "ann", "analyst")
    response = client.get(f"/export/manifest.json?job={a.pk}")
    assert response.status_code == 200
    manifest = response.json()
    assert manifest["filter"] == f"job={a.pk}"
    defective, hacks = manifest["left_out"]
    assert (hacks["reason"], hacks["switch"], hacks["trials"]) == (
        "confirmed_hack",
        "include_hacks=1",
        0,
    )
    assert (defective["reason"], defective["switch"], defective["trials"]) == (
        "defective_task",
        "include_defective=1",
        3,
    )
    (task,) = defective["tasks"]
    assert (task["task"], task["source"], task["trials"]) == ("broken", "electrical", 3)
    assert task["why"]["id"] == entry.pk
    assert task["why"]["rationale"] == "The test asserts the wrong unit."
    assert [e["id"] for e in manifest["confirmed_entries"]] == [entry.pk]
    # Reproducing the job page's headline from the export and the manifest:
    rows = list(Trial.objects.filter(job=a).exclude(task_id=task["task_id"]))
    assert len(rows) == 2


def test_every_export_names_its_manifest_and_parquet_carries_it(
    client: Client, runs: tuple[Job, Job]
) -> None:
    a, _ = runs
    _confirm(_task("broken"))
    f.login(client, "ann", "analyst")
    for url in ("/export.csv", "/export.jsonl", "/export.parquet", "/export/annotations.csv"):
        response = client.get(f"{url}?job={a.pk}")
        assert response["Link"] == f'</export/manifest.json?job={a.pk}>; rel="describedby"'
    streamed: Any = client.get(f"/export.parquet?job={a.pk}")
    parquet = b"".join(streamed.streaming_content)
    metadata = pq.read_schema(io.BytesIO(parquet)).metadata
    manifest = json.loads(metadata[b"trialdesk.manifest"])
    assert manifest["left_out"][0]["tasks"][0]["task"] == "broken"
    # The rows themselves are every trial of the filter: nothing is dropped from an export.
    assert pq.read_table(io.BytesIO(parquet)).num_rows == 5


def test_the_manifest_needs_the_export_role_and_a_valid_filter(
    client: Client, runs: tuple[Job, Job]
) -> None:
    f.login(client, "rita", "reviewer")
    assert client.get("/export/manifest.json").status_code == 403
    f.login(client, "ann", "analyst")
    assert client.get("/export/manifest.json?job=abc").status_code == 400
    empty = client.get("/export/manifest.json").json()
    assert empty["left_out"][0]["tasks"] == []
    assert empty["confirmed_entries"] == []


# --- the API ---------------------------------------------------------------------------------
def _api(client: Client, username: str, *roles: str, staff: bool = False) -> dict[str, str]:
    from review import tokens

    user = f.make_user(username, *roles, staff=staff)
    return {"Authorization": f"Bearer {tokens.create_token(user, 'test')[1]}"}


def test_the_api_lists_the_ledger_and_a_tasks_history(
    client: Client, runs: tuple[Job, Job]
) -> None:
    broken = _task("broken")
    _confirm(broken, "proposed")
    _confirm(broken, "confirmed")
    headers = _api(client, "ann", "analyst")
    listed = client.get("/api/defects", headers=headers).json()
    assert [(i["task"], i["state"], i["entries"]) for i in listed] == [("broken", "confirmed", 2)]
    assert client.get("/api/defects?state=cleared", headers=headers).json() == []
    history = client.get(f"/api/defects/{broken.pk}", headers=headers).json()
    assert [e["state"] for e in history["entries"]] == ["proposed", "confirmed"]
    assert history["state"] == "confirmed"
    assert client.get("/api/defects/999999", headers=headers).status_code == 404
    manifest = client.get("/api/defects/manifest", headers=headers).json()
    assert manifest["left_out"][0]["tasks"][0]["task_id"] == broken.pk
    assert client.get("/api/defects").status_code == 401


def test_the_api_adds_entries_by_the_same_rules_as_the_page(
    client: Client, runs: tuple[Job, Job]
) -> None:
    broken = _task("broken")
    trial = Trial.objects.filter(task=broken).first()
    assert trial is not None
    url = f"/api/defects/{broken.pk}"
    body = {"category": "wrong_reference", "rationale": "The reference answer is off by 10x."}

    def post(headers: dict[str, str], **extra: Any) -> Any:
        return client.post(
            url, json.dumps({**body, **extra}), content_type="application/json", headers=headers
        )

    reviewer = _api(client, "rita", "reviewer")
    assert post(reviewer, state="confirmed").status_code == 403
    made = post(reviewer, state="proposed", evidence=[f"/trials/{trial.pk}/#step-1"])
    assert made.status_code == 201
    assert made.json()["evidence"] == [f"/trials/{trial.pk}/#step-1"]
    assert made.json()["author"] == "rita"
    bad = post(reviewer, state="proposed", evidence=["https://elsewhere.example/x"])
    assert bad.status_code == 422
    assert post(_api(client, "ann", "analyst"), state="proposed").status_code == 403
    assert post(_api(client, "eve", "expert"), state="confirmed").status_code == 201
    assert post(reviewer, state="proposed").status_code == 403  # cannot reopen a confirmation
    assert defects.current_state(broken) == "confirmed"


# --- agreement -------------------------------------------------------------------------------
@pytest.fixture
def judged(runs: tuple[Job, Job]) -> tuple[Job, Job]:
    """rita and rob judge every trial of run A: they agree on the sound task's and differ on
    the broken task's."""
    rita, rob = f.make_user("rita", "reviewer"), f.make_user("rob", "reviewer")
    for trial in Trial.objects.filter(job=runs[0]).select_related("task"):
        sound = trial.task.name == "sound"
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass")
        add_annotation(trial_id=trial.pk, reviewer=rob, judgment="pass" if sound else "fail")
    return runs


def _figures(report: agreement.Report) -> tuple[object, ...]:
    return (
        report.judgments,
        report.defers,
        [(r.comparison.key, r.overall.counts, r.undecided) for r in report.comparisons],
        [(g.value, g.matrix.counts) for r in report.comparisons for g in r.groups],
        [(p.a, p.b, p.matrix.counts) for p in report.reviewers.pairs],
        report.reviewers.alpha,
    )


@pytest.mark.parametrize("scope", ["", "job", "agent=claude-code"])
def test_agreement_without_a_defective_task_equals_agreement_over_the_other_tasks(
    judged: tuple[Job, Job], scope: str
) -> None:
    a, _ = judged
    query = {"": "", "job": f"job={a.pk}", "agent=claude-code": "agent=claude-code"}[scope]
    _confirm(_task("broken"))
    _, _, active = exclusions.chosen()
    left_out = agreement.report(
        TrialFilterForm(QueryDict(query)), left_out=exclusions.trials_of(active)
    )
    sound_only = agreement.report(TrialFilterForm(QueryDict(f"{query}&task=sound")))
    assert _figures(left_out) == _figures(sound_only)
    assert left_out.left_out == 6  # two reviewers on the broken task's three trials
    everything = agreement.report(TrialFilterForm(QueryDict(query)))
    assert everything.judgments == 10


def test_the_agreement_page_leaves_out_defective_tasks_behind_a_switch(
    client: Client, judged: tuple[Job, Job], django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    f.login(client, "ann", "analyst")
    assert client.get("/agreement/").context["report"].judgments == 10
    _confirm(_task("broken"))
    client.get("/agreement/")  # the ledger, cached
    # the user, the grouped counts (kept tallies), the left-out trials' judgments grouped,
    # the reviewer pairs (kept tallies), the left-out trials' pairs.
    with django_assert_num_queries(5):
        response = client.get("/agreement/")
    html = response.content.decode()
    assert response.context["report"].judgments == 4
    assert "6 judgments left out" in html
    assert "include_defective=1" in html
    switched = client.get("/agreement/?include_defective=1")
    assert switched.context["report"].judgments == 10
    assert "6 judgments counted" in switched.content.decode()
    assert "include_defective=1" in switched.context["csv_query"]
    # The CSV's first row: the judge against the humans, over every trial; its n.
    lines = client.get("/agreement.csv").content.decode().splitlines()
    assert lines[1].split(",")[3] == "4"  # the sound task's 2 trials, 2 reviewers each
    lines = client.get("/agreement.csv?include_defective=1").content.decode().splitlines()
    assert lines[1].split(",")[3] == "8"  # and the broken task's 2 judged trials
    api = client.get("/api/agreement", headers=_api(client, "eve", "analyst")).json()
    assert api["judgments"] == 4


def test_the_export_command_writes_the_manifest_beside_the_file(
    runs: tuple[Job, Job], tmp_path: Any
) -> None:
    from django.core.management import call_command

    a, _ = runs
    _confirm(_task("broken"))
    output = tmp_path / "run-a.csv"
    call_command("export", "--format", "csv", "--filter", f"job={a.pk}", "-o", str(output))
    manifest = json.loads((tmp_path / "run-a.csv.manifest.json").read_text())
    assert manifest["filter"] == f"job={a.pk}"
    assert [t["task"] for t in manifest["left_out"][0]["tasks"]] == ["broken"]
    assert len(output.read_text().splitlines()) == 6  # the header and every trial


def test_the_jobs_list_and_the_jobs_api_leave_out_defective_tasks_behind_the_switch(
    client: Client, runs: tuple[Job, Job]
) -> None:
    a, _ = runs
    _confirm(_task("broken"))
    f.login(client, "ann", "analyst")
    html = client.get("/jobs/").content.decode()
    assert "4 trials of 1 task left out" in html  # three in run A, one in run B
    summaries = {job.name: summary for job, summary, _ in stats.jobs_page().rows}
    assert (summaries["run-a"].trial_count, summaries["run-b"].trial_count) == (2, 1)
    counted = {
        job.name: s for job, s, _ in stats.jobs_page(included=frozenset({"defective_task"})).rows
    }
    assert (counted["run-a"].trial_count, counted["run-b"].trial_count) == (5, 2)
    headers = _api(client, "eve", "analyst")
    listed = client.get("/api/jobs", headers=headers).json()["items"]
    assert sorted(j["summary"]["trial_count"] for j in listed) == [1, 2]
    detail = client.get(f"/api/jobs/{a.pk}", headers=headers).json()
    assert detail["summary"]["trial_count"] == 2
    assert [t["task"] for t in detail["by_task"]] == ["sound"]
    switched = client.get(f"/api/jobs/{a.pk}?include_defective=1", headers=headers).json()
    assert switched["summary"]["trial_count"] == 5
