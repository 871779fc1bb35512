"""Redact credentials before anything is parsed, embedded, stored or printed.

A file's credentials are what the detectors find in it (:mod:`kbc.analyzers.secret_scan`)
less what its value or its place shows is not one (:mod:`kbc.analyzers.credibility`: a
placeholder, an example, a test's fixture, public data). A notebook's cells are read as
what they hold, code as Python and the rest as Markdown. A private key block is redacted
from its header to its footer.

Line count and line numbers never change: only the secret values are
replaced, by ``[REDACTED]``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kbc.analyzers.credentials import Finding
from kbc.analyzers.credibility import credible
from kbc.analyzers.secret_scan import PYTHON_LANGUAGES, raw_findings

MARK = "[REDACTED]"

_TOKEN = re.compile(r"[A-Za-z0-9+/=_\-.~]+")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
PEM_MAX_LINES = 200


@dataclass(frozen=True, slots=True)
class Redaction:
    text: str
    findings: tuple[tuple[int, str], ...]  # (line, detector); never the value
    # What was taken out, to take out of text derived from the original too: each value and
    # each whole line replaced. Held in memory by the caller, never stored or shown.
    removed: frozenset[str] = frozenset()


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
Spans = list[tuple[int, int]]  # (start, end) columns of one line


def _replace(line: str, value: str, text_spans: Spans | None) -> str:
    """``value`` replaced by the mark. In Python, a value that could be a name and is found
    in the line's strings or comments is replaced there only: ``app.secret_key =
    "secret_key"`` keeps its attribute, so the file still parses."""
    if text_spans is None or not _IDENTIFIER.match(value):
        return line.replace(value, MARK)
    if not any(value in line[start:end] for start, end in text_spans):
        return line.replace(value, MARK)
    out, last = [], 0
    for start, end in text_spans:
        out += [line[last:start], line[start:end].replace(value, MARK)]
        last = end
    out.append(line[last:])
    return "".join(out)


def _redact_line(line: str, values: list[str], text_spans: Spans | None = None) -> str:
    for value in sorted(set(values), key=len, reverse=True):
        if len(value) >= 8:
            line = _replace(line, value, text_spans)
            continue
        # A short match is part of a longer credential (e.g. the "ghp" of a GitHub
        # token): redact the whole token around it.
        for token in sorted(set(_TOKEN.findall(line)), key=len, reverse=True):
            if value in token and token != MARK:
                line = _replace(line, token, text_spans)
                break
    return line


def python_text_spans(text: str, wanted: set[int]) -> dict[int, Spans] | None:
    """Where strings and comments lie on the ``wanted`` lines (numbered from 1) of Python
    source, from its tokens; None when the source does not tokenize."""
    import io
    import token
    import tokenize

    kinds = {token.STRING, token.COMMENT, getattr(token, "FSTRING_MIDDLE", token.STRING)}
    spans: dict[int, Spans] = {number: [] for number in wanted}
    lines = text.split("\n")
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type not in kinds:
                continue
            (first, start), (last, end) = tok.start, tok.end
            for number in range(first, last + 1):
                if number in spans:
                    spans[number].append(
                        (start if number == first else 0, end if number == last else len(lines[number - 1]))
                    )
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return spans


def file_findings(
    path: str, text: str, language: str = "python", *, where: str | None = None
) -> list[Finding]:
    """(line from 1, detector, value) of every credential in one file: what the detectors find
    that is not a placeholder, an example, a fixture or public data. ``path`` is the file's
    path on disk (detect-secrets reads some files whole, by name); ``where`` its path inside
    the repository, which tells a test or an example from the code (None: read as code)."""
    lines = text.split("\n")
    found = credible(raw_findings(path, text, language, lines), lines, language, where)
    if path.endswith(".ipynb"):
        found = _notebook_findings(path, text, lines, where) + found
    return found


def _notebook_findings(path: str, text: str, lines: list[str], where: str | None) -> list[Finding]:
    """A notebook's cells read as what they hold (code as Python, the rest as Markdown), each
    value found mapped to the raw lines that hold it JSON-escaped; nothing if not JSON."""
    import json

    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return []
    values: dict[str, str] = {}
    for cell in cells if isinstance(cells, list) else []:
        source = cell.get("source", "") if isinstance(cell, dict) else ""
        body = "".join(source) if isinstance(source, list) else str(source)
        language = "python" if cell.get("cell_type") == "code" else "markdown"
        for _, kind, value in file_findings(path + ".cell", body, language, where=where):
            values.setdefault(value, kind)
    found = []
    for value, kind in values.items():
        escaped = json.dumps(value)[1:-1]
        for index, line in enumerate(lines):
            for form in {value, escaped}:
                if form in line:
                    found.append((index + 1, kind, form))
    return found


def secret_values(path: str, text: str, language: str = "python", *, where: str | None = None) -> set[str]:
    """The credential values in one file (what :func:`redact` replaces), for finding them
    repeated in other files. Never stored: a store holds only counts."""
    return own_credentials(path, text, language, where=where)[0]


def own_credentials(
    path: str, text: str, language: str = "python", *, where: str | None = None
) -> tuple[set[str], int]:
    """:func:`secret_values`, and how many credentials :func:`redact` finds in the file by
    itself (0: it finds none, and replaces only values found in other files)."""
    found = file_findings(path, text, language, where=where)
    values = {value for _, kind, value in found if kind != "Private Key" and repeatable(value)}
    return values, len(found)


def repeatable(value: str) -> bool:
    """A value worth looking for elsewhere: long enough, and not a plain word."""
    return len(value) >= 8 and not value.isalpha() and MARK not in value


_WORD = re.compile(r"[A-Za-z0-9+/=_\-.~]+")
_EDGES = ".-=/~_"


def _words(text: str) -> set[str]:
    """The credential-shaped words of ``text``, also without the punctuation that ends them."""
    words = set(_WORD.findall(text))
    return words | {w.strip(_EDGES) for w in words}


def present(text: str, values: set[str]) -> set[str]:
    """Which of ``values`` appear in ``text``, in time linear in both: a value made only of
    word characters is looked up among the text's words, any other is searched for."""
    simple = {v for v in values if _WORD.fullmatch(v)}
    hits = simple & _words(text) if simple else set()
    return hits | {v for v in values - simple if v in text}


