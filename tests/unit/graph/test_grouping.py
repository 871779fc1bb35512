"""Module grouping: split large packages per subdirectory, capped."""

from kbc.graph.grouping import group_modules


def modules(*paths: str) -> list[tuple[str, str]]:
    out = []
    for path in paths:
        stem = path[:-3].replace("/", ".")
        out.append((stem[: -len(".__init__")] if stem.endswith(".__init__") else stem, path))
    return out


LARGE = modules(
    "big/__init__.py",
    "big/top.py",
    *(f"big/db/m{i}.py" for i in range(4)),
    "big/db/__init__.py",
    *(f"big/web/m{i}.py" for i in range(3)),
    "small/__init__.py",
)


def test_small_packages_stay_whole() -> None:
    groups = group_modules(LARGE, split_files=100, max_modules=10)
    assert [(g.name, len(g.files)) for g in groups] == [("big", 10), ("small", 1)]


def test_a_package_past_the_threshold_splits_per_subdirectory() -> None:
    groups = group_modules(LARGE, split_files=4, max_modules=10)
    assert [(g.name, len(g.files)) for g in groups] == [
        ("big", 2),
        ("big.db", 5),
        ("big.web", 3),
        ("small", 1),
    ]
    assert groups[1].modules[0] == "big.db"


def test_the_split_never_exceeds_the_cap() -> None:
    groups = group_modules(LARGE, split_files=4, max_modules=3)
    assert [g.name for g in groups] == ["big", "small"]


def test_too_many_top_level_modules_fold_into_other() -> None:
    groups = group_modules(
        modules(*(f"s{i}.py" for i in range(5)), "pkg/__init__.py", "pkg/a.py"), split_files=10, max_modules=3
    )
    assert [(g.name, len(g.files)) for g in groups] == [("(other)", 4), ("pkg", 2), ("s0", 1)]
