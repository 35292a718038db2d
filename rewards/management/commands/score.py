"""`manage.py score WORKSPACE --baseline REV --scorers SCORERS.json [-o RESULT.json]`.

Runs a scenario's mechanical scorers (seed 003) over a git working tree's changes against
its baseline and writes `scorers.json`, the format `manage.py ingest` reads from a trial
directory. A bad scorer spec is refused before anything runs, naming the scorer and field.
The exit status is non-zero only when the scorers could not run; failing scorers are a
result, summarised on standard error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from rewards import formats, rules
from rewards.scoring import config, engine
from rewards.scoring.workspace import WorkspaceError, read_changes

MAX_SCORERS_FILE_BYTES = 1024 * 1024


def load_specs(path: str) -> list[config.ScorerSpec]:
    """A SCORERS.json file as validated specs, or a CommandError saying what is wrong."""
    try:
        file = Path(path)
        if file.stat().st_size > MAX_SCORERS_FILE_BYTES:
            raise CommandError(f"{path}: larger than {MAX_SCORERS_FILE_BYTES} bytes")
        data = formats.loads_bounded(file.read_bytes())
    except OSError as exc:
        raise CommandError(f"{path}: {exc.strerror or exc}") from None
    except formats.ArtifactError as exc:
        raise CommandError(f"{path}: {exc}") from None
    try:
        return config.parse_scorers(data)
    except config.ScenarioError as exc:
        raise CommandError(f"{path}: " + "; ".join(exc.problems)) from None


def summary_line(results: list[dict[str, Any]]) -> str:
    outcomes = [
        rules.ScorerOutcome(
            required=r["required"], type=r["type"], verdict=r["verdict"], score=r["score"]
        )
        for r in results
    ]
    overall = rules.scorers_overall(outcomes) or "no scorers"
    mean = rules.scorers_mean(outcomes)
    counts = ", ".join(
        f"{sum(r['verdict'] == v for r in results)} {v}"
        for v in (engine.PASS, engine.FAIL, engine.NA)
    )
    return f"OVERALL {overall} · mean {'—' if mean is None else mean} · {counts}"


class Command(BaseCommand):
    help = "Run a scenario's scorers over a git workspace and write scorers.json."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("workspace", metavar="WORKSPACE", help="a git working tree")
        parser.add_argument("--baseline", required=True, metavar="REV", help="the seeded commit")
        parser.add_argument(
            "--scorers", required=True, metavar="SCORERS.json", help="the scorer specs, a list"
        )
        parser.add_argument("-o", "--output", default="-", help="where to write (default stdout)")

    def handle(self, *args: Any, **options: Any) -> None:
        specs = load_specs(options["scorers"])
        try:
            changes = read_changes(options["workspace"], options["baseline"])
        except WorkspaceError as exc:
            raise CommandError(str(exc)) from None
        results = [outcome.as_json() for outcome in engine.score(changes, specs)]
        text = json.dumps(results, indent=2, ensure_ascii=False) + "\n"
        if options["output"] == "-":
            self.stdout.write(text, ending="")
        else:
            Path(options["output"]).write_text(text, encoding="utf-8")
        sys.stderr.write(summary_line(results) + "\n")
