"""The trial filter form: every filter, the sort, and the keyset walk."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import pytest
from django import forms
from django.http import QueryDict

from review.filtering import paging
from review.filtering.form import TrialFilterForm
from review.filtering.paging import SORT_KEYS, decode_cursor, encode_cursor
from review.models import add_annotation
from rewards.models import Trial
from rewards.schemas import ErrorTag, IngestProblem
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def _names(params: dict[str, Any]) -> set[str]:
    form = TrialFilterForm(params)
    return {t.name for t in form.filter(Trial.objects.list_columns())}


def _walk(params: dict[str, Any], size: int) -> list[str]:
    """Every page of the explorer's keyset walk, following the next cursor."""
    seen: list[str] = []
    cursor = None
    for _ in range(1000):
        query = {**params, **({"after": cursor} if cursor else {})}
        form = TrialFilterForm(query)
        page = form.page(Trial.objects.list_columns(), size=size)
        assert not form.errors, form.errors
        seen.extend(t.name for t in page.rows)
        cursor = page.next_cursor
        if cursor is None:
            return seen
    raise AssertionError("the walk did not end")


@pytest.fixture
def varied() -> None:
    f.write(
        f.bundle(name="a-pass", agent="alpha", model="m1", task="t1", reward=0.9),
        f.bundle(
            name="b-fail",
            agent="beta",
            model="m2",
            task="t2",
            reward=0.1,
            scorers=[f.scorer(verdict="FAIL")],
            judges=[f.judge("FAIL", failure_mode="wrong units")],
            error_tags=[ErrorTag(category="unit mismatch", source="mechanical")],
        ),
        f.bundle(
            name="c-disagree",
            agent="alpha",
            model="m2",
            task="t1",
            reward=0.5,
            scorers=[f.scorer(verdict="FAIL")],
            judges=[f.judge("PASS")],
        ),
        f.bundle(
            name="d-unparseable",
            reward=0.0,
            output_parseable=False,
            errors=["output does not parse"],
            scorers=[],
            judges=[f.judge("UNPARSEABLE", raw_response="{oops")],
            status="failed",
            exception_type="AgentTimeoutError",
        ),
        f.bundle(
            name="e-advisory",
            reward=0.7,
            scorers=[f.scorer(), f.scorer("skips", "no_new_skips", "FAIL")],
            judges=[],
        ),
    )


@pytest.mark.usefixtures("varied")
@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, {"a-pass", "b-fail", "c-disagree", "d-unparseable", "e-advisory"}),
        ({"agent": "alpha"}, {"a-pass", "c-disagree"}),
        ({"model": "m2"}, {"b-fail", "c-disagree"}),
        ({"task": "t1"}, {"a-pass", "c-disagree"}),
        ({"reward_min": "0.5"}, {"a-pass", "c-disagree", "e-advisory"}),
        ({"reward_max": "0.1"}, {"b-fail", "d-unparseable"}),
        ({"reward_min": "0.2", "reward_max": "0.8"}, {"c-disagree", "e-advisory"}),
        ({"validity": "invalid"}, {"d-unparseable"}),
        ({"scorer_verdict": "FAIL"}, {"b-fail", "c-disagree"}),
        ({"scorer_verdict": "none"}, {"d-unparseable"}),
        ({"judge_verdict": "UNPARSEABLE"}, {"d-unparseable"}),
        ({"judge_verdict": "none"}, {"e-advisory"}),
        ({"run_badge": "FAIL"}, {"d-unparseable"}),
        ({"failure_mode": "wrong units"}, {"b-fail"}),
        ({"error_category": "unit mismatch"}, {"b-fail"}),
        ({"disagreement": "gate"}, {"c-disagree"}),
        ({"disagreement": "judge_pass_scorers_fail"}, {"c-disagree"}),
        ({"disagreement": "scorers_pass_judge_fail"}, set()),
        ({"q": "DISAGREE"}, {"c-disagree"}),
        ({"q": "beta"}, {"b-fail"}),
        (
            {"human_judgment": "unreviewed"},
            {"a-pass", "b-fail", "c-disagree", "d-unparseable", "e-advisory"},
        ),
    ],
)
def test_each_filter_narrows_the_trials(params: dict[str, str], expected: set[str]) -> None:
    assert _names(params) == expected


