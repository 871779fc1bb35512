"""Where in a file a finding stands, as far as telling a credential from an example goes.

- a test's or an example's file: ``tests/``, ``test_*.py``, ``conftest.py``, ``t/unit/``,
  ``fixtures/``; ``examples/``, ``demo/``, ``samples/``, ``tutorial/``, ``docs_src/``, a
  ``dummy…``, ``fake…`` or ``mock…`` folder, ``examples-1.json``;
- public key material: the lines of a PEM block that is not a private key (a certificate, a
  public key, a request, a signature) and SSH public keys; private key blocks, each with its
  header and why it holds no key (no key material after the header, or less than its own DER
  encoding declares: an example cut short, ``MIIEpQ…``);
- prose: a document's every line (Markdown, reStructuredText, HTML, ``.txt``, a README),
  Python's comments and triple-quoted strings;
- examples: doctests and console sessions (a ``>>>``, ``$`` or ``In [1]:`` prompt, its
  continuations and its output), the blocks Sphinx runs as tests (``.. testsetup::``,
  ``.. testcode::``, ``.. doctest::``) and the literal blocks, code blocks and fences that the
  text introduces as an example (``For example::``, ``An example key in OpenSSH format::``).

Each is found in one pass over the lines. Apart from all of these, some files are secrets by
nature, whatever the detectors find in them (:func:`secret_by_nature`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kbc.analyzers.placeholders import decoded
from kbc.analyzers.roles import is_test_path

_TEST_FOLDERS = frozenset({"t", "unit", "unittests", "e2e", "fixtures", "fixture", "testdata"})
_EXAMPLE_NAME = re.compile(
    r"(?i)(?:^|[^a-z])(?:examples?|samples?|demos?|tutorials?|docs?_src)(?:[^a-z]|$)|dummy|fake|mock"
)
_DOC_LANGUAGES = frozenset({"markdown", "rst", "html"})
# Text files that are prose (not a Dockerfile, a Makefile, an .env or an .npmrc, read as text).
_PROSE_NAME = re.compile(
    r"(?i)(?:^|/)(?:[^/]+\.txt|readme|changes|changelog|history|news|authors|notice|pkg-info)[^/]*$"
)
_TRIPLE = ('"""', "'" * 3)
_PEM_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]+-----")
_PEM_LINE = re.compile(r"\s*[A-Za-z0-9+/=]*\s*|\s*[A-Za-z-]+:.*|.*-----END [A-Z0-9 ]+-----.*")
_ENCRYPTED = re.compile(r"Proc-Type: *4, *ENCRYPTED|aes\d+-c|bcrypt")
KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/=]{40,}")
_SSH_PUBLIC = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-[\w-]{1,40}|sk-[\w-]{1,60}@openssh\.com)\s{1,8}AAAA"
)
_PROMPT = re.compile(r"^\s*(?:>>>|\.\.\.|\$|In \[\d*\]:)(?: |$)")
_DIRECTIVE = re.compile(r"^(\s*)\.\. ([\w-]+)::")
_TEST_DIRECTIVES = frozenset({"testsetup", "testcode", "doctest", "testoutput", "testcleanup"})
_FENCE = re.compile(r"^(\s*)(```+|~~~+)")
_EXAMPLE_WORD = re.compile(r"(?i)(?<![\w.])(?:examples?|e\.g\.|for instance|samples?)(?![\w.])")
PEM_MAX_LINES = 5000  # a PGP public key block runs to hundreds of lines
# Files that hold secrets by what they are: environment files (not their templates), key stores,
# private keys, and the files tools keep their credentials in.
_ENV_FILE = re.compile(r"(?i)^(?:\.env(?:rc)?|\.env\.[\w.-]+|[\w.-]+\.env)$")
_ENV_TEMPLATE = re.compile(r"(?i)[._-](?:example|sample|template|dist|defaults?|tmpl|tpl)(?:\.|$)")
_KEY_SUFFIXES = frozenset(
    {".pem", ".key", ".p8", ".ppk", ".p12", ".pfx", ".pkcs12", ".jks", ".keystore", ".bks", ".kdbx"}
)
_KEY_NAME = re.compile(r"^id_(?:rsa|dsa|ecdsa|ed25519)(?:_[\w-]+)?$")
_CREDENTIAL_FILES = frozenset(
    {".netrc", "_netrc", ".pgpass", ".git-credentials", ".htpasswd", ".pypirc", ".npmrc", ".dockercfg"}
)


