"""Judge citations the page can follow (issue 24, item 2): the judge is shown numbered steps
and cites them with a quote; a citation is checked against the trajectory before it is
stored (found: its range, kept for the page to mark; else "citation not found"), and the
fact-check matrix links each found one to its step with the quote marked."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from rewards import citations
from rewards.export import iter_bundles
from rewards.ingest.writer import BundleWriter
from rewards.models import JudgeVerdict, Trial
from rewards.schemas import Citation, FactCheck, TrialBundle
from rewards.scoring.grading import rejudge
from rewards.scoring.judge import ANSWER_SCHEMA, SYSTEM_PROMPT, JudgeSettings
from tests import review_factories as f
from tests.ingest_helpers import ingest, write_files
from tests.judge_server import GOOD_ANSWER, FakeJudge, judge_server

__all__ = ["judge_server"]

# The factory trial's step 2 (tests.review_factories.bundle): its parts in order are the
# reasoning "V = I * R.", the message "I will compute it.", the tool call's arguments
# (indented JSON) and the observation "3.2 V".
OBSERVATION = 3
TOOL_CALL = 2
TOOL_CALL_TEXT = '{\n  "command": "python calc.py"\n}'


def _checks(*checks: tuple[str, list[tuple[int, str]]]) -> list[FactCheck]:
    return [
        FactCheck(
            claim=claim,
            status="verified",
            evidence="",
            citations=[Citation(step=step, quote=quote) for step, quote in cited],
        )
        for claim, cited in checks
    ]


def _cited_trial(*checks: tuple[str, list[tuple[int, str]]], **kwargs: Any) -> Trial:
    judge = f.judge("PASS")
    judge.fact_checks = _checks(*checks)
    return f.make_trial(judges=[judge], **kwargs)


def _stored_citations(trial: Trial) -> list[list[dict[str, Any]]]:
    verdict = JudgeVerdict.objects.filter(trial=trial).order_by(*JudgeVerdict.LATEST_FIRST)[0]
    return [check.get("citations", []) for check in verdict.fact_checks]


# --- the check ---------------------------------------------------------------------------------
def test_a_quote_matches_with_whitespace_collapsed_and_its_range_is_in_the_original_text() -> None:
    text = "ran the suite\n\n  14   passed, 0 failed"
    start, end = citations.find(text, citations.normalised(" 14 passed,\n0 failed "))  # type: ignore[misc]
    assert text[start:end] == "14   passed, 0 failed"
    assert citations.find(text, "14 Passed") is None  # case-sensitive
    assert citations.find(text, "14 passed, 1 failed") is None
    assert citations.find(text, "") is None


def test_the_first_occurrence_wins() -> None:
    assert citations.find("ok ok  ok", "ok ok") == (0, 5)


@pytest.mark.django_db
def test_a_citation_whose_quote_is_not_in_its_step_is_stored_as_not_found() -> None:
    trial = _cited_trial(
        ("the drop is 3.2 V", [(2, "3.2 V")]),
        # The quote is in step 2, not in step 1; step 9 does not exist; nowhere says 14 passed.
        ("the tests pass", [(1, "3.2 V"), (9, "3.2 V"), (2, "14 passed")]),
    )
    found, missing = _stored_citations(trial)
    assert found == [
        {"step": 2, "quote": "3.2 V", "found": True, "part": OBSERVATION, "start": 0, "end": 5}
    ]
    # The fact check is kept; each of its citations is marked not found, with no range.
    assert missing == [
        {"step": 1, "quote": "3.2 V", "found": False},
        {"step": 9, "quote": "3.2 V", "found": False},
        {"step": 2, "quote": "14 passed", "found": False},
    ]


@pytest.mark.django_db
def test_a_range_a_bundle_claims_is_never_trusted() -> None:
    bundle = f.bundle(judges=[f.judge("PASS")])
    bundle.judge_verdicts[0].fact_checks = [
        FactCheck(
            claim="c",
            status="verified",
            citations=[
                Citation(step=2, quote="not there", found=True, part=0, start=0, end=3),
                Citation(step=2, quote='"command": "python calc.py"', found=False),
            ],
        )
    ]
    (trial,) = f.write(bundle)
    start = TOOL_CALL_TEXT.index('"command"')
    assert _stored_citations(trial) == [
        [
            {"step": 2, "quote": "not there", "found": False},
            {
                "step": 2,
                "quote": '"command": "python calc.py"',
                "found": True,
                "part": TOOL_CALL,
                "start": start,
                "end": start + len('"command": "python calc.py"'),
            },
        ]
    ]


@pytest.mark.django_db
def test_a_trial_with_citations_round_trips_through_the_jsonl_export_unchanged() -> None:
    _cited_trial(("drop", [(2, "3.2 V")]), ("tests", [(2, "14 passed")]), name="t-cited")
    exported = [b.model_dump_json() for b in iter_bundles(Trial.objects.all())]
    assert '"found":true' in exported[0]
    assert '"found":false' in exported[0]
    again = BundleWriter().write_many([TrialBundle.model_validate_json(b) for b in exported])
    assert [o.status for o in again] == ["unchanged"]
    Trial.objects.all().delete()
    fresh = BundleWriter().write_many([TrialBundle.model_validate_json(b) for b in exported])
    assert [o.status for o in fresh] == ["ingested"]
    assert [b.model_dump_json() for b in iter_bundles(Trial.objects.all())] == exported


@pytest.mark.django_db
def test_a_judge_json_may_carry_citations_in_the_judges_form(tmp_path: Path) -> None:
    judge = {
        "verdict": "PASS",
        "task_completion": 5,
        "instruction_adherence": 4,
        "efficiency": 3,
        "reasoning": "Computed the drop correctly.",
        "fact_checks": [
            {
                "claim": "3.2 V",
                "status": "verified",
                "evidence": "calc",
                "citations": [{"step": 2, "quote": "3.2 V"}],
            }
        ],
    }
    write_files(
        tmp_path / "t-001",
        {"logs/verifier/reward.json": '{"reward": 1.0}', "judge.json": json.dumps(judge)},
    )
    assert ingest(tmp_path).error == ""
    verdict = JudgeVerdict.objects.get()
    assert verdict.verdict == "PASS"
    # A contract trial stores no trajectory: there is no step the quote could be found in.
    assert verdict.fact_checks[0]["citations"] == [{"step": 2, "quote": "3.2 V", "found": False}]


@pytest.mark.django_db
def test_a_malformed_citation_in_judge_json_is_an_unparseable_verdict(tmp_path: Path) -> None:
    judge = {
        "verdict": "PASS",
        "task_completion": 5,
        "instruction_adherence": 4,
        "efficiency": 3,
        "fact_checks": [{"claim": "c", "status": "verified", "citations": [{"step": "two"}]}],
    }
    write_files(
        tmp_path / "t-001",
        {"logs/verifier/reward.json": '{"reward": 1.0}', "judge.json": json.dumps(judge)},
    )
    assert ingest(tmp_path).error == ""
    verdict = JudgeVerdict.objects.get()
    assert verdict.verdict == "UNPARSEABLE"
    assert "citations" in verdict.reasoning


# --- asking the judge ----------------------------------------------------------------------------
@pytest.mark.django_db
def test_the_judge_sees_numbered_steps_and_its_citations_are_checked_before_storing(
    judge_server: FakeJudge,
) -> None:
    trial = f.make_trial(name="t-judged", judges=[])
    judge_server.answer(
        {
            **GOOD_ANSWER,
            "fact_checks": [
                {
                    "claim": "the drop is 3.2 V",
                    "status": "verified",
                    "evidence": "the calculation printed it",
                    "citations": [{"step": 2, "quote": "3.2 V"}],
                },
                {
                    "claim": "all tests pass",
                    "status": "refuted",
                    "evidence": "no test ran",
                    "citations": [{"step": 2, "quote": "14 passed"}],
                },
            ],
        }
    )
    row = rejudge(trial, JudgeSettings.from_env())
    (request,) = judge_server.requests
    system, user = (m["content"] for m in request["messages"])
    assert system == SYSTEM_PROMPT
    assert '"citations"' in system
    assert "[step 1] user\n" in user
    assert "[step 2] agent\n" in user
    fact_check = ANSWER_SCHEMA["$defs"]["AnswerFactCheck"]
    assert fact_check["required"] == ["claim", "status", "evidence", "citations"]
    assert ANSWER_SCHEMA["$defs"]["AnswerCitation"]["required"] == ["step", "quote"]

    row.refresh_from_db()
    found, missing = (check["citations"] for check in row.fact_checks)
    assert found == [
        {"step": 2, "quote": "3.2 V", "found": True, "part": OBSERVATION, "start": 0, "end": 5}
    ]
    assert missing == [{"step": 2, "quote": "14 passed", "found": False}]
    assert row.fact_checks[1]["claim"] == "all tests pass"  # kept


# --- the page ------------------------------------------------------------------------------------
def _page(trial: Trial, query: str = "") -> str:
    return f"/trials/{trial.pk}/{query}"


@pytest.mark.django_db
def test_the_matrix_links_a_found_citation_and_names_one_not_found(client: Client) -> None:
    trial = _cited_trial(("drop", [(2, "3.2 V")]), ("tests", [(2, "14 passed")]))
    verdict = JudgeVerdict.objects.get(trial=trial)
    f.login(client, "rita", "reviewer")
    html = client.get(_page(trial)).content.decode()
    assert f'href="/trials/{trial.pk}/?cite={verdict.pk}.0#step-2"' in html
    assert f"cite={verdict.pk}.1" not in html
    assert "citation not found" in html
    assert 'id="step-2"' in html
    assert "<mark" not in html  # nothing is marked until a citation is followed


def _plain_marks(html: str) -> str:
    """The page with each highlight's `<mark …>` written `<mark>`, once checked to be the
    judge citation's (review.pages.presenters.CITED_REF)."""
    marks = re.findall(r"<mark[^>]*>", html)
    assert all('data-refs="cited-quote"' in mark for mark in marks), marks
    return re.sub(r"<mark[^>]*>", "<mark>", html)


