"""Redact credentials before anything is parsed, embedded, stored or printed.

Detection is detect-secrets' (its default plugins and filters, which know AWS,
GitHub, Slack, Stripe, private keys, high-entropy strings, password
assignments and more). detect-secrets costs about 0.2 ms a line, so a cheap
screen first picks the lines any of its plugins could fire on — a long
token, a credential keyword, a URL with a password, a key header — and only
those lines go to the detectors, at their own line numbers. Configuration
and other non-code files are read as detect-secrets' whole-file scan reads them
(its transformers read ``KEY=value`` and YAML forms; its file filters drop lock
files), and the lines of each reading are screened the same way, by a wider
screen that also passes what its detectors fire on without any context (short
hex strings, IP addresses): what it finds is what the unscreened scan finds, at
a fraction of the cost on message catalogs and changelogs. A private key block
is redacted from its header to its footer.

Line count and line numbers never change: only the secret values are
replaced, by ``[REDACTED]``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from kbc.analyzers.credentials import find_credentials
from kbc.analyzers.screen import Screen, Text
from kbc.analyzers.secret_gate import Gate, Plugin, gate_of, handed_over

MARK = "[REDACTED]"

# Lines a detect-secrets plugin could fire on. Every default plugin needs one of:
# a token of 16+ credential characters (keys, tokens, high-entropy strings), a
# credential word (keyword detector, npm, basic auth, cloud keys), a URL with a
# user:password part, or a private key header.
_SCREEN = Screen.of(
    (r"[A-Za-z0-9+/=_\-]{16,}", r"://[^\s/]*:[^\s/]*@"),
    (
        "key",
        "pass",
        "pwd",
        "secret",
        "token",
        "auth",
        "cred",
        "contrase",
        "private",
        "xox",
        "slack",
        "webhook",
    ),
)  # the words in any case
# A whole file's readings also pass what the screen above leaves to context in code: a short
# hex string (the hex detector's entropy limit is reached from 9 characters), a public IP
# address and the short Artifactory forms, which its plugins fire on too.
_WHOLE_SCREEN = _SCREEN.plus(
    r"[0-9A-Fa-f]{9,}", r"\d{1,3}(?:\.\d{1,3}){3}", r"AP[\dA-F][A-Za-z0-9]{8,}", r"AKC[A-Za-z0-9]{10,}"
)
# In code most lines the screen passes hold only a long snake_case name (two thirds on networkx).
# Such a run sets off no detector: a high-entropy string needs an entropy of 4.5 over the
# quoted string, and every token format's random part would have to be lowercase letters
# only. So a line passes the code screen on a run of the base64 characters only when the run
# is more than lowercase letters and underscores, or reads as random (entropy from
# PLAIN_ENTROPY), or on the screen's words, the tokens' prefixes (Stripe, GitHub, npm,
# Telegram), or credentials in a URL. It also passes a quoted hex string of 9 characters or
# more, which the hex detector fires on and the screen above lets through in no other way.
_RUN = re.compile(r"[A-Za-z0-9+/=_\\\-]{16,}")
_PLAIN = re.compile(r"[a-z_]+")
# A credential word sets a detector off only with a value beside it: the keyword detector's
# forms all need `=`, `:` or quotes (`key = "…"`, `key: …`, `"…" == key`, `key "…";`), and
# the cloud keys' (Azure's AccountKey=, IBM's, Softlayer's, Cloudant's) an assignment or a URL;
# a private key's header names itself. So a code line whose only reason is such a word (not a
# token's prefix, a webhook, a URL's credentials) passes when one of those stands in it.
_KEYWORD = re.compile(r"(?i:key|pass|pwd|secret|token|auth|cred|contrase|private)")
_TOKENISH = re.compile(
    r"(?i:xox|slack|webhook)|://[^\s/]*:[^\s/]*@"
    r"|sk_live|rk_live|gh[pousr]_|npm_|\d{8}:|[\"'][0-9A-Fa-f]{9,}[\"']"
)
_VALUE = re.compile(r"[=:\"'`]|BEGIN|PuTTY")
_CODE_GATE = _SCREEN.plus(r"[\"'][0-9A-Fa-f]{9,}[\"']")
PLAIN_ENTROPY = 4.0  # below detect-secrets' 4.5 for base64 strings


def _code_screen(line: str) -> bool:
    """Whether a line of code may hold what detect-secrets' plugins fire on (see above)."""
    if _TOKENISH.search(line) or (_KEYWORD.search(line) and _VALUE.search(line)):
        return True
    return any(not _PLAIN.fullmatch(run) or _entropy(run) >= PLAIN_ENTROPY for run in _RUN.findall(line))


