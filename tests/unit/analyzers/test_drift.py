"""Knowledge drift, the pure part: front-matter, globs, mentions, names, one document's verdict."""

import textwrap

import pytest
from helpers import facts_of

from kbc.analyzers.drift import (
    Commit,
    FrontMatter,
    check_document,
    compile_glob,
    governs,
    parse_front_matter,
    stale_refs,
)
from kbc.analyzers.link import link
from kbc.analyzers.mentions import Mention, code_spans, scope_bindings
from kbc.domain.codec import to_data
from kbc.domain.drift import DriftReason, DriftReport
from kbc.graph.mentions import MentionChecker
from kbc.graph.symbols import SymbolTable


def doc(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# -- front-matter ------------------------------------------------------------------


def test_front_matter_refs_and_where_the_body_starts() -> None:
    front = parse_front_matter(
        doc("""
        ---
        title: Retrieval
        refs:
          - kbc/retrieval/**
          - ./kbc/index/lexical.py
          - /README.md
        ---
        # Retrieval
        Uses `kbc.index`.
    """)
    )
    assert front.refs == ("kbc/retrieval/**", "kbc/index/lexical.py", "README.md")
    assert front.problem == ""
    assert front.body == "# Retrieval\nUses `kbc.index`.\n"
    assert front.body_line == 8


def test_a_single_string_ref_and_documents_without_refs() -> None:
    assert parse_front_matter("---\nrefs: pkg/*.py\n---\nbody\n").refs == ("pkg/*.py",)
    assert parse_front_matter("---\ntitle: x\n---\nbody\n") == FrontMatter((), "body\n", 4, title="x")
    assert parse_front_matter("---\ntags: [a, b]\n---\n").tags == ("a", "b")
    assert parse_front_matter("---\n---\nbody\n") == FrontMatter((), "body\n", 3)
    assert parse_front_matter("---\nrefs:\n---\n").refs == ()
    plain = "# Title\n---\nrefs: [a]\n---\n"
    assert parse_front_matter(plain) == FrontMatter((), plain, 1)
    assert parse_front_matter("") == FrontMatter((), "", 1)


def test_a_byte_order_mark_and_crlf_line_ends_are_accepted() -> None:
    front = parse_front_matter("\ufeff---\r\nrefs:\r\n  - a.py\r\n---\r\nbody\r\n")
    assert (front.refs, front.body, front.problem) == (("a.py",), "body\r\n", "")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "---\nrefs: [a.py\n---\nbody\n",
            "front-matter is not valid YAML: expected ',' or ']', but got '<stream end>'",
        ),
        ("---\nrefs:\n  - a.py\n bad: : x\n---\n", "front-matter is not valid YAML: "),
        ("---\n- a.py\n- b.py\n---\n", "front-matter must be a mapping of keys to values, not a list"),
        ("---\njust text\n---\n", "front-matter must be a mapping of keys to values, not a str"),
        ("---\nrefs: {a: 1}\n---\n", "front-matter `refs` must be a list of globs, not a dict"),
        ("---\nrefs: 3\n---\n", "front-matter `refs` must be a list of globs, not a int"),
        (
            "---\nrefs: [a.py, 3, '']\n---\n",
            "front-matter `refs`: item 2 (3) is not a glob; item 3 ('') is not a glob",
        ),
        (
            "---\nrefs: [a.py]\nbody without a closing line\n",
            "front-matter opened by `---` on line 1 is never closed by a `---` line",
        ),
        ("---\nwhen: 2026-13-45\n---\n", "front-matter is not valid YAML: month must be in 1..12"),
        ("---\n!!python/object:os.system x\n---\n", "front-matter is not valid YAML: "),
    ],
)
def test_malformed_front_matter_is_a_problem_not_an_exception(text: str, problem: str) -> None:
    front = parse_front_matter(text)
    assert front.problem.startswith(problem), front.problem


def test_yaml_errors_name_the_line_of_the_file() -> None:
    front = parse_front_matter("---\ntitle: x\nrefs: [a.py\n---\n")
    assert front.problem.endswith("(line 4)"), front.problem
    assert front.refs == ()
    assert front.body == ""


