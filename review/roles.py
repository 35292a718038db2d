"""Roles are Django groups (DESIGN §3): who may browse and who may annotate.

- reviewer: browse, annotate;
- expert: a reviewer with a discipline;
- analyst: browse, export and read the API, but never annotate;
- adjudicating conflicting reviews: experts and staff;
- the defective-task ledger: reviewers propose a task as defective, experts and staff
  confirm or clear it;
- staff: ingest and manage; may also browse and annotate.

A user in no group (and not staff) sees nothing but the login page and 403s.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, PermissionsMixin
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseBase

from rewards.cache import ROLES_TTL, roles_key

REVIEWER = "reviewer"
EXPERT = "expert"
ANALYST = "analyst"
ROLE_GROUPS = (REVIEWER, EXPERT, ANALYST)

BROWSE_GROUPS = frozenset({REVIEWER, EXPERT, ANALYST})
ANNOTATE_GROUPS = frozenset({REVIEWER, EXPERT})

_CACHE_ATTR = "_trialdesk_roles"


def roles_of(user: AbstractBaseUser | AnonymousUser) -> frozenset[str]:
    """The user's role groups, kept in the shared cache (`rewards.cache.roles_key`, dropped
    when the user's groups change) and on the user object for the request: one query the
    first time, none on later requests."""
    if not user.is_authenticated or not user.is_active:
        return frozenset()
    if not isinstance(user, PermissionsMixin):
        return frozenset()
    kept: frozenset[str] | None = getattr(user, _CACHE_ATTR, None)
    if kept is None:
        key = roles_key(user.pk)
        names: list[str] | None = cache.get(key)
        if names is None:
            names = sorted(user.groups.filter(name__in=ROLE_GROUPS).values_list("name", flat=True))
            cache.set(key, names, ROLES_TTL)
        kept = frozenset(names)
        setattr(user, _CACHE_ATTR, kept)
    return kept


def _is_staff(user: AbstractBaseUser | AnonymousUser) -> bool:
    return bool(
        user.is_active
        and (getattr(user, "is_staff", False) or getattr(user, "is_superuser", False))
    )


def can_browse(user: AbstractBaseUser | AnonymousUser) -> bool:
    return user.is_authenticated and (_is_staff(user) or bool(roles_of(user) & BROWSE_GROUPS))


def can_annotate(user: AbstractBaseUser | AnonymousUser) -> bool:
    return user.is_authenticated and (_is_staff(user) or bool(roles_of(user) & ANNOTATE_GROUPS))


def can_adjudicate(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Final verdicts on conflicting reviews: experts and staff (see review.adjudication)."""
    return user.is_authenticated and (_is_staff(user) or EXPERT in roles_of(user))


def can_propose_defects(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Reporting a task as defective (a proposal): whoever may annotate."""
    return can_annotate(user)


def can_settle_defects(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Confirming or clearing a task as defective: experts and staff (see review.defects)."""
    return can_adjudicate(user)


def can_see_calibration(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Judge calibration and its admission rule: experts and staff (staff edit the rule)."""
    return can_adjudicate(user)


def can_export(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Exports take everything out at once: analysts and staff only."""
    return user.is_authenticated and (_is_staff(user) or ANALYST in roles_of(user))


def can_ingest(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Ingest writes results for everyone: staff only."""
    return user.is_authenticated and _is_staff(user)


def role_label(user: AbstractBaseUser | AnonymousUser) -> str:
    """What the user menu shows: the strongest role the user holds."""
    if _is_staff(user):
        return "staff"
    roles = roles_of(user)
    for role in (EXPERT, REVIEWER, ANALYST):
        if role in roles:
            return role
    return "no role"


def require_role(
    check: Callable[[AbstractBaseUser | AnonymousUser], bool],
) -> Callable[[Callable[..., HttpResponseBase]], Callable[..., HttpResponseBase]]:
    """View decorator: 403 unless `check(request.user)`; place it under `login_required`."""

    def decorator(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
        @wraps(view)
        def wrapped(request: Any, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if not check(request.user):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


browse_required = require_role(can_browse)
annotate_required = require_role(can_annotate)
export_required = require_role(can_export)
# Scenarios, grading and re-judging change what every reviewer sees: staff only.
staff_required = require_role(can_ingest)
adjudicate_required = require_role(can_adjudicate)
calibration_required = require_role(can_see_calibration)
