"""The repository-wide step for languages read through tree-sitter: where each import points
(a file of the repository, the language's standard library, or a package) and which
definition each call reaches, by name, when the repository leaves one candidate.

A call ``render(...)`` or ``this.render(...)`` is looked for, in order: among the methods of
the caller's own type (for ``this.``/``self.``/a Go receiver), in the caller's file, in the
files it imports, in its directory (a Go or Java package), then anywhere in the repository in
the same language; the first place with exactly one definition of that name answers, and a
place with several leaves the call unresolved rather than guess (in TypeScript and
JavaScript, unless one of them is in a file of the caller's own suffix: ``x.cjs`` calls what
``util.cjs`` defines, not ``util.js``). In TypeScript and
JavaScript, ``Owner.member(...)`` whose member no definition declares (a static method a
factory gave the class it made, ``$ZodType.init``) reaches the class ``Owner`` names, looked
for the same way.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from kbc.analyzers.code.gomod import package_folder
from kbc.analyzers.code.languages import code_module, code_suffix
from kbc.domain.models import Call, FileFacts, Import

_NODE_BUILTINS = frozenset(
    {
        "assert",
        "buffer",
        "child_process",
        "cluster",
        "crypto",
        "dgram",
        "dns",
        "events",
        "fs",
        "http",
        "http2",
        "https",
        "net",
        "os",
        "path",
        "perf_hooks",
        "process",
        "querystring",
        "readline",
        "stream",
        "string_decoder",
        "timers",
        "tls",
        "tty",
        "url",
        "util",
        "v8",
        "vm",
        "worker_threads",
        "zlib",
    }
)
_FAMILIES = {"typescript": "js", "tsx": "js", "javascript": "js", "c": "c", "cpp": "c"}
_RECEIVERS = ("this.", "self.", "Self.")


def _family(language: str) -> str:
    return _FAMILIES.get(language, language)


class _Modules:
    """The repository's non-Python modules, by the ways imports name them."""

    def __init__(self, files: Sequence[FileFacts], go_modules: Mapping[str, str]) -> None:
        self.go_modules = go_modules  # folder -> the module path its go.mod declares
        self.in_folder: dict[tuple[str, str], set[str]] = defaultdict(set)  # (family, folder) -> modules
        self.modules = {f.module: f for f in files}
        self.suffixes: dict[tuple[str, str], set[str]] = defaultdict(set)  # (family, dotted tail) -> modules
        self.folders: dict[tuple[str, str], set[str]] = defaultdict(set)  # (family, folder tail) -> modules
        for facts in files:
            family = _family(facts.language)
            parts = facts.module.split(".")
            for k in range(1, len(parts) + 1):
                self.suffixes[(family, ".".join(parts[-k:]))].add(facts.module)
            self.in_folder[(family, posixpath.dirname(facts.path))].add(facts.module)
            folder = posixpath.dirname(facts.path).split("/") if "/" in facts.path else []
            for k in range(1, len(folder) + 1):
                self.folders[(family, "/".join(folder[-k:]))].add(facts.module)

    def one(self, found: Iterable[str]) -> str:
        unique = sorted(found)
        return unique[0] if len(unique) == 1 else ""


