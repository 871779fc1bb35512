"""detect-secrets on every line of the code files of each ROOT, against the lines the screens pass.

    python benchmarks/secret_screen.py ROOT [ROOT ...]

For each file of a language whose lines detect-secrets reads as they are: its findings over
every line, over the lines the plain screen passes (``_SCREEN``) and over those the code screen
passes (``_CODE_GATE`` and ``_code_screen``); a file whose findings differ from every line's is
printed. The totals give the lines each screen hands over and the detectors' seconds (each file a round:
its three scans run in an order rotated from the last file's).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from timing import interleaved

import kbc.analyzers.secret_scan as S
from kbc.analyzers.discover import language_of

Finding = tuple[int, str, str]


def files_of(root: Path) -> list[Path]:
    if (root / ".git").exists():
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        return [root / rel for rel in listed if rel]
    return [p for p in root.rglob("*") if p.is_file()]


SCREENS = ("every line", "plain screen", "code screen")


def scanner(
    path: Path, lines: list[tuple[int, str]], out: dict[str, list[Finding]], name: str
) -> Callable[[], None]:
    """The detectors over ``lines`` of ``path``, their findings kept in ``out[name]``."""

    def scan() -> None:
        out[name] = sorted(S._scan(str(path), lines) if lines else [])

    return scan


def main() -> None:
    files = found = differing = plain_lines = code_lines = 0
    seconds = dict.fromkeys(SCREENS, 0.0)
    for root in map(Path, sys.argv[1:]):
        for path in files_of(root):
            if path.is_symlink() or not path.is_file():
                continue
            data = path.read_bytes()
            if b"\0" in data[:4096] or len(data) > 1_000_000:
                continue
            if language_of(str(path.relative_to(root)), data[:4096]) not in S.LINE_LANGUAGES:
                continue
            numbered = list(enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1))
            plain = [(n, line) for n, line in numbered if S._SCREEN.search(line)]
            code = [(n, line) for n, line in numbered if S._CODE_GATE.search(line) and S._code_screen(line)]
            handed = dict(zip(SCREENS, (numbered, plain, code), strict=True))
            shift = files % len(SCREENS)  # the file is the round: the order rotates from file to file
            results: dict[str, list[Finding]] = {}
            samples = interleaved(
                {
                    name: scanner(path, handed[name], results, name)
                    for name in SCREENS[shift:] + SCREENS[:shift]
                },
                1,
            )
            for name, runs in samples.items():
                seconds[name] += runs[0].wall
            files += 1
            plain_lines += len(plain)
            code_lines += len(code)
            every = results["every line"]
            found += len(every)
            if results["plain screen"] != every or results["code screen"] != every:
                differing += 1
                print(
                    "differs:",
                    path,
                    "plain screen",
                    sorted(set(results["plain screen"]) ^ set(every))[:3],
                    "code screen",
                    sorted(set(results["code screen"]) ^ set(every))[:3],
                )
    print(
        f"files {files}, findings {found}, files differing {differing}; lines handed over: plain screen "
        f"{plain_lines}, code screen {code_lines}; detectors: every line {seconds['every line']:.1f} s, "
        f"plain screen {seconds['plain screen']:.1f} s, code screen {seconds['code screen']:.1f} s"
    )


if __name__ == "__main__":
    main()
