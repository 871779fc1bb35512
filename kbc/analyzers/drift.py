"""Knowledge drift: which Markdown documents are behind the code they describe.

A document names the code it governs in YAML front-matter::

    ---
    refs:
      - kbc/retrieval/**
      - kbc/index/lexical.py
    ---

and is behind when governed files changed in commits after its own last
commit, when its body mentions code names the facts no longer hold, when a ref
matches no tracked file, or when its front-matter cannot be read. This module
holds the pure logic (front-matter, globs, mentions, name resolution) and the
two ``git log`` queries; ``kbc.services.drift`` wires them to the store.
Nothing here raises on a bad document: problems come back as values.
"""

from __future__ import annotations

import ast
import builtins
import re
import subprocess
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml  # type: ignore[import-untyped,unused-ignore]

from kbc.domain.drift import DriftReason, DriftReport
from kbc.domain.models import FileFacts, Symbol

# -- front-matter ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """A document split into its front-matter's ``refs`` and its body."""

    refs: tuple[str, ...]  # globs as written, leading "./" and "/" removed
    body: str  # the text after the closing "---" line (the whole text without front-matter)
    body_line: int  # 1-based line of the file where ``body`` starts
    problem: str = ""  # why the front-matter could not be read, "" when it could (or there is none)


def _is_delimiter(line: str) -> bool:
    return line.rstrip("\r\n").rstrip(" \t") == "---"


def parse_front_matter(text: str) -> FrontMatter:
    """Split ``text`` at a leading ``---`` line and the next ``---`` line; read ``refs`` from the YAML.

    ``refs`` may be a list of strings or one string. Anything else, invalid YAML,
    a block that is not a mapping or a block never closed gives ``problem``.
    """
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or not _is_delimiter(lines[0]):
        return FrontMatter((), text, 1)
    close = next((i for i in range(1, len(lines)) if _is_delimiter(lines[i])), 0)
    if not close:
        return FrontMatter((), "".join(lines[1:]), 2,
                           "front-matter opened by `---` on line 1 is never closed by a `---` line")
    block = "".join(lines[1:close])
    body, body_line = "".join(lines[close + 1:]), close + 2
    try:
        data = yaml.safe_load(block)
    except Exception as exc:  # YAMLError, or a constructor's ValueError: a value, not a crash
        return FrontMatter((), body, body_line, f"front-matter is not valid YAML: {_yaml_problem(exc)}")
    if data is None:
        return FrontMatter((), body, body_line)
    if not isinstance(data, dict):
        return FrontMatter((), body, body_line,
                           f"front-matter must be a mapping of keys to values, not a {type(data).__name__}")
    raw = data.get("refs")
    if raw is None:
        return FrontMatter((), body, body_line)
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        return FrontMatter((), body, body_line,
                           f"front-matter `refs` must be a list of globs, not a {type(raw).__name__}")
    refs: list[str] = []
    problems: list[str] = []
    for number, item in enumerate(items, 1):
        pattern = item.strip().removeprefix("./").lstrip("/") if isinstance(item, str) else ""
        if pattern and pattern != "!":
            refs.append(pattern)
        else:
            problems.append(f"item {number} ({item!r}) is not a glob")
    problem = f"front-matter `refs`: {'; '.join(problems)}" if problems else ""
    return FrontMatter(tuple(refs), body, body_line, problem)


def _yaml_problem(exc: Exception) -> str:
    problem = getattr(exc, "problem", None)
    if not isinstance(problem, str) or not problem:
        lines = str(exc).splitlines()
        problem = lines[0] if lines else type(exc).__name__
    line = getattr(getattr(exc, "problem_mark", None), "line", None)
    if isinstance(line, int):
        return f"{problem} (line {line + 2})"  # the mark counts from 0 inside the block after line 1
    return problem


# -- globs ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Glob:
    """One ``refs`` entry: gitignore-style, anchored at the repository root."""

    pattern: str  # as written
    regex: re.Pattern[str]
    negated: bool  # "!pattern": excludes what earlier patterns included
    directory_only: bool  # "pattern/": matches directories (and so everything below them)

    def matches(self, path: str) -> bool:
        """Whether ``path`` or one of its parent directories matches (negation aside)."""
        pieces = path.split("/")
        start = len(pieces) - 1 if self.directory_only else len(pieces)
        return any(self.regex.fullmatch("/".join(pieces[:end])) for end in range(start, 0, -1))


