"""Guards and class fields: the rules a file enforces and the fields its classes declare.

The walker calls ``branch_rule``, ``assert_rule`` and ``field_key`` during its one
pass, with cheap checks on nodes it already visits, and keeps the nodes it needs.
A guard's test is written down from the tokens the walk produces anyway
(``header_test``, ``assert_test``), so most guards cost no second rendering.
``to_guard`` and ``to_field`` turn the records into facts afterwards, rendering
source text only for what was kept.

Guards, by kind:

- ``raise``: an ``if`` or ``elif`` whose body has a ``raise`` among its top-level
  statements. Outcome: that raise as written; message: the first string literal
  argument of the raised call.
- ``reject``: an ``if`` or ``elif`` whose body is one statement that turns the
  caller away: a bare ``return``, ``return None``, ``return False``, a returned
  call whose name contains one of ``REJECT_NAMES``, a returned call with a 4xx/5xx
  ``status``/``status_code``, a returned tuple ending in a 4xx/5xx status, or a call
  statement whose name ends in one of ``STOP_CALLS`` (``abort(...)``,
  ``sys.exit(...)``, ``parser.error(...)``), except ``error`` called on a logger.
  Outcome: that statement as written; message: the first string literal argument
  of its call, if any.
- ``limit``: an ``if``, ``elif`` or ``while`` that is neither of the above and whose
  test compares against a constant. Outcome: the first statement of its body, on
  one line.
- ``assert``: an ``assert``; outcome ``"assert"``, message its literal message.

A branch spans from its keyword (``if``, ``elif``, ``while``) to the last line of
its own body; later ``elif``/``else`` branches are not part of it. Tests that are
``__name__ == "__main__"`` or ``TYPE_CHECKING`` are never guards.

``limits``, for every kind: the constants the test compares against with ``<``,
``<=``, ``>``, ``>=``, ``==`` or ``!=`` (either side, also inside arithmetic such as
``MAX * 2``): names whose last part is UPPER_CASE and numbers other than 0, 1
and -1, as written, in source order, without repeats. Comparisons are looked for
through ``and``/``or``/``not``, not inside calls.

A message is a plain string's value; an f-string's literal text with its
``{...}`` as written; for ``"..." % args``, ``"...".format(...)`` and ``_("...")``
the string itself.

Class fields: a name assigned or annotated in a class body (dataclass, attrs and
pydantic fields, enum members, ``title = models.CharField(...)``), and ``self.name``
assigned or annotated in the class's own ``__init__``. The first assignment of a
name wins; dunders and tuple targets are not fields.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from kbc.analyzers.python.scope import INSTANCE, Scope
from kbc.analyzers.python.syntax import dotted, squash, string_value
from kbc.domain.models import ClassField, Guard

Code = Callable[[cst.CSTNode], str]

# A returned call whose name (last part, any case) contains one of these rejects.
REJECT_NAMES = (
    "abort",
    "error",
    "forbidden",
    "notfound",
    "badrequest",
    "unauthorized",
    "reject",
    "deny",
    "denied",
    "invalid",
)
# A call statement whose name's last part is one of these stops the caller.
STOP_CALLS = frozenset({"abort", "exit", "_exit", "error", "fail"})
# Wrappers around a message literal: gettext and friends.
_MESSAGE_WRAPPERS = frozenset({"_", "gettext", "gettext_lazy", "ugettext", "ugettext_lazy", "lazy_gettext"})
_COMPARE = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
_HEADER_KEYWORDS = frozenset({"if", "elif", "while"})
_UPPER = re.compile(r"^_*[A-Z][A-Z0-9_]+$")

CONDITION_CHARS = 200
OUTCOME_CHARS = 120
MESSAGE_CHARS = 200
DEFAULT_CHARS = 80
ANNOTATION_CHARS = 120


@dataclass(slots=True, eq=False)
class RuleRecord:
    """A guard found by the walk, kept as nodes until the file is read."""

    kind: str
    test: cst.BaseExpression
    outcome: cst.CSTNode | None  # the raise / rejecting statement / first statement
    symbol: str
    line: int
    limits: tuple[str, ...]
    end: int = 0
    message: cst.BaseExpression | None = None  # an assert's message
    written: str | None = None  # the test's source, kept from the walk's own tokens


@dataclass(slots=True, eq=False)
class FieldRecord:
    owner: str
    name: str
    line: int
    annotation: cst.BaseExpression | None
    value: cst.BaseExpression | None


# -- during the walk ----------------------------------------------------------


def is_main_guard(test: cst.BaseExpression) -> bool:
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    sides = (test.left, target.comparator)
    names = [s for s in sides if isinstance(s, cst.Name) and s.value == "__name__"]
    strings = [s for s in sides if string_value(s) == "__main__"]
    return len(names) == 1 and len(strings) == 1


def _skipped(test: cst.BaseExpression) -> bool:
    if isinstance(test, (cst.Name, cst.Attribute)):
        parts = dotted(test)
        return parts is not None and parts[-1] == "TYPE_CHECKING"
    return is_main_guard(test)


def branch_rule(
    test: cst.BaseExpression, body: cst.BaseSuite, symbol: str, line: int, *, conditional: bool
) -> RuleRecord | None:
    """The guard an ``if``/``elif`` (``conditional``) or ``while`` branch makes, if any."""
    if _skipped(test):
        return None
    limits = compared_constants(test)
    if conditional:
        raised = _top_level_raise(body)
        if raised is not None:
            return RuleRecord("raise", test, raised, symbol, line, limits)
        single = _single_statement(body)
        if single is not None and _rejects(single):
            return RuleRecord("reject", test, single, symbol, line, limits)
    if limits:
        return RuleRecord("limit", test, _first_statement(body), symbol, line, limits)
    return None


def field_key(scope: Scope, target: cst.BaseExpression) -> tuple[str, str] | None:
    """(class, name) when assigning ``target`` declares a field: a name assigned in a
    class body, or ``self.name`` assigned in the class's ``__init__``. Dunders are not."""
    if scope.kind == "class" and isinstance(target, cst.Name):
        owner, name = scope.qname, target.value
    elif (
        scope.kind == "function" and isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
    ):
        holder = scope.bindings.get(target.value.value)
        if holder is None or holder.kind != INSTANCE or scope.qname != holder.value + ".__init__":
            return None
        owner, name = holder.value, target.attr.value
    else:
        return None
    if name.startswith("__") and name.endswith("__"):
        return None
    return owner, name