def test_valid_refs_are_kept_beside_bad_items() -> None:
    front = parse_front_matter("---\nrefs: [a.py, null, b/**]\n---\n")
    assert front.refs == ("a.py", "b/**")
    assert front.problem == "front-matter `refs`: item 2 (None) is not a glob"


# -- globs ---------------------------------------------------------------------------

PATHS = [
    "README.md",
    "kbc/__init__.py",
    "kbc/retrieval/rank.py",
    "kbc/retrieval/sub/pack.py",
    "kbc/index/lexical.py",
    "kbc/index/chunks.py",
    "docs/a.md",
    "tests/unit/test_x.py",
]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("kbc/retrieval/**", ["kbc/retrieval/rank.py", "kbc/retrieval/sub/pack.py"]),
        ("kbc/retrieval/*", ["kbc/retrieval/rank.py", "kbc/retrieval/sub/pack.py"]),  # sub/ is matched whole
        ("kbc/retrieval/*.py", ["kbc/retrieval/rank.py"]),
        ("kbc/*.py", ["kbc/__init__.py"]),
        (
            "kbc/**/*.py",
            [
                "kbc/__init__.py",
                "kbc/index/chunks.py",
                "kbc/index/lexical.py",
                "kbc/retrieval/rank.py",
                "kbc/retrieval/sub/pack.py",
            ],
        ),
        ("**/pack.py", ["kbc/retrieval/sub/pack.py"]),
        ("**/test_*.py", ["tests/unit/test_x.py"]),
        ("kbc/index", ["kbc/index/chunks.py", "kbc/index/lexical.py"]),
        ("kbc/index/", ["kbc/index/chunks.py", "kbc/index/lexical.py"]),
        ("kbc/index/lexical.py/", []),
        ("kbc/index/l?xical.py", ["kbc/index/lexical.py"]),
        ("kbc/index/[cl]*.py", ["kbc/index/chunks.py", "kbc/index/lexical.py"]),
        ("kbc/index/[!c]*.py", ["kbc/index/lexical.py"]),
        ("*.md", ["README.md"]),  # anchored at the root
        ("kbc/r*", ["kbc/retrieval/rank.py", "kbc/retrieval/sub/pack.py"]),
        ("kbc/**/rank.py", ["kbc/retrieval/rank.py"]),
        ("kbc/retrieval/**/pack.py", ["kbc/retrieval/sub/pack.py"]),
        ("**", sorted(PATHS)),
        ("kbc/nothing/**", []),
    ],
)
def test_globs_match_like_gitignore_anchored_at_the_root(pattern: str, expected: list[str]) -> None:
    assert sorted(p for p in set(PATHS) if governs([pattern], p)) == expected
    assert [p for p in sorted(PATHS) if compile_glob(pattern).matches(p)] == expected


def test_a_negated_glob_excludes_and_the_last_match_wins() -> None:
    refs = ["kbc/**", "!kbc/index/**", "kbc/index/lexical.py"]
    assert sorted(p for p in set(PATHS) if governs(refs, p)) == [
        "kbc/__init__.py",
        "kbc/index/lexical.py",
        "kbc/retrieval/rank.py",
        "kbc/retrieval/sub/pack.py",
    ]
    assert compile_glob("!kbc/index/**").negated


def test_special_characters_are_literal() -> None:
    assert compile_glob("docs/a+b (1).md").matches("docs/a+b (1).md")
    assert not compile_glob("docs/a.md").matches("docs/aXmd")
    assert compile_glob(r"docs/\*.md").matches("docs/*.md")
    assert not compile_glob(r"docs/\*.md").matches("docs/a.md")
    assert compile_glob("docs/[abc").matches("docs/[abc")


def test_stale_refs_are_including_globs_that_match_nothing() -> None:
    refs = ["kbc/retrieval/**", "kbc/gone.py", "!kbc/also_gone/**", "src/**"]
    assert stale_refs(refs, PATHS) == ("kbc/gone.py", "src/**")
    assert stale_refs([], PATHS) == ()


# -- mentions --------------------------------------------------------------------------


