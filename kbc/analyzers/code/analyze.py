"""Facts of one file of TypeScript, JavaScript, Go, Java, Rust, C or C++, from its syntax tree.

Definitions (classes, structs, interfaces, traits, enums and type aliases as ``class``;
functions; methods) with their exact spans, parents and signatures as written; imports as
written, relative ones resolved to the module of the path they name; calls by the callee as
written (the repository-wide step resolves them by name, :mod:`kbc.analyzers.code.resolve`);
``main`` functions as entry points. A file's module is its path without its suffix, ``/``
read as ``.``: ``web/src/router.ts`` is ``web.src.router``. Tree-sitter recovers from syntax
errors, so a broken file still gives the definitions it can read, with a warning.
"""

from __future__ import annotations

import dataclasses
import posixpath
from pathlib import Path
from typing import Any

from kbc.analyzers.code.languages import RULES, Rules, code_module
from kbc.analyzers.discover import git_blob_id, line_count
from kbc.analyzers.secrets import redact, scrub
from kbc.domain.models import (
    AnalysisFailed,
    AnalysisOk,
    AnalysisResult,
    AnalysisTask,
    Call,
    EntryPoint,
    FileFacts,
    Import,
    Symbol,
    SymbolKind,
)

SIGNATURE_CHARS = 200  # a longer declaration head is cut here


def analyze_code_file(task: AnalysisTask) -> AnalysisResult:
    """Analyze the file ``task`` names; never raises."""
    try:
        data = Path(task.abspath).read_bytes()
    except OSError as exc:
        return AnalysisFailed(task.path, "", f"cannot read: {exc.strerror or exc}")
    blob = git_blob_id(data)
    try:
        return AnalysisOk(analyze_code(data, task, blob))
    except MemoryError:
        return AnalysisFailed(task.path, blob, "too large to analyze within the memory a worker may use")
    except RecursionError:
        return AnalysisFailed(task.path, blob, "nested too deeply to analyze")
    except Exception as exc:
        return AnalysisFailed(task.path, blob, f"analyzer failed: {type(exc).__name__}: {exc}")


def parser_for(language: str) -> Any:
    from tree_sitter_language_pack import get_parser

    return get_parser(RULES[language].grammar)  # type: ignore[arg-type]


def analyze_code(data: bytes, task: AnalysisTask, blob: str = "") -> FileFacts:
    """The facts of one file's bytes (``task.language`` names its grammar); credentials the
    redaction takes out of the file are taken out of the facts too."""
    text = data.decode("utf-8", errors="replace")
    redaction = redact(
        task.abspath, text, task.language, also=task.also, scan=not task.clean, where=task.path
    )
    tree = parser_for(task.language).parse(data)
    walker = _Walker(
        data, task.path, task.module or code_module(task.path), RULES[task.language], task.language
    )
    walker.run(tree.root_node)
    warnings = (
        ("syntax errors: the definitions around them may be incomplete",) if tree.root_node.has_error else ()
    )
    facts = FileFacts(
        task.path,
        walker.module,
        blob or git_blob_id(data),
        False,
        line_count(data),
        doc=walker.file_doc(),
        symbols=tuple(walker.symbols),
        imports=tuple(walker.imports),
        calls=tuple(walker.calls),
        entry_points=tuple(walker.entry_points),
        warnings=warnings,
        language=task.language,
    )
    if redaction.removed:
        facts = scrub(facts, tuple(redaction.removed))
    return dataclasses.replace(facts, secrets=redaction.findings)


_QUERIES: dict[str, Any] = {}


def _nodes_of_interest(language: str, root: Any) -> list[Any]:
    """The nodes that define, scope, call or import (and Go's package clause) under ``root``,
    parents before their children."""
    if language not in _QUERIES:
        from tree_sitter import Query
        from tree_sitter_language_pack import get_language

        rules = RULES[language]
        grammar = get_language(rules.grammar)  # type: ignore[arg-type]
        kinds = sorted(
            k
            for k in (
                *rules.classes,
                *rules.functions,
                *rules.scopes,
                *rules.calls,
                *rules.imports,
                "package_clause",
            )
            if grammar.id_for_node_kind(k, True) is not None
        )
        _QUERIES[language] = Query(grammar, " ".join(f"({kind}) @n" for kind in kinds))
    from tree_sitter import QueryCursor

    found = QueryCursor(_QUERIES[language]).captures(root).get("n", [])
    return sorted(found, key=lambda n: (n.start_byte, -n.end_byte, n.type))


