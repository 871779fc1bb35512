"""Ranking: profile weights, the graph lift, duplicates dropped, determinism."""

from dataclasses import replace

import networkx as nx
import pytest

from kbc.domain.models import Chunk
from kbc.retrieval import rank as rank_module
from kbc.retrieval.profiles import load_profiles
from kbc.retrieval.rank import FileGraph, expand, fuse, rank, spread

PROFILE = load_profiles()["implementation"]


def hits(ids: list[str]) -> list[tuple[str, float]]:
    """Lexical hits with falling scores."""
    return [(cid, float(len(ids) - i)) for i, cid in enumerate(ids)]


def chunk(cid: str, path: str, text: str, kind: str = "code", role: str = "source") -> Chunk:
    return Chunk(cid, path, 1, 10, kind, "python", text, role=role)  # type: ignore[arg-type]


def test_personalised_pagerank_matches_networkx() -> None:
    graph = nx.Graph()
    graph.add_weighted_edges_from([("a", "b", 1.0), ("b", "c", 2.0), ("c", "d", 1.0), ("e", "f", 1.0)])
    graph.add_node("lonely")
    links = {(a, b): w for a, b, w in graph.edges(data="weight")}
    ours = FileGraph(graph.nodes, links).personalised({"a": 2.0, "d": 1.0})
    reference = nx.pagerank(graph, personalization={"a": 2.0, "d": 1.0}, weight="weight")
    top = max(reference.values())
    for node, value in reference.items():
        # networkx stops at a tolerance of 1e-6 per node
        assert ours.get(node, 0.0) == pytest.approx(value / top, abs=1e-4)


def test_tests_and_docs_weigh_less_than_code_for_implementation() -> None:
    chunks = {
        "t": chunk("t", "tests/test_x.py", "a", role="test"),
        "d": chunk("d", "x.md", "b", "doc", role="doc"),
        "c": chunk("c", "x.py", "c"),
    }
    ranked = rank(hits(["t", "d", "c"]), ["t", "d", "c"], [], chunks, PROFILE, None)
    assert [cid for cid, _ in ranked] == ["c", "t", "d"]


def test_the_graph_lifts_neighbours_of_the_best_hits() -> None:
    files = FileGraph(["core.py", "other.py"], {("core.py", "helper.py"): 3.0})
    chunks = {
        "core": chunk("core", "core.py", "x"),
        "other": chunk("other", "other.py", "y"),
        "helper": chunk("helper", "helper.py", "z"),
    }
    lexical = hits(["core", "other", "helper"])
    without = [cid for cid, _ in rank(lexical, [], [], chunks, PROFILE, None)]
    lifted = [cid for cid, _ in rank(lexical, [], [], chunks, PROFILE, files)]
    assert without == ["core", "other", "helper"]
    assert lifted == ["core", "helper", "other"]


def test_the_transition_matrix_is_the_one_networkx_builds() -> None:
    """The graph is built without networkx at serving time; its matrix must be networkx's."""
    graph = nx.Graph()
    graph.add_weighted_edges_from([("b", "a", 1.5), ("a", "c", 2.0), ("c", "c", 1.0), ("d", "e", 0.5)])
    graph.add_node("f")
    nodes = sorted(graph)
    expected = nx.to_scipy_sparse_array(graph, nodelist=nodes, weight="weight", format="csr")
    ours = FileGraph(graph.nodes, {(a, b): w for a, b, w in graph.edges(data="weight")})
    assert ours.nodes == nodes
    ours_rows = ours.transition.T.tocsr()  # back from column-stochastic to the rows' order
    scale = expected.sum(axis=1)
    assert (abs(ours_rows.toarray() * scale[:, None] - expected.toarray()) < 1e-12).all()


def test_duplicate_text_keeps_only_the_better_chunk() -> None:
    chunks = {
        "a": chunk("a", "vendor/x.py", "def f():\n    return 1\n"),
        "b": chunk("b", "x.py", "def f():  \n    return 1"),
    }
    assert [cid for cid, _ in rank(hits(["a", "b"]), [], [], chunks, PROFILE, None)] == ["a"]


