"""Reviewers posting annotations at once against a SQLite file, as its own process.

Run by tests/test_sqlite_settings.py with `DATABASE_URL=sqlite:///…` (or `SQLITE_PATH`) in
its environment, so the project's settings choose the database exactly as a deployment's
would; pytest's own database is not involved. Prints one JSON line: each post's status
(or the exception it raised), the annotations stored, and the options the connection had.

    DATABASE_URL=sqlite:////tmp/x.sqlite3 .venv/bin/python -m tests.sqlite_writers 32
"""

from __future__ import annotations

import json
import os
import sys
import threading


def main(writers: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()

    from django.core.management import call_command
    from django.db import connection, connections
    from django.test import Client

    from review.models import Annotation
    from tests import review_factories as f

    call_command("migrate", verbosity=0)
    trial = f.make_trial(reward=0.9, pass_threshold=0.5)
    users = [f.make_user(f"reviewer-{n}", "reviewer") for n in range(writers)]
    options = connection.settings_dict["OPTIONS"]
    connection.close()

    start = threading.Barrier(writers)
    statuses: list[int | str] = []

    def post(user: object) -> None:
        client = Client(HTTP_HOST="localhost")  # one of the default ALLOWED_HOSTS
        try:
            client.force_login(user)  # type: ignore[arg-type]
            start.wait(timeout=30)  # every post leaves at the same moment
            response = client.post(f"/trials/{trial.pk}/annotations/", {"judgment": "pass"})
            statuses.append(response.status_code)
        except Exception as exc:  # "database is locked" is what this is here to catch
            statuses.append(f"{type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=post, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    print(
        json.dumps(
            {
                "statuses": statuses,
                "stored": Annotation.objects.filter(trial=trial).count(),
                "options": options,
            }
        )
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 32)
