"""`kbc build` then `kbc retrieve`, with the real embedding model and Chroma."""

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import LEXICAL, git, write_tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbc.cli.main import cli
from kbc.domain.errors import KbcError
from kbc.index.retired import retired_units
from kbc.index.vectors import open_vector_store

SHOP = {
    "shop/__init__.py": '"""A small shop: carts, payments and refunds."""\n',
    "shop/cart.py": '''
        """Shopping carts."""
        from shop.pricing import total_price


        class Cart:
            """Items a customer is about to buy."""

            def __init__(self):
                self.items = []

            def add(self, sku, quantity):
                if quantity <= 0:
                    raise ValueError("quantity must be positive")
                self.items.append((sku, quantity))

            def checkout(self):
                return total_price(self.items)
    ''',
    "shop/pricing.py": '''
        """Prices, discounts and taxes."""
        TAX_RATE = 0.2


        def total_price(items):
            """Sum the items and apply tax."""
            subtotal = sum(quantity * 10 for _, quantity in items)
            return subtotal * (1 + TAX_RATE)
    ''',
    "shop/refunds.py": '''
        """Refunds are validated before money goes back."""
        from shop.payments import reverse_charge

        MAX_REFUND_DAYS = 30


        def validate_refund(order, days_since_purchase):
            """A refund is allowed within MAX_REFUND_DAYS of purchase, once."""
            if days_since_purchase > MAX_REFUND_DAYS:
                raise ValueError("refund window closed")
            if order.refunded:
                raise ValueError("already refunded")
            return True


        def refund(order, days):
            validate_refund(order, days)
            return reverse_charge(order.charge_id)
    ''',
    "shop/payments.py": '''
        """Payment provider calls."""
        import os

        API_KEY = os.environ.get("PAYMENTS_API_KEY")


        def reverse_charge(charge_id):
            return {"reversed": charge_id}
    ''',
    "docs/refunds.md": """
        # Refunds

        Customers may ask for their money back.

        ## Rules

        A refund is possible within thirty days, and only once per order.
    """,
    "README.md": "# Shop\n\nA demo shop.\n",
}

PLANTED = {
    "deploy/settings.py": """
        AWS_ACCESS_KEY_ID = "AKIAUJZDEGXDNCF32EPF"
        AWS_SECRET_ACCESS_KEY = "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"
        GITHUB_TOKEN = "ghp_R8vKq2LmZt5Yx9Wn3Hb7Jc1Pd4Fs6Ga0Eu2Q"
        SLACK_WEBHOOK = "https://hooks.slack.com/services/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"

        def connect(password="Vq7-Lm2x-R9tK-wZ4p"):
            return password
    """,
    "deploy/key.pem": (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        "5+7nYV7zXzDkm0guFcrnUAcgHhJhew/tp+Fkd5b/AivqjtAqgqF1kw8jN803lMUi\n"
        "CABtaxrwwMvWJWWKrCyfqgfRPER+MwUe7vlaYOVhQ9bEO8rXbACKmwprX8kzFUpt\n"
        "-----END RSA PRIVATE KEY-----\n"
    ),
    "deploy/.env": "DATABASE_PASSWORD=hunter2isnotgood\nDEBUG=true\n",
}
SECRET_VALUES = [
    "AKIAUJZDEGXDNCF32EPF",
    "2hpChYgCfrL1spNxnyVmihA+2O76UMFxFkM+R5Kj",
    "ghp_R8vKq2LmZt5Yx9Wn3Hb7Jc1Pd4Fs6Ga0Eu2Q",
    "T0H60KVJ5/B00CE9UVW/MFLZDe1f8rESQedUStPKR0Cs",
    "5+7nYV7zXzDkm0guFcrnUAcgHhJhew/tp+Fkd5b/AivqjtAqgqF1kw8jN803lMUi",
    "hunter2isnotgood",
    "Vq7-Lm2x-R9tK-wZ4p",
]


