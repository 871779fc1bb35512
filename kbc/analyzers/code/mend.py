"""What real C, C++ and Rust write that their tree-sitter grammars cannot read, mended in place
so the rest of the file parses (TypeScript's: :mod:`kbc.analyzers.code.repair`).

C and C++ (a preprocessor the grammar does not run):

- an annotation macro before a declaration (``LZ4LIB_API int f(void);``,
  ``JNIEXPORT jint JNICALL JNI_OnLoad(...)``, ``class JSI_EXPORT Module {``,
  ``PyObject_HEAD Params *params;``) is blanked;
- a macro standing for a statement on a line of its own (``Py_BEGIN_ALLOW_THREADS``), or
  before a statement's keyword, is blanked;
- a line that only invokes a macro, with no ``;`` after it (``DEFINE_GETTER(format, f)``,
  ``YG_DEFINE_ENUM_FLAG_OPERATORS(Errata)``), is blanked;
- a unit macro after a number (``64 KB``), a macro beside a string literal (``"%" PRIu64``),
  an attribute macro after a declarator (``int Run() GTEST_MUST_USE_RESULT_;``) is blanked;
- a macro that defines a function (``MATCHER(IsEmpty, "is empty") {``) keeps its first
  argument only;
- the ``extern "C" {`` and ``}`` a header guards with ``#ifdef __cplusplus`` are blanked;
- a macro that opens or closes a region alone on a line from its first column
  (``YG_EXTERN_C_BEGIN``, ``G_END_DECLS``) is blanked with the annotations;
- the ``/* comments */`` in a ``#define``'s body, on a line with an error, are blanked (the
  grammar reads a body as text that a block comment ends early), and so is the ``...`` of a
  named variadic parameter (``fmt...``, GNU's);
- then, where errors remain, the directives of each conditional with one branch only
  (``#if`` ... ``#endif``) are blanked, its lines read as compiled; then, of a conditional
  with more branches that splits a statement, near an error, the first branch is read as
  compiled and the others blanked with the directives;
- then, on the lines errors remain on, a statement that only invokes a macro
  (``MOCK_METHOD(void, f, ());``: arguments that are types) is blanked.

Rust: ``try!(...)`` of the 2015 edition (the grammar takes ``try`` for a keyword) loses its
``try``, a ``~`` (no Rust operator; macros' token trees use it) is blanked, and so is the
``!`` of a negative ``impl !Trait``.

A macro is a name in capitals (``FORCE_INLINE``, ``GTEST_API_``) or a capitalised name
joined by ``_`` to capitals (``PyObject_HEAD``). Bytes keep their place (what is blanked
becomes spaces), so every span, line and signature stays exact; a mended tree is kept only
when it has fewer errors (:func:`kbc.analyzers.code.repair.repaired`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Set

_MACRO = rb"(?:[A-Z][A-Za-z0-9]*_[A-Z0-9_]+|[A-Z][A-Z0-9]{2,})\b"
_PRINTF = rb"(?:PRI|SCN)[a-zA-Z]+\d*\b"  # `"%" PRIu64`
_NAME = rb"[A-Za-z_~][\w:]*"
_TYPE_WORDS = rb"(?:(?:const|unsigned|signed|struct|enum|union|long|short|volatile)[ \t]+)*"

# `LZ4LIB_API int f(`, `PyObject_HEAD Params *params;`: a macro, then a type and a name
_LEADING = re.compile(
    rb"^[ \t]*(?:(?:static|inline|extern|const)[ \t]+)*("
    + _MACRO
    + rb")[ \t]+(?="
    + _TYPE_WORDS
    + rb"(?!(?:const|volatile)\b)[A-Za-z_][\w:<>,]*[ \t*&]*\s[ \t*&]*"
    + _NAME
    + rb"[ \t]*[(;\[=,])",
    re.MULTILINE,
)
# `jint JNICALL JNI_OnLoad(`: a macro between a type and a function's name
_BETWEEN = re.compile(
    rb"\b([A-Za-z_]\w*[ \t*&]*)[ \t](" + _MACRO + rb")(?=[ \t]+[*&]?[ \t]*[A-Za-z_]\w*[ \t]*\()"
)
_KEYWORDS = frozenset(
    b"static inline extern const volatile unsigned signed struct enum union return else case goto"
    b" define undef ifdef ifndef if elif pragma".split()  # never a directive's name
)
# `LZ4_DEPRECATED("use f") int g(`: an annotation macro with arguments before a declaration
_ANNOTATION = re.compile(rb"^[ \t]*(" + _MACRO + rb"\([^()\n]*\))[ \t]+(?=[A-Za-z_])", re.MULTILINE)
# `class JSI_EXPORT Module : public Base {`
_CLASS = re.compile(rb"\b(?:class|struct|union)[ \t]+(" + _MACRO + rb")(?=[ \t]+[A-Za-z_]\w*\s*[:{])")
# `Py_BEGIN_ALLOW_THREADS` alone on its line, or before a statement's keyword or a member's
# assignment (`x->y = ...`: no declaration)
_STATEMENT = re.compile(
    rb"^[ \t]*(" + _MACRO + rb")[ \t]*(?:(?=//)|(?=/\*)|$|[ \t](?=(?:for|if|while|do|return|switch)\b)"
    rb"|[ \t](?=[A-Za-z_]\w*(?:->|\.)[A-Za-z_]))",
    re.MULTILINE,
)
# `DEFINE_GETTER(format, f)` on a line of its own, no `;` after it
_INVOCATION = re.compile(
    rb"^[ \t]*(" + _MACRO + rb"\((?:[^;{}()]|\([^;{}()]*\))*\))[ \t]*(?://[^\n]*)?$", re.MULTILINE
)
# `int Run() GTEST_MUST_USE_RESULT_;`: an attribute macro after a declarator
_TRAILING = re.compile(rb"\)[ \t]*(?:const[ \t]*)?(" + _MACRO + rb")[ \t]*(?=[;{])")
# `"%" PRIu64`, `"adir" GTEST_PATH_SEP_`: a macro that is a string beside a string
_BESIDE_STRING = re.compile(
    rb'(?<=")[ \t]*(' + _MACRO + rb"|" + _PRINTF + rb")|\b(" + _MACRO + rb"|" + _PRINTF + rb')(?=[ \t]*")'
)
# `MATCHER(IsEmpty, negation ? "isn't empty" : "is empty") {`: a macro defining a function,
# a string among its arguments
_DEFINING = re.compile(
    rb"^[ \t]*" + _MACRO + rb'\([ \t]*\w+[ \t]*(,[^\n{};]*"[^\n{};]*)\)[ \t]*\{', re.MULTILINE
)
# on a line with an error: a statement that only invokes a macro (`MOCK_METHOD(void, f, ());`)
_STATEMENT_INVOCATION = re.compile(rb"^[ \t]*(" + _MACRO + rb"\([^\n]*\)[ \t]*;?)[ \t]*(?://[^\n]*)?$")
_FOLLOWS_A_STATEMENT = re.compile(rb"\s*(?:$|[A-Za-z_#}/])")
_UNIT = re.compile(rb"(?<=\d)[ \t]+([A-Z]{2,})\b")
# `#ifdef __cplusplus` / `extern "C" {` / `#endif`, and its closing `}` guarded the same way
_CPLUSPLUS = (
    rb"[ \t]*#[ \t]*if(?:def[ \t]+__cplusplus|[ \t]+defined[ \t]*\(?[ \t]*__cplusplus[ \t]*\)?)[^\n]*\n"
)
_EXTERN_C = re.compile(_CPLUSPLUS + rb'[ \t]*(extern[ \t]*"C"[ \t]*\{)[^\n]*\n[ \t]*#[ \t]*endif')
_EXTERN_C_END = re.compile(_CPLUSPLUS + rb"[ \t]*(\})[^\n]*\n[ \t]*#[ \t]*endif")
# a macro opening or closing a region, alone on its line from its first column:
# `YG_EXTERN_C_BEGIN`, `G_END_DECLS`
_LONE = re.compile(
    rb"^((?=[A-Z0-9_]*(?:_BEGIN|_END|BEGIN_|END_))" + _MACRO + rb")[ \t]*(?:(?=//)|(?=/\*)|$)", re.MULTILINE
)
# `#define NAME(params) body \` continued: the body (group 2) of each logical line
_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+\w+(\([^)\n]*\))?((?:[^\n\\]|\\[^\n]|\\\n)*)", re.MULTILINE)
_CONTINUED = re.compile(rb"(?:[^\\\r\n]|\\(?!\r?\n))+")  # what a text holds but its line ends
_BLOCK_COMMENT = re.compile(rb"/\*.*?\*/", re.DOTALL)
_DIRECTIVE_OR_COMMENT = re.compile(
    rb"/\*.*?\*/|//[^\n]*|^[ \t]*#(?:[^\n\\]|\\[^\n]|\\\n)*", re.DOTALL | re.MULTILINE
)
_NAMED_VARIADIC = re.compile(rb"\w(\.\.\.)")
# a directive of a conditional, its continued lines included
_CONDITIONAL = re.compile(
    rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(?:[^\n\\]|\\[^\n]|\\\n)*", re.MULTILINE
)

_TRY = re.compile(rb"\b(try)(?=!\s*[(\[{])")
_TILDE = re.compile(rb"(~)")
_NEGATIVE_IMPL = re.compile(rb"\bimpl(?:[ \t]*<[^{;]*?>)?[ \t]+(!)")


def _blank_between(out: bytearray) -> None:
    for found in _BETWEEN.finditer(bytes(out)):
        before = found.group(1).strip(b" \t*&")
        if before not in _KEYWORDS and not re.fullmatch(_MACRO, before):  # `FORCE_INLINE U32 f(`
            start, end = found.span(2)
            out[start:end] = b" " * (end - start)


def _blank(pattern: re.Pattern[bytes], out: bytearray, group: int = 1) -> None:
    for found in pattern.finditer(bytes(out)):
        start, end = found.span(group)
        out[start:end] = b" " * (end - start)


class _Lines:
    """Where each line of a text starts, to tell the rows a span of bytes covers."""

    def __init__(self, data: bytes) -> None:
        self.starts = [0, *(found.end() for found in re.finditer(rb"\n", data))]

    def touch(self, start: int, end: int, rows: Set[int], before: int = 0) -> bool:
        """Whether a row of ``rows`` (0-based) lies among those of bytes ``start``..``end``, or
        among the ``before`` rows above them."""
        first = bisect.bisect_right(self.starts, start) - 1 - before
        last = bisect.bisect_right(self.starts, end) - 1
        if last - first < len(rows):
            return any(row in rows for row in range(first, last + 1))
        return any(first <= row <= last for row in rows)


def _spaces(text: bytes) -> bytes:
    """``text`` blanked, its line ends kept (every line stays where it was)."""
    return re.sub(rb"[^\r\n]", b" ", text)


def _blank_invocations(out: bytearray) -> None:
    data = bytes(out)
    for found in _INVOCATION.finditer(data):
        if _FOLLOWS_A_STATEMENT.match(data, found.end()):
            start, end = found.span(1)
            out[start:end] = b" " * (end - start)


def blank_annotations(data: bytes, rows: Set[int]) -> bytes:
    """``data`` with the annotation macros of declarations blanked."""
    out = bytearray(data)
    _blank_between(out)
    for pattern in (_ANNOTATION, _LEADING, _CLASS, _TRAILING, _LONE):
        _blank(pattern, out)
    return bytes(out)


def blank_statements(data: bytes, rows: Set[int]) -> bytes:
    """``data`` with the macros that stand for statements, units and function heads blanked."""
    out = bytearray(data)
    for pattern in (_STATEMENT, _UNIT, _DEFINING):
        _blank(pattern, out)
    _blank_invocations(out)
    return bytes(out)


def blank_strings(data: bytes, rows: Set[int]) -> bytes:
    """``data`` with the macros beside string literals blanked."""
    out = bytearray(data)
    for found in _BESIDE_STRING.finditer(data):
        start, end = found.span(1) if found.group(1) else found.span(2)
        out[start:end] = b" " * (end - start)
    return bytes(out)


def blank_extern_c(data: bytes, rows: Set[int]) -> bytes:
    """``data`` without the ``extern "C" {`` and ``}`` guarded by ``#ifdef __cplusplus``."""
    out = bytearray(data)
    for pattern in (_EXTERN_C, _EXTERN_C_END):
        _blank(pattern, out)
    return bytes(out)