def test_code_spans_outside_fenced_blocks_with_their_lines() -> None:
    body = doc("""
        Call `run()` and ``a `tick` inside`` then `x`.
        An unmatched `` tick, and `pkg.mod.f`.

        ```python
        `not_a_span()`
        ```
        ~~~~
        `nor_this()`
        ```
        `still_fenced()`
        ~~~~
        - item:
            ```
            `indented_fence()`
            ```
        > ```
        > `quoted_fence()`
        > ```
        `after()` and `` `` and ` ` end
    """)
    spans = code_spans(body, first_line=10)
    assert spans == [
        Mention("run()", 10),
        Mention("a `tick` inside", 10),
        Mention("x", 10),
        Mention("pkg.mod.f", 11),
        Mention("after()", 28),
    ]


def test_an_unclosed_fence_hides_the_rest_and_backticks_in_an_info_string_do_not_open_one() -> None:
    assert code_spans("```\n`a()`\n") == []
    assert code_spans("```not `a` fence```\n`b()`\n") == [Mention("not `a` fence", 1), Mention("b()", 2)]


# -- names ---------------------------------------------------------------------------

CORE = """
    import os
    from pathlib import Path
    from pkg.base import Base as _Base
    from pkg.util import *

    LIMIT = 3
    if os.name:
        MODE: str = "x"

    def compute(x):
        return x

    class Engine(_Base):
        kind = "fast"
        size: int = 1

        def __init__(self):
            self.speed = 2

        def run(self):
            pass

    class Plugin(dict):
        pass
"""
BASE = """
    class Base:
        def start(self):
            pass
"""
UTIL = """
    def tidy():
        pass
"""


def index() -> MentionChecker:
    sources = {"pkg/core.py": CORE, "pkg/base.py": BASE, "pkg/util.py": UTIL, "pkg/__init__.py": ""}
    facts = [
        facts_of(
            source,
            module=path.removesuffix(".py").replace("/", ".").removesuffix(".__init__"),
            path=path,
            is_package=path.endswith("__init__.py"),
        )
        for path, source in sources.items()
    ]
    return MentionChecker(SymbolTable(link(facts), lambda path: textwrap.dedent(sources[path])))


@pytest.mark.parametrize(
    "name",
    [
        "pkg",
        "pkg.core",
        "pkg.core.compute",
        "pkg.core.compute()",
        "pkg.core.Engine",
        "pkg.core.Engine.run",
        "pkg.core.Engine.run()",
        "pkg.core.Engine.speed",
        "pkg.core.Engine.kind",
        "pkg.core.Engine.size",
        "pkg.core.Engine.start",  # inherited
        "pkg.core.Plugin.keys()",  # from a base outside the repository
        "pkg.core.LIMIT",
        "pkg.core.MODE",
        "pkg.core.Path",
        "pkg.core.Path.cwd()",
        "pkg.core.os.path",
        "pkg.core.tidy",  # star import
        "pkg.core._Base.start",
        "pkg.core.compute.__name__",
        "pkg.toml",
        "pkg.core.json",  # files, not code
        "kbc.nothing",
        "other.gone()",
        "self.gone()",
        "os.remove()",
        "run()",
        "compute()",
        "len()",
        "Engine.run()",
        "Path.unlink()",
        "dict.keys()",
        "tidy()",
        "start()",
        "a b()",
        "x = f()",
        "pkg.",
    ],
)
def test_names_the_code_has_or_cannot_judge_pass(name: str) -> None:
    assert index().missing([Mention(name, 1)]) == ()


@pytest.mark.parametrize(
    "name",
    [
        "pkg.gone",
        "pkg.core.gone",
        "pkg.core.gone()",
        "pkg.core.Engine.stop",
        "pkg.core.Engine.stop()",
        "pkg.core.Engine.gone.run",
        "pkg.cor.compute",
        "pkg.base.Base.speed",
        "pkg.util.untidy",
        "pkg.core._Base.stop",
        "gone()",
        "Engine.stop()",
        "Gone.run2()",
        "pkg.core.py()",
    ],
)
def test_names_the_code_no_longer_has_are_missing(name: str) -> None:
    assert index().missing([Mention(name, 1)]) == (name,)


