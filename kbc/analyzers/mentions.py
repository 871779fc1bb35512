"""Code a Markdown document mentions, and whether the repository's facts still hold it.

Only backticked spans outside fenced blocks count: dotted names rooted in a package of the
repository must resolve to a module or a symbol (or a variable, field, re-export or
inherited member), and calls ``name()`` must name some symbol. ``kbc.analyzers.drift``
uses this for its ``missing_symbols`` reason.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from kbc.domain.models import FileFacts, Symbol

# -- mentions -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Mention:
    """A backticked span of a document's body."""

    text: str  # the span's content, stripped
    line: int  # 1-based line in the file


_FENCE = re.compile(r"^[ \t]*(?:>[ \t]*)*(`{3,}|~{3,})(.*)$")
_TICKS = re.compile(r"`+")


def code_spans(body: str, first_line: int = 1) -> list[Mention]:
    """Inline code spans of ``body``, outside fenced code blocks, in order.

    A span opens with a run of backticks and closes with the next run of the
    same length on the same line; an unmatched run is literal text.
    """
    spans: list[Mention] = []
    fence = ""
    for number, line in enumerate(body.splitlines(), first_line):
        match = _FENCE.match(line)
        if fence:
            if (match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
                    and not match.group(2).strip()):
                fence = ""
            continue
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = match.group(1)
            continue
        runs = list(_TICKS.finditer(line))
        k = 0
        while k < len(runs):
            opening = runs[k]
            closing = next((m for m in runs[k + 1:] if len(m.group()) == len(opening.group())), None)
            if closing is None:
                k += 1
                continue
            text = line[opening.end():closing.start()].strip()
            if text:
                spans.append(Mention(text, number))
            k = runs.index(closing) + 1
    return spans


# -- code names ---------------------------------------------------------------------

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = re.compile(rf"{_NAME}(?:\.{_NAME})*")
BUILTINS = frozenset(dir(builtins))
# A dotted span ending in one of these names a file ("kbc.toml"), not code.
FILE_SUFFIXES = frozenset({
    "py", "pyi", "pyc", "md", "rst", "txt", "toml", "cfg", "ini", "json", "jsonl", "yaml", "yml", "lock",
    "html", "css", "js", "ts", "csv", "sh", "log", "db", "sqlite", "env", "xml", "zip", "gz", "whl",
})
_MAX_ALIAS_HOPS = 8


class CodeIndex:
    """What the facts say exists: modules, symbols, class fields, import bindings.

    ``read_source(path)`` gives a Python file's text, read only when a mention
    names a module-level or class-level variable the facts do not record.
    """

    def __init__(self, facts: Iterable[FileFacts], read_source: Callable[[str], str] | None = None) -> None:
        self.read_source = read_source
        self.modules: set[str] = set()
        self.files: dict[str, FileFacts] = {}
        self.symbols: dict[str, Symbol] = {}
        self.symbol_module: dict[str, str] = {}
        self.fields: dict[str, set[str]] = {}
        self.bindings: dict[str, dict[str, tuple[str, bool]]] = {}  # module -> local -> (target, internal)
        self.star_imports: dict[str, list[str]] = {}  # module -> in-repo modules it star-imports
        self.external_names: set[str] = set()  # local names bound by imports of code outside the repository
        self._scopes: dict[str, dict[str, frozenset[str]]] = {}
        for file in facts:
            parts = file.module.split(".")
            self.modules.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
            self.files[file.module] = file
            for symbol in file.symbols:
                self.symbols[symbol.qname] = symbol
                self.symbol_module[symbol.qname] = file.module
            for field in file.fields:
                self.fields.setdefault(field.owner, set()).add(field.name)
            local_names = self.bindings.setdefault(file.module, {})
            for imp in file.imports:
                internal = imp.kind == "internal"
                if imp.name == "*":
                    if internal:
                        self.star_imports.setdefault(file.module, []).append(imp.module)
                    continue
                if not imp.alias:
                    continue
                if imp.name:
                    target = f"{imp.module}.{imp.name}"
                else:
                    target = imp.alias if imp.alias == imp.module.split(".")[0] else imp.module
                local_names[imp.alias] = (target, internal)
                if not internal:
                    self.external_names.add(imp.alias)
        self.modules.discard("")
        self.tops = frozenset(m.split(".")[0] for m in self.modules)
        self.names = frozenset(s.name for s in self.symbols.values())

    # -- rule (a): dotted names under a top-level package of the repository --------------

    def resolves(self, dotted: str, hops: int = 0) -> bool:
        """Whether ``dotted`` is a module, a symbol, or a name bound in one (field, variable, re-export)."""
        if dotted in self.modules or dotted in self.symbols:
            return True
        if hops > _MAX_ALIAS_HOPS:
            return True  # an import cycle: not something a document got wrong
        parts = dotted.split(".")
        end = next((e for e in range(len(parts) - 1, 0, -1) if ".".join(parts[:e]) in self.modules), 0)
        if not end:
            return False
        module, head, rest = ".".join(parts[:end]), parts[end], parts[end + 1:]
        qname = f"{module}.{head}"
        if qname in self.symbols:
            return self._member(qname, rest)
        binding = self.bindings.get(module, {}).get(head)
        if binding is not None:
            target, internal = binding
            return not internal or self.resolves(".".join([target, *rest]), hops + 1)
        if any(self.resolves(".".join([star, head, *rest]), hops + 1)
               for star in self.star_imports.get(module, ())):
            return True
        file = self.files.get(module)
        exports = file.exports if file is not None and file.exports else ()
        return (head in exports or f"{module}.__getattr__" in self.symbols
                or head in self._scope_names(module, ""))

    def _member(self, qname: str, rest: Sequence[str]) -> bool:
        if not rest:
            return True
        if self.symbols[qname].kind != "class":
            return True  # an attribute of a function's result or of the function: nothing to check against
        return self._class_has(qname, rest, set())

    def _class_has(self, cls: str, rest: Sequence[str], seen: set[str]) -> bool:
        if cls in seen:
            return False
        seen.add(cls)
        member = f"{cls}.{rest[0]}"
        if member in self.symbols:
            return self._member(member, rest[1:])
        module = self.symbol_module[cls]
        if rest[0] in self.fields.get(cls, ()) or rest[0] in self._scope_names(module, cls[len(module) + 1:]):
            return True  # a field or class variable: what it holds is not recorded
        for base in self.symbols[cls].bases:
            known = self.symbols.get(base)
            if known is None or known.kind != "class":
                if base not in ("object", "builtins.object"):
                    return True  # inherits from code outside the facts: its members are unknown
            elif self._class_has(base, rest, seen):
                return True
        return False

    def _scope_names(self, module: str, scope: str) -> frozenset[str]:
        file = self.files.get(module)
        if file is None or self.read_source is None:
            return frozenset()
        if file.path not in self._scopes:
            self._scopes[file.path] = scope_bindings(self.read_source(file.path))
        return self._scopes[file.path].get(scope, frozenset())

    # -- rule (b): calls ``name()`` and ``Name.method()`` ---------------------------------------

    def knows_call(self, name: str) -> bool:
        """Whether a called ``name`` (a last component) is a symbol, a builtin or an outside import."""
        return name in self.names or name in BUILTINS or name in self.external_names


