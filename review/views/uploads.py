"""The staff upload page: a `.jsonl` bundle or a zipped Harbor job folder, ingested by a task
worker (`rewards.uploads`), never inside the request; the upload's page follows its progress
and shows the ingest's summary with links to its jobs."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods
from django.views.decorators.vary import vary_on_headers

from review.forms import UploadForm, too_large_message, upload_limit
from review.http import HttpRequest, wants_fragment
from review.roles import staff_required
from rewards.models import IngestUpload, Job
from rewards.uploads import start_upload

UPLOADS_SHOWN = 20
# What a multipart body adds around the file (boundaries, headers, the CSRF token).
ENVELOPE_BYTES = 64 << 10


def _recent() -> list[IngestUpload]:
    return list(
        IngestUpload.objects.defer("data", "lines").select_related("uploaded_by")[:UPLOADS_SHOWN]
    )


@require_http_methods(["GET", "POST"])
@login_required
@staff_required
def upload(request: HttpRequest) -> HttpResponse:
    """GET: the form and the latest uploads. POST: the file stored and its ingest enqueued,
    then the upload's page; a body larger than the limit is refused before it is read."""
    form = UploadForm()
    status = 200
    refused = ""
    if request.method == "POST":
        limit = upload_limit()
        length = int(request.META.get("CONTENT_LENGTH") or 0)
        if length > limit + ENVELOPE_BYTES:
            refused = too_large_message(length, limit)
            status = 413
        else:
            form = UploadForm(request.POST, request.FILES)
            if form.is_valid():
                file = form.cleaned_data["file"]
                started = start_upload(file.name, form.kind, file.read(), request.user.pk)
                return redirect("review:upload-detail", started.pk)
            status = 400
    context = {"form": form, "refused": refused, "uploads": _recent(), "limit": upload_limit()}
    return render(request, "review/upload.html", context, status=status)


@require_GET
@login_required
@staff_required
@vary_on_headers("HX-Request")
def upload_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """One upload: its state, then the ingest's counts, summary and jobs; for htmx, the
    status region alone (it asks again every few seconds until the worker is done)."""
    found = get_object_or_404(
        IngestUpload.objects.defer("data").select_related("uploaded_by"), pk=pk
    )
    jobs = (
        list(Job.objects.filter(name__in=found.job_names).only("id", "name").order_by("name"))
        if found.job_names
        else []
    )
    context = {"upload": found, "jobs": jobs}
    if wants_fragment(request):
        return render(request, "review/upload_detail.html#status", context)
    return render(request, "review/upload_detail.html", context)
