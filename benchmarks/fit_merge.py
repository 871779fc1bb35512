"""Fit the merge across corpora (kbc.retrieval.corpora) on questions of every shape.

    python benchmarks/fit_merge.py --work W [--work W ...] --mode lexical|hybrid
        [--loro DIR] [--install] [--c C]

Reads the raw results of ``benchmarks/shapes.py run`` (each ranking item with its merge
features, its corpus, its place in its corpus and its role weight). A candidate is labelled 1
when it holds a gold line (for a gold file without lines, when it is of that file). Each
question weighs the same, and each shape the same in all (a shape with many questions does
not drown one with few). The logistic regression is L2-regularised on standardised
features; its strength C is chosen leaving one repository out (the mean, over repositories,
of the held-out questions' log-loss), never on a question it scores.

Printed: for each C, the held-out log-loss and, re-merging each held-out question's recorded
candidates with the model fitted without its repository, the share of questions whose first
document is gold, of knowledge questions whose first note is gold, of every question whose
first item holds a gold line, and of questions with a note among their first five documents.
The note floor (a note less likely than it follows the repository's candidates) is the
probability that best tells, on those held-out probabilities, the answering note of a
team-note question from the best note of any other question. ``--loro DIR`` writes the model
fitted without each repository (``DIR/<owner+name>.json``, for ``shapes.py run --loro-models DIR``);
``--install`` writes the model fitted on every repository into ``kbc/retrieval/ranker.json``
for the mode, with what it was fitted on.
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

from logistic import fit_logistic
from shape_metrics import read_results

from kbc.retrieval.corpora import BY_PROBABILITY, antitonic, nudged
from kbc.retrieval.features import MERGE_FEATURES

RANKER = Path(__file__).resolve().parents[1] / "kbc" / "retrieval" / "ranker.json"
CS = (0.01, 0.1, 1.0, 10.0, 100.0)


def _label(item: list[Any], gold: set[str], hunks: dict[str, list[list[int]]]) -> int:
    path, start, end = item[0], item[1], item[2]
    if path not in gold:
        return 0
    spans = hunks.get(path)
    if not spans:
        return 1
    return int(any(start <= b and end >= a for a, b in spans))


def _row(item: list[Any]) -> list[float]:
    """A recorded candidate's merge features; those recorded before the note features were
    added get them from its corpus and the query's length."""
    row = [math.nan if f is None else f for f in item[6]]
    if len(row) == len(MERGE_FEATURES) - 2:
        note = float(item[4] == "knowledge")
        row += [note, note * row[MERGE_FEATURES.index("terms")]]
    return row


def group_of(result: dict[str, Any]) -> str:
    """What a question is held out with: its repository, or for a team-note question its corpus
    (the notes are what it is about)."""
    notes = [g for g in result["gold"] if g.startswith("@knowledge/")]
    return "@" + notes[0].split("/")[1] if notes else result["repo"]


def questions(works: list[Path], mode: str) -> list[dict[str, Any]]:
    out = []
    for work in works:
        for result in read_results(work):
            if result["retrieval"] != mode or result["shape"] == "foreign":  # nothing there to merge
                continue
            gold, hunks = set(result["gold"]), result["hunks"]
            items = [item for item in result["kbc"]["ranking"] if item[6] is not None]
            if not items:
                continue
            out.append(
                {
                    "id": result["instance_id"],
                    "repo": group_of(result),
                    "shape": result["shape"],
                    "x": [_row(item) for item in items],
                    "y": [_label(item, gold, hunks) for item in items],
                    "items": items,
                    "gold": gold,
                }
            )
    return out


def matrices(chosen: list[dict[str, Any]]) -> tuple[Any, Any, Any]:
    import numpy as np

    per_shape: dict[str, int] = defaultdict(int)
    for q in chosen:
        per_shape[q["shape"]] += 1
    x, y, w = [], [], []
    for q in chosen:
        weight = 1.0 / (len(q["y"]) * per_shape[q["shape"]])
        x.extend(q["x"])
        y.extend(q["y"])
        w.extend([weight] * len(q["y"]))
    matrix = np.array(x, dtype=float)
    matrix[:, np.isnan(matrix).all(axis=0)] = 0.0  # a feature this mode never has (lexical: vectors)
    return matrix, np.array(y, dtype=float), np.array(w, dtype=float)


def probabilities(model: tuple[Any, Any, Any, float], x: Any) -> Any:
    import numpy as np

    mean, scale, beta, bias = model
    z = np.where(np.isnan(x), 0.0, (x - mean) / scale)
    return 1.0 / (1.0 + np.exp(-(z @ beta + bias)))


def remerged(q: dict[str, Any], p: Any, note_floor: float = 0.0) -> list[list[Any]]:
    """The question's recorded candidates merged again with probabilities ``p`` (notes below
    ``note_floor`` after every other candidate)."""
    score = [0.0] * len(q["items"])
    for corpus in {item[4] for item in q["items"]}:
        places = sorted(
            (i for i, item in enumerate(q["items"]) if item[4] == corpus), key=lambda i: q["items"][i][7]
        )
        if corpus in BY_PROBABILITY:
            places.sort(key=lambda i: (-float(p[i]), q["items"][i][7]))
        for i, value in zip(places, antitonic([float(p[i]) for i in places]), strict=True):
            score[i] = value
    keyed = sorted(
        range(len(q["items"])),
        key=lambda i: (
            q["items"][i][4] == "knowledge" and float(p[i]) < note_floor,
            -nudged(score[i], q["items"][i][8] if q["items"][i][8] is not None else 1.0),
            i,
        ),
    )
    return [q["items"][i] for i in keyed]


