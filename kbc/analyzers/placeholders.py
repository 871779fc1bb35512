"""Whether a value, read alone, can be a credential: placeholders, names, words and data.

A credential someone means is random, or at least not made of the words and sequences
placeholder passwords are made of. None of these tests looks past the value itself (the
line and the file are :mod:`kbc.analyzers.secret_places`' business), and each runs in time
linear in the value.
"""

from __future__ import annotations

import base64
import binascii
import re

from kbc.analyzers.credentials import entropy

# A value that says it is not a real one: example, dummy, <your-key>, ${TOKEN}, xxxx, %s, ...
MARKERS = re.compile(
    r"(?i)example|sample|dummy|fake|placeholder|change_?-?me|redacted|test|notasecret|not[_-]a[_-]"
    r"|deadbeef|cafebabe|(?:^|[^a-z])(?:your|my)[_-]|xxxx|\*\*\*\*|\.\.\.|…|<[^>]*>|\{[^}]*\}|\$\{|\$\("
    r"|%s|%\(|%[0-9]*d|\{\{"
)
# A reference to a value held elsewhere, a literal of the language, a type's name.
_REFERENCE = re.compile(
    r"(?i)^(?:\$\w+|%\w+%?|env\.|os\.|process\.env|self\.|settings\.|config\.|request\.|none|null|nil"
    r"|true|false|undefined|required|optional|string|str|bytes|int)"
)
# Names: snake_case, dotted and Rust/C++ paths, CONSTANT_CASE, a key's name with its separator
# (``AccountKey=``), each part a word (a token's random part is none: ``hvs.5RuHz…``, ``sk_4f8a…``).
# A hyphenated value may be a passphrase (``correct-horse-staple-91``).
_NAME_LIKE = re.compile(
    r"[a-z]+[0-9]*(?:[_.:][a-z]+[0-9]*)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
    r"|[A-Za-z_][A-Za-z_]*[0-9]*(?:(?:\.|::)[A-Za-z_][A-Za-z_]*[0-9]*)+|\w+[=:]"
)
_CODE = re.compile(r"^[A-Za-z_$][\w.$]*[(\[<]|::|->")  # a call, a subscript, a generic type, a path
_WORDS_ONLY = re.compile(r"[A-Za-z]+(?:[^A-Za-z0-9]+[A-Za-z]+)*[^A-Za-z0-9]*")
# Not a secret however it reads: a URL, an e-mail address, a path, a date or a number, a
# password hash in modular crypt format (``pbkdf2_sha256$30000$…``, ``$2b$12$…``), prose.
_NOT_SECRET = re.compile(
    r"^[a-z][a-z0-9+.-]*://|^[^@\s:/]+@[^@\s]+\.[a-z]{2,}$|^(?:~|\.{1,2})/"
    r"|^/(?:etc|usr|var|tmp|home|opt|srv|root|dev|run|mnt|bin|lib|Users|Library)/"
    r"|^[\d\s.:/+TZ-]+$|^\$?\w+\$\d+\$|^\$(?:2[aby]?|1|5|6|argon2\w*|scrypt|pbkdf2[\w-]*)\$|\S\s+\S+\s+\S"
)
# The words placeholder passwords are made of (leet spellings read as letters first), the
# sample users of database manuals (scott/tiger).
_COMMON = re.compile(
    r"password|passwd|passw|pass|pwd|secret|token|apikey|api|key|admin|root|user|username|guest|demo"
    r"|default|welcome|letmein|qwerty|hunter|monkey|dragon|master|super|shadow|foo|bar|baz|qux|spam|eggs"
    r"|some|other|new|old|top|dev|local|mock|value|hello|world|abc|xyz|login|pw|scott|tiger"
)
_LEET = str.maketrans({"@": "a", "4": "a", "3": "e", "1": "i", "0": "o", "$": "s", "5": "s", "7": "t"})
SEQUENCES = ("0123456789", "9876543210", "abcdefghijklmnopqrstuvwxyz", "qwertyuiop", "asdfghjkl")
_RUNS = frozenset(sequence[i : i + 6] for sequence in SEQUENCES for i in range(len(sequence) - 5))
_FILE_MAGIC = (b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"\x1f\x8b", b"PK\x03\x04", b"%PDF", b"BZh", b"\x00asm")
_CAMEL = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")


