"""The trial filter: one Django form for the explorer, and later the queue, exports and API.

The form parses the query string (everything the explorer shows lives in the URL), narrows a
Trial queryset, orders it, and walks it by keyset: a page is "the next N rows after (sort
value, id)", never an OFFSET, and nothing counts the table.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any, cast

from django import forms
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import BooleanField, Exists, F, Func, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.expressions import RawSQL
from django.http import QueryDict
from django.utils.choices import BaseChoiceIterator
from django.utils.timezone import get_current_timezone

from review import choices as job_lists
from review.choices import job_choices, newest_job_name
from review.filtering.search import search
from review.models import Annotation, LatestJudgment
from rewards.models import (
    Disagreement,
    ErrorTag,
    GateOutcome,
    HumanDisagreement,
    HumanJudgment,
    Job,
    Task,
    Trial,
    TrialQuerySet,
)

PAGE_SIZE = 50

ANY = ""
NOT_RUN = "none"
UNREVIEWED = "unreviewed"
ANY_GATE_DISAGREEMENT = "gate"
ANY_HUMAN_DISAGREEMENT = "human"
# In the exact-value filters (failure mode, task source, judge model): "has none".
NONE_VALUE = "(none)"


@dataclass(frozen=True)
class SortKey:
    """A sortable column: its URL name, the ORM path and the Python type of its values."""

    name: str
    field: str
    kind: type
    label: str


SORT_KEYS = {
    key.name: key
    for key in (
        SortKey("id", "id", int, "Trial"),
        SortKey("task", "task__name", str, "Task"),
        SortKey("agent", "agent_name", str, "Agent"),
        SortKey("model", "model_name", str, "Model"),
        SortKey("reward", "reward", float, "Reward"),
        SortKey("job", "job__name", str, "Job"),
    )
}
DEFAULT_SORT = "-id"
SORT_CHOICES = [
    (f"{prefix}{key.name}", f"{key.label} {'↓' if prefix else '↑'}")
    for key in SORT_KEYS.values()
    for prefix in ("-", "")
]

VALIDITY_CHOICES = [(ANY, "Any"), ("valid", "Valid"), ("invalid", "Invalid")]
WITH_PROBLEMS, WITHOUT_PROBLEMS = "with", "without"
PROBLEM_CHOICES = [
    (ANY, "Any"),
    (WITH_PROBLEMS, "Has ingestion problems"),
    (WITHOUT_PROBLEMS, "No ingestion problems"),
]
SCORER_CHOICES = [(ANY, "Any"), ("PASS", "PASS"), ("FAIL", "FAIL"), (NOT_RUN, "No scorers")]
JUDGE_CHOICES = [
    (ANY, "Any"),
    ("PASS", "PASS"),
    ("FAIL", "FAIL"),
    ("UNPARSEABLE", "UNPARSEABLE"),
    (NOT_RUN, "No judge"),
]
RUN_CHOICES = [(ANY, "Any"), ("PASS", "PASS"), ("FAIL", "FAIL"), (NOT_RUN, "Still running")]
HUMAN_CHOICES = [
    (ANY, "Any"),
    *[(value, label) for value, label in HumanJudgment.choices if value],
    (UNREVIEWED, "Unreviewed"),
]
# The named disagreements and their labels are the rewards app's (seed 003's three cases,
# and humans against the automated outcome).
GATE_DISAGREEMENTS = [(value, label) for value, label in Disagreement.choices if value]
HUMAN_DISAGREEMENTS = [(value, label) for value, label in HumanDisagreement.choices if value]
DISAGREEMENT_CHOICES: list[Any] = [
    (ANY, "Any"),
    ("Gates", [(ANY_GATE_DISAGREEMENT, "Any gate disagreement"), *GATE_DISAGREEMENTS]),
    (
        "Human vs automated",
        [(ANY_HUMAN_DISAGREEMENT, "Any human disagreement"), *HUMAN_DISAGREEMENTS],
    ),
]


OUTCOME_CHOICES = [(ANY, "Any"), ("pass", "pass (reward ≥ threshold)"), ("fail", "fail")]
MAX_REVIEWERS_PER_TRIAL = 5
OVERLAP_CHOICES = [(str(k), str(k)) for k in range(1, MAX_REVIEWERS_PER_TRIAL + 1)]
BLIND_CHOICES = [(ANY, "Off"), ("1", "On")]
COUNTED_CHOICES = [(ANY, "Every reviewer's latest"), ("blind", "Blind annotations only")]
REVIEWER_JUDGMENT_CHOICES = [(ANY, "Any"), ("pass", "pass"), ("fail", "fail"), ("defer", "defer")]


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


class CursorError(ValueError):
    pass


def encode_cursor(sort: str, value: Any, pk: int) -> str:
    raw = json.dumps([sort, value, pk], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode_cursor(cursor: str, sort: str) -> tuple[Any, int]:
    """(sort value, id) from a cursor made for `sort`; CursorError for anything else."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise CursorError("unreadable cursor") from exc
    if not (isinstance(data, list) and len(data) == 3 and data[0] == sort):
        raise CursorError("cursor made for another sort")
    _, value, pk = data
    kind = SORT_KEYS[sort.lstrip("-")].kind
    if isinstance(pk, bool) or not isinstance(pk, int):
        raise CursorError("cursor id is not an integer")
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value), pk
    if isinstance(value, kind) and not isinstance(value, bool):
        return value, pk
    raise CursorError("cursor value has the wrong type")


