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


def window(cid: str, start: int, end: int, heading: str, tokens: int = 100) -> Chunk:
    path = "@knowledge/team/career.md"
    return Chunk(cid, path, start, end, "knowledge", "markdown", "x\n", heading=heading, tokens=tokens)


NOTE = {
    "intro": window("intro", 1, 16, "Career"),
    "mastery#1": window("mastery#1", 17, 34, "Career > Mastery"),
    "mastery#2": window("mastery#2", 31, 36, "Career > Mastery"),  # windows overlap by a few lines
    "pay": window("pay", 37, 50, "Career > Pay"),
}


def test_the_windows_of_a_long_section_are_packed_together() -> None:
    ids = {"@knowledge/team/career.md": list(NOTE)}

    def load(wanted: list[str]) -> dict[str, Chunk]:
        return {cid: NOTE[cid] for cid in wanted}

    order, added = whole_definitions(
        [("mastery#1", 0.7), ("pay", 0.2)],
        {"mastery#1": NOTE["mastery#1"], "pay": NOTE["pay"]},
        {},
        load,
        4000,
        windows_of=ids.__getitem__,
    )
    assert order == [("mastery#1", 0.7), ("mastery#2", 0.7), ("pay", 0.2)]
    assert set(added) == {"intro", "mastery#2"}  # read to find the section's windows
    # too long for its share of the budget: the rank order stays
    order, _ = whole_definitions(
        [("mastery#1", 0.7), ("pay", 0.2)], dict(NOTE), {}, load, 600, windows_of=ids.__getitem__
    )
    assert order == [("mastery#1", 0.7), ("pay", 0.2)]
    # without the windows of a file (no reader given) nothing is followed
    order, _ = whole_definitions([("mastery#1", 0.7)], dict(NOTE), {}, load, 4000)
    assert order == [("mastery#1", 0.7)]
