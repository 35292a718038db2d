"""`manage.py export --format csv|jsonl|parquet|annotations|comments [--filter QS] [-o FILE]`.

Written to a file, an export gets its manifest beside it (`FILE.manifest.json`: what the
pass rates leave out, and why; `review.science.exclusions.manifest`); a Parquet file also
carries it in its metadata.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, BinaryIO

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.http import QueryDict
from django.utils import timezone
from tqdm import tqdm

from review.exports import FORMATS, export_stream
from review.filtering.form import TrialFilterForm, filter_errors, filtered_trials
from review.science import exclusions


class Command(BaseCommand):
    help = (
        "Export the trials matching an explorer filter (the query string of the explorer's "
        "URL, e.g. 'judge_verdict=FAIL&job=3') as CSV, JSONL (lossless TrialBundles, "
        "re-ingestable), Parquet, or one row per annotation or step comment."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--format", required=True, choices=sorted(FORMATS), dest="format")
        parser.add_argument(
            "--filter", default="", help="explorer query string; empty exports everything"
        )
        parser.add_argument("-o", "--output", help="file to write; standard output by default")
        parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        form = TrialFilterForm(QueryDict(options["filter"].lstrip("?")))
        if errors := filter_errors(form):
            raise CommandError("the filter is not valid: " + "; ".join(errors))
        export_format = FORMATS[options["format"]]
        trials = filtered_trials(form)
        manifest = json.dumps(
            exclusions.manifest(trials, options["filter"].lstrip("?"), timezone.now()), indent=2
        )
        chunks = export_stream(export_format.name, trials, manifest)
        output = options.get("output")
        progress = tqdm(
            desc=f"export {export_format.name}",
            unit="B",
            unit_scale=True,
            file=sys.stderr,
            disable=options["no_progress"] or options["verbosity"] == 0,
        )
        with progress:
            if output and output != "-":
                path = Path(output)
                try:
                    with path.open("wb") as sink:
                        written = self._write(chunks, sink, progress)
                    path.with_name(f"{path.name}.manifest.json").write_text(manifest + "\n")
                except OSError as exc:
                    raise CommandError(f"cannot write {path}: {exc.strerror}") from exc
            else:
                written = self._write(chunks, sys.stdout.buffer, progress)
        if output and output != "-" and options["verbosity"] > 0:
            self.stderr.write(f"wrote {written} bytes to {output}")

    @staticmethod
    def _write(chunks: Any, sink: BinaryIO, progress: tqdm[Any]) -> int:
        written = 0
        for chunk in chunks:
            sink.write(chunk)
            written += len(chunk)
            progress.update(len(chunk))
        return written