@dataclass(frozen=True)
class Page:
    rows: list[Any]  # Trials, or dicts for a .values() queryset
    next_cursor: str | None
    is_continuation: bool


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


class JobField(forms.ModelChoiceField):  # type: ignore[type-arg]
    """The job filter. A job among the cached newest ones (the <select>'s options) is taken
    from that list, without a query; any other id is looked up as by ModelChoiceField. A job
    deleted less than the cache's lifetime ago (in another process) then filters to no rows."""

    def to_python(self, value: Any) -> Job | None:
        if isinstance(value, str) and (name := newest_job_name(value)) is not None:
            # As the field's queryset would load it: id and name, the rest deferred.
            return Job.from_db(Job.objects.db, ["id", "name"], (int(value), name))
        job: Job | None = super().to_python(value)
        return job


# Parameters of the explorer's query string that narrow no trial: the sort, the page, and
# the queue's settings.
_NOT_FILTERS = frozenset({"sort", "after", "overlap", "blind"})


class TrialFilterForm(forms.Form):
    """Every explorer filter; an unknown or invalid value narrows nothing and is reported."""

    q = forms.CharField(
        required=False,
        max_length=200,
        label="Search",
        widget=forms.TextInput(
            attrs={"type": "search", "placeholder": "task, trial, agent or model name"}
        ),
    )
    job = JobField(
        queryset=Job.objects.only("id", "name").order_by("-id"),
        required=False,
        empty_label="All jobs",
    )
    task = forms.CharField(required=False, max_length=255, label="Task (exact name)")
    agent = forms.CharField(required=False, max_length=255, label="Agent")
    model = forms.CharField(required=False, max_length=255, label="Model")
    reward_min = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="Reward ≥",
        widget=forms.NumberInput(attrs={"step": "0.01"}),
    )
    reward_max = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="Reward ≤",
        widget=forms.NumberInput(attrs={"step": "0.01"}),
    )
    validity = forms.ChoiceField(choices=VALIDITY_CHOICES, required=False)
    scorer_verdict = forms.ChoiceField(choices=SCORER_CHOICES, required=False, label="Scorers")
    judge_verdict = forms.ChoiceField(choices=JUDGE_CHOICES, required=False, label="Judge")
    run_badge = forms.ChoiceField(choices=RUN_CHOICES, required=False, label="Run")
    human_judgment = forms.ChoiceField(choices=HUMAN_CHOICES, required=False, label="Human")
    # What a job's review-progress bar links to: trials reviewed by the end of that day.
    reviewed_by = forms.DateField(
        required=False,
        label="Reviewed by (day)",
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
    )
    disagreement = forms.ChoiceField(choices=DISAGREEMENT_CHOICES, required=False)
    failure_mode = forms.CharField(required=False, max_length=255, label="Failure mode")
    error_category = forms.CharField(required=False, max_length=255, label="Error category")
    problems = forms.ChoiceField(choices=PROBLEM_CHOICES, required=False, label="Ingestion")
    # Agreement filters: what the agreement page's cells link to.
    source = forms.CharField(required=False, max_length=255, label="Task source")
    outcome = forms.ChoiceField(choices=OUTCOME_CHOICES, required=False, label="Verifier outcome")
    judge_model = forms.CharField(required=False, max_length=255, label="Judge model")
    reviewer_judgment = forms.ChoiceField(
        choices=REVIEWER_JUDGMENT_CHOICES, required=False, label="A reviewer's latest judgment"
    )
    # Repeated: every condition holds. What a reviewer pair's cells link to.
    judged = JudgedField(
        required=False,
        label="Latest judgments (pass, or reviewer:pass)",
        widget=JudgedInputs(attrs={"placeholder": "e.g. rita:fail"}),
    )
    counted = forms.ChoiceField(choices=COUNTED_CHOICES, required=False, label="Reviews counted")
    # A queue setting, not a filter: how many reviewers each trial waits for. It lives here
    # so that it rides along in every queue and trial-page URL with the filter.
    overlap = forms.TypedChoiceField(
        choices=OVERLAP_CHOICES, coerce=int, required=False, label="Reviewers per trial"
    )
    # A queue setting too: blind review hides the reward, the judge verdict and the other
    # reviewers' annotations until the reviewer has submitted.
    blind = forms.ChoiceField(choices=BLIND_CHOICES, required=False, label="Blind review")
    sort = forms.ChoiceField(choices=SORT_CHOICES, required=False, widget=forms.HiddenInput)
    after = forms.CharField(required=False, max_length=2000, widget=forms.HiddenInput)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The <select> shows the cached newest jobs (read only when it is rendered: a
        # fragment has none); validation still finds any job. Set on each form: copying a
        # ModelChoiceField resets its widget's choices.
        self.fields["job"].widget.choices = JobChoices(chosen=lambda: self._value("job"))

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        low, high = cleaned.get("reward_min"), cleaned.get("reward_max")
        if low is not None and high is not None and low > high:
            self.add_error("reward_max", "must not be below the minimum")
        return cleaned

    def _value(self, name: str) -> Any:
        """A field's cleaned value; a field that failed validation filters nothing."""
        self.is_valid()
        return getattr(self, "cleaned_data", {}).get(name)

    @property
    def current_sort(self) -> str:
        return self._value("sort") or DEFAULT_SORT

    @property
    def reviewers_per_trial(self) -> int:
        return int(self._value("overlap") or 1)

    @property
    def blind_review(self) -> bool:
        return bool(self._value("blind") == "1")

    @property
    def blind_only(self) -> bool:
        """Agreement counts only blind annotations (each reviewer's latest blind one)."""
        return bool(self._value("counted") == "blind")

    @property
    def only_job(self) -> Job | None:
        """The job, when it is the only filter that narrows the trials (agreement then reads
        that job's kept tallies)."""
        if self._in_use(_NOT_FILTERS | {"counted"}) != ["job"]:
            return None
        return cast(Job, self._value("job"))

    @property
    def is_filtered(self) -> bool:
        return bool(self._in_use(_NOT_FILTERS))

    def _in_use(self, besides: frozenset[str]) -> list[str]:
        """The fields with a value, in form order, `besides` left out."""
        return [
            name
            for name in self.fields
            if name not in besides and self._value(name) not in (None, "", [])
        ]

    # The sidebar's groups after the search box; the reward range has a fieldset of its own
    # (two fields side by side), shown second.
    FIELDSETS: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("Run", ("job", "task", "agent", "model")),
        (
            "Gates and review",
            (
                "scorer_verdict",
                "judge_verdict",
                "run_badge",
                "human_judgment",
                "reviewed_by",
                "disagreement",
            ),
        ),
        ("Failures", ("failure_mode", "error_category", "problems")),
        (
            "Agreement",
            ("source", "outcome", "judge_model", "reviewer_judgment", "judged", "counted"),
        ),
    )

    @property
    def fieldsets(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(legend, [self[name] for name in names]) for legend, names in self.FIELDSETS]

    @property
    def sidebar_key(self) -> str | None:
        """What the sidebar's HTML depends on, as a cache key: the values as given (the page's
        cursor aside) and the job <select>'s options. None when a field has an error, whose
        message may depend on the database (a job that does not exist yet)."""
        if self.errors:
            return None
        getlist = getattr(self.data, "getlist", None)
        given = [
            (name, tuple(getlist(name) if getlist else [self.data[name]]))
            for name in sorted(self.data)
            if name != "after"
        ]
        digest = hashlib.blake2b(repr((given, job_choices())).encode(), digest_size=16)
        return digest.hexdigest()

    def canonical_query(self) -> QueryDict:
        """The filter and sort as a query string holds them: only the parameters in use."""
        query = QueryDict(mutable=True)
        for name in self.fields:
            if name == "after":
                continue
            getlist = getattr(self.data, "getlist", None)
            raw = getlist(name) if getlist else [self.data.get(name)]
            values = [v for v in raw if isinstance(v, str) and v.strip()]
            if values:
                query.setlist(name, values)
        return query

    # -- narrowing ----------------------------------------------------------------------
    def filter(self, queryset: QuerySet[Trial]) -> TrialQuerySet:
        # Every Trial queryset is a TrialQuerySet (`Trial.objects`), with the domain filters.
        queryset = cast(TrialQuerySet, queryset)
        value = self._value
        if job := value("job"):
            # By the key: a model instance costs the lookup a walk over the relation.
            queryset = queryset.filter(job_id=job.pk)
        for name, field in (
            ("task", "task__name"),
            ("agent", "agent_name"),
            ("model", "model_name"),
        ):
            if text := value(name):
                queryset = queryset.filter(**{field: text})
        if (low := value("reward_min")) is not None:
            queryset = queryset.filter(reward__gte=low)
        if (high := value("reward_max")) is not None:
            queryset = queryset.filter(reward__lte=high)
        if validity := value("validity"):
            queryset = queryset.filter(is_valid=validity == "valid")
        for name in ("scorer_verdict", "judge_verdict", "run_badge"):
            if choice := value(name):
                queryset = queryset.filter(
                    **{name: GateOutcome.NONE if choice == NOT_RUN else choice}
                )
        if human := value("human_judgment"):
            queryset = (
                queryset.needs_review()
                if human == UNREVIEWED
                else queryset.filter(human_judgment=human)
            )
        if (day := value("reviewed_by")) is not None:
            queryset = queryset.filter(reviewed_by(day))
        queryset = self._filter_disagreement(queryset, value("disagreement"))
        if failure_mode := value("failure_mode"):
            queryset = queryset.filter(failure_mode=exact_or_none(failure_mode))
        if problems := value("problems"):
            queryset = (
                queryset.with_ingest_problems()
                if problems == WITH_PROBLEMS
                else queryset.filter(problem_count=0)
            )
        queryset = self._filter_agreement(queryset)
        if category := value("error_category"):
            queryset = queryset.filter(
                Exists(ErrorTag.objects.filter(trial=OuterRef("pk"), category=category))
            )
        if q := value("q"):
            queryset = search(queryset, q)
        return queryset

    def _filter_agreement(self, queryset: TrialQuerySet) -> TrialQuerySet:
        """The filters the agreement page links to, one per kind of cell."""
        value = self._value
        if (source := value("source")) is not None and source != "":
            queryset = queryset.filter(task__source=exact_or_none(source))
        if outcome := value("outcome"):
            passed = Q(reward__gte=F("task__pass_threshold"))
            queryset = queryset.filter(passed if outcome == "pass" else ~passed)
        if judge_model := value("judge_model"):
            queryset = queryset.filter(judge_model=exact_or_none(judge_model))
        conditions = [parse_judged(text) for text in value("judged") or []]
        if judgment := value("reviewer_judgment"):
            conditions.insert(0, (None, judgment))
        # Nested a few at a time: SQLite's parser refuses deeper nesting (MAX_JUDGED + 1).
        for i in range(0, len(conditions), JUDGED_NESTED):
            queryset = queryset.filter(pk__in=self._judged(conditions[i : i + JUDGED_NESTED]))
        return queryset

    def _judged(self, conditions: list[tuple[str | None, str]]) -> RawSQL:
        """The trials with every counted judgment of `conditions` (each by that reviewer, if
        named): each an indexed probe of the latest judgments (`latestjudgment_reviewer_idx`
        with a reviewer, the unique (trial, reviewer) index on the trial).

        The conditions nest, each one's probe inside the previous one's on its trial, so the
        trial query has a single semi-join: with one per condition PostgreSQL spent longer
        planning the join order (3.5 ms for two) than running the query (0.5 ms). Written as
        SQL (the column is one of two of ours, every value a parameter): built through the
        ORM, the nested subqueries cost the explorer more than the query itself (1.5 ms).
        The subquery does not refer to the outer query, so it stays correct wherever the
        filter is used, inside other subqueries too.
        """
        quote = connection.ops.quote_name
        table, column = quote(LatestJudgment._meta.db_table), quote(self.counted_field)
        users = quote(User._meta.db_table)
        sql, params = "", list[Any]()
        for depth, (username, judgment) in reversed(list(enumerate(conditions))):
            alias = f"j{depth}"
            where = [f"{alias}.{column} = %s"]
            probe: list[Any] = [judgment]
            if username is not None:
                # The reviewer's id, looked up once (not a join per probed trial).
                reviewer = f"(SELECT id FROM {users} WHERE username = %s)"  # noqa: S608 (ours)
                where.append(f"{alias}.reviewer_id = {reviewer}")
                probe.append(username)
            if depth:
                where.append(f"{alias}.trial_id = j{depth - 1}.trial_id")
            if sql:
                where.append(f"EXISTS ({sql})")
            selected = f"{alias}.trial_id" if depth == 0 else "1"
            conditions_sql = " AND ".join(where)
            sql = f"SELECT {selected} FROM {table} {alias} WHERE {conditions_sql}"  # noqa: S608
            params = [*probe, *params]
        return RawSQL(sql, params)  # noqa: S611 (our names; every value is a parameter)

    def counted_judgments(self) -> QuerySet[LatestJudgment]:
        """The judgments agreement counts: each reviewer's latest (blind ones, if asked)."""
        rows = LatestJudgment.objects.all()
        return rows.exclude(blind_judgment="") if self.blind_only else rows

    @property
    def counted_field(self) -> str:
        """The column of `counted_judgments` that holds the judgment counted."""
        return "blind_judgment" if self.blind_only else "judgment"

    @staticmethod
    def _filter_disagreement(queryset: TrialQuerySet, kind: str | None) -> TrialQuerySet:
        if not kind:
            return queryset
        if kind == ANY_GATE_DISAGREEMENT:
            return queryset.with_gate_disagreement()
        if kind == ANY_HUMAN_DISAGREEMENT:
            return queryset.with_human_disagreement()
        if kind in Disagreement.values:
            return queryset.filter(gate_disagreement=kind)
        return queryset.filter(human_disagreement=kind)

    # -- ordering and keyset ------------------------------------------------------------
    def ordered(self, queryset: QuerySet[Trial]) -> QuerySet[Trial]:
        return _order(queryset, self.current_sort)

    def page(self, queryset: QuerySet[Trial], size: int = PAGE_SIZE) -> Page:
        """The first `size` rows of `queryset` under this filter, after the page's cursor."""
        sort = self.current_sort
        key = SORT_KEYS[sort.lstrip("-")]
        cursor = self._value("after")
        after: tuple[Any, int] | None = None
        if cursor:
            try:
                after = decode_cursor(cursor, sort)
            except CursorError:
                self.add_error("after", "This page link is out of date; showing the first page.")
        rows = _first_rows(self.filter(queryset), sort, after, size + 1)
        next_cursor = None
        if len(rows) > size:
            rows = rows[:size]
            last = rows[-1]
            next_cursor = encode_cursor(sort, _sort_value(last, key.field), _sort_value(last, "id"))
        return Page(rows=rows, next_cursor=next_cursor, is_continuation=after is not None)

    @property
    def sorts_by_name(self) -> bool:
        """Sorted by a related row's name (task, job): `neighbour_ids` finds the neighbours,
        as `neighbours` cannot (its subqueries would sort every trial)."""
        return SORT_KEYS[self.current_sort.lstrip("-")].field in BY_NAME

    def neighbour_ids(self, trial: Trial) -> tuple[int | None, int | None]:
        """(previous, next) trial ids around `trial` in this filter, sorted by a name: a walk
        each way from the trial's own place."""
        sort = self.current_sort
        name = sort.lstrip("-")
        reverse = name if sort.startswith("-") else f"-{name}"
        matching = self.filter(Trial.objects.all())
        here = (_sort_value(trial, SORT_KEYS[name].field), trial.pk)

        def first(order: str) -> int | None:
            rows = _first_rows(matching, order, here, 1)
            return rows[0].pk if rows else None

        return first(reverse), first(sort)

    def neighbours(self) -> dict[str, Subquery]:
        """Annotations `previous_id` and `next_id`: the trials either side of the outer row.

        Each is a keyset probe in this filter's order: the first row strictly after (or,
        walking the reversed order, strictly before) the outer row's (sort value, id),
        LIMIT 1. No OFFSET and no COUNT, so the cost does not grow with the position; the
        outer row need not match the filter itself (a trial just annotated may have left an
        "unreviewed" filter) and its neighbours are still the rows around its place.
        """
        sort = self.current_sort
        key = SORT_KEYS[sort.lstrip("-")]
        descending = sort.startswith("-")
        reverse = sort.lstrip("-") if descending else f"-{sort}"
        matching = self.filter(Trial.objects.all())
        value, pk = OuterRef(key.field), OuterRef("pk")

        def first_after(walk_descending: bool, order: str) -> Subquery:
            rows = matching.filter(_after(key.field, value, pk, walk_descending))
            return Subquery(_order(rows, order).values("id")[:1])

        return {
            "next_id": first_after(descending, sort),
            "previous_id": first_after(not descending, reverse),
        }

    def active_filters(self) -> list[tuple[str, str]]:
        """(label, value) for every filter in use, as a person reads them; the sort left out."""
        self.is_valid()
        cleaned = getattr(self, "cleaned_data", {})
        described: list[tuple[str, str]] = []
        for name, field in self.fields.items():
            value = cleaned.get(name)
            if name in {"sort", "after"} or value in (None, "", []):
                continue
            if isinstance(value, list):
                value = ", ".join(value)
            if isinstance(field, forms.ChoiceField) and not isinstance(
                field, forms.ModelChoiceField
            ):
                value = _choice_label(field.choices, value)
            described.append((str(field.label or name.replace("_", " ").capitalize()), str(value)))
        return described


