"""Fit the slice's confidence (kbc.retrieval.features.CONFIDENCE_FEATURES) so that it means
what it says: the probability that the slice's first document is right.

    python benchmarks/fit_confidence.py --work W [--work W ...] --mode lexical|hybrid
        [--install [--confidence-only]] [--c C] [--floor-miss 0.05] [--foreign-share S ...]

Reads the raw results of ``benchmarks/shapes.py run`` (each question's confidence features;
``--foreign`` runs give questions asked of a repository that does not answer them, whose first
document is never right). Labelled 1 when the first document of the ranking is gold. Each
answerable shape weighs the same, and the foreign questions as one shape more, or together
the share of the whole each ``--foreign-share`` gives (repeatable). That share and the
logistic regression's strength C are chosen together leaving one repository out (held-out
log-loss); printed for each: the held-out expected calibration error (five bins; of all
questions and of the answerable ones) and the share of foreign questions below the floor.

Beside it, the relevance: the probability that the repository answers the question at all,
fitted on the answerable questions against the foreign ones (half each). Its floor (below it a
slice says "nothing relevant" unless the caller asks for less) is the highest relevance that
leaves at most ``--relevance-miss`` (3 %) of the held-out answerable questions below it.
``--install`` writes both models and the floor into ``kbc/retrieval/ranker.json`` for the
mode.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from fit_merge import RANKER, group_of, probabilities, to_data
from logistic import fit_logistic
from shape_metrics import metrics, read_results

from kbc.retrieval.features import CONFIDENCE_FEATURES

CS = (0.01, 0.1, 1.0, 10.0, 100.0)
# The foreign questions' share of the fit: one shape among the others (0). Half (0.5, as many as
# the answerable ones) lowered the calibration error over answerable and foreign questions
# together but doubled it over the answerable ones, leaving each repository out (RESULTS.md).
SHARES = (0.0,)


def rows(works: list[Path], mode: str) -> list[dict[str, Any]]:
    out = []
    for work in works:
        for result in read_results(work):
            row = result.get("confidence_row")
            if result["retrieval"] != mode or not row or len(row) != len(CONFIDENCE_FEATURES):
                continue
            right = 0.0 if result["shape"] == "foreign" else metrics(result)["kbc"]["first_right"]
            out.append(
                {
                    "repo": group_of(result),
                    "shape": result["shape"],
                    "x": [math.nan if v is None else v for v in row],
                    "y": right,
                }
            )
    return out


def matrices(
    chosen: list[dict[str, Any]], relevance: bool = False, foreign_share: float = 0.0
) -> tuple[Any, Any, Any]:
    """Features, labels and weights: for the confidence, each shape weighing the same (with
    ``foreign_share``, the foreign questions weigh that share of the whole and the answerable
    shapes the same among themselves); for the relevance (label: the question is not a foreign
    one), answered and foreign half each."""
    import numpy as np

    def group(q: dict[str, Any]) -> str:
        return str(q["shape"] == "foreign") if relevance else str(q["shape"])

    per: dict[str, int] = defaultdict(int)
    for q in chosen:
        per[group(q)] += 1
    x = np.array([q["x"] for q in chosen], dtype=float)
    x[:, np.isnan(x).all(axis=0)] = 0.0
    label = [float(q["shape"] != "foreign") if relevance else q["y"] for q in chosen]
    y = np.array(label, dtype=float)
    w = np.array([1.0 / per[group(q)] for q in chosen], dtype=float)
    if foreign_share and not relevance and "foreign" in per and len(per) > 1:
        answerable = len(per) - 1
        w = np.array(
            [
                foreign_share / per["foreign"]
                if q["shape"] == "foreign"
                else (1 - foreign_share) / answerable / per[group(q)]
                for q in chosen
            ],
            dtype=float,
        )
    return x, y, w


def fit_relevance(
    data: list[dict[str, Any]], repos: list[str], miss: float
) -> tuple[Any, float, dict[str, float]]:
    """The relevance model (the question is one the repository answers, against foreign ones),
    its strength chosen leaving one repository out, and its floor: the highest relevance that
    leaves at most ``miss`` of the held-out answerable questions below it."""
    import numpy as np

    best: tuple[float, float, float, dict[str, float]] | None = None
    for c in CS:
        held: list[tuple[float, dict[str, Any]]] = []
        for repo in repos:
            x, y, w = matrices([q for q in data if q["repo"] != repo], relevance=True)
            model = fit_logistic(x, y, w, c)
            held += [
                (float(probabilities(model, np.array([q["x"]], dtype=float))[0]), q)
                for q in data
                if q["repo"] == repo
            ]
        answered = sorted(p for p, q in held if q["shape"] != "foreign")
        floor = answered[int(miss * len(answered))]
        foreign = [p for p, q in held if q["shape"] == "foreign"]
        loss = statistics.fmean(
            -math.log(max(p if q["shape"] != "foreign" else 1 - p, 1e-9)) for p, q in held
        )
        rates = {
            "foreign_below": sum(p < floor for p in foreign) / len(foreign) if foreign else math.nan,
            "answerable_below": sum(p < floor for p in answered) / len(answered),
            "log_loss": loss,
        }
        print(
            f"relevance C={c}: held-out log-loss {loss:.4f}; floor {floor:.3f}: foreign below "
            f"{100 * rates['foreign_below']:.1f}%, answerable below {100 * rates['answerable_below']:.1f}%"
        )
        if best is None or loss < best[0]:
            best = (loss, c, floor, rates)
    assert best is not None
    _, chosen, floor, rates = best
    x, y, w = matrices(data, relevance=True)
    return fit_logistic(x, y, w, chosen), floor, {"c": chosen, **{k: round(v, 4) for k, v in rates.items()}}


def held_out(
    data: list[dict[str, Any]], repos: list[str], share: float, c: float, floor_miss: float
) -> dict[str, float]:
    """The confidence fitted at ``share`` and ``c`` leaving each repository out, read on the
    questions left out: log-loss, expected calibration error (all, answerable only), the floor
    that leaves ``floor_miss`` of the right first documents below it and who falls below."""
    import numpy as np

    held: list[tuple[float, dict[str, Any]]] = []
    losses = []
    for repo in repos:
        x, y, w = matrices([q for q in data if q["repo"] != repo], foreign_share=share)
        model = fit_logistic(x, y, w, c)
        for q in (q for q in data if q["repo"] == repo):
            p = float(probabilities(model, np.array([q["x"]], dtype=float))[0])
            held.append((p, q))
            losses.append(-(q["y"] * math.log(max(p, 1e-9)) + (1 - q["y"]) * math.log(max(1 - p, 1e-9))))
    answered = [(p, q["y"]) for p, q in held if q["shape"] != "foreign"]
    right = sorted(p for p, q in held if q["y"] == 1)
    floor = right[int(floor_miss * len(right))] if right else 0.0
    foreign = [p for p, q in held if q["shape"] == "foreign"]
    return {
        "loss": statistics.fmean(losses),
        "ece": expected_calibration_error([(p, q["y"]) for p, q in held]),
        "ece_answered": expected_calibration_error(answered),
        "floor": floor,
        "foreign_below": sum(p < floor for p in foreign) / len(foreign) if foreign else math.nan,
        "answered_below": sum(p < floor for p, _ in answered) / len(answered) if answered else math.nan,
    }


def expected_calibration_error(pairs: list[tuple[float, float]], bins: int = 5) -> float:
    error = 0.0
    for index in range(bins):
        low, high = index / bins, (index + 1) / bins
        inside = [(c, a) for c, a in pairs if low <= c < high or (index == bins - 1 and c >= 1.0)]
        if inside:
            error += (
                len(inside)
                / len(pairs)
                * abs(statistics.fmean(c for c, _ in inside) - statistics.fmean(a for _, a in inside))
            )
    return error


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--work", type=Path, action="append", required=True)
    parser.add_argument("--mode", choices=("lexical", "hybrid"), default="lexical")
    parser.add_argument("--install", action="store_true")
    parser.add_argument("--c", type=float, default=0.0)
    parser.add_argument("--floor-miss", type=float, default=0.05)
    parser.add_argument(
        "--foreign-share",
        type=float,
        action="append",
        default=[],
        help="a share of the fit the foreign questions weigh together (0: one shape among the "
        "others); repeatable, the best held out is chosen (default: 0)",
    )
    parser.add_argument(
        "--confidence-only",
        action="store_true",
        help="install the confidence alone (the relevance and its floor stay as they are)",
    )
    parser.add_argument(
        "--relevance-miss",
        type=float,
        default=0.03,
        help="the share of held-out answerable questions the relevance floor may leave below it",
    )
    args = parser.parse_args()
    data = rows(args.work, args.mode)
    repos = sorted({q["repo"] for q in data})
    foreign = sum(q["shape"] == "foreign" for q in data)
    print(f"{len(data)} questions, {len(repos)} repositories, {foreign} foreign")
    results: dict[tuple[float, float], dict[str, Any]] = {}
    for share in args.foreign_share or SHARES:
        for c in [args.c] if args.c else CS:
            results[(share, c)] = held_out(data, repos, share, c, args.floor_miss)
            r = results[(share, c)]
            print(
                f"foreign share {share or 'one shape'}, C={c}: held-out log-loss {r['loss']:.4f}, "
                f"ECE {r['ece']:.3f} (answerable only {r['ece_answered']:.3f}); "
                f"floor {r['floor']:.3f}: foreign below {100 * r['foreign_below']:.1f}%, "
                f"answerable questions below {100 * r['answered_below']:.1f}%"
            )
    share, chosen = min(results, key=lambda key: (results[key]["loss"], key))
    x, y, w = matrices(data, foreign_share=share)
    model = fit_logistic(x, y, w, chosen)
    data_out = to_data(model)
    data_out["features"] = list(CONFIDENCE_FEATURES)
    print(
        f"chosen foreign share {share or 'one shape'}, C={chosen}, "
        f"floor {results[(share, chosen)]['floor']:.3f}"
    )
    print(json.dumps(data_out))
    relevance, relevance_floor, relevance_about = fit_relevance(data, repos, args.relevance_miss)
    print(f"relevance floor {relevance_floor:.3f}")
    if args.install:
        ranker = json.loads(RANKER.read_text())
        ranker[args.mode]["confidence"] = data_out
        if not args.confidence_only:
            ranker[args.mode]["relevance"] = dict(to_data(relevance), features=list(CONFIDENCE_FEATURES))
            ranker[args.mode]["floor"] = round(relevance_floor, 3)
        ranker["about"][args.mode]["confidence"] = {
            "c": chosen,
            "foreign_share": share or "one shape among the others",
            "questions": len(data),
            "repositories": repos,
            "label": "the first document of the ranking is gold",
            "held_out": {k: round(v, 4) for k, v in results[(share, chosen)].items() if k != "floor"},
        }
        if args.confidence_only:
            RANKER.write_text(json.dumps(ranker, indent=1) + "\n")
            print(f"installed the confidence into {RANKER}")
            return
        ranker["about"][args.mode]["relevance"] = {
            "floor": round(relevance_floor, 3),
            "label": "the question is answerable here (not one asked of another repository)",
            "held_out": relevance_about,
        }
        RANKER.write_text(json.dumps(ranker, indent=1) + "\n")
        print(f"installed into {RANKER}")


if __name__ == "__main__":
    main()
