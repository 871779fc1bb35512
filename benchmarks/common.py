"""Pieces the benchmarks share: the command line of those that run on a built store, and
module constants set for one run (fetching and unpacking a corpus is :mod:`corpora`'s)."""

from __future__ import annotations

import argparse
import importlib
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


def set_constants(items: list[str]) -> None:
    """Set module constants for one run, each ``MODULE.NAME=VALUE`` (a number, or True/False
    for a switch), keeping the constant's type."""
    for item in items:
        name, value = item.split("=", 1)
        module_name, constant = name.rsplit(".", 1)
        module = importlib.import_module(module_name)
        kind = type(getattr(module, constant))
        if kind is bool:
            if value not in ("True", "False"):
                raise SystemExit(f"{name} is a switch: give True or False, not {value!r}")
            setattr(module, constant, value == "True")
        else:
            setattr(module, constant, kind(float(value)))
