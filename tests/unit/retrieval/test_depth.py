"""A long definition cut into pieces is packed whole once a piece of it is taken, within a share."""

from kbc.domain.models import Chunk
from kbc.retrieval.depth import pieces_of, whole_definitions
from kbc.retrieval.matched import Located


def unit(cid: str, start: int, end: int, symbols: tuple[str, ...], kind: str = "function") -> Located:
    return Located(start, end, cid, symbols, kind)


UNITS = [
    unit("prelude", 1, 9, (), "prelude"),
    unit("long#1", 10, 69, ("m.long",)),
    unit("long#2", 70, 129, ()),
    unit("long#3", 130, 150, ()),
    unit("short", 151, 160, ("m.short",)),
]


def chunks(tokens: int) -> dict[str, Chunk]:
    return {
        u.id: Chunk(u.id, "m.py", u.start, u.end, "code", "python", "x\n", unit=u.unit, tokens=tokens)
        for u in UNITS
    }


def test_the_pieces_of_a_definition_are_grouped_in_line_order() -> None:
    groups = pieces_of(UNITS)
    assert groups["long#2"] == ["long#1", "long#2", "long#3"]
    assert "short" not in groups and "prelude" not in groups


def test_a_piece_brings_its_siblings_nearest_first_when_the_whole_fits() -> None:
    found = chunks(100)
    order, added = whole_definitions([("long#2", 0.9), ("short", 0.8)], found, {"m.py": UNITS}, dict, 2000)
    assert order == [("long#2", 0.9), ("long#1", 0.9), ("long#3", 0.9), ("short", 0.8)]
    assert added == {}


def test_a_definition_too_long_for_its_share_keeps_the_rank_order() -> None:
    order, _ = whole_definitions([("long#2", 0.9), ("short", 0.8)], chunks(400), {"m.py": UNITS}, dict, 2000)
    assert order == [("long#2", 0.9), ("short", 0.8)]
