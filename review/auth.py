"""The authentication backend: Django's own, reading the user's roles with the user.

Every page checks a role (review.roles) right after the session's user is loaded: reading
the role groups in the same SELECT (one EXISTS per role) saves every request a query. The
roles are read afresh on each request, like the user row itself, so a change of groups
counts from the next request on.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.db.models import Exists, OuterRef

from review.roles import ROLE_GROUPS, remember_roles


def _role_flag(role: str) -> str:
    return f"_has_role_{role}"


ROLE_FLAGS = {
    _role_flag(role): Exists(Group.objects.filter(user=OuterRef("pk"), name=role))
    for role in ROLE_GROUPS
}


class RoleBackend(ModelBackend):
    """`ModelBackend` whose `get_user` (run once per request, for the session's user) also
    reads the user's role groups; `authenticate` and permissions are Django's own."""

    def get_user(self, user_id: Any) -> Any:
        model = get_user_model()
        try:
            user = model._default_manager.annotate(**ROLE_FLAGS).get(pk=user_id)
        except model.DoesNotExist:
            return None
        remember_roles(
            user, frozenset(role for role in ROLE_GROUPS if getattr(user, _role_flag(role)))
        )
        return user if self.user_can_authenticate(user) else None
