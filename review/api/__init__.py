"""The JSON API (DESIGN §6): trials, jobs, annotations and ingest, for pipelines and analysts.

Mounted at `/api/`; OpenAPI at `/api/openapi.json`, Swagger UI at `/api/docs` (ninja's bundled
copy, served from our static files, so the Content Security Policy holds).

- Auth is a bearer token only (`review.tokens`): no session, so no CSRF to think about. The
  token's user's roles apply (`review.roles`): browsing needs `can_browse`, annotating
  `can_annotate`, ingesting staff. No or a bad token → 401, the wrong role → 403; both are
  decided before the body is read.
- Endpoints are thin: the explorer's `TrialFilterForm` filters and pages trials, the export's
  bundles come from `rewards.export` and `review.exports`, annotations are made only by
  `review.models.add_annotation`, and bundles are stored only by `BundleWriter`.
- Every answer from `/api/`, errors included, is JSON `{"detail": …}`. Validation errors give
  field paths and messages, never the values sent: a bundle's text was written by an agent.
"""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, re_path
from django.views.decorators.http import require_safe

from review.api import batches, defects, figures, ingest, jobs, trials
from review.api.ninja import api, json_errors, not_found

for resource in (trials, jobs, figures, ingest, batches, defects):
    api.add_router("", resource.router)


# ninja's own views (schema, docs, API root) answer any method; they are read-only.
_READ_ONLY_VIEWS = {"openapi-json", "openapi-view", "api-root"}


def urls() -> tuple[list[URLPattern | URLResolver], str, str]:
    """What config/urls.py mounts at `api/`: ninja's URLs, errors as JSON, and a JSON 404
    for every other path under /api/."""
    patterns, app_name, namespace = api.urls
    for pattern in patterns:
        if isinstance(pattern, URLPattern):
            view = pattern.callback
            if pattern.name in _READ_ONLY_VIEWS:
                view = require_safe(view)
            pattern.callback = json_errors(view)
    return [*patterns, re_path(r"", not_found, name="not-found")], app_name, namespace
