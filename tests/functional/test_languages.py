"""A repository of TypeScript, Go, Java, Rust, C and C++ beside Python: every language's
definitions are symbols at their exact spans, with callers and callees across files, units of
their own in the index, and found by the name a task gives them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import RepoFactory

from kbc.cli.main import cli
from kbc.domain.settings import load_settings
from kbc.services.retrieve import open_retriever, profile_named
from kbc.store.facts_store import FactsStore

FILES = {
    "web/src/money.ts": (
        "/** Rounds an amount to whole cents. */\n"
        "export function roundCents(amount: number): number {\n"
        "  return Math.round(amount * 100) / 100;\n"
        "}\n"
    ),
    "web/src/cart.ts": (
        'import { roundCents } from "./money";\n'
        "\n"
        "export class Cart {\n"
        "  private items: number[] = [];\n"
        "\n"
        "  addItem(price: number): void {\n"
        "    this.items.push(price);\n"
        "  }\n"
        "}\n"
        "\n"
        "/** The amount with its sales tax, rounded to cents. */\n"
        "export function priceWithTax(amount: number, rate: number): number {\n"
        "  const tax = roundCents(amount * rate);\n"
        "  return amount + tax;\n"
        "}\n"
    ),
    "svc/main.go": (
        "package main\n"
        "\n"
        "// Serve answers requests until the listener closes.\n"
        "func (s *Server) Serve() error {\n"
        "\treturn s.handle()\n"
        "}\n"
        "\n"
        "func main() {\n"
        "\tNewServer().Serve()\n"
        "}\n"
    ),
    "go.mod": "module example.com/shop\n\ngo 1.22\n",
    "svc/store/store.go": "package store\n\n// Open opens the store.\nfunc Open() error { return nil }\n",
    "svc/tool/tool.go": (
        "package tool\n"
        "\n"
        'import (\n\t"example.com/shop/svc/store"\n\tother "github.com/other/store"\n)\n'
        "\n"
        "func Run() error { other.Open(); return store.Open() }\n"
    ),
    "svc/server.go": (
        "package main\n"
        "\n"
        "// Server holds the listener.\n"
        "type Server struct {\n"
        "\tAddr string\n"
        "}\n"
        "\n"
        "func NewServer() *Server { return &Server{} }\n"
        "\n"
        "func (s *Server) handle() error { return nil }\n"
    ),
    "api/src/main/java/com/shop/Checkout.java": (
        "package com.shop;\n"
        "\n"
        "import com.shop.Tax;\n"
        "\n"
        "/** Totals an order. */\n"
        "public class Checkout {\n"
        "    public double total(double net) {\n"
        "        return Tax.apply(net);\n"
        "    }\n"
        "}\n"
    ),
    "api/src/main/java/com/shop/Tax.java": (
        "package com.shop;\n"
        "\n"
        "public class Tax {\n"
        "    public static double apply(double net) {\n"
        "        return net * 1.2;\n"
        "    }\n"
        "}\n"
    ),
    "core/src/lib.rs": (
        "/// A ledger of postings.\n"
        "#[derive(Debug, Default)]\n"
        "pub struct Ledger {\n"
        "    total: i64,\n"
        "}\n"
        "\n"
        "impl Ledger {\n"
        "    pub fn post(&mut self, amount: i64) {\n"
        "        self.total += amount;\n"
        "        self.balance();\n"
        "    }\n"
        "\n"
        "    fn balance(&self) -> i64 {\n"
        "        self.total\n"
        "    }\n"
        "}\n"
    ),
    "native/hash.c": (
        '#include "hash.h"\n'
        "\n"
        "static unsigned mix(unsigned h) { return h * 31; }\n"
        "\n"
        "unsigned hash_bytes(const char *s) {\n"
        "    unsigned h = 0;\n"
        "    while (*s) h = mix(h) + *s++;\n"
        "    return h;\n"
        "}\n"
    ),
    "native/shape.cpp": (
        "namespace geo {\nclass Shape {\n public:\n  double area() const { return 0; }\n};\n}\n"
    ),
    "shop/app.py": "def checkout(cart):\n    return sum(cart)\n",
    "db/schema.sql": "CREATE TABLE orders (id INTEGER PRIMARY KEY);\n",
}

# name -> (qname, path, start, end)
EXPECTED = {
    "roundCents": ("web.src.money.roundCents", "web/src/money.ts", 2, 4),
    "Cart.addItem": ("web.src.cart.Cart.addItem", "web/src/cart.ts", 6, 8),
    "priceWithTax": ("web.src.cart.priceWithTax", "web/src/cart.ts", 12, 15),
    "Server.Serve": ("svc.main.Server.Serve", "svc/main.go", 4, 6),
    "Server": ("svc.server.Server", "svc/server.go", 4, 6),
    "Checkout.total": (
        "api.src.main.java.com.shop.Checkout.Checkout.total",
        "api/src/main/java/com/shop/Checkout.java",
        7,
        9,
    ),
    "Ledger": ("core.src.lib.Ledger", "core/src/lib.rs", 2, 5),
    "Ledger.post": ("core.src.lib.Ledger.post", "core/src/lib.rs", 8, 11),
    "hash_bytes": ("native.hash.hash_bytes", "native/hash.c", 5, 9),
    "Shape.area": ("native.shape.geo.Shape.area", "native/shape.cpp", 4, 4),
    "checkout": ("shop.app.checkout", "shop/app.py", 1, 2),
}
CALLS = {  # caller -> a callee it must reach, resolved across files where the names say so
    "Server.Serve": "svc.server.Server.handle",
    "priceWithTax": "web.src.money.roundCents",
    "Checkout.total": "api.src.main.java.com.shop.Tax.Tax.apply",
    "Ledger.post": "core.src.lib.Ledger.balance",
    "hash_bytes": "native.hash.mix",
}


def invoke(*args: str) -> str:
    """What the command prints on stdout (progress and notices go to stderr)."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def polyglot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from helpers import repo_factory

    make: RepoFactory = repo_factory(tmp_path_factory.mktemp("polyglot"))
    root = make(FILES)
    invoke("-c", "index.embed_model=none", "build", str(root), "--no-llm")
    return root


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_languages_definitions_are_symbols_at_their_exact_spans(polyglot: Path, name: str) -> None:
    qname, path, start, end = EXPECTED[name]
    reports = json.loads(invoke("symbols", name, "--repo", str(polyglot), "--format", "json"))
    found = {r["symbol"]["qname"]: r for r in reports}
    assert qname in found, sorted(found)
    assert found[qname]["location"] == f"{path}:{start}-{end}"
    if name in CALLS:
        assert CALLS[name] in {c["qname"] for c in found[qname]["callees"]}


