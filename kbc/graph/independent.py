"""A package of independent modules: one part per public module, found where the modules barely link.

A library of utility modules (``cacheutils``, ``iterutils``, ``strutils``, ... beside an empty
``__init__``) has no communities to find: its modules share no imports but a helper or two, so
a cut of its file graph has nothing to cut along, and the whole package would be one module
view whose purpose is the first module's docstring. Here the package is read as its authors
laid it out, each unit a part of its own:

- a **unit** is a module directly in the package, or a subpackage (its folder is its authors'
  own cut), named by its dotted name; a unit linked to the package's units outside the group
  (subpackages that are groups of their own already) is linked to them too;
- the units **barely link** when those of the group link among themselves in no more pairs
  than there are units, none imports a third of them (``HUB_LINKS`` at least: an
  application's ``app`` wiring its modules together) and, shared helpers left out (a unit
  linked to ``HUB_LINKS`` or more others, such as ``typeutils`` or ``compat``), more than
  half of the others link to no other unit of the group, or they link to one other on
  average at most;
  the package's ``__init__`` and ``__main__`` do not count;
- then every public unit (a name Python can import, not private, holding Python code) is a
  group of its own, named by the unit (``boltons.cacheutils``); public units whose names
  share a topic (``tbutils`` and ``tbutils_parsed``: one is the other's name followed by
  ``_``) are one group named
  ``package[topic]``; a private unit goes with the one public unit it links to, if it links
  to exactly one; what is left (the ``__init__``, ``__main__``, private helpers) keeps the
  package's name.

Only a package (a folder with an ``__init__.py``, its name importable) is read so; a folder
of scripts or a namespace is not. The same facts give the same groups.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping

from kbc.analyzers.roles import role_of
from kbc.domain.models import ModuleGroup

MIN_PUBLIC_UNITS = 3
HUB_LINKS = 4  # a unit linked to this many others is a shared helper, not a topic's partner


def _unit(module: str, package: str) -> str:
    """The unit of ``package`` a module of it belongs to: the module itself, or the subpackage."""
    rest = module[len(package) + 1 :].split(".") if module.startswith(package + ".") else []
    return f"{package}.{rest[0]}" if rest else package


def _public(unit: str, package: str, modules: list[str], path_of: Mapping[str, str]) -> bool:
    """A unit a user imports: a name Python can import, not private, holding Python code."""
    name = unit[len(package) + 1 :]
    return (
        name.isidentifier()
        and not name.startswith("_")
        and any(_product(path_of.get(m, "")) for m in modules)
    )


def _product(path: str) -> bool:
    """A Python file of the product's own code (not a test, an example or a script of docs)."""
    return path.endswith(".py") and role_of(path, "python") == "source"


def _topic(units: list[str], package: str) -> dict[str, str]:
    """Each public unit's topic: the shortest unit whose name is its name or a prefix of it
    ending at an underscore (``tbutils`` for ``tbutils_parsed``)."""
    names = {u: u[len(package) + 1 :] for u in units}
    topic = {}
    for unit, name in names.items():
        heads = [n for n in names.values() if n == name or name.startswith(n + "_")]
        topic[unit] = min(heads, key=lambda n: (len(n), n))
    return topic


def _unit_links(
    units: set[str], package: str, links: Mapping[tuple[str, str], int], path_of: Mapping[str, str]
) -> dict[tuple[str, str], int]:
    """Lines linking two units of ``package``, one of them among ``units`` (the other may be a
    unit of the package outside the group: a subpackage already a group of its own), in the
    product's code (not the package's own tests)."""
    home = {package, f"{package}.__main__"}
    between: dict[tuple[str, str], int] = defaultdict(int)
    for (source, target), lines in links.items():
        if not (source.startswith(package + ".") and target.startswith(package + ".")):
            continue
        if not (_product(path_of.get(source, "")) and _product(path_of.get(target, ""))):
            continue
        a, b = _unit(source, package), _unit(target, package)
        if a != b and (a in units or b in units) and a not in home and b not in home:
            between[(min(a, b), max(a, b))] += lines
    return dict(between)


def independent_parts(
    group: ModuleGroup,
    links: Mapping[tuple[str, str], int],
    imports: Collection[tuple[str, str]],
    path_of: Mapping[str, str],
    package: str,
) -> list[ModuleGroup] | None:
    """The group cut into one part per public unit of ``package`` (the group's package), or
    None when its units link more than barely or too few of them are public. ``links``: lines
    linking two modules (either way); ``imports``: (importer, imported) module pairs;
    ``path_of``: each module's file."""
    if not path_of.get(package, "").endswith("__init__.py") or not all(
        part.isidentifier() for part in package.split(".")
    ):
        return None  # a folder of scripts, or a namespace: no package whose modules users import
    by_unit: dict[str, list[str]] = defaultdict(list)
    for module in group.modules:
        if module == package or module.startswith(package + "."):
            by_unit[_unit(module, package)].append(module)
    home = {package, f"{package}.__main__"}
    units = {u for u in by_unit if u not in home}
    public = sorted(u for u in units if _public(u, package, by_unit[u], path_of))
    if len(public) < MIN_PUBLIC_UNITS:
        return None
    between = _unit_links(units, package, links, path_of)
    if sum(a in units and b in units for a, b in between) > len(units):
        return None  # more pairs linked than units: a web of modules, not a shelf of them
    imported: dict[str, set[str]] = defaultdict(set)
    for source, target in imports:
        if (
            source.startswith(package + ".")
            and target.startswith(package + ".")
            and _product(path_of.get(source, ""))
        ):
            imported[_unit(source, package)].add(_unit(target, package))
    if any(len(imported[u] - {u, package}) >= max(HUB_LINKS, len(units) / 3) for u in units):
        return None  # a core that imports a third of the package: an application wired together
    degree: dict[str, int] = defaultdict(int)
    for a, b in between:
        degree[a] += 1
        degree[b] += 1
    hubs = {u for u, n in degree.items() if n >= HUB_LINKS}
    pairs = [(a, b) for a, b in between if a in units and b in units and not hubs & {a, b}]
    partners: dict[str, set[str]] = defaultdict(set)
    for a, b in pairs:
        partners[a].add(b)
        partners[b].add(a)
    plain = [u for u in units if u not in hubs]
    alone = sum(not partners[u] for u in plain)
    if not plain or (2 * alone <= len(plain) and 2 * len(pairs) > len(plain)):
        return None
    topic = _topic(public, package)
    part_of: dict[str, str] = {}
    for unit in public:
        head = topic[unit]
        shared = sum(t == head for t in topic.values()) > 1
        part_of[unit] = f"{package}[{head}]" if shared else unit
    for unit in sorted(units - set(public)):
        linked = {
            part_of[other]
            for (a, b) in between
            for other in (a, b)
            if unit in (a, b) and other != unit and other in part_of
        }
        part_of[unit] = linked.pop() if len(linked) == 1 and not unit.endswith("__main__") else package
    members: dict[str, list[str]] = defaultdict(list)
    for unit, modules in by_unit.items():
        members[part_of.get(unit, package)].extend(modules)
    outside = [m for m in group.modules if not (m == package or m.startswith(package + "."))]
    members[package].extend(outside)
    return sorted(
        (
            ModuleGroup(name, tuple(sorted(mods)), tuple(sorted(p for m in mods if (p := path_of.get(m)))))
            for name, mods in members.items()
            if mods
        ),
        key=lambda g: g.name,
    )