def appearances(lines: list[str], values: set[str]) -> set[tuple[int, str]]:
    """(line number from 1, value) for each of ``values`` on each line it appears on."""
    if not values:
        return set()
    simple = {v for v in values if _WORD.fullmatch(v)}
    special = values - simple
    out: set[tuple[int, str]] = set()
    for index, line in enumerate(lines):
        if simple:
            out.update((index + 1, v) for v in simple & _words(line))
        out.update((index + 1, v) for v in special if v in line)
    return out


def redact(
    path: str,
    text: str,
    language: str = "python",
    also: Iterable[str] = (),
    *,
    scan: bool = True,
    where: str | None = None,
) -> Redaction:
    """``text`` with every credential found replaced by ``[REDACTED]``.

    ``path`` is the file's path on disk (absolute, or relative to the working folder);
    ``where`` its path inside the repository (see :func:`file_findings`);
    ``also`` are values found in other files of the repository, replaced wherever they appear.
    ``scan`` False: the caller knows the detectors find nothing in this very text (the
    sweep's count of 0, :func:`own_credentials`), so only ``also`` is replaced.
    """
    lines = text.split("\n")
    found = file_findings(path, text, language, where=where) if scan else []
    # a value found once is redacted on every line it appears on, here and (``also``) elsewhere
    repeated = set(also) | {v for _, kind, v in found if kind != "Private Key" and repeatable(v)}
    found_at = {(number, value) for number, _, value in found}
    for number, value in sorted(appearances(lines, repeated)):
        if (number, value) not in found_at:
            found.append((number, "Repeated secret", value))
    if not found:
        return Redaction(text, ())
    by_line: dict[int, list[str]] = {}
    kinds: dict[int, str] = {}
    for number, kind, value in found:
        by_line.setdefault(number, []).append(value)
        if kinds.setdefault(number, kind) != kind and kind == "Private Key":
            kinds[number] = kind  # the block is redacted whole, whatever else the line holds
    spans = python_text_spans(text, set(by_line)) if language in PYTHON_LANGUAGES else None
    for number, values in by_line.items():
        index = number - 1
        if kinds[number] == "Private Key":
            _redact_block(lines, index)
        else:
            lines[index] = _redact_line(lines[index], values, spans.get(number) if spans else None)
    findings = tuple(sorted(kinds.items()))
    original = text.split("\n")
    changed = {
        original[i].strip() for i in range(len(lines)) if lines[i] != original[i] and original[i].strip()
    }
    return Redaction("\n".join(lines), findings, frozenset(changed | {v for _, _, v in found if v}))


def _redact_block(lines: list[str], start: int) -> None:
    """A private key: the header line through the footer line (or a bounded run)."""
    end = start
    for index in range(start, min(len(lines), start + PEM_MAX_LINES)):
        end = index
        if _PEM_END.search(lines[index]):
            break
    for index in range(start, end + 1):
        stripped = lines[index].rstrip("\r")
        keep = len(lines[index]) - len(stripped)
        indent = stripped[: len(stripped) - len(stripped.lstrip())]
        lines[index] = indent + MARK + lines[index][len(lines[index]) - keep :]


# Fields that name things (files, modules, definitions, what a call or import resolves to):
# read from identifiers and paths, never from a literal, so no credential is in them; a
# credential's text inside one ("test" in ``tests/conftest.py``) is a coincidence.
IDENTITY = frozenset(
    {
        "path",
        "module",
        "blob",
        "qname",
        "name",
        "parent",
        "bases",
        "caller",
        "target",
        "alias",
        "distribution",
        "owner",
        "symbol",
        "kind",
        "exports",
        "language",
    }
)


def _pattern(removed: Sequence[str]) -> re.Pattern[str]:
    """Each text, longest first, where it stands as written: not inside a longer word."""

    def bounded(text: str) -> str:
        head = r"(?<!\w)" if text[:1].isalnum() or text[:1] == "_" else ""
        tail = r"(?!\w)" if text[-1:].isalnum() or text[-1:] == "_" else ""
        return head + re.escape(text) + tail

    return re.compile("|".join(bounded(t) for t in sorted(set(removed), key=lambda v: (-len(v), v)) if t))


def scrub(value: Any, removed: Sequence[str]) -> Any:
    """``value`` (facts: dataclasses, tuples, lists, dicts of text) with each of ``removed``
    replaced by the redaction mark wherever it stands as a word or more, longest first;
    the fields that name things (:data:`IDENTITY`) are kept as they are."""
    return _scrub(value, _pattern(removed)) if any(removed) else value


def _scrub(value: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(MARK, value)
    if isinstance(value, tuple):
        return tuple(_scrub(item, pattern) for item in value)
    if isinstance(value, list):
        return [_scrub(item, pattern) for item in value]
    if isinstance(value, dict):
        return {_scrub(k, pattern): _scrub(v, pattern) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(
            value,
            **{
                f.name: _scrub(getattr(value, f.name), pattern)
                for f in dataclasses.fields(value)
                if f.init and f.name not in IDENTITY
            },
        )
    return value
