"""A bundle's content digest, and the bundle as it is stored.

The digest is the identity of what the pipeline said about a trial: equal digests mean
"unchanged", which is how ingestion stays idempotent. It is taken from the bundle as it is
stored (`as_stored`: results checked, NUL characters shown as ␀), wherever the bundle was
read, a reader process included.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson

from rewards import citations, schemas
from rewards.models import Job, record_columns
from rewards.schemas import TrialBundle

# --- canonical content ------------------------------------------------------------------
# The job's metadata: every column of its record but the name.
JOB_FIELDS = tuple(name for name in record_columns(schemas.JobRecord, Job) if name != "name")

# What the digest leaves out: annotations, step comments, finding reviews and the task's
# ledger entries (the review app's, not the pipeline's), the integrity findings (read from
# the trajectory, which the digest covers), the results' `created_at` (when a row was
# stored, not what the verifier said), and the job's metadata: a Harbor job's result.json
# lists every trial, so including it would make each trial's digest change whenever the job
# grew (and hashing it per trial is quadratic work); the writer refreshes the job row on
# its own.
_DIGEST_EXCLUDE: dict[str, Any] = {
    "annotations": True,
    "step_comments": True,
    "integrity_findings": True,
    "defect_entries": True,
    "results": {"__all__": {"created_at"}},
    "job": set(JOB_FIELDS),
}


def content_digest(bundle: TrialBundle) -> str:
    """Identity of a bundle's content: equal digests mean "unchanged".

    Canonical, so that the same artifacts always give the same digest: keys sorted (a
    PostgreSQL jsonb column hands dicts back in its own key order, so an exported bundle
    would otherwise never match the one it was made from); datetimes are already in UTC
    (`schemas.UtcDatetime`), so their JSON spelling is unique.
    """
    return hashlib.sha256(_canonical(bundle)).hexdigest()


def earlier_digest(bundle: TrialBundle) -> str:
    """The digest as releases before orjson spelled it (the standard library's JSON, which
    writes some small floats differently: `1e-05`, not `0.00001`). A stored digest that
    matches this one is the same content, not a change."""
    return hashlib.sha256(_canonical_stdlib(_content(bundle)).encode()).hexdigest()


def _content(bundle: TrialBundle) -> dict[str, Any]:
    return bundle.model_dump(mode="json", exclude=_DIGEST_EXCLUDE)


# Trial fields holding JSON as it was read, an agent's whole trajectory among them: the
# digest serialises them as they are rather than having pydantic copy them first. Anything
# in them that is not plain JSON data (a datetime, a str subclass…) makes orjson refuse,
# and the digest is then taken from pydantic's copy: the same bytes either way.
_AS_READ = ("trajectory", "config", "ctrf")
_DIGEST_EXCLUDE_AS_READ: dict[str, Any] = {**_DIGEST_EXCLUDE, "trial": set(_AS_READ)}
_PLAIN_JSON_ONLY = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _canonical(bundle: TrialBundle) -> bytes:
    data = bundle.model_dump(mode="json", exclude=_DIGEST_EXCLUDE_AS_READ)
    for name in _AS_READ:
        data["trial"][name] = getattr(bundle.trial, name)
    try:
        return orjson.dumps(data, option=_PLAIN_JSON_ONLY)
    except TypeError:
        pass
    data = _content(bundle)
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer beyond 64 bits
        return _canonical_stdlib(data).encode()


def _canonical_stdlib(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --- NUL characters -------------------------------------------------------------------------
NUL_STANDIN = "\u2400"  # ␀, SYMBOL FOR NULL


def _replace_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", NUL_STANDIN)
    if isinstance(value, dict):
        return {_replace_nul(key): _replace_nul(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace_nul(item) for item in value]
    return value


def as_stored(bundle: TrialBundle) -> tuple[TrialBundle, str]:
    """The bundle as stored (results checked, judge citations checked against the trial's
    trajectory, NUL characters shown as ␀) and its digest.

    PostgreSQL refuses NUL in text and in jsonb. Agent output may hold NUL bytes; refusing
    the trial would lose it, and dropping the character would hide what the agent wrote.
    The same on every database, so SQLite and PostgreSQL store the same text.

    One serialisation serves both: the digest's canonical JSON escapes a NUL as `\\u0000`,
    so it shows whether the trial's own content holds one; what the digest leaves out
    (annotations, step comments, findings, ledger entries, the job) is looked at on its
    own, the job once per record.
    """
    results = [r.checked() for r in bundle.results]
    if results != bundle.results:
        bundle = bundle.model_copy(update={"results": results})
    if any(citations.has_citations(v) for v in bundle.judge_verdicts):
        # A verdict's citations are stored as checked against this bundle's trajectory.
        verdicts = [citations.checked(v, bundle.trial.trajectory) for v in bundle.judge_verdicts]
        bundle = bundle.model_copy(update={"judge_verdicts": verdicts})
    payload = _canonical(bundle)
    if b"\\u0000" in payload or _nul_outside_digest(bundle):
        bundle = TrialBundle.model_validate(_replace_nul(bundle.model_dump()))
        payload = _canonical(bundle)
    return bundle, hashlib.sha256(payload).hexdigest()


# Jobs already looked at, by identity: every trial of a Harbor job shares one record, whose
# stats may list thousands of trials. The record is kept so its id is not reused.
_CLEAN_JOBS: dict[int, tuple[schemas.JobRecord, bool]] = {}


def _nul_outside_digest(bundle: TrialBundle) -> bool:
    if bundle.annotations and "\\u0000" in json.dumps(
        [a.model_dump(mode="json") for a in bundle.annotations]
    ):
        return True
    for records in (bundle.step_comments, bundle.integrity_findings, bundle.defect_entries):
        if records and "\\u0000" in json.dumps([r.model_dump(mode="json") for r in records]):
            return True
    job = bundle.job
    known = _CLEAN_JOBS.get(id(job))
    if known is None or known[0] is not job:
        if len(_CLEAN_JOBS) > 256:
            _CLEAN_JOBS.clear()
        known = _CLEAN_JOBS[id(job)] = (job, "\\u0000" in job.model_dump_json())
    return known[1]
