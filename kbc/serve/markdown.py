"""Markdown (the views as `kbc render` writes them, answers) to HTML for the browser.

Raw HTML in the Markdown is never passed through: prose may come from docstrings or an LLM,
and both are the repository's words. A Mermaid block becomes a ``<pre class="mermaid">``
that the page draws as SVG; a link to another rendered view opens that view's page; every
``path:start-end`` naming a served file opens the source viewer on those lines.
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import cache
from typing import Any
from urllib.parse import quote

# A location as kbc prints it: a path with an extension, a line, maybe an end line.
LOCATION = re.compile(r"(?<![\w/.@-])(@?(?:[\w.-]+/)*[\w.-]+\.\w+):(\d+)(?:-(\d+))?(?![\w-])")


def source_href(path: str, start: int | None = None, end: int | None = None) -> str:
    href = "/source/" + quote(path)
    if start is None:
        return href
    return f"{href}?start={start}&end={end or start}#L{start}"


def view_href(view_id: str) -> str:
    return "/view/" + quote(view_id, safe=":")


def linkify(escaped: str, served: Collection[str]) -> str:
    """``escaped`` (HTML-escaped text) with each location of a served file made a link."""

    def link(match: re.Match[str]) -> str:
        path = html.unescape(match.group(1))
        if path not in served:
            return match.group(0)
        start = int(match.group(2))
        end = int(match.group(3) or start)
        return f'<a class="loc" href="{html.escape(source_href(path, start, end))}">{match.group(0)}</a>'

    return LOCATION.sub(link, escaped)


@cache
def _parser() -> Any:
    """The parser, with kbc's rules; what a rule needs of one page comes in its ``env``."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    rules: dict[str, Callable[..., str]] = {
        "fence": lambda tokens, i, options, env: _fence(tokens[i].info, tokens[i].content, env["served"]),
        "code_inline": lambda tokens, i, options, env: (
            "<code>" + linkify(html.escape(tokens[i].content), env["served"]) + "</code>"
        ),
        "text": lambda tokens, i, options, env: linkify(html.escape(tokens[i].content), env["served"]),
    }
    md.renderer.rules.update(rules)  # type: ignore[attr-defined]
    return md


def to_html(
    markdown: str, served: Collection[str], views: Mapping[str, str] | None = None, here: str = ""
) -> str:
    """HTML of ``markdown``. ``views`` maps a rendered view's file (``module/pkg.md``) to its id,
    and ``here`` is the file of the view being shown, against which relative links resolve."""
    md = _parser()
    env = {"served": served}
    tokens = md.parse(_locations_kept(markdown), env)
    for token in tokens:
        if token.type == "inline" and token.children:
            _links(token.children, views or {}, here)
    out: str = md.renderer.render(tokens, md.options, env)
    return out


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:.|\n)*?(?<!`)\1(?!`)")


def _locations_kept(markdown: str) -> str:
    """``markdown`` with the underscores and asterisks of every location outside code escaped,
    so that ``pkg/__init__.py:1-4`` stays a location, never a path with ``init`` in bold."""

    def escaped(match: re.Match[str]) -> str:
        return re.sub(r"([_*])", r"\\\1", match.group(0))

    def prose(text: str) -> str:
        out, at = [], 0
        for span in _CODE_SPAN.finditer(text):
            out.append(LOCATION.sub(escaped, text[at : span.start()]))
            out.append(span.group(0))
            at = span.end()
        out.append(LOCATION.sub(escaped, text[at:]))
        return "".join(out)

    out: list[str] = []
    block: list[str] = []
    fence = ""
    for line in markdown.split("\n"):
        opened = _FENCE.match(line)
        if fence:  # inside a fenced block: as it is, until the fence that closes it
            out.append(line)
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
        elif opened:
            out.extend(prose("\n".join(block)).split("\n") if block else [])
            block = []
            out.append(line)
            fence = opened.group(1)
        else:
            block.append(line)
    out.extend(prose("\n".join(block)).split("\n") if block else [])
    return "\n".join(out)


def _fence(info: str, content: str, served: Collection[str]) -> str:
    if info.strip() == "mermaid":
        return f'<pre class="mermaid">{html.escape(content)}</pre>\n'
    return f"<pre><code>{linkify(html.escape(content), served)}</code></pre>\n"


def _links(children: Sequence[Any], views: Mapping[str, str], here: str) -> None:
    for token in children:
        if token.type != "link_open":
            continue
        href = str(token.attrGet("href") or "")
        if "://" in href or href.startswith(("/", "#", "mailto:")):
            continue
        target = posixpath.normpath(posixpath.join(posixpath.dirname(here), href.split("#")[0]))
        if target in views:
            token.attrSet("href", view_href(views[target]))