def _entropy(text: str) -> float:
    """Shannon entropy of the characters of ``text``, in bits."""
    return -sum(n / len(text) * math.log2(n / len(text)) for n in Counter(text).values())


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


_configured = False


@functools.cache
def gate() -> Gate:
    """The gate of the plugins detect-secrets is configured with (configured first)."""
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.plugins.keyword import DENYLIST, KeywordDetector
    from detect_secrets.settings import get_plugins

    _configure()
    plugins: list[Plugin] = []
    for plugin in get_plugins():
        if isinstance(plugin, KeywordDetector):
            plugins.append(Plugin("keyword", words=tuple(DENYLIST)))
        elif isinstance(plugin, HighEntropyStringsPlugin):
            plugins.append(Plugin("entropy", charset=plugin.charset, limit=float(plugin.entropy_limit)))
        elif isinstance(plugin, RegexBasedDetector):
            plugins.append(Plugin("regex", patterns=tuple(plugin.denylist)))
        else:
            plugins.append(Plugin("other"))
    return gate_of(plugins)


def _configure() -> None:
    """Every detect-secrets plugin with its default filters, once per process.

    The filter that drops files absent from disk is off: kbc scans text it holds
    (a path inside a fresh clone, a test's inline source) by the file's name.
    """
    global _configured
    if _configured:
        return
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import (
        cache_bust,
        configure_settings_from_baseline,
        get_filters,
        get_settings,
    )

    cache_bust()
    classes: list[type] = list(get_mapping_from_secret_type_to_class().values())
    plugins = [{"name": cls.__name__} for cls in classes]
    configure_settings_from_baseline({"plugins_used": plugins})
    settings = get_settings()
    settings.disable_filters(
        "detect_secrets.filters.common.is_invalid_file",
        "detect_secrets.filters.heuristic.is_indirect_reference",
    )
    settings.filters[f"{__name__}.is_indirect_reference"] = {}
    get_filters.cache_clear()
    _configured = True


# detect-secrets' own is_indirect_reference starts its pattern with ``([^\v=!:]*)\s*``,
# which may match empty and so changes no answer, but makes each search quadratic in
# the line's length (milliseconds on a long line, minutes on a changelog). The same
# test without that prefix:
_INDIRECT_REFERENCE = re.compile(r"(:=?|[!=]{1,3})\s*([\w.-]+[\[\(][^\v]*[\]\)])")


def is_indirect_reference(line: str) -> bool:
    """``secret = get_secret_key()`` or ``key = request.headers['apikey']``: not a secret."""
    if len(line) > 1000:
        return False
    return bool(_INDIRECT_REFERENCE.search(line))


