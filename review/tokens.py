"""API tokens: made, checked and revoked here, and nowhere else.

A token reads `tdk_<prefix>_<secret>`: `prefix` is 8 random hex characters, public, stored as
is, to name the token (`create_token --list`, `--revoke PREFIX`); `secret` comes from
`secrets.token_urlsafe(32)` (256 bits). The database holds only the sha256 of the whole token.
A request's token is found by looking its sha256 up: the secret itself is never compared
character by character, so response times say nothing about how much of a guess was right.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from review.models import ApiToken

SCHEME = "tdk"
PREFIX_BYTES = 4
SECRET_BYTES = 32
# Longest token we make: `tdk_` + 8 + `_` + 43; anything much longer is not one of ours and
# is refused before it is hashed.
MAX_TOKEN_LENGTH = 128
# last_used_at is a hint for whoever reviews tokens, not an audit log: writing it on every
# request would turn every API read into a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def digest_of(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(user: User, name: str = "") -> tuple[ApiToken, str]:
    """A new token for `user`: the row, and the token itself (shown once, never stored)."""
    with transaction.atomic():
        while True:
            prefix = secrets.token_hex(PREFIX_BYTES)
            # 2**32 prefixes: a clash is rare, but the unique constraint would turn it into
            # an error, so pick again instead.
            if not ApiToken.objects.filter(prefix=prefix).exists():
                break
        token = f"{SCHEME}_{prefix}_{secrets.token_urlsafe(SECRET_BYTES)}"
        row = ApiToken.objects.create(
            user=user, name=name[:100], prefix=prefix, digest=digest_of(token)
        )
    return row, token


def verify_token(token: str) -> ApiToken | None:
    """The live token row (with its user) for a presented token, or None.

    None for anything that is not a token we made, a revoked token, or a token whose user
    is inactive. Touches `last_used_at` at most once per LAST_USED_RESOLUTION.
    """
    if not token or len(token) > MAX_TOKEN_LENGTH or not token.startswith(f"{SCHEME}_"):
        return None
    digest = digest_of(token)
    row = (
        ApiToken.objects.select_related("user")
        .filter(digest=digest, revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    # The lookup already matched on the digest; comparing again in constant time keeps that
    # property even if the column were ever matched case-insensitively or by prefix.
    if row is None or not hmac.compare_digest(row.digest, digest):
        return None
    now = timezone.now()
    if row.last_used_at is None or now - row.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
        row.last_used_at = now
    return row


def revoke_token(prefix: str) -> ApiToken | None:
    """Revoke the token with this prefix (`abcd1234` or `tdk_abcd1234…`); None when there is
    no such live token."""
    value = prefix.strip().lower()
    if value.startswith(f"{SCHEME}_"):
        value = value.split("_")[1]
    with transaction.atomic():
        row = (
            ApiToken.objects.select_for_update()
            .filter(prefix=value, revoked_at__isnull=True)
            .first()
        )
        if row is None:
            return None
        row.revoked_at = timezone.now()
        row.save(update_fields=["revoked_at"])
    return row


def tokens_of(user: User) -> list[ApiToken]:
    return list(ApiToken.objects.filter(user=user).order_by("-created_at", "-id"))
