"""The django-ninja adaptation, in one place: bearer-token auth, the API object, errors as JSON.

Every answer from `/api/`, errors included, is JSON `{"detail": …}`. Validation errors give field
paths and messages, never the values sent: a bundle's text was written by an agent.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from functools import wraps
from typing import Any, cast

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI, Schema, Swagger
from ninja.errors import AuthenticationError, AuthorizationError, HttpError, ValidationError
from ninja.openapi.views import openapi_view
from ninja.security.http import HttpBearer
from pydantic import ConfigDict

from review import tokens
from review.roles import can_annotate, can_browse, can_ingest, can_see_calibration

log = logging.getLogger(__name__)

MAX_PAGE = 200
DEFAULT_PAGE = 50
MAX_BUNDLES = 1000
# At most this many validation errors are listed; the rest are counted.
MAX_ERRORS = 20


# --- auth ------------------------------------------------------------------------------------
class TokenAuth(HttpBearer):
    """`Authorization: Bearer <token>`; the token's user must pass `allowed`.

    Returns the user (ninja stores it as `request.auth`); `request.user` is never consulted,
    so a browser's session cookie grants nothing here.
    """

    def __init__(self, allowed: Callable[[AbstractBaseUser | AnonymousUser], bool]) -> None:
        self.allowed = allowed
        super().__init__()

    def __call__(self, request: HttpRequest) -> User | None:
        # ninja's own HttpBearer logs an unexpected header in DEBUG, token included.
        scheme, _, token = request.headers.get(self.header, "").partition(" ")
        if scheme.lower() != "bearer":
            return None
        return self.authenticate(request, token.strip())

    def authenticate(self, request: HttpRequest, token: str) -> User | None:
        row = tokens.verify_token(token)
        if row is None:
            return None
        user = row.user
        if not self.allowed(user):
            raise AuthorizationError(message="Your role does not allow this.")
        return user


browse_auth = TokenAuth(can_browse)
annotate_auth = TokenAuth(can_annotate)
staff_auth = TokenAuth(can_ingest)
calibration_auth = TokenAuth(can_see_calibration)


def user_of(request: HttpRequest) -> User:
    return cast(User, request.auth)  # type: ignore[attr-defined]


# --- the API and its error answers -----------------------------------------------------------
def _login_for_the_docs_page(view: Callable[..., Any]) -> Callable[..., Any]:
    """Ninja passes both its schema and its docs page through this: the docs are a page, and
    every page needs a login; the schema stays readable by pipelines and tools."""
    if getattr(view, "func", None) is openapi_view:
        return login_required(view)
    return view


api = NinjaAPI(
    title="Trialdesk API",
    version="1",
    description=(
        "Trials, jobs, annotations and ingest. Authenticate with `Authorization: Bearer "
        "<token>`; make a token with `manage.py create_token USER`."
    ),
    urls_namespace="api",
    # validatorUrl: Swagger UI would otherwise send the schema to an outside validator.
    docs=Swagger(settings={"validatorUrl": None}),
    docs_decorator=_login_for_the_docs_page,
)


def error_response(status: int, detail: Any, headers: dict[str, str] | None = None) -> HttpResponse:
    return JsonResponse({"detail": detail}, status=status, headers=headers)


# A field path names fields, but an unknown key sent in a body lands in it too: a key that
# does not look like a field name is shown as "*", so no sent text is echoed.
_FIELD_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _loc_part(part: Any) -> str | int:
    if isinstance(part, int) and not isinstance(part, bool):
        return part
    text = str(part)
    return text if _FIELD_NAME.fullmatch(text) else "*"


def clean_errors(errors: Sequence[Any], prefix: tuple[str | int, ...] = ()) -> list[dict[str, Any]]:
    """Field path, message and type of each error; the input and its context are dropped."""
    cleaned = [
        {
            "loc": [*prefix, *(_loc_part(p) for p in error["loc"])],
            "msg": error["msg"],
            "type": error["type"],
        }
        for error in errors[:MAX_ERRORS]
    ]
    if len(errors) > MAX_ERRORS:
        cleaned.append(
            {"loc": list(prefix), "msg": f"and {len(errors) - MAX_ERRORS} more", "type": "more"}
        )
    return cleaned


@api.exception_handler(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = []
    for error in exc.errors:
        loc = tuple(error["loc"])
        # ninja names a body parameter in the path (`body.body.judgment`); the body is enough.
        if loc[:2] == ("body", "body"):
            loc = loc[1:]
        errors.append({**error, "loc": loc})
    return error_response(422, clean_errors(errors))


@api.exception_handler(AuthenticationError)
def on_authentication_error(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return error_response(
        401,
        "A valid API token is required: send `Authorization: Bearer <token>`.",
        headers={"WWW-Authenticate": 'Bearer realm="trialdesk"'},
    )


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return error_response(exc.status_code, exc.message)


@api.exception_handler(Http404)
def on_not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return error_response(404, "Not found.")


@api.exception_handler(RequestDataTooBig)
def on_too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return error_response(
        413,
        f"The request body is larger than the {limit}-byte limit; send fewer bundles per request.",
    )


@api.exception_handler(SuspiciousOperation)
def on_suspicious(request: HttpRequest, exc: SuspiciousOperation) -> HttpResponse:
    return error_response(400, "Bad request.")


@api.exception_handler(Exception)
def on_server_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    log.exception("API error on %s %s", request.method, request.path)
    return error_response(500, "Internal server error.")


def json_errors(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Errors ninja answers outside an operation (405, the API root) as JSON too.

    CSRF exempt, as ninja makes its operations: nothing under /api/ reads a session or a
    cookie, so a forged cross-site request carries no authority (and Django's CSRF failure
    page would be HTML).
    """

    @csrf_exempt
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        try:
            response = view(request, *args, **kwargs)
        except Http404:
            return error_response(404, "Not found.")
        except Exception:
            log.exception("API error on %s %s", request.method, request.path)
            return error_response(500, "Internal server error.")
        content_type = response.get("Content-Type", "")
        if response.status_code >= 400 and not content_type.startswith("application/json"):
            replaced = error_response(response.status_code, response.reason_phrase)
            if "Allow" in response:
                replaced["Allow"] = response["Allow"]
            return replaced
        return response

    return wrapped


@csrf_exempt
def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    return error_response(404, "Not found.")


# --- schemas ---------------------------------------------------------------------------------
class StrictIn(Schema):
    model_config = ConfigDict(extra="forbid")


class ErrorOut(Schema):
    detail: Any


ERRORS: dict[int, type[Schema]] = {401: ErrorOut, 403: ErrorOut}