def _text(node: Any) -> str:
    return str(node.text.decode("utf-8", errors="replace")) if node is not None else ""


def _first(node: Any, types: frozenset[str] | set[str]) -> Any:
    """The first descendant (breadth first) of one of ``types``."""
    queue = list(node.children)
    while queue:
        child = queue.pop(0)
        if child.type in types:
            return child
        queue.extend(child.children)
    return None


def _child(node: Any, types: set[str]) -> Any:
    """The first child of one of ``types`` (not a deeper descendant: a class's body is not
    searched for its own modifiers)."""
    return next((child for child in node.children if child.type in types), None)


def _end_line(node: Any) -> int:
    row, column = node.end_point
    return int(row) + (1 if column > 0 or row == node.start_point[0] else 0)


class _Walker:
    def __init__(self, data: bytes, path: str, module: str, rules: Rules, language: str) -> None:
        self.data = data
        self.path = path
        self.module = module
        self.rules = rules
        self.language = language
        self.lines = data.decode("utf-8", errors="replace").splitlines()
        self.symbols: list[Symbol] = []
        self.imports: list[Import] = []
        self.calls: list[Call] = []
        self.entry_points: list[EntryPoint] = []
        self.go_package = ""
        self.package_line = 0

    # -- the tree ----------------------------------------------------------

    def run(self, root: Any) -> None:
        """Every node of interest (found by a tree-sitter query, in C), in document order; the
        enclosing scopes kept on a stack of spans, so nothing else of the tree is visited."""
        stack: list[tuple[int, int, tuple[str, ...], str]] = []  # start, end, scope, owner
        for node in _nodes_of_interest(self.language, root):
            start, end = node.start_byte, node.end_byte
            while stack and not (stack[-1][0] <= start and end <= stack[-1][1]):
                stack.pop()
            scope, owner = (stack[-1][2], stack[-1][3]) if stack else ((), "")
            kind = node.type
            if kind == "package_clause":
                self.go_package = _text(_first(node, {"package_identifier"}))
                self.package_line = int(node.start_point[0]) + 1
            if kind in self.rules.imports:
                self._import(node)
            if kind in self.rules.calls:
                self._call(node, owner)
            found = self._definition(node, scope)
            if found is not None:
                defined, inner = found
                self.symbols.append(defined)
                self._entry(defined)
                stack.append((start, end, inner, defined.qname))
            elif kind in self.rules.scopes and (named := self._scope_name(node)):
                stack.append((start, end, (*scope, named), owner))

    def _scope_name(self, node: Any) -> str:
        if node.type == "impl_item":
            return _type_name(node.child_by_field_name("type"))
        if node.type == "mod_item" and node.child_by_field_name("body") is None:
            return ""  # `mod name;`: the module is another file
        return _text(node.child_by_field_name("name"))

    # -- definitions -------------------------------------------------------

    def _definition(self, node: Any, scope: tuple[str, ...]) -> tuple[Symbol, tuple[str, ...]] | None:
        """The symbol ``node`` defines, and the scope of what it holds; None if it defines none."""
        kind = node.type
        rules = self.rules
        if kind in rules.classes:
            name = self._class_name(node)
            return (self._symbol(node, name, "class", scope), (*scope, name)) if name else None
        if kind in rules.functions:
            name, parent_type = self._function_name(node)
            if not name:
                return None
            if parent_type:  # a Go receiver or a C++ `Type::name` defined outside its class
                scope = (*scope, parent_type)
            method = bool(scope) and (parent_type != "" or self._in_type(node))
            return self._symbol(node, name, "method" if method else "function", scope), (*scope, name)
        return None

    def _in_function(self, node: Any) -> bool:
        parent = node.parent
        while parent is not None:
            if (
                parent.type in self.rules.functions
                and parent.type != "variable_declarator"
                or parent.type in ("arrow_function", "function_expression")
            ):
                return True
            parent = parent.parent
        return False

    def _in_type(self, node: Any) -> bool:
        """Whether a function is a member of a class, struct, trait or impl (not a namespace)."""
        parent = node.parent
        while parent is not None:
            if parent.type in self.rules.classes or parent.type == "impl_item":
                return True
            if parent.type in self.rules.functions or parent.type in ("namespace_definition", "mod_item"):
                return False
            parent = parent.parent
        return False

    def _class_name(self, node: Any) -> str:
        if node.type == "type_definition":  # typedef struct { ... } Name;
            body = node.child_by_field_name("type")
            if body is None or body.child_by_field_name("body") is None:
                return ""
            return _text(node.child_by_field_name("declarator"))
        if node.type in ("struct_specifier", "enum_specifier", "union_specifier", "class_specifier"):
            if node.child_by_field_name("body") is None or (
                node.parent is not None and node.parent.type == "type_definition"
            ):
                return ""  # a use of the type, or the body of a typedef (named by the typedef)
        return _text(node.child_by_field_name("name"))

    def _function_name(self, node: Any) -> tuple[str, str]:
        """The function's name, and the type it is defined on when the syntax says so."""
        kind = node.type
        if kind == "variable_declarator":  # const f = (…) => …, outside any function
            value = node.child_by_field_name("value")
            if value is None or value.type not in ("arrow_function", "function_expression", "function"):
                return "", ""
            if self._in_function(node):
                return "", ""
            return _text(node.child_by_field_name("name")), ""
        if kind == "method_declaration" and self.language == "go":
            receiver = node.child_by_field_name("receiver")
            return _text(node.child_by_field_name("name")), _type_name(receiver)
        if kind == "function_definition":  # C, C++: the name sits in the declarator
            declarator = node.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                declarator = declarator.child_by_field_name("declarator")
            if declarator is None:
                return "", ""
            name = declarator.child_by_field_name("declarator")
            if name is not None and name.type == "qualified_identifier":
                owner = _text(name.child_by_field_name("scope"))
                return _text(name.child_by_field_name("name")), owner.split("<")[0]
            return _text(name), ""
        return _text(node.child_by_field_name("name")), ""

    def _symbol(self, node: Any, name: str, kind: SymbolKind, scope: tuple[str, ...]) -> Symbol:
        span = node
        while span.parent is not None and self._wraps(span.parent, node):
            span = span.parent
        start = int(span.start_point[0]) + 1
        sibling = span.prev_named_sibling
        while (
            sibling is not None and sibling.type in self.rules.attributes and _end_line(sibling) >= start - 1
        ):
            start = int(sibling.start_point[0]) + 1
            sibling = sibling.prev_named_sibling
        parent = ".".join((self.module, *scope)) if scope else ""
        qname = ".".join((self.module, *scope, name))
        head = self._signature(span, node)
        return Symbol(
            qname,
            name,
            kind,
            start,
            _end_line(span),
            head,
            doc=self._doc(start),
            public=self._public(node, span, name),
            parent=parent,
            is_async=_is_async(node),
            bases=self._bases(node),
        )

    def _wraps(self, parent: Any, node: Any) -> bool:
        """Whether a definition's span is its parent's: `export …`, a template, the `const` of an
        arrow function, the `type` of a Go type spec that stands alone."""
        kind = parent.type
        declaration = ("lexical_declaration", "variable_declaration")
        declared = node.type == "variable_declarator" and kind in declaration
        return (
            kind in self.rules.wrappers
            or declared
            or kind == "type_declaration"
            and len(parent.named_children) == 1
        )

    def _signature(self, node: Any, inner: Any = None) -> str:
        """The declaration as written up to its body (``inner``'s, when ``node`` wraps it), on
        one line."""
        body = node.child_by_field_name("body")
        if body is None and inner is not None:
            body = inner.child_by_field_name("body")
        if body is None and node.type in ("lexical_declaration", "export_statement", "variable_declaration"):
            body = _first(node, {"statement_block", "class_body"})
        end = body.start_byte if body is not None else node.end_byte
        head = self.data[node.start_byte : end].decode("utf-8", errors="replace")
        return " ".join(head.split()).rstrip("{ =")[:SIGNATURE_CHARS]

    def _doc(self, start: int) -> str:
        """The first sentence of the comment block right above line ``start``, its markers
        taken off, up to its first ``@tag``."""
        found: list[str] = []
        number = start - 1
        while 1 <= number <= len(self.lines):
            line = self.lines[number - 1].strip()
            if not line.startswith(self.rules.comments) and not line.endswith("*/"):
                break
            found.insert(0, line)
            number -= 1
        words = []
        for line in found:
            line = line.removeprefix("/**").removeprefix("/*!").removeprefix("/*").replace("*/", " ")
            for mark in ("///", "//!", "//", "*"):
                line = line.removeprefix(mark)
            line = line.strip()
            if line.startswith("@"):
                break
            words.append(line)
        text = " ".join(w for w in words if w)
        return (text[: text.index(". ") + 1] if ". " in text else text)[:300]

    def _public(self, node: Any, span: Any, name: str) -> bool:
        language = self.language
        if language == "go":
            return name[:1].isupper()
        if language in ("typescript", "tsx", "javascript"):
            if node.type == "method_definition":
                return not name.startswith("#") and not _has_child(node, "accessibility_modifier", "private")
            return span.type == "export_statement" or (
                span.parent is not None and span.parent.type == "export_statement"
            )
        if language == "rust":
            return _has_type(node, "visibility_modifier")
        if language == "java":
            modifiers = _child(node, {"modifiers"})
            return modifiers is not None and "public" in _text(modifiers).split()
        if language in ("c", "cpp"):
            return not self._signature(node).startswith("static ")  # the definition's own, not its template's
        return True

    def _bases(self, node: Any) -> tuple[str, ...]:
        for field_name in ("superclass", "interfaces", "base_class_clause"):
            found = node.child_by_field_name(field_name)
            if found is not None:
                return tuple(_text(t) for t in found.named_children if t.type.endswith("identifier"))
        inherits = node.type in (
            "class_declaration",
            "abstract_class_declaration",
            "class_specifier",
            "struct_specifier",
        )
        heritage = _child(node, {"class_heritage", "base_class_clause"}) if inherits else None
        if heritage is not None:
            return tuple(sorted({_text(t) for t in _all(heritage, {"identifier", "type_identifier"})}))
        return ()

    def _entry(self, symbol: Symbol) -> None:
        """``main`` where the language starts a program from it."""
        if symbol.name != "main":
            return
        language = self.language
        program = (
            language == "go"
            and symbol.kind == "function"
            and self.go_package == "main"
            or language in ("rust", "c", "cpp")
            and symbol.kind == "function"
            or language == "java"
            and symbol.kind == "method"
            and "static" in symbol.signature.split()
        )
        if program:
            self.entry_points.append(
                EntryPoint("main", self.path, symbol.qname, self.path, symbol.start_line)
            )

    # -- imports and calls -------------------------------------------------

    def _import(self, node: Any) -> None:
        line = int(node.start_point[0]) + 1
        kind = node.type
        if kind in ("import_statement", "export_statement"):
            source = node.child_by_field_name("source")
            if source is not None:
                self._add_import(line, _unquote(_text(source)))
        elif kind == "import_spec":  # Go
            alias = _text(node.child_by_field_name("name"))
            self._add_import(line, _unquote(_text(node.child_by_field_name("path"))), alias=alias)
        elif kind == "import_declaration":  # Java
            target = _first(node, {"scoped_identifier", "identifier"})
            if target is not None:
                self.imports.append(Import(line, _text(target)))
        elif kind == "use_declaration":  # Rust
            argument = node.child_by_field_name("argument")
            written = _text(argument).split("{")[0].rstrip(":").replace("::", ".")
            self.imports.append(Import(line, self._rust_module(written)))
        elif kind == "mod_item" and node.child_by_field_name("body") is None:
            name = _text(node.child_by_field_name("name"))
            here = posixpath.dirname(self.path)
            base = posixpath.basename(posixpath.splitext(self.path)[0])
            folder = here if base in ("lib", "main", "mod") else posixpath.join(here, base)
            self.imports.append(Import(line, code_module(posixpath.join(folder, name + ".rs"))))
        elif kind == "preproc_include":
            written = _unquote(_text(node.child_by_field_name("path")))
            if _text(node.child_by_field_name("path")).startswith('"'):
                self._add_import(line, "./" + written)
            else:
                self.imports.append(Import(line, written))

    def _rust_module(self, written: str) -> str:
        """``crate.a.b`` is the module of the crate's ``src/a/b``; other paths stay as written."""
        if written.startswith("crate."):
            root = self.path.split("src/")[0] + "src" if "src/" in self.path else posixpath.dirname(self.path)
            return ".".join(part for part in (root.replace("/", "."), written.removeprefix("crate.")) if part)
        return written

    def _add_import(self, line: int, written: str, alias: str = "") -> None:
        if written.startswith("."):  # relative: the module of the path it names
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(self.path), written))
            if joined.startswith(".."):
                self.imports.append(Import(line, "", alias=alias))
                return
            self.imports.append(Import(line, code_module(joined), alias=alias))
        else:
            self.imports.append(Import(line, written, alias=alias))

    def _call(self, node: Any, owner: str) -> None:
        kind = node.type
        if kind == "method_invocation":  # Java
            target = node.child_by_field_name("object")
            name = _text(node.child_by_field_name("name"))
            written = f"{_text(target)}.{name}" if target is not None else name
        elif kind in ("new_expression", "object_creation_expression"):
            written = _text(node.child_by_field_name("constructor") or node.child_by_field_name("type"))
        else:
            written = _text(node.child_by_field_name("function"))
        written = "".join(written.split())
        if not written or "(" in written or len(written) > 120:
            tail = written.rsplit(".", 1)[-1].rsplit("::", 1)[-1] if written else ""
            written = tail if tail.isidentifier() else ""
        if written:
            self.calls.append(
                Call(
                    owner or self.module,
                    int(node.start_point[0]) + 1,
                    written.replace("::", ".").split("<")[0],
                )
            )

    def file_doc(self) -> str:
        """The comment the file opens with (Go: the one above its package clause), unless it is
        a licence or copyright notice."""
        if self.package_line:
            doc = self._doc(self.package_line)
        else:  # a comment block the first code stands apart from (else it is that code's own)
            first = next(
                (
                    n
                    for n, line in enumerate(self.lines, start=1)
                    if line.strip()
                    and not line.strip().startswith(self.rules.comments)
                    and not line.strip().endswith("*/")
                ),
                0,
            )
            above = first - 1
            while above >= 1 and not self.lines[above - 1].strip():
                above -= 1
            doc = self._doc(above + 1) if 1 <= above < first - 1 else ""
        lowered = doc.lower()
        return "" if "license" in lowered or "licence" in lowered or "copyright" in lowered else doc


