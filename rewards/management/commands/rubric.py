"""`manage.py rubric details.json`: the rubric scorer of seed 000 for verifiers and pipelines.

Reads `{dimension: {score, max_score, evidence}}`, combines the dimensions with
`rewards.rubric.score` and prints `{"reward": x}` or writes it where reward.json belongs.
Every bad input is a one-line CommandError naming the problem, never a traceback.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from pydantic import ValidationError

from rewards import formats, rubric
from rewards.schemas import DetailsDimension

# A details.json is a few KB; anything this large is not one, and reading it whole would
# only spend memory on a mistake.
MAX_DETAILS_BYTES = 10 * 1024 * 1024


def parse_weights(text: str) -> dict[str, float]:
    """`name=1.5,other=2` → {"name": 1.5, "other": 2.0}; a name may itself contain '='."""
    weights: dict[str, float] = {}
    for item in text.split(","):
        name, sep, value = item.strip().rpartition("=")
        name = name.strip()
        if not sep or not name:
            raise CommandError(f"--weights: expected name=number, got {item.strip()!r}")
        try:
            weight = float(value)
        except ValueError:
            raise CommandError(f"--weights: {name!r} has no number: {value.strip()!r}") from None
        if not math.isfinite(weight) or weight < 0:
            raise CommandError(f"--weights: {name!r} must be a finite number ≥ 0")
        if name in weights:
            raise CommandError(f"--weights: {name!r} is given twice")
        weights[name] = weight
    return weights


def read_details(path: Path) -> dict[str, DetailsDimension]:
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_DETAILS_BYTES + 1)
    except FileNotFoundError:
        raise CommandError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CommandError(f"{path}: is a directory, not a details.json file") from None
    except OSError as exc:
        raise CommandError(
            f"{path}: cannot be read ({exc.strerror or type(exc).__name__})"
        ) from None
    if len(raw) > MAX_DETAILS_BYTES:
        raise CommandError(f"{path}: larger than {MAX_DETAILS_BYTES // (1024 * 1024)} MB")
    try:
        data = formats.loads_bounded(raw)
    except formats.ArtifactError as exc:
        raise CommandError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise CommandError(f"{path}: expected a JSON object of dimensions, got {_kind(data)}")
    dimensions: dict[str, DetailsDimension] = {}
    for name, value in data.items():
        try:
            dimensions[name] = DetailsDimension.model_validate(value)
        except ValidationError as exc:
            raise CommandError(f"{path}: dimension {name!r}: {_first_error(exc)}") from None
    return dimensions


def _first_error(exc: ValidationError) -> str:
    error = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def _kind(value: Any) -> str:
    return {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def write_atomically(path: Path, text: str) -> None:
    """Write via a temporary file and rename: a reader never sees half a reward.json."""
    directory = path.parent if str(path.parent) else Path()
    try:
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise CommandError(f"{path}: cannot write ({exc.strerror or type(exc).__name__})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            # mkstemp makes the file private (0600); a reward.json is read by the runner.
            os.fchmod(handle.fileno(), 0o644)
            handle.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise CommandError(f"{path}: cannot write ({exc.strerror or type(exc).__name__})") from None


class Command(BaseCommand):
    help = (
        "Score a details.json ({dimension: {score, max_score, evidence}}) with the rubric "
        'scorer and print {"reward": x} (or write it with -o).'
    )
    # Verifiers call this inside task containers: it reads one file and writes one, never
    # the database, so project-wide system checks would only cost start-up time (or fail
    # on settings that have nothing to do with scoring).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("details", type=Path, help="path to details.json")
        parser.add_argument(
            "--strategy",
            choices=rubric.STRATEGIES,
            default="weighted_mean",
            help="weighted_mean (default: Σ(n·w)/Σw) or min (the worst dimension wins)",
        )
        parser.add_argument(
            "--weights",
            default="",
            help="per-dimension weights, name=number,… (override each dimension's own weight)",
        )
        parser.add_argument(
            "-o", "--output", type=Path, help="write reward.json here instead of printing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        weights = parse_weights(options["weights"]) if options["weights"].strip() else {}
        dimensions = read_details(options["details"])
        try:
            reward = rubric.score(dimensions, options["strategy"], weights)
        except rubric.RubricError as exc:
            raise CommandError(f"{options['details']}: {exc}") from None
        text = json.dumps({"reward": reward})
        output: Path | None = options["output"]
        if output is None:
            self.stdout.write(text)
            return
        write_atomically(output, text + "\n")
        if options["verbosity"] >= 2:
            self.stderr.write(f"wrote {text} to {output}")