@pytest.mark.usefixtures("varied")
def test_human_filters_follow_the_annotations() -> None:
    reviewer = f.make_user("rita", "reviewer")
    high = Trial.objects.get(name="a-pass")
    low = Trial.objects.get(name="b-fail")
    add_annotation(trial_id=high.pk, reviewer=reviewer, judgment="fail")
    add_annotation(trial_id=low.pk, reviewer=reviewer, judgment="defer")
    assert _names({"human_judgment": "fail"}) == {"a-pass"}
    assert _names({"human_judgment": "defer"}) == {"b-fail"}
    assert "a-pass" not in _names({"human_judgment": "unreviewed"})
    assert _names({"disagreement": "human"}) == {"a-pass"}
    assert _names({"disagreement": "human_fail_automated_pass"}) == {"a-pass"}


@pytest.mark.usefixtures("varied")
def test_an_invalid_value_is_reported_and_narrows_nothing() -> None:
    form = TrialFilterForm({"reward_min": "lots", "agent": "alpha"})
    names = {t.name for t in form.filter(Trial.objects.all())}
    assert "reward_min" in form.errors
    assert names == {"a-pass", "c-disagree"}


def test_a_minimum_above_the_maximum_is_an_error() -> None:
    form = TrialFilterForm({"reward_min": "0.8", "reward_max": "0.2"})
    assert not form.is_valid()
    assert "reward_max" in form.errors


def test_the_canonical_query_keeps_only_the_parameters_in_use() -> None:
    data = QueryDict("q=&agent=alpha&job=&sort=-reward&after=abc&judge_verdict=FAIL")
    assert TrialFilterForm(data).canonical_query().urlencode() == (
        "agent=alpha&judge_verdict=FAIL&sort=-reward"
    )


# --- keyset -----------------------------------------------------------------------------
@pytest.fixture
def ties() -> list[str]:
    """23 trials with many equal sort values: rewards, agents, models and tasks repeat."""
    bundles = [
        f.bundle(
            name=f"tie-{i:02d}",
            reward=[0.5, 0.5, 0.25, 1.0][i % 4],
            agent=["alpha", "beta"][i % 2],
            model=["m1", "m2", "m3"][i % 3],
            task=["t1", "t2"][i % 2],
            job=["job-a", "job-b"][i % 2],
        )
        for i in range(23)
    ]
    return [t.name for t in f.write(*bundles)]


@pytest.mark.parametrize("sort", [f"{prefix}{key}" for key in SORT_KEYS for prefix in ("", "-")])
@pytest.mark.parametrize("size", [1, 4, 7])
def test_keyset_pages_return_each_trial_exactly_once_for_every_sort(
    ties: list[str], sort: str, size: int
) -> None:
    walked = _walk({"sort": sort}, size)
    assert sorted(walked) == sorted(ties)
    assert len(walked) == len(set(walked))


@pytest.mark.parametrize("sort", ["reward", "-reward", "agent", "-task"])
def test_keyset_pages_follow_the_same_order_as_one_big_query(ties: list[str], sort: str) -> None:
    everything = TrialFilterForm({"sort": sort}).ordered(Trial.objects.all())
    assert _walk({"sort": sort}, 5) == [t.name for t in everything]


@pytest.fixture
def names() -> list[str]:
    """Trials of five tasks (two of them share a name, from another source) in three jobs,
    interleaved so that no name's trials are consecutive ids."""
    tasks = [("t-b", "s1"), ("t-a", "s1"), ("t-c", "s1"), ("t-a", "s2"), ("t-d", "s1")]
    bundles = [
        f.bundle(
            name=f"n-{i:02d}",
            task=tasks[i % 5][0],
            task_source=tasks[i % 5][1],
            job=["job-b", "job-c", "job-a"][i % 3],
            agent=["alpha", "beta"][i % 2],
        )
        for i in range(31)
    ]
    return [t.name for t in f.write(*bundles)]


