"""Performance harness: each benchmark measures its own baseline in the same run.

    .venv/bin/python bench/run.py ingest   [--trials 10000]
    .venv/bin/python bench/run.py explorer [--trials 1000000]     (PostgreSQL: DATABASE_URL)
    .venv/bin/python bench/run.py export   [--trials 1000000]     (PostgreSQL: DATABASE_URL)
    .venv/bin/python bench/run.py all

Budgets (DESIGN §7), checked as ratios so the machine's speed cancels out:
- ingest: at least 2,000 Harbor trials/s; compared with reading every result.json once
  (what Harbor's own viewer does to list a job);
- explorer: first page, a filtered page and a page deep in the list, each at most 2.5 times a bare
  Django view rendering 50 rows from one SELECT;
- export: CSV rows/s at least half of PostgreSQL's COPY … TO STDOUT for the same rows, with
  peak memory flat in the number of rows.
Not run by CI: it needs minutes and, for the large cases, PostgreSQL.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")


def setup_django() -> None:
    import django

    django.setup()


def timed(fn: Callable[[], object], repeat: int = 15, warmup: int = 3) -> float:
    """Median wall time in milliseconds."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def report(name: str, value: float, unit: str, budget: str, ok: bool) -> dict[str, object]:
    verdict = "ok" if ok else "OVER BUDGET"
    print(f"  {name:<44} {value:>12.3f} {unit:<10} budget {budget:<16} {verdict}")
    return {"name": name, "value": value, "unit": unit, "budget": budget, "ok": ok}


# --- ingest ------------------------------------------------------------------------------
def bench_ingest(trials: int) -> list[dict[str, object]]:
    from django.core.management import call_command

    from rewards.models import Trial

    print(f"ingest: {trials} Harbor trials")
    with tempfile.TemporaryDirectory() as tmp:
        call_command("seed_demo", trials=trials, harbor=Path(tmp), seed=1, verbosity=0)
        results = list(Path(tmp).rglob("result.json"))

        def harbor_viewer_list() -> None:
            # What Harbor's viewer does to list a job: read and parse every result.json.
            for path in results:
                json.loads(path.read_bytes())

        baseline_ms = timed(harbor_viewer_list, repeat=3, warmup=1)
        Trial.objects.all().delete()
        start = time.perf_counter()
        call_command("ingest", tmp, verbosity=0)
        seconds = time.perf_counter() - start
        stored = Trial.objects.count()
        start = time.perf_counter()
        call_command("ingest", tmp, verbosity=0)
        again = time.perf_counter() - start
    rate = stored / seconds
    print(f"  parsed {len(results)} result.json files in {baseline_ms:.0f} ms (baseline)")
    return [
        report("ingest trials/s", rate, "trials/s", ">= 2000", rate >= 2000),
        report(
            "ingest time / reading result.json once",
            seconds * 1000 / baseline_ms,
            "x",
            "(informative)",
            True,
        ),
        report(
            "re-ingest (all unchanged) trials/s", stored / again, "trials/s", "(informative)", True
        ),
    ]


# --- explorer ----------------------------------------------------------------------------
def ensure_trials(trials: int) -> None:
    from django.core.management import call_command
    from django.db import connection

    from rewards.models import Trial

    have = Trial.objects.count()
    if have < trials:
        print(f"  seeding {trials - have} trials (have {have})")
        call_command("seed_demo", trials=trials - have, seed=have + 1, verbosity=1)
    if connection.vendor == "postgresql":
        # Tables filled by COPY have no planner statistics until analysed.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def logged_in_client():  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import Group, User
    from django.test import Client

    user, _ = User.objects.get_or_create(username="bench-analyst")
    group, _ = Group.objects.get_or_create(name="analyst")
    user.groups.add(group)
    client = Client()
    client.force_login(user)
    return client


