"""What made a set of vectors: the model's name, the width of the vectors it answered and, for
a model behind an API, a fingerprint of it (its vector of a fixed probe text).

A name does not pin a model behind an API: a server may answer another model, or the same
model at another width, under a name it answered before. Vectors of two models are not
comparable, and vectors of two widths cannot even be scored together, so the vector store
records what made the vectors it holds (:mod:`kbc.index.vectors`), the index what made its
snapshot's (meta ``made_by``), and both are compared with the live model when they are
opened: a store whose vectors do not match is set aside and embedded again, and an index
whose vectors do not match is read lexical until then. The packaged model and fastembed's
are pinned by their id (a file's digest or a hub name, and the token cap), so their record
is their id and width.

Probe vectors are compared within a tolerance, never for equality: a provider's vectors of
one text differ in their last digits from one request to the next. The fingerprint shown,
and named in the key the exact-search snapshot is called by, is a digest of the vector
recorded, never of a live one.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from kbc.domain.errors import EmbedderUnavailable

MADE_BY = "made_by"  # the index's meta key (and the vector store's metadata key) of the record
PROBE = "def validate_refund(amount, paid): a refund is valid when positive and not above what was paid"
FOLDED = 16  # numbers a probe vector is folded to (component i is added into i mod 16)
SAME = 0.99  # cosine similarity of two folded probe vectors at or above which one model made both


@dataclass(frozen=True, slots=True)
class Provenance:
    model: str  # the embedder's model id
    width: int
    probe: tuple[float, ...] = ()  # a model behind an API: its vector of PROBE, folded
    replaced: str = ""  # why the vectors made before these were set aside, and where they went

    @property
    def fingerprint(self) -> str:
        """A short name for the probe vector ("" without one)."""
        if not self.probe:
            return ""
        return hashlib.sha256(",".join(f"{x:.3f}" for x in self.probe).encode()).hexdigest()[:8]

    @property
    def key(self) -> str:
        """What the vectors are keyed by: the model, the width, the fingerprint."""
        return f"{self.model}@{self.width}" + (f"#{self.fingerprint}" if self.probe else "")

    def change(self, live: Provenance) -> str:
        """Why vectors made as this record says cannot be scored against ``live``'s ("" when
        they can). Another model's vectors of the same width can be held beside the live
        model's (units are keyed by model): only their width is compared."""
        if live.width != self.width:
            made = "" if live.model == self.model else f" by {self.model}"
            return (
                f"{live.model} {'now ' if not made else ''}answers {live.width}-wide vectors, "
                f"and they were made {self.width}-wide{made}"
            )
        if live.model == self.model and self.probe and live.probe and not _same(self.probe, live.probe):
            return (
                f"{live.model} now answers the probe text with another vector (fingerprint "
                f"{live.fingerprint}; they were made with {self.fingerprint}): another model "
                "answers under its name"
            )
        return ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Provenance | None:
        """The record ``text`` holds; None for "" or anything else than a record."""
        try:
            data = json.loads(text) if text else None
            if not isinstance(data, dict):
                return None
            return cls(
                str(data["model"]),
                int(data["width"]),
                tuple(float(x) for x in data.get("probe", ())),
                str(data.get("replaced", "")),
            )
        except (ValueError, KeyError, TypeError):
            return None


def folded(vector: Sequence[float]) -> tuple[float, ...]:
    """A probe vector as ``FOLDED`` numbers of unit length: every component counts, whatever
    the width, and a provider's noise in the last digits stays there."""
    sums = [0.0] * FOLDED
    for i, x in enumerate(vector):
        sums[i % FOLDED] += float(x)
    norm = math.sqrt(sum(x * x for x in sums)) or 1.0
    return tuple(round(x / norm, 6) for x in sums)


def _same(a: Sequence[float], b: Sequence[float]) -> bool:
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(x * x for x in b))
    if norms == 0:
        return list(a) == list(b)
    return sum(x * y for x, y in zip(a, b, strict=False)) / norms >= SAME


def unsearchable(recorded: str, provenance: Callable[[], Provenance], width: int) -> str:
    """Why an index's vectors cannot be searched with the queries of the embedder whose
    ``provenance`` is given ("" when they can), or why that model cannot say: ``recorded`` is
    the index's record of what made them ("" in an index written before records were kept:
    then its snapshot's ``width`` is all there is to compare)."""
    try:
        live = provenance()
    except EmbedderUnavailable as exc:
        return exc.message
    made = Provenance.from_json(recorded) or Provenance(live.model, width or live.width)
    change = made.change(live) or (Provenance(made.model, width).change(live) if width else "")
    if not change:
        return ""
    return (
        f"the index's vectors cannot be used: {change}; retrieval is lexical until `kbc build` "
        "embeds them again"
    )
