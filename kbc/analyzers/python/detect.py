"""Entry points and integrations, read off resolved calls and decorators."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from kbc.analyzers.python import catalog
from kbc.analyzers.python.dispatch import Dispatch
from kbc.analyzers.python.records import DefRecord, WalkResult
from kbc.analyzers.python.scope import REF, Resolver, Scope
from kbc.analyzers.python.syntax import dotted, keyword_arg, name_like, positional_arg, squash, string_value
from kbc.domain.models import Call, EntryPoint, Integration


@dataclass(frozen=True, slots=True)
class ResolvedCall:
    node: cst.Call
    call: Call
    scope: Scope


def _command_name(call: cst.Call | None, default: str) -> str:
    if call is not None:
        name = string_value(keyword_arg(call, "name")) or string_value(positional_arg(call, 0))
        if name:
            return name
    return default


def _route_detail(call: cst.Call, verb: str) -> str:
    if verb != "route":
        return verb.upper()
    methods = keyword_arg(call, "methods")
    if isinstance(methods, (cst.List, cst.Tuple, cst.Set)):
        names = [string_value(e.value) for e in methods.elements if isinstance(e, cst.Element)]
        return ",".join(sorted(n.upper() for n in names if n)) or "GET"
    return "GET"


class Detector:
    """Finds entry points and integrations in one analyzed file."""

    def __init__(
        self, walk: WalkResult, resolver: Resolver, path: str, module: str, code: Callable[[cst.CSTNode], str]
    ) -> None:
        self.walk = walk
        self.resolver = resolver
        self.path = path
        self.module = module
        self.code = code
        self.imported_tops = {imp.module.split(".")[0] for imp in walk.imports if imp.module}
        self.entry_points: list[EntryPoint] = []
        self.integrations: list[Integration] = []
        self.click_groups: set[str] = set()

    # -- decorators ---------------------------------------------------------

    def decorated(self, defs: list[DefRecord]) -> None:
        """Commands and routes declared by decorators on functions."""
        for record in defs:
            if not isinstance(record.node, cst.FunctionDef):
                continue
            for decorator in record.node.decorators:
                expr = decorator.decorator
                call = expr if isinstance(expr, cst.Call) else None
                parts = dotted(call.func if call is not None else expr)
                if not parts:
                    continue
                resolved = self.resolver.resolve(parts, record.outer)
                target = resolved.qname if resolved else ".".join(parts)
                self._decorator(record, call, parts, target)

    def _decorator(
        self, record: DefRecord, call: cst.Call | None, parts: tuple[str, ...], target: str
    ) -> None:
        name = record.node.name.value
        line = record.start
        base, _, attr = target.rpartition(".")
        if target in catalog.CLICK_COMMANDS:
            if attr == "group":
                self.click_groups.add(record.qname)
            self._add("click", _command_name(call, name.replace("_", "-")), record.qname, line)
            return
        if attr in ("command", "group") and base in self.click_groups:
            if attr == "group":
                self.click_groups.add(record.qname)
            self._add(
                "click", _command_name(call, name.replace("_", "-")), record.qname, line, f"group {base}"
            )
            return
        if base in catalog.TYPER_APPS and attr in ("command", "callback"):
            self._add("typer", _command_name(call, name.replace("_", "-")), record.qname, line)
            return
        route_call = call is not None and (attr == "route" or attr in catalog.HTTP_VERBS)
        if route_call and call is not None:
            route = string_value(positional_arg(call, 0)) or string_value(keyword_arg(call, "path"))
            if route is None and attr != "route":
                return
            framework = self._framework(base, attr)
            if framework:
                self._add(framework, route or "/", record.qname, line, _route_detail(call, attr))
            return
        if attr in ("command", "group") and len(parts) > 1:
            if "typer" in self.imported_tops and "click" not in self.imported_tops:
                self._add("typer", _command_name(call, name.replace("_", "-")), record.qname, line)
            elif "click" in self.imported_tops:
                self._add(
                    "click", _command_name(call, name.replace("_", "-")), record.qname, line, f"group {base}"
                )

    def _framework(self, base: str, attr: str) -> str:
        if base in catalog.FLASK_APPS:
            return "flask_route"
        if base in catalog.FASTAPI_APPS:
            return "fastapi_route"
        if "fastapi" in self.imported_tops and attr != "route":
            return "fastapi_route"
        if "flask" in self.imported_tops or "quart" in self.imported_tops:
            return "flask_route"
        return ""

    # -- calls --------------------------------------------------------------

    def calls(self, resolved: list[ResolvedCall]) -> None:
        uses_argparse = "argparse" in self.imported_tops
        for item in resolved:
            target, node, call = item.call.target, item.node, item.call
            kind = catalog.CLIENTS.get(target)
            if kind is not None:
                name, detail = target, ""
                if target in ("boto3.client", "boto3.resource"):
                    service = string_value(positional_arg(node, 0)) or string_value(
                        keyword_arg(node, "service_name")
                    )
                    if service:
                        kind = catalog.BOTO3_SERVICES.get(service, kind)
                        detail = f"service {service}"
                self._integrate(kind, name, detail, call=call)
            elif target in catalog.ENV_READERS:
                self._env(positional_arg(node, 0), call, item.scope)
            elif target == "argparse.ArgumentParser":
                prog = string_value(keyword_arg(node, "prog"))
                self._add("argparse", prog or call.caller.rpartition(".")[2], call.caller, call.line)
            elif uses_argparse and call.text.endswith(".add_parser"):
                sub = string_value(positional_arg(node, 0))
                if sub:
                    self._add("argparse", sub, call.caller, call.line, "subcommand")
            elif target == "typer.run":
                func = positional_arg(node, 0)
                parts = dotted(func) if func is not None else None
                self._add(
                    "typer", parts[-1] if parts else self.module, self._qualify(parts, call.caller), call.line
                )
            elif target in catalog.DJANGO_ROUTES:
                self._django(node, call)
            elif target in catalog.SETUP_CALLS:
                self._setup(node, call)

    def _qualify(self, parts: tuple[str, ...] | None, fallback: str) -> str:
        if not parts:
            return fallback
        resolved = self.resolver.resolve(parts, self.walk.module_scope)
        return resolved.qname if resolved else ".".join(parts)

    def _django(self, node: cst.Call, call: Call) -> None:
        route = string_value(positional_arg(node, 0))
        view = positional_arg(node, 1)
        if route is None or view is None:
            return
        if isinstance(view, cst.Call):  # SomeView.as_view() or include("app.urls")
            head = dotted(view.func)
            if head and head[-1] == "include":
                included = string_value(positional_arg(view, 0))
                self._add(
                    "django_route", route, included or squash(self.code(view), 80), call.line, "include"
                )
                return
            view = view.func.value if isinstance(view.func, cst.Attribute) else view.func
        parts = dotted(view)
        target = self._qualify(parts, call.caller) if parts else squash(self.code(view), 80)
        self._add("django_route", route, target, call.line)

    def _setup(self, node: cst.Call, call: Call) -> None:
        entry_points = keyword_arg(node, "entry_points")
        if not isinstance(entry_points, cst.Dict):
            return
        for element in entry_points.elements:
            if not isinstance(element, cst.DictElement):
                continue
            group = string_value(element.key)
            if group not in ("console_scripts", "gui_scripts"):
                continue
            values = element.value
            if not isinstance(values, (cst.List, cst.Tuple)):
                continue
            for item in values.elements:
                spec = string_value(item.value) if isinstance(item, cst.Element) else None
                if spec and "=" in spec:
                    script, _, ref = spec.partition("=")
                    kind = "console_script" if group == "console_scripts" else "gui_script"
                    self._add(kind, script.strip(), ref.strip().replace(":", "."), call.line, "setup.py")

    def env_subscripts(self) -> None:
        for record in self.walk.env_subscripts:
            resolved = self.resolver.resolve(record.parts, record.scope)
            if resolved is None or resolved.qname not in catalog.ENV_MAPPINGS:
                continue
            call = Call(record.scope.qname, record.line, ".".join(record.parts), resolved.qname)
            self._env(record.key, call, record.scope)

    def main_guards(self, calls: list[Call]) -> None:
        for guard in self.walk.main_guards:
            inside = [
                c
                for c in calls
                if guard.start <= c.line <= guard.end and c.target and not c.target.startswith("builtins.")
            ]
            target = inside[0].target if inside else self.module
            self._add("main_guard", self.module, target, guard.start)

    def dispatched(self, dispatches: list[Dispatch]) -> None:
        """Each sub-command the module dispatches (:mod:`kbc.analyzers.python.dispatch`) runs
        the function it selects, not the function that builds its parser: an entry of the
        sub-parser's name is replaced, a sub-command known only by its dispatch added."""
        kind = "argparse" if "argparse" in self.imported_tops else "subcommand"
        names = {word for d in dispatches for word in d.name.split()}
        self.entry_points = [
            e
            for e in self.entry_points
            if not (e.kind == "argparse" and e.detail == "subcommand" and e.name in names)
        ]
        for dispatch in dispatches:
            self._add(kind, dispatch.name, dispatch.target, dispatch.line, f"subcommand {dispatch.how}")

    # -- recording ----------------------------------------------------------

    def _env(self, key: cst.BaseExpression | None, call: Call, scope: Scope) -> None:
        """An environment variable, when its name is a string the code passes: a literal, or a
        constant (this module's, or one imported from the repository, named by link). A
        variable, an attribute or a call is not a name: nothing is reported for it."""
        name = string_value(key)
        if name is not None:
            if name_like(name):
                self._integrate("env_var", name, call=call)
        elif isinstance(key, cst.Name):
            constant = self._constant(key.value, scope)
            if constant is not None:
                self._integrate("env_var", *constant, call=call)

    def _constant(self, name: str, scope: Scope) -> tuple[str, str] | None:
        """(the value, where it came from) of the constant ``name`` read in ``scope``, or
        ("", "constant <qname>") for one imported (link looks its value up), or None."""
        holder = self.resolver.binder(name, scope)
        if holder is None or holder.kind != "module" or name not in holder.bindings:
            return None  # unbound, or a local or a parameter: a variable
        if holder.bindings[name].kind == REF:
            resolved = self.resolver.resolve((name,), holder)
            return ("", f"constant {resolved.qname}") if resolved is not None else None
        value = self.walk.constants.get(name)
        return (value, f"constant {name}") if value and name_like(value) else None

    def _integrate(self, kind: str, name: str, detail: str = "", *, call: Call) -> None:
        self.integrations.append(Integration(kind, name, self.path, call.line, call.caller, detail))

    def _add(self, kind: str, name: str, target: str, line: int, detail: str = "") -> None:
        self.entry_points.append(EntryPoint(kind, name, target, self.path, line, detail))
