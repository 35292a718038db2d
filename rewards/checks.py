"""Deployment checks of our own (`manage.py check --deploy`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Tags, Warning, register


@register(Tags.caches, deploy=True)
def shared_cache(app_configs: Sequence[AppConfig] | None, **kwargs: Any) -> list[CheckMessage]:
    # Sessions are read through the cache (cached_db) and kept values live there: with each
    # process's own memory, a logout on one app server leaves the session readable on the
    # others until it expires, and every worker recomputes what another already knows.
    if settings.CACHES["default"]["BACKEND"].endswith(".LocMemCache"):
        return [
            Warning(
                "Each process keeps its own cache: sessions and kept values are not shared "
                "between app servers and workers.",
                hint="Set CACHE_URL=redis://host:6379/0 (see the README's production settings).",
                id="trialdesk.W001",
            )
        ]
    return []
