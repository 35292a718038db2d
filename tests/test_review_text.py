"""Agent text as a reviewer reads it (review.pages.text): ANSI colour as classes from a fixed
set, markdown rendered with its markup, links and images left inert."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from review.pages import text
from review.pages.text import Segment


def test_sgr_colour_becomes_classes_and_reset_ends_them() -> None:
    shown = text.terminal("ok \x1b[1;32mPASSED\x1b[0m \x1b[31mFAILED\x1b[39m done")
    assert shown.segments == [
        Segment("", "ok "),
        Segment("ansi-bold ansi-fg-2", "PASSED"),
        Segment("", " "),
        Segment("ansi-fg-1", "FAILED"),
        Segment("", " done"),
    ]
    assert shown.styled
    assert shown.raw.count("\x1b") == 4


def test_bright_256_and_background_colours_keep_the_16_basic_ones() -> None:
    shown = text.terminal("\x1b[91;44ma\x1b[38;5;3mb\x1b[38;5;200mc\x1b[38;2;1;2;3;4md")
    # 256-colour 200 and true colour would need a style attribute (the CSP forbids it): the
    # colour stays as it was; the true colour's four numbers are skipped, the 4 after them
    # (underline) applies.
    assert shown.segments == [
        Segment("ansi-fg-9 ansi-bg-4", "a"),
        Segment("ansi-fg-3 ansi-bg-4", "bc"),
        Segment("ansi-underline ansi-fg-3 ansi-bg-4", "d"),
    ]


def test_other_escapes_are_dropped_and_osc8_links_keep_only_their_text() -> None:
    shown = text.terminal(
        "a\x1b[2K\x1b[1Ab\x1b]8;;javascript:alert(1)\x07link\x1b]8;;\x07\x1b]0;title\x1b\\c\x1b"
    )
    assert shown.segments == [Segment("", "ablinkc")]
    assert text.strip_ansi("\x1b[31mred\x1b[0m") == "red"


def test_every_class_comes_from_the_fixed_set_whatever_the_parameters() -> None:
    shown = text.terminal('\x1b[38;5;9;48;5;15;1;2;3;4mx\x1b[999;-1;"onload=1mz\x1b[;;mq')
    allowed = re.compile(r"^ansi-(bold|dim|italic|underline|fg-\d{1,2}|bg-\d{1,2})$")
    for segment in shown.segments:
        for name in segment.classes.split():
            assert allowed.match(name), name
    assert '"onload=1mz' in "".join(s.text for s in shown.segments)


def test_plain_text_is_one_segment_and_not_styled() -> None:
    shown = text.terminal("<b>plain</b>")
    assert shown.segments == [Segment("", "<b>plain</b>")]
    assert not shown.styled
    assert text.terminal("").segments == []


def test_a_log_with_too_many_colour_changes_shows_the_rest_uncoloured() -> None:
    noisy = "\x1b[31mr\x1b[32mg" * text.MAX_SEGMENTS
    shown = text.terminal(noisy)
    assert len(shown.segments) <= text.MAX_SEGMENTS + 1
    assert shown.segments[-1].classes == ""
    assert "".join(s.text for s in shown.segments) == "rg" * text.MAX_SEGMENTS


def test_markdown_renders_its_own_markup() -> None:
    html = text.markdown_html("# Done\n\n**bold** and `code`\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n")
    assert "<h1>Done</h1>" in html
    assert "<strong>bold</strong>" in html
    assert "<code>code</code>" in html
    assert "<th>b</th>" in html
    assert "<td>2</td>" in html
    assert "style=" not in html  # a centred column would need one: the CSP forbids it


@pytest.mark.parametrize(
    ("source", "kept"),
    [
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ('<img src=x onerror="alert(1)">', "&lt;img src=x onerror="),
        ("[click](javascript:alert(1))", "[click](javascript:alert(1))"),
        ("[site](https://evil.example/x)", "[site](https://evil.example/x)"),
        ("<https://evil.example/auto>", "&lt;https://evil.example/auto&gt;"),
        ("![pixel](https://evil.example/p.png)", "![pixel](https://evil.example/p.png)"),
        ("[r][1]\n\n[1]: javascript:alert(1)", "javascript:alert(1)"),
        ("```html\n<script>x</script>\n```", "&lt;script&gt;x&lt;/script&gt;"),
        ("\x1b[31m<iframe src=//evil>\x1b[0m", "&lt;iframe src=//evil&gt;"),
    ],
)
def test_hostile_markdown_is_shown_as_text_never_as_markup(source: str, kept: str) -> None:
    html = text.markdown_html(source)
    assert kept in html
    elements = _Elements()
    elements.feed(html)
    # Only the allow-listed tags, and none with an attribute (no href, src or handler).
    assert {tag for tag, _ in elements.found} <= text.MARKDOWN_TAGS
    assert [attrs for _, attrs in elements.found if attrs] == []


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


@pytest.mark.parametrize(
    ("source", "plain"),
    [("I will compute it.", True), ("a <b> & c", True), ("**x**", False), ("a\n\nb", False)],
)
def test_plain_prose_needs_no_raw_view(source: str, plain: bool) -> None:
    assert text.markdown(source).plain is plain


def test_an_agents_lines_stay_lines() -> None:
    assert text.markdown_html("city,high\nLisbon,21") == "<p>city,high<br>\nLisbon,21</p>\n"
