"""What one walk over a parsed module records: definitions, calls, environment reads, main
guards and the module's other facts, still holding their libcst nodes and scopes."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from kbc.analyzers.python import rules
from kbc.analyzers.python.scope import Scope
from kbc.domain.models import Import


@dataclass(slots=True, eq=False)
class DefRecord:
    node: cst.FunctionDef | cst.ClassDef
    qname: str
    kind: str  # class | function | method
    outer: Scope
    start: int
    end: int = 0
    inner: Scope | None = None
    in_function: bool = False


@dataclass(slots=True, eq=False)
class CallRecord:
    node: cst.Call
    parts: tuple[str, ...] | None
    scope: Scope
    line: int


@dataclass(slots=True, eq=False)
class EnvRecord:
    """``os.environ[KEY]``: the mapping's dotted name and the key expression."""

    parts: tuple[str, ...]
    key: cst.BaseExpression | None
    scope: Scope
    line: int


@dataclass(slots=True, eq=False)
class GuardRecord:
    start: int
    end: int = 0


@dataclass(slots=True, eq=False)
class WalkResult:
    module_scope: Scope
    defs: list[DefRecord] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    env_subscripts: list[EnvRecord] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    main_guards: list[GuardRecord] = field(default_factory=list)
    classes: dict[str, Scope] = field(default_factory=dict)
    exports: tuple[str, ...] | None = None
    guards: list[rules.RuleRecord] = field(default_factory=list)
    fields: list[rules.FieldRecord] = field(default_factory=list)
    # module-level names bound to one string literal (None: bound otherwise, or more than once)
    constants: dict[str, str | None] = field(default_factory=dict)