def assert_rule(node: cst.Assert, symbol: str, line: int) -> RuleRecord:
    return RuleRecord(
        "assert", node.test, None, symbol, line, compared_constants(node.test), message=node.msg
    )


def header_test(tokens: list[str]) -> str | None:
    """The test in the tokens of an ``if``/``elif``/``while`` header (with any comment
    lines above it): what lies between the keyword and the colon."""
    for index, token in enumerate(tokens):
        if token in _HEADER_KEYWORDS:
            text = "".join(tokens[index + 1 :]).strip()
            return text[:-1].rstrip() if text.endswith(":") else None
    return None


def assert_test(tokens: list[str]) -> str | None:
    """The test in the tokens of an ``assert`` without a message."""
    if not tokens or tokens[0] != "assert":
        return None
    text = "".join(tokens[1:]).strip()
    return text[:-1].rstrip() if text.endswith(";") else text


def _top_level_raise(body: cst.BaseSuite) -> cst.Raise | None:
    if isinstance(body, cst.SimpleStatementSuite):
        smalls: Sequence[cst.CSTNode] = body.body
    else:
        smalls = [s for line in body.body if isinstance(line, cst.SimpleStatementLine) for s in line.body]
    for small in smalls:
        if isinstance(small, cst.Raise):
            return small
    return None


def _single_statement(body: cst.BaseSuite) -> cst.BaseSmallStatement | None:
    if isinstance(body, cst.SimpleStatementSuite):
        return body.body[0] if len(body.body) == 1 else None
    if len(body.body) == 1:
        line = body.body[0]
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
            return line.body[0]
    return None


def _first_statement(body: cst.BaseSuite) -> cst.CSTNode | None:
    if not body.body:
        return None
    first = body.body[0]
    if isinstance(first, cst.SimpleStatementLine):
        return first.body[0] if first.body else None
    return first


def _rejects(statement: cst.BaseSmallStatement) -> bool:
    if isinstance(statement, cst.Return):
        value = statement.value
        if value is None:
            return True
        if isinstance(value, cst.Name):
            return value.value in ("None", "False")
        if isinstance(value, cst.Call):
            name = dotted(value.func)
            if name is not None and any(m in name[-1].lower() for m in REJECT_NAMES):
                return True
            return any(
                arg.keyword is not None
                and arg.keyword.value in ("status", "status_code")
                and _error_status(arg.value)
                for arg in value.args
            )
        if isinstance(value, cst.Tuple) and len(value.elements) >= 2:
            return _error_status(value.elements[-1].value)
        return False
    if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call):
        name = dotted(statement.value.func)
        if name is None or name[-1] not in STOP_CALLS:
            return False
        return not (name[-1] == "error" and len(name) > 1 and "log" in name[-2].lower())
    return False


def _error_status(node: cst.BaseExpression) -> bool:
    """A 4xx/5xx HTTP status: ``404``, ``status.HTTP_404_NOT_FOUND``."""
    if isinstance(node, cst.Integer):
        return node.value.isdigit() and 400 <= int(node.value) <= 599
    parts = dotted(node)
    return parts is not None and parts[-1].startswith(("HTTP_4", "HTTP_5"))