def _target_names(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, (ast.Tuple, ast.List)):
        for element in node.elts:
            yield from _target_names(element)
    elif isinstance(node, ast.Starred):
        yield from _target_names(node.value)


def scope_bindings(source: str) -> dict[str, frozenset[str]]:
    """Names bound at module level ("") and in each class body ("Outer.Inner"), by any statement."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    found: dict[str, set[str]] = {}

    def visit(body: Sequence[ast.stmt], scope: str) -> None:
        names = found.setdefault(scope, set())
        for node in body:
            if isinstance(node, ast.ClassDef):
                names.add(node.name)
                visit(node.body, f"{scope}.{node.name}" if scope else node.name)
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(node.name)
                continue
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    names.update(_target_names(target))
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
                names.update(_target_names(node.target))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
            elif isinstance(alias := getattr(node, "name", None), ast.Name):  # `type X = ...` (3.12)
                names.add(alias.id)
            for attribute in ("body", "orelse", "finalbody"):
                nested = getattr(node, attribute, None)
                if isinstance(nested, list):
                    visit(nested, scope)
            for part in [*getattr(node, "handlers", ()), *getattr(node, "cases", ())]:
                visit(part.body, scope)

    visit(tree.body, "")
    return {scope: frozenset(names) for scope, names in found.items()}


def missing_names(mentions: Iterable[Mention], code: CodeIndex) -> tuple[str, ...]:
    """The mentions (as written) that name code the facts no longer hold, sorted and unique.

    (a) A dotted name whose first component is a top-level package or module of
    the repository (a trailing ``()`` allowed) must resolve to a module, a
    symbol, or a name bound in one. (b) A call ``name()`` or ``Name.method()``
    (``Name`` capitalised, not an outside import) must end in a name some
    symbol has; builtins and names imported from outside the repository pass.
    """
    if not code.symbols:
        return ()  # no Python facts: nothing to judge the mentions against
    missing: set[str] = set()
    for mention in mentions:
        text = mention.text
        call = text.endswith("()")
        name = text[:-2] if call else text
        if not _DOTTED.fullmatch(name):
            continue
        parts = name.split(".")
        if len(parts) > 1 and parts[0] in code.tops:
            if (call or parts[-1].lower() not in FILE_SUFFIXES) and not code.resolves(name):
                missing.add(text)
        elif call and len(parts) <= 2:
            if len(parts) == 2 and (not parts[0][:1].isupper() or parts[0] in code.external_names
                                    or parts[0] in BUILTINS):
                continue
            if not code.knows_call(parts[-1]):
                missing.add(text)
    return tuple(sorted(missing))
