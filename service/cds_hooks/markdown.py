"""Text from data made safe for a CDS Hooks card: CommonMark for ``detail``, plain for the rest.

A card's ``detail`` is GitHub-flavoured Markdown that EHRs render, and its text comes from the
patient's record, a draft order and the site's knowledge files: data, never markup. ``escape``
turns one data value into Markdown that renders as exactly its characters (no tag, link, image,
code span, emphasis, autolink or block syntax); ``plain`` turns one into plain text for
``summary``, suggestion labels and action descriptions, where markup is stripped rather than
escaped. Links on a card come only from the service's own URLs, built by the card code.
Pure: string in, string out.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["escape", "plain"]

# Every ASCII character CommonMark gives a meaning inline or in table and strikethrough syntax
# (GFM); each is backslash-escapable, so escaping it changes nothing a reader sees.
_INLINE: Final = frozenset("\\`*_{}[]<>()!&|~")
# A value that opens a line: a heading, a list item, a setext underline, a block quote.
_LINE_START: Final = re.compile(r"^(#|\+|-|=|\d{1,9}(?=[.)]))")
# GFM's extended autolinks: a scheme before "//", a bare "www." and an e-mail address.
_SCHEME: Final = re.compile(r"(?i)(?<=[a-z0-9+.-])(:)(?=//)")
_WWW: Final = re.compile(r"(?i)(?<![\w\\])(www)(\.)")
# What ``plain`` strips: a tag, a Markdown link or image (kept: its text), a URL.
_TAG: Final = re.compile(r"<[^<>]*>")
_LINK: Final = re.compile(r"!?\[([^\[\]]*)\]\([^()]*\)")
_URL: Final = re.compile(
    r"(?i)(?:\b[a-z][a-z0-9+.-]*)?://\S*|\b(?:(?:javascript|vbscript|data|mailto|file):|www\.)\S*"
)
_MARKUP: Final = re.compile(r"[<>\[\]`*_\\|~]")


def _printable(text: str) -> str:
    """``text`` without control or format characters (bidi overrides, zero-width joiners),
    on one line with single spaces: a value never brings its own line structure."""
    kept = (" " if c.isspace() else c for c in text)
    return " ".join("".join(c for c in kept if unicodedata.category(c) not in ("Cc", "Cf")).split())


def escape(text: str) -> str:
    """``text`` as CommonMark (GFM) that renders as the same characters and nothing else.

    >>> print(escape("<img src=x onerror=alert(1)> [login](javascript:x) **bold**"))
    \\<img src=x onerror=alert\\(1\\)\\> \\[login\\]\\(javascript:x\\) \\*\\*bold\\*\\*
    >>> print(escape("# heading"), escape("1. list"), escape("see https://x.example"))
    \\# heading 1\\. list see https\\://x.example
    """
    text = _printable(text)
    out = "".join(f"\\{c}" if c in _INLINE else c for c in text)
    out = _SCHEME.sub(r"\\\1", out)
    out = _WWW.sub(r"\1\\\2", out)
    out = out.replace("@", "\\@")
    start = _LINE_START.match(out)
    if start is not None:
        end = start.end()
        # "\\#", "\\-": the marker escaped; "1\\.": the dot after the number.
        out = f"{out[:end]}\\{out[end:]}" if out[0].isdigit() else f"\\{out}"
    return out


def plain(text: str) -> str:
    """``text`` as plain text with its markup stripped: tags and URLs dropped, a link or image
    reduced to its text, the characters that make Markdown or HTML removed.

    >>> plain("Stop <b>naproxen</b> [here](javascript:x) ![](https://t.example/p.png) *now*")
    'Stop naproxen here now'
    """
    text = _printable(text)
    for _ in range(3):  # nested constructs unwrap one level a pass
        text = _LINK.sub(r"\1", _TAG.sub("", text))
    text = _MARKUP.sub("", _URL.sub("", text))
    return " ".join(text.split())
