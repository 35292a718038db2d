"""The filter form's widgets written in Python match Django's own templates, escaping included."""

from __future__ import annotations

import pytest
from django import forms
from django.forms.renderers import DjangoTemplates
from django.http import QueryDict
from django.test.html import parse_html

from review.filters import TrialFilterForm
from review.widgets import FastSelect, FastWidgetRenderer
from tests import review_factories as f

pytestmark = pytest.mark.django_db

HOSTILE_QUERY = (
    "q=%3Cscript%3Ealert(1)%3C%2Fscript%3E%22&task=%22%20onmouseover%3D%22x&reward_min=lots"
    "&judge_verdict=FAIL&disagreement=gate&sort=-reward&after=%3Cb%3E"
)


def _render_all(form: TrialFilterForm) -> dict[str, str]:
    return {name: str(form[name]) + str(form[name].errors) for name in form.fields}


@pytest.mark.parametrize("query", ["", HOSTILE_QUERY])
def test_every_field_renders_as_django_renders_it(query: str) -> None:
    f.make_trial(job="job <i>one</i>")
    fast = TrialFilterForm(QueryDict(query))
    assert isinstance(fast.renderer, FastWidgetRenderer)
    django = TrialFilterForm(QueryDict(query), renderer=DjangoTemplates())
    selects = [name for name, field in fast.fields.items() if type(field.widget) is FastSelect]
    assert {"validity", "judge_verdict", "disagreement"} <= set(selects)
    for name in selects:
        widget = django.fields[name].widget
        django.fields[name].widget = forms.Select(attrs=widget.attrs, choices=widget.choices)
    ours, theirs = _render_all(fast), _render_all(django)
    for name in fast.fields:
        assert parse_html(ours[name]) == parse_html(theirs[name]), name


def test_hostile_values_stay_text() -> None:
    html = "".join(_render_all(TrialFilterForm(QueryDict(HOSTILE_QUERY))).values())
    assert "<script" not in html
    assert 'onmouseover="' not in html
    assert "&lt;script&gt;" in html
    assert '<ul class="errorlist"' in html  # reward_min=lots is reported
