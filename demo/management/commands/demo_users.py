"""Create one demo user per role, with known passwords, for local use.

Idempotent: running it again resets the same users to the same passwords and roles. The
passwords are printed on purpose (this is for `make run`); never run it on a production
database.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand
from django.db import transaction

from demo.users import DEMO_USERS, DemoUser
from review.models import ReviewerProfile


class Command(BaseCommand):
    help = (
        "Create or reset one demo user per role (reviewer, expert, analyst, staff) and print them."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        with transaction.atomic():
            for demo in DEMO_USERS:
                self._ensure(demo)
        width = max(len(d.username) for d in DEMO_USERS)
        pwidth = max(len(d.password) for d in DEMO_USERS)
        lines = [
            "Demo users (local use only; `manage.py demo_users` resets them):",
            f"  {'username':<{width}}  {'password':<{pwidth}}  role",
        ]
        for demo in DEMO_USERS:
            role = demo.role + (f", discipline: {demo.discipline}" if demo.discipline else "")
            lines.append(f"  {demo.username:<{width}}  {demo.password:<{pwidth}}  {role}")
        self.stdout.write("\n".join(lines))

    @staticmethod
    def _ensure(demo: DemoUser) -> None:
        user, _ = User.objects.get_or_create(username=demo.username)
        user.is_active = True
        user.is_staff = demo.staff
        user.is_superuser = demo.staff
        user.set_password(demo.password)
        user.save()
        user.groups.set([Group.objects.get_or_create(name=name)[0] for name in demo.groups])
        if demo.discipline:
            ReviewerProfile.objects.update_or_create(
                user=user, defaults={"discipline": demo.discipline}
            )
