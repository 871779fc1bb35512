"""Read what a task names: paths, code names, traceback frames, messages and options.

A task written by a person or pasted from a bug report names the code it is
about far more precisely than its words suggest: a traceback frame gives a
file, a line and a function; a backticked ``Session.resolve_redirects`` or a
``resolve_redirects`` in prose is a definition's name; a quoted error message
is raised somewhere; ``--collect-only`` is declared somewhere. This module
only reads the text; :mod:`kbc.retrieval.resolve` matches what it read
against the facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kbc.analyzers.mentions import BUILTINS, FILE_SUFFIXES, code_spans

# Strength of what a mention is, strongest first (the order matched definitions are ranked in).
FRAME, PATH, COMMAND, CODE, NAME, MESSAGE, LINE, OPTION, SNIPPET = range(9)
KINDS = ("frame", "path", "command", "code", "name", "message", "line", "option", "snippet")

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = re.compile(rf"(?<![\w.]){_NAME}(?:\.{_NAME})+(?![\w])")
_SUFFIXES = "|".join(sorted(FILE_SUFFIXES, key=len, reverse=True))
_PATH = re.compile(rf"(?<![\w/.~-])((?:[\w.~-]+/)*[\w.-]+\.(?:{_SUFFIXES}))(?::(\d+))?(?![\w/])")
# File "x.py", line 12, in name        (CPython)
_PY_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)(?:, in (\S+))?')
# ~/site-packages/pkg/mod.py in name(args)     (IPython)
_IPY_FRAME = re.compile(rf"((?:[\w.~-]+/)*[\w.-]+\.py) in ({_NAME})\(")
# pkg/mod.py:12: in name                (pytest)
_PYTEST_FRAME = re.compile(rf"((?:[\w.~-]+/)*[\w.-]+\.py):(\d+): in ({_NAME})")
# File ~/pkg/mod.py:12, in Class.name(args)     (IPython 8)
_IPY8_FRAME = re.compile(rf"File ((?:[\w.~-]+/)*[\w.-]+\.py):(\d+), in ({_NAME}(?:\.{_NAME})*)")
# $ prog subcommand ...                (a shell session)
_SHELL = re.compile(r"^[ \t]*\$[ \t]+([A-Za-z][\w.-]*)[ \t]+([A-Za-z][\w-]*)", re.MULTILINE)
# A line of code as a traceback or a reader quotes it: "--> 841 plotter._setup(self)", "x = f(y)"
_CODE_MARKS = re.compile(r"^\s*(?:-+>|>>>|\.\.\.)?\s*(?:\d+\s+)?")
_CODE_LINE = re.compile(
    r"^(?:(?:return|raise|yield|if|elif|while|for|with|assert|def|class)\b.*|"
    rf"{_NAME}(?:\.{_NAME})*(?:\[[^\]]*\])?\s*(?:[-+*/|&]?=[^=].*|\(.*\)\s*))$"
)
_FENCED = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.MULTILINE | re.DOTALL)
_CALL = re.compile(rf"(?<![\w.])({_NAME}(?:\.{_NAME})*)\s*\(")
# A method called on what a call returns: `email` in `z.string().email()`
_CHAINED = re.compile(rf"\)\s*\.\s*({_NAME})\s*\(")
_IDENTIFIER = re.compile(rf"(?<![\w.-])({_NAME})(?![\w-])")
_OPTION = re.compile(r"(?<![\w-])(--[A-Za-z][\w-]*[A-Za-z0-9])")
# A setting named in kebab case: `ignore-paths`, or ``max-line-length = 100`` in a config block.
_SETTING = re.compile(r"[a-z][a-z0-9]+(?:-[a-z][a-z0-9]+)+")
_SETTING_LINE = re.compile(r"^[ \t]*([a-z][a-z0-9]+(?:-[a-z][a-z0-9]+)+)[ \t]*[=:]", re.MULTILINE)
_QUOTED = re.compile(r"\"([^\"\n]{12,200})\"|'([^'\n]{12,200})'")
_EXCEPTION = re.compile(
    r"^\s*(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception|Warning)):\s+(.{8,200})$", re.MULTILINE
)
_IMPORT = re.compile(
    rf"^\s*(?:from\s+({_NAME}(?:\.{_NAME})*)\s+import\s+([\w, ]+)"
    rf"|import\s+({_NAME}(?:\.{_NAME})*))",
    re.MULTILINE,
)
MAX_MENTIONS = 200
# What of a task anything reads: a task is text a person wrote or pasted, and a run without
# spaces longer than any name, path or token is data (a blob, a minified line), not words.
MAX_TASK_CHARS = 64_000
MAX_RUN_CHARS = 256
_LONG_RUN = re.compile(rf"\S{{{MAX_RUN_CHARS}}}\S+")
MAX_LINES = 20  # code lines taken from a task


@dataclass(frozen=True, slots=True)
class Mention:
    """Something the task names."""

    text: str  # as written (a name, a path, a message, an option)
    kind: int  # FRAME, PATH, COMMAND, CODE, NAME, MESSAGE, LINE, OPTION or SNIPPET
    order: int  # where it first appears in the task (a frame: minus that, the latest first)
    path: str = ""  # a frame's or a path mention's file, as written
    line: int = 0  # a frame's line, or a path's ``:N``
    name: str = ""  # the code name: a frame's function, a dotted or bare identifier

    @property
    def label(self) -> str:
        return KINDS[self.kind]


def _identifier_like(name: str) -> bool:
    """A word that can only be code: it has an underscore, an inner capital or a digit after
    letters (``resolve_redirects``, ``PairGrid``, ``utf8``), and is not a builtin."""
    bare = name.strip("_")
    if len(bare) < 3 or name in BUILTINS:
        return False
    return (
        "_" in bare
        or any(c.isupper() for c in bare[1:])
        or (any(c.isdigit() for c in bare) and bare[0].isalpha())
    )


def _clean_name(name: str) -> str:
    for prefix in ("self.", "cls."):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def bounded(task: str) -> str:
    """``task`` as every reader of it sees it: its first :data:`MAX_TASK_CHARS` characters,
    each run without spaces cut to :data:`MAX_RUN_CHARS`, so that no scan of it costs more
    than its length allows (some of the patterns above look back over a run)."""
    return _LONG_RUN.sub(lambda m: m.group(0)[:MAX_RUN_CHARS], task[:MAX_TASK_CHARS])


def read_query(text: str) -> list[Mention]:  # noqa: C901 - one reading per kind of mention
    """The mentions of ``text``, each distinct (kind, text) once, strongest kinds first and
    then in the order they appear."""
    found: dict[tuple[int, str, int], Mention] = {}

    def add(mention: Mention) -> None:
        key = (mention.kind, mention.text, mention.line)
        if key in found:
            if mention.order < found[key].order:  # a frame seen again, later in the task
                found[key] = mention
        elif len(found) < MAX_MENTIONS:
            found[key] = mention

    for regex, has_line in (
        (_PY_FRAME, True),
        (_PYTEST_FRAME, True),
        (_IPY8_FRAME, True),
        (_IPY_FRAME, False),
    ):
        for match in regex.finditer(text):
            if has_line:
                path, line, name = match.group(1), int(match.group(2)), match.group(3) or ""
            else:
                path, line, name = match.group(1), 0, match.group(2)
            name = "" if name.startswith("<") else name.rpartition(".")[2]  # <module>; Class.name
            where = f"{path}:{line}" if line else path
            # Tracebacks print the most recent call last: the later a frame, the nearer the raise.
            add(Mention(f"{where} in {name}" if name else where, FRAME, -match.start(), path, line, name))
    for match in _PATH.finditer(text):
        path = match.group(1)
        if "/" in path or path.endswith((".py", ".pyi")):
            add(Mention(path, PATH, match.start(), path, int(match.group(2) or 0)))
    fenced = [(m.start(2), m.group(2)) for m in _FENCED.finditer(text)]
    prose = _FENCED.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    offsets = _line_offsets(text)
    for span in code_spans(prose):
        where = offsets[min(span.line, len(offsets)) - 1]
        if _PATH.fullmatch(span.text):
            continue  # read as a path above
        for option in _OPTION.findall(span.text):
            add(Mention(option, OPTION, where))
        if _SETTING.fullmatch(span.text):
            add(Mention(span.text, OPTION, where))
        for name in _names(span.text, span=True):
            add(Mention(name, CODE, where, name=name))
    for match in _DOTTED.finditer(prose):
        name = _clean_name(match.group(0))
        head, _, tail = name.rpartition(".")
        if tail in FILE_SUFFIXES or not head or min(len(part) for part in name.split(".")) < 2:
            continue  # a file name, or an abbreviation (e.g, i.e)
        add(Mention(name, NAME, match.start(), name=name))
    for match in _CHAINED.finditer(prose):
        if match.group(1) not in BUILTINS:
            add(Mention(match.group(1), NAME, match.start(1), name=match.group(1)))
    for match in _IDENTIFIER.finditer(prose):
        if _identifier_like(match.group(1)):
            add(Mention(match.group(1), NAME, match.start(), name=match.group(1)))
    for match in _OPTION.finditer(text):
        add(Mention(match.group(1), OPTION, match.start()))
    for match in _EXCEPTION.finditer(text):
        add(Mention(match.group(2).strip(), MESSAGE, match.start(2), name=match.group(1)))
    for match in _QUOTED.finditer(prose):
        message = (match.group(1) or match.group(2)).strip()
        if len(message.split()) >= 3:
            add(Mention(message, MESSAGE, match.start()))
    for match in _SHELL.finditer(text):
        add(
            Mention(
                f"{match.group(1)} {match.group(2)}",
                COMMAND,
                match.start(),
                path=match.group(1),
                name=match.group(2),
            )
        )
    for start, statement in _code_lines(text):
        add(Mention(statement, LINE, start))
    for start, block in fenced:
        for name in _names(block, span=False):
            add(Mention(name, SNIPPET, start, name=name))
        for match in _SETTING_LINE.finditer(block):
            add(Mention(match.group(1), OPTION, start + match.start(1)))
    return sorted(found.values(), key=lambda m: (m.kind, m.order, m.text))


def _code_lines(text: str) -> list[tuple[int, str]]:
    """Lines that read as a statement of code (an assignment, a call, a return or raise), with
    their offsets: a task quoting a line of the repository says where it is."""
    out: list[tuple[int, str]] = []
    offset = 0
    for raw in text.split("\n"):
        line = _CODE_MARKS.sub("", raw, count=1).strip()
        if (
            12 <= len(line) <= 160
            and len(line.split()) >= 2
            and _CODE_LINE.match(line)
            and not line.startswith(("File ", "Traceback"))
        ):
            out.append((offset, line))
            if len(out) >= MAX_LINES:
                break
        offset += len(raw) + 1
    return out


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    for match in re.finditer("\n", text):
        offsets.append(match.end())
    return offsets


def _names(code: str, span: bool) -> list[str]:
    """Code names in a span or block: imported names, dotted names, called names, and
    identifier-shaped words (and a backticked single word, whatever its shape)."""
    out: dict[str, None] = {}
    for match in _IMPORT.finditer(code):
        module, names, plain = match.group(1), match.group(2), match.group(3)
        if plain:
            out.setdefault(plain, None)
        else:
            for name in (n.strip().split(" as ")[0] for n in names.split(",")):
                if name:
                    out.setdefault(f"{module}.{name}", None)
    for match in _DOTTED.finditer(code):
        name = _clean_name(match.group(0))
        if name.rpartition(".")[2] not in FILE_SUFFIXES:
            out.setdefault(name, None)
    for match in _CALL.finditer(code):
        name = _clean_name(match.group(1))
        if name not in BUILTINS:
            out.setdefault(name, None)
    for match in _CHAINED.finditer(code):
        if match.group(1) not in BUILTINS:
            out.setdefault(match.group(1), None)
    for match in _IDENTIFIER.finditer(code):
        word = match.group(1)
        if _identifier_like(word) or (
            span and len(code.split()) == 1 and word not in BUILTINS and len(word) > 2
        ):
            out.setdefault(word, None)
    return list(out)
