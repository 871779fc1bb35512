"""`kbc analyze` and `kbc symbols` end to end, through the CLI."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from helpers import RepoFactory, git

from kbc.cli.main import cli


def run(*args: str) -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(cli, [*args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def analyze_json(root: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    return run("analyze", str(root), "--format", "json", "--workers", "1", *extra)


def store_bytes(store: Path) -> dict[str, bytes]:
    generation = (store / "CURRENT").read_text().strip()
    return {p.name: p.read_bytes() for p in sorted((store / generation).iterdir())}


BAD_INPUT = {
    "pkg/__init__.py": "",
    "pkg/good.py": "def fine():\n    return 1\n",
    "pkg/syntax.py": "def broken(:\n    pass\n",
    "pkg/py2.py": "print 'hello'\n",
    "pkg/latin1.py": "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n".encode("latin-1"),
    "pkg/latin1_nocookie.py": "name = 'caf\xe9'\n".encode("latin-1"),
    "pkg/binary.py": b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)),
    "pkg/huge.py": "x = 1\n" * (20 * 1024 * 1024 // 6 + 1),
}


@pytest.mark.slow
def test_bad_input_corpus_builds_and_reports_each_problem(make_repo: RepoFactory, tmp_path: Path) -> None:
    root = make_repo(BAD_INPUT)
    outside = tmp_path / "outside.py"
    outside.write_text("SECRET = 1\n")
    (root / "pkg" / "escape.py").symlink_to(outside)
    (root / "pkg" / "loop.py").symlink_to(root / "pkg" / "loop2.py")
    (root / "pkg" / "loop2.py").symlink_to(root / "pkg" / "loop.py")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "links")

    summary = analyze_json(root)

    failures = {f["path"]: f for f in summary["failures"]}
    assert set(failures) == {"pkg/syntax.py", "pkg/py2.py"}
    assert failures["pkg/syntax.py"]["error"].startswith("syntax error")
    assert (failures["pkg/py2.py"]["line"], failures["pkg/py2.py"]["column"]) == (1, 1)
    assert "Missing parentheses in call to 'print'" in failures["pkg/py2.py"]["error"]
    assert failures["pkg/syntax.py"]["line"] == 1
    assert summary["skipped_by_reason"] == {
        "binary": 1,
        "broken-symlink": 2,
        "oversized": 1,
        "symlink-outside": 1,
    }
    assert any("latin1_nocookie.py: not valid utf-8" in w for w in summary["warnings"])
    assert summary["symbols"] == 1 and summary["failed"] == 2
    store = Path(summary["store"])
    problems = json.loads((store / (store / "CURRENT").read_text().strip() / "problems.json").read_text())
    assert sorted(f["path"] for f in problems["failures"]) == ["pkg/py2.py", "pkg/syntax.py"]

    text = CliRunner().invoke(cli, ["analyze", str(root), "--workers", "1"]).output
    assert "pkg/py2.py:1:1: syntax error: Missing parentheses" in text
    assert "skipped       5 (binary 1, broken-symlink 2, oversized 1, symlink-outside 1)" in text


@pytest.mark.slow
def test_two_runs_write_identical_stores(make_repo: RepoFactory, tmp_path: Path) -> None:
    root = make_repo(
        {
            "app/__init__.py": "from app.core import run\n",
            "app/core.py": (
                "import os\n\ndef run():\n    return helper(os.getenv('X'))\n\ndef helper(x): ...\n"
            ),
            "app/cli.py": "import click\nimport app\n\n@click.command()\ndef main():\n    app.run()\n",
        }
    )
    first = tmp_path / "first"
    second = tmp_path / "second"
    analyze_json(root, "--store", str(first))
    run("analyze", str(root), "--format", "json", "--workers", "2", "--store", str(second))
    assert store_bytes(first) == store_bytes(second)
    analyze_json(root, "--store", str(first))
    assert store_bytes(first) == store_bytes(second)


@pytest.mark.slow
def test_cache_reparses_only_the_changed_file(make_repo: RepoFactory) -> None:
    root = make_repo({f"m{i}.py": f"def f{i}(): ...\n" for i in range(5)})
    assert analyze_json(root)["parsed"] == 5
    (root / "m3.py").touch()
    assert (analyze_json(root)["parsed"], analyze_json(root)["cached"]) == (0, 5)
    (root / "m3.py").write_text("def g3(): ...\n")
    again = analyze_json(root)
    assert (again["parsed"], again["cached"], again["symbols"]) == (1, 4, 5)


def test_config_errors_exit_2_with_every_problem(make_repo: RepoFactory) -> None:
    root = make_repo({"kbc.toml": "[graph]\nmax_modules = 0\nsplit = 2\n"})
    result = CliRunner().invoke(cli, ["analyze", str(root)])
    assert result.exit_code == 2
    assert "2 configuration errors" in result.output
    assert "graph.split: unknown setting" in result.output


@pytest.mark.slow
def test_analyze_and_symbols_on_a_real_package(tmp_path: Path) -> None:
    """The installed click's sources, analyzed as a plain directory (src layout)."""
    root = tmp_path / "click-src"
    shutil.copytree(
        Path(click.__file__).parent, root / "src" / "click", ignore=shutil.ignore_patterns("__pycache__")
    )
    (root / "pyproject.toml").write_text("[project]\nname = 'click'\n")
    summary = run("analyze", str(root), "--format", "json")
    assert summary["failed"] == 0
    assert summary["python_files"] >= 15 and summary["symbols"] > 500
    assert summary["import_edges"] > 30 and summary["call_edges"] > 400

    reports = run("symbols", "click.core.Command.main", "--repo", str(root), "--format", "json")
    # typing overloads are definitions too; the implementation is the one without @overload
    (report,) = [r for r in reports if not any("overload" in d for d in r["symbol"]["decorators"])]
    assert all(r["location"].startswith("src/click/core.py:") for r in reports)
    path, span = report["location"].rsplit(":", 1)
    start, end = (int(n) for n in span.split("-"))
    lines = (root / path).read_text().splitlines()
    assert path == "src/click/core.py"
    assert lines[start - 1].lstrip().startswith(("def main", "@"))
    assert "def main" in "\n".join(lines[start - 1 : start + 8])
    assert end > start + 20
    callees = {c["qname"] for c in report["callees"]}
    assert "click.core.Command.make_context" in callees

    text = CliRunner().invoke(cli, ["symbols", "Command.make_context", "--repo", str(root)]).output
    assert text.startswith("click.core.Command.make_context  method  src/click/core.py:")
    assert "callers (" in text and "click.core.Command.main" in text


