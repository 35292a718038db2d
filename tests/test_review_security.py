"""Threat model (DESIGN §9) on the review pages: CSP, no inline code, hostile text inert."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.test import Client

from review.forms import TAB_CHOICES
from rewards.models import Trial
from tests import review_factories as f
from tests.harbor_desk import ingest_desk, trial_name
from tests.ingest_helpers import write_files

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


@pytest.fixture
def hostile() -> Trial:
    return f.write(f.hostile_bundle())[0]


def _pages(client: Client, trial: Trial) -> dict[str, str]:
    urls = {
        "explorer": "/",
        "explorer-search": "/?q=script",
        "trial": f"/trials/{trial.pk}/",
        "jobs": "/jobs/",
        "job": f"/jobs/{trial.job_id}/",
        **{f"tab-{t}": f"/trials/{trial.pk}/?tab={t}" for t, _ in TAB_CHOICES},
        "scorers-open": f"/trials/{trial.pk}/?open=0,1",
    }
    pages = {name: client.get(url).content.decode() for name, url in urls.items()}
    pages["scorer-fragment"] = client.get(
        f"/trials/{trial.pk}/scorers/0/?expanded=1", headers=HX
    ).content.decode()
    pages["annotation-fragment"] = client.post(
        f"/trials/{trial.pk}/annotations/", {"judgment": "fail", "notes": f.HOSTILE}, headers=HX
    ).content.decode()
    return pages


class _Elements(HTMLParser):
    """Every element the browser would build from the page, with its attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.script_text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.script_text.append(data)


def _injections(html: str) -> list[str]:
    """What hostile text could have turned into: elements, handlers, script URLs, inline code."""
    parser = _Elements()
    parser.feed(html)
    found = [f"inline script {text[:40]!r}" for text in parser.script_text]
    for tag, attrs in parser.elements:
        if tag in {"img", "iframe", "object", "embed", "style", "base"}:
            found.append(f"<{tag}>")
        if tag == "script" and not attrs.get("src", "").startswith("/static/"):
            found.append(f"script src={attrs.get('src')!r}")
        for name, value in attrs.items():
            if name.startswith("on") or name == "style" or name.startswith("hx-on"):
                found.append(f"<{tag} {name}>")
            if (tag, name, value) == ("link", "href", "data:,"):
                continue  # our own empty favicon
            if name in {"href", "src", "action", "hx-get", "hx-post"} and (
                value.strip().lower().startswith(("javascript:", "data:", "http://", "https://"))
            ):
                found.append(f"<{tag} {name}={value[:40]!r}>")
    return found


def test_hostile_text_from_every_artifact_field_is_shown_escaped(
    client: Client, hostile: Trial
) -> None:
    f.login(client, "rita", "reviewer")
    for name, html in _pages(client, hostile).items():
        assert f.HOSTILE not in html, name
        assert _injections(html) == [], name
    trial_page = client.get(f"/trials/{hostile.pk}/").content.decode()
    # Shown literally, never stripped.
    escaped = "&lt;script&gt;window.__pwned=1;alert(&quot;xss&quot;)&lt;/script&gt;"
    for field in (
        "task ",
        "agent ",
        "model ",
        "error ",
        "scorer ",
        "detail ",
        "tail ",
        "mode ",
        "reasoning ",
        "claim ",
        "evidence ",
        "cat ",
        "desc ",
        "notes ",
        "category ",
        "discipline ",
        "message ",
        "observation ",
        "instruction ",
    ):
        assert f"{field}{escaped}" in trial_page, field


def test_hostile_reviewer_names_from_a_bundle_are_escaped(client: Client, hostile: Trial) -> None:
    f.login(client, "rita", "reviewer")
    html = client.get(f"/trials/{hostile.pk}/").content.decode()
    assert "rev&lt;script&gt;" in html


@pytest.mark.parametrize("page", ["/", "/jobs/", "/trials/{pk}/", "/accounts/login/"])
def test_pages_have_no_inline_script_style_or_event_handlers(
    client: Client, hostile: Trial, page: str
) -> None:
    f.login(client, "rita", "reviewer")
    if page == "/accounts/login/":
        client.logout()
    html = client.get(page.format(pk=hostile.pk)).content.decode()
    assert _injections(html) == []
    assert re.search(r'<script src="/static/django_htmx/htmx-2[^"]*" defer', html)
    assert '"includeIndicatorStyles":false' in html