def _choice_label(choices: Any, value: Any) -> Any:
    for option, label in choices:
        if isinstance(label, list | tuple):
            found = _choice_label(label, value)
            if found is not value:
                return found
        elif option == value:
            return label
    return value


def _order(queryset: QuerySet[Trial], sort: str) -> QuerySet[Trial]:
    key = SORT_KEYS[sort.lstrip("-")]
    prefix = "-" if sort.startswith("-") else ""
    # The id breaks ties in the sort value, in the same direction, so (value, id) is a
    # total order the cursor can resume from.
    if key.field == "id":
        return queryset.order_by(f"{prefix}id")
    return queryset.order_by(f"{prefix}{key.field}", f"{prefix}id")


def _first_rows(
    queryset: QuerySet[Trial], sort: str, after: tuple[Any, int] | None, limit: int
) -> list[Any]:
    """The first `limit` rows of `queryset` in `sort` order, strictly after the (value, id)
    `after` when given: name by name for a sort by a related row's name, else one sorted
    query from the keyset cursor."""
    key = SORT_KEYS[sort.lstrip("-")]
    descending = sort.startswith("-")
    if key.field in BY_NAME:
        walked = _walk_names(queryset, key.field, descending, after, limit)
        if walked is not None:
            return walked
    return list(_first_rows_query(queryset, sort, after, limit))