@lru_cache(maxsize=4096)
def compile_glob(pattern: str) -> Glob:
    """``*`` and ``?`` stay within a path segment, ``**`` spans segments, ``[...]`` is a class."""
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    body = body.removeprefix("./").lstrip("/")
    directory_only = body.endswith("/")
    body = body.rstrip("/")
    return Glob(pattern, re.compile(_translate(body)), negated, directory_only)


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            whole_segment = (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/")
            if j - i >= 2 and whole_segment:
                if j == n:
                    out.append(".*")  # "dir/**" or "**": everything below
                else:
                    out.append("(?:[^/]+/)*")  # "**/": zero or more directories
                    j += 1
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
                i += 1
                continue
            inner = pattern[i + 1:j]
            negate = inner[:1] in ("!", "^")
            inner = inner[1:] if negate else inner
            inner = inner.replace("\\", "\\\\").replace("[", "\\[")
            out.append(f"[^/{inner}]" if negate else f"(?!/)[{inner}]")
            i = j + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def glob_matches(pattern: str, path: str) -> bool:
    """Whether one glob (its ``!`` ignored) matches ``path`` or a directory above it."""
    return compile_glob(pattern).matches(path)


def governs(refs: Sequence[str], path: str) -> bool:
    """Whether ``refs`` govern ``path``: as in .gitignore, the last pattern that matches decides."""
    governed = False
    for pattern in refs:
        glob = compile_glob(pattern)
        if glob.negated == governed and glob.matches(path):
            governed = not glob.negated
    return governed


def governed_paths(refs: Sequence[str], paths: Iterable[str]) -> list[str]:
    """The paths ``refs`` govern, sorted."""
    return sorted(p for p in set(paths) if governs(refs, p))


def stale_refs(refs: Sequence[str], tracked: Iterable[str]) -> tuple[str, ...]:
    """The including (not ``!``) patterns that match no tracked path, in the order written."""
    paths = list(tracked)
    return tuple(r for r in refs
                 if not compile_glob(r).negated and not any(compile_glob(r).matches(p) for p in paths))


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


# -- git history ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    date: str  # committer date, YYYY-MM-DD
    paths: tuple[str, ...]  # paths it changed, relative to the repository root (renames: both sides)


def _log(root: Path, *args: str) -> Iterator[Commit]:
    """``git log`` newest first, one Commit per entry; nothing when git is missing or fails."""
    command = ["git", "-c", "core.quotePath=false", "--literal-pathspecs", "-C", str(root), "log",
               "--format=%x00%H %cs", "--name-only", "--relative", "--no-renames", *args]
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   text=True, encoding="utf-8", errors="replace")
    except OSError:
        return
    with process:
        assert process.stdout is not None
        sha, date = "", ""
        paths: list[str] = []
        try:
            for line in process.stdout:
                line = line.rstrip("\n")
                if line.startswith("\0"):
                    if sha:
                        yield Commit(sha, date, tuple(paths))
                    sha, _, date = line[1:].partition(" ")
                    paths = []
                elif line:
                    paths.append(line)
            if sha:
                yield Commit(sha, date, tuple(paths))
        finally:
            process.kill()


def last_commits(root: Path, paths: Iterable[str]) -> dict[str, tuple[str, str]]:
    """(commit, YYYY-MM-DD) of the last commit touching each path; missing when never committed."""
    wanted = set(paths)
    found: dict[str, tuple[str, str]] = {}
    if not wanted:
        return found
    for commit in _log(root, "--", *sorted(wanted)):
        for path in commit.paths:
            if path in wanted and path not in found:
                found[path] = (commit.sha, commit.date)
        if len(found) == len(wanted):
            break
    return found


def commits_since(root: Path, commit: str) -> list[Commit]:
    """The commits reachable from HEAD and not from ``commit``, newest first, with the paths they changed."""
    return list(_log(root, f"{commit}..HEAD", "--", "."))


# -- one document -------------------------------------------------------------------


def check_document(
    path: str,
    front: FrontMatter,
    *,
    tracked: Sequence[str],
    code: CodeIndex,
    last: tuple[str, str] | None = None,
    history: Sequence[Commit] = (),
) -> DriftReport | None:
    """The document's drift report, or None when it is up to date.

    ``tracked`` lists the repository's tracked paths; ``last`` is the
    document's last commit and its date; ``history`` the commits after it
    (:func:`commits_since`).
    """
    reasons: list[DriftReason] = []
    if front.refs and last is not None:
        touching = [(c, [p for p in c.paths if p != path and governs(front.refs, p)]) for c in history]
        touching = [(c, files) for c, files in touching if files]
        if touching:
            count = len({c.sha for c, _ in touching})
            latest = max(c.date for c, _ in touching)
            files = tuple(sorted({f for _, changed in touching for f in changed}))
            reasons.append(DriftReason(
                "code_changed",
                f"{_plural(count, 'commit')} since the document's last commit ({last[1]}) changed "
                f"{_plural(len(files), 'governed file')}; the latest on {latest}",
                commits_since=count, last_change=latest, files=files))
    names = missing_names(code_spans(front.body, front.body_line), code)
    if names:
        reasons.append(DriftReason(
            "missing_symbols", f"mentions {_plural(len(names), 'name')} the code no longer has",
            names=names))
    stale = stale_refs(front.refs, tracked)
    if stale:
        reasons.append(DriftReason(
            "stale_ref",
            f"{_plural(len(stale), 'ref')} {'matches' if len(stale) == 1 else 'match'} no tracked file",
            refs=stale))
    if front.problem:
        reasons.append(DriftReason("bad_front_matter", front.problem))
    if not reasons:
        return None
    sha, date = last if last is not None else ("", "")
    return DriftReport(path, tuple(reasons), sha, date)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
