"""kbc's own credential detectors, beside detect-secrets'.

detect-secrets reads high-entropy strings only inside quotes and reads
``KEY=value`` forms only in the file kinds its transformers know, so it misses
a key exported in a Markdown code block, an ``ENV`` line of a Dockerfile, a
YAML block scalar, a notebook's JSON-escaped cell source, a bare token in a
docstring. These detectors read every file kind the same way:

- tokens by their issuer's prefix (OpenAI, Anthropic, GitHub, GitLab, Hugging
  Face, npm, PyPI, Slack, Stripe, AWS, Google), and JWTs whole;
- ``Authorization: Bearer|Basic|token <value>``;
- a password in a URL (``scheme://user:password@host``);
- an assignment to a credential-like name (``api_key = …``, ``export
  X_TOKEN=…``, ``ENV DB_PASSWORD …``, ``"client_secret": …``) whose value is
  a literal, not a reference (``$VAR``, ``os.environ[…]``, ``<placeholder>``);
- a YAML block scalar (``password: >-``) under a credential-like key;
- an unquoted high-entropy token (mixed case and digits, 24+ characters).

Each finding is ``(line, kind, value)`` with lines numbered from 1.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from kbc.analyzers.screen import Screen, Text

Finding = tuple[int, str, str]

_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9_-])("
    r"sk-(?:proj-|ant-[a-z0-9]+-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
    r"|glpat-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{30,}"
    r"|pypi-AgE[A-Za-z0-9_-]{50,}|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}"
    r"|AIza[A-Za-z0-9_-]{35}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r")"
)
_AUTH_HEADER = re.compile(
    r"(?i)\b(?:bearer|basic)\s+([A-Za-z0-9._~+/=-]{16,})"
    r"|(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?:token\s+)?([A-Za-z0-9._~+/=-]{16,})"
)
# Every pattern runs in time linear in the line: a match starts only where a run of its
# characters starts (a lookbehind), and a part that is searched back from is bounded.
_URL_PASSWORD = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s/:@'\"]{1,256}"
    r":([^\s/@'\"]{3,256})@"
)

# A name that holds a credential: api_key, X_TOKEN, db-password, clientSecret, ...
_NAME = (
    r"[A-Za-z0-9_.-]{0,80}(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|passwd|pwd|credential"
    r"|private[_-]?key|access[_-]?key|auth[_-]?key)[A-Za-z0-9_.-]{0,80}"
)
_ASSIGNED = re.compile(
    rf"(?i)(\\?[\"']?)(?<![A-Za-z0-9_.-])({_NAME})\\?[\"']?\s*(:=|=>|=|:)\s*(\\?[\"'`]?)"
    rf"([^\s\"'`,;)\]}}\\]+)"
)
# Names about credentials that do not hold one: a tokenizer, a token count, a key's file.
_NOT_HELD = re.compile(
    r"(?i)tokeniz|tokens?[_.-]?(?:count|len|length|limit|type|ids?|usage|budget|file|path|url|uri"
    r"|endpoint|kind|pattern|re|regex)\b|(?:max|min|num|n|total|prompt|completion)[_.-]?tokens"
    r"|(?:key|password|passwd|secret|token|credentials?)[_.-]?(?:file|path|name|id|type|len|length|field|hash"
    r"|min|max|policy|prompt|reset|ref|env|var|header|param)s?\b"
)
_DOCKER_ENV = re.compile(rf"(?i)^\s*(?:ENV|ARG)\s+({_NAME})\s+([^\s=]\S*)\s*$")
_YAML_BLOCK = re.compile(rf"(?i)^(\s*)-?\s*[\"']?({_NAME})[\"']?\s*:\s*[>|][-+0-9]*\s*(?:#.*)?$")
_TOKEN = re.compile(r"(?<![A-Za-z0-9+/_.:-])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/_-])")
_HEX = re.compile(r"(?<![A-Za-z0-9_-])[0-9a-fA-F]{32,}(?![A-Za-z0-9_-])")
_CONTEXT = re.compile(r"(?i)key|token|secret|pass|auth|credential|signature")

# The lines any of the detectors above can fire on: a prefixed or high-entropy token, a URL,
# or a word every other form holds (a credential-like name, a header, the hex token's context).
_CANDIDATES = Screen(
    (_PREFIXED, _TOKEN, re.compile("://")),
    re.compile("key|secret|token|pass|pwd|cred|auth|bearer|basic|signature"),
)

# Values that name a credential rather than hold one.
_PLACEHOLDER = re.compile(
    r"(?i)^(?:x+|\*+|\.+|changeme|change_me|none|null|nil|true|false|required|optional|string|str"
    r"|bytes|int|secret|password|token|example|placeholder|redacted|dummy|test|your[_-].*|my[_-].*"
    r"|<.*>|\[.*\]|\{.*\}|\$.*|%.*|os\..*|env\..*|process\.env.*|self\..*|settings\..*|config\..*)$"
)


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character."""
    counts = Counter(text)
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def _literal(value: str) -> bool:
    """``value`` (after an assignment) is a credential literal, not a reference or a word:
    8+ characters, and a run of 4+ that mixes letters and digits (``Tr0ub4dor``, a hex or
    random key), where names, versions and dates have none (``token-counting-2024-11-01``)."""
    value = value.rstrip(".:")
    if len(value) < 8 or _PLACEHOLDER.match(value) or "[REDACTED]" in value:
        return False
    if value[0] == "=" or any(c in value for c in "?()") or _SNAKE.fullmatch(value):
        return False  # a comparison, an expression, a snake_case name
    return any(
        len(part) >= 4 and re.search(r"[A-Za-z]", part) and re.search(r"[0-9]", part)
        for part in re.split(r"[-_.:/@]", value)
    )


