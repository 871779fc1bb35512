"""What a slice's task named, as the slice builder links it."""

from __future__ import annotations

from kbc.serve.named import TARGETS_SHOWN, Named, Target, named

SERVED = frozenset({"pkg/mod.py", "setup.py"})


def test_each_target_opens_its_definition_or_its_lines() -> None:
    matched = [
        {"mention": "pkg/mod.py", "kind": "path", "how": "path", "targets": ["pkg/mod.py"]},
        {"mention": "run", "kind": "name", "how": "tail", "targets": ["pkg.mod.run", "pkg.other.run"]},
        {"mention": "pkg/mod.py:12", "kind": "frame", "how": "frame", "targets": ["pkg/mod.py:12"]},
        {"mention": "boom", "kind": "message", "how": "text", "targets": ["pkg/mod.py:3-9", "setup.py:1-2"]},
    ]
    assert named(matched, SERVED) == [
        Named("pkg/mod.py", "path", (Target("pkg/mod.py", "/source/pkg/mod.py", True),)),
        Named(
            "run",
            "name, tail",
            (
                Target("pkg.mod.run", "/symbol?name=pkg.mod.run", False),
                Target("pkg.other.run", "/symbol?name=pkg.other.run", False),
            ),
        ),
        Named(
            "pkg/mod.py:12",
            "frame",
            (Target("pkg/mod.py:12", "/source/pkg/mod.py?start=12&end=12#L12", True),),
        ),
        Named(
            "boom",
            "message, text",
            (
                Target("pkg/mod.py:3-9", "/source/pkg/mod.py?start=3&end=9#L3", True),
                Target("setup.py:1-2", "/source/setup.py?start=1&end=2#L1", True),
            ),
        ),
    ]


def test_a_file_that_is_not_served_is_text_and_many_targets_are_counted() -> None:
    secret = named(
        [{"mention": "conf/keys.py", "kind": "path", "how": "path", "targets": ["conf/keys.py"]}], SERVED
    )
    assert secret[0].targets == (Target("conf/keys.py", "", True),)
    many = [f"pkg.m{i}.run" for i in range(TARGETS_SHOWN + 3)]
    found = named([{"mention": "run", "kind": "name", "how": "tail", "targets": many}], SERVED)[0]
    assert len(found.targets) == TARGETS_SHOWN and found.more == 3
    odd = named([{"mention": "a&b", "kind": "code", "how": "qname", "targets": ["a&b c"]}], SERVED)[0]
    assert odd.targets[0].href == "/symbol?name=a%26b%20c"
