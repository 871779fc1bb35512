"""The definitions around a definition: callees in call order, overrides, callers."""

from __future__ import annotations

from kbc.analyzers.link import link
from kbc.analyzers.python.analyze import analyze_source
from kbc.domain.models import AnalysisOk, AnalysisTask, Chunk, FileFacts
from kbc.graph.build import build_graph
from kbc.graph.symbols import SymbolTable
from kbc.retrieval.neighbours import SymbolNeighbours
from kbc.retrieval.profiles import load_profiles
from kbc.retrieval.rank import finish

SOURCES = {
    "shop/payments.py": (
        "def reverse_charge(charge_id):\n    return charge_id\n\n\ndef audit(x):\n    return x\n"
    ),
    "shop/refunds.py": (
        "from shop.payments import audit, reverse_charge\n\n\n"
        "def refund(order):\n    audit(order)\n    return reverse_charge(order)\n\n\n"
        "def refund_all(orders):\n    return [refund(o) for o in orders]\n"
    ),
    "shop/base.py": "class Gateway:\n    def send(self, x):\n        return x\n\n    def __init__(self):\n"
    "        pass\n",
    "shop/stripe.py": "from shop.base import Gateway\n\n\nclass Stripe(Gateway):\n    def send(self, x):\n"
    "        return x\n\n    def __init__(self):\n        pass\n",
}


def facts() -> list[FileFacts]:
    out = []
    for path, text in sorted(SOURCES.items()):
        task = AnalysisTask(path, path, path[:-3].replace("/", "."), False)
        result = analyze_source(text.encode(), task)
        assert isinstance(result, AnalysisOk)
        out.append(result.facts)
    return list(link(out))


def neighbours() -> SymbolNeighbours:
    files = facts()
    return SymbolNeighbours(build_graph(files, 1000, 1000), files, SymbolTable(files))


def test_callees_in_call_order_then_callers_and_overrides_both_ways() -> None:
    near = neighbours()
    assert near.around(["shop.refunds.refund"]) == [
        "shop.payments.audit",
        "shop.payments.reverse_charge",
        "shop.refunds.refund_all",
    ]
    assert near.around(["shop.stripe.Stripe.send"]) == ["shop.base.Gateway.send"]
    assert near.around(["shop.base.Gateway.send"]) == ["shop.stripe.Stripe.send"]
    assert near.around(["shop.base.Gateway.__init__"]) == []  # dunders are not overrides worth lifting
    # a seed is never its own neighbour, nor another seed's
    assert near.around(["shop.refunds.refund", "shop.payments.audit"]) == [
        "shop.payments.reverse_charge",
        "shop.refunds.refund_all",
    ]


def test_the_neighbours_of_the_seeds_are_fused_in_at_the_graph_weight() -> None:
    profile = load_profiles()["implementation"]
    chunks = {c: Chunk(c, f"{c}.py", 1, 5, "code", "python", c) for c in ("seed", "other", "callee")}
    fused = {"seed": 0.05, "other": 0.02}
    plain = [cid for cid, _ in finish(fused, [], chunks, profile, None)]
    lifted = finish(fused, ["callee"], chunks, profile, None)
    assert plain == ["seed", "other"]
    assert [cid for cid, _ in lifted] == ["seed", "other", "callee"]
    assert dict(lifted)["callee"] == profile.graph / 61