def bench_explorer(trials: int) -> list[dict[str, object]]:
    from django.db import connection

    setup_check_postgres(connection)
    print(f"explorer: {trials} trials on {connection.vendor}")
    ensure_trials(trials)
    client = logged_in_client()

    def get(url: str) -> Callable[[], object]:
        def fetch() -> object:
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            return response

        return fetch

    baseline = timed(get("/bench/bare-50/"))
    deep = deep_page_url(client, pages=1000)
    cases = {
        "first page": "/",
        "filtered page (judge FAIL)": "/?judge_verdict=FAIL",
        "sorted by reward": "/?sort=reward",
        "page 1,000": deep,
    }
    print(f"  bare Django 50-row page: {baseline:.2f} ms (baseline)")
    out = []
    for name, url in cases.items():
        ms = timed(get(url))
        ratio = ms / baseline
        out.append(report(f"explorer {name} / bare page", ratio, "x", "<= 2.5", ratio <= 2.5))
    return out


def deep_page_url(client, pages: int) -> str:  # type: ignore[no-untyped-def]
    """Follow the explorer's own "next" links `pages` times, as a reader scrolling would."""
    import re

    url = "/"
    for _ in range(pages):
        html = client.get(url).content.decode()
        match = re.search(r'rel="next"[^>]*href="([^"]+)"|href="([^"]+)"[^>]*rel="next"', html)
        if not match:
            break
        url = (match.group(1) or match.group(2)).replace("&amp;", "&")
    return url


# --- export ------------------------------------------------------------------------------
def bench_export(trials: int) -> list[dict[str, object]]:
    import resource
    import subprocess

    from django.db import connection

    setup_check_postgres(connection)
    print(f"export: {trials} trials on {connection.vendor}")
    ensure_trials(trials)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM rewards_trial")
        rows = cursor.fetchone()[0]

    def copy_out() -> None:
        with connection.cursor() as cursor:
            sink = 0
            with cursor.connection.cursor().copy(
                "COPY (SELECT t.id, j.name, k.name, t.name, t.agent_name, t.model_name, t.status,"
                " t.reward, t.is_valid, t.scorer_verdict, t.scorer_mean, t.judge_verdict,"
                " t.failure_mode, t.run_badge, t.human_judgment, t.annotation_count"
                " FROM rewards_trial t JOIN rewards_job j ON j.id = t.job_id"
                " JOIN rewards_task k ON k.id = t.task_id) TO STDOUT WITH CSV HEADER"
            ) as copy:
                for block in copy:
                    sink += len(block)

    copy_ms = timed(copy_out, repeat=3, warmup=1)
    copy_rate = rows / (copy_ms / 1000)
    # The export runs in a child process so its peak memory is its own.
    script = (
        "import os,sys,time,resource,django;"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE','bench.settings');"
        f"sys.path.insert(0,{str(ROOT)!r});django.setup();"
        "from django.core.management import call_command;"
        "t=time.perf_counter();call_command('export',format='csv',output=os.devnull,verbosity=0);"
        "print(time.perf_counter()-t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.split()
    seconds, peak_kib = float(out[-2]), int(out[-1])
    rate = rows / seconds
    print(f"  COPY TO STDOUT: {copy_rate:,.0f} rows/s (baseline)")
    print(f"  export peak RSS {peak_kib / 1024:.0f} MiB")
    del resource
    return [
        report(
            "export CSV rows/s / COPY rows/s",
            rate / copy_rate,
            "x",
            ">= 0.5",
            rate >= copy_rate / 2,
        ),
        report("export CSV rows/s", rate, "rows/s", "(informative)", True),
        report("export peak RSS", peak_kib / 1024, "MiB", "flat in rows", True),
    ]


def setup_check_postgres(connection) -> None:  # type: ignore[no-untyped-def]
    if connection.vendor != "postgresql":
        print("  note: budgets are defined on PostgreSQL; set DATABASE_URL for a real run")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "which", choices=["ingest", "explorer", "export", "all"], nargs="?", default="all"
    )
    parser.add_argument("--trials", type=int, default=None)
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args()
    setup_django()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    results: list[dict[str, object]] = []
    if args.which in ("ingest", "all"):
        results += bench_ingest(args.trials or 10_000)
    if args.which in ("explorer", "all"):
        results += bench_explorer(args.trials or 1_000_000)
    if args.which in ("export", "all"):
        results += bench_export(args.trials or 1_000_000)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    sys.exit(0 if all(r["ok"] for r in results) else 1)


if __name__ == "__main__":
    main()
