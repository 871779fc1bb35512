"""What a project's own documentation says about it: its README's (or docs index's) first prose
paragraph, the names its documents mention, and the titles of the pages that document a module.

The views quote the package's purpose from here when its ``__init__`` has no docstring (a
library of independent modules often has an empty one), tell a public module its users import
from one its documents never name, and name a module's feature by the docs page about it
(``.. automodule:: boltons.cacheutils`` under "Cache utilities", or mkdocstrings' ``:::``).
Pure functions over text; the caller reads the files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kbc.analyzers.docstrings import summary

SUMMARY_CHARS = 400
MIN_WORDS = 6  # a tagline ("boltons should be builtins.") is not the project's summary

_README = re.compile(r"^readme(\.(md|markdown|rst|txt))?$", re.IGNORECASE)
_INDEX = re.compile(r"^docs?/(index|readme)\.(md|markdown|rst|txt)$", re.IGNORECASE)
_SKIP_LINE = re.compile(
    r"^\s*(<|\[!\[|!\[|\.\.\s|\|[\w -]+\|\s*(image|replace)::|\[[^\]]+\]:\s*\S|:\w+:|\{[%{])"
)
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`#*+_.:])\1{2,}\s*$")
_BULLET = re.compile(r"^\s*([-*+•]|\d+[.)])\s+")
_REF_LINK = re.compile(r"\[([^\]]+)\](?:\[[^\]]*\])?(?![(:])")
_SUBSTITUTION = re.compile(r"\|[\w -]+\|_?")
_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_AUTOMODULE = re.compile(r"^\s*(?:\.\.\s+(?:auto|py:)?module::|:::)\s*([\w.]+)\s*$", re.MULTILINE)
_MD_TITLE = re.compile(r"^\s{0,3}#\s+(.+?)\s*#*\s*$")
# `import pkg.mod`, `from pkg.mod import name`, `from pkg import mod` written in a document
_IMPORT = re.compile(
    r"^[\s>.]*(?:import\s+([\w.]+)|from\s+([\w.]+)\s+import\s+\(?\s*([\w, ]+))", re.MULTILINE
)


@dataclass(frozen=True, slots=True)
class ProjectDocs:
    summary: str = ""  # the README's (else the docs index's) first prose paragraph, markup off
    source: str = ""  # the document it comes from
    mentions: frozenset[str] = frozenset()  # names and dotted names the documents write
    titles: Mapping[str, str] = field(default_factory=dict)  # module -> its docs page's title
    imports: frozenset[str] = frozenset()  # what the documents' import lines import (:func:`imported`)

    def mentions_module(self, module: str) -> bool:
        """Whether the documents name ``module``: in full (``boltons.fileutils``) or by its last
        part (``fileutils``, as a README's list of modules does)."""
        return module in self.mentions or module.rpartition(".")[2] in self.mentions


def imported(text: str) -> set[str]:
    """The dotted names a document's import lines import: ``import pkg.mod`` gives
    ``pkg.mod``; ``from pkg import mod, name`` gives ``pkg``, ``pkg.mod`` and ``pkg.name``
    (which of them is a module is the caller's to know)."""
    found: set[str] = set()
    for whole, source, names in _IMPORT.findall(text):
        if whole:
            found.add(whole)
            continue
        found.add(source)
        found.update(f"{source}.{name.strip()}" for name in names.split(",") if name.strip().isidentifier())
    return found


def is_readme(path: str) -> bool:
    """The repository's own README (top level), or its docs' index page."""
    return ("/" not in path and bool(_README.match(path))) or bool(_INDEX.match(path))


def _paragraphs(text: str) -> list[list[str]]:
    """Blocks of text lines, without headings, badges, HTML, directives and link definitions."""
    blocks: list[list[str]] = [[]]
    lines = text.splitlines()
    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < len(lines) else ""
        title = _MD_HEADING.match(line) or (line.strip() and _UNDERLINE.match(following))
        if not line.strip() or title or _UNDERLINE.match(line) or line.startswith(("```", "~~~")):
            blocks.append([])
        elif not _SKIP_LINE.match(line):
            blocks[-1].append(line)
    return [b for b in blocks if b]


def _inline(text: str) -> str:
    return _SUBSTITUTION.sub("", _REF_LINK.sub(r"\1", text))


def readme_summary(text: str, limit: int = SUMMARY_CHARS) -> str:
    """The first paragraph of prose of a README of ``MIN_WORDS`` words or more, markup taken
    off; one that leads into a list ("..., including:") is followed by the list's items."""
    blocks = _paragraphs(text)
    for index, block in enumerate(blocks):
        if _BULLET.match(block[0]):
            continue
        lead = summary(_inline(" ".join(line.strip() for line in block)), limit)
        if len(lead.split()) < MIN_WORDS:
            continue
        if not lead.endswith(":"):
            return lead
        items = [
            summary(_inline(_BULLET.sub("", line).strip()), limit)
            for line in (blocks[index + 1] if index + 1 < len(blocks) else [])
            if _BULLET.match(line)
        ]
        shown = lead
        for item in (i.rstrip(".") for i in items if i):
            if len(shown) + len(item) + 2 > limit:
                break
            shown += (" " if shown.endswith(":") else "; ") + item
        return shown if shown == lead else shown + "."
    return ""


def page_titles(text: str) -> tuple[str, tuple[str, ...]]:
    """A docs page's title and the modules it documents (``automodule``, ``module``, ``:::``)."""
    title = ""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < len(lines) else ""
        markdown = _MD_TITLE.match(line)
        if markdown:
            title = markdown.group(1)
            break
        if line.strip() and not _UNDERLINE.match(line) and _UNDERLINE.match(following):
            title = line.strip()
            break
    title = _inline(title).replace("``", "").replace("`", "").strip()
    return title, tuple(dict.fromkeys(_AUTOMODULE.findall(text)))


def project_docs(texts: Mapping[str, str], modules: Iterable[str] = ()) -> ProjectDocs:
    """What the documents ``texts`` (by path) say: the summary of the first README or docs
    index among them that has one, every name they write, and which page documents which
    of ``modules``."""
    found = ""
    source = ""
    readmes = sorted((p for p in texts if is_readme(p)), key=lambda p: ("/" in p, p))
    for path in readmes:
        found = readme_summary(texts[path])
        if found:
            source = path
            break
    mentions: set[str] = set()
    imports: set[str] = set()
    known = set(modules)
    titles: dict[str, str] = {}
    for _path, text in sorted(texts.items()):
        for word in _WORDS.findall(text):
            mentions.add(word)
            if "." in word:
                mentions.update(word.split("."))
        imports.update(imported(text))
        title, documented = page_titles(text)
        for module in documented:
            if title and module in known:
                titles.setdefault(module, title)
    return ProjectDocs(found, source, frozenset(mentions), titles, frozenset(imports))