@dataclass(frozen=True, slots=True)
class Place:
    """What a file's path and lines say about the findings in it."""

    made_up: str | None  # "a test's" or "an example's": generic credentials there are made up
    prose: frozenset[int] | None  # lines of documentation (None: every line, a document)
    public: frozenset[int]  # lines of public key material
    private: dict[int, tuple[int, str | None]]  # private key block line -> (header, why not a key)
    examples: frozenset[int]  # lines of doctests, console sessions and example blocks

    def in_prose(self, number: int) -> bool:
        return self.prose is None or number in self.prose


def place_of(lines: list[str], language: str, where: str | None) -> Place:
    """What ``lines`` (a file in ``language`` at ``where`` in its repository; None: unknown, read
    as code) say about the findings in them."""
    public, private = _pem_blocks(lines)
    public |= {i + 1 for i, line in enumerate(lines) if _SSH_PUBLIC.search(line)}
    prose: frozenset[int] | None
    if language in _DOC_LANGUAGES or language == "text" and _PROSE_NAME.search(where or ""):
        prose = None
    elif language in ("python", "python-stub"):
        prose = frozenset(_python_prose(lines))
    else:
        prose = frozenset()
    examples = _console_lines(lines) | _example_blocks(lines)
    if prose is not None:
        examples = {n for n in examples if n in prose or _PROMPT.match(lines[n - 1])}
    return Place(made_up(where), prose, frozenset(public), private, frozenset(examples))


def made_up(where: str | None) -> str | None:
    """Whose made-up values a file at ``where`` holds: "a test's", "an example's" or None."""
    if where is None:
        return None
    parts = where.split("/")
    if is_test_path(where) or _TEST_FOLDERS & set(parts[:-1]):
        return "a test's"
    if any(_EXAMPLE_NAME.search(part) for part in parts[:-1]) or _EXAMPLE_NAME.search(
        parts[-1].split(".")[0]
    ):
        return "an example's"
    return None


def _pem_blocks(lines: list[str]) -> tuple[set[int], dict[int, tuple[int, str | None]]]:
    """The lines of public PEM blocks, and of private key blocks (see the module's docstring).
    A block written on one line (``\\n`` escaped) is that line."""
    public: set[int] = set()
    private: dict[int, tuple[int, str | None]] = {}
    index = 0
    while index < len(lines):
        begin = _PEM_BEGIN.search(lines[index])
        if begin is None:
            index += 1
            continue
        tail = lines[index][begin.end() :]
        if _PEM_END.search(tail):  # the whole block on one line
            block, body = [index], tail.replace("\\n", " ")
        else:
            last = index
            for last in range(index + 1, min(len(lines), index + PEM_MAX_LINES)):
                if _PEM_END.search(lines[last]) or not _PEM_LINE.fullmatch(lines[last]):
                    break
            block = list(range(index, last + 1))
            body = " ".join(lines[i] for i in block[1:])
        if "PRIVATE KEY" in begin.group(1):
            why = _not_a_key(begin.group(1), body)
            private.update({i + 1: (index + 1, why) for i in block})
        else:
            public.update(i + 1 for i in block)
        index = block[-1] + 1
    return public, private


def _not_a_key(label: str, body: str) -> str | None:
    """Why a private key block's body is no key: no key material, encrypted (useless without
    its passphrase, which is judged where it is written), or less of it than the length its DER
    encoding declares."""
    runs = KEY_MATERIAL.findall(body)
    if not runs:
        return "a private key header with no key material"
    if "ENCRYPTED" in label or _ENCRYPTED.search(body):
        return "an encrypted private key"
    material = "".join(runs)
    head = decoded(material[:8])
    if head is not None and len(head) >= 4 and head[0] == 0x30 and head[1] in (0x81, 0x82):
        declared = head[2] if head[1] == 0x81 else head[2] << 8 | head[3]
        if len(material) * 3 // 4 < declared * 0.9:
            return "an example's key, cut short"
    return None


