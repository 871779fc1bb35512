"""The UI's module graph: the architecture view's modules and the imports between them, drawn
with Mermaid, each module linked to its page."""

from __future__ import annotations

import html

from kbc.domain.views import View
from kbc.serve.markdown import view_href
from kbc.views.render import mermaid_label

GRAPH_NODES = 120  # modules drawn in the module graph


def _is_test(module: str) -> bool:
    return any(part in ("test", "tests", "testing") for part in module.split("."))


def module_graph(architecture: View, ids: set[str], every: bool) -> str:
    """The modules (the most central first, up to GRAPH_NODES; test packages only with
    ``every``) and the imports between them."""
    facts = architecture.facts
    shown = [m for m in facts["modules"] if every or not _is_test(m["name"])]
    modules = sorted(shown, key=lambda m: (-m["centrality"], m["name"]))[:GRAPH_NODES]
    names = sorted(m["name"] for m in modules)
    node = {name: f"m{i}" for i, name in enumerate(names)}
    lines = ["graph LR"]
    lines.extend(f"  {node[m]}[{mermaid_label(m)}]" for m in names)
    for dependency in facts["dependencies"]:
        if dependency["source"] in node and dependency["target"] in node:
            lines.append(f"  {node[dependency['source']]} --> {node[dependency['target']]}")
    links = "".join(
        f'<li><a href="{html.escape(view_href("module:" + m))}">{html.escape(m)}</a></li>'
        if "module:" + m in ids
        else f"<li>{html.escape(m)}</li>"
        for m in names
    )
    more = len(shown) - len(names)
    hidden = len(facts["modules"]) - len(shown)
    note = f'<p class="meta">{more} less central modules are not drawn.</p>' if more > 0 else ""
    if hidden:
        note += (
            f'<p class="meta">{hidden} test module{"s" if hidden != 1 else ""} left out: '
            '<a href="/graph?all=1">show every module</a>.</p>'
        )
    return (
        f'<h1>Module graph</h1><p class="meta">{len(names)} modules, '
        f"{sum(1 for d in facts['dependencies'] if d['source'] in node and d['target'] in node)} "
        f"imports between them; a module opens its page.</p>{note}"
        f'<pre class="mermaid" data-links="module">{html.escape(chr(10).join(lines))}</pre>'
        f'<h2>Modules</h2><ul class="views columns">{links}</ul>'
        f'<script type="application/json" id="module-links">{_json_links(names, ids)}</script>'
    )


def _json_links(names: list[str], ids: set[str]) -> str:
    import json

    data = {m: view_href("module:" + m) for m in names if "module:" + m in ids}
    # Safe inside <script>: no "</" can end the element early.
    return json.dumps(data).replace("</", "<\\/")
