"""The relevance floor of the shipped embedding model: how similar is the best embedded unit
for a real question about a repository, and for a question about something else?

    python benchmarks/relevance_floor.py --stores WORK [--update-results]

WORK holds the built stores of the localization benchmark (``WORK/<name>/tree`` and
``WORK/<name>/store``, built with embeddings). On-topic questions are the development
split's issues of each repository, whole and as their title (first line: short, like a
question); off-topic ones are a fixed list about other subjects. The floor is the middle
of the similarity range that best separates the two (balanced accuracy); a query whose
best unit scores below it logs a knowledge gap.
"""

from __future__ import annotations

import argparse
import json
import statistics
from datetime import date
from pathlib import Path

from results_file import update_section

from kbc.domain.settings import Settings
from kbc.services.retrieve import open_retriever, profile_named

OFF_TOPIC = [
    "How long should sourdough bread proof before baking?",
    "What is the capital of Mongolia?",
    "Which vaccines does a puppy need in its first year?",
    "How do I change a flat tyre on a bicycle?",
    "What are the rules of cricket's leg before wicket?",
    "Recommend a good hiking trail in the Dolomites.",
    "How do I file a tax return as a freelancer in Germany?",
    "What causes the northern lights?",
    "How many calories are in a banana?",
    "Who painted the ceiling of the Sistine Chapel?",
    "How do I tune a guitar to drop D?",
    "What is the best way to learn Japanese kanji?",
    "How do tides work?",
    "Which wine goes with grilled salmon?",
    "How do I repot an orchid?",
    "What is the plot of Moby-Dick?",
    "How do I remove a red wine stain from a carpet?",
    "When is the best season to visit Patagonia?",
    "How does a mortgage offset account work?",
    "What is the difference between a crocodile and an alligator?",
    "How should I train for a first marathon?",
    "How do I knit a cable stitch?",
    "What were the causes of the First World War?",
    "How do I make fresh pasta without a machine?",
    "What is the airspeed of an unladen swallow?",
]


def best_similarities(tree: Path, store: Path, questions: list[str]) -> list[float]:
    retriever = open_retriever(tree, Settings(), store)
    profile = profile_named(tree, "qa")
    try:
        if retriever.mode != "hybrid":
            raise SystemExit(f"{store} has no vectors; build it with embeddings")
        return [retriever.search(q, profile).evidence.best_similarity for q in questions]
    finally:
        retriever.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stores", type=Path, required=True)
    parser.add_argument(
        "--eval", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "eval" / "swebench-dev"
    )
    parser.add_argument("--repos", default="seaborn,flask,requests")
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in (args.eval / "instances.jsonl").read_text().splitlines() if line]
    whole: list[float] = []
    titles: list[float] = []
    off: list[float] = []
    for name in args.repos.split(","):
        statements = [r["problem_statement"] for r in rows if r["repo"].split("/")[1] == name]
        tree, store = args.stores / name / "tree", args.stores / name / "store"
        whole += best_similarities(tree, store, statements)
        titles += best_similarities(tree, store, [s.strip().split("\n", 1)[0] for s in statements])
        off += best_similarities(tree, store, OFF_TOPIC)
    on = whole + titles

    def balanced(floor: float) -> float:
        return (sum(v >= floor for v in on) / len(on) + sum(v < floor for v in off) / len(off)) / 2

    grid = [n / 100 for n in range(101)]
    best = max(balanced(f) for f in grid)
    tied = [f for f in grid if balanced(f) == best]
    floor = round((tied[0] + tied[-1]) / 2, 2)

    def spread(values: list[float]) -> str:
        q = statistics.quantiles(values, n=20)
        return (
            f"min {min(values):.3f}, p5 {q[0]:.3f}, median {statistics.median(values):.3f}, "
            f"max {max(values):.3f}"
        )

    kept = sum(v >= floor for v in on) / len(on)
    rejected = sum(v < floor for v in off) / len(off)
    text = "\n".join(
        [
            f"{date.today().isoformat()}, repositories {args.repos} (stores of the localization run), "
            f"{len(whole)} development-split issues (whole, and their titles) against {len(off)} off-topic "
            f"questions ({len(OFF_TOPIC)} per repository).",
            "",
            f"- best-unit cosine similarity, issues: {spread(whole)}",
            f"- best-unit cosine similarity, issue titles: {spread(titles)}",
            f"- best-unit cosine similarity, off-topic: {spread(off)}",
            f"- floor: **{floor:.2f}**, the middle of the range {tied[0]:.2f}–{tied[-1]:.2f} with the best "
            f"balanced accuracy — issues and titles at or above it {kept:.1%}, "
            f"off-topic below it {rejected:.1%}",
        ]
    )
    print(text)
    if args.update_results:
        update_section(
            "relevance-floor",
            "Relevance floor of the embedding model",
            text,
            f"python benchmarks/relevance_floor.py --stores WORK --repos {args.repos}",
        )


if __name__ == "__main__":
    main()
