"""The credentials found and the text redacted in every file, by this checkout and by another.

    python benchmarks/redaction_same.py --against KBC_CHECKOUT ROOT [ROOT ...]

Each text file of each ROOT (its git-tracked files, else every file; none over 1 MB) is read as
the credential sweep reads it, then scanned for its own credentials and redacted, once by the
kbc of this checkout and once by the kbc at ``KBC_CHECKOUT`` (say, a clone of the commit
before a change to the detectors), each in a process of its own. A file whose findings or
redacted text differ is printed; the totals give the files, the findings and the seconds each
spent finding them (the redaction is not timed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import clock

HERE = Path(__file__).resolve()


def files_of(root: Path) -> list[Path]:
    if (root / ".git").exists():
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, text=True, check=True
        ).stdout.split("\0")
        return [root / rel for rel in listed if rel and (root / rel).is_file()]
    return sorted(p for p in root.rglob("*") if p.is_file() and ".kbc" not in p.parts)


def dump(out: Path, roots: list[Path]) -> None:
    """One JSON line per file: path, findings, the redacted text's hash; then the seconds."""
    import hashlib

    import kbc.analyzers.secrets as secrets
    from kbc.analyzers.discover import language_of
    from kbc.analyzers.sweep import read_text

    seconds = 0.0
    with out.open("w") as fh:
        for root in roots:
            for path in files_of(root):
                if path.is_symlink() or path.stat().st_size > 1_000_000:
                    continue
                with path.open("rb") as head:
                    language = language_of(str(path.relative_to(root)), head.read(256))
                text = read_text(path, language)
                if not text or "\0" in text:
                    continue
                with clock() as finding:
                    if hasattr(secrets, "file_findings"):
                        found = sorted(secrets.file_findings(str(path), text, language))
                    else:  # a checkout from before the findings were judged
                        found = sorted(secrets._own_findings(str(path), text, language, text.split("\n")))
                seconds += finding.wall
                redacted = secrets.redact(str(path), text, language).text
                fh.write(json.dumps([str(path), found, hashlib.sha256(redacted.encode()).hexdigest()]) + "\n")
        fh.write(json.dumps({"seconds": seconds}) + "\n")


def run(checkout: Path, out: Path, roots: list[str]) -> tuple[list[list[object]], float]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    subprocess.run([sys.executable, str(HERE), "--dump", str(out), *roots], env=env, check=True)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    return rows[:-1], float(rows[-1]["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another kbc checkout")
    parser.add_argument("--dump", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("roots", nargs="+")
    args = parser.parse_args()
    if args.dump is not None:
        dump(args.dump, [Path(r) for r in args.roots])
        return
    if args.against is None:
        raise SystemExit("--against KBC_CHECKOUT is needed")
    with tempfile.TemporaryDirectory() as work:
        other, other_seconds = run(args.against.resolve(), Path(work) / "other.jsonl", args.roots)
        this, this_seconds = run(HERE.parent.parent, Path(work) / "this.jsonl", args.roots)
    differing = 0
    for before, after in zip(other, this, strict=True):
        if before != after:
            differing += 1
            print(f"DIFFERS {before[0]}: {before[1]} -> {after[1]}", flush=True)
    print(
        f"files {len(this)}, findings {sum(len(r[1]) for r in other)} against "
        f"{sum(len(r[1]) for r in this)}, files differing {differing}"
    )
    print(
        f"seconds finding them: {other_seconds:.2f} against {this_seconds:.2f} "
        f"({this_seconds / max(other_seconds, 1e-9):.2f}x)"
    )


if __name__ == "__main__":
    main()
