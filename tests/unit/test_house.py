"""The house's rooms stay small: no module of the package over 500 lines, and no module of
the benchmarks over 400 (a module that grows past its limit is split by what it does, not
trimmed of its comments)."""

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "kbc"
MOST_LINES = 500


def test_no_module_of_the_package_is_over_500_lines() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 100  # the package itself, not an empty folder
    over = {
        str(m.relative_to(PACKAGE.parent)): n
        for m in modules
        if (n := len(m.read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert not over, f"split these by what they do: {over}"


BENCHMARKS = PACKAGE.parent / "benchmarks"
SCRIPT_LINES = 400


def test_no_benchmark_module_is_over_400_lines() -> None:
    scripts = sorted(BENCHMARKS.glob("*.py"))
    assert len(scripts) > 40  # the benchmarks themselves, not an empty folder
    over = {
        s.name: n for s in scripts if (n := len(s.read_text(encoding="utf-8").splitlines())) > SCRIPT_LINES
    }
    assert not over, f"split these by what they do: {over}"


# What KnowledgeBase offers its adapters: building, answering, and one attribute per family of
# reads and writes (kb.reads, kb.proposals, kb.queries, kb.use_cases, kb.served). A new
# operation joins its family's facet, not this list.
KNOWLEDGE_BASE = {
    "analyze",
    "ask",
    "build",
    "close",
    "components",
    "evaluate",
    "proposals",
    "queries",
    "reads",
    "refresh",
    "retrieve",
    "retrieve_logged",
    "root",
    "search",
    "served",
    "settings",
    "slice_for",
    "status",
    "store",
    "use_cases",
}


def test_the_knowledge_base_offers_what_its_adapters_use(tmp_path: Path) -> None:
    from kbc.domain.settings import Settings
    from kbc.services.knowledge import KnowledgeBase

    kb = KnowledgeBase(tmp_path, settings=Settings(embed_model="none"))
    try:
        public = {name for name in dir(kb) if not name.startswith("_")}
    finally:
        kb.close()
    assert public == KNOWLEDGE_BASE


def test_the_benchmarks_import_each_other_without_a_cycle() -> None:
    import ast

    import networkx as nx

    names = {s.stem for s in BENCHMARKS.glob("*.py")}
    graph = nx.DiGraph()
    for script in BENCHMARKS.glob("*.py"):
        graph.add_node(script.stem)
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            imported = (
                [node.module]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            graph.add_edges_from((script.stem, name) for name in imported if name in names)
    assert graph.number_of_edges() > 20  # the scripts' imports were read
    assert not list(nx.simple_cycles(graph))