def _first_rows_query(
    queryset: QuerySet[Trial], sort: str, after: tuple[Any, int] | None, limit: int
) -> QuerySet[Trial]:
    """`queryset` in `sort` order from the (value, id) `after` on, `limit` rows: one query."""
    key = SORT_KEYS[sort.lstrip("-")]
    ordered = _order(queryset, sort)
    if after is not None:
        ordered = ordered.filter(_after_row(key.field, *after, sort.startswith("-")))
    return ordered[:limit]


# Sorts by the name of a related row, a trial's task or job: few such rows, many trials each.
# Sorted by ORDER BY over the join, the database reads every trial of the first name (or
# more) before it can return a page: half a second at a million trials. `_walk_names` lists
# the names in the database's own order instead, then reads each name's trials in id order
# by the index that leads with the relation: a page reads one name or two.
BY_NAME: dict[str, tuple[type[Task] | type[Job], str]] = {
    "task__name": (Task, "task_id"),
    "job__name": (Job, "job_id"),
}
# Names a page may read one by one. A filter that leaves so few trials a name that a page
# spans more of them is selective enough for one sorted query over what it matches.
MAX_NAMES_WALKED = 6


# Rows of the named table read for one walk: enough for MAX_NAMES_WALKED names unless
# names repeat a great deal (then the page is one sorted query).
NAME_ROWS = 200


