"""Timing the review-science pages against the same bare 50-row page as the explorer.

    DATABASE_URL=postgres://… .venv/bin/python bench/science.py [--trials 1000000]

Seeds demo trials like `bench/run.py explorer`. The fast (COPY) seed path writes no
annotations, so for the agreement figures to mean anything add them first (the measurement
in the report inserted 375,000: a quarter of the trials by one reviewer, an eighth by a
second, a third of them blind). It then times each page (median of several requests, the
bootstrap's remembered intervals cleared before each so every request computes them) and
prints its ratio to the bare page. Reported, not judged: these pages aggregate every
matching trial or annotation.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.run import ensure_trials, logged_in_client, setup_django, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    setup_django()
    from django.core.management import call_command
    from django.db import connection
    from django.db.models import Count

    from review.models import Annotation
    from rewards import agreement
    from rewards.models import Job

    call_command("migrate", verbosity=0)
    ensure_trials(args.trials)
    client = logged_in_client()
    jobs = list(Job.objects.annotate(n=Count("trials")).order_by("-n", "id")[:2])
    print(
        f"{connection.vendor}: {args.trials:,} trials, {Annotation.objects.count():,} annotations,"
        f" jobs of {jobs[0].n:,} and {jobs[1].n:,} trials"
    )

    def get(url: str):  # type: ignore[no-untyped-def]
        def fetch() -> object:
            agreement._kappa_interval.cache_clear()
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            return response

        return fetch

    baseline = timed(get("/bench/bare-50/"), repeat=args.repeat * 3)
    print(f"  bare Django 50-row page: {baseline:.2f} ms")
    a, b = jobs
    cases = {
        "agreement, by failure mode": "/agreement/",
        "agreement, by judge model": "/agreement/?by=judge_model",
        "agreement of one job": f"/agreement/?job={a.pk}",
        "agreement, blind only": "/agreement/?counted=blind",
        "compare two jobs": f"/compare/?a={a.pk}&b={b.pk}",
        "job page with plots": f"/jobs/{a.pk}/",
        "explorer, a reviewer's latest is fail": "/?reviewer_judgment=fail",
    }
    for name, url in cases.items():
        ms = timed(get(url), repeat=args.repeat, warmup=1)
        print(f"  {name:<40} {ms:>10.1f} ms  {ms / baseline:>8.1f}x the bare page")


if __name__ == "__main__":
    main()