def symbol(root: Path, qname: str) -> dict:  # type: ignore[type-arg]
    (report,) = json.loads(invoke("symbols", qname, "--repo", str(root), "--format", "json"))
    return report  # type: ignore[no-any-return]


def test_a_go_main_is_an_entry_point_and_docs_come_from_comments(polyglot: Path) -> None:
    serve = symbol(polyglot, "svc.main.Server.Serve")
    assert serve["symbol"]["doc"] == "Serve answers requests until the listener closes."
    assert serve["symbol"]["signature"] == "func (s *Server) Serve() error"
    main = symbol(polyglot, "svc.main.main")
    assert {c["qname"] for c in main["callees"]} == {"svc.main.Server.Serve", "svc.server.NewServer"}
    analysis = json.loads(invoke("analyze", str(polyglot), "--format", "json"))
    assert analysis["failed"] == 0
    entries = {(e.kind, e.target) for f in FactsStore(polyglot / ".kbc").facts() for e in f.entry_points}
    assert ("main", "svc.main.main") in entries
    languages = {f.path: f.language for f in FactsStore(polyglot / ".kbc").facts()}
    assert languages["web/src/cart.ts"] == "typescript" and languages["shop/app.py"] == "python"
    assert "db/schema.sql" not in languages


def test_go_imports_follow_go_mod_and_a_method_is_a_member_of_its_type_in_another_file(
    polyglot: Path,
) -> None:
    facts = {f.path: f for f in FactsStore(polyglot / ".kbc").facts()}
    imports = {i.module: i for i in facts["svc/tool/tool.go"].imports}
    assert (imports["example.com/shop/svc/store"].kind, imports["example.com/shop/svc/store"].target) == (
        "internal",
        "svc.store.store",
    )
    other = imports["github.com/other/store"]  # a dependency, though a folder of the repository ends so
    assert (other.kind, other.distribution) == ("external", "github.com/other/store")
    (serve,) = [s for s in facts["svc/main.go"].symbols if s.name == "Serve"]
    assert serve.parent == "svc.server.Server"  # the type, in svc/server.go
    assert "svc.store.store.Open" in {c["qname"] for c in symbol(polyglot, "svc.tool.tool.Run")["callees"]}


def test_a_task_naming_a_typescript_function_gets_that_function_as_a_unit_of_its_own(polyglot: Path) -> None:
    retriever = open_retriever(polyglot, load_settings(polyglot))
    ranking = retriever.search(
        "priceWithTax adds the tax twice for a zero rate", profile_named(polyglot, "implementation")
    )
    best = ranking.chunks[ranking.ranked[0][0]]
    assert (best.path, best.start_line, best.end_line) == ("web/src/cart.ts", 11, 15)  # with its doc comment
    assert best.symbols == ("web.src.cart.priceWithTax",) and best.unit == "function"


def test_a_language_without_rules_keeps_line_windows(polyglot: Path) -> None:
    retriever = open_retriever(polyglot, load_settings(polyglot))
    ranking = retriever.search("CREATE TABLE orders", profile_named(polyglot, "implementation"))
    sql = [ranking.chunks[cid] for cid, _ in ranking.ranked if ranking.chunks[cid].path == "db/schema.sql"]
    assert sql and all(c.unit == "window" and not c.symbols for c in sql)
