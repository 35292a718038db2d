"""The trial filter's own fields: reviewers' latest judgments, the job picker, and the value
vocabulary they share ("(none)", a reviewer:judgment pair).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from datetime import date, datetime, time, timedelta
from typing import Any

from django import forms
from django.db.models import Exists, OuterRef
from django.utils.choices import BaseChoiceIterator, normalize_choices
from django.utils.timezone import get_current_timezone

from review import choices as job_lists
from review.choices import job_choices, newest_job
from review.models import Annotation
from rewards.models import Job

# In the exact-value filters (failure mode, task source, judge model): "has none".
NONE_VALUE = "(none)"


def exact_or_none(value: str) -> str:
    return "" if value == NONE_VALUE else value


JUDGMENTS = ("pass", "fail", "defer")
MAX_JUDGED = 10
# Conditions nested in one probe of the latest judgments (`TrialFilterForm._judged`).
JUDGED_NESTED = 4
MAX_JUDGED_LENGTH = 160  # a username (150) and ":judgment"


def parse_judged(value: str) -> tuple[str | None, str]:
    """One "latest judgments" condition: `fail` → (None, "fail"), `rita:fail` → ("rita", "fail").

    A bare judgment is some reviewer's latest; `username:judgment` is that reviewer's. The
    judgment follows the last colon, so any username (an imported one may hold colons or
    spaces) can be named. ValueError for anything else.
    """
    username, colon, judgment = value.rpartition(":")
    if judgment not in JUDGMENTS or (colon and not username):
        raise ValueError(value)
    return (username or None, judgment)


def judged_value(username: str | None, judgment: str) -> str:
    """The inverse of `parse_judged`: one value of a link's `judged` parameter."""
    return f"{username}:{judgment}" if username else judgment


class JudgedInputs(forms.Widget):
    """One text input per condition, and an empty one to add another; `judged` repeats."""

    # In the review app's own templates/: Django's form renderer reads app directories.
    template_name = "review/widgets/judged_inputs.html"

    def value_from_datadict(self, data: Any, files: Any, name: str) -> list[str]:
        getlist = getattr(data, "getlist", None)
        raw = getlist(name) if getlist else data.get(name)
        values = raw if isinstance(raw, list | tuple) else [raw]
        return [v for v in values if isinstance(v, str) and v.strip()]

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        return name not in data

    def get_context(self, name: str, value: Any, attrs: dict[str, Any] | None) -> dict[str, Any]:
        context = super().get_context(name, value, attrs)
        first = context["widget"]["attrs"]
        rest = {k: v for k, v in first.items() if k != "id"}
        values = [*(v for v in (value or []) if isinstance(v, str)), ""]
        # Only the first input carries the id (the label's target).
        context["widget"]["inputs"] = [
            {"value": text, "attrs": first if i == 0 else rest} for i, text in enumerate(values)
        ]
        return context


class JudgedField(forms.Field):
    """ "Latest judgments": conditions on the counted judgments, every one of which holds."""

    widget = JudgedInputs

    def to_python(self, value: Any) -> list[str]:
        return [v for v in (value or []) if isinstance(v, str) and v.strip()]

    def validate(self, value: Any) -> None:
        super().validate(value)
        if len(value) > MAX_JUDGED:
            raise forms.ValidationError(
                "At most %(n)s conditions.", params={"n": MAX_JUDGED}, code="max"
            )
        for text in value:
            # As every CharField: no NUL (PostgreSQL refuses it), and a username's length.
            if "\x00" in text or len(text) > MAX_JUDGED_LENGTH:
                raise forms.ValidationError(
                    "A condition holds no NUL character and at most %(n)s characters.",
                    params={"n": MAX_JUDGED_LENGTH},
                    code="invalid",
                )
            try:
                parse_judged(text)
            except ValueError as exc:
                raise forms.ValidationError(
                    "“%(value)s” is not a judgment (pass, fail, defer) or reviewer:judgment.",
                    params={"value": text[:200]},
                    code="invalid",
                ) from exc