@pytest.mark.parametrize("sort", ["task", "-task", "job", "-job"])
@pytest.mark.parametrize("params", [{}, {"agent": "alpha"}])
@pytest.mark.parametrize(("most", "rows"), [(1, 200), (2, 200), (6, 200), (6, 2), (6, 3)])
def test_pages_sorted_by_a_name_read_name_by_name_in_the_order_of_one_big_query(
    names: list[str],
    sort: str,
    params: dict[str, str],
    most: int,
    rows: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `most`: names a page may read one by one, `rows`: rows of the task or job table read
    # for them; past either, the page is one sorted query.
    monkeypatch.setattr(paging, "MAX_NAMES_WALKED", most)
    monkeypatch.setattr(paging, "NAME_ROWS", rows)
    query = {**params, "sort": sort}
    everything = TrialFilterForm(query).ordered(TrialFilterForm(query).filter(Trial.objects.all()))
    expected = [t.name for t in everything]
    assert len(expected) == (16 if params else 31)
    for size in (1, 4, 9, 40):
        assert _walk(query, size) == expected


def test_a_page_sorted_by_task_reads_the_names_and_then_one_names_trials(
    names: list[str], django_assert_num_queries: Callable[..., Any]
) -> None:
    form = TrialFilterForm({"sort": "task"})
    with django_assert_num_queries(2):  # the task names, then the trials of the first name
        page = form.page(Trial.objects.list_columns(), size=3)
    assert [t.task.name for t in page.rows] == ["t-a"] * 3
    # The first name's trials, from both of its tasks, in id order.
    assert [t.name for t in page.rows] == ["n-01", "n-03", "n-06"]


def test_keyset_pages_respect_the_filter(ties: list[str]) -> None:
    walked = _walk({"sort": "-reward", "agent": "alpha"}, 3)
    assert sorted(walked) == sorted(n for i, n in enumerate(ties) if i % 2 == 0)


def test_a_cursor_made_for_another_sort_is_ignored_with_a_message(ties: list[str]) -> None:
    cursor = encode_cursor("reward", 0.5, 3)
    form = TrialFilterForm({"sort": "-id", "after": cursor})
    page = form.page(Trial.objects.all(), size=5)
    assert "after" in form.errors
    assert not page.is_continuation
    assert [t.name for t in page.rows] == sorted(ties, reverse=True)[:5]


@pytest.mark.parametrize("cursor", ["not-base64!", "W10", encode_cursor("reward", "x", 1)])
def test_a_garbled_cursor_falls_back_to_the_first_page(cursor: str) -> None:
    form = TrialFilterForm({"sort": "reward", "after": cursor})
    page = form.page(Trial.objects.all())
    assert not page.is_continuation
    assert "after" in form.errors


def test_a_cursor_round_trips_its_value_and_id() -> None:
    assert decode_cursor(encode_cursor("-reward", 0.125, 42), "-reward") == (0.125, 42)
    assert decode_cursor(encode_cursor("agent", "<b>", 7), "agent") == ("<b>", 7)


@pytest.mark.django_db
def test_the_job_select_lists_the_newest_jobs_and_keeps_an_older_selected_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from review import choices
    from review.filtering.form import TrialFilterForm
    from rewards.models import Job

    monkeypatch.setattr(choices, "JOB_CHOICES_LIMIT", 2)
    jobs = [Job.objects.create(name=f"job-{n:03d}") for n in range(5)]
    form = TrialFilterForm({"job": str(jobs[0].pk)})

    html = str(form["job"])

    assert html.count("<option") == 4  # "All jobs", the two newest, and the selected oldest
    # Each job named with its size and state (no trials, no finish time yet: running).
    assert f'<option value="{jobs[4].pk}">job-004 · 0 trials · running</option>' in html
    assert f'<option value="{jobs[0].pk}" selected>job-000</option>' in html
    assert "job-002" not in html
    assert form.is_valid()  # an older job is still a valid filter


@pytest.mark.django_db
def test_the_job_select_escapes_hostile_job_names() -> None:
    from review.filtering.form import TrialFilterForm
    from rewards.models import Job

    Job.objects.create(name='<script>alert(1)</script>"')
    html = str(TrialFilterForm({})["job"])
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&quot;" in html


def test_the_ingestion_problems_filter_finds_trials_stored_with_problems() -> None:
    problem = IngestProblem(file="scorers.json", field="[0]", message="verdict: bad")
    f.write(
        f.bundle(name="clean"),
        f.bundle(name="with-problem", detail={"ingest_problems": [problem]}),
    )

    assert _names({"problems": "with"}) == {"with-problem"}
    assert _names({"problems": "without"}) == {"clean"}
    assert _names({}) == {"clean", "with-problem"}


def test_every_filter_has_a_place_in_the_sidebar() -> None:
    """A new filter field must be put in a fieldset, or it never shows on the explorer."""
    form = TrialFilterForm({})
    grouped = [name for _, names in form.FIELDSETS for name in names]
    drawn_apart = {"q", "reward_min", "reward_max", "validity"}  # search box and reward range
    not_filters = {"sort", "after", "overlap", "blind", "view"}  # hidden state, queue settings
    assert len(grouped) == len(set(grouped))
    assert set(grouped) | drawn_apart | not_filters == set(form.fields)
    assert form.fieldsets[0][0] == "Run"


# --- latest judgments -------------------------------------------------------------------
@pytest.fixture
def judged() -> dict[str, Trial]:
    """rita and an imported reviewer whose name holds a colon and a space judge three trials.

    x: rita pass, "lab 7:b" fail · y: rita fail then pass, "lab 7:b" pass · z: rita defer.
    """
    rita = f.make_user("rita", "reviewer")
    imported = f.make_user("lab 7:b")
    x, y, z = f.write(*(f.bundle(name=name) for name in ("x", "y", "z")))
    for trial, reviewer, judgment in [
        (x, rita, "pass"),
        (x, imported, "fail"),
        (y, rita, "fail"),
        (y, imported, "pass"),
        (y, rita, "pass"),
        (z, rita, "defer"),
    ]:
        add_annotation(trial_id=trial.pk, reviewer=reviewer, judgment=judgment)
    return {"x": x, "y": y, "z": z}


@pytest.mark.usefixtures("judged")
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("judged=pass", {"x", "y"}),
        ("judged=fail", {"x"}),  # rita's fail on y is not her latest
        ("judged=rita:pass", {"x", "y"}),
        ("judged=rita:fail", set()),
        ("judged=lab+7%3Ab:fail", {"x"}),  # the judgment follows the last colon
        ("judged=rita:pass&judged=lab+7%3Ab:pass", {"y"}),  # every condition holds
        ("judged=rita:defer&judged=pass", set()),
        ("judged=nobody:pass", set()),
        ("judged=rita:defer", {"z"}),
    ],
)
def test_latest_judgments_narrow_to_trials_whose_latest_judgments_match(
    query: str, expected: set[str]
) -> None:
    form = TrialFilterForm(QueryDict(query))
    assert form.errors == {}
    assert {t.name for t in form.filter(Trial.objects.all())} == expected