def test_unknown_symbol_exits_1(make_repo: RepoFactory) -> None:
    root = make_repo({"m.py": "def f(): ...\n"})
    analyze_json(root)
    result = CliRunner().invoke(cli, ["symbols", "nope", "--repo", str(root)])
    assert result.exit_code == 1
    assert "no symbol named 'nope'" in result.output


def test_help_is_instant_because_nothing_heavy_is_imported() -> None:
    code = (
        "import sys\nfrom kbc.cli.main import cli\n"
        "heavy = {'libcst', 'networkx', 'scipy', 'git', 'chromadb', 'litellm', 'fastembed'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    help_out = subprocess.run(
        [sys.executable, "-m", "kbc", "--help"], capture_output=True, text=True, check=True
    )
    assert "analyze" in help_out.stdout and "symbols" in help_out.stdout


def test_the_cli_reference_is_current() -> None:
    from kbc.cli.docs import cli_reference

    reference = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    assert reference == cli_reference(), "regenerate it: python -m kbc.cli.docs > docs/cli.md"


@pytest.mark.slow
def test_an_unexpected_error_is_one_line_and_debug_shows_the_traceback(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    root = make_repo({"m.py": "def f(): ...\n"})
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    store = ["--store", str(blocker / "store")]
    kbc = [sys.executable, "-m", "kbc"]
    in_a_pass = subprocess.run([*kbc, "analyze", str(root), *store], capture_output=True, text=True)
    outside = subprocess.run([*kbc, "build", "--no-llm", str(root), *store], capture_output=True, text=True)
    for result, start in (
        (in_a_pass, "error: the secrets pass failed: NotADirectoryError: "),
        (outside, "error: unexpected NotADirectoryError: "),
    ):
        assert result.returncode == 1
        *passes, error = result.stderr.splitlines()  # the passes run so far, then the error
        assert error.startswith(start) and "--debug" in error, result.stderr
        assert not any(line.startswith("error") for line in passes), result.stderr
        assert "Traceback" not in result.stderr
    debug = subprocess.run([*kbc, "--debug", "analyze", str(root), *store], capture_output=True, text=True)
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr and "NotADirectoryError" in debug.stderr
