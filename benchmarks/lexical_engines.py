"""SQLite FTS5 against bm25s for the lexical index, on the same chunks and tokens.

    python benchmarks/lexical_engines.py --store DIR [--queries 50]

Reads the chunks of a built store and measures, for each engine: building
the whole index, the p50 of a query (the OR of a query's tokens, top 200),
and bringing the index up to date after one file changed (FTS5 rewrites that
file's rows; bm25s has no update and is rebuilt whole). Both rank with BM25
over kbc's code tokens, so their quality differs only by BM25 variant.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import tempfile
from pathlib import Path

from results_file import report
from timing import clock, median

from kbc.index.lexical import LexicalIndex, match_expression
from kbc.index.tokens import path_tokens, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    source = LexicalIndex(args.store / "index" / "lexical.sqlite")
    chunks = source.all_chunks()
    source.close()
    documents = [path_tokens(c.path) + tokens(c.heading + "\n" + c.text) for c in chunks]
    rng = random.Random(3)
    queries = [" ".join(rng.sample(d, min(12, len(d)))) for d in rng.sample(documents, args.queries)]
    changed_path = chunks[len(chunks) // 2].path
    changed = [i for i, c in enumerate(chunks) if c.path == changed_path]

    with tempfile.TemporaryDirectory() as tmp:
        db = sqlite3.connect(Path(tmp) / "fts.sqlite")
        db.execute("CREATE VIRTUAL TABLE f USING fts5(body, tokenize = \"unicode61 tokenchars '_'\")")
        with clock() as fts_build:
            db.executemany(
                "INSERT INTO f (rowid, body) VALUES (?, ?)",
                ((i + 1, " ".join(d)) for i, d in enumerate(documents)),
            )
            db.commit()
        fts_query = []
        for query in queries:
            with clock() as sample:
                db.execute(
                    "SELECT rowid FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT 200",
                    (match_expression(query),),
                ).fetchall()
            fts_query.append(sample)
        with clock() as fts_update:
            db.executemany("DELETE FROM f WHERE rowid = ?", ((i + 1,) for i in changed))
            db.executemany(
                "INSERT INTO f (rowid, body) VALUES (?, ?)",
                ((i + 1, " ".join(documents[i] + ["edited"])) for i in changed),
            )
            db.commit()
        db.close()

    import bm25s

    with clock() as bm25s_build:
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenization.Tokenized(*_vocabulary(documents)), show_progress=False)
    vocabulary = _vocabulary(documents)[1]
    bm25s_query = []
    for query in queries:
        ids = [[vocabulary[t] for t in dict.fromkeys(tokens(query)) if t in vocabulary]]
        with clock() as sample:
            retriever.retrieve(
                bm25s.tokenization.Tokenized(ids, vocabulary), k=min(200, len(documents)), show_progress=False
            )
        bm25s_query.append(sample)
    edited = list(documents)
    for i in changed:
        edited[i] = edited[i] + ["edited"]
    with clock() as bm25s_update:
        rebuilt = bm25s.BM25()
        rebuilt.index(bm25s.tokenization.Tokenized(*_vocabulary(edited)), show_progress=False)

    text = "\n".join(
        [
            f"{len(chunks)} chunks of {args.store.parent.name}; {len(queries)} queries; the changed file "
            f"has {len(changed)} chunks.",
            "",
            "| engine | build | query p50 | update after one file changed | persistent |",
            "| --- | ---: | ---: | ---: | --- |",
            f"| SQLite FTS5 | {fts_build.wall:.2f} s | {1000 * median(fts_query):.1f} ms "
            f"| {1000 * fts_update.wall:.1f} ms (that file's rows) | yes, updated in place |",
            f"| bm25s | {bm25s_build.wall:.2f} s | {1000 * median(bm25s_query):.1f} ms "
            f"| {1000 * bm25s_update.wall:.1f} ms (rebuilt whole) | saved and loaded whole |",
        ]
    )
    report(
        text,
        args.update_results,
        "lexical-engines",
        "Lexical engine: SQLite FTS5 against bm25s (`benchmarks/lexical_engines.py`)",
        "python benchmarks/lexical_engines.py --store DIR --update-results",
    )


def _vocabulary(documents: list[list[str]]) -> tuple[list[list[int]], dict[str, int]]:
    vocabulary: dict[str, int] = {}
    ids = [[vocabulary.setdefault(t, len(vocabulary)) for t in d] for d in documents]
    return ids, vocabulary


if __name__ == "__main__":
    main()