@pytest.mark.usefixtures("judged")
def test_a_malformed_latest_judgment_is_reported_and_narrows_nothing() -> None:
    for value in ("maybe", "rita:", ":pass", "rita:maybe", "ri%00ta:pass", "r" * 160 + ":pass"):
        form = TrialFilterForm(QueryDict(f"judged={value}&judged=pass"))
        assert "judged" in form.errors
        assert {t.name for t in form.filter(Trial.objects.all())} == {"x", "y", "z"}


def test_latest_judgments_ride_in_the_canonical_query_and_render_one_input_each() -> None:
    form = TrialFilterForm(QueryDict("judged=rita:pass&judged=&judged=fail"))
    assert form.canonical_query().getlist("judged") == ["rita:pass", "fail"]
    assert ("Latest judgments (pass, or reviewer:pass)", "rita:pass, fail") in (
        form.active_filters()
    )
    html = str(form["judged"])
    assert html.count('name="judged"') == 3  # the two conditions and an empty one to add
    assert 'value="rita:pass"' in html


def test_a_job_among_the_cached_newest_is_taken_from_them_without_a_query(
    django_assert_num_queries: Any,
) -> None:
    from review.choices import job_choices

    trial = f.make_trial(job="nightly <7>")
    job_choices()  # what the explorer's <select> caches
    form = TrialFilterForm(QueryDict(f"job={trial.job_id}"))
    with django_assert_num_queries(0):
        assert form.is_valid()
    job = form.cleaned_data["job"]
    assert (job.pk, job.name) == (trial.job_id, "nightly <7>")
    assert not job._state.adding
    assert ("Job", "nightly <7>") in form.active_filters()
    assert set(Trial.objects.filter(job=job)) == {trial}