def placeholder(value: str) -> bool:
    """``value`` says it stands for a credential rather than being one."""
    return bool(MARKERS.search(value))


def secret_like(value: str) -> bool:
    """A password or key as someone who means it writes one: 8 characters or more, and not a
    placeholder, a template, a reference, a name, a URL, a path, a date, a hash, prose, a word or
    words, nor made of the words placeholders are made of and a sequence (``password123``,
    ``p@ssw0rd``, ``scott:tiger``)."""
    value = value.strip().strip("\"'`")
    if len(value) < 8 or placeholder(value) or _REFERENCE.match(value) or _NOT_SECRET.search(value):
        return False
    if _CODE.search(value) or value.count(":") > 1 or _NAME_LIKE.fullmatch(value):
        return False  # an expression, an identifier (a URN, an ARN, a Rust path), a name
    if _WORDS_ONLY.fullmatch(value) and not random_run(value, 16):
        return False
    if len(value) > 64:  # longer than any password made of words and a sequence
        return len(set(value)) >= 5
    rest = _COMMON.sub("", value.lower().translate(_LEET))
    for sequence in SEQUENCES:
        for size in range(len(sequence), 2, -1):
            for start in range(len(sequence) - size + 1):
                rest = rest.replace(sequence[start : start + size], "")
    rest = re.sub(r"[^a-z0-9]|(.)\1+", "", rest)
    return len(rest) >= 5 and len(set(value)) >= 5


def random_run(text: str, least: int) -> bool:
    """``text`` is a random token of ``least`` characters or more: many distinct characters, no
    run of six of a sequence, and digits among letters, or both cases mixed as no words mix
    them (the case changing often, or few vowels: ``vSijnYPIxz``, not ``SomeKindOfPassword``)."""
    if len(text) < least or entropy(text) < 3.0 or len(set(text)) < min(10, len(text) // 2):
        return False
    lowered = text.lower()
    if any(lowered[i : i + 6] in _RUNS for i in range(len(lowered) - 5)):
        return False
    letters = [c for c in text if c.isalpha()]
    if letters and any(c.isdigit() for c in text):
        return True
    cases = [c.isupper() for c in letters]
    if all(cases) or not any(cases) or all(_CAMEL.fullmatch(run) for run in re.findall("[A-Za-z]+", text)):
        return False
    changes = sum(a != b for a, b in zip(cases, cases[1:], strict=False)) / max(1, len(cases) - 1)
    vowels = sum(c in "aeiouyAEIOUY" for c in letters) / len(letters)
    return changes >= 0.4 or vowels < 0.3


def issued(value: str) -> bool:
    """An issuer's token whose random part looks random: ``sk-ecdsa-sha2-nistp256`` is an SSH
    key type, ``pk_live_…`` a key meant to be public."""
    if value.startswith(("pk_live_", "pk_test_")):
        return False
    return any(random_run(run, 12) for run in re.split(r"[^A-Za-z0-9+/=]", value))


def decoded(value: str) -> bytes | None:
    """The bytes ``value`` is the base64 (standard or URL-safe) of, if it is base64."""
    if len(value) < 8 or not _BASE64.fullmatch(value):
        return None
    try:
        return base64.b64decode(value + "=" * (-len(value) % 4), altchars=b"-_" if "-" in value else None)
    except (binascii.Error, ValueError):
        return None


def text_of(value: str) -> str | None:
    """The text ``value`` is the base64 of, if it is printable text (``user:pass``, JSON)."""
    raw = decoded(value)
    if raw is None or len(raw) < 4:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if all(c.isprintable() or c in "\n\r\t" for c in text) else None


def file_of(value: str) -> bool:
    """``value`` is the base64 of a file of a well-known format (an image, an archive)."""
    raw = decoded(value)
    return raw is not None and raw.startswith(_FILE_MAGIC)
