"""Agent-written text as a reviewer reads it: terminal colour, and markdown.

Both read text that an agent under evaluation may have written (DESIGN §9), so:
- ANSI colour becomes a list of `Segment`s (CSS classes from a fixed set, and the text)
  that a template renders, escaping the text; nothing here writes markup. Escape sequences
  other than colour (cursor moves, OSC 8 hyperlinks, titles) are dropped, never turned into
  anything but their plain text. A library such as ansi2html returns an HTML string (which
  the page would have to trust) and makes links out of OSC 8 sequences; the parser below is
  the few SGR codes a log uses.
- Markdown is rendered by markdown-it-py with raw HTML off (an agent's `<script>` shows as
  text), then sanitised by nh3 (Ammonia) against a short allow-list of tags; only http(s)
  links survive, and images are not rendered (nothing fetches a URL found in an artifact).
  This is the one place agent text becomes markup; `review_tags.markdown` marks the
  sanitised result safe.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt

ESC = "\x1b"
# CSI (`ESC [ … final`), OSC (`ESC ] … BEL` or `ESC ] … ESC \`), and two-character escapes.
_ESCAPE = re.compile(
    r"\x1b\[(?P<params>[0-9;:?<=>]*)[ -/]*(?P<final>[@-~])"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
)
# A log with more colour changes than this shows the rest without colour: the page stays
# fast whatever the agent printed.
MAX_SEGMENTS = 4_000


@dataclass(frozen=True)
class Segment:
    classes: str  # space-separated names from a fixed set: ansi-bold, ansi-fg-1, …
    text: str


@dataclass(frozen=True)
class TerminalText:
    """A text as stored (`raw`) and as shown (`segments`)."""

    raw: str
    segments: list[Segment]

    @property
    def styled(self) -> bool:
        """Did the text hold escape sequences (so the raw view differs)?"""
        return ESC in self.raw


class _Style:
    __slots__ = ("bg", "bold", "dim", "fg", "italic", "underline")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.bold = self.dim = self.italic = self.underline = False
        self.fg: int | None = None
        self.bg: int | None = None

    def apply(self, params: str) -> None:
        codes = [int(p) if p.isdigit() else 0 for p in re.split("[;:]", params)] or [0]
        index = 0
        while index < len(codes):
            code = codes[index]
            index += 1
            if code == 0:
                self.reset()
            elif code == 1:
                self.bold = True
            elif code == 2:
                self.dim = True
            elif code == 3:
                self.italic = True
            elif code == 4:
                self.underline = True
            elif code == 22:
                self.bold = self.dim = False
            elif code == 23:
                self.italic = False
            elif code == 24:
                self.underline = False
            elif 30 <= code <= 37:
                self.fg = code - 30
            elif 90 <= code <= 97:
                self.fg = code - 90 + 8
            elif code == 39:
                self.fg = None
            elif 40 <= code <= 47:
                self.bg = code - 40
            elif 100 <= code <= 107:
                self.bg = code - 100 + 8
            elif code == 49:
                self.bg = None
            elif code in (38, 48):
                # 256 colours (`5;n`) keep their 16 basic ones; true colour (`2;r;g;b`)
                # would need a style attribute, which the CSP forbids: left uncoloured.
                mode = codes[index] if index < len(codes) else None
                if mode == 5 and index + 1 < len(codes):
                    colour = codes[index + 1]
                    if colour < 16:
                        if code == 38:
                            self.fg = colour
                        else:
                            self.bg = colour
                    index += 2
                elif mode == 2:
                    index += 4
                else:
                    index += 1

    @property
    def classes(self) -> str:
        names = []
        if self.bold:
            names.append("ansi-bold")
        if self.dim:
            names.append("ansi-dim")
        if self.italic:
            names.append("ansi-italic")
        if self.underline:
            names.append("ansi-underline")
        if self.fg is not None:
            names.append(f"ansi-fg-{self.fg}")
        if self.bg is not None:
            names.append(f"ansi-bg-{self.bg}")
        return " ".join(names)


def strip_ansi(text: str) -> str:
    """The text without its escape sequences."""
    return _ESCAPE.sub("", text) if ESC in text else text


def terminal(text: str) -> TerminalText:
    """Text with ANSI SGR colour read into segments; other escapes dropped."""
    if ESC not in text:
        return TerminalText(text, [Segment("", text)] if text else [])
    segments: list[Segment] = []
    style = _Style()
    classes = ""
    position = 0
    for match in _ESCAPE.finditer(text):
        if match.start() > position:
            _append(segments, classes, text[position : match.start()])
        position = match.end()
        if match.group("final") == "m":
            style.apply(match.group("params") or "")
            classes = style.classes
        if len(segments) >= MAX_SEGMENTS:
            break
    if position < len(text):
        rest = text[position:]
        _append(segments, "" if len(segments) >= MAX_SEGMENTS else classes, strip_ansi(rest))
    return TerminalText(text, segments)


def _append(segments: list[Segment], classes: str, text: str) -> None:
    if segments and segments[-1].classes == classes:
        segments[-1] = Segment(classes, segments[-1].text + text)
    else:
        segments.append(Segment(classes, text))


# --- markdown -------------------------------------------------------------------------------
MARKDOWN_TAGS = {
    *("p", "br", "hr", "blockquote", "pre", "code", "strong", "em", "del", "s"),
    *("ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6"),
    *("table", "thead", "tbody", "tr", "th", "td"),
}
MARKDOWN_ATTRIBUTES = {"ol": {"start"}}


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # Raw HTML off: an agent's markup is shown as the text it is. Links and images off: an
    # artifact's URL stays text (DESIGN §9), and an image would fetch its URL. A line break
    # stays one: an agent's message is as often plain lines (a CSV, a listing) as markdown.
    return (
        MarkdownIt(
            "commonmark",
            {"html": False, "linkify": False, "typographer": False, "breaks": True},
        )
        .enable(["table", "strikethrough"])
        .disable(["link", "image", "autolink", "reference"])
    )


@dataclass(frozen=True)
class Markdown:
    html: str  # sanitised: safe to put in a page as it is
    plain: bool  # one paragraph of plain text: the raw view would show the same


def markdown(text: str) -> Markdown:
    rendered = markdown_html(text)
    return Markdown(rendered, rendered == f"<p>{html.escape(text.strip(), quote=False)}</p>\n")


def markdown_html(text: str) -> str:
    """Markdown rendered and sanitised: HTML safe to put in a page as it is."""
    rendered = _parser().render(strip_ansi(text))
    return nh3.clean(
        rendered,
        tags=MARKDOWN_TAGS,
        attributes=MARKDOWN_ATTRIBUTES,
        url_schemes=set(),
        link_rel=None,
        strip_comments=True,
    )
