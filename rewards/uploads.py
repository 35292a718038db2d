"""Uploads from the staff upload page, ingested by a task worker (Django tasks, as grading).

The request only stores the file in an `IngestUpload` row and enqueues `ingest_upload`; a
worker writes the file to a temporary folder (a `.jsonl` bundle as it is, a zip unpacked
with the importer's safety rules: `rewards.ingest.archive`), runs one pass of `manage.py
ingest` over it, and records its summary on the row, which the page shows.

Nothing is lost when a worker dies: the file stays in the row until its summary is recorded,
and the worker's recovery (`recover`, run beside grading's by `manage.py grading_worker`)
queues an upload that has been ingesting longer than `STALE_AFTER` again (ingest is
idempotent: what the dead worker stored comes back as unchanged).
"""

from __future__ import annotations

import io
import logging
import os
import tempfile
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.tasks import task
from django.utils import timezone

from rewards.ingest.archive import unpack_zip
from rewards.ingest.files import ArtifactError
from rewards.ingest.report import STATUSES, printable
from rewards.management.commands.ingest import Command as IngestCommand
from rewards.models import IngestUpload

log = logging.getLogger(__name__)

# Summary lines kept on the row for the page (the explorer's filters list the rest).
LINES_KEPT = 50
# An upload ingesting for longer than this had its worker die: an upload is at most
# TRIALDESK_UPLOAD_MAX_BYTES, which one pass of ingest reads in a few minutes.
STALE_AFTER = timedelta(minutes=30)


def start_upload(
    name: str, kind: IngestUpload.Kind, data: bytes, user_id: int | None
) -> IngestUpload:
    """Store the file and enqueue its ingest, together: answers at once."""
    with transaction.atomic():
        upload = IngestUpload.objects.create(
            name=name[:255], kind=kind, size=len(data), data=data, uploaded_by_id=user_id
        )
        upload.task_id = ingest_upload.enqueue(upload.pk).id
        upload.save(update_fields=["task_id"])
    return upload


@task
def ingest_upload(upload_id: int) -> str:
    """Ingest an upload once (one already started is left alone); returns its state."""
    with transaction.atomic():
        upload = (
            IngestUpload.objects.select_for_update()
            .filter(pk=upload_id, state=IngestUpload.State.QUEUED)
            .first()
        )
        if upload is None:
            return ""
        upload.state = IngestUpload.State.RUNNING
        upload.started_at = timezone.now()
        upload.save(update_fields=["state", "started_at"])
    try:
        _ingest(upload)
    except ArtifactError as exc:
        upload.state, upload.problem = IngestUpload.State.FAILED, f"The zip {exc}."
    except Exception as exc:  # recorded for the page; the worker goes on
        log.exception("upload %s could not be ingested", upload.pk)
        upload.state = IngestUpload.State.FAILED
        upload.problem = f"The upload could not be ingested ({type(exc).__name__})."
    upload.finished_at = timezone.now()
    upload.data = b""
    upload.save()
    return str(upload.state)


def recover(now: datetime | None = None) -> list[int]:
    """Queue again each upload whose worker died mid-ingest (ingesting for longer than
    `STALE_AFTER`); returns their ids."""
    cutoff = (now or timezone.now()) - STALE_AFTER
    recovered = []
    stale = IngestUpload.objects.filter(
        state=IngestUpload.State.RUNNING, started_at__lt=cutoff
    ).values_list("pk", flat=True)
    for pk in stale:
        with transaction.atomic():
            changed = IngestUpload.objects.filter(
                pk=pk, state=IngestUpload.State.RUNNING, started_at__lt=cutoff
            ).update(state=IngestUpload.State.QUEUED, started_at=None)
            if changed:
                task_id = ingest_upload.enqueue(pk).id
                IngestUpload.objects.filter(pk=pk).update(task_id=task_id)
                recovered.append(pk)
                log.info("upload %s: its worker died mid-ingest; queued again", pk)
    return recovered


def _ingest(upload: IngestUpload) -> None:
    with tempfile.TemporaryDirectory(prefix="trialdesk-upload-") as folder:
        if upload.kind == IngestUpload.Kind.ZIP:
            path = os.path.join(folder, "upload")
            os.mkdir(path)
            unpack_zip(
                io.BytesIO(bytes(upload.data)), path, settings.TRIALDESK_UPLOAD_MAX_UNPACKED_BYTES
            )
        else:
            path = os.path.join(folder, "upload.jsonl")
            with open(path, "wb") as out:
                out.write(bytes(upload.data))
        report, failed = IngestCommand().ingest_once([path])
    # The temporary folder's name means nothing to the uploader: name the upload instead.
    lines = [line.replace(path, upload.name) for line in report.lines()]
    upload.counts = {status: report.counts[status] for status in STATUSES}
    upload.problems = len(report.with_problems)
    upload.lines = lines[:LINES_KEPT]
    upload.job_names = sorted(report.jobs)
    if failed:
        upload.state = IngestUpload.State.FAILED
        upload.problem = "No trial could be read from it: " + "; ".join(
            printable(reason) for _, reason in failed
        )
    else:
        upload.state = IngestUpload.State.DONE
