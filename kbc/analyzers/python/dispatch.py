"""Where a command-line tool dispatches its sub-commands: the function each one runs.

Four ways tools say it, each read off one module:

- a sub-parser's defaults: ``p = subparsers.add_parser("install")`` then
  ``p.set_defaults(func=cmd_install)`` (or chained, or a ``lambda`` that calls the function);
- a registration: ``parser.add_command("list", ["l"], "list environments", list_env)``, a call
  of a method named ``add_command``, ``register_command`` or ``add_subcommand`` with the
  command's name first and a function of the product among its arguments;
- a dispatch table: a dict literal of two or more string keys, each mapped to a function of the
  product (``{"show": cmd_show, "hist": functools.partial(cmd_hist, args)}``), in a module
  that reads the command line (below) or bound to a name like a command's (``CLI_TASKS``,
  ``COMMANDS``);
- a chain on the command: ``if args.command == "install": return install(...)`` ``elif ...``
  (or ``match args.command:`` with ``case "install":``), two branches or more comparing one
  subject to a string; in a module that builds sub-parsers, or in a module that reads the
  command line (it imports argparse, optparse or getopt, reads ``argv``, or is named ``cli``,
  ``main``, ``__main__``, ``cmdline``, ``commands``...) on a subject named for a command
  (``command``, ``cmd``, ``subcmd``, ``action``; not ``root_cmd`` of a parser of a tool's
  output in another module). A chain inside a branch names its sub-commands after the
  branch's (``interpreter list``).

A branch runs, of the calls it makes itself (not those of a nested chain), the product's
function named like the command (``install-all`` → ``install_all``, ``cmd_install_all``),
else the call it returns, else its first; a class it calls (``ExitCode(0)``, an exception) is
none of them. Only calls and names that resolve to the product's own package count
(``pipx.commands.install``), never the standard library's or a builtin.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from kbc.analyzers.python.records import WalkResult
from kbc.analyzers.python.scope import Resolver, Scope
from kbc.analyzers.python.syntax import dotted, keyword_arg, positional_arg, string_value

MIN_BRANCHES = 2
_COMMAND_SUBJECT = re.compile(r"(command|cmd)", re.IGNORECASE)
_ACTION_SUBJECT = re.compile(r"action", re.IGNORECASE)  # a command, where arguments are parsed
_TABLE_NAME = re.compile(r"(command|cmd|cli|task|action)", re.IGNORECASE)
_NAMED_CHAIN = re.compile(
    r"(?:command|cmd)\w*\s*==\s*['\"]|match\s+[\w.]*(?:command|cmd)\w*\s*:"
    r"|(?:command|cmd|cli|task)\w*\s*=\s*\{|\.(?:add|register)_?(?:sub)?(?:command|cmd)\(",
    re.IGNORECASE,
)
PARSERS = frozenset({"argparse", "optparse", "getopt"})
_ARGV = re.compile(r"\bargv\b")
_COMMAND_MODULE = re.compile(r"^(cli|cmdline|command_line|commands?|console|main|__main__)$")
_REGISTER = re.compile(r"^(add|register)_?(sub)?(command|cmd)$")
_PREFIXES = ("cmd_", "do_", "command_", "run_")
_SUFFIXES = ("_command", "_cmd", "_main", "_f")

_LineOf = Callable[[cst.CSTNode], int]


@dataclass(frozen=True, slots=True)
class Dispatch:
    name: str  # the sub-command
    target: str  # the function it runs
    line: int  # where it is dispatched
    how: str  # set_defaults | registered | table | chain


@dataclass(frozen=True, slots=True)
class Found:
    node: cst.Call
    target: str
    line: int
    scope: Scope


def worth_reading(source: str, imported_tops: set[str]) -> bool:
    """Whether a module may dispatch sub-commands: it uses argparse, or compares a command."""
    return bool(PARSERS & imported_tops) or bool(_NAMED_CHAIN.search(source))


def reads_command_line(source: str, imported_tops: set[str], module_name: str) -> bool:
    """Whether a module reads the command line: it imports a parser of arguments, reads
    ``argv``, or is named as a program's front (``cli``, ``main``, ``__main__``, ...)."""
    last = module_name.rpartition(".")[2]
    return bool(PARSERS & imported_tops) or bool(_ARGV.search(source)) or bool(_COMMAND_MODULE.match(last))


def _stem(name: str) -> str:
    name = name.lstrip("_").lower()
    for prefix in _PREFIXES:
        name = name.removeprefix(prefix)
    for suffix in _SUFFIXES:
        name = name.removesuffix(suffix)
    return name