def _python_prose(lines: list[str]) -> set[int]:
    """Lines of Python that are documentation: comments and triple-quoted strings."""
    prose: set[int] = set()
    quote: str | None = None
    for number, line in enumerate(lines, start=1):
        if quote is not None:
            prose.add(number)
            if line.count(quote) % 2 == 1:
                quote = None
            continue
        if line.lstrip().startswith(("#", *_TRIPLE)):
            prose.add(number)
        for mark in _TRIPLE:
            if line.count(mark) % 2 == 1:
                quote = mark
                prose.add(number)
                break
    return prose


def _console_lines(lines: list[str]) -> set[int]:
    """Lines of doctests and console sessions: each prompt, its ``...`` continuations and the
    output after them, up to a blank line, the next prompt or a docstring's or fence's end."""
    found: set[int] = set()
    inside = False
    for index, line in enumerate(lines):
        stripped = line.strip()
        if _PROMPT.match(line):
            inside = True
        elif not stripped or stripped.startswith((*_TRIPLE, "```")) or not inside:
            inside = False
            continue
        found.add(index + 1)
    return found


def _example_blocks(lines: list[str]) -> set[int]:
    """Lines of the blocks Sphinx runs as tests and of those the text introduces as an example:
    an indented block after ``.. directive::`` or a paragraph ending in ``::``, a fenced block;
    introduced by its own first line or the last line of text before it. Nested blocks are
    inside the outer one: each line is read once or twice."""
    found: set[int] = set()
    intro = ""  # the last non-blank line of text before the current one
    example = False  # that line opened an example block (a directive after "For example:")
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if not stripped:
            index += 1
            continue
        directive = _DIRECTIVE.match(line)
        fence = _FENCE.match(line)
        opens = directive is not None or fence is not None or stripped.endswith("::")
        says = example or bool(_EXAMPLE_WORD.search(intro) or _EXAMPLE_WORD.search(stripped))
        if opens and (says or (directive is not None and directive.group(2) in _TEST_DIRECTIVES)):
            end = _fence_end(lines, index, fence.group(2)) if fence else _indented_end(lines, index)
            found.update(range(index + 1, end + 1))
            intro, example, index = "", False, end  # a block introduces nothing after it
            continue
        example = opens and directive is not None and says
        intro = stripped
        index += 1
    return found


def _indented_end(lines: list[str], opener: int) -> int:
    """The index of the line after the block indented under ``lines[opener]``."""
    indent = len(lines[opener]) - len(lines[opener].lstrip())
    end = opener + 1
    while end < len(lines) and (
        not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent
    ):
        end += 1
    return end


def _fence_end(lines: list[str], opener: int, fence: str) -> int:
    """The index of the line after a fenced block's closing fence."""
    for end in range(opener + 1, len(lines)):
        if lines[end].strip().startswith(fence):
            return end + 1
    return len(lines)


def secret_by_nature(path: str) -> str | None:
    """What the file at ``path`` (in its repository) is, when it is a secret by nature: an
    environment file (``.env``, ``.env.production``, ``local.env``; not ``.env.example``), a
    key store, a private key (``.pem``, ``.key``, ``id_rsa``) or a tool's credentials
    (``.netrc``, ``.pgpass``, ``.git-credentials``, ``.pypirc``, ``.npmrc``, ``.aws/credentials``);
    None for any other file."""
    parts = path.split("/")
    name = parts[-1]
    suffix = name[name.rfind(".") :].lower() if "." in name else ""
    if _ENV_FILE.match(name) and not _ENV_TEMPLATE.search(name):
        return "an environment file"
    if suffix in _KEY_SUFFIXES or _KEY_NAME.match(name):
        return "a key file"
    if name.lower() in _CREDENTIAL_FILES or parts[-2:] in (
        [".aws", "credentials"],
        [".docker", "config.json"],
    ):
        return "a credentials file"
    return None