def reviewed_by(day: date) -> Exists:
    """The outer trial has an annotation made by the end of `day` (in the current time zone).

    The same days as the job page's review progress, which truncates annotation times to
    dates in the current time zone.
    """
    end = datetime.combine(day + timedelta(days=1), time.min, tzinfo=get_current_timezone())
    return Exists(Annotation.objects.filter(trial=OuterRef("pk"), created_at__lt=end))


class FixedChoices(BaseChoiceIterator):
    """A filter field's options when they are constants: shared by every form. A form
    deep-copies its fields, and a ChoiceField its options with it: for the filter's
    fourteen choice fields that was two thirds of building the form, on every page."""

    def __init__(self, choices: Any) -> None:
        self.choices = tuple(normalize_choices(choices))

    def __iter__(self) -> Iterator[Any]:
        return iter(self.choices)

    def __copy__(self) -> FixedChoices:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FixedChoices:
        return self


class FixedChoiceField(forms.ChoiceField):
    """A ChoiceField whose options are constants (`FixedChoices`), shared by every form."""

    def __init__(self, *, choices: Any = (), **kwargs: Any) -> None:
        super().__init__(choices=FixedChoices(choices), **kwargs)


class JobChoices(BaseChoiceIterator):
    """A job <select>'s options: the empty one first ("All jobs" for a filter), then the
    newest jobs (`review.choices`, cached), then the chosen job when it is an older one, so
    that the <select> shows what the URL filters by. Validation uses the field's queryset,
    so any job can be named in the URL."""

    def __init__(
        self, empty_label: str = "All jobs", chosen: Callable[[], Job | None] | None = None
    ) -> None:
        self.empty_label = empty_label
        self.chosen = chosen

    def __iter__(self) -> Iterator[tuple[str, str]]:
        yield ("", self.empty_label)
        newest = job_choices()[: job_lists.JOB_CHOICES_LIMIT]
        yield from newest
        job = self.chosen() if self.chosen is not None else None
        if job is not None and str(job.pk) not in {value for value, _ in newest}:
            yield (str(job.pk), job.name)


def rendered_key(form: forms.Form, ignore: tuple[str, ...] = ()) -> str | None:
    """What a form's HTML with a job <select> depends on, as a cache key for `{% cache %}`:
    the values as given (but `ignore`) and the <select>'s options. None when a field has an
    error, whose message may depend on the database (a job that does not exist yet)."""
    if form.errors:
        return None
    getlist = getattr(form.data, "getlist", None)
    given = [
        (name, tuple(getlist(name) if getlist else [form.data[name]]))
        for name in sorted(form.data)
        if name not in ignore
    ]
    digest = hashlib.blake2b(repr((given, job_choices())).encode(), digest_size=16)
    return digest.hexdigest()


# What the job filter loads of a job: what the explorer shows of it and whether it finished.
JOB_FIELDS = ("id", "name", "finished_at")


class JobSelect(forms.Select):
    """A job <select>: its options written by one loop of its own template. Django's select
    template includes a template per option, and the newest hundred jobs cost 12 ms a
    <select> that way (two of them were most of the compare page)."""

    template_name = "review/widgets/job_select.html"


class JobField(forms.ModelChoiceField):  # type: ignore[type-arg]
    """The job filter. A job among the cached newest ones (the <select>'s options) is taken
    from that list, without a query; any other id is looked up as by ModelChoiceField. A job
    deleted less than the cache's lifetime ago (in another process) then filters to no rows.
    Either way the job holds its id, name and end (`JOB_FIELDS`), the rest deferred."""

    widget = JobSelect

    def to_python(self, value: Any) -> Job | None:
        if isinstance(value, str) and (newest := newest_job(value)) is not None:
            # As the field's queryset loads it.
            return Job.from_db(Job.objects.db, list(JOB_FIELDS), (int(value), *newest))
        job: Job | None = super().to_python(value)
        return job