def classify_code(imp: Import, facts: FileFacts, modules: _Modules) -> Import:  # noqa: C901 - one rule per language's import form
    """Where an import of a non-Python file points."""
    language, written = facts.language, imp.module
    family = _family(language)
    if not written:
        return dataclasses.replace(imp, kind="unresolved")
    for candidate in (written, f"{written}.index", f"{written}.mod"):
        if candidate in modules.modules and _family(modules.modules[candidate].language) == family:
            return dataclasses.replace(imp, kind="internal", target=candidate)
    if family == "go":
        segments = written.split("/")
        if modules.go_modules:  # the repository's go.mod files say which paths are its own
            folder = package_folder(written, modules.go_modules)
            if folder is not None:
                package = sorted(modules.in_folder.get((family, folder), ()))
                if package:
                    return dataclasses.replace(imp, kind="internal", target=package[0])
                return dataclasses.replace(imp, kind="unresolved")
        if "." not in segments[0]:
            return dataclasses.replace(imp, kind="stdlib")
        if not modules.go_modules:  # no go.mod: a package of the repository by its folder's tail
            for k in range(len(segments) - 1, 0, -1):
                package = sorted(modules.folders.get((family, "/".join(segments[-k:])), ()))
                if package:
                    return dataclasses.replace(imp, kind="internal", target=package[0])
        return dataclasses.replace(imp, kind="external", distribution="/".join(segments[:3]))
    if family in ("java", "c", "rust"):
        tail = written.removesuffix(".*") if family == "java" else written
        found = modules.one(modules.suffixes.get((family, tail), ()))
        if found:
            return dataclasses.replace(imp, kind="internal", target=found)
    parts = written.split(".")
    if family == "java":
        if parts[0] in ("java", "javax", "jdk", "sun"):
            return dataclasses.replace(imp, kind="stdlib")
        return dataclasses.replace(imp, kind="external", distribution=".".join(parts[:2]))
    if family == "rust":
        if parts[0] in ("std", "core", "alloc"):
            return dataclasses.replace(imp, kind="stdlib")
        if parts[0] in ("self", "super", "crate", ""):
            return dataclasses.replace(imp, kind="unresolved")
        return dataclasses.replace(imp, kind="external", distribution=parts[0])
    if family == "c":
        return dataclasses.replace(imp, kind="stdlib")  # a system header, or one on an include path
    # JavaScript and TypeScript: a package, by its name
    name = written.removeprefix("node:")
    if written.startswith("node:") or name.split("/")[0] in _NODE_BUILTINS:
        return dataclasses.replace(imp, kind="stdlib")
    scoped = "/".join(name.split("/")[:2]) if name.startswith("@") else name.split("/")[0]
    return dataclasses.replace(imp, kind="external", distribution=scoped)


class _Definitions:
    def __init__(self, files: Sequence[FileFacts]) -> None:
        self.by_name: dict[tuple[str, str], list[tuple[str, str, str]]] = defaultdict(list)
        self.classes: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(
            list
        )  # name -> qname, module
        self.parent_of: dict[str, str] = {}
        self.file_of: dict[str, tuple[str, str]] = {}  # qname -> its file's stem and suffix
        for facts in files:
            family = _family(facts.language)
            for symbol in facts.symbols:
                self.file_of[symbol.qname] = (code_module(facts.path), code_suffix(facts.path))
                self.by_name[(family, symbol.name)].append((symbol.qname, facts.module, symbol.parent))
                self.parent_of[symbol.qname] = symbol.parent
                if symbol.kind == "class":
                    self.classes[(family, symbol.name)].append((symbol.qname, facts.module))

    def resolve(self, call: Call, facts: FileFacts, imported: set[str], folder: set[str]) -> str:
        found = self._declared(call, facts, imported, folder)
        written = call.text
        if found or _family(facts.language) != "js" or "." not in written or written.startswith(_RECEIVERS):
            return found
        owner = written.rsplit(".", 1)[0].rsplit(".", 1)[-1]
        owners = self.classes.get(("js", owner), [])
        for place in (
            [q for q, module in owners if module == facts.module],
            [q for q, module in owners if module in imported],
            [q for q, module in owners if module in folder],
            [q for q, _ in owners],
        ):
            unique = sorted(set(place))
            if unique:
                return unique[0] if len(unique) == 1 else ""
        return ""

    def _declared(self, call: Call, facts: FileFacts, imported: set[str], folder: set[str]) -> str:
        """The definition of the called name itself."""
        written = call.text
        name = written.rsplit(".", 1)[-1]
        candidates = self.by_name.get((_family(facts.language), name), [])
        if not candidates:
            return ""
        owner = self.parent_of.get(call.caller, "")
        go_receiver = facts.language == "go" and "." in written and owner != ""
        on_self = written.startswith(_RECEIVERS) or go_receiver
        places: list[list[str]] = []
        if on_self:  # a Go type's methods may sit in any file of its package (its folder)
            type_name = owner.rsplit(".", 1)[-1]
            places.append(
                [
                    q
                    for q, module, parent in candidates
                    if owner
                    and (
                        parent == owner
                        or go_receiver
                        and module in folder
                        and parent.rsplit(".", 1)[-1] == type_name
                    )
                ]
            )
        if "." not in written or written.startswith(_RECEIVERS):
            places.append([q for q, module, _ in candidates if module == facts.module])
            places.append([q for q, module, _ in candidates if module in imported])
            places.append([q for q, module, _ in candidates if module in folder])
            places.append([q for q, _, _ in candidates])
        else:  # `pkg.Func`, `Type::new`: the qualifier names the definition's type or module;
            # an object's method whose type is unknown is never guessed across the repository
            qualifier = written.rsplit(".", 1)[0].rsplit(".", 1)[-1]
            places.append(
                [
                    q
                    for q, module, parent in candidates
                    if parent.endswith("." + qualifier)
                    or module.endswith("." + qualifier)
                    or posixpath.basename(module.rsplit(".", 1)[0].replace(".", "/")) == qualifier
                ]
            )
        for found in places:
            unique = sorted(set(found))
            if len(unique) > 1 and len({self.file_of[q][0] for q in unique}) == 1:
                # one definition in each of `x.js` and `x.cjs`: the one beside the caller's kind
                suffix = code_suffix(facts.path)
                unique = sorted({q for q in unique if self.file_of[q][1] == suffix}) or unique
            if len(unique) == 1:
                return unique[0]
            if len(unique) > 1:
                return ""
        return ""