def _name_groups(
    model: type[Task] | type[Job], descending: bool, start: str | None
) -> tuple[list[tuple[str, list[int]]], bool]:
    """The distinct names from `start` on (all of them without one), each with the ids of
    its rows, in the database's ORDER BY name (descending: reversed); at most NAME_ROWS rows
    are read. Also: whether those are all the names there are from `start` on (otherwise
    the last, maybe incomplete, name is left out)."""
    rows = model.objects.order_by("-name" if descending else "name", "id")
    if start is not None:
        rows = rows.filter(**{"name__lte" if descending else "name__gte": start})
    fetched = list(rows.values_list("name", "id")[:NAME_ROWS])
    groups: list[tuple[str, list[int]]] = []
    for name, pk in fetched:
        if groups and groups[-1][0] == name:
            groups[-1][1].append(pk)
        else:
            groups.append((name, [pk]))
    complete = len(fetched) < NAME_ROWS
    return (groups if complete else groups[:-1]), complete


def _walk_names(
    queryset: QuerySet[Trial],
    field: str,
    descending: bool,
    after: tuple[Any, int] | None,
    limit: int,
) -> list[Any] | None:
    """The first `limit` rows of `queryset` in (name, id) order strictly after `after`,
    read name by name; None when that would read more than MAX_NAMES_WALKED names (or more
    names than one read of the named table gives), for the caller to sort in SQL instead."""
    model, column = BY_NAME[field]
    groups, complete = _name_groups(model, descending, after[0] if after else None)
    if after is not None and (not groups or groups[0][0] != after[0]):
        return None  # the cursor's name is gone
    rows: list[Any] = []
    for walked, (name, ids) in enumerate(groups):
        if walked == MAX_NAMES_WALKED:
            return None
        trials = queryset.filter(**{f"{column}__in": ids})
        if after is not None and name == after[0]:
            trials = (
                trials.filter(id__lt=after[1]) if descending else trials.filter(id__gt=after[1])
            )
        rows += trials.order_by("-id" if descending else "id")[: limit - len(rows)]
        if len(rows) >= limit:
            return rows
    return rows if complete else None


