"""Command-line pieces the benchmarks that run on a built store share."""

from __future__ import annotations

import argparse
from pathlib import Path


def store_parser(doc: str) -> argparse.ArgumentParser:
    """A parser with --repo, --store, --name, --queries and --update-results."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--store", type=Path)
    parser.add_argument("--name", help="the repository's name in the results (default: the folder's)")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--update-results", action="store_true")
    return parser
