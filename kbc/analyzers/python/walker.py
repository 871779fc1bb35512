"""One pass over a parsed module that records definitions, bindings, calls, guards
and class fields.

The walk rides on libcst's code generator: ``Module._codegen`` visits every
node in source order and hands each token to the state object. Counting the
newlines of those tokens gives exact line numbers for the price of one
traversal, which is several times cheaper than ``PositionProvider`` plus a
visitor. ``CodegenState`` is libcst's internal codegen hook; the line-span
tests lock its behaviour.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import libcst as cst
from libcst._nodes.internal import CodegenState

from kbc.analyzers.modules import resolve_relative
from kbc.analyzers.python import rules
from kbc.analyzers.python.records import CallRecord, DefRecord, EnvRecord, GuardRecord, WalkResult
from kbc.analyzers.python.scope import ALIAS, GLOBAL, INSTANCE, INSTANCE_OF, LOCAL, REF, Binding, Scope
from kbc.analyzers.python.syntax import annotation_parts, dotted, literal_strings, string_value
from kbc.domain.models import Import


class FactsWalker(CodegenState):
    """Collects the raw material of a file's facts during code generation."""

    def __init__(self, module: cst.Module, module_name: str, is_package: bool) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.module_name = module_name
        self.is_package = is_package
        self.line = 1
        self.last_line = 1
        self.scope = Scope("module", module_name, None)
        self.result = WalkResult(self.scope)
        self._bodies: dict[int, DefRecord] = {}
        self._open_defs: dict[int, DefRecord] = {}
        self._main_guards: dict[int, GuardRecord] = {}
        self._deferring: dict[int, str] = {}  # id of an if's body -> what runs it (Import.deferred)
        self._deferred: list[str] = []  # the bodies entered of those
        self._rule_bodies: dict[int, rules.RuleRecord] = {}
        self._capture: list[str] | None = None  # tokens of the newest guard's test, while written
        self._field_keys: set[tuple[str, str]] = set()
        self._before: dict[type[cst.CSTNode], Callable[[Any], None]] = {
            cst.FunctionDef: self._enter_def,
            cst.ClassDef: self._enter_def,
            cst.IndentedBlock: self._enter_body,
            cst.SimpleStatementSuite: self._enter_body,
            cst.Import: self._import,
            cst.ImportFrom: self._import_from,
            cst.Assign: self._assign,
            cst.AnnAssign: self._ann_assign,
            cst.AugAssign: self._aug_assign,
            cst.For: self._for,
            cst.CompFor: self._comp_for,
            cst.WithItem: self._with_item,
            cst.ExceptHandler: self._except,
            cst.NamedExpr: self._named_expr,
            cst.Global: self._global,
            cst.Call: self._call,
            cst.Subscript: self._subscript,
            cst.Comparison: self._comparison,
            cst.If: self._if,
            cst.While: self._branch,
            cst.Assert: self._assert,
        }
        self._after: dict[type[cst.CSTNode], Callable[[Any], None]] = {
            cst.FunctionDef: self._leave_def,
            cst.ClassDef: self._leave_def,
            cst.IndentedBlock: self._leave_body,
            cst.SimpleStatementSuite: self._leave_body,
            cst.If: self._leave_if,
            cst.Assert: self._leave_assert,
        }

    # -- codegen hooks -------------------------------------------------------

    def add_indent_tokens(self) -> None:
        pass

    def add_token(self, value: str) -> None:
        if self._capture is not None:
            self._capture.append(value)
        newlines = value.count("\n")
        if newlines:
            self.line += newlines
            if not value.isspace():
                self.last_line = self.line
        elif value and not value.isspace():
            self.last_line = self.line

    def pop_trailing_newline(self) -> None:
        pass

    def before_codegen(self, node: cst.CSTNode) -> None:
        handler = self._before.get(type(node))
        if handler is not None:
            handler(node)

    def after_codegen(self, node: cst.CSTNode) -> None:
        handler = self._after.get(type(node))
        if handler is not None:
            handler(node)

    # -- definitions and scopes ---------------------------------------------

    def _enter_def(self, node: cst.FunctionDef | cst.ClassDef) -> None:
        outer = self.scope
        name = node.name.value
        if isinstance(node, cst.ClassDef):
            kind = "class"
        else:
            kind = "method" if outer.kind == "class" else "function"
        record = DefRecord(
            node=node,
            qname=f"{outer.qname}.{name}",
            kind=kind,
            outer=outer,
            start=self.line + len(node.leading_lines),
            in_function=self._in_function(outer),
        )
        outer.bind(name, Binding(REF, record.qname))
        self.result.defs.append(record)
        self._bodies[id(node.body)] = record
        self._open_defs[id(node)] = record

    @staticmethod
    def _in_function(scope: Scope | None) -> bool:
        while scope is not None:
            if scope.kind == "function":
                return True
            scope = scope.parent
        return False

    def _leave_def(self, node: cst.FunctionDef | cst.ClassDef) -> None:
        record = self._open_defs.pop(id(node))
        record.end = max(self.last_line, record.start)

    def _enter_body(self, node: cst.BaseSuite) -> None:
        if id(node) in self._deferring:
            self._deferred.append(self._deferring[id(node)])
        if self._capture is not None:  # the header of the newest guard is written
            self.result.guards[-1].written = rules.header_test(self._capture)
            self._capture = None
        record = self._bodies.get(id(node))
        if record is None:
            return
        if isinstance(record.node, cst.ClassDef):
            inner = Scope("class", record.qname, self.scope)
            self.result.classes[record.qname] = inner
        else:
            inner = Scope("function", record.qname, self.scope)
            self._bind_params(record, record.node, inner)
        record.inner = inner
        self.scope = inner

    def _leave_body(self, node: cst.BaseSuite) -> None:
        if self._deferring.pop(id(node), None) is not None:
            self._deferred.pop()
        record = self._bodies.pop(id(node), None)
        if record is not None and record.inner is not None and record.inner.parent is not None:
            self.scope = record.inner.parent
        if self._rule_bodies:
            rule = self._rule_bodies.pop(id(node), None)
            if rule is not None:
                rule.end = self.last_line

    def _bind_params(self, record: DefRecord, node: cst.FunctionDef, inner: Scope) -> None:
        params = node.params
        ordered = [*params.posonly_params, *params.params]
        every = [*ordered, *params.kwonly_params]
        if isinstance(params.star_arg, cst.Param):
            every.append(params.star_arg)
        if params.star_kwarg is not None:
            every.append(params.star_kwarg)
        decorators = {d[-1] for d in (dotted(x.decorator) for x in node.decorators) if d}
        first = ordered[0] if ordered else None
        owner = record.outer.qname
        for param in every:
            name = param.name.value
            if param is first and record.kind == "method" and "staticmethod" not in decorators:
                if "classmethod" in decorators or node.name.value == "__new__":
                    inner.bindings[name] = Binding(REF, owner)
                else:
                    inner.bindings[name] = Binding(INSTANCE, owner)
                continue
            parts = annotation_parts(param.annotation.annotation) if param.annotation else None
            if parts:
                inner.bindings[name] = Binding(INSTANCE_OF, parts=parts, scope=record.outer)
            else:
                inner.bindings[name] = Binding(LOCAL)

    # -- bindings ------------------------------------------------------------

    def _value_binding(self, value: cst.BaseExpression | None) -> Binding:
        if value is None:
            return Binding(LOCAL)
        parts = dotted(value)
        if parts is not None:
            return Binding(ALIAS, parts=parts, scope=self.scope)
        if isinstance(value, cst.Call):
            func = dotted(value.func)
            if func is not None:
                return Binding(INSTANCE_OF, parts=func, scope=self.scope)
        return Binding(LOCAL)

    def _bind_target(self, target: cst.BaseExpression, binding: Binding) -> None:
        if isinstance(target, cst.Name):
            self.scope.bind(target.value, binding)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                inner = element.value
                self._bind_target(inner, Binding(LOCAL))
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, Binding(LOCAL))
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            holder = self.scope.bindings.get(target.value.value)
            if holder is not None and holder.kind == INSTANCE:
                class_scope = self.result.classes.get(holder.value)
                if class_scope is not None:
                    previous = class_scope.attrs.get(target.attr.value)
                    if previous is None or previous.kind == LOCAL:
                        class_scope.attrs[target.attr.value] = binding

    def _assign(self, node: cst.Assign) -> None:
        binding = self._value_binding(node.value)
        for target in node.targets:
            self._bind_target(target.target, binding)
            self._note_exports(target.target, node.value, extend=False)
            self._field(target.target, None, node.value)
            self._constant(target.target, node.value)

    def _constant(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        """A module-level name bound once to a string literal is a constant; any other binding
        of it (another value, an augmented assignment, a second assignment) makes it none."""
        if self.scope.kind != "module" or not isinstance(target, cst.Name):
            return
        literal = string_value(value) if value is not None else None
        name = target.value
        if name in self.result.constants and self.result.constants[name] != literal:
            literal = None
        self.result.constants[name] = literal

    def _ann_assign(self, node: cst.AnnAssign) -> None:
        parts = annotation_parts(node.annotation.annotation)
        if node.value is not None and len(dotted(node.value) or ()) > 1:
            # `env: Mapping[str, str] = os.environ`: the attribute it names says more than the type
            binding = self._value_binding(node.value)
        elif parts:
            binding = Binding(INSTANCE_OF, parts=parts, scope=self.scope)
        else:
            binding = self._value_binding(node.value)
        self._bind_target(node.target, binding)
        if node.value is not None:
            self._note_exports(node.target, node.value, extend=False)
        self._field(node.target, node.annotation.annotation, node.value)
        self._constant(node.target, node.value)

    def _field(
        self,
        target: cst.BaseExpression,
        annotation: cst.BaseExpression | None,
        value: cst.BaseExpression | None,
    ) -> None:
        key = rules.field_key(self.scope, target)
        if key is not None and key not in self._field_keys:
            self._field_keys.add(key)
            self.result.fields.append(rules.FieldRecord(*key, self.line, annotation, value))

    def _aug_assign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name) and node.target.value not in self.scope.bindings:
            self.scope.bind(node.target.value, Binding(LOCAL))
        self._constant(node.target, None)
        if isinstance(node.operator, cst.AddAssign):
            self._note_exports(node.target, node.value, extend=True)

    def _note_exports(self, target: cst.BaseExpression, value: cst.BaseExpression, *, extend: bool) -> None:
        if self.scope.kind != "module" or not isinstance(target, cst.Name):
            return
        if target.value != "__all__":
            return
        names = literal_strings(value)
        if names is None:
            return
        current = self.result.exports if extend and self.result.exports else ()
        self.result.exports = current + names

    def _for(self, node: cst.For) -> None:
        self._bind_target(node.target, Binding(LOCAL))

    def _comp_for(self, node: cst.CompFor) -> None:
        self._bind_target(node.target, Binding(LOCAL))

    def _with_item(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            target = node.asname.name
            self._bind_target(
                target, self._value_binding(node.item) if isinstance(node.item, cst.Call) else Binding(LOCAL)
            )

    def _except(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind_target(node.name.name, Binding(LOCAL))

    def _named_expr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, self._value_binding(node.value))

    def _global(self, node: cst.Global) -> None:
        if self.scope.kind == "function":
            for item in node.names:
                self.scope.bindings[item.name.value] = Binding(GLOBAL)

    # -- imports -------------------------------------------------------------

    def _deferral(self) -> str:
        """When an import made here runs (:attr:`Import.deferred`)."""
        if self._deferred:
            return self._deferred[-1]
        scope: Scope | None = self.scope
        while scope is not None:
            if scope.kind == "function":
                return "function"
            scope = scope.parent
        return ""

    def _import(self, node: cst.Import) -> None:
        for alias in node.names:
            parts = dotted(alias.name) or ()
            full = ".".join(parts)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
                self.scope.bind(local, Binding(REF, full))
            else:
                local = parts[0] if parts else ""
                self.scope.bind(local, Binding(REF, local))
            self.result.imports.append(Import(self.line, full, "", local, 0, deferred=self._deferral()))

    def _import_from(self, node: cst.ImportFrom) -> None:
        level = len(node.relative)
        written = ".".join(dotted(node.module) or ()) if node.module is not None else ""
        module = resolve_relative(self.module_name, self.is_package, level, written)
        if isinstance(node.names, cst.ImportStar):
            self.result.imports.append(Import(self.line, module, "*", "", level, deferred=self._deferral()))
            return
        for alias in node.names:
            name = (
                alias.name.value if isinstance(alias.name, cst.Name) else ".".join(dotted(alias.name) or ())
            )
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            if module:
                self.scope.bind(local, Binding(REF, f"{module}.{name}"))
            else:
                self.scope.bind(local, Binding(LOCAL))
            self.result.imports.append(
                Import(self.line, module, name, local, level, deferred=self._deferral())
            )

    # -- uses ----------------------------------------------------------------

    def _call(self, node: cst.Call) -> None:
        self.result.calls.append(CallRecord(node, dotted(node.func), self.scope, self.line))

    def _subscript(self, node: cst.Subscript) -> None:
        """``mapping[KEY]`` with a name or a string for its key: ``os.environ[...]``, or any
        mapping that may be an alias of it (``self._environ["TERM"]``; the detector resolves)."""
        value = node.value
        if isinstance(value, (cst.Name, cst.Attribute)) and len(node.slice) == 1:
            parts = dotted(value)
            first = node.slice[0].slice
            key = first.value if isinstance(first, cst.Index) else None
            if parts and (parts[-1] in ("environ", "environb") or _named_key(key)):
                self.result.env_subscripts.append(EnvRecord(parts, key, self.scope, self.line))

    def _comparison(self, node: cst.Comparison) -> None:
        """``"KEY" in mapping`` (or ``not in``): a read of an environment variable when the
        mapping resolves to ``os.environ``."""
        left = node.left
        for target in node.comparisons:
            if (
                isinstance(target.operator, (cst.In, cst.NotIn))
                and isinstance(target.comparator, (cst.Name, cst.Attribute))
                and _named_key(left)
            ):
                parts = dotted(target.comparator)
                if parts:
                    self.result.env_subscripts.append(EnvRecord(parts, left, self.scope, self.line))
            left = target.comparator

    def _if(self, node: cst.If) -> None:
        if _type_checking(node.test):
            self._deferring[id(node.body)] = "type_checking"
        elif rules.is_main_guard(node.test):
            self._deferring[id(node.body)] = "main"
        if self.scope.kind == "module" and rules.is_main_guard(node.test):
            guard = GuardRecord(self.line + len(node.leading_lines))
            self._main_guards[id(node)] = guard
            self.result.main_guards.append(guard)
        self._branch(node)

    def _branch(self, node: cst.If | cst.While) -> None:
        rule = rules.branch_rule(
            node.test,
            node.body,
            self.scope.qname,
            self.line + len(node.leading_lines),
            conditional=isinstance(node, cst.If),
        )
        if rule is not None:
            self.result.guards.append(rule)
            self._rule_bodies[id(node.body)] = rule
            self._capture = []

    def _assert(self, node: cst.Assert) -> None:
        self.result.guards.append(rules.assert_rule(node, self.scope.qname, self.line))
        if node.msg is None:
            self._capture = []

    def _leave_assert(self, node: cst.Assert) -> None:
        rule = self.result.guards[-1]  # an assert holds no statement: it is the newest guard
        rule.end = self.last_line
        if self._capture is not None:
            rule.written = rules.assert_test(self._capture)
            self._capture = None

    def _leave_if(self, node: cst.If) -> None:
        guard = self._main_guards.pop(id(node), None)
        if guard is not None:
            guard.end = self.last_line


def walk(module: cst.Module, module_name: str, is_package: bool) -> WalkResult:
    walker = FactsWalker(module, module_name, is_package)
    module._codegen(walker)
    return walker.result


def _named_key(key: cst.BaseExpression | None) -> bool:
    """A key an environment read could name: a string literal or a name (a constant)."""
    return isinstance(key, (cst.SimpleString, cst.Name))


def _type_checking(test: cst.BaseExpression) -> bool:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``): a block no run executes."""
    parts = dotted(test) if isinstance(test, (cst.Name, cst.Attribute)) else None
    return parts is not None and bool(parts) and parts[-1] == "TYPE_CHECKING"
