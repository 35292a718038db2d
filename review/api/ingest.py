"""`POST /api/ingest`: bundles stored by the one writer, validated as `ingest` reads a line."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Literal

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
from rewards.ingest.bundles import ENVELOPE_DEPTH
from rewards.ingest.files import ArtifactError, Limits, loads_json
from rewards.ingest.writer import BundleWriter
from rewards.schemas import TrialBundle


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


def parse_bundles(raw: bytes) -> list[TrialBundle]:
    """The body as bundles; ninja's ValidationError (422) naming the field paths if not."""
    limits = Limits.from_settings()
    try:
        # Depth and NaN checks first, as for a .jsonl line; one more level for the list.
        data = loads_json(raw, limits.max_depth + ENVELOPE_DEPTH + 1)
    except ArtifactError as exc:
        raise ValidationError([{"loc": ("body",), "msg": str(exc), "type": "invalid"}]) from exc
    except ValueError as exc:
        raise ValidationError(
            [{"loc": ("body",), "msg": "not valid JSON", "type": "json_invalid"}]
        ) from exc
    try:
        if isinstance(data, list):
            return _MANY.validate_json(raw, strict=True)
        return [_ONE.validate_json(raw, strict=True)]
    except PydanticValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False, include_context=False)
        raise ValidationError(clean_errors(errors, ("body",))) from exc
    except ArithmeticError as exc:
        # A validator that converts a value (a datetime at year 1 with an offset, moved to
        # UTC) can overflow; pydantic passes that through instead of naming the field.
        raise ValidationError(
            [{"loc": ("body",), "msg": "a date or number is out of range", "type": "value_error"}]
        ) from exc


@router.post(
    "/ingest",
    response={200: IngestOut, 413: ErrorOut, 422: ErrorOut, **ERRORS},
    openapi_extra=INGEST_BODY,
    summary="Store TrialBundles (staff)",
)
def ingest_bundles(request: HttpRequest) -> IngestOut:
    """One TrialBundle or a list of up to 1000, stored as `manage.py ingest` stores a .jsonl
    file: atomic per trial and idempotent (the same bundle again is `unchanged`)."""
    outcomes = BundleWriter().write_many(parse_bundles(request.body))
    counts = Counter(o.status for o in outcomes)
    return IngestOut(
        counts=IngestCounts(
            ingested=counts["ingested"],
            unchanged=counts["unchanged"],
            updated=counts["updated"],
            invalid=counts["invalid"],
        ),
        results=[
            IngestResult(
                status=o.status, job=o.job, trial=o.trial, trial_id=o.trial_id, reason=o.reason
            )
            for o in outcomes
        ],
    )
