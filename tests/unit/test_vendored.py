"""The UI's vendored files are the ones their checksums name, and nothing else is shipped."""

from __future__ import annotations

import hashlib
from pathlib import Path

import kbc.serve

STATIC = Path(kbc.serve.__file__).with_name("static")


def test_every_vendored_file_matches_its_checksum_and_none_is_unlisted() -> None:
    folder = STATIC / "mermaid"
    listed = {}
    for line in (folder / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, name = line.split(maxsplit=1)
        listed[name.removeprefix("./")] = digest
    shipped = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert shipped - {"SHA256SUMS", "LICENSE"} == set(listed)
    for name, digest in listed.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name
    assert "MIT License" in (folder / "LICENSE").read_text(encoding="utf-8")
