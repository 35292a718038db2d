"""`POST /api/ingest`: bundles stored by the one writer, validated as `ingest` reads a line."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from django.http import HttpRequest
from ninja import Field, Router, Schema
from ninja.errors import ValidationError
from pydantic import TypeAdapter, ValidationError as PydanticValidationError

from review.api.ninja import (
    ERRORS,
    MAX_BUNDLES,
    ErrorOut,
    clean_errors,
    staff_auth,
)
from rewards.formats import NOT_FAST, loads_fast
from rewards.ingest.bundles import ENVELOPE_DEPTH, drop_refused, with_problems
from rewards.ingest.files import ArtifactError, Limits
from rewards.ingest.prepared import PreparedTrial, prepare_or_refuse
from rewards.ingest.report import IngestReport, stored_as_invalid
from rewards.ingest.storable import loads_marked, mend
from rewards.ingest.writer import BundleWriter
from rewards.schemas import IngestProblem, TrialBundle


class IngestCounts(Schema):
    ingested: int
    unchanged: int
    updated: int
    invalid: int


class IngestResult(Schema):
    status: Literal["ingested", "unchanged", "updated", "invalid"]
    job: str
    trial: str
    trial_id: int | None
    reason: str


class IngestOut(Schema):
    counts: IngestCounts
    results: list[IngestResult]


# --- ingest ----------------------------------------------------------------------------------
router = Router(tags=["ingest"], auth=staff_auth)

_ONE = TypeAdapter(TrialBundle)
_MANY = TypeAdapter(Annotated[list[TrialBundle], Field(min_length=1, max_length=MAX_BUNDLES)])

# The body is read and validated here, not by ninja, to validate exactly as `ingest` reads a
# .jsonl line (strict JSON mode); so its schema is written out. TrialBundle's own schema is
# in the components because GET /api/trials/{id} returns one.
_BUNDLE_REF = {"$ref": "#/components/schemas/TrialBundle"}
INGEST_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "oneOf": [
                        _BUNDLE_REF,
                        {
                            "type": "array",
                            "items": _BUNDLE_REF,
                            "minItems": 1,
                            "maxItems": MAX_BUNDLES,
                        },
                    ]
                }
            }
        },
    }
}


# What the problems mended in an API body name as their file.
ORIGIN = "API body"


def parse_bundles(raw: bytes) -> list[TrialBundle]:
    """The body as bundles; ninja's ValidationError (422) naming the field paths if not.

    Read as `ingest` reads a .jsonl line (`rewards.ingest.bundles.parse_line`): what no
    column can hold (a number beyond a double, NaN, Infinity, a lone surrogate) is mended,
    each spot kept as its text in an ingestion problem of its bundle's trial.
    """
    limits = Limits.from_settings()
    try:
        # Depth checks first, as for a .jsonl line; one more level for the list.
        data, mended = _read(raw, limits.max_depth + ENVELOPE_DEPTH + 1)
    except ArtifactError as exc:
        raise ValidationError([{"loc": ("body",), "msg": str(exc), "type": "invalid"}]) from exc
    except ValueError as exc:
        raise ValidationError(
            [{"loc": ("body",), "msg": "not valid JSON", "type": "json_invalid"}]
        ) from exc
    # Strict validation is of JSON text: the body itself, or the mended value written out.
    try:
        try:
            bundles = _validated(raw if mended is None else json.dumps(data), data)
        except PydanticValidationError as exc:
            # A mended number is null now, which its field may refuse (a metric is a number):
            # such a field is left out, its text kept in the problem, as for a .jsonl line.
            if mended is None or not _drop_mended(data, exc, mended):
                raise
            try:
                bundles = _validated(json.dumps(data), data)
            except PydanticValidationError:
                raise exc from None  # the field is required (a reward): the first reason stands
    except PydanticValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False, include_context=False)
        raise ValidationError(clean_errors(errors, ("body",))) from exc
    except ArithmeticError as exc:
        # A validator that converts a value (a datetime at year 1 with an offset, moved to
        # UTC) can overflow; pydantic passes that through instead of naming the field.
        raise ValidationError(
            [{"loc": ("body",), "msg": "a date or number is out of range", "type": "value_error"}]
        ) from exc
    if mended is None:
        return bundles
    return [with_problems(b, problems) for b, problems in zip(bundles, mended, strict=True)]


def _validated(text: str | bytes, data: Any) -> list[TrialBundle]:
    if isinstance(data, list):
        return _MANY.validate_json(text, strict=True)
    return [_ONE.validate_json(text, strict=True)]


def _drop_mended(
    data: Any, exc: PydanticValidationError, mended: list[list[IngestProblem]]
) -> bool:
    """Leave out each mended spot `exc` refuses, bundle by bundle; False when it refuses
    anything else."""
    items = data if isinstance(data, list) else [data]
    refused: dict[int, list[tuple[Any, ...]]] = {}
    for error in exc.errors():
        location = tuple(error["loc"])
        if not location:
            return False  # the body as a whole (a list too long, say)
        index, spot = (location[0], location[1:]) if isinstance(data, list) else (0, location)
        if not isinstance(index, int) or not 0 <= index < len(items):
            return False
        refused.setdefault(index, []).append(spot)
    return all(
        drop_refused(items[i], spots, {p.field for p in mended[i]}) for i, spots in refused.items()
    )


def _read(raw: bytes, max_depth: int) -> tuple[Any, list[list[IngestProblem]] | None]:
    """The body's value, and each bundle's mended spots (None: nothing needed mending).

    orjson reads a body that needs no care; one it refuses is read carefully and each
    bundle in it mended on its own, so every problem lands on its own trial.
    """
    value = loads_fast(raw, max_depth)
    if value is not NOT_FAST:
        return value, None
    marked = loads_marked(raw, max_depth)
    items = marked if isinstance(marked, list) else [marked]
    mended = [mend(item, ORIGIN) for item in items]
    values = [item for item, _ in mended]
    return (values if isinstance(marked, list) else values[0]), [found for _, found in mended]


@router.post(
    "/ingest",
    response={200: IngestOut, 413: ErrorOut, 422: ErrorOut, **ERRORS},
    openapi_extra=INGEST_BODY,
    summary="Store TrialBundles (staff)",
)
def ingest_bundles(request: HttpRequest) -> IngestOut:
    """One TrialBundle or a list of up to 1000, stored as `manage.py ingest` stores a .jsonl
    file: atomic per trial and idempotent (the same bundle again is `unchanged`). The counts
    are the command's summary: a trial stored with its reward rejected counts as invalid
    too (its result's reason says so)."""
    prepared = [prepare_or_refuse(b) for b in parse_bundles(request.body)]
    outcomes = BundleWriter().write_prepared(prepared)
    report = IngestReport()
    results = []
    for outcome, one in zip(outcomes, prepared, strict=True):
        trial = one if isinstance(one, PreparedTrial) else None
        report.outcome(outcome, trial)
        results.append(
            IngestResult(
                status=outcome.status,
                job=outcome.job,
                trial=outcome.trial,
                trial_id=outcome.trial_id,
                reason=outcome.reason or stored_as_invalid(outcome, trial),
            )
        )
    counts = report.counts
    return IngestOut(
        counts=IngestCounts(
            ingested=counts["ingested"],
            unchanged=counts["unchanged"],
            updated=counts["updated"],
            invalid=counts["invalid"],
        ),
        results=results,
    )