_SEQUENCES = ("abcdefg", "ABCDEFG", "0123456", "qwerty", "QWERTY")


def _high_entropy(token: str) -> bool:
    if any(run in token for run in _SEQUENCES):
        return False  # an alphabet, not a key
    if "/" in token and any(len(part) >= 3 and part.isalpha() for part in token.split("/")):
        return False  # a path or a URL's
    digits = sum(c.isdigit() for c in token)
    upper = sum(c.isupper() for c in token)
    lower = sum(c.islower() for c in token)
    if digits < 2 or upper < 2 or lower < 2 or entropy(token) < 4.2:
        return False
    # a random token changes between lower, upper and digit at about every other character;
    # a CamelCase name with a number in it (LlamaGuard38bFilterConfig) far less often
    classes = ["d" if c.isdigit() else "u" if c.isupper() else "l" for c in token if c.isalnum()]
    changes = sum(a != b for a, b in zip(classes, classes[1:], strict=False))
    return changes / max(1, len(classes) - 1) >= 0.45


def _credential_like(value: str) -> bool:
    """A header's or URL's value that holds a credential: not a word, a name or an env var."""
    return (
        not _PLACEHOLDER.match(value)
        and not re.fullmatch(r"[A-Z0-9_]+", value)
        and bool(re.search(r"[0-9]", value))
        and bool(re.search(r"[A-Za-z]", value))
    )


def find_credentials(  # noqa: C901 - one pass over the lines, a branch per credential form
    lines: list[str], *, python: bool = False, screen: Screen | None = None, text: Text | None = None
) -> list[Finding]:
    """What kbc's detectors find in ``lines``. In Python only quoted values of
    assignments count (an unquoted one is a name, and redacting it changes the code).
    Only lines ``screen`` passes are read (and the bodies of the blocks they open); ``text``:
    the lines joined, if the caller searched them already."""
    found: list[Finding] = []
    searched = text if text is not None else Text(lines)
    wanted = _CANDIDATES.lines(searched)
    if screen is not None:
        wanted = sorted(set(wanted).intersection(screen.lines(searched)))
    done = -1  # the last line read as a block's body
    for index in wanted:
        if index <= done:
            continue
        number, line = index + 1, lines[index]
        if not python:
            opened = _YAML_BLOCK.match(line)
            if opened and not _NOT_HELD.search(opened.group(2)):
                done = _block_body(lines, index, len(opened.group(1)), found)
                continue
        for match in _PREFIXED.finditer(line):
            found.append((number, "Issuer token", match.group(1)))
        for match in _AUTH_HEADER.finditer(line):
            value = match.group(1) or match.group(2)
            if _credential_like(value):
                found.append((number, "Authorization header", value))
        for match in _URL_PASSWORD.finditer(line):
            if not _PLACEHOLDER.match(match.group(1)) and "{" not in match.group(1):
                found.append((number, "Password in URL", match.group(1)))
        for match in _ASSIGNED.finditer(line):
            name_quoted, name, separator, value_quoted, value = match.groups()
            if _NOT_HELD.search(name):
                continue
            if python and (not value_quoted or separator == ":" and not name_quoted):
                continue  # in Python an unquoted value is a name, and `name: "T"` an annotation
            if _literal(value):
                found.append((number, "Credential assignment", value.rstrip(".:")))
        if not python:
            docker = _DOCKER_ENV.match(line)
            if docker and not _NOT_HELD.search(docker.group(1)) and _literal(docker.group(2)):
                found.append((number, "Credential assignment", docker.group(2)))
        for match in _TOKEN.finditer(line):
            if _high_entropy(match.group()):
                found.append((number, "High-entropy token", match.group()))
        if _CONTEXT.search(line):
            for match in _HEX.finditer(line):
                if entropy(match.group()) >= 3.0:
                    found.append((number, "Hex token", match.group()))
    return found


def _block_body(lines: list[str], opener: int, indent: int, found: list[Finding]) -> int:
    """A YAML block scalar's body after the line ``opener`` (index) whose key is indented by
    ``indent``: each of its non-blank lines is a finding. The index of its last line."""
    last = opener
    for index in range(opener + 1, len(lines)):
        stripped = lines[index].strip()
        if not stripped:
            continue
        if len(lines[index]) - len(lines[index].lstrip()) <= indent:
            break
        found.append((index + 1, "YAML block scalar", stripped))
        last = index
    return last
