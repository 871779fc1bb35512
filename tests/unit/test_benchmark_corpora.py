"""The benchmarks' one way to fetch a corpus (``benchmarks/corpora.py``), offline: archives
served from a temporary folder through ``file://`` addresses. A download is checked against
the digest its registry publishes and refused when it differs, written to a ``.partial`` name
first so that nothing half-written is ever kept, recorded and reused without the network, and
unpacked with no link or path out of its tree."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture()
def corpora() -> Iterator[ModuleType]:
    # read by its path: ``corpora`` is also the name of a helper module of the tests
    spec = importlib.util.spec_from_file_location("benchmarks_corpora", BENCHMARKS / "corpora.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module


def tarball(path: Path, members: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    """A gzipped tarball of ``members`` (name: contents) and symbolic ``links`` (name: target)."""
    with tarfile.open(path, "w:gz") as tarred:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tarred.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tarred.addfile(info)
    return path


def served(corpora: ModuleType, path: Path, digest: str | None = None, algorithm: str = "sha256") -> Any:
    """The Remote of a file served from disk, with its true digest unless one is given."""
    true = hashlib.new(algorithm, path.read_bytes()).hexdigest()
    return corpora.Remote(path.as_uri(), algorithm, true if digest is None else digest, "the test")


def never() -> Any:
    raise AssertionError("the registry was asked although the archive is kept")


def test_a_download_is_checked_kept_once_and_reused_without_the_network(
    corpora: ModuleType, tmp_path: Path
) -> None:
    source = tarball(tmp_path / "served.tar.gz", {"pkg-1.0/pkg/__init__.py": b"x = 1\n"})
    kept = tmp_path / "cache" / "pkg-1.0.tar.gz"
    assert corpora.cached(kept, lambda: served(corpora, source)) == kept
    assert kept.read_bytes() == source.read_bytes()
    assert corpora.record_of(kept).read_text().split()[0] == hashlib.sha256(source.read_bytes()).hexdigest()
    assert sorted(p.name for p in kept.parent.iterdir()) == ["pkg-1.0.tar.gz", "pkg-1.0.tar.gz.sha256"]
    source.unlink()  # the registry is gone: the kept archive is used, checked against its record
    assert corpora.cached(kept, never) == kept


def test_a_download_whose_digest_differs_is_refused_and_nothing_is_left(
    corpora: ModuleType, tmp_path: Path
) -> None:
    source = tarball(tmp_path / "served.tar.gz", {"pkg/a.py": b"a = 1\n"})
    cache = tmp_path / "cache"
    with pytest.raises(
        corpora.FetchError, match=r"sha256 [0-9a-f]{64} does not match 0{64}.*the test: refused"
    ):
        corpora.cached(cache / "pkg-1.0.tar.gz", lambda: served(corpora, source, "0" * 64))
    assert list(cache.iterdir()) == []  # no archive, no .partial, no record
    sha512 = hashlib.sha512(b"other").hexdigest()
    with pytest.raises(corpora.FetchError, match="sha512"):
        corpora.cached(cache / "pkg-1.0.tar.gz", lambda: served(corpora, source, sha512, "sha512"))
    assert list(cache.iterdir()) == []


def test_a_download_cut_short_leaves_no_file_and_a_stale_partial_is_replaced(
    corpora: ModuleType, tmp_path: Path
) -> None:
    class Broken(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            if self.tell():
                raise ConnectionResetError("cut")
            return super().read(4)

    archive = tmp_path / "pkg-1.0.tar.gz"
    remote = corpora.Remote("file:///nowhere", "sha256", "", "the test")
    with pytest.raises(ConnectionResetError):
        corpora.save(Broken(b"0123456789"), archive, remote)
    assert list(tmp_path.iterdir()) == []
    source = tarball(tmp_path / "served.tar.gz", {"pkg/a.py": b"a = 1\n"})
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "pkg-1.0.tar.gz.partial").write_bytes(b"half of it")  # a killed run's
    kept = corpora.cached(tmp_path / "cache" / "pkg-1.0.tar.gz", lambda: served(corpora, source))
    assert kept.read_bytes() == source.read_bytes()
    assert not (tmp_path / "cache" / "pkg-1.0.tar.gz.partial").exists()


def test_a_kept_archive_that_changed_is_refused(corpora: ModuleType, tmp_path: Path) -> None:
    source = tarball(tmp_path / "served.tar.gz", {"pkg/a.py": b"a = 1\n"})
    kept = corpora.cached(tmp_path / "cache" / "pkg-1.0.tar.gz", lambda: served(corpora, source))
    kept.write_bytes(kept.read_bytes() + b"\0")
    with pytest.raises(corpora.FetchError, match="recorded when it was downloaded: refused"):
        corpora.cached(kept, never)


def test_an_archive_kept_without_a_record_is_checked_against_the_registry_once(
    corpora: ModuleType, tmp_path: Path
) -> None:
    source = tarball(tmp_path / "served.tar.gz", {"pkg/a.py": b"a = 1\n"})
    kept = tmp_path / "cache" / "pkg-1.0.tar.gz"
    kept.parent.mkdir()
    kept.write_bytes(source.read_bytes())  # as a run before the records left it
    assert corpora.cached(kept, lambda: served(corpora, source)) == kept
    assert corpora.cached(kept, never) == kept  # recorded now
    other = tmp_path / "cache" / "other-1.0.tar.gz"
    other.write_bytes(b"not what the registry published")
    with pytest.raises(corpora.FetchError, match="published by the test: refused"):
        corpora.cached(other, lambda: served(corpora, source))
    assert not corpora.record_of(other).exists()


def test_an_sdist_comes_from_the_index_by_its_sha256_and_is_found_again_by_its_name(
    corpora: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tarball(tmp_path / "Jinja2-3.1.4.tar.gz", {"Jinja2-3.1.4/jinja2/__init__.py": b"x = 1\n"})
    entry = {
        "filename": source.name,
        "url": source.as_uri(),
        "hashes": {"sha256": hashlib.sha256(source.read_bytes()).hexdigest()},
    }
    monkeypatch.setattr(corpora, "index_files", lambda name: [entry])
    work = tmp_path / "work"
    tree = corpora.sdist("jinja2", "3.1.4", work)
    assert tree == work / "src" / "jinja2-3.1.4"
    assert sorted(str(p.relative_to(tree)) for p in tree.rglob("*")) == ["jinja2", "jinja2/__init__.py"]
    monkeypatch.setattr(corpora, "index_files", never)
    assert corpora.sdist_archive("jinja2", "3.1.4", work / "archives") == work / "archives" / source.name
    monkeypatch.setattr(corpora, "index_files", lambda name: [{**entry, "hashes": {"sha256": "1" * 64}}])
    with pytest.raises(corpora.FetchError, match="published by the index: refused"):
        corpora.sdist_archive("jinja2", "3.1.4", tmp_path / "elsewhere")


def test_the_newest_sdist_is_the_newest_release_for_this_python(
    corpora: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [
        {"filename": "pkg-1.9.tar.gz"},
        {"filename": "pkg-1.10.tar.gz"},
        {"filename": "pkg-1.11.tar.gz", "yanked": "broken"},
        {"filename": "pkg-2.0rc1.tar.gz"},
        {"filename": "pkg-3.0.tar.gz", "requires-python": ">=4"},
        {"filename": "pkg-5.0-py3-none-any.whl"},
    ]
    monkeypatch.setattr(corpora, "index_files", lambda name: files)
    assert corpora.latest_version("pkg") == "1.10"


def test_an_npm_tarball_is_checked_by_its_published_integrity(
    corpora: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tarball(tmp_path / "served.tgz", {"package/package.json": b"{}"})
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(source.read_bytes()).digest()).decode()
    dist = {"tarball": source.as_uri(), "integrity": integrity}
    asked: list[str] = []
    monkeypatch.setattr(corpora, "get_json", lambda url: asked.append(url) or {"dist": dist})
    kept = corpora.npm_archive("@scope/pkg", "1.0.0", tmp_path / "npm")
    assert kept.name == "scope-pkg-1.0.0.tgz" and asked == [corpora.NPM.format("@scope%2Fpkg", "1.0.0")]
    dist["integrity"] = "sha512-" + base64.b64encode(hashlib.sha512(b"else").digest()).decode()
    with pytest.raises(corpora.FetchError, match="sha512 .* published by npm's registry: refused"):
        corpora.npm_archive("other", "1.0.0", tmp_path / "npm")


def test_a_link_or_a_path_out_of_the_tree_is_refused_and_nothing_is_unpacked(
    corpora: ModuleType, tmp_path: Path
) -> None:
    target = tmp_path / "out" / "pkg"
    for name, members, links in (
        ("link.tar.gz", {"pkg/a.py": b""}, {"pkg/evil": "../../../etc/passwd"}),
        ("absolute.tar.gz", {"pkg/a.py": b""}, {"pkg/evil": "/etc/passwd"}),
        ("climb.tar.gz", {"pkg/a.py": b"", "../climbed.py": b""}, None),
    ):
        with pytest.raises(tarfile.FilterError):
            corpora.unpack(tarball(tmp_path / name, members, links), target, top=True)
        assert sorted(p.name for p in (tmp_path / "out").iterdir()) == []
        assert not (tmp_path / "climbed.py").exists()


def test_archives_unpack_whole_or_by_their_top_folder(corpora: ModuleType, tmp_path: Path) -> None:
    source = tarball(
        tmp_path / "s.tar.gz", {"pkg-1.0/a.py": b"a", "pkg-1.0/sub/b.py": b"b"}, {"pkg-1.0/l": "a.py"}
    )
    tree = corpora.unpack(source, tmp_path / "src" / "pkg-1.0", top=True)
    assert sorted(str(p.relative_to(tree)) for p in tree.rglob("*")) == ["a.py", "l", "sub", "sub/b.py"]
    assert sorted(p.name for p in (tmp_path / "src").iterdir()) == ["pkg-1.0"]
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zipped:
        zipped.writestr("pkg/__init__.py", "")
        zipped.writestr("pkg-1.0.dist-info/METADATA", "")
    tree = corpora.unpack(wheel, tmp_path / "src" / "pkg-1.0-wheel")
    assert sorted(p.name for p in tree.iterdir()) == ["pkg", "pkg-1.0.dist-info"]


def test_a_debian_package_unpacks_its_data_tar(corpora: ModuleType, tmp_path: Path) -> None:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:xz") as tarred:
        info = tarfile.TarInfo("./usr/share/doc/pkg/README")
        info.size = 2
        tarred.addfile(info, io.BytesIO(b"hi"))
    members = [("debian-binary", b"2.0\n"), ("control.tar.xz", b"x"), ("data.tar.xz", data.getvalue())]
    deb = tmp_path / "pkg_1.0-1_all.deb"
    with deb.open("wb") as out:
        out.write(b"!<arch>\n")
        for name, body in members:
            out.write(f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(body):<10}`\n".encode())
            out.write(body + b"\n" * (len(body) % 2))
    tree = corpora.unpack(deb, tmp_path / "deb")
    assert (tree / "usr" / "share" / "doc" / "pkg" / "README").read_text() == "hi"
    (tmp_path / "bad.deb").write_bytes(b"not an ar archive")
    with pytest.raises(tarfile.ReadError, match="not a Debian package"):
        corpora.unpack(tmp_path / "bad.deb", tmp_path / "bad")
    assert not (tmp_path / "bad").exists() and not (tmp_path / "bad.partial").exists()