def test_what_the_query_names_is_a_third_ranked_list() -> None:
    chunks = {c: chunk(c, f"{c}.py", c) for c in "abcd"}
    plain = [cid for cid, _ in rank(hits(["a", "b", "c"]), [], [], chunks, PROFILE, None)]
    named = [cid for cid, _ in rank(hits(["a", "b", "c"]), [], ["c", "d"], chunks, PROFILE, None)]
    assert plain == ["a", "b", "c"]
    assert named[0] == "c" and "d" in named  # named alone, still a candidate


def test_a_file_that_many_hits_come_from_outranks_one_lucky_unit() -> None:
    chunks = {
        "lucky": chunk("lucky", "other.py", "x"),
        **{
            f"f{i}": Chunk(f"f{i}", "topic.py", 10 * i, 10 * i + 5, "code", "python", str(i))
            for i in range(4)
        },
    }
    lexical = [("lucky", 9.0), ("f0", 8.9), ("f1", 8.0), ("f2", 7.0), ("f3", 6.0)]
    assert [cid for cid, _ in rank(lexical, [], [], chunks, PROFILE, None)][:2] == ["f0", "lucky"]


def test_a_view_takes_file_evidence_as_a_file_of_its_own() -> None:
    chunks = {
        "view": chunk("view", "@views/architecture.md", "layers", kind="view"),
        "code": chunk("code", "shop/orders.py", "orders"),
    }
    fused = fuse([("view", 5.0), ("code", 4.0)], [], [], chunks)
    assert fused["view"] > fused["code"]  # the better lexical hit, whatever its kind


def test_the_files_past_commits_like_the_task_changed_count_as_one_more_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chunks = {
        "first": chunk("first", "a.py", "x"),
        "second": chunk("second", "b.py", "x"),
        "third": chunk("third", "c.py", "x"),
    }
    lexical = [("first", 3.0), ("second", 2.9), ("third", 2.8)]
    monkeypatch.setattr(rank_module, "PRECEDENT_WEIGHT", 0.5)
    plain = fuse(lexical, [], [], chunks)
    credited = fuse(lexical, [], [], chunks, {"b.py": 0.5, "c.py": 0.2, "elsewhere.py": 0.9})
    assert max(credited, key=lambda c: credited[c]) == "second"
    # a file no search found gains nothing from its credit: only found units are ranked
    assert set(credited) == set(plain) and credited["first"] == plain["first"]
    monkeypatch.setattr(rank_module, "PRECEDENT_WEIGHT", 0.0)
    assert fuse(lexical, [], [], chunks, {"b.py": 0.5}) == plain


def spanned(cid: str, path: str, start: int, end: int) -> Chunk:
    return Chunk(cid, path, start, end, "code", "python", cid, role="source")  # type: ignore[arg-type]


def test_the_best_files_bring_their_other_units_nearest_first() -> None:
    chunks = {
        c.id: c
        for c in [
            spanned("a.f", "a.py", 10, 20),
            spanned("a.g", "a.py", 22, 30),
            spanned("a.h", "a.py", 80, 90),
            spanned("a.k", "a.py", 1, 5),
            spanned("b.f", "b.py", 1, 9),
            spanned("c.f", "c.py", 1, 9),
        ]
    }
    ranked = [("a.f", 1.0), ("b.f", 0.9)]
    units = {
        "a.py": [("a.k", 1, 5), ("a.f", 10, 20), ("a.g", 22, 30), ("a.h", 80, 90)],
        "c.py": [("c.f", 1, 9)],
    }  # a file not in the ranking brings nothing
    expanded = expand(ranked, chunks, units, share=0.5)
    order = [cid for cid, _ in expanded]
    assert order[:2] == ["a.f", "b.f"]  # what the searches found keeps its place
    assert order[2:] == ["a.g", "a.k", "a.h"]  # then the rest of a.py, nearest the found unit first
    assert dict(expanded)["a.g"] == pytest.approx(0.5)
    assert "c.f" not in order
    assert expand(ranked, chunks, units, share=0.0) == ranked


