"""The project's request type, for type checking views.

`HtmxMiddleware` adds `htmx`; every review view is behind `login_required`, so `user` is a
real `User` by the time the view body runs.
"""

from functools import cache

from django.contrib.auth.models import User
from django.http import HttpRequest as HttpRequestBase, QueryDict
from django.urls import get_script_prefix, get_urlconf, reverse
from django_htmx.middleware import HtmxDetails


class HttpRequest(HttpRequestBase):
    htmx: HtmxDetails
    user: User


def wants_fragment(request: HttpRequest) -> bool:
    """The one rule for fragment versus page (STYLE "HTMX").

    A fragment only for a plain htmx request: a boosted link or form expects a whole page,
    and so does htmx restoring history after a cache miss. Views that use this carry
    `@vary_on_headers("HX-Request")` so no cache hands a fragment to a full navigation.
    """
    return (
        bool(request.htmx) and not request.htmx.boosted and not request.htmx.history_restore_request
    )


def with_query(url: str, query: QueryDict | str) -> str:
    """`url` with a query string (a QueryDict or one already encoded); none when empty."""
    encoded = query.urlencode() if isinstance(query, QueryDict) else query
    return f"{url}?{encoded}" if encoded else url


def path_of(name: str) -> str:
    """The path of URL `name` (no arguments), reversed once per process for the current
    URLconf and script prefix: a page that links to it dozens of times pays for it once."""
    return _path_of(name, get_urlconf(), get_script_prefix())


@cache
def _path_of(name: str, urlconf: str | None, prefix: str) -> str:
    return reverse(name, urlconf=urlconf)
