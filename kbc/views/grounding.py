"""Grounding: every identifier, path or code span the prose names must exist in the facts.

A sentence (or list item) that names something the facts do not hold is removed, and
the name is recorded in the view's ``grounding``. Plain words are not checked; what
counts as a reference is code-shaped text: backticked spans, dotted names, paths,
calls ``name(...)``, snake_case and CamelCase identifiers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kbc.domain.views import Grounding

_BACKTICK = re.compile(r"`([^`\n]+)`")
_PATH = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+"
    r"|[\w-]+\.(?:py|pyi|md|rst|toml|cfg|ini|ya?ml|json|txt))(?![\w/])"
)
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?(?![\w])")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\(")
_SNAKE = re.compile(r"(?<![\w.])([a-z_][a-z0-9]*_[a-z0-9_]*[a-z0-9])(?![\w])")
_CAMEL = re.compile(r"(?<![\w.])([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)(?![\w])")
_IDENT = re.compile(r"[A-Za-z_][\w.]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")
_COMMON = frozenset({"e.g", "i.e", "etc", "vs", "a.k.a"})


@dataclass(slots=True)
class KnownNames:
    """Names the facts hold: symbols (and their suffixes), modules, paths, commands, packages."""

    names: set[str] = field(default_factory=set)
    paths: set[str] = field(default_factory=set)
    texts: list[str] = field(default_factory=list)  # code as written (conditions, signatures)
    base: KnownNames | None = None  # names known beyond these (the whole repository's)

    def has_name(self, name: str) -> bool:
        return name in self.names or (self.base is not None and self.base.has_name(name))

    def has_path(self, path: str) -> bool:
        return path in self.paths or (self.base is not None and self.base.has_path(path))

    def written(self, code: str) -> bool:
        return any(code in text for text in self.texts) or (self.base is not None and self.base.written(code))

    def add_name(self, name: str) -> None:
        if not name:
            return
        name = name.removeprefix("self.").removeprefix("cls.")
        parts = name.split(".")
        for i in range(len(parts)):
            self.names.add(".".join(parts[i:]))
        self.names.add(parts[0])

    def add_path(self, path: str) -> None:
        self.paths.add(path)
        pieces = path.split("/")
        for i in range(1, len(pieces)):
            self.paths.add("/".join(pieces[:i]))
            self.paths.add("/".join(pieces[i:]))
        self.paths.add(pieces[-1])

    def add_text(self, text: str) -> None:
        self.texts.append(text)
        for token in _IDENT.findall(text):
            self.add_name(token.strip("."))

    def knows(self, reference: str) -> bool:
        ref = reference.strip().removesuffix("()").rstrip(".,:;")
        if not ref or ref.lower() in _COMMON:
            return True
        if "/" in ref or _PATH.fullmatch(ref):
            return self.has_path(ref.strip("/")) or self.has_path(ref.lstrip("./"))
        ref = ref.removeprefix("self.").removeprefix("cls.")
        if self.has_name(ref):
            return True
        if _IDENT.fullmatch(ref):
            return False
        # A code span such as `amount <= 0`: written somewhere in the facts, or every identifier known.
        if self.written(ref):
            return True
        tokens = [t.strip(".") for t in _IDENT.findall(ref)]
        return all(self.has_name(t) or not _code_shaped(t) for t in tokens)


def _code_shaped(token: str) -> bool:
    return bool("." in token or "_" in token or _CAMEL.fullmatch(token))


def references(text: str) -> Iterator[str]:
    """Code-shaped references in prose, in order (backticked spans first)."""
    spans = _BACKTICK.findall(text)
    yield from spans
    rest = _BACKTICK.sub(" ", text)
    for pattern in (_PATH, _DOTTED, _CALL, _SNAKE, _CAMEL):
        for match in pattern.finditer(rest):
            value = match.group(1)
            if pattern is _DOTTED and (
                all(len(p) <= 1 for p in value.split(".")) or value.lower() in _COMMON
            ):
                continue
            if pattern is _DOTTED and _PATH.fullmatch(value):
                continue
            yield value
        if pattern is _PATH:
            rest = _PATH.sub(" ", rest)


def known_from_facts(value: Any, known: KnownNames) -> None:
    """Every string in a view's facts is something the prose may name."""
    if isinstance(value, dict):
        for item in value.values():
            known_from_facts(item, known)
    elif isinstance(value, list):
        for item in value:
            known_from_facts(item, known)
    elif isinstance(value, str):
        head = value.split(":", 1)[0]
        if "/" in head or _PATH.fullmatch(head):
            known.add_path(head)
        known.add_text(value)


@dataclass(slots=True)
class _Tally:
    checked: int = 0
    removed: int = 0
    ungrounded: list[str] = field(default_factory=list)

    def result(self) -> Grounding:
        return Grounding(self.checked, self.removed, tuple(sorted(set(self.ungrounded))))


def _clean_text(text: str, known: KnownNames, tally: _Tally) -> str:
    kept = []
    for sentence in _SENTENCE.split(text.strip()):
        missing = []
        for ref in references(sentence):
            tally.checked += 1
            if not known.knows(ref):
                missing.append(ref)
        if missing:
            tally.removed += 1
            tally.ungrounded.extend(missing)
        else:
            kept.append(sentence)
    return " ".join(kept)


def ground(
    interpretation: dict[str, Any], known: KnownNames, keys: Mapping[str, Iterable[Any]]
) -> tuple[dict[str, Any], Grounding]:
    """The interpretation with ungrounded sentences and items removed, and the tally.

    ``keys`` maps a list field (``rules``, ``concepts``, ...) to the keys its items may
    carry (rule numbers, concept names): an item keyed to nothing in the facts is removed.
    """
    tally = _Tally()
    allowed = {name: set(values) for name, values in keys.items()}
    cleaned: dict[str, Any] = {}
    for name, value in interpretation.items():
        if isinstance(value, str):
            cleaned[name] = _clean_text(value, known, tally)
        elif isinstance(value, list):
            items: list[Any] = []
            for item in value:
                if isinstance(item, str):
                    text = _clean_text(item, known, tally)
                    if text:
                        items.append(text)
                    continue
                key_field, prose_field = _keyed_fields(item)
                key = item[key_field]
                if name in allowed and key not in allowed[name]:
                    tally.checked += 1
                    tally.removed += 1
                    tally.ungrounded.append(str(key))
                    continue
                text = _clean_text(item[prose_field], known, tally)
                if text:
                    items.append({key_field: key, prose_field: text})
            cleaned[name] = items
        else:
            cleaned[name] = value
    return cleaned, tally.result()


def _keyed_fields(item: dict[str, Any]) -> tuple[str, str]:
    key_field = "n" if "n" in item else "name"
    prose_field = next(k for k in item if k != key_field)
    return key_field, prose_field
