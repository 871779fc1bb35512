"""Tell credentials from what only looks like one: placeholders, examples, fixtures, public data.

The detectors (:mod:`kbc.analyzers.secret_scan`) fire on a value's shape and the name it is
given. In a library's own files nearly everything they fire on is not a credential: the
``user:pass@example.com`` of a docstring, a doctest's output, a test's fixtures, hashes, ids
and test vectors, the certificates a client ships. A finding is kept unless its value
(:mod:`kbc.analyzers.placeholders`) or its place (:mod:`kbc.analyzers.secret_places`) shows
it is not a credential:

- public key material is not secret; a private key block is one finding, at its header, unless
  it holds no key (a header alone, an example cut short) or is a test's, an example's or a
  doctest's key;
- a value that says it is a placeholder (``example``, ``dummy``, ``<your-key>``, ``xxxx``…) is
  one, whatever found it;
- a token in an issuer's format (a cloud key, ``ghp_``, ``xoxb-``, ``sk_live_``…) is kept
  wherever it stands, tests and examples included, when its random part is random: it may be
  live;
- in a test's or an example's files, any other credential (a password, a key or token of no
  known issuer, a JWT, a URL's password, a private key) is made up;
- in doctests, console sessions and example blocks, any other credential is an example, and so
  is the same value wherever else the file shows it;
- a password (assigned, in a URL, in a ``Basic`` header) must read as one someone means, and in
  prose (documents, comments, docstrings) as a random one; a URL whose user is a placeholder
  holds a placeholder password;
- a random-looking string no credential-like word stands beside (outside a URL or a path) is a
  hash, an id, a test vector or data, as is base64 that decodes to text or a known file format.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote

from kbc.analyzers.credentials import Finding
from kbc.analyzers.placeholders import (
    SEQUENCES,
    file_of,
    issued,
    placeholder,
    random_run,
    secret_like,
    text_of,
)
from kbc.analyzers.secret_places import KEY_MATERIAL, Place, place_of

# What each detector's finding rests on; any other knows an issuer's format (AWS, GitHub,
# Slack, Stripe, …, kbc's "Issuer token").
ENTROPY = frozenset(
    {"Base64 High Entropy String", "Hex High Entropy String", "High-entropy token", "Hex token"}
)
NAMED = frozenset({"Secret Keyword", "Credential assignment", "YAML block scalar"})
URL = frozenset({"Basic Auth Credentials", "Password in URL"})
HEADER = "Authorization header"
PRIVATE_KEY = "Private Key"
JWT = "JSON Web Token"
_GENERIC = ENTROPY | NAMED | URL | {HEADER, JWT}
# In prose a key or token assigned a value is taken for one when it is as long as issued ones
# are: protocol documents show short samples (RFC 6749's "2YotnFZFEjr1zCsicMWpAA").
ISSUED_LENGTH = 24
_EXAMPLE = "an example's value"

_JWT_SHAPE = re.compile(r"eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+")
_CREDENTIAL_WORD = re.compile(r"(?i)key|secret|token|passw|pwd|auth|credential|bearer|api|private")
_DATA_NAME = re.compile(
    r"(?i)hash|digest|checksum|sha\d*|md5|crc|fingerprint|signature|nonce|salt|uuid|guid|oid|etag"
    r"|commit|revision|\bid\b|_id\b|\bids?\b|\biv\b|vector|expected|ciphertext|plaintext"
)
_IN_URL = re.compile(r"[a-z]+://\S*$")
_URLISH = re.compile(r"[a-z]+://\S*|\S*/\S*")
_URL_USER = re.compile(r"//([^\s/:@'\"]{1,256}):$")


def credible(found: Iterable[Finding], lines: list[str], language: str, where: str | None) -> list[Finding]:
    """The findings that may be credentials, in their order (see the module's docstring).
    ``where`` is the file's path in its repository (None: unknown, read as code)."""
    return [finding for finding, why in judged(found, lines, language, where) if why is None]


def judged(
    found: Iterable[Finding], lines: list[str], language: str, where: str | None
) -> list[tuple[Finding, str | None]]:
    """Each finding with why it is not a credential (None: it may be one). A private key block
    is reported once, at its header, whichever of its lines the detectors fired on."""
    found = list(found)
    if not found:
        return []
    place = place_of(lines, language, where)
    out: list[tuple[Finding, str | None]] = []
    headers: set[int] = set()
    for finding in found:
        number = finding[0]
        if number in place.private:
            header, why = place.private[number]
            if header not in headers:
                headers.add(header)
                key = (header, PRIVATE_KEY, lines[header - 1].strip())
                out.append((key, why or _private_key(place, header)))
            continue
        out.append((finding, _why(finding, lines[number - 1] if number <= len(lines) else "", place)))
    # a value shown as an example is one wherever else the file shows it
    shown = {finding[2] for finding, why in out if why == _EXAMPLE}
    return [
        (finding, _EXAMPLE if why is None and finding[2] in shown and finding[1] in _GENERIC else why)
        for finding, why in out
    ]


def _private_key(place: Place, header: int) -> str | None:
    if place.made_up:
        return f"{place.made_up} key"
    return "an example's key" if header in place.examples else None


def _why(finding: Finding, line: str, place: Place) -> str | None:
    number, kind, value = finding
    if number in place.public:
        return "public key material"
    if kind == PRIVATE_KEY:  # a key form no PEM block holds (PuTTY, an SSH2 header)
        if not KEY_MATERIAL.search(line):
            return "a private key header with no key material"
        return _private_key(place, number)
    if placeholder(value):
        return "a placeholder"
    if kind not in _GENERIC and not value.startswith("eyJ"):
        return None if issued(value) else "not an issued token's random part"
    if place.made_up:
        return f"{place.made_up} made-up value"
    if number in place.examples:
        return _EXAMPLE
    prose = place.in_prose(number)
    if kind in NAMED:
        return _password(value, prose, ISSUED_LENGTH)
    if kind in URL:
        return _url_password(value, line, prose)
    if kind == HEADER:
        return _header(value, prose)
    if _JWT_SHAPE.fullmatch(value):
        return None
    return _data(value, line, prose)


def _password(value: str, prose: bool, least: int = 12) -> str | None:
    """A password or key as written: one someone means, and in prose a random one of ``least``
    characters or more."""
    if not secret_like(value):
        return "a placeholder value"
    return "an example in prose" if prose and not random_run(value, least) else None


def _url_password(value: str, line: str, prose: bool) -> str | None:
    """A URL's password, unless its user is a placeholder (a sequence, ``your-user``)."""
    at = line.find(f":{value}@")
    user = _URL_USER.search(line[max(0, at - 260) : at + 1]) if at >= 0 else None
    name = user.group(1).lower() if user is not None else ""
    if placeholder(name) or len(name) >= 6 and any(name[:6] in sequence for sequence in SEQUENCES):
        return "a placeholder user's password"
    return _password(unquote(value), prose)


def _header(value: str, prose: bool) -> str | None:
    """A ``Basic`` value's password, or a bearer token."""
    decoded = text_of(value)
    if decoded is not None and ":" in decoded:
        return _password(decoded.partition(":")[2], prose)
    if decoded is not None:
        return "encoded text"
    return None if random_run(value, 16) else "not a random token"


def _data(value: str, line: str, prose: bool) -> str | None:
    """A random-looking string: a credential only when random, with a credential-like word
    beside it (not in a URL or a path) and no data's name before it, and not when it decodes
    to text or a file."""
    if text_of(value) is not None or file_of(value):
        return "encoded data"
    if not random_run(value, 16 if prose else 12):
        return "not a random string"
    at = line.find(value)
    before = line[max(0, at - 40) : at] if at >= 0 else ""
    if at >= 0 and _IN_URL.search(line[max(0, at - 300) : at]):
        return "part of a URL"
    around = _URLISH.sub(
        " ", before + " " + (line[at + len(value) : at + len(value) + 40] if at >= 0 else line)
    )
    if not _CREDENTIAL_WORD.search(around) or _DATA_NAME.search(before):
        return "a hash, an id or data"
    return None
