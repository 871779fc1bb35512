"""What the detectors find in one file, before anything judges it: detect-secrets' plugins
and kbc's own (:mod:`kbc.analyzers.credentials`), each reading the file the way that fits it.

Detection is detect-secrets' (its default plugins and filters, which know AWS, GitHub, Slack,
Stripe, private keys, high-entropy strings, password assignments and more). detect-secrets
costs about 0.2 ms a line, so a cheap screen first picks the lines any of its plugins could
fire on — a long token, a credential keyword, a URL with a password, a key header — and only
those lines go to the detectors, at their own line numbers. Configuration and other non-code
files are read as detect-secrets' whole-file scan reads them (its transformers read
``KEY=value`` and YAML forms; its file filters drop lock files), and the lines of each reading
are screened the same way, by a wider screen that also passes what its detectors fire on
without any context (short hex strings, IP addresses): what it finds is what the unscreened
scan finds, at a fraction of the cost on message catalogs and changelogs.

What is found here is raw: :mod:`kbc.analyzers.placeholders` then tells the placeholders,
examples and fixtures from credentials.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from typing import Any, cast

from kbc.analyzers.credentials import Finding, find_credentials
from kbc.analyzers.screen import Screen, Text
from kbc.analyzers.secret_gate import Gate, Plugin, gate_of, handed_over

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


def _scan(path: str, lines: list[tuple[int, str]]) -> list[Finding]:
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


def _scan_whole_file(path: str) -> list[Finding]:
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


def _scan_read(path: str, lines: list[str]) -> list[Finding]:
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


def raw_findings(path: str, text: str, language: str, lines: list[str] | None = None) -> list[Finding]:
    """(line, detector, value) of every candidate credential in one file (``path``, its name on
    disk): detect-secrets' plugins with the reading that fits the file, then kbc's own
    detectors. A notebook's JSON is read as it is (its cells are read by the caller)."""
    _configure()  # the gate reads the plugins configured
    lines = text.split("\n") if lines is None else lines
    searched = Text(lines)  # each screen's lines found once
    if language in LINE_LANGUAGES:
        code = handed_over(
            [(i + 1, lines[i]) for i in _CODE_GATE.lines(searched) if _code_screen(lines[i])], lines, gate()
        )
        found = _scan(path, code) if code else []
    elif _SCREEN.lines(searched):
        found = [f for f in _scan_whole_file(path) if f[0] <= len(lines)]
    else:
        return []
    return found + find_credentials(lines, python=language in PYTHON_LANGUAGES, screen=_SCREEN, text=searched)