def blank_invocations_at(data: bytes, rows: Set[int]) -> bytes:
    """``data`` with each statement on one of the lines ``rows`` (0-based; where errors are)
    that only invokes a macro blanked: a macro's arguments may be types, or no expression."""
    out = bytearray(data)
    offset = 0
    for row, line in enumerate(data.split(b"\n")):
        if row in rows:
            found = _STATEMENT_INVOCATION.match(line)
            if found:
                start, end = found.span(1)
                out[offset + start : offset + end] = b" " * (end - start)
        offset += len(line) + 1
    return bytes(out)


def _conditionals(data: bytes) -> list[list[tuple[int, int, bytes]]]:
    """Each closed preprocessor conditional of ``data``: its directives' (start, end, name)."""
    groups: list[list[tuple[int, int, bytes]]] = []
    stack: list[list[tuple[int, int, bytes]]] = []
    for found in _CONDITIONAL.finditer(data):
        directive = found.group(1)
        if directive.startswith(b"if"):
            stack.append([(found.start(), found.end(), directive)])
        elif stack:
            stack[-1].append((found.start(), found.end(), directive))
            if directive == b"endif":
                groups.append(stack.pop())
    return groups


def flatten_conditionals(data: bytes, rows: Set[int]) -> bytes:
    """``data`` with the directives of each preprocessor conditional that has one branch only
    (``#if X`` ... ``#endif``, no ``#else``/``#elif``) blanked, its lines read as always
    compiled: the grammar reads a conditional inside a statement or an initializer list, not
    an element, as an error."""
    out = bytearray(data)
    for group in _conditionals(data):
        if len(group) == 2:
            for start, end, _ in group:
                out[start:end] = _spaces(data[start:end])
    return bytes(out)


