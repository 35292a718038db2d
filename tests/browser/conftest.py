"""Playwright against Debian's Chromium and pytest-django's live server.

The tests skip, with the reason, when /usr/bin/chromium is missing, unless
TRIALDESK_REQUIRE_BROWSER=1 (CI sets it): then a missing browser fails them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.conftest import purge_review_data

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# Playwright's sync API runs an event loop in this thread; Django's ORM refuses to run in a
# thread with a running loop unless told this is deliberate. Set only while the browser runs,
# so no other test (or a subprocess it starts) inherits it.
ASYNC_UNSAFE = "DJANGO_ALLOW_ASYNC_UNSAFE"


def _require_browser() -> None:
    if CHROMIUM.exists():
        return
    message = f"Chromium is not installed at {CHROMIUM}; browser tests need it"
    if os.environ.get("TRIALDESK_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{message} (TRIALDESK_REQUIRE_BROWSER=1)")
    pytest.skip(f"{message}; install the chromium package to run them")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    _require_browser()
    from playwright.sync_api import sync_playwright

    previous = os.environ.get(ASYNC_UNSAFE)
    os.environ[ASYNC_UNSAFE] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop(ASYNC_UNSAFE, None)
        else:
            os.environ[ASYNC_UNSAFE] = previous


@pytest.fixture
def app(live_server: Any) -> Iterator[Any]:
    """The live server, with annotations purged after the test."""
    yield live_server
    purge_review_data()


class Browsing:
    """A logged-in browser page that records what must never happen: dialogs, errors."""

    def __init__(self, page: Any, base_url: str) -> None:
        self.page = page
        self.base_url = base_url
        self.dialogs: list[str] = []
        self.problems: list[str] = []
        page.on("dialog", self._on_dialog)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("console", self._on_console)

    def _on_dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _on_console(self, message: Any) -> None:
        if message.type == "error":
            self.problems.append(f"console error: {message.text}")

    def goto(self, path: str) -> Any:
        return self.page.goto(self.base_url + path)

    def mark_document(self) -> None:
        """Tag the current document; a full reload would lose the tag."""
        self.page.evaluate("window.__sameDocument = true")

    def same_document(self) -> bool:
        return bool(self.page.evaluate("window.__sameDocument === true"))


@pytest.fixture
def browse(browser: Any, app: Any) -> Iterator[Any]:
    """`browse(user)` opens a page logged in as `user`; `width` and `height` size it (a
    phone is 390 px wide)."""
    contexts = []

    def open_as(user: Any, width: int = 1400, height: int = 1000) -> Browsing:
        client = Client()
        client.force_login(user)
        context = browser.new_context(viewport={"width": width, "height": height})
        context.add_cookies(
            [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": app.url}]
        )
        contexts.append(context)
        return Browsing(context.new_page(), app.url)

    yield open_as
    for context in contexts:
        context.close()