def test_review_pages_carry_an_enforced_csp_without_unsafe_inline(
    client: Client, hostile: Trial
) -> None:
    f.login(client, "rita", "reviewer")
    for url in ("/", f"/trials/{hostile.pk}/", "/jobs/"):
        response = client.get(url)
        policy = response.headers["Content-Security-Policy"]
        directives = {
            part.strip().split(" ", 1)[0]: part.strip().split(" ", 1)[1]
            for part in policy.split(";")
            if " " in part.strip()
        }
        assert directives["script-src"] == "'self'"
        assert "'unsafe-inline'" not in directives["style-src"]
        assert "Content-Security-Policy-Report-Only" not in response.headers


def test_csrf_token_reaches_htmx_through_body_hx_headers(client: Client, hostile: Trial) -> None:
    f.login(client, "rita", "reviewer")
    html = client.get("/").content.decode()
    assert re.search(r"""<body hx-headers='\{"X-CSRFToken": "[A-Za-z0-9]+"\}'""", html)


def test_artifact_urls_never_become_links(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    trial = f.make_trial(
        judges=[f.judge("PASS", reasoning="see https://evil.example/x and javascript:alert(1)")],
        detail={"final_response": "http://evil.example/steal"},
    )
    html = client.get(f"/trials/{trial.pk}/?tab=output").content.decode()
    assert "https://evil.example/x" in html
    assert 'href="https://evil.example' not in html
    assert 'href="http://evil.example' not in html


# Escape sequences that try to smuggle markup: through the SGR parameters, an OSC 8 link, a
# title, and markup between colour codes.
SMUGGLING = (
    '\x1b[31;"><script>window.__pwned=5</script>m'
    "\x1b]8;;javascript:alert(6)\x07click\x1b]8;;\x07"
    '\x1b]0;<img src=x onerror="alert(7)">\x07'
    '\x1b[32m<iframe src="javascript:alert(8)"></iframe>\x1b[0m'
)
HOSTILE_MARKDOWN = (
    "# Report\n\n"
    f"{f.HOSTILE}\n\n"
    "[click](javascript:alert(9)) [site](https://evil.example/x) <https://evil.example/a>\n\n"
    "![pixel](https://evil.example/p.png)\n\n"
    "<div onclick=alert(10)>raw html</div>\n"
)


def test_hostile_text_in_a_harbor_folder_is_inert_on_every_tab(
    client: Client, tmp_path: Path
) -> None:
    folders = ingest_desk(tmp_path)
    for kind in ("logs-only", "analysis"):
        write_files(
            folders[kind],
            {
                "agent/hostile.txt": f"{SMUGGLING}\n{f.HOSTILE}",
                "trial.log": SMUGGLING,
                "verifier/test-stderr.txt": SMUGGLING,
                "artifacts/hostile.html": f.HOSTILE,
                "artifacts/hostile.md": HOSTILE_MARKDOWN,
                "analysis.md": HOSTILE_MARKDOWN,
                "analysis.json": {"summary": f.HOSTILE},
            },
        )
    f.login(client, "rita", "reviewer")
    for kind in ("logs-only", "analysis"):
        trial = Trial.objects.get(name=trial_name(kind))
        for tab, _ in TAB_CHOICES:
            html = client.get(f"/trials/{trial.pk}/?tab={tab}").content.decode()
            assert f.HOSTILE not in html, (kind, tab)
            assert _injections(html) == [], (kind, tab)
            assert "__pwned=5</script>" not in html, (kind, tab)
    trial = Trial.objects.get(name=trial_name("analysis"))
    logs = client.get(f"/trials/{trial.pk}/?tab=agent-logs").content.decode()
    # Shown literally: the markup as text, the link's text without its URL, and in the raw
    # view the escape characters themselves.
    assert "&lt;script&gt;window.__pwned=1;" in logs
    assert "&lt;iframe src=&quot;javascript:alert(8)&quot;&gt;&lt;/iframe&gt;" in logs
    assert "click" in logs
    assert "javascript:alert(6)" not in logs.split('text-raw">')[0]
    assert "␛]8;;javascript:alert(6)" in logs
    analysis = client.get(f"/trials/{trial.pk}/?tab=analysis").content.decode()
    assert "<h1>Report</h1>" in analysis
    assert "[click](javascript:alert(9))" in analysis
    assert "&lt;div onclick=alert(10)&gt;raw html&lt;/div&gt;" in analysis
