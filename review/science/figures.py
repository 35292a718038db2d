"""Agreement and comparison figures as plain data: JSON for the API, rows for CSV.

One shape per figure, so the page, the JSON endpoint and the CSV file always agree. CSV cells
that came from outside (failure modes, task names, usernames) are neutralised the way every
other export is, so a spreadsheet never runs them.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

from review.exports import neutralise
from review.science.agreement import HUMAN_LABELS, MIN_TRIALS, Matrix, Report
from review.science.compare import Comparison, Flip

AGREEMENT_COLUMNS = [
    "comparison",
    "breakdown",
    "group",
    "n",
    "pass_pass",
    "pass_fail",
    "fail_pass",
    "fail_fail",
    "observed_agreement",
    "kappa",
    "kappa_ci_low",
    "kappa_ci_high",
    "kappa_no_interval",
]
COMPARE_COLUMNS = [
    "outcome",
    "paired_tasks",
    "both_pass",
    "a_only",
    "b_only",
    "neither",
    "a_pass_rate",
    "b_pass_rate",
    "delta",
    "delta_ci_low",
    "delta_ci_high",
    "mcnemar_p",
    "mcnemar_method",
    "delta_no_interval",
    "tied_tasks",
]


def matrix_dict(matrix: Matrix) -> dict[str, Any]:
    interval = matrix.interval
    return {
        "n": matrix.n,
        "counts": [list(row) for row in matrix.counts],
        "observed_agreement": matrix.observed,
        "kappa": matrix.kappa,
        "kappa_ci": [interval.low, interval.high] if interval else None,
        "kappa_no_interval": matrix.no_interval or None,
    }


def agreement_dict(report: Report) -> dict[str, Any]:
    return {
        "unit": "each reviewer's latest judgment of a trial; defers abstain",
        "interval": (
            "95% percentile bootstrap over trials (a trial's judgments drawn together);"
            f" none (kappa_no_interval says why) under {MIN_TRIALS} trials or for a"
            " degenerate table"
        ),
        "judgments": report.judgments,
        "defers": report.defers,
        "breakdown": report.dimension.key,
        "labels": {"rows": ["PASS", "FAIL"], "columns": list(HUMAN_LABELS)},
        "comparisons": [
            {
                "key": result.comparison.key,
                "label": result.comparison.label,
                "overall": matrix_dict(result.overall),
                "undecided": result.undecided,
                "groups": [
                    {"value": group.value, **matrix_dict(group.matrix)} for group in result.groups
                ],
                "other_groups": result.other_groups,
                "other_count": result.other_count,
            }
            for result in report.comparisons
        ],
        "reviewers": {
            "krippendorff_alpha": report.reviewers.alpha,
            "pairable_judgments": report.reviewers.pairable,
            "pairs": [
                {"a": pair.a, "b": pair.b, **matrix_dict(pair.matrix)}
                for pair in report.reviewers.pairs
            ],
            "more_pairs": report.reviewers.more_pairs,
        },
    }


def _matrix_cells(matrix: Matrix) -> list[Any]:
    interval = matrix.interval
    return [
        matrix.n,
        *(count for row in matrix.counts for count in row),
        matrix.observed,
        matrix.kappa,
        interval.low if interval else None,
        interval.high if interval else None,
        matrix.no_interval,
    ]


def agreement_rows(report: Report) -> Iterable[list[Any]]:
    dimension = report.dimension.key
    for result in report.comparisons:
        key = result.comparison.key
        yield [key, "", "(all)", *_matrix_cells(result.overall)]
        for group in result.groups:
            yield [key, dimension, group.label, *_matrix_cells(group.matrix)]
    for pair in report.reviewers.pairs:
        yield ["reviewer_pair", "", f"{pair.a} | {pair.b}", *_matrix_cells(pair.matrix)]


def _flip(flip: Flip) -> dict[str, Any]:
    return {
        "task_id": flip.task_id,
        "task": flip.task,
        "source": flip.source,
        "a_trial": flip.a_trial,
        "b_trial": flip.b_trial,
    }


def compare_dict(result: Comparison) -> dict[str, Any]:
    return {
        "a": {"id": result.a.pk, "name": result.a.name},
        "b": {"id": result.b.pk, "name": result.b.name},
        "only_a": result.only_a,
        "only_b": result.only_b,
        "outcomes": [{"key": row.outcome.key, **row.as_dict()} for row in result.results],
        "verifier_flips": {
            "pass_to_fail": [_flip(flip) for flip in result.regressions],
            "fail_to_pass": [_flip(flip) for flip in result.improvements],
        },
    }


def compare_rows(result: Comparison) -> Iterable[list[Any]]:
    for row in result.results:
        d = row.as_dict()
        ci = d["delta_ci"] or [None, None]
        yield [
            row.outcome.key,
            d["tasks"],
            d["both_pass"],
            d["a_only"],
            d["b_only"],
            d["neither"],
            d["a_pass_rate"],
            d["b_pass_rate"],
            d["delta"],
            ci[0],
            ci[1],
            d["mcnemar_p"],
            d["mcnemar_method"],
            d["delta_no_interval"],
            d["tied_tasks"],
        ]


def to_csv(columns: list[str], rows: Iterable[list[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    for row in rows:
        writer.writerow(
            [
                ""
                if cell is None
                else neutralise(cell)
                if isinstance(cell, str)
                else repr(cell)
                if isinstance(cell, float)
                else cell
                for cell in row
            ]
        )
    return buffer.getvalue()