_APART = frozenset({"go", "rust", "c", "cpp"})  # where a method may be defined apart from its type


def adopt_members(code: Sequence[FileFacts]) -> list[FileFacts]:
    """``code`` with each method defined apart from its type (a Go method in another file of
    its package, a Rust ``impl`` in another module of its crate, a C++ ``Type::name`` defined
    outside its class's header) made a member of that type's definition: the one of that name
    in the method's folder, else (not in Go, whose methods live in their type's package) the
    one of that name in the repository, when there is exactly one."""
    defined = {s.qname for f in code for s in f.symbols}
    types: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)  # name -> folder, qname
    for facts in code:
        for symbol in facts.symbols:
            if symbol.kind == "class" and facts.language in _APART:
                types[(_family(facts.language), symbol.name)].append(
                    (posixpath.dirname(facts.path), symbol.qname)
                )
    out = []
    for facts in code:
        if facts.language in _APART and any(
            s.kind == "method" and s.parent and s.parent not in defined for s in facts.symbols
        ):
            folder = posixpath.dirname(facts.path)
            symbols = []
            for symbol in facts.symbols:
                if symbol.kind == "method" and symbol.parent and symbol.parent not in defined:
                    found = types.get((_family(facts.language), symbol.parent.rsplit(".", 1)[-1]), [])
                    here = sorted({q for place, q in found if place == folder})
                    anywhere = sorted({q for _, q in found}) if facts.language != "go" else []
                    owner = here if here else anywhere
                    if len(owner) == 1:
                        symbol = dataclasses.replace(symbol, parent=owner[0])
                symbols.append(symbol)
            facts = dataclasses.replace(facts, symbols=tuple(symbols))
        out.append(facts)
    return out


def link_code(
    files: Sequence[FileFacts], go_modules: Mapping[str, str] | None = None
) -> dict[str, FileFacts]:
    """Path -> the non-Python ``files`` with their methods under their types
    (:func:`adopt_members`), their imports classified and calls resolved; ``go_modules``:
    folder -> the module path its ``go.mod`` declares (:mod:`kbc.analyzers.code.gomod`)."""
    code = adopt_members([f for f in files if f.language != "python"])
    if not code:
        return {}
    modules = _Modules(code, go_modules or {})
    definitions = _Definitions(code)
    by_folder: dict[str, set[str]] = defaultdict(set)
    for facts in code:
        by_folder[posixpath.dirname(facts.path)].add(facts.module)
    out = {}
    for facts in code:
        imports = tuple(classify_code(i, facts, modules) for i in facts.imports)
        imported = {i.target for i in imports if i.kind == "internal"}
        folder = by_folder[posixpath.dirname(facts.path)]
        calls = tuple(
            dataclasses.replace(c, target=definitions.resolve(c, facts, imported, folder))
            for c in facts.calls
        )
        out[facts.path] = dataclasses.replace(facts, imports=imports, calls=calls)
    return out
