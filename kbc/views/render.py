"""Views to Markdown with jinja2 templates shipped in the package; Mermaid for the graphs."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from kbc.domain.codec import to_data
from kbc.domain.views import VIEW_KINDS, View
from kbc.views.kinds import KINDS

MERMAID_MAX_NODES = 40
_UNSAFE = re.compile(r"[^\w.-]+")
_UNSAFE_ENDS = re.compile(r"^[^\w.-]+|[^\w.-]+$")


def view_file(view_id: str) -> str:
    """Where a view's Markdown lives in a rendered folder: ``module/pkg.sub.md``. The name keeps
    the id's own underscores (``workflow:pkg.Prompt.__call__`` is ``pkg.Prompt.__call__.md``);
    other characters are replaced, dropped at the ends, and no name starts with a dot."""
    kind, _, rest = view_id.partition(":")
    if not rest:
        return f"{kind}.md"
    name = _UNSAFE.sub("_", _UNSAFE_ENDS.sub("", rest)).lstrip(".")
    return f"{kind}/{name or '_'}.md"


class Markdown(str):
    """Text that is Markdown already (a code span, a macro's output, a diagram, a link): the
    templates print it as it is; every other value is printed as text (:func:`as_text`)."""

    __slots__ = ()


_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
# What Markdown reads as emphasis or markup in text: every asterisk, an underscore not inside
# a word (``__init__``, ``_private``; ``snake_case`` is inert), an angle bracket (HTML).
_ACTIVE = re.compile(r"(?<!\\)(\*|<|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


def as_text(value: str) -> str:
    """``value`` escaped so Markdown prints it as written: names and paths such as
    ``rich/__init__.py`` are not turned bold. Code spans in it (prose may quote code) are kept."""
    parts: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(value):
        parts.extend((_ACTIVE.sub(r"\\\1", value[last : span.start()]), span.group()))
        last = span.end()
    parts.append(_ACTIVE.sub(r"\\\1", value[last:]))
    return "".join(parts)


def code_span(value: object) -> Markdown:
    """``value`` as one inline code span, whatever backticks it holds."""
    text = " ".join(str(value).split("\n"))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Markdown(f"{fence}{pad}{text}{pad}{fence}")


def _finalize(value: Any) -> Any:
    return value if isinstance(value, Markdown) or not isinstance(value, str) else as_text(value)


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _otherwise(value: object, note: str) -> Markdown:
    """The value as text, or the note in italics when it is empty."""
    return Markdown(as_text(str(value))) if value else Markdown(f"_{note}_")


@cache
def _environment() -> Any:
    import jinja2

    templates = Path(__file__).with_name("templates")
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.Undefined,  # optional fact fields render empty
        finalize=_finalize,
    )
    env.filters["code"] = code_span
    env.filters["codes"] = lambda values, sep=", ": Markdown(sep.join(code_span(v) for v in values))
    env.filters["cell"] = _cell
    env.filters["md"] = Markdown  # a macro's output, a diagram or a link: printed as it is
    env.filters["otherwise"] = _otherwise
    return env


def mermaid_label(text: str) -> str:
    """``text`` as one quoted Mermaid label, whatever it holds: a quote or a newline (a folder
    may be named so) cannot end the label and start a statement, a backtick cannot make it
    Markdown, and an entity is printed, not read."""
    for raw, code in (("#", "#35;"), ('"', "#quot;"), ("`", "#96;")):
        text = text.replace(raw, code)
    return '"' + " ".join(text.split()) + '"'


def _graph(direction: str, nodes: Sequence[str], edges: Iterable[tuple[str, str, str]]) -> str:
    ids = {name: f"n{i}" for i, name in enumerate(nodes[:MERMAID_MAX_NODES])}
    lines = [f"graph {direction}"]
    lines.extend(f"  {ids[name]}[{mermaid_label(name)}]" for name in ids)
    for source, target, label in edges:
        if source in ids and target in ids:
            arrow = f" -->|{mermaid_label(label)}| " if label else " --> "
            lines.append(f"  {ids[source]}{arrow}{ids[target]}")
    if len(nodes) > MERMAID_MAX_NODES:
        lines.append(f"  more[{mermaid_label(f'{len(nodes) - MERMAID_MAX_NODES} more not drawn')}]")
    return "\n".join(lines)


def mermaid(view: View) -> str:
    facts = view.facts
    if view.kind == "architecture":
        ranked = sorted(facts["modules"], key=lambda m: (-m["centrality"], m["name"]))
        nodes = sorted(m["name"] for m in ranked[:MERMAID_MAX_NODES])
        if len(facts["modules"]) > MERMAID_MAX_NODES:
            nodes += [m["name"] for m in ranked[MERMAID_MAX_NODES:]]
        return _graph("LR", nodes, ((d["source"], d["target"], "") for d in facts["dependencies"]))
    if view.kind == "module":
        name = facts["name"]
        outgoing = [d["module"] for d in facts["imports_out"]]
        incoming = [d["module"] for d in facts["imports_in"]]
        nodes = [name, *sorted(set(outgoing) | set(incoming))]
        edges = [(name, t, "") for t in outgoing] + [(s, name, "") for s in incoming]
        return _graph("LR", nodes, edges)
    if view.kind == "workflow":
        steps = facts["steps"]
        nodes = [s["symbol"] for s in steps]
        parents: list[str] = []
        edges = []
        for step in steps:
            del parents[step["depth"] :]
            if parents:
                edges.append((parents[-1], step["symbol"], str(step["n"])))
            parents.append(step["symbol"])
        return _graph("TD", nodes, edges)
    return ""


def _links(view: View, ids: set[str]) -> dict[str, str]:
    here = posixpath.dirname(view_file(view.id)) or "."
    return {i: posixpath.relpath(view_file(i), here) for i in ids}


def render_view(view: View, ids: set[str] | None = None) -> str:
    """The view as Markdown; ``ids`` are the other views it may link to."""
    data = to_data(view)
    template = _environment().get_template(KINDS[view.kind].template)
    links = {key: Markdown(value) for key, value in _links(view, ids if ids is not None else set()).items()}
    text: str = template.render(
        view=data, f=data["facts"], i=data["interpretation"], mermaid=Markdown(mermaid(view)), links=links
    )
    return re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n"


def render_index(views: Sequence[View], repository: str, commit: str) -> str:
    by_kind = []
    for kind in VIEW_KINDS:
        items = [
            {"title": v.title, "link": Markdown(view_file(v.id)), "source": v.provenance.source}
            for v in views
            if v.kind == kind
        ]
        if items:
            by_kind.append((kind, items))
    text: str = (
        _environment()
        .get_template("index.md.j2")
        .render(
            repository=repository,
            commit=commit,
            views=views,
            by_kind=by_kind,
            headings={kind: definition.heading for kind, definition in KINDS.items()},
        )
    )
    return re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n"


def render_all(views: Sequence[View], repository: str, commit: str) -> dict[str, str]:
    """Every rendered file of the browsable folder, by relative path (``index.md`` first)."""
    ids = {v.id for v in views}
    files = {"index.md": render_index(views, repository, commit)}
    for view in sorted(views, key=lambda v: v.id):
        files[view_file(view.id)] = render_view(view, ids)
    return files