def test_packing_takes_the_head_of_each_leading_file_first() -> None:
    chunks = {
        c.id: c
        for c in [
            spanned("a.f", "a.py", 1, 9),
            spanned("a.g", "a.py", 10, 19),
            spanned("a.h", "a.py", 20, 29),
            spanned("b.f", "b.py", 1, 9),
            spanned("b.g", "b.py", 10, 19),
            spanned("c.f", "c.py", 1, 9),
            spanned("d.f", "d.py", 1, 9),
        ]
    }
    chunks["v"] = Chunk("v", "@views/module/a.md", 1, 9, "view", "markdown", "v")  # type: ignore[arg-type]
    ranked = [
        ("a.f", 0.9),
        ("a.g", 0.8),
        ("v", 0.75),
        ("a.h", 0.7),
        ("b.f", 0.6),
        ("b.g", 0.5),
        ("c.f", 0.4),
        ("d.f", 0.3),
    ]
    order = [cid for cid, _ in spread(ranked, chunks, files=3)]
    # the best unit of each of the first three repository files, in rank order, then the rest
    assert order == ["a.f", "b.f", "c.f", "a.g", "v", "a.h", "b.g", "d.f"]
    assert sorted(spread(ranked, chunks, files=3)) == sorted(ranked)  # scores kept, nothing lost
    assert spread(ranked, chunks, files=0) == ranked
    assert spread(ranked, chunks, files=1) == ranked  # the first file's head leads already


def test_a_small_budget_keeps_the_first_files_own_units() -> None:
    sizes = {"a.f": 300, "a.g": 200, "b.f": 200, "c.f": 400}
    chunks = {
        cid: replace(spanned(cid, f"{cid[0]}.py", 1 + 10 * i, 9 + 10 * i), tokens=tokens)
        for i, (cid, tokens) in enumerate(sizes.items())
    }
    ranked = [("a.f", 0.9), ("a.g", 0.8), ("b.f", 0.6), ("c.f", 0.4)]

    def order(budget: int) -> list[str]:
        return [cid for cid, _ in spread(ranked, chunks, files=3, budget=budget, share=0.5)]

    # the heads moved ahead take at most half the budget, with the first file's head
    assert order(2000) == ["a.f", "b.f", "c.f", "a.g"]  # 900 <= 1000
    assert order(1000) == ["a.f", "b.f", "a.g", "c.f"]  # 500 <= 500; with c.f 900 would not
    assert order(800) == ["a.f", "a.g", "b.f", "c.f"]  # 500 > 400: rank order
    assert spread(ranked, chunks, files=3, budget=2000, share=0.0) == ranked
    unbounded = [cid for cid, _ in spread(ranked, chunks, files=3, share=0.0)]
    assert unbounded == ["a.f", "b.f", "c.f", "a.g"]  # no budget: no cap


def test_a_profile_retrieves_only_its_view_kinds() -> None:
    import dataclasses

    chunks = {
        "w": chunk("w", "@views/workflow/pkg.run.md", "a", "view", role="doc"),
        "a": chunk("a", "@views/architecture.md", "b", "view", role="doc"),
        "c": chunk("c", "x.py", "c"),
    }
    lexical = hits(["w", "a", "c"])
    assert {cid for cid, _ in rank(lexical, [], [], chunks, PROFILE, None)} == {"w", "a", "c"}
    only = dataclasses.replace(PROFILE, view_kinds=("architecture",))
    assert [cid for cid, _ in rank(lexical, [], [], chunks, only, None)] == ["c", "a"]


