"""Data Explorer: one row per trial, filtered, sorted and walked by keyset."""

from __future__ import annotations

from functools import partial

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import push_url

from review.choices import job_choices
from review.filtering.form import TrialFilterForm
from review.http import HttpRequest, wants_fragment, with_query
from review.pages.trial_list import ROWS, columns_for, filter_chips, sorted_by
from review.roles import browse_required, can_annotate, can_export, can_ingest
from review.science import counting
from rewards.cache import fingerprint
from rewards.models import Job, Trial


@require_GET
@login_required
@vary_on_headers("HX-Request")
@browse_required
def explorer(request: HttpRequest) -> HttpResponse:
    form = TrialFilterForm(request.GET)
    # Plain rows (dicts), not model instances: a third of the page's time went to building
    # 51 trials with their job and task.
    page = form.page(ROWS.all())
    query = form.canonical_query()
    encoded = query.urlencode()
    # What the rows' HTML shows, the key it is kept under: each row's values, the filter
    # their links carry and the next page's cursor (as the rows with their links written
    # out, at two thirds of the cost of writing those out for the key).
    rows_key = fingerprint(encoded, page.next_cursor, [tuple(row.values()) for row in page.rows])
    # Each row's link, the page's filter on it: one reverse for the page and an f-string per
    # row (a `{% url %}` per row cost a tenth of the page).
    before, after = reverse("review:trial-detail", args=[0]).rsplit("0", 1)
    after += f"?{encoded}" if encoded else ""
    for row in page.rows:
        row["url"] = f"{before}{row['id']}{after}"
    # A running job's rows asking again: the rows alone, without the count above them.
    polled = wants_fragment(request) and request.htmx.target == "trial-rows"
    # Counted for a first page only: scrolling on appends rows under the same count.
    counted = not (page.is_continuation or polled)
    count = counting.matching(form, Trial.objects.all()) if counted else None
    context = {
        "form": form,
        "page": page,
        "rows_key": rows_key,
        "query": query,
        "encoded": encoded,  # the query string, written once for the page's several links
        # Built when the template reads it: the header's HTML is kept per filter and sort.
        "columns": partial(columns_for, form.current_sort, query),
        "sorted_by": sorted_by(form.current_sort),
        "chips": filter_chips(form, query),
        "count": count,
        # The roles were read (and cached on the user) by browse_required: no query here.
        "can_annotate": can_annotate(request.user),
        "can_export": can_export(request.user),
    }
    job = form.filtered_job
    if job is not None and not page.is_continuation:
        # The list of a running job's trials asks again every few seconds (its rows only,
        # never the forms around them). A finished job is not running (`Job.is_running`):
        # the filter loaded its end, so only an unfinished one costs a query, one EXISTS on
        # the few unfinished trials' index.
        context["live"] = (
            job.finished_at is None and Job.objects.running().filter(pk=job.pk).exists()
        )
        context["live_url"] = with_query(reverse("review:explorer"), encoded)
    if count is not None and count.exact == 0 and not form.is_filtered and not job_choices():
        # An empty database: how to bring trials in, not an explorer of nothing. (A job
        # without trials yet, just started, is listed: its trials are on their way.)
        context["can_ingest"] = can_ingest(request.user)  # staff get the upload page
        return render(request, "review/welcome.html", context)
    if not wants_fragment(request):
        return render(request, "review/explorer.html", context)
    if polled and not page.is_continuation:
        return render(request, "review/explorer.html#live-rows", context)
    if page.is_continuation:
        # Scrolling on: the next rows, appended; the URL stays on the filter.
        return render(request, "review/explorer.html#rows", context)
    response = render(request, "review/explorer.html#results", context)
    # The pushed URL carries only the filters in use, not every empty form field.
    url = reverse("review:explorer")
    return push_url(response, f"{url}?{encoded}" if query else url)