def invoke(*args: str) -> str:
    """What the command prints on stdout (progress and notices go to stderr)."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def make_shop(root: Path, extra: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True)
    write_tree(root, {**SHOP, **(extra or {})})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "shop")
    return root


def retrieve_json(root: Path, text: str, *extra: str) -> dict:  # type: ignore[type-arg]
    return retrieve_json_with((), root, text, *extra)


def retrieve_json_with(config: tuple[str, ...], root: Path, text: str, *extra: str) -> dict:  # type: ignore[type-arg]
    """``kbc -c …`` (``config``) ``retrieve --format json``."""
    return json.loads(invoke(*config, "retrieve", "--repo", str(root), "--format", "json", *extra, text))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_shop(tmp_path_factory.mktemp("shop") / "repo", PLANTED)
    summary = json.loads(invoke("build", str(root), "--format", "json", "--workers", "1"))
    assert summary["index"]["retrieval"] == "hybrid"
    passes = summary["passes"]  # where the build's time and memory went, every pass in order
    assert [p["name"] for p in passes] == [
        "discover",
        "secrets",
        "analyze",
        "graph",
        "store facts",
        "views",
        "load embedder",
        "chunk",
        "lexical index",
        "embed",
        "vector store",
        "vector snapshot",
        "publish",
    ]
    assert all(p["seconds"] >= 0 for p in passes) and passes[-1]["peak_rss_mb"] > 0
    assert sorted(p["peak_rss_mb"] for p in passes) == [p["peak_rss_mb"] for p in passes]  # a peak only grows
    return root


@pytest.mark.slow
def test_retrieve_returns_the_json_contract_with_exact_ranges(shop: Path) -> None:
    data = retrieve_json(shop, "how are refunds validated?", "--budget", "2000")
    assert set(data) == {
        "use_case",
        "budget",
        "tokens",
        "fingerprint",
        "retrieval",
        "note",
        "confidence",
        "low_confidence",
        "relevance",
        "matched",
        "items",
        "text",
    }
    assert data["note"] == ""  # every vector is in
    assert (data["use_case"], data["budget"], data["retrieval"]) == ("implementation", 2000, "hybrid")
    assert 0 <= data["confidence"] <= 1 and data["low_confidence"] is False
    assert f"· confidence {data['confidence']:.2f}" in data["text"].splitlines()[0]
    assert data["tokens"] <= 2000
    first = data["items"][0]
    assert set(first) == {"id", "path", "start_line", "end_line", "kind", "score", "tokens"}
    assert first["path"] == "shop/refunds.py"
    assert f"### shop/refunds.py:{first['start_line']}-" in data["text"]
    assert "def validate_refund(order, days_since_purchase):" in data["text"]
    # Items are in printed order: files by their best block, a file's blocks by line.
    order: list[str] = []
    for item in data["items"]:
        if item["path"] not in order:
            order.append(item["path"])
        else:
            assert order[-1] == item["path"], "a file's blocks are printed together"
    best = {p: max(i["score"] for i in data["items"] if i["path"] == p) for p in order}
    assert [best[p] for p in order] == sorted(best.values(), reverse=True)
    for before, after in zip(data["items"], data["items"][1:], strict=False):
        if before["path"] == after["path"]:
            assert before["end_line"] + 1 < after["start_line"], "no line twice, no touching blocks"


@pytest.mark.slow
def test_the_same_request_gives_the_same_bytes_even_after_a_rebuild(shop: Path, tmp_path: Path) -> None:
    args = ("retrieve", "--repo", str(shop), "--use-case", "review", "--format", "json", "refund rules")
    first = invoke(*args)
    assert invoke(*args) == first
    copy = make_shop(tmp_path / "copy", PLANTED)
    invoke("build", str(copy), "--workers", "2")
    rebuilt = invoke(
        "retrieve", "--repo", str(copy), "--use-case", "review", "--format", "json", "refund rules"
    )
    assert json.loads(rebuilt)["text"] == json.loads(first)["text"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(1, 50_000), query=st.text(max_size=80))
def test_no_budget_and_no_query_is_ever_exceeded(shop: Path, budget: int, query: str) -> None:
    from kbc.domain.settings import Settings
    from kbc.services.retrieve import open_retriever, profile_named

    retriever = _retriever(shop, open_retriever, Settings())
    try:
        result = retriever.retrieve(query, profile_named(shop, "implementation"), budget)
    except KbcError as refused:  # below the header: refused, never a cut header
        assert budget < 100 and "smaller than a slice's header" in str(refused)
        return
    assert result.tokens <= budget
    assert retriever.counter.count(result.text) == result.tokens


_OPEN: dict[str, object] = {}


def _retriever(root: Path, opener, settings_obj):  # type: ignore[no-untyped-def]
    key = str(root)
    if key not in _OPEN:
        _OPEN[key] = opener(root, settings_obj)
    return _OPEN[key]


def test_planted_secrets_never_reach_chroma_the_lexical_index_the_facts_or_output(shop: Path) -> None:
    store = shop / ".kbc"
    lexical = sqlite3.connect(store / "index" / "lexical.sqlite")
    indexed = "\n".join(row[0] for row in lexical.execute("SELECT text FROM chunks"))
    indexed += "\n".join(row[0] for row in lexical.execute("SELECT body FROM fts"))
    lexical.close()
    from kbc.index.embed import load_embedder, model_name

    vectors = open_vector_store(
        store / "index", str(shop.resolve()), load_embedder(model_name()), embedder_name=model_name()
    )
    documents = "\n".join(vectors.documents())
    facts = "".join(p.read_text() for p in store.rglob("*.json*"))
    output = "".join(
        invoke("retrieve", "--repo", str(shop), "--budget", "20000", q)
        for q in (
            "aws access key settings",
            "private key",
            "database password",
            "slack webhook github token connect",
        )
    )
    assert "deploy/settings.py" in output and "[REDACTED]" in output
    for value in SECRET_VALUES:
        for where, text in (
            ("lexical", indexed),
            ("chroma", documents),
            ("facts", facts),
            ("output", output),
        ):
            assert value not in text, f"{value} leaked into {where}"
            assert value.lower() not in text.lower(), f"{value} leaked into {where} (tokens)"


@pytest.mark.slow
def test_changed_and_deleted_files_leave_no_stale_chunks(tmp_path: Path) -> None:
    root = make_shop(tmp_path / "repo")
    invoke("build", str(root), "--workers", "1")
    (root / "shop" / "pricing.py").write_text('"""Prices."""\nTAX_RATE = 0.25\n')
    (root / "docs" / "refunds.md").unlink()
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "shrink")
    summary = json.loads(invoke("build", str(root), "--format", "json", "--workers", "1"))["index"]
    assert (summary["changed_files"], summary["removed_files"]) == (1, 1)
    lexical = sqlite3.connect(root / ".kbc" / "index" / "lexical.sqlite")
    rows = lexical.execute("SELECT path, start_line, end_line, text, id FROM chunks ORDER BY path").fetchall()
    fts_rows = lexical.execute("SELECT COUNT(*) FROM fts").fetchone()[0]
    lexical.close()
    assert "docs/refunds.md" not in {r[0] for r in rows}
    assert [r[1:3] for r in rows if r[0] == "shop/pricing.py"] == [(1, 2)]
    assert fts_rows == len(rows)
    from kbc.index.embed import load_embedder, model_name

    vectors = open_vector_store(
        root / ".kbc" / "index", str(root.resolve()), load_embedder(model_name()), embedder_name=model_name()
    )
    from kbc.index.exact import load_snapshot

    meta = sqlite3.connect(root / ".kbc" / "index" / "lexical.sqlite")
    (digest,) = meta.execute("SELECT value FROM meta WHERE key = 'vectors'").fetchone()
    meta.close()
    live = load_snapshot(root / ".kbc" / "index", digest)
    assert live is not None and set(live.chunks) <= {r[4] for r in rows}  # what search reads
    held = vectors.vectors(None)
    stale = {unit for unit, (chunk, _) in held.items() if chunk not in set(live.chunks)}
    # the store keeps the vectors no longer needed, retired: searched no more, kept for a switch back
    assert stale and stale == retired_units(root / ".kbc" / "index")
    assert summary["embedded"] >= 1 and summary["removed_units"] == len(stale)
    again = json.loads(invoke("build", str(root), "--format", "json", "--workers", "1"))["index"]
    assert (again["changed_files"], again["embedded"], again["removed_units"]) == (0, 0, 0)


@pytest.mark.slow
def test_vector_search_reads_a_snapshot_equal_to_the_store_or_else_the_store(tmp_path: Path) -> None:
    from kbc.index.embed import load_embedder, model_name
    from kbc.index.exact import SNAPSHOT, load_snapshot, read_store

    root = make_shop(tmp_path / "repo")
    invoke("build", str(root), "--workers", "1")
    (root / "shop" / "pricing.py").write_text('"""Prices."""\nTAX_RATE = 0.25\n')
    git(root, "commit", "-qam", "tax")
    invoke("build", str(root), "--workers", "1")
    index = root / ".kbc" / "index"
    lexical = sqlite3.connect(index / "lexical.sqlite")
    (digest,) = lexical.execute("SELECT value FROM meta WHERE key = 'vectors'").fetchone()
    chunks = {chunk for (chunk,) in lexical.execute("SELECT id FROM chunks")}
    lexical.close()
    snapshot = load_snapshot(index, digest)
    embedder = load_embedder(model_name())
    store = read_store(  # what retrieval reads without the snapshot: the retired vectors left out
        open_vector_store(index, str(root.resolve()), embedder, embedder_name=model_name()),
        embedder.model_id,
        chunks,
        retired_units(index),
    )
    assert snapshot is not None and snapshot.digest == store.digest == digest
    assert (snapshot.units, snapshot.chunks) == (store.units, store.chunks)
    assert snapshot.matrix.tobytes() == store.matrix.tobytes()
    args = ("retrieve", "--repo", str(root), "--format", "json", "how is tax applied to the total?")
    with_snapshot = invoke(*args)
    (index / SNAPSHOT.format(digest=digest)).unlink()
    assert invoke(*args) == with_snapshot
    assert json.loads(with_snapshot)["retrieval"] == "hybrid"
    repaired = json.loads(invoke("refresh", str(root), "--ci"))
    assert (repaired["path"], repaired["reason"]) == (
        "incremental",
        "no file changed, but the exact-search snapshot of the vectors is missing or damaged",
    )
    assert load_snapshot(index, digest) is not None and repaired["build"]["embedded"] == 0


@pytest.mark.slow
def test_a_broken_chroma_store_costs_only_its_vectors_and_build_moves_it_aside(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    write_tree(root, {"shop/__init__.py": "", "shop/refunds.py": SHOP["shop/refunds.py"]})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "shop")
    invoke("build", str(root), "--workers", "1")
    index = root / ".kbc" / "index"
    before = retrieve_json(root, "refund window")
    (index / "chroma" / "chroma.sqlite3").write_bytes(b"not a database")
    assert retrieve_json(root, "refund window") == before  # the snapshot alone serves vector search
    from kbc.index.exact import SNAPSHOT

    for snapshot in index.glob(SNAPSHOT.format(digest="*")):
        snapshot.unlink()
    degraded = retrieve_json(root, "refund window")
    assert degraded["retrieval"] == "lexical" and degraded["items"][0]["path"] == "shop/refunds.py"
    assert "`kbc build` moves it aside" in degraded["text"].splitlines()[0]
    summary = json.loads(invoke("build", str(root), "--format", "json", "--workers", "1"))["index"]
    (aside,) = index.glob("chroma.broken-*")
    assert (aside / "chroma.sqlite3").read_bytes() == b"not a database"
    assert summary["retrieval"] == "hybrid" and summary["embedded"] == summary["units"] > 0
    assert str(aside) in summary["note"]
    assert retrieve_json(root, "refund window")["retrieval"] == "hybrid"


def test_without_the_embedding_model_retrieval_is_lexical_and_says_so(tmp_path: Path) -> None:
    root = make_shop(tmp_path / "repo")
    missing = ("-c", "index.embed_model=no-such/model-anywhere")
    summary = json.loads(invoke(*missing, "build", str(root), "--format", "json", "--workers", "1"))["index"]
    assert summary["retrieval"] == "lexical" and "cannot be loaded" in summary["note"]
    data = retrieve_json_with(missing, root, "refund window", "--budget", "800")
    assert data["retrieval"] == "lexical"
    assert data["text"].startswith("# kbc slice · implementation · budget 800 tokens · retrieval: lexical (")
    assert data["items"][0]["path"] in ("shop/refunds.py", "docs/refunds.md")


def test_a_damaged_lexical_index_is_refused_clearly_and_rebuilt_beside_the_old_one(tmp_path: Path) -> None:
    root = make_shop(tmp_path / "repo")
    invoke(*LEXICAL, "build", str(root), "--workers", "1")
    index = root / ".kbc" / "index"
    (index / "lexical.sqlite").write_bytes(b"torn" * 100)
    refused = CliRunner().invoke(cli, [*LEXICAL, "retrieve", "--repo", str(root), "refund window"])
    assert refused.exit_code == 3
    assert "is damaged" in refused.output and "run `kbc build`" in refused.output
    summary = json.loads(invoke(*LEXICAL, "build", str(root), "--format", "json", "--workers", "1"))["index"]
    (aside,) = index.glob("lexical.sqlite.broken-*")
    assert aside.read_bytes() == b"torn" * 100 and str(aside) in summary["note"]
    assert summary["changed_files"] == summary["files"] > 0
    found = retrieve_json_with(LEXICAL, root, "refund window")
    assert found["items"][0]["path"] in ("shop/refunds.py", "docs/refunds.md")


@pytest.mark.slow
def test_profiles_are_overridable_and_unknown_ones_refused(tmp_path: Path) -> None:
    root = make_shop(tmp_path / "repo", {"kbc.toml": "[profiles.qa]\nbudget = 321\n"})
    invoke("build", str(root), "--workers", "1")
    assert retrieve_json(root, "refunds", "--use-case", "qa")["budget"] == 321
    result = CliRunner().invoke(cli, ["retrieve", "--repo", str(root), "--use-case", "nope", "x"])
    assert result.exit_code == 1 and "no use case named 'nope'" in result.output


def test_retrieve_before_build_says_what_to_do(tmp_path: Path) -> None:
    root = make_shop(tmp_path / "repo")
    result = CliRunner().invoke(cli, ["retrieve", "--repo", str(root), "anything"])
    assert result.exit_code == 1
    assert "no index for" in result.output and "run `kbc build`" in result.output


def test_a_new_chunk_layout_rechunks_every_file_without_leftovers(tmp_path: Path) -> None:
    root = make_shop(tmp_path / "repo")
    first = json.loads(invoke(*LEXICAL, "build", str(root), "--format", "json", "--workers", "1"))["index"]
    layout = ("-c", "index.chunk_lines=4", "-c", "index.chunk_overlap=1")
    second = json.loads(invoke(*LEXICAL, *layout, "build", str(root), "--format", "json", "--workers", "1"))[
        "index"
    ]
    assert second["changed_files"] == second["files"] == first["files"]
    lexical = sqlite3.connect(root / ".kbc" / "index" / "lexical.sqlite")
    texts = [text for (text,) in lexical.execute("SELECT text FROM chunks")]
    fts_rows = lexical.execute("SELECT COUNT(*) FROM fts").fetchone()[0]
    lexical.close()
    # no unit holds more than the limit before its trailing blank lines
    assert max(len(text.rstrip().split("\n")) for text in texts) <= 4
    assert len(texts) == second["chunks"] == fts_rows > first["chunks"]


def test_chunks_carry_their_token_counts_from_the_build(shop: Path) -> None:
    from kbc.index.tokencount import default_counter

    lexical = sqlite3.connect(shop / ".kbc" / "index" / "lexical.sqlite")
    rows = lexical.execute("SELECT tokens, text FROM chunks").fetchall()
    lexical.close()
    counter = default_counter()
    assert rows and all(tokens == counter.count(text) > 0 for tokens, text in rows)


def test_an_index_from_another_kbc_version_is_rebuilt_not_misread(tmp_path: Path) -> None:
    root = make_shop(tmp_path / "repo")
    invoke(*LEXICAL, "build", str(root), "--workers", "1")
    lexical = sqlite3.connect(root / ".kbc" / "index" / "lexical.sqlite")
    lexical.execute("PRAGMA user_version = 1")
    lexical.commit()
    lexical.close()
    refused = CliRunner().invoke(cli, [*LEXICAL, "retrieve", "--repo", str(root), "refunds"])
    assert refused.exit_code == 1 and "written by another kbc version" in refused.output
    rebuilt = json.loads(invoke(*LEXICAL, "build", str(root), "--format", "json", "--workers", "1"))["index"]
    assert rebuilt["changed_files"] == rebuilt["files"]
    assert retrieve_json_with(LEXICAL, root, "refund window")["items"]


@pytest.mark.slow
def test_a_slice_of_real_code_holds_the_definition_that_answers_and_no_line_twice(tmp_path: Path) -> None:
    """The sources of requests (installed with kbc's dependencies), lexical retrieval: the
    redirect-following method that carries cookies is in the slice, every file once, no line
    printed twice."""
    requests = pytest.importorskip("requests")
    import shutil

    root = tmp_path / "requests-src"
    shutil.copytree(
        Path(requests.__file__).parent, root / "requests", ignore=shutil.ignore_patterns("__pycache__")
    )
    invoke(*LEXICAL, "build", str(root), "--no-llm", "--workers", "1")
    data = retrieve_json_with(
        LEXICAL, root, "how are cookies persisted across redirects in a session", "--budget", "4000"
    )
    assert data["tokens"] <= 4000
    source = (root / "requests" / "sessions.py").read_text().splitlines()
    line = next(n for n, text in enumerate(source, 1) if "def resolve_redirects(" in text)
    assert any(
        i["path"] == "requests/sessions.py" and i["start_line"] <= line <= i["end_line"]
        for i in data["items"]
    ), data["items"]
    spans: dict[str, list[tuple[int, int]]] = {}
    for item in data["items"]:
        spans.setdefault(item["path"], []).append((item["start_line"], item["end_line"]))
    for path, found in spans.items():
        assert data["text"].count(f"## {path} (") == 1  # one header per file
        for (_, end), (start, _) in zip(found, found[1:], strict=False):
            assert end + 1 < start  # in line order; no line twice


@pytest.fixture(scope="module")
def lexical_shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_shop(tmp_path_factory.mktemp("lexical-shop") / "repo")
    invoke(*LEXICAL, "build", str(root), "--no-llm", "--workers", "1")
    return root


def test_a_traceback_frame_brings_its_definition_and_the_json_says_what_matched(lexical_shop: Path) -> None:
    task = (
        'Refund crashes:\n  File "/srv/app/site-packages/shop/refunds.py", line 17, in refund\n'
        "AttributeError: 'NoneType' object has no attribute 'charge_id'\n"
    )
    data = retrieve_json_with(LEXICAL, lexical_shop, task, "--budget", "600")
    frame = next(m for m in data["matched"] if m["kind"] == "frame")
    assert frame["how"] == "frame" and frame["targets"] == ["shop.refunds.refund"]
    first = data["items"][0]
    assert first["path"] == "shop/refunds.py"
    assert "def refund(order, days):" in data["text"]


def test_status_reports_what_the_store_holds_and_the_mode_retrieval_will_use(shop: Path) -> None:
    status = json.loads(invoke("status", "--repo", str(shop), "--format", "json"))
    assert status["built"] and status["last_build"]["commit"] == git(shop, "rev-parse", "HEAD").strip()
    assert status["facts"]["files"] == status["last_build"]["tracked"] > 0
    assert status["facts"]["symbols"] > 0 and status["facts"]["failed"] == 0
    assert status["index"]["chunks"] > 0 and status["index"]["embedded"] == status["index"]["units"] > 0
    assert status["retrieval"] == "hybrid" and status["note"] == ""
    assert sum(status["views"].values()) > 0 and "architecture" in status["views"]
    # the index counts the files the facts count, and the views apart
    assert status["index"]["files"] == status["facts"]["files"]
    assert status["index"]["views"] == sum(status["views"].values())

    text = invoke(*LEXICAL, "status", "--repo", str(shop))
    assert "  retrieval     lexical\n" in text and "switched off" in text
    files, views = status["facts"]["files"], sum(status["views"].values())
    assert f"  facts         {files} files" in text and f"chunks from {files} files, {views} views\n" in text


def test_status_of_a_repository_never_built_says_what_to_do(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["status", "--repo", str(tmp_path)])
    assert result.exit_code == 1 and "run `kbc build`" in result.output


@pytest.mark.slow
def test_test_code_is_indexed_and_found_but_embedded_only_when_asked(tmp_path: Path) -> None:
    from kbc.index.exact import load_snapshot

    root = make_shop(
        tmp_path / "repo",
        {
            "tests/test_refunds.py": (
                "from shop.refunds import refund_allowed\n\n\n"
                "def test_a_refund_after_the_window_is_refused():\n"
                "    assert not refund_allowed(days=400)\n"
            )
        },
    )
    first = json.loads(invoke("build", str(root), "--format", "json", "--workers", "1"))["index"]
    index = root / ".kbc" / "index"

    def embedded_roles() -> set[str]:
        lexical = sqlite3.connect(index / "lexical.sqlite")
        roles = dict(lexical.execute("SELECT id, role FROM chunks").fetchall())
        (digest,) = lexical.execute("SELECT value FROM meta WHERE key = 'vectors'").fetchone()
        lexical.close()
        snapshot = load_snapshot(index, digest)
        assert snapshot is not None
        return {roles[c] for c in snapshot.chunks}

    assert first["retrieval"] == "hybrid" and "test" not in embedded_roles()
    found = retrieve_json(root, "test_a_refund_after_the_window_is_refused fails")
    assert found["matched"][0]["targets"] == ["tests.test_refunds.test_a_refund_after_the_window_is_refused"]
    assert "tests/test_refunds.py" in {item["path"] for item in found["items"]}

    again = json.loads(
        invoke("-c", "index.embed_tests=true", "build", str(root), "--format", "json", "--workers", "1")
    )["index"]
    assert "test" in embedded_roles()
    assert again["units"] > first["units"] and again["embedded"] == again["units"] - first["units"]


def test_a_repository_with_no_code_gives_an_empty_slice(tmp_path: Path) -> None:
    write_tree(tmp_path, {"logo.bin": bytes(range(256))})
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "only a binary")
    runner = CliRunner()
    assert runner.invoke(cli, [*LEXICAL, "build", str(tmp_path), "--no-llm"]).exit_code == 0
    sliced = runner.invoke(
        cli, [*LEXICAL, "retrieve", "--repo", str(tmp_path), "--format", "json", "anything"]
    )
    assert sliced.exit_code == 0, sliced.output
    assert json.loads(sliced.output)["items"] == []


@pytest.mark.parametrize("budget", ["1", "5", "12"])
def test_a_budget_below_the_header_is_refused_not_cut(shop: Path, budget: str) -> None:
    result = CliRunner().invoke(cli, ["retrieve", "--repo", str(shop), "--budget", budget, "refunds"])
    assert result.exit_code != 0 and "# kbc slic" not in result.output
    assert f"budget {budget} is smaller than a slice's header" in result.output
    assert "give a budget of at least" in result.output


def test_a_store_copied_with_its_repository_keeps_its_vectors(shop: Path, tmp_path: Path) -> None:
    import shutil

    import chromadb

    copy = tmp_path / "moved" / "repo"
    shutil.copytree(shop, copy, symlinks=True)
    summary = json.loads(invoke("build", str(copy), "--format", "json", "--workers", "1"))
    assert summary["index"]["retrieval"] == "hybrid"
    assert summary["index"]["embedded"] == 0  # nothing embedded again
    client = chromadb.PersistentClient(
        path=str(copy / ".kbc" / "index" / "chroma"), settings=chromadb.Settings(anonymized_telemetry=False)
    )
    assert len(client.list_collections()) == 1  # not a second collection beside the first


INCIDENTAL_FILES = {
    # a copy of a library, a message catalog saved as script and as .po, a minified bundle:
    # all full of the task's words, none of them code a developer edits for it
    "shop/static/jquery.js": (
        "/*! jQuery v3.5.1 | (c) JS Foundation and other contributors */\n"
        + "function refund(window) { return validate_refund(window); }\n" * 40
    ),
    "shop/locale/fr/LC_MESSAGES/shop.js": (
        'Documentation.addTranslations({"messages": {"refund window closed": "fenêtre de '
        'remboursement fermée", "already refunded": "déjà remboursé"}});\n'
    ),
    "shop/locale/fr/LC_MESSAGES/shop.po": (
        'msgid "refund window closed"\nmsgstr "fenêtre de remboursement fermée"\n'
    ),
    "shop/static/refunds.bundle.js": "var refund_window_closed=1;" * 300 + "\n",
}


def test_incidental_and_vendored_files_are_facts_and_stay_out_of_an_implementation_slice(
    tmp_path: Path,
) -> None:
    root = make_shop(tmp_path / "repo", INCIDENTAL_FILES)
    invoke(*LEXICAL, "build", str(root), "--no-llm", "--workers", "1")
    status = json.loads(invoke(*LEXICAL, "status", "--repo", str(root), "--format", "json"))
    assert status["roles"]["vendored"] == 1 and status["roles"]["catalog"] == 2
    assert status["roles"]["minified"] == 1 and status["roles"]["source"] >= 4
    assert "  roles         source " in invoke(*LEXICAL, "status", "--repo", str(root))

    task = "The refund window closed error is raised for a refund that was already refunded"
    paths = {i["path"] for i in retrieve_json_with(LEXICAL, root, task, "--budget", "4000")["items"]}
    assert "shop/refunds.py" in paths and not paths & set(INCIDENTAL_FILES)
    # another use case still reads them, and a task that names one gets it
    asked = retrieve_json_with(LEXICAL, root, task, "--use-case", "qa", "--budget", "20000")
    assert set(INCIDENTAL_FILES) & {i["path"] for i in asked["items"]}
    named = retrieve_json_with(
        LEXICAL,
        root,
        "the French text in shop/locale/fr/LC_MESSAGES/shop.po for the refund window closed error is wrong",
        "--budget",
        "4000",
    )
    assert "shop/locale/fr/LC_MESSAGES/shop.po" in {i["path"] for i in named["items"]}
    architecture = invoke(*LEXICAL, "views", "--repo", str(root), "--kind", "architecture", "--format", "md")
    assert "Files by role: source" in architecture and "catalog 2" in architecture


FOREIGN = "configure the kafka consumer group rebalancing timeout for our billing workers"


@pytest.mark.parametrize("config", [(), LEXICAL])
def test_a_task_the_repository_knows_nothing_of_is_marked_low_confidence_or_withheld(
    shop: Path, config: tuple[str, ...]
) -> None:
    known = retrieve_json_with(config, shop, "how are refunds validated?", "--budget", "2000")
    foreign = retrieve_json_with(config, shop, FOREIGN, "--budget", "2000")
    assert not known["low_confidence"] and foreign["low_confidence"]
    assert foreign["confidence"] < known["confidence"]
    assert foreign["text"].splitlines()[0].endswith("(low)")
    withheld = retrieve_json_with(config, shop, FOREIGN, "--budget", "2000", "--min-confidence", "0.5")
    assert withheld["items"] == [] and "Nothing packed: the confidence" in withheld["text"]
    kept = retrieve_json_with(
        config,
        shop,
        "how are refunds validated?",
        "--budget",
        "2000",
        "--min-confidence",
        f"{known['confidence'] / 2:.3f}",
    )
    assert kept["items"] and kept["tokens"] <= 2000
    gaps = invoke(*config, "gaps", "--repo", str(shop), "--format", "json")
    assert any(g["question"] == FOREIGN and "low confidence" in g["reasons"] for g in json.loads(gaps))
