"""Module groups: the units of structure a module view describes.

Files start grouped by top-level package. While a group holds more than
``split_files`` Python files it is split into one group per subpackage (and
one for the files directly in it), largest group first, as long as the total
stays within ``max_modules``. When there are more top-level groups than
``max_modules``, the smallest are folded into one ``(other)`` group.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from kbc.domain.models import ModuleGroup

OTHER = "(other)"


def _key(module: str, depth: int) -> str:
    return ".".join(module.split(".")[:depth])


def _split(name: str, depth: int, members: list[tuple[str, str]]) -> dict[str, list[tuple[str, str]]]:
    """One group per next-level package below ``name`` and one for modules of ``name`` itself."""
    parts: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for module, path in members:
        is_init = path.endswith("__init__.py")
        deeper = module.count(".") + 1 > depth + 1 or (is_init and module.count(".") + 1 > depth)
        parts[_key(module, depth + 1) if deeper else name].append((module, path))
    return parts


def group_modules(
    modules: Iterable[tuple[str, str]], split_files: int, max_modules: int
) -> list[ModuleGroup]:
    """Group (module, path) pairs; deterministic for the same input."""
    groups: dict[str, tuple[int, list[tuple[str, str]]]] = {}
    by_top: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for module, path in sorted(modules):
        by_top[_key(module, 1)].append((module, path))
    for name, members in by_top.items():
        groups[name] = (1, members)
    if len(groups) > max_modules:
        ranked = sorted(groups, key=lambda n: (-len(groups[n][1]), n))
        keep, fold = ranked[: max_modules - 1], ranked[max_modules - 1 :]
        folded = sorted(m for n in fold for m in groups[n][1])
        groups = {n: groups[n] for n in keep}
        groups[OTHER] = (0, folded)
    unsplittable: set[str] = {OTHER}
    while True:
        candidates = [
            n for n, (_, members) in groups.items() if len(members) > split_files and n not in unsplittable
        ]
        if not candidates:
            break
        name = max(candidates, key=lambda n: (len(groups[n][1]), n))
        depth, members = groups[name]
        parts = _split(name, depth, members)
        if len(parts) <= 1 or len(groups) - 1 + len(parts) > max_modules:
            unsplittable.add(name)
            continue
        del groups[name]
        for part_name, part_members in parts.items():
            groups[part_name] = (depth + 1 if part_name != name else depth, part_members)
            if part_name == name:
                unsplittable.add(name)
    return [
        ModuleGroup(name, tuple(sorted({m for m, _ in members})), tuple(sorted(p for _, p in members)))
        for name, (_, members) in sorted(groups.items())
    ]
