"""Encyclopedia Markdown to safe HTML: raw HTML is escaped, links to ``<id>.md`` point at ``/kb/<id>``."""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

_ENTRY_LINK = re.compile(r"^(?:\./)?([a-z0-9][a-z0-9-]*)\.md(#[\w-]*)?$")
_TASK = re.compile(r"^\[([ xX])\]\s+")


def slug(heading: str) -> str:
    """The anchor of a section heading: ``What you'll observe`` -> ``what-youll-observe`` (app.js does the same)."""
    return re.sub(r"[\s-]+", "-", re.sub(r"[^a-z0-9\s-]", "", heading.lower())).strip("-")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def _rewrite(tokens: list[Token]) -> None:
    for token in tokens:
        if token.type == "link_open":
            href = str(token.attrGet("href") or "")
            match = _ENTRY_LINK.match(href)
            if match:
                token.attrSet("href", f"/kb/{match.group(1)}{match.group(2) or ''}")
            elif href.startswith(("http://", "https://")):
                token.attrSet("rel", "noopener noreferrer")
        elif token.type == "text" and _TASK.match(token.content):
            token.content = _TASK.sub(lambda m: "☑ " if m.group(1) != " " else "☐ ", token.content)
        if token.children:
            _rewrite(token.children)


def render_markdown(text: str) -> str:
    """HTML for one Markdown fragment of an entry."""
    parser = _parser()
    tokens = parser.parse(text)
    _rewrite(tokens)
    return str(parser.renderer.render(tokens, parser.options, {}))
