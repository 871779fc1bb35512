"""errors: an unexpected exception inside a pass becomes one line naming the pass and file."""

from concurrent.futures import ProcessPoolExecutor

import pytest

from kbc.domain.errors import KbcError, PassError, in_pass


def _explode(path: str) -> None:
    with in_pass("index", path):
        {}["missing"]


def test_an_exception_in_a_pass_names_the_pass_the_file_and_the_cause() -> None:
    with pytest.raises(PassError) as caught:
        _explode("pkg/a.py")
    error = caught.value
    assert str(error).startswith("the index pass failed on pkg/a.py: KeyError: 'missing' (re-run with")
    assert "\n" not in str(error)
    assert isinstance(error.__cause__, KeyError)
    assert (error.pass_name, error.path, error.exit_code) == ("index", "pkg/a.py", 1)


def test_a_kbc_error_passes_through_unchanged() -> None:
    with pytest.raises(KbcError) as caught, in_pass("graph"):
        raise KbcError("a known problem", hint="fix it")
    assert type(caught.value) is KbcError


def test_a_pass_error_crosses_a_process_pool_whole() -> None:
    with ProcessPoolExecutor(max_workers=1) as pool, pytest.raises(PassError) as caught:
        pool.submit(_explode, "pkg/b.py").result()
    assert (caught.value.pass_name, caught.value.path) == ("index", "pkg/b.py")
    assert caught.value.cause == "KeyError: 'missing'"


def test_every_error_maps_to_a_documented_exit_code_and_the_help_lists_them_all() -> None:
    import inspect
    import re

    from click.testing import CliRunner

    from kbc.cli.main import cli
    from kbc.domain import errors

    family = [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, errors.KbcError)]
    used = {c.exit_code for c in family}
    assert used <= set(errors.EXIT_CODES) and used | {0} == set(errors.EXIT_CODES)
    for command in (["--help"], ["refresh", "--help"]):
        shown = CliRunner().invoke(cli, command).output
        listed = " ".join(shown.split("Exit codes:", 1)[1].split())
        assert [int(n) for n in re.findall(r"(?:^|, )(\d) ", listed)] == sorted(errors.EXIT_CODES)


def test_a_command_s_error_is_reported_once_with_its_exit_code(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from kbc.cli.main import cli

    missing = CliRunner().invoke(cli, ["refresh", str(tmp_path / "nowhere")])
    assert missing.exit_code == 5 and missing.stderr.startswith("error: ")
    assert missing.stderr.count("error: ") == 1 and "is not a directory" in missing.stderr
    unbuilt = CliRunner().invoke(cli, ["retrieve", "--repo", str(tmp_path), "anything"])
    assert unbuilt.exit_code != 0 and "kbc build" in unbuilt.stderr