def blank_define_bodies(data: bytes, rows: Set[int]) -> bytes:
    """``data`` with the block comments in the body of each ``#define`` on one of ``rows``
    blanked (the line ends a macro continues on kept), and the ``...`` of a named variadic
    parameter: the grammar reads a body as text that a block comment ends, and knows only
    ``...`` alone."""
    out = bytearray(data)
    lines = _Lines(data)
    for found in _DEFINE.finditer(data):
        if not lines.touch(found.start(), found.end(), rows):
            continue
        if found.group(1):
            for variadic in _NAMED_VARIADIC.finditer(data, *found.span(1)):
                start, end = variadic.span(1)
                out[start:end] = b" " * (end - start)
        start, end = found.span(2)
        comments = list(_BLOCK_COMMENT.finditer(data, start, end))
        after = _BLOCK_COMMENT.sub(b"", data[comments[0].end() : end]) if comments else b""
        if after.strip(b" \t\\\r\n"):  # code after a comment: the grammar's body ends at it
            for comment in comments:
                out[comment.start() : comment.end()] = _CONTINUED.sub(
                    lambda kept: b" " * len(kept.group(0)), comment.group(0)
                )
    return bytes(out)


def _splits_a_statement(data: bytes, at: int) -> bool:
    """Whether the code before offset ``at`` (comments and directives left out) stops inside a
    statement or a declaration: ``if (p == NULL)``, ``static struct lib stub``."""
    code = _DIRECTIVE_OR_COMMENT.sub(b"", data[max(0, at - 4096) : at]).rstrip()
    return bool(code) and code[-1:] not in (b";", b"{", b"}")