def compared_constants(test: cst.BaseExpression) -> tuple[str, ...]:
    found: list[str] = []
    _comparisons(test, found)
    return tuple(dict.fromkeys(found))


def _comparisons(node: cst.BaseExpression, found: list[str]) -> None:
    if isinstance(node, cst.BooleanOperation):
        _comparisons(node.left, found)
        _comparisons(node.right, found)
    elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        _comparisons(node.expression, found)
    elif isinstance(node, cst.Comparison):
        left = node.left
        for target in node.comparisons:
            if isinstance(target.operator, _COMPARE):
                _constants(left, found)
                _constants(target.comparator, found)
            left = target.comparator


def _trivial(number: str) -> bool:
    """0 or 1 (any sign, spelling or base): not a limit. Cheaper than ``evaluated_value``."""
    try:
        return float(number.replace("_", "")) in (0, 1)
    except ValueError:  # 0x.., 0o.., 0b..
        return int(number, 0) in (0, 1)


def _constants(node: cst.BaseExpression, found: list[str]) -> None:
    if isinstance(node, (cst.Integer, cst.Float)):
        if not _trivial(node.value):
            found.append(node.value)
    elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        operand = node.expression
        if isinstance(operand, (cst.Integer, cst.Float)):
            if not _trivial(operand.value):
                found.append(("-" if isinstance(node.operator, cst.Minus) else "+") + operand.value)
        else:
            _constants(operand, found)
    elif isinstance(node, cst.BinaryOperation):
        _constants(node.left, found)
        _constants(node.right, found)
    elif isinstance(node, (cst.Name, cst.Attribute)):
        parts = dotted(node)
        if parts is not None and _UPPER.match(parts[-1]):
            found.append(".".join(parts))


# -- after the walk -----------------------------------------------------------


def to_guard(record: RuleRecord, code: Code) -> Guard:
    outcome = ""
    message = ""
    node = record.outcome
    if record.kind == "assert":
        outcome = "assert"
        message = literal_text(record.message, code) or ""
    elif node is not None:
        outcome = squash(code(_without_leading_lines(node)).strip().rstrip(";"), OUTCOME_CHARS)
        call = _called(node) if record.kind != "limit" else None
        if call is not None:
            message = _first_literal_arg(call, code)
    return Guard(
        kind=record.kind,
        condition=squash(
            record.written if record.written is not None else code(record.test), CONDITION_CHARS
        ),
        symbol=record.symbol,
        line=record.line,
        end_line=max(record.end, record.line),
        outcome=outcome,
        message=squash(message, MESSAGE_CHARS),
        limits=record.limits,
    )


def to_field(record: FieldRecord, code: Code) -> ClassField:
    annotation = record.annotation
    value = record.value
    return ClassField(
        owner=record.owner,
        name=record.name,
        line=record.line,
        annotation=squash(code(annotation), ANNOTATION_CHARS) if annotation is not None else "",
        default=squash(code(value), DEFAULT_CHARS) if value is not None else "",
    )


def _without_leading_lines(node: cst.CSTNode) -> cst.CSTNode:
    """A compound statement without the comments and blank lines above it."""
    if getattr(node, "leading_lines", None):
        return node.with_changes(leading_lines=())
    return node


def _called(node: cst.CSTNode) -> cst.Call | None:
    """The call a raise, return or call statement makes."""
    if isinstance(node, cst.Raise):
        value: cst.BaseExpression | None = node.exc
    elif isinstance(node, (cst.Return, cst.Expr)):
        value = node.value
    else:
        return None
    if isinstance(value, cst.Tuple) and value.elements:  # return jsonify(...), 400
        value = value.elements[0].value
    return value if isinstance(value, cst.Call) else None


def _first_literal_arg(call: cst.Call, code: Code) -> str:
    for arg in call.args:
        if not arg.star:
            text = literal_text(arg.value, code)
            if text is not None:
                return text
    return ""


def literal_text(node: cst.BaseExpression | None, code: Code) -> str | None:
    """The text of a string literal as a message: see the module docstring."""
    if node is None:
        return None
    if isinstance(node, cst.SimpleString):
        return string_value(node)
    if isinstance(node, cst.FormattedString):
        return "".join(
            part.value if isinstance(part, cst.FormattedStringText) else code(part) for part in node.parts
        )
    if isinstance(node, cst.ConcatenatedString):
        left = literal_text(node.left, code)
        right = literal_text(node.right, code)
        return left + right if left is not None and right is not None else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        return literal_text(node.left, code)
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "format":
            return literal_text(func.value, code)
        if isinstance(func, cst.Name) and func.value in _MESSAGE_WRAPPERS and node.args:
            return literal_text(node.args[0].value, code)
    return None
