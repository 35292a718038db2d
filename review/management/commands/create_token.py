"""`manage.py create_token USER [--name N]`: make an API token; `--revoke PREFIX`, `--list USER`.

The token is printed once and only its sha256 is stored: whoever loses it makes a new one
and revokes the old one by its prefix (the 8 characters after `tdk_`).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from review import tokens
from review.roles import role_label


class Command(BaseCommand):
    help = (
        "Create an API token for USER and print it once; --revoke PREFIX revokes a token; "
        "--list USER lists a user's tokens (prefixes only)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", nargs="?", metavar="USER")
        parser.add_argument("--name", default="", help="what the token is for, e.g. 'nightly CI'")
        parser.add_argument("--revoke", metavar="PREFIX", help="revoke the token with PREFIX")
        parser.add_argument("--list", action="store_true", help="list USER's tokens")

    def handle(self, *args: Any, **options: Any) -> None:
        username: str | None = options["username"]
        if options["revoke"]:
            if username or options["list"]:
                raise CommandError("--revoke PREFIX takes no USER and no --list")
            self._revoke(options["revoke"])
            return
        if not username:
            raise CommandError("name a USER (or use --revoke PREFIX)")
        user = User.objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user named {username!r}")
        if options["list"]:
            self._list(user)
            return
        if not user.is_active:
            raise CommandError(f"{username!r} is inactive: the API would refuse its token")
        row, token = tokens.create_token(user, options["name"])
        self.stdout.write(token)
        self.stderr.write(
            f"Token {row.prefix} for {username} ({role_label(user)}). It is shown only now: "
            "keep it secret. Revoke it with: manage.py create_token --revoke " + row.prefix
        )

    def _revoke(self, prefix: str) -> None:
        row = tokens.revoke_token(prefix)
        if row is None:
            raise CommandError(f"no live token with prefix {prefix!r}")
        self.stdout.write(f"Revoked {row.prefix} of {row.user.username}.")

    def _list(self, user: User) -> None:
        rows = tokens.tokens_of(user)
        if not rows:
            self.stdout.write(f"{user.username} has no tokens.")
            return
        for row in rows:
            state = f"revoked {row.revoked_at:%Y-%m-%d %H:%M}" if row.revoked_at else "active"
            used = f"{row.last_used_at:%Y-%m-%d %H:%M}" if row.last_used_at else "never"
            self.stdout.write(
                f"{row.prefix}  {state:<24}  created {row.created_at:%Y-%m-%d %H:%M}  "
                f"last used {used}  {row.name}"
            )