@pytest.mark.django_db
def test_a_followed_citation_marks_its_quote_in_its_step_escaped(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    hostile = f"ran <b>it</b> {f.HOSTILE}"
    trial = _cited_trial(
        ("drop", [(2, "3.2 V")]),
        ("hostile", [(2, "<b>it</b>")]),
        detail={
            "trajectory": {
                "steps": [
                    {"step_id": 1, "source": "user", "message": "Compute the voltage drop."},
                    {"step_id": 2, "source": "agent", "message": "x", "observation": hostile},
                    {"step_id": 3, "source": "agent", "observation": "3.2 V again"},
                ]
            }
        },
    )
    verdict = JudgeVerdict.objects.get(trial=trial)
    # The factory's quote "3.2 V" is not in this trajectory's step 2: only check 1 is found.
    assert [c[0]["found"] for c in _stored_citations(trial)] == [False, True]
    f.login(client, "rita", "reviewer")
    client.get(_page(trial))  # the user's roles and the page's cards are kept from here on
    # As the page without `cite` (1 the user, 2 the trial, 3 the step comments, 4 the
    # reviewer's profile; its results, scorers and verdicts kept rendered), and 5 the cited
    # verdict's checks, 6 the scorers (their card is kept under the page's query, which its
    # links carry).
    with django_assert_num_queries(4):
        client.get(_page(trial))
    with django_assert_num_queries(6):
        response = client.get(_page(trial, f"?cite={verdict.pk}.1"))
    html = _plain_marks(response.content.decode())
    step = html.split('id="step-2"', 1)[1].split("</li>", 1)[0]
    assert "<mark>&lt;b&gt;it&lt;/b&gt;</mark>" in step
    assert "ran <mark>" in step
    assert "&lt;script&gt;" in step
    assert "<script>window.__pwned" not in html
    assert html.count("<mark>") == 1
    assert "step-cited" in html.split('id="step-2"', 1)[0].rsplit("<li", 1)[1]


@pytest.mark.django_db
def test_another_trials_verdict_or_a_bad_cite_marks_nothing(client: Client) -> None:
    trial = _cited_trial(("drop", [(2, "3.2 V")]))
    other = _cited_trial(("drop", [(2, "3.2 V")]))
    theirs = JudgeVerdict.objects.get(trial=other)
    f.login(client, "rita", "reviewer")
    for query in (f"?cite={theirs.pk}.0", "?cite=abc", f"?cite={theirs.pk}.99", "?cite=1.0.0"):
        response = client.get(_page(trial, query))
        assert response.status_code == 200
        assert "<mark" not in response.content.decode()
    mine = JudgeVerdict.objects.get(trial=trial)
    html = _plain_marks(client.get(_page(trial, f"?cite={mine.pk}.0")).content.decode())
    assert re.search(r'id="step-2".*?<mark>3\.2 V</mark>', html, re.S)