def _normal(command: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", command.lower()).strip("_")


class _Reader(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, reading: DispatchReader) -> None:
        super().__init__()
        self.reading = reading
        self.scopes: list[Scope] = [reading.walk.module_scope]
        self.inside_chain: set[int] = set()  # ids of If nodes already read as part of a chain
        self.named_tables: set[int] = set()  # ids of dicts bound to a name like CLI_TASKS

    def _line(self, node: cst.CSTNode) -> int:
        return int(self.get_metadata(PositionProvider, node).start.line)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        record = self.reading.defs.get(id(node))
        self.scopes.append(
            record.inner if record is not None and record.inner is not None else self.scopes[-1]
        )

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()

    def visit_Dict(self, node: cst.Dict) -> None:
        self.reading.table(node, self.scopes[-1], self._line, id(node) in self.named_tables)

    def visit_Assign(self, node: cst.Assign) -> None:
        names = [t.target.value for t in node.targets if isinstance(t.target, cst.Name)]
        if isinstance(node.value, cst.Dict) and any(_TABLE_NAME.search(n) for n in names):
            self.named_tables.add(id(node.value))

    def visit_If(self, node: cst.If) -> None:
        if id(node) not in self.inside_chain:
            self.reading.chain(node, "", self._line, self.inside_chain)

    def visit_Match(self, node: cst.Match) -> None:
        self.reading.match(node, "", self._line)


class DispatchReader:
    """Reads one module's dispatches (see the module docstring)."""

    def __init__(
        self,
        module: cst.Module,
        walk: WalkResult,
        resolver: Resolver,
        module_name: str,
        calls: Sequence[Found],
        source: str = "",
    ) -> None:
        self.module = module
        self.walk = walk
        self.resolver = resolver
        self.package = module_name.split(".")[0]
        self.calls = {id(c.node): c for c in calls}
        self.defs = {id(r.node): r for r in walk.defs}
        self.found: list[Dispatch] = []
        self.parser_names: set[str] = set()
        tops = {i.module.split(".")[0] for i in walk.imports if i.module}
        self.parses = reads_command_line(source, tops, module_name)

    # -- the product's functions ---------------------------------------------

    def _product(self, target: str) -> bool:
        return target.split(".")[0] == self.package and not target.startswith("builtins.")

    def _function(self, node: cst.BaseExpression, scope: Scope) -> str:
        """The product function an expression names (a name, a lambda calling one, or
        ``functools.partial(cmd_show, args)``)."""
        if isinstance(node, cst.Call):
            found = self.calls.get(id(node))
            first = positional_arg(node, 0)
            partial = found is not None and found.target == "functools.partial"
            return self._function(first, scope) if partial and first is not None else ""
        if isinstance(node, cst.Lambda):
            body = node.body
            found = self.calls.get(id(body)) if isinstance(body, cst.Call) else None
            return found.target if found is not None and self._product(found.target) else ""
        parts = dotted(node)
        if parts is None:
            return ""
        resolved = self.resolver.resolve(parts, scope)
        return resolved.qname if resolved is not None and self._product(resolved.qname) else ""

    # -- sub-parsers' defaults -----------------------------------------------

    def defaults(self, ordered: Sequence[Found]) -> None:
        """``add_parser("name")`` bound to a variable (or chained), then ``set_defaults``."""
        bound: dict[tuple[str, str], list[tuple[int, str]]] = {}  # (scope, variable) -> (line, name)
        named: dict[int, str] = {}  # id of an add_parser call -> its name
        for found in ordered:
            func = found.node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "add_parser":
                name = string_value(positional_arg(found.node, 0))
                if name:
                    named[id(found.node)] = name
                    self.parser_names.add(name)
        for target, value in _assignments(self.module):
            if isinstance(value, cst.Call) and id(value) in named and isinstance(target, cst.Name):
                found = self.calls[id(value)]
                bound.setdefault((found.scope.qname, target.value), []).append((found.line, named[id(value)]))
        for found in ordered:
            func = found.node.func
            if isinstance(func, cst.Attribute) and _REGISTER.match(func.attr.value):
                self._registered(found)
            if not (isinstance(func, cst.Attribute) and func.attr.value == "set_defaults"):
                continue
            owner = func.value
            name = ""
            if isinstance(owner, cst.Call) and id(owner) in named:
                name = named[id(owner)]
            elif isinstance(owner, cst.Name):
                before = [b for b in bound.get((found.scope.qname, owner.value), []) if b[0] <= found.line]
                name = max(before)[1] if before else ""
            given = keyword_arg(found.node, "func") or _first_keyword(found.node)
            runs = self._function(given, found.scope) if name and given is not None else ""
            if runs:
                self.found.append(Dispatch(name, runs, found.line, "set_defaults"))

    def _registered(self, found: Found) -> None:
        name = string_value(positional_arg(found.node, 0))
        for arg in found.node.args[1:] if name else ():
            runs = self._function(arg.value, found.scope)
            if runs:
                self.found.append(Dispatch(name or "", runs, found.line, "registered"))
                return

    # -- dispatch tables -------------------------------------------------------

    def table(self, node: cst.Dict, scope: Scope, line_of: _LineOf, named: bool) -> None:
        if not named and not self.parses:
            return
        entries: list[tuple[str, str, int]] = []
        for element in node.elements:
            if not isinstance(element, cst.DictElement):
                return
            key = string_value(element.key)
            target = self._function(element.value, scope) if key else ""
            if not key or not target:
                return
            entries.append((key, target, line_of(element)))
        if len(entries) >= MIN_BRANCHES:
            self.found.extend(Dispatch(k, t, line, "table") for k, t, line in entries)

    # -- chains on the command -------------------------------------------------

    def _command_subject(self, subject: str) -> bool:
        last = subject.rpartition(".")[2]
        named = _COMMAND_SUBJECT.search(last) or _ACTION_SUBJECT.search(last)
        return bool(self.parser_names) or (self.parses and bool(named))

    def chain(self, node: cst.If, prefix: str, line_of: _LineOf, seen: set[int]) -> bool:
        """Read the chain that starts at ``node``; whether it is one on the command."""
        branches: list[tuple[str, cst.BaseSuite, int]] = []
        subjects: set[str] = set()
        current: cst.If | cst.Else | None = node
        while isinstance(current, cst.If):
            seen.add(id(current))
            compared = _compared(current.test)
            if compared is not None:
                subjects.add(compared[0])
                branches.append((compared[1], current.body, line_of(current)))
            current = current.orelse
        if len(branches) < MIN_BRANCHES or len(subjects) != 1 or not self._command_subject(subjects.pop()):
            return False
        for command, body, line in branches:
            self._branch(f"{prefix}{command}", body, line, line_of, seen)
        return True

    def match(self, node: cst.Match, prefix: str, line_of: _LineOf) -> None:
        subject = dotted(node.subject)
        if subject is None or not self._command_subject(".".join(subject)):
            return
        cases = [
            (string_value(c.pattern.value), c) for c in node.cases if isinstance(c.pattern, cst.MatchValue)
        ]
        named = [(v, c) for v, c in cases if v]
        if len(named) < MIN_BRANCHES:
            return
        for command, case in named:
            self._branch(f"{prefix}{command}", case.body, line_of(case), line_of, set())

    def _branch(self, command: str, body: cst.BaseSuite, line: int, line_of: _LineOf, seen: set[int]) -> None:
        calls: list[Found] = []
        returned: list[Found] = []

        def gather(suite: cst.CSTNode) -> None:
            for statement, call, in_return in _own_calls(suite):
                if isinstance(statement, cst.If):
                    if not self.chain(statement, f"{command} ", line_of, seen):
                        gather(statement.body)  # a plain `if` of the branch: its calls are the branch's
                        if statement.orelse is not None:
                            gather(statement.orelse)
                    continue
                found = self.calls.get(id(call)) if call is not None else None
                if found is not None and self._product(found.target) and not _made(found.target):
                    calls.append(found)
                    if in_return:
                        returned.append(found)

        gather(body)
        if not calls:
            return
        stem = _normal(command.rpartition(" ")[2])
        alike = [c for c in calls if _stem(c.target.rpartition(".")[2]) == stem]
        chosen = (alike or returned or calls)[0]
        self.found.append(Dispatch(command, chosen.target, line, "chain"))


def _made(target: str) -> bool:
    """A class called (``ExitCode(0)``, ``raise PipxError(...)``): what a branch makes, not runs."""
    return target.rpartition(".")[2][:1].isupper()


def _first_keyword(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None:
            return arg.value
    return None


def _compared(test: cst.BaseExpression) -> tuple[str, str] | None:
    """(subject, string) of ``subject == "string"`` (either side), else None."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return None
    left, right = test.left, target.comparator
    for subject, value in ((left, right), (right, left)):
        parts, text = dotted(subject), string_value(value)
        if parts is not None and text:
            return ".".join(parts), text
    return None


def _assignments(module: cst.Module) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(target, value) of every ``x = value`` and ``x: T = value`` of the module."""

    class Collect(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.found: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []

        def visit_Assign(self, node: cst.Assign) -> None:
            self.found.extend((t.target, node.value) for t in node.targets)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if node.value is not None:
                self.found.append((node.target, node.value))

    collect = Collect()
    module.visit(collect)
    return collect.found


def _own_calls(body: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, cst.Call | None, bool]]:
    """(statement, call, whether the call is what it returns) of a branch's calls, in order;
    a nested ``if`` comes as itself (its calls are its own branches'), definitions skipped."""

    class Calls(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.found: list[tuple[cst.CSTNode, cst.Call | None, bool]] = []
            self.returned: cst.BaseExpression | None = None

        def visit_If(self, node: cst.If) -> bool:
            self.found.append((node, None, False))
            return False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> None:
            self.returned = node.value

        def visit_Call(self, node: cst.Call) -> None:
            self.found.append((node, node, node is self.returned))

    calls = Calls()
    body.visit(calls)
    yield from calls.found


def read_dispatches(
    module: cst.Module,
    walk: WalkResult,
    resolver: Resolver,
    module_name: str,
    calls: Sequence[Found],
    source: str = "",
) -> list[Dispatch]:
    """The sub-commands one module (of text ``source``) dispatches, and the function each runs."""
    reader = DispatchReader(module, walk, resolver, module_name, calls, source)
    reader.defaults(sorted(calls, key=lambda c: c.line))
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    wrapper.visit(_Reader(reader))
    unique = {(d.name, d.target): d for d in reader.found}
    return sorted(unique.values(), key=lambda d: (d.line, d.name))
