"""The confidence and relevance models ``benchmarks/fit_ranker.py`` fits beside the ranking:
each question's row of confidence features, labelled by whether its first file is right
(:func:`confidence_rows`), the floor below which a slice says "nothing relevant"
(:func:`choose_floor`), and the fits written into the model's parts."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from logistic import fit_logistic, predict
from ranker_harvest import all_questions, load_questions, matrices


def confidence_rows(
    questions: list[dict[str, Any]], foreign: list[dict[str, Any]], c: float, issue_weight: float = 1.0
) -> tuple[Any, Any, Any, Any, Any]:
    """Rows of CONFIDENCE_FEATURES with the file model's probabilities cross-fitted (the file
    model that scores a repository's questions never saw that repository), labels (1: a file
    the commit changed is among the first five; foreign questions 0), weights (own and foreign
    questions weigh the same in total), repositories and which rows are own questions."""
    import numpy as np

    from kbc.retrieval.features import confidence_features

    rows, labels, weights, repos = [], [], [], []
    for held in sorted({q["repo"] for q in questions}):
        train = [q for q in questions if q["repo"] != held]
        x, y, w, _ = matrices(train, "files", issue_weight)
        model = fit_logistic(x, y, w, c)
        for own, group in (
            (True, [q for q in questions if q["repo"] == held]),
            (False, [q for q in foreign if q["repo"] == held]),
        ):
            for question in group:
                found = question["files"]
                scores = predict(model, np.array([i[2] for i in found], dtype=float)) if found else []
                probabilities = [1 / (1 + math.exp(-z)) for z in scores]
                order = sorted(range(len(found)), key=lambda i: (-scores[i], found[i][0]))[:5]
                label = int(own and any(found[i][1] for i in order))
                rows.append(confidence_features(question["query_row"], probabilities))
                labels.append(label)
                weights.append(1.0 if own else 0.0)
                repos.append(held)
    own = np.array(weights) > 0
    # each half weighs as many rows as there are, half each (the penalty is read against that)
    balanced = len(own) / 2 * np.where(own, 1.0 / max(int(own.sum()), 1), 1.0 / max(int((~own).sum()), 1))
    return np.array(rows, dtype=float), np.array(labels, dtype=float), balanced, np.array(repos), own


def choose_floor(scores: Any, labels: Any, own: Any) -> tuple[float, dict[str, float]]:
    """The confidence below which a slice is marked low: the threshold with the best balanced
    accuracy between own questions answered in the first five files (above) and foreign
    questions (below)."""
    import numpy as np

    answered = scores[(labels == 1) & own]
    foreign = scores[~own]
    best, floor = -1.0, 0.5
    for threshold in np.unique(np.round(scores, 3)):
        balanced = ((answered >= threshold).mean() + (foreign < threshold).mean()) / 2
        if balanced > best:
            best, floor = balanced, float(threshold)
    unanswered = scores[(labels == 0) & own]
    return floor, {
        "answered_above": round(float((answered >= floor).mean()), 4),
        "foreign_below": round(float((foreign < floor).mean()), 4),
        "unanswered_below": round(float((unanswered < floor).mean()), 4) if len(unanswered) else 0.0,
        "answered": int(len(answered)),
        "foreign": int(len(foreign)),
        "unanswered": int(len(unanswered)),
    }


def fit_confidence(
    questions: list[dict[str, Any]],
    foreign: list[dict[str, Any]],
    files: tuple[float, float],
    part_data: dict[str, Any],
    about: dict[str, Any],
) -> None:
    """The confidence model and its floor, into ``part_data`` and ``about``."""
    import numpy as np

    from kbc.retrieval.features import CONFIDENCE_FEATURES

    x, y, w, repos, own = confidence_rows(questions, foreign, *files)
    # cross-validated confidences, for the floor: leave each repository out
    held_scores = np.zeros(len(y))
    for repo in sorted(set(repos)):
        mask = repos == repo
        model = fit_logistic(x[~mask], y[~mask], w[~mask], 1.0)
        held_scores[mask] = 1 / (1 + np.exp(-predict(model, x[mask])))
    floor, rates = choose_floor(held_scores, y, own)
    mean, scale, beta, bias = fit_logistic(x, y, w, 1.0)
    part_data["confidence"] = {
        "features": list(CONFIDENCE_FEATURES),
        "mean": [round(v, 6) for v in mean],
        "scale": [round(v, 6) for v in scale],
        "weights": [round(v, 6) for v in beta],
        "bias": round(bias, 6),
    }
    part_data["floor"] = round(floor, 3)
    about["confidence"] = {"floor": round(floor, 3), "held_out": rates}


def refit_confidence(work: Path, out: Path) -> None:
    """The confidence model again, on the file model's chosen settings (``out`` as written by fit)."""
    data = json.loads(out.read_text())
    for mode in ("lexical", "hybrid"):
        if mode not in data:
            continue
        about = data["about"][mode]
        files = (about["files"]["c"], about["files"].get("issue_weight", 1.0))
        fit_confidence(
            all_questions(work, mode), load_questions(work, f"foreign-{mode}"), files, data[mode], about
        )
        print(mode, json.dumps(about["confidence"]))
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