def _scan(path: str, lines: list[tuple[int, str]]) -> list[tuple[int, str, str]]:
    """(line, detector, value) that detect-secrets finds among the numbered ``lines``.

    The screened lines are handed over as one compact run (detect-secrets costs the
    same for a blank line as for any other) and its findings mapped back to their
    own line numbers. ``path`` must name the file on disk: detect-secrets' file
    filters look at it, and its name selects the detectors' rules.
    """
    from detect_secrets.core.scan import scan_diff

    _configure()
    safe_path = path.replace("\n", " ")
    body = "".join(f"+{line.rstrip(chr(13))}\n" for _, line in lines)
    diff = (
        f"diff --git a/{safe_path} b/{safe_path}\n--- /dev/null\n+++ b/{safe_path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    )
    return [
        (lines[s.line_number - 1][0], s.type, s.secret_value)
        for s in scan_diff(diff)
        if s.secret_value and s.line_number
    ]


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


PYTHON_LANGUAGES = frozenset({"python", "python-stub"})
# Languages whose lines detect-secrets reads as they are (no config transformers).
LINE_LANGUAGES = frozenset(
    {
        "python",
        "python-stub",
        "javascript",
        "typescript",
        "tsx",
        "c",
        "cpp",
        "rust",
        "go",
        "java",
        "shell",
        "sql",
        "html",
        "css",
        "markdown",
        "rst",
    }
)


def _scan_whole_file(path: str) -> list[tuple[int, str, str]]:
    """detect-secrets' reading of a whole file (its ``scan_file``), screened as lines are: the
    file's lines as its transformers read them (``KEY=value``, YAML; else as written), then,
    only if nothing was found, as its eager transformers read them. Of each reading only the
    lines the screen passes go to the detectors, at their own line numbers: the detectors fire
    on no other line, and a message catalog or a changelog costs a screen, not two full scans."""
    from detect_secrets.core.scan import _is_filtered_out
    from detect_secrets.transformers import get_transformed_file

    _configure()
    if _is_filtered_out(required_filter_parameters=["filename"], filename=path):  # a lock file, ...
        return []
    try:
        with open(path) as file:  # as detect-secrets opens it: a file not in the locale's encoding
            named = cast(Any, file)  # detect-secrets' NamedIO: a text file with a name
            lines = get_transformed_file(named) or file.readlines()  # is not its to read
            found = _scan_read(path, lines)
            if found:
                return found
            file.seek(0)
            eager = get_transformed_file(named, use_eager_transformers=True)
    except (OSError, UnicodeDecodeError):
        return []
    return _scan_read(path, eager) if eager else []


def _scan_read(path: str, lines: list[str]) -> list[tuple[int, str, str]]:
    """:func:`_scan` of the screened lines of one reading of a file (line ``n`` is ``lines[n-1]``)."""
    from detect_secrets.core.scan import _process_line_based_plugins

    candidates = handed_over([(i + 1, lines[i]) for i in _WHOLE_SCREEN.lines(lines)], lines, gate())
    # handed over as one compact run, as _scan does; a transformer's line may span several
    # (a YAML block), which no diff could carry, so the run goes to the detectors directly
    found = _process_line_based_plugins(
        list(enumerate((line for _, line in candidates), start=1)), filename=path
    )
    return [
        (candidates[s.line_number - 1][0], s.type, s.secret_value)
        for s in found
        if s.secret_value and s.line_number
    ]


def _notebook_findings(path: str, text: str, lines: list[str]) -> list[tuple[int, str, str]] | None:
    """A notebook's cells scanned as what they hold (code as Python, the rest as Markdown),
    each value found mapped to the raw lines that hold it JSON-escaped; None if not JSON."""
    import json

    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return None
    values: dict[str, str] = {}
    for cell in cells if isinstance(cells, list) else []:
        source = cell.get("source", "") if isinstance(cell, dict) else ""
        body = "".join(source) if isinstance(source, list) else str(source)
        language = "python" if cell.get("cell_type") == "code" else "markdown"
        for _, kind, value in _own_findings(path + ".cell", body, language, body.split("\n")):
            values.setdefault(value, kind)
    found = []
    for value, kind in values.items():
        escaped = json.dumps(value)[1:-1]
        for index, line in enumerate(lines):
            for form in {value, escaped}:
                if form in line:
                    found.append((index + 1, kind, form))
    return found


def _own_findings(path: str, text: str, language: str, lines: list[str]) -> list[tuple[int, str, str]]:
    """(line, detector, value) of every credential in one file: detect-secrets' plugins with
    the reading that fits the file, then kbc's own detectors."""
    _configure()  # the gate reads the plugins configured
    # a notebook: its cells as what they hold, and its JSON as it is (outputs print values too)
    cells = _notebook_findings(path, text, lines) if path.endswith(".ipynb") else None
    searched = Text(lines)  # each screen's lines found once
    if language in LINE_LANGUAGES:
        code = handed_over(
            [(i + 1, lines[i]) for i in _CODE_GATE.lines(searched) if _code_screen(lines[i])], lines, gate()
        )
        found = _scan(path, code) if code else []
    elif _SCREEN.lines(searched):
        found = [f for f in _scan_whole_file(path) if f[0] <= len(lines)]
    else:
        return cells or []
    found += find_credentials(lines, python=language in PYTHON_LANGUAGES, screen=_SCREEN, text=searched)
    return [*(cells or []), *found]


def secret_values(path: str, text: str, language: str = "python") -> set[str]:
    """The credential values in one file (what :func:`redact` replaces), for finding them
    repeated in other files. Never stored: a store holds only counts."""
    return own_credentials(path, text, language)[0]


def own_credentials(path: str, text: str, language: str = "python") -> tuple[set[str], int]:
    """:func:`secret_values`, and how many credentials :func:`redact` finds in the file by
    itself (0: it finds none, and replaces only values found in other files)."""
    found = _own_findings(path, text, language, text.split("\n"))
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
    path: str, text: str, language: str = "python", also: Iterable[str] = (), *, scan: bool = True
) -> Redaction:
    """``text`` with every credential found replaced by ``[REDACTED]``.

    ``path`` is the file's path on disk (absolute, or relative to the working folder);
    ``also`` are values found in other files of the repository, replaced wherever they appear.
    ``scan`` False: the caller knows the detectors find nothing in this very text (the
    sweep's count of 0, :func:`own_credentials`), so only ``also`` is replaced.
    """
    lines = text.split("\n")
    found = _own_findings(path, text, language, lines) if scan else []
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
        kinds.setdefault(number, kind)
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
