"""The fitted ranking model: logistic regressions over the features of :mod:`features`.

Two models, each a standardised linear score through a logistic: one gives the
probability that a candidate file is one a task changes, the other the
probability that a unit of such a file holds changed lines. Their weights are
not chosen by hand: ``benchmarks/fit_ranker.py`` fits them on questions mined
from the history of many public repositories (a commit's message asked of a
store built before it; the files and lines it changed are the answer), and
writes ``ranker.json`` beside this module with the repositories, commits and
the cross-validated figures it was fitted on. A model for lexical retrieval
and one with vectors are fitted apart (the vector features are absent in the
first).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any

from kbc.domain.errors import KbcError
from kbc.retrieval.features import CONFIDENCE_FEATURES, FILE_FEATURES, MERGE_FEATURES, UNIT_FEATURES

MODEL_FILE = "ranker.json"


@dataclass(frozen=True, slots=True)
class Linear:
    """A logistic regression over standardised features."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float

    @classmethod
    def from_data(cls, data: dict[str, Any], expected: Sequence[str]) -> Linear:
        features = tuple(data["features"])
        if features != tuple(expected):
            raise KbcError(
                f"the ranking model was fitted on features {list(features)}, "
                f"this kbc computes {list(expected)}",
                hint="fit it again: python benchmarks/fit_ranker.py fit",
            )
        return cls(
            features, tuple(data["mean"]), tuple(data["scale"]), tuple(data["weights"]), float(data["bias"])
        )

    def to_data(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "weights": list(self.weights),
            "bias": self.bias,
        }

    def logits(self, rows: Sequence[Sequence[float]]) -> list[float]:
        out = []
        for row in rows:
            total = self.bias
            for value, mean, scale, weight in zip(row, self.mean, self.scale, self.weights, strict=True):
                if not math.isnan(value):  # unknown: read as the mean, no evidence either way
                    total += weight * (value - mean) / scale
            out.append(total)
        return out

    def probabilities(self, rows: Sequence[Sequence[float]]) -> list[float]:
        return [_sigmoid(z) for z in self.logits(rows)]


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@dataclass(frozen=True, slots=True)
class Ranker:
    """The file model, the unit model and the confidence model for one retrieval mode."""

    files: Linear
    units: Linear
    confidence: Linear | None = None  # that the ranking's first document is right
    floor: float = 0.0  # below this relevance (else confidence) a slice is marked low-confidence
    merge: Linear | None = None  # each candidate's probability, across corpora (kbc.retrieval.corpora)
    relevance: Linear | None = None  # that the repository answers the task at all
    note_floor: float = 0.0  # a note less likely than this follows the repository's candidates


@dataclass(frozen=True, slots=True)
class Models:
    lexical: Ranker
    hybrid: Ranker
    about: dict[str, Any]  # how they were fitted: repositories, questions, figures
    digest: str = ""  # of the file they were read from

    def for_mode(self, mode: str) -> Ranker:
        return self.hybrid if mode == "hybrid" else self.lexical


def parse_models(data: dict[str, Any]) -> Models:
    def ranker(part: dict[str, Any]) -> Ranker:
        confidence = (
            Linear.from_data(part["confidence"], CONFIDENCE_FEATURES) if "confidence" in part else None
        )
        merge = Linear.from_data(part["merge"], MERGE_FEATURES) if "merge" in part else None
        relevance = Linear.from_data(part["relevance"], CONFIDENCE_FEATURES) if "relevance" in part else None
        return Ranker(
            Linear.from_data(part["files"], FILE_FEATURES),
            Linear.from_data(part["units"], UNIT_FEATURES),
            confidence,
            float(part.get("floor", 0.0)),
            merge,
            relevance,
            float(part.get("note_floor", 0.0)),
        )

    try:
        lexical = ranker(data["lexical"])
        hybrid = borrowed(ranker(data["hybrid"]), lexical) if "hybrid" in data else lexical
    except (KeyError, TypeError, ValueError) as exc:
        raise KbcError(
            f"the ranking model is malformed: {exc}", hint="fit it again: python benchmarks/fit_ranker.py fit"
        ) from None
    digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
    return Models(lexical, hybrid, dict(data.get("about", {})), digest)


def borrowed(mode: Ranker, lexical: Ranker) -> Ranker:
    """A mode's ranker with what it was not fitted for read from the lexical one: the merge
    across corpora (with its note floor) when it has none, and the confidence, the relevance
    and their floor together when it has no relevance. The lexical models weigh no vector
    evidence (their similarity features carry no weight), so they read a hybrid ranking by the
    evidence both modes share."""
    if mode.merge is None:
        mode = replace(mode, merge=lexical.merge, note_floor=lexical.note_floor)
    if mode.relevance is None:
        mode = replace(mode, confidence=lexical.confidence, relevance=lexical.relevance, floor=lexical.floor)
    return mode


_shipped: Models | None = None


def shipped_models() -> Models:
    """The models shipped with kbc (read once)."""
    global _shipped
    if _shipped is None:
        text = resources.files("kbc.retrieval").joinpath(MODEL_FILE).read_text(encoding="utf-8")
        _shipped = parse_models(json.loads(text))
    return _shipped
