"""The explorer's rows built in Python: the same cells the template showed, every value escaped."""

from __future__ import annotations

import re

import pytest

from review.rows import trial_rows
from review.views.explorer import ROW_FIELDS
from rewards.models import Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def _rows(query: str = "") -> str:
    return str(trial_rows(Trial.objects.values(*ROW_FIELDS), query))


def test_a_row_shows_the_trial_its_job_task_agent_reward_and_gates() -> None:
    trial = f.make_trial(
        name="t-1",
        job="nightly-7",
        task="voltage-drop",
        task_source="electrical",
        agent="claude-code",
        model="m-large",
        reward=0.93,
        scorers=[f.scorer(verdict="FAIL")],
        judges=[f.judge("PASS")],
    )
    row = _rows("judge_verdict=PASS&sort=-reward")
    assert row.count("<tr") == 1
    assert f'href="/trials/{trial.pk}/?judge_verdict=PASS&amp;sort=-reward"' in row
    for text in ("t-1", "nightly-7", "voltage-drop", "electrical", "claude-code", "m-large"):
        assert f'title="{text}">{text}<' in row
    assert ">0.93<" in row
    assert "badge-fail" in row  # scorers FAIL
    assert "badge-pass" in row  # judge PASS
    # Judge PASS with a scorer FAIL is seed 003's named disagreement: flagged, row marked.
    assert row.startswith('<tr class="disagrees">')
    assert "⚑</span> Judge PASS, scorers FAIL</span>" in row


def test_a_row_without_a_source_model_or_disagreement_leaves_them_out() -> None:
    f.make_trial(name="t-2", task_source="", model="", scorers=[], judges=[])
    row = _rows()
    assert row.startswith("<tr><td")
    assert 'class="sub clip" title=""' not in row.split('class="cell-task"')[1].split("</td>")[0]
    assert '<span class="sub clip" title="">—</span>' in row  # no model: an em dash
    assert "no scorers" in row
    assert "no judge" in row
    assert "⚑" not in row
    assert re.findall(r'href="([^"]+)"', row)[0].startswith("/trials/")
    assert "?" not in re.findall(r'href="([^"]+)"', row)[0]


def test_hostile_text_in_every_cell_is_escaped() -> None:
    f.write(f.hostile_bundle())
    row = _rows('q=<script>"')
    assert "<script" not in row
    assert "<img" not in row
    assert 'onerror="' not in row
    assert 'onmouseover="' not in row
    assert "&lt;script&gt;" in row
    assert "&quot;" in row
    # The only tags are the row's own.
    tags = set(re.findall(r"<([a-z]+)", row))
    assert tags <= {"tr", "td", "a", "span"}


def test_rows_are_one_string_for_the_whole_page() -> None:
    f.make_trials(3)
    assert _rows().count("</tr>") == 3


def test_the_header_marks_the_current_sort_and_escapes_its_links() -> None:
    from django.http import QueryDict

    from review.rows import header_cells
    from review.views.explorer import columns_for

    query = QueryDict("agent=%3Cb%3Ex%22&sort=-reward")
    html = str(header_cells(columns_for("-reward", query)))
    assert html.count("<th ") == 9
    reward = next(cell for cell in html.split("</th>") if ">Reward<" in cell)
    assert 'class="num"' in reward
    assert 'aria-sort="descending"' in reward
    assert 'data-state="descending"' in reward
    assert "sort=reward" in reward  # a click turns it ascending
    assert "<b>" not in html
    assert "&amp;" in html
    assert re.search(r'<th scope="col">Scorers</th>', html)
    assert html.count('aria-sort="none"') == 3  # trial, task, agent · model


def test_the_header_is_built_once_per_sort_filter_and_script_prefix() -> None:
    from django.http import QueryDict
    from django.urls import get_script_prefix, set_script_prefix

    from review.rows import header_cells
    from review.views.explorer import columns_for, header

    first = header("-reward", "agent=a", "/")
    assert header("-reward", "agent=a", "/") is first
    assert str(first) == str(header_cells(columns_for("-reward", QueryDict("agent=a"))))
    assert "agent=b" in str(header("-reward", "agent=b", "/"))
    assert 'aria-sort="ascending"' in str(header("reward", "agent=a", "/"))
    before = get_script_prefix()
    set_script_prefix("/desk/")
    try:
        assert 'href="/desk/?' in str(header("-reward", "agent=a", "/desk/"))
    finally:
        set_script_prefix(before)


def test_the_path_tag_is_the_url_tag_for_a_url_without_arguments() -> None:
    from django.template import engines
    from django.urls import get_script_prefix, set_script_prefix

    def render(source: str) -> str:
        return engines["django"].from_string("{% load review_tags %}" + source).render({})

    for name in ("review:explorer", "review:export-csv", "login", "logout"):
        assert render(f"{{% path '{name}' %}}") == render(f"{{% url '{name}' %}}")
    assert render("{% path 'review:queue' as there %}[{{ there }}]") == "[/queue/]"
    before = get_script_prefix()
    set_script_prefix("/desk/")
    try:
        assert render("{% path 'review:queue' %}") == "/desk/queue/"
    finally:
        set_script_prefix(before)