def _after(field: str, value: Any, pk: Any, descending: bool) -> Q:
    """Rows strictly after (value, pk) in the order.

    Written as `value >= v AND (value > v OR id > pk)` rather than a bare OR so that the
    leading range condition can start an index scan on (field, id) at the cursor.
    """
    if field == "id":
        return Q(id__lt=pk) if descending else Q(id__gt=pk)
    op, strict, id_op = ("lte", "lt", "lt") if descending else ("gte", "gt", "gt")
    return Q(**{f"{field}__{op}": value}) & (
        Q(**{f"{field}__{strict}": value}) | Q(**{f"id__{id_op}": pk})
    )


def _after_row(field: str, value: Any, pk: int, descending: bool) -> Any:
    """Rows strictly after (value, pk), as one row comparison: `(field, id) > (value, pk)`.

    The database starts its (field, id) index scan exactly at the cursor, however many rows
    share the cursor's value (a page deep in "reward, ascending" sits among thousands of
    zeros, which `_after`'s form would read and discard).
    """
    if field == "id":
        return Q(id__lt=pk) if descending else Q(id__gt=pk)
    row, cursor = Row(F(field), F("id")), Row(Value(value), Value(pk))
    return RowLessThan(row, cursor) if descending else RowGreaterThan(row, cursor)


class Row(Func):
    """A row value, `(a, b)`: what a keyset compares, in the order of its index."""

    template = "(%(expressions)s)"


class RowGreaterThan(Func):
    """`(a, b) > (x, y)`, a row comparison in SQL (PostgreSQL; SQLite since 3.15). The
    database starts a scan of the (a, b) index at (x, y); the equivalent OR of column
    comparisons would not be planned as one index range."""

    arg_joiner = " > "
    template = "%(expressions)s"
    output_field = BooleanField()


class RowLessThan(RowGreaterThan):
    """`(a, b) < (x, y)`: as `RowGreaterThan`, walking the index backwards."""

    arg_joiner = " < "


def _sort_value(trial: Trial | dict[str, Any], field: str) -> Any:
    if isinstance(trial, dict):  # a row of .values(): keys are the field paths
        return trial[field]
    if field == "id":
        return trial.pk
    obj: Any = trial
    for part in field.split("__"):
        obj = getattr(obj, part)
    return obj
