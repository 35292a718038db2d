"""`manage.py grading_worker`: the task worker production runs (django-tasks-db's `db_worker`)
with the recovery of grading batches beside it.

django-tasks-db never runs again a task whose worker died, so a thread of this command calls
`rewards.scoring.tasks.recover` every `--recover-every` seconds: the item a killed runner held
goes back to the queue once its heartbeat has been silent for a lease, the runner's task is
marked failed, and the batch gets a new runner. Every worker runs it; a second runner for a
batch finds nothing left to claim and ends. The same thread gives a filter batch whose lister
died a new one (`review.grading.recover_listing`), and queues again an upload whose worker
died mid-ingest (`rewards.uploads.recover`).
"""

from __future__ import annotations

import logging
import threading
from argparse import ArgumentParser
from typing import Any

from django.db import connection
from django_tasks_db.management.commands.db_worker import Command as DbWorkerCommand

from review.grading import recover_listing
from rewards import uploads
from rewards.scoring import tasks

log = logging.getLogger(__name__)


class Command(DbWorkerCommand):
    help = "Run a task worker (db_worker) that also resumes grading batches of dead workers"

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--recover-every",
            type=float,
            default=30.0,
            help="Seconds between two looks for grading batches to resume (default: %(default)s)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        every = max(0.1, float(options.pop("recover_every")))
        stop = threading.Event()
        thread = threading.Thread(
            target=_recover_periodically,
            args=(every, stop),
            name="grading-recovery",
            daemon=True,
        )
        thread.start()
        try:
            super().handle(*args, **options)
        finally:
            stop.set()


def _recover_periodically(every: float, stop: threading.Event) -> None:
    while not stop.wait(every):
        try:
            tasks.recover()
            recover_listing()
            uploads.recover()
        except Exception:
            # A database that is briefly away must not end recovery for the worker's life.
            log.exception("recovering grading batches failed")
        finally:
            connection.close()  # this thread's own connection