def test_missing_names_are_unique_and_sorted() -> None:
    mentions = [Mention("zap()", 1), Mention("pkg.core.gone", 2), Mention("zap()", 3), Mention("run()", 4)]
    assert index().missing(mentions) == ("pkg.core.gone", "zap()")


def test_without_python_facts_nothing_is_judged() -> None:
    assert MentionChecker(SymbolTable([])).missing([Mention("gone()", 1)]) == ()


def test_scope_bindings_cover_module_and_class_bodies() -> None:
    scopes = scope_bindings(
        textwrap.dedent("""
        import a.b
        from c import d as e
        X, (Y, *Z) = 1, (2, 3)
        for I in []: pass
        try:
            import fast as impl
        except ImportError:
            impl = None
        class K:
            A = 1
            class Inner:
                B: int
            def m(self):
                local = 1
    """)
    )
    assert scopes[""] == {"a", "e", "X", "Y", "Z", "I", "impl", "K"}
    assert scopes["K"] == {"A", "Inner", "m"}
    assert scopes["K.Inner"] == {"B"}
    assert scope_bindings("def broken(:\n") == {}


# -- one document --------------------------------------------------------------------


def commit(sha: str, date: str, *paths: str) -> Commit:
    return Commit(sha, date, paths)


def test_a_document_behind_for_every_reason() -> None:
    front = parse_front_matter(
        doc("""
        ---
        refs: [pkg/core.py, pkg/sub/**, pkg/old/**]
        ---
        `pkg.core.gone` and `pkg.core.compute`
    """)
    )
    history = [
        commit("c3", "2026-01-05", "pkg/sub/new.py", "docs/core.md"),
        commit("c2", "2026-01-03", "README.md"),
        commit("c1", "2026-01-02", "pkg/core.py", "pkg/util.py"),
    ]
    report = check_document(
        "docs/core.md",
        front,
        tracked=["pkg/core.py", "pkg/sub/new.py"],
        code=index(),
        last=("c0", "2026-01-01"),
        history=history,
    )
    assert report == DriftReport(
        "docs/core.md",
        (
            DriftReason(
                "code_changed",
                "2 commits since the document's last commit (2026-01-01) changed 2 governed files; "
                "the latest on 2026-01-05",
                commits_since=2,
                last_change="2026-01-05",
                files=("pkg/core.py", "pkg/sub/new.py"),
            ),
            DriftReason(
                "missing_symbols", "mentions 1 name the code no longer has", names=("pkg.core.gone",)
            ),
            DriftReason("stale_ref", "1 ref matches no tracked file", refs=("pkg/old/**",)),
        ),
        "c0",
        "2026-01-01",
    )
    assert to_data(report)["reasons"][0]["files"] == ["pkg/core.py", "pkg/sub/new.py"]
    assert report.reason("stale_ref") is not None and report.reason("bad_front_matter") is None


def test_an_up_to_date_document_has_no_report() -> None:
    front = parse_front_matter("---\nrefs: [pkg/core.py]\n---\n`pkg.core.compute()`\n")
    unrelated = [commit("c1", "2026-01-02", "pkg/util.py")]
    assert (
        check_document(
            "d.md", front, tracked=["pkg/core.py"], code=index(), last=("c0", "2026-01-01"), history=unrelated
        )
        is None
    )
    # Without a last commit (never committed) history cannot say anything.
    assert (
        check_document(
            "d.md",
            front,
            tracked=["pkg/core.py"],
            code=index(),
            history=[commit("c1", "2026-01-02", "pkg/core.py")],
        )
        is None
    )


def test_bad_front_matter_is_a_reason_and_the_body_is_still_checked() -> None:
    front = parse_front_matter("---\nrefs: [\n---\n`gone()`\n")
    report = check_document("d.md", front, tracked=[], code=index())
    assert report is not None
    assert [r.kind for r in report.reasons] == ["missing_symbols", "bad_front_matter"]
    assert report.reasons[0].names == ("gone()",)
    assert report.reasons[1].detail.startswith("front-matter is not valid YAML")
