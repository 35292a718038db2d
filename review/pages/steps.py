"""The trial page's trajectory a chunk of steps at a time, its presented steps kept.

A long trajectory (thousands of steps, megabytes of JSON) is read, decoded and broken into
parts (`presenters.presented`) once per trial version; the result is kept in Django's cache
(`rewards.cache.steps_key`) as a small head (step count, counts by kind, schema) under the
trial's id, and its chunks of `size` presented steps under the trial's version. The page
looks the head up before it reads the trial, so that a trial whose steps are kept is read
without its trajectory, and it reads a chunk's steps only when its rendering is not kept
either (`{% cache %}` trajectory-steps). A running trial's trajectory grows: it is presented
anew on every request and never kept.

The page shows the chunk holding the step it was asked for (the first by default); the
next chunk loads when the reader reaches the end of the list (htmx), or as a plain link.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from django.core.cache import cache

from review.models import StepComment
from review.pages import presenters
from rewards.cache import STEPS_TTL, steps_head_key, steps_key, trial_version

# Steps shown at once: the first screen, and each chunk loaded when the reader gets there
# (the trial page and blind review alike).
PER_CHUNK = 50


class StoredTrial(Protocol):
    """What the kept steps need of a trial (a `Trial`, or blind review's narrow record)."""

    @property
    def pk(self) -> int: ...
    @property
    def content_digest(self) -> str: ...
    @property
    def updated_at(self) -> Any: ...
    @property
    def is_running(self) -> bool: ...


@dataclass(frozen=True)
class Head:
    """What a chunk of a trial's steps needs besides its steps."""

    key: str  # the kept steps' key, under the trial's version: the chunks' prefix
    total_steps: int
    counts: dict[str, int]
    schema: str
    unreadable: str

    def chunks(self, size: int) -> int:
        return max(1, -(-self.total_steps // size))

    def chunk_of(self, step: int | None, size: int) -> int:
        """The chunk holding step `step` (from 1; the first when None or out of range)."""
        if step is None or not 1 <= step <= self.total_steps:
            return 1
        return (step - 1) // size + 1


def kept_head(trial_id: int) -> Head | None:
    """The head kept for the trial, of whichever version was presented last."""
    head: Head | None = cache.get(steps_head_key(trial_id))
    return head


def current_head(trial: StoredTrial) -> Head | None:
    """The kept head, when it is of the trial's stored version (and the trial has finished):
    then its trajectory need not be read."""
    head = kept_head(trial.pk)
    if head is None or trial.is_running or head.key != steps_key(trial.pk, trial_version(trial)):
        return None
    return head


@dataclass
class Window:
    """A chunk of a trial's steps; its steps are read (or presented) when first asked for."""

    head: Head
    number: int  # the chunk, from 1
    size: int
    load: Callable[[], list[presenters.Step]] = field(repr=False)

    @cached_property
    def steps(self) -> list[presenters.Step]:
        """The chunk's presented steps, every part, unmarked."""
        return self.load()

    @property
    def first(self) -> int:
        return (self.number - 1) * self.size + 1

    @property
    def last(self) -> int:
        return min(self.number * self.size, self.head.total_steps)

    @property
    def next_step(self) -> int | None:
        """The first step of the next chunk, if there is one."""
        return self.last + 1 if self.last < self.head.total_steps else None

    @property
    def previous_step(self) -> int | None:
        """The first step of the previous chunk, if there is one."""
        return self.first - self.size if self.number > 1 else None


def chunk_links(window: Window, query: Any, page_url: str, chunk_url: str) -> dict[str, Any]:
    """The links either side of a chunk, for the template: the page at the next and the
    previous chunk's first step (`?at=N#step-N`), the next chunk alone (what scrolling loads)
    and the last step it holds. `query` (a mutable QueryDict) is the page's own, which the
    links carry; its `at` is set."""

    def at(step: int | None, fragment: bool = False) -> str:
        if step is None:
            return ""
        query["at"] = str(step)
        if fragment:
            return f"{chunk_url}?{query.urlencode()}"
        return f"{page_url}?{query.urlencode()}#step-{step}"

    return {
        "steps_window": window,
        "steps_next_url": at(window.next_step),
        "steps_next_fragment_url": at(window.next_step, fragment=True),
        "steps_next_last": min(window.last + PER_CHUNK, window.head.total_steps),
        "steps_previous_url": at(window.previous_step),
    }


class ShownChunk:
    """A chunk as the page shows it (what `presenters.Trajectory` says of a whole
    trajectory): the parts of `kinds`, `marks` marked, the current `comments` of its steps
    beside them. Its steps are built when first read: a kept rendering reads none."""

    def __init__(
        self,
        window: Window,
        kinds: Sequence[str],
        marks: presenters.Marks | None,
        comments: Sequence[StepComment],
    ) -> None:
        self.window = window
        self.kinds = list(kinds)
        self.marks = marks
        head = window.head
        self.total_steps = head.total_steps
        self.counts = head.counts
        self.schema = head.schema
        self.unreadable = head.unreadable
        # The current comments on this chunk's steps, oldest first.
        self.comments = [
            c
            for c in presenters.current_comments(comments)
            if window.first <= c.step <= window.last
        ]

    @cached_property
    def steps(self) -> list[presenters.Step]:
        shown = presenters.Trajectory(
            steps=presenters.shown(self.window.steps, self.kinds, self.marks)
        )
        return presenters.with_comments(shown, self.comments).steps


def window(
    trial: StoredTrial, raw: Callable[[], Any], step: int | None, size: int, head: Head | None
) -> Window:
    """The chunk of `size` steps of `trial` holding `step`. `head` is what `kept_head`
    found before the trial was read; `raw` reads the trajectory, called only when the
    trial's steps are not kept (or it is running)."""
    key = steps_key(trial.pk, trial_version(trial))
    if head is not None and head.key == key and not trial.is_running:
        number = head.chunk_of(step, size)
        chunk = f"{key}:{size}:{number}"

        def load() -> list[presenters.Step]:
            steps: list[presenters.Step] | None = cache.get(chunk)
            if steps is None:  # the chunk left the cache before its head
                return _present(trial, key, raw, size)[1][number - 1]
            return steps

        return Window(head, number, size, load)
    head, chunks = _present(trial, key, raw, size)
    number = head.chunk_of(step, size)
    return Window(head, number, size, lambda: chunks[number - 1])


def _present(
    trial: StoredTrial, key: str, raw: Callable[[], Any], size: int
) -> tuple[Head, list[list[presenters.Step]]]:
    """Every step presented and, unless the trial is running, kept: the head and chunks."""
    whole = presenters.presented(raw())
    head = Head(key, whole.total_steps, whole.counts, whole.schema, whole.unreadable)
    chunks = [whole.steps[n * size : (n + 1) * size] for n in range(head.chunks(size))]
    if not trial.is_running:
        kept: dict[str, Any] = {f"{key}:{size}:{n}": c for n, c in enumerate(chunks, start=1)}
        kept[steps_head_key(trial.pk)] = head
        cache.set_many(kept, STEPS_TTL)
    return head, chunks