def test_the_code_a_view_cites_is_lifted_at_the_profiles_cited_weight() -> None:
    import dataclasses

    from kbc.retrieval.rank import citations, finish

    text = "Runs `pkg.run` (src/pkg/run.py:3-9); then src/pkg/store.py:40 and src/pkg/run.py:3-9 again."
    assert citations(text) == [("src/pkg/run.py", 3, 9), ("src/pkg/store.py", 40, 40)]
    chunks = {
        "v": chunk("v", "@views/workflow/pkg.run.md", text, "view", role="doc"),
        "x": chunk("x", "src/pkg/other.py", "x"),
        "run": chunk("run", "src/pkg/run.py", "r"),
    }
    fused = {"v": 0.03, "x": 0.02, "run": 0.01}
    plain = [cid for cid, _ in finish(fused, [], chunks, PROFILE, None, cited=["run"])]
    lifted = [
        cid
        for cid, _ in finish(fused, [], chunks, dataclasses.replace(PROFILE, cited=1.0), None, cited=["run"])
    ]
    assert PROFILE.cited == 0.0 and plain.index("run") > plain.index("x")
    assert lifted.index("run") < lifted.index("x")


def test_a_views_citations_are_followed_at_the_rows_the_task_is_about_first() -> None:
    from kbc.index.tokens import tokens
    from kbc.retrieval.rank import citations

    table = "\n".join(
        [
            "| `pkg.core.Context` | class | src/pkg/core.py:10-90 | Holds the state of one run. |",
            "| `pkg.core.Command` | class | src/pkg/core.py:95-300 | A command line program. |",
            "| `pkg.decorators.option` | function | src/pkg/decorators.py:40-60 | Attaches an option. |",
            "| `pkg.decorators.command` | function | src/pkg/decorators.py:5-30 | Makes a command. |",
        ]
    )
    assert citations(table, limit=2) == [("src/pkg/core.py", 10, 90), ("src/pkg/core.py", 95, 300)]
    asked = frozenset(tokens("how do the decorators attach an option to a command?"))
    assert citations(table, limit=2, terms=asked) == [
        ("src/pkg/decorators.py", 40, 60),
        ("src/pkg/decorators.py", 5, 30),
    ]
    # rows sharing as many of the words keep the order they are cited in
    assert citations(table, terms=frozenset({"nothing"})) == citations(table)


def test_shipped_profiles_follow_the_views_ablation() -> None:
    """benchmarks/RESULTS.md, "What views add to retrieval": the code that shows the
    architecture before its docs, and the code the best views cite followed."""
    shipped = load_profiles()
    for name in ("architecture", "story-breakdown"):
        profile = shipped[name]
        assert profile.code >= profile.views >= profile.docs and profile.cited > 0
    assert shipped["implementation"].cited == 0.0  # measured: it cost one instance of the dev split


def test_a_file_of_many_units_is_weighed_near_its_found_units_only() -> None:
    """A generated file of 20,000 one-line functions: the ranking joins in (and reads) the units
    nearest the ones the searches found, and the ones the searches scored, not all of them."""
    from kbc.retrieval.around import expanded
    from kbc.retrieval.matched import Located
    from kbc.retrieval.rank import UNITS_NEAR, nearest_units

    path = "app/generated.py"
    every = [Located(line, line, f"u{line}", (f"f{line}",), "function") for line in range(1, 20_001)]
    found = {
        cid: Chunk(cid, path, int(cid[1:]), int(cid[1:]), "code", "python", "def f(): 0")
        for cid in ("u12000", "u3")
    }
    read: list[str] = []

    def load(ids: list[str]) -> dict[str, Chunk]:
        read.extend(ids)
        return {
            cid: Chunk(cid, path, int(cid[1:]), int(cid[1:]), "code", "python", "def f(): 0") for cid in ids
        }

    chunks = dict(found)
    ranked = expanded([("u12000", 1.0), ("u3", 0.5)], chunks, {"u19999": 3.0}, None, {path: every}, load)
    assert UNITS_NEAR - 2 <= len(read) <= UNITS_NEAR + 4  # the two found are read already
    joined = {cid for cid, _ in ranked}
    assert {"u11999", "u12001", "u1", "u19999"} <= joined and "u8000" not in joined
    near = nearest_units([(u.id, u.start, u.end) for u in every], [(12_000, 12_000)], {"u5"}, limit=10)
    assert [u[0] for u in near] == ["u5", *(f"u{line}" for line in range(11_995, 12_006))]
    assert nearest_units([("a", 1, 1), ("b", 2, 2)], [], limit=10) == [("a", 1, 1), ("b", 2, 2)]
