"""One-time login links: how `trialdesk serve` hands its local user a logged-in browser.

A link carries a token signed with the project's SECRET_KEY (`django.core.signing`) that
names a user and the moment of their last login. Logging in through it moves `last_login`
(Django's `update_last_login`), so the same link never works twice; it also expires after
`MAX_AGE`. The link only opens a page whose button posts (with its CSRF token): a link
preview or prefetch that fetches it logs nobody in and spends nothing.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core import signing

SALT = "trialdesk.login-link"
MAX_AGE = 15 * 60  # seconds


def make_token(user: User) -> str:
    return signing.dumps([user.pk, _stamp(user)], salt=SALT, compress=True)


def user_for(token: str) -> User | None:
    """The active user a token was made for, while it is fresh and unused; else None."""
    try:
        pk, stamp = signing.loads(token, salt=SALT, max_age=MAX_AGE)
    except (signing.BadSignature, ValueError, TypeError):
        return None
    user = User.objects.filter(pk=pk, is_active=True).first()
    if user is None or _stamp(user) != stamp:
        return None
    return user


def _stamp(user: User) -> str:
    return user.last_login.isoformat() if user.last_login else ""