def test_each_form_has_its_own_fields_and_widgets() -> None:
    from review.filtering.form import TrialFilterForm

    one, two = TrialFilterForm({}), TrialFilterForm({})
    for name, base in TrialFilterForm.base_fields.items():
        mine, theirs = one.fields[name], two.fields[name]
        assert mine is not base
        assert mine is not theirs
        assert mine.widget is not base.widget
        assert mine.widget is not theirs.widget
        assert mine.widget.attrs is not theirs.widget.attrs
    # A change on one form stays there.
    one.fields["q"].widget.attrs["placeholder"] = "changed"
    one.fields["task"].required = True
    assert two.fields["q"].widget.attrs["placeholder"] != "changed"
    assert TrialFilterForm.base_fields["q"].widget.attrs["placeholder"] != "changed"
    assert two.fields["task"].required is False
    # Each form's job <select> has choices of its own (its chosen job among them).
    assert one.fields["job"].widget.choices is not two.fields["job"].widget.choices


def test_the_filter_selects_are_djangos_own() -> None:
    from review.filtering.form import TrialFilterForm

    form = TrialFilterForm({})
    for name in ("validity", "judge_verdict", "disagreement", "counted"):
        assert type(form.fields[name].widget) is forms.Select, name
    # The job <select> is Django's, with a template of its own and nothing rendered in Python.
    job = form.fields["job"].widget
    assert isinstance(job, forms.Select)
    assert type(job).render is forms.Select.render
    assert type(job).get_context is forms.Select.get_context


@pytest.mark.django_db
def test_the_job_select_writes_what_djangos_select_writes() -> None:
    from review.filtering.fields import JobSelect

    choices = [("", "All jobs"), ("7", "nightly <7>"), ("3", 'a "quoted" & job')]
    ours = JobSelect(attrs={"id": "id_job"}, choices=choices).render("job", "7")
    djangos = forms.Select(attrs={"id": "id_job"}, choices=choices).render("job", "7")
    assert " ".join(ours.split()) == " ".join(djangos.split())
    assert '<option value="7" selected>nightly &lt;7&gt;</option>' in ours


HOSTILE_QUERY = (
    "q=%3Cscript%3Ealert(1)%3C%2Fscript%3E%22&task=%22%20onmouseover%3D%22x&reward_min=lots"
    "&judge_verdict=FAIL&disagreement=gate&sort=-reward&after=%3Cb%3E"
    "&judged=%3Cscript%3E&judged=%22%20onfocus%3D%22x"
)


def test_hostile_filter_values_stay_text_in_every_field() -> None:
    from review.filtering.form import TrialFilterForm

    form = TrialFilterForm(QueryDict(HOSTILE_QUERY))
    html = "".join(str(form[name]) + str(form[name].errors) for name in form.fields)
    assert "<script" not in html
    assert 'onmouseover="' not in html
    assert 'onfocus="' not in html
    assert "&lt;script&gt;" in html
    assert '<ul class="errorlist"' in html  # reward_min=lots is reported


def test_the_shared_job_queryset_is_never_evaluated_in_place() -> None:
    from review.filtering.form import TrialFilterForm

    old = f.make_trial(job="old")
    shared = cast(forms.ModelChoiceField, TrialFilterForm.base_fields["job"]).queryset  # type: ignore[type-arg]
    assert shared is not None
    first = TrialFilterForm({"job": str(old.job_id)})
    assert first.is_valid(), first.errors
    first.as_p()  # the <select> rendered, options and all
    assert shared._result_cache is None
    # A job made since is found by the next form, whatever the earlier ones read.
    new = f.make_trial(job="new")
    second = TrialFilterForm({"job": str(new.job_id)})
    assert second.is_valid(), second.errors
    assert second.cleaned_data["job"].pk == new.job_id


def test_the_filters_options_are_shared_by_every_form_not_copied() -> None:
    a = TrialFilterForm({})
    b = TrialFilterForm({"disagreement": "human", "sort": "-reward", "overlap": "2"})
    shared = [
        name
        for name, field in a.fields.items()
        if isinstance(field, forms.ChoiceField) and not isinstance(field, forms.ModelChoiceField)
    ]
    assert len(shared) == 14
    for name in shared:
        mine, theirs = (cast(forms.ChoiceField, form.fields[name]) for form in (a, b))
        assert mine is not theirs  # each form's own field
        assert mine.choices is theirs.choices  # their options shared
    # Options grouped or typed still validate and render as before.
    assert b.is_valid(), b.errors
    assert b.cleaned_data["overlap"] == 2
    assert not TrialFilterForm({"sort": "nonsense"}).is_valid()
    html = str(b["disagreement"])
    assert '<optgroup label="Human vs automated">' in html
    assert '<option value="human" selected>Any human disagreement</option>' in html