def _is_async(node: Any) -> bool:
    """An ``async`` keyword among the definition's own tokens (or its modifiers', or those of
    the function a ``const`` binds)."""
    value = node.child_by_field_name("value") if node.type == "variable_declarator" else None
    for owner in (node, value):
        if owner is None:
            continue
        for child in owner.children:
            if (
                child.type == "async"
                or child.type.endswith("modifiers")
                and any(grandchild.type == "async" for grandchild in child.children)
            ):
                return True
    return False


def _unquote(text: str) -> str:
    return text.strip().strip("\"'`<>")


def _type_name(node: Any) -> str:
    """The name of the type a receiver, impl or parameter names: ``*Server`` and
    ``Wrapper<T>`` are ``Server`` and ``Wrapper``."""
    if node is None:
        return ""
    if node.type in ("type_identifier", "identifier"):
        return _text(node)
    found = _first(node, {"type_identifier"})
    return _text(found) if found is not None else _text(node).split("<")[0].lstrip("*&")


def _all(node: Any, types: set[str]) -> list[Any]:
    found = []
    queue = list(node.children)
    while queue:
        child = queue.pop(0)
        if child.type in types:
            found.append(child)
        queue.extend(child.children)
    return found


def _has_type(node: Any, kind: str) -> bool:
    return any(child.type == kind for child in node.children)


def _has_child(node: Any, kind: str, text: str) -> bool:
    return any(child.type == kind and _text(child) == text for child in node.children)
