"""The explorer's rows and column headers, as its template writes them: the same cells, links
and attributes, every value escaped."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests import review_factories as f

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def _tbody(client: Client, url: str = "/") -> str:
    """The rows of the explorer's table (the more/end row left out)."""
    html = client.get(url).content.decode()
    body = html.split('<tbody id="trial-rows">')[1].split("</tbody>")[0]
    return re.sub(r'<tr class="(more|end)-row".*', "", body, flags=re.S)


def _thead(client: Client, url: str = "/") -> str:
    html = client.get(url).content.decode()
    return html.split("<thead>")[1].split("</thead>")[0]


@pytest.fixture
def reviewer(client: Client) -> Client:
    f.login(client, "rita", "reviewer")
    return client


def test_a_row_shows_the_trial_its_job_task_agent_reward_and_gates(reviewer: Client) -> None:
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
    row = _tbody(reviewer, "/?judge_verdict=PASS&sort=-reward")
    assert row.count("<tr") == 1
    assert f'href="/trials/{trial.pk}/?judge_verdict=PASS&amp;sort=-reward"' in row
    for text in ("t-1", "nightly-7", "voltage-drop", "electrical", "claude-code", "m-large"):
        assert f'title="{text}">{text}<' in row
    assert ">0.93<" in row
    assert "validity-ok" in row
    assert "badge-fail" in row  # scorers FAIL
    assert "badge-pass" in row  # judge PASS
    # Judge PASS with a scorer FAIL is seed 003's named disagreement: flagged, row marked.
    assert '<tr class="disagrees">' in row
    assert "⚑</span> Judge PASS, scorers FAIL</span>" in row


def test_a_row_without_a_source_model_or_disagreement_leaves_them_out(reviewer: Client) -> None:
    f.make_trial(name="t-2", task_source="", model="", scorers=[], judges=[])
    row = _tbody(reviewer)
    assert re.search(r"<tr>\s*<td", row)
    assert "disagrees" not in row
    assert 'class="sub clip"' not in row.split('class="cell-task')[1].split("</td>")[0]
    assert '<span class="sub clip" title="">—</span>' in row  # no model: an em dash
    assert "no scorers" in row
    assert "no judge" in row
    assert "⚑" not in row
    link = re.findall(r'href="([^"]+)"', row)[0]
    assert link.startswith("/trials/")
    assert "?" not in link


def test_hostile_text_in_every_cell_is_escaped(reviewer: Client) -> None:
    f.write(f.hostile_bundle())
    row = _tbody(reviewer)
    assert "<script" not in row
    assert "<img" not in row
    assert 'onerror="' not in row
    assert 'onmouseover="' not in row
    assert "&lt;script&gt;" in row
    assert "&quot;" in row
    # The only tags are the row's own.
    tags = set(re.findall(r"<([a-z]+)", row))
    assert tags <= {"tr", "td", "a", "span", "time"}


def test_the_filter_rides_on_each_row_link_escaped(reviewer: Client) -> None:
    f.make_trial(name="t-3", agent='<b>x"')
    row = _tbody(reviewer, "/?agent=%3Cb%3Ex%22")
    assert row.count("<tr") == 1
    href = re.findall(r'href="([^"]+)"', row)[0]
    assert href.endswith("?agent=%3Cb%3Ex%22")
    assert "<b>" not in row


def test_the_header_marks_the_current_sort_and_escapes_its_links(reviewer: Client) -> None:
    f.make_trial(agent='<b>x"')
    html = _thead(reviewer, "/?agent=%3Cb%3Ex%22&sort=-reward")
    assert html.count("<th ") == 9
    reward = next(cell for cell in html.split("</th>") if ">Reward<" in cell)
    assert 'class="num"' in reward
    assert 'aria-sort="descending"' in reward
    assert 'data-state="descending"' in reward
    assert "sort=reward" in reward  # a click turns it ascending
    assert 'hx-target="#results"' in reward
    assert 'hx-push-url="true"' in reward
    assert "<b>" not in html
    assert "&amp;" in html
    assert re.search(r'<th scope="col" class="col-minor">Scorers</th>', html)
    assert html.count('aria-sort="none"') == 3  # trial, task, agent · model


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