def first_branches(data: bytes, rows: Set[int]) -> bytes:
    """``data`` with each preprocessor conditional of several branches that splits a statement
    or a declaration, near one of ``rows``, read as its first branch: the directives, and every
    line of the other branches, blanked (``if (p == NULL)`` / ``#if A`` / ``return OK;`` /
    ``#else`` / ``return ERR;`` / ``#endif``). Between definitions, every branch is kept."""
    out = bytearray(data)
    lines = _Lines(data)
    for group in _conditionals(data):
        if len(group) < 3 or not lines.touch(group[0][0], group[-1][0], rows, before=1):
            continue
        if not _splits_a_statement(data, group[0][0]):  # between definitions: each branch kept
            continue
        for start, end in ((group[0][0], group[0][1]), (group[1][0], group[-1][1])):
            out[start:end] = _spaces(data[start:end])
    return bytes(out)


def mend_rust(data: bytes, rows: Set[int]) -> bytes:
    """``data`` with the Rust its grammar cannot read blanked."""
    out = bytearray(data)
    for pattern in (_TRY, _TILDE, _NEGATIVE_IMPL):
        _blank(pattern, out)
    return bytes(out)


# Each language's menders, each tried on what the one before left, each kept if it mends.
Mender = Callable[[bytes, Set[int]], bytes]  # the bytes, and the rows (0-based) of their errors
_C: tuple[Mender, ...] = (
    blank_extern_c,
    blank_annotations,
    blank_statements,
    blank_strings,
    blank_define_bodies,
    flatten_conditionals,
    first_branches,
    blank_invocations_at,
)
MENDERS: dict[str, tuple[Mender, ...]] = {
    "c": _C,
    "cpp": _C,
    "rust": (mend_rust,),
}
