"""Module names from paths: flat layout, src layout, namespace packages, projects."""

from kbc.analyzers.modules import detect_source_roots, module_name, resolve_relative


def test_flat_layout_names_modules_from_the_root() -> None:
    roots = detect_source_roots(["setup.py", "pkg/__init__.py", "pkg/core.py"])
    assert module_name("pkg/core.py", roots) == ("pkg.core", False)
    assert module_name("pkg/__init__.py", roots) == ("pkg", True)


def test_src_layout_strips_src() -> None:
    roots = detect_source_roots(["pyproject.toml", "src/pkg/__init__.py", "src/pkg/a.py", "tests/test_a.py"])
    assert module_name("src/pkg/a.py", roots) == ("pkg.a", False)
    assert module_name("tests/test_a.py", roots) == ("tests.test_a", False)


def test_namespace_packages_keep_every_level() -> None:
    roots = detect_source_roots(
        ["pyproject.toml", "src/acme/billing/__init__.py", "src/acme/billing/rules.py"]
    )
    assert module_name("src/acme/billing/rules.py", roots) == ("acme.billing.rules", False)


def test_nested_projects_are_their_own_roots() -> None:
    roots = detect_source_roots(
        [
            "libs/client/pyproject.toml",
            "libs/client/src/client/api.py",
            "libs/server/setup.py",
            "libs/server/server/app.py",
        ]
    )
    assert module_name("libs/client/src/client/api.py", roots) == ("client.api", False)
    assert module_name("libs/server/server/app.py", roots) == ("server.app", False)


def test_a_src_package_is_not_a_root() -> None:
    roots = detect_source_roots(["src/__init__.py", "src/a.py"])
    assert module_name("src/a.py", roots) == ("src.a", False)


def test_configured_roots_replace_detection() -> None:
    roots = detect_source_roots(["lib/pkg/a.py", "pyproject.toml"], configured=["lib"])
    assert module_name("lib/pkg/a.py", roots) == ("pkg.a", False)


def test_resolve_relative_levels() -> None:
    assert resolve_relative("a.b.c", False, 1, "d") == "a.b.d"
    assert resolve_relative("a.b.c", False, 2, "") == "a"
    assert resolve_relative("a.b", True, 1, "c") == "a.b.c"
    assert resolve_relative("a", False, 2, "x") == ""