def note_floor_of(scored: list[tuple[dict[str, Any], Any]]) -> float:
    """The probability a note must reach to be merged among the repository's candidates: the
    one that best tells (half each) the answering note of a team-note question from the best
    note of a question no note answers, on held-out probabilities (question, its probabilities)."""
    answers, others = [], []
    for q, p in scored:
        notes = [(float(pp), item) for pp, item in zip(p, q["items"], strict=True) if item[3] == "knowledge"]
        if not notes:
            continue
        if q["shape"] == "knowledge":
            gold = [pp for pp, item in notes if item[0] in q["gold"]]
            if gold:
                answers.append(max(gold))
        else:
            others.append(max(pp for pp, _ in notes))
    if not answers or not others:
        return 0.0
    cuts = sorted(set(answers) | set(others))
    best = max(
        cuts,
        key=lambda t: (
            sum(a >= t for a in answers) / len(answers) + sum(o < t for o in others) / len(others),
            -t,
        ),
    )
    below = max((v for v in cuts if v < best), default=0.0)
    return (best + below) / 2


def judged(q: dict[str, Any], merged: list[list[Any]]) -> dict[str, float]:
    documents = [item[0] for item in merged if item[3] != "view"]
    out = {
        "note_in_top5": float(any(d.startswith("@knowledge/") for d in list(dict.fromkeys(documents))[:5])),
        "first_document": float(bool(documents) and documents[0] in q["gold"]),
        "first_item": float(
            bool(merged) and _label(merged[0], q["gold"], {}) and q["y"][q["items"].index(merged[0])]
        ),
    }
    if q["shape"] == "knowledge":
        notes = [item for item in merged if item[3] == "knowledge"]
        out["first_note"] = float(bool(notes) and notes[0][0] in q["gold"])
        out["note_first_overall"] = float(
            bool(merged) and merged[0][3] == "knowledge" and merged[0][0] in q["gold"]
        )
    return out


def log_loss(model: tuple[Any, Any, Any, float], q: dict[str, Any]) -> float:
    import numpy as np

    p = np.clip(probabilities(model, np.array(q["x"], dtype=float)), 1e-9, 1 - 1e-9)
    y = np.array(q["y"], dtype=float)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def to_data(model: tuple[Any, Any, Any, float]) -> dict[str, Any]:
    mean, scale, beta, bias = model
    return {
        "features": list(MERGE_FEATURES),
        "mean": [round(float(v), 6) for v in mean],
        "scale": [round(float(v), 6) for v in scale],
        "weights": [round(float(v), 6) for v in beta],
        "bias": round(float(bias), 6),
    }


def main() -> None:
    import numpy as np

    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--work", type=Path, action="append", required=True)
    parser.add_argument("--mode", choices=("lexical", "hybrid"), default="lexical")
    parser.add_argument("--loro", type=Path)
    parser.add_argument("--install", action="store_true")
    parser.add_argument("--c", type=float, default=0.0, help="use this C instead of choosing it")
    args = parser.parse_args()
    data = questions(args.work, args.mode)
    repos = sorted({q["repo"] for q in data})
    shapes = sorted({q["shape"] for q in data})
    print(f"{len(data)} questions, {len(repos)} repositories, shapes {shapes}")
    results: dict[float, dict[str, Any]] = {}
    for c in [args.c] if args.c else CS:
        losses: list[float] = []
        scores: dict[str, list[float]] = defaultdict(list)
        scored: list[tuple[dict[str, Any], Any]] = []
        for repo in repos:
            train = [q for q in data if q["repo"] != repo]
            held = [q for q in data if q["repo"] == repo]
            x, y, w = matrices(train)
            model = fit_logistic(x, y, w, c)
            losses.append(statistics.fmean(log_loss(model, q) for q in held))
            scored += [(q, probabilities(model, np.array(q["x"], dtype=float))) for q in held]
        floor = note_floor_of(scored)
        for q, p in scored:
            for key, value in judged(q, remerged(q, p, floor)).items():
                scores[f"{q['shape']}:{key}"].append(value)
        results[c] = {
            "loss": statistics.fmean(losses),
            "note_floor": floor,
            "scores": {k: statistics.fmean(v) for k, v in scores.items()},
        }
        shown = ", ".join(f"{k} {100 * v:.1f}%" for k, v in sorted(results[c]["scores"].items()))
        print(f"C={c}: held-out log-loss {results[c]['loss']:.4f}; note floor {floor:.3f}; {shown}")
    chosen = min(results, key=lambda c: (results[c]["loss"], c))
    print(f"chosen C={chosen}")
    if args.loro:
        args.loro.mkdir(parents=True, exist_ok=True)
        for repo in repos:
            x, y, w = matrices([q for q in data if q["repo"] != repo])
            model = fit_logistic(x, y, w, chosen)
            (args.loro / f"{repo.replace('/', '+')}.json").write_text(
                json.dumps(to_data(model), indent=1) + "\n"
            )
    x, y, w = matrices(data)
    model = fit_logistic(x, y, w, chosen)
    print(json.dumps(to_data(model)))
    if args.install:
        ranker = json.loads(RANKER.read_text())
        ranker[args.mode]["merge"] = to_data(model)
        ranker[args.mode]["note_floor"] = round(results[chosen]["note_floor"], 4)
        ranker["about"][args.mode]["merge"] = {
            "c": chosen,
            "questions": len(data),
            "repositories": repos,
            "shapes": {s: sum(1 for q in data if q["shape"] == s) for s in shapes},
            "held_out": {k: round(v, 4) for k, v in results[chosen]["scores"].items()},
            "held_out_log_loss": round(results[chosen]["loss"], 4),
            "note_floor": round(results[chosen]["note_floor"], 4),
        }
        RANKER.write_text(json.dumps(ranker, indent=1) + "\n")
        print(f"installed into {RANKER}")


if __name__ == "__main__":
    main()
