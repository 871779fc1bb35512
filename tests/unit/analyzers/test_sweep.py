"""The credential sweep's count is the later passes' own: a file it calls clean is one where
:func:`redact` finds nothing itself, read the way the analysis and the chunking read it."""

from __future__ import annotations

from pathlib import Path

from helpers import write_tree
from planted import planted

from kbc.analyzers.discover import discover
from kbc.analyzers.python.encoding import decode_source
from kbc.analyzers.secrets import redact
from kbc.analyzers.sweep import sweep_key, sweep_secrets
from kbc.domain.settings import Settings

LATIN = '# -*- coding: latin-1 -*-\n"""Caf\xe9 settings."""\npassword = "Zq8#kLm2$vT9wXr4"\n'


def _redacted(root: Path, path: str, language: str, also: tuple[str, ...], scan: bool) -> str:
    data = (root / path).read_bytes()
    text = decode_source(data)[0] if language == "python" else data.decode("utf-8", errors="replace")
    return redact(str(root / path), text, language, also=also, scan=scan).text


def test_a_file_the_sweep_calls_clean_is_one_redaction_finds_nothing_in(tmp_path: Path) -> None:
    files, _ = planted()
    root = tmp_path / "repo"
    write_tree(root, {**files, "clean.py": "def add(a, b):\n    return a + b\n"})
    (root / "latin.py").write_bytes(LATIN.encode("latin-1"))
    inventory = discover(root, max_file_bytes=Settings().max_file_bytes)
    swept, scanned = sweep_secrets(root, inventory.files, {}, workers=1)
    assert "clean.py" in swept.clean and "latin.py" not in swept.clean
    assert 0 < len(swept.clean) < len(inventory.files)
    for source in inventory.files:
        also = swept.also(source.path)
        full = _redacted(root, source.path, source.language, also, scan=True)
        if source.path in swept.clean:  # the later passes skip the detectors: nothing is lost
            assert _redacted(root, source.path, source.language, also, scan=False) == full, source.path
        else:
            assert scanned[sweep_key(source)] > 0
    # the next build reads the counts kept: the same files are clean without a scan
    again, rescanned = sweep_secrets(root, inventory.files, scanned, workers=1)
    assert again.clean == swept.clean and set(rescanned) == {k for k, n in scanned.items() if n}


def test_a_file_the_sweep_could_not_read_is_never_clean(tmp_path: Path) -> None:
    """Gone (or unreadable) when the sweep reads it, back by the time the analysis does: the
    later passes scan it themselves."""
    root = tmp_path / "repo"
    write_tree(root, {"a.py": "x = 1\n", "b.py": "y = 2\n"})
    inventory = discover(root, max_file_bytes=Settings().max_file_bytes)
    (root / "b.py").unlink()
    swept, scanned = sweep_secrets(root, inventory.files, {}, workers=1)
    assert swept.clean == {"a.py"}
    b = next(f for f in inventory.files if f.path == "b.py")
    assert scanned[sweep_key(b)] < 0  # kept as unknown: the next build reads it again
