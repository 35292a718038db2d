"""Reviewers at once against the production server, and a server worker killed under them.

gunicorn with three workers serves the test database on a loopback port (tests/live_gunicorn.py);
reviewers post annotations from threads at the same time, half through the trial page's form
(session cookie and CSRF token, as a browser sends them) and half through the API (bearer
tokens). Issue 26: the exact number of rows is stored, no answer is a 5xx, and every kept tally
equals a recount; with a worker SIGKILLed in the middle of requests, every annotation whose
request was acknowledged is stored (a request cut off with its worker may or may not be) and
the server keeps answering.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from django.test import Client

from review import tokens
from review.models import Annotation
from rewards.models import Trial
from tests import review_factories as f
from tests.conftest import purge_review_data
from tests.live_gunicorn import CUT_OFF, Gunicorn, Http
from tests.task_worker import database_environment
from tests.test_agreement_tallies import assert_kept_equals_recount

pytestmark = pytest.mark.django_db(transaction=True)

WORKERS = 3
REVIEWERS = 8
POSTS_EACH = 8
JUDGMENTS = ("pass", "fail", "defer")


@pytest.fixture(scope="module")
def gunicorn(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gunicorn]:
    """One server for the module (starting its workers is most of a test's time); it reads
    the test database, whatever each test put there."""
    log = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    server = Gunicorn(database_environment(), workers=WORKERS, log=log)
    try:
        server.wait_ready(WORKERS)
        yield server
    finally:
        server.stop()


@pytest.fixture
def server(gunicorn: Gunicorn) -> Iterator[Gunicorn]:
    yield gunicorn
    # Annotations are append-only (a trigger): the flush after the test cannot remove them.
    purge_review_data()


@dataclass
class Reviewer:
    """One reviewer's way in: the trial page's form (a session) or the API (a token)."""

    name: str
    http: Http
    bearer: str = ""
    csrf: str = ""
    sent: list[tuple[str, int | str]] = field(default_factory=list)

    def annotate(self, trial: int, judgment: str, note: str) -> int | str:
        try:
            if self.bearer:
                answer = self.http.post_json(
                    f"/api/trials/{trial}/annotations",
                    {"judgment": judgment, "notes": note},
                    self.bearer,
                )
            else:
                answer = self.http.post_form(
                    f"/trials/{trial}/annotations/",
                    {"judgment": judgment, "notes": note},
                    self.csrf,
                )
            outcome: int | str = answer.status
            # The form's answer is a redirect back to the trial, never to the login page.
            if "/accounts/login" in answer.headers.get("location", ""):
                outcome = "sent to the login page"
        except CUT_OFF as exc:  # cut off: the worker died with the request
            outcome = type(exc).__name__
        self.sent.append((note, outcome))
        return outcome

    @property
    def acknowledged(self) -> set[str]:
        return {note for note, outcome in self.sent if outcome in (201, 302)}


def reviewers(server: Gunicorn, trials: list[Trial]) -> list[Reviewer]:
    """REVIEWERS reviewers, every other one through the API; each form user has opened a
    trial page through the server (its CSRF cookie and token come from there)."""
    people = []
    for n in range(REVIEWERS):
        user = f.make_user(f"reviewer-{n}", "reviewer")
        http = server.http
        if n % 2:
            people.append(Reviewer(user.username, http, bearer=tokens.create_token(user)[1]))
            continue
        client = Client()
        client.force_login(user)
        http.cookies["sessionid"] = client.cookies["sessionid"].value
        csrf = http.csrf_token(f"/trials/{trials[0].pk}/")
        people.append(Reviewer(user.username, http, csrf=csrf))
    return people


def run_at_once(people: list[Reviewer], work: object) -> None:
    start = threading.Barrier(len(people))

    def run(person: Reviewer) -> None:
        start.wait(timeout=30)
        work(person)  # type: ignore[operator]

    threads = [threading.Thread(target=run, args=(p,)) for p in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a reviewer's requests never finished"


def stored_notes() -> list[str]:
    return list(Annotation.objects.values_list("notes", flat=True))


def test_reviewers_posting_at_once_through_form_and_api_are_all_stored_exactly_once(
    server: Gunicorn,
) -> None:
    trials = [f.make_trial(name=f"t{i}", reward=0.2 + 0.3 * i) for i in range(3)]
    people = reviewers(server, trials)

    def work(person: Reviewer) -> None:
        for i in range(POSTS_EACH):
            trial = trials[i % len(trials)].pk
            person.annotate(trial, JUDGMENTS[(i + len(person.name)) % 3], f"{person.name}/{i}")

    run_at_once(people, work)

    outcomes = [outcome for p in people for _, outcome in p.sent]
    expected = {"API": 201, "form": 302}
    for person in people:
        way = "API" if person.bearer else "form"
        assert {o for _, o in person.sent} == {expected[way]}, (person.name, server.output())
    assert len(outcomes) == REVIEWERS * POSTS_EACH
    notes = stored_notes()
    assert len(notes) == REVIEWERS * POSTS_EACH
    assert set(notes) == {note for p in people for note, _ in p.sent}
    # Every trial's count as the explorer shows it, and every kept tally, equal a recount.
    for trial in Trial.objects.all():
        assert trial.annotation_count == Annotation.objects.filter(trial=trial).count()
    assert_kept_equals_recount()


def test_a_worker_killed_mid_requests_loses_no_acknowledged_annotation(server: Gunicorn) -> None:
    trials = [f.make_trial(name=f"t{i}", reward=0.2 + 0.3 * i) for i in range(3)]
    people = reviewers(server, trials)
    posts = 16
    killed: list[int] = []
    done = threading.Event()

    def work(person: Reviewer) -> None:
        for i in range(posts):
            trial = trials[i % len(trials)].pk
            person.annotate(trial, JUDGMENTS[(i + len(person.name)) % 3], f"{person.name}/{i}")

    def killer() -> None:
        # Twice, each time once some annotations are acknowledged and requests are in flight.
        for wanted in (REVIEWERS * 3, REVIEWERS * 10):
            while not done.is_set() and sum(len(p.acknowledged) for p in people) < wanted:
                time.sleep(0.01)
            if done.is_set():
                return
            victim = next(pid for pid in server.workers() if pid not in killed)
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    thread = threading.Thread(target=killer)
    thread.start()
    try:
        run_at_once(people, work)
    finally:
        done.set()
        thread.join(timeout=30)

    assert len(killed) == 2, "the workers were killed while reviewers posted"
    outcomes = [outcome for p in people for _, outcome in p.sent]
    assert not [o for o in outcomes if isinstance(o, int) and o >= 500], server.output()
    assert {o for o in outcomes if isinstance(o, int)} <= {201, 302}
    acknowledged = {note for p in people for note in p.acknowledged}
    notes = stored_notes()
    # Every acknowledged annotation is stored, once; what is stored was sent.
    assert acknowledged <= set(notes)
    assert len(notes) == len(set(notes))
    assert set(notes) <= {note for p in people for note, _ in p.sent}
    assert len(acknowledged) >= len(outcomes) - 2 * REVIEWERS
    # The master replaced the workers: the server answers every reviewer again.
    server.wait_ready(WORKERS)
    for person in people:
        assert person.annotate(trials[0].pk, "pass", f"{person.name}/after") in (201, 302)
    assert_kept_equals_recount()
