"""The vectors read while a build's units are embedded in the background: the partial file's
batches, and a bounded number of candidates embedded on the spot for each request."""

from collections.abc import Sequence
from pathlib import Path

from kbc.domain.models import EmbedUnit
from kbc.index.embed import DEFAULT_MODEL, load_embedder
from kbc.index.fill import PARTIAL, _append_partial, read_partial
from kbc.index.filling import FillingVectors

TEXTS = {"refunds": ["def refund(order): return the payment within the window",
                     "the refund window is 30 days"],
         "cart": ["def add_item(cart, item): put an item in the cart", "def total(cart): sum of prices"],
         "auth": ["def login(user, password): check the password hash"]}
UNITS = [EmbedUnit(f"{chunk}-{i}", chunk, i + 1, i + 1, text)
         for chunk, texts in TEXTS.items() for i, text in enumerate(texts)]


def _units_of(chunks: Sequence[str]) -> list[EmbedUnit]:
    return [u for u in UNITS if u.chunk_id in chunks]


def test_candidates_are_embedded_within_an_allowance_beside_the_partial_batches(tmp_path: Path) -> None:
    embedder = load_embedder(DEFAULT_MODEL, for_queries=True)
    refunds = [u for u in UNITS if u.chunk_id == "refunds"]
    _append_partial(tmp_path, refunds, embedder.embed([u.text for u in refunds]))
    filling = FillingVectors(tmp_path, embedder.model_id, "", embedder, _units_of, per_request=2)
    filling.start_request()
    assert sorted(filling.exact().units) == ["refunds-0", "refunds-1"]  # the background's, with their chunks
    assert set(filling.exact().chunks) == {"refunds"}

    assert filling.cover(["auth", "cart", "refunds"]) == 2  # the allowance, in the order given
    assert sorted(filling.exact().units) == ["auth-0", "cart-0", "refunds-0", "refunds-1"]
    assert filling.cover(["cart"]) == 0  # spent for this request
    filling.start_request()
    assert filling.cover(["cart", "refunds"]) == 1 and filling.cover(["cart"]) == 0  # all there

    (query,) = embedder.embed_query(["how long may a refund take"])
    best = filling.exact().search(query, 1)[0]
    assert best.chunk == "refunds"
    found = filling.similarities(query, ["cart", "auth"])
    assert found.keys() == {"cart", "auth"} and found == filling.exact().similarities(query, ["cart", "auth"])


def test_a_batch_being_written_is_read_as_absent_and_left_in_place(tmp_path: Path) -> None:
    embedder = load_embedder(DEFAULT_MODEL, for_queries=True)
    whole = [UNITS[0]]
    _append_partial(tmp_path, whole, embedder.embed([whole[0].text]))
    with (tmp_path / PARTIAL).open("ab") as partial:
        partial.write(b'{"ids":["cart-0"],"chunks":["cart"],"dim":384}\n' + b"\0" * 64)
    size = (tmp_path / PARTIAL).stat().st_size
    rows, matrix, owners = read_partial(tmp_path, repair=False)
    assert list(rows) == ["refunds-0"] and owners == {"refunds-0": "refunds"} and matrix is not None
    assert (tmp_path / PARTIAL).stat().st_size == size  # a reader leaves it
    read_partial(tmp_path)  # the process that appends next cuts it back to whole batches
    assert (tmp_path / PARTIAL).stat().st_size < size
