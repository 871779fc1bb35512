"""What a docstring says, as plain sentences: the summary views quote.

Docstrings are written in reST, Markdown or plain text. The summary keeps the first paragraph
that is prose, with the markup taken off: section titles and their underlines, directives and
their blocks, doctest sessions, field lists and literal blocks are left out; roles, inline
literals, emphasis and links keep their text (code names in backticks). A licence header or a
shebang is never a summary. Sentences are kept whole: the summary stops at the last sentence
that fits the limit (a first sentence longer than the limit is cut at a word, marked ``…``).
"""

from __future__ import annotations

import re

_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`#*+_.:])\1{2,}\s*$")
_DIRECTIVE = re.compile(r"^\s*\.\.\s+[\w:-]+::|^\s*\.\.\s*$|^\s*\.\.\s+\[|^\s*\.\.\s+_")
_FIELD = re.compile(r"^\s*:[\w\s.-]+:(\s|$)")
_PROMPT = re.compile(r"^\s*(>>>|\.\.\.)(\s|$)")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_BULLET = re.compile(r"^\s*([-*+•]|\d+[.)])\s+")
_LICENCE = re.compile(
    r"copyright\b|\(c\)\s*\d{4}|licensed under|spdx-license-identifier|permission is hereby"
    r" granted|gnu (lesser |affero )?general public license|all rights reserved|"
    r"apache license|mit license|bsd license|warranty",
    re.IGNORECASE,
)
_ROLE = re.compile(r":[\w:.-]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")
_DOUBLE = re.compile(r"``([^`]+)``")
_REST_LINK = re.compile(r"`([^`<]+?)\s*<[^>]+>`__?")
_REF = re.compile(r"`([^`]+)`_{1,2}")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*(?=\s+[A-Z`(\"'\d])")
_WS = re.compile(r"\s+")
# A unit of words, not a sentence: "Requests HTTP Library", "Parameters".
_TITLE_WORDS = 12


def summary(doc: str | None, limit: int = 240) -> str:
    """The docstring's first prose paragraph, markup taken off, whole sentences within ``limit``."""
    if not doc:
        return ""
    paragraphs, titles = _paragraphs(doc)
    lead_in = ""
    for paragraph in paragraphs:
        text = _inline(paragraph)
        if not text or _LICENCE.search(text):
            continue
        text = _without_lead_in(text)
        if text.endswith(":") and not _SENTENCE_END.search(text):
            lead_in = lead_in or text  # only "Example:": the prose may come after what it led in
            continue
        return _sentences(text, limit)
    fallback = lead_in or (_inline(titles[0]) if titles else "")
    return _sentences(fallback, limit)


def _paragraphs(doc: str) -> tuple[list[str], list[str]]:
    """The prose paragraphs of ``doc`` in order, and its section titles."""
    lines = doc.expandtabs().strip("\n").split("\n")
    paragraphs: list[str] = []
    titles: list[str] = []
    current: list[str] = []
    skip_indent: int | None = None  # inside a directive's, a literal's or a field's block

    def close() -> None:
        if current:
            paragraphs.append(" ".join(current))
            current.clear()

    for number, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if skip_indent is not None:
            if not stripped or indent > skip_indent:
                continue
            skip_indent = None
        following = lines[number + 1] if number + 1 < len(lines) else ""
        if not stripped:
            close()
        elif stripped.startswith("#!") and number == 0:
            continue
        elif _UNDERLINE.match(line):
            continue  # an underline or an overline: its title was taken when it was met
        elif _UNDERLINE.match(following) and len(stripped) <= len(following.strip()) + 2:
            close()
            titles.append(stripped)
        elif _MD_HEADING.match(line):
            close()
            titles.append(stripped.lstrip("#").strip())
        elif _DIRECTIVE.match(line) or _FIELD.match(line) or _PROMPT.match(line):
            close()
            skip_indent = indent
        elif _BULLET.match(line) or stripped.startswith("|") or stripped.startswith("+-"):
            close()  # a list or a table is not the summary's prose
            skip_indent = indent
        else:
            current.append(stripped.removesuffix("::") + (":" if stripped.endswith("::") else ""))
            if stripped.endswith("::"):
                close()
                skip_indent = indent  # a literal block follows
    close()
    prose = [p for p in paragraphs if not _is_title(p)]
    titles.extend(p for p in paragraphs if _is_title(p))
    return prose, titles


def _is_title(paragraph: str) -> bool:
    """A short line of words with no sentence end: a heading written without markup."""
    words = paragraph.split()
    return (
        len(words) <= _TITLE_WORDS
        and not re.search(r"[.!?:;,]\s*$", paragraph)
        and not any(ch in paragraph for ch in "()=`")
        and paragraph[:1].isupper()
        and sum(w[:1].isupper() for w in words) * 2 > len(words)
    )


def _inline(text: str) -> str:
    """Inline markup off: roles and literals as code in backticks, links and emphasis as text."""
    text = _ROLE.sub(lambda m: f"`{m.group(1).strip().lstrip('.')}`", text)
    text = _DOUBLE.sub(lambda m: f"`{m.group(1)}`", text)
    text = _REST_LINK.sub(lambda m: m.group(1), text)
    text = _REF.sub(lambda m: m.group(1), text)
    text = _MD_LINK.sub(lambda m: m.group(1), text)
    text = _STRONG.sub(lambda m: m.group(2), text)
    text = _EMPHASIS.sub(lambda m: m.group(1), text)
    return _WS.sub(" ", text).strip()


def _without_lead_in(text: str) -> str:
    """Without a last sentence that introduces what was left out ("Basic usage:")."""
    if not text.endswith(":"):
        return text
    ends = list(_SENTENCE_END.finditer(text))
    return text[: ends[-1].end()].strip() if ends else text


def _sentences(text: str, limit: int) -> str:
    """``text`` up to the last whole sentence within ``limit``."""
    if len(text) <= limit:
        return text
    kept = ""
    for end in _SENTENCE_END.finditer(text):
        candidate = text[: end.end()].strip()
        if len(candidate) > limit:
            break
        kept = candidate
    if kept:
        return kept
    cut = text[: limit - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(",;:") + "…"
