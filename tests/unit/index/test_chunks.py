"""Chunking: line windows with overlap, Markdown snapped to headings, stable ids."""

from hypothesis import given
from hypothesis import strategies as st

from kbc.analyzers.roles import is_test_path, role_of
from kbc.index.chunks import chunk_text, markdown_sections, split_lines, windows


@given(st.integers(1, 2000), st.integers(2, 120), st.data())
def test_windows_cover_every_line_hold_the_overlap_and_never_exceed_the_size(
    lines: int, size: int, data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    spans = list(windows(1, lines, size, overlap))
    covered = set()
    for start, end in spans:
        assert 1 <= start <= end <= lines
        assert end - start + 1 <= size
        covered.update(range(start, end + 1))
    assert covered == set(range(1, lines + 1))
    for (s1, e1), (s2, _) in zip(spans, spans[1:], strict=False):
        assert s2 == s1 + size - overlap  # every neighbour shares exactly `overlap` lines
        assert e1 - s2 + 1 == overlap


@given(
    st.lists(
        st.sampled_from(["x = 1", "", "# Title", "## Sub", "```", "text", "### Deep"]),
        min_size=1,
        max_size=300,
    ),
    st.integers(3, 40),
)
def test_markdown_chunks_cover_every_line_and_respect_the_size(lines: list[str], size: int) -> None:
    text = "\n".join(lines) + "\n"
    chunks = chunk_text("doc.md", text, "markdown", size=size, overlap=1)
    covered = set()
    for chunk in chunks:
        assert chunk.end_line - chunk.start_line + 1 <= size
        covered.update(range(chunk.start_line, chunk.end_line + 1))
        assert chunk.text == "".join(split_lines(text)[chunk.start_line - 1 : chunk.end_line])
    assert covered == set(range(1, len(lines) + 1))


def test_markdown_windows_start_at_headings_and_carry_the_breadcrumb() -> None:
    text = "# Guide\nintro\n## Install\nstep\n### Linux\napt\n```\n# not a heading\n```\n## Use\nrun\n"
    sections = markdown_sections(split_lines(text))
    assert [(s.start, s.breadcrumb) for s in sections] == [
        (1, "Guide"),
        (3, "Guide > Install"),
        (5, "Guide > Install > Linux"),
        (10, "Guide > Use"),
    ]
    chunks = chunk_text("guide.md", text, "markdown", size=4, overlap=1)
    assert [(c.start_line, c.end_line, c.heading) for c in chunks] == [
        (1, 4, "Guide"),
        (5, 8, "Guide > Install > Linux"),
        (8, 9, "Guide > Install > Linux"),
        (10, 11, "Guide > Use"),
    ]
    assert all(c.kind == "doc" for c in chunks)


def test_ids_are_stable_and_change_with_content_or_window() -> None:
    first = chunk_text("a.py", "x = 1\ny = 2\n", "python", size=60, overlap=12)
    again = chunk_text("a.py", "x = 1\ny = 2\n", "python", size=60, overlap=12)
    edited = chunk_text("a.py", "x = 1\ny = 3\n", "python", size=60, overlap=12)
    moved = chunk_text("b.py", "x = 1\ny = 2\n", "python", size=60, overlap=12)
    assert first[0].id == again[0].id
    assert len({first[0].id, edited[0].id, moved[0].id}) == 3


def test_chunks_know_their_module_and_test_status_and_unparsed_code_keeps_windows() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 101))
    chunks = chunk_text("tests/test_a.py", text, "python", size=60, overlap=12, module="tests.test_a")
    assert [(c.start_line, c.end_line, c.unit) for c in chunks] == [(1, 60, "window"), (49, 100, "window")]
    assert all(c.role == "test" and c.module == "tests.test_a" for c in chunks)
    assert not is_test_path("src/latest.py") and is_test_path("pkg/conftest.py")


def test_roles_tell_code_to_change_from_tests_docs_config_examples_and_vendored_code() -> None:
    assert [
        role_of(p, lang)
        for p, lang in [
            ("src/app/core.py", "python"),
            ("tests/test_core.py", "python"),
            ("README.md", "markdown"),
            ("pyproject.toml", "toml"),
            (".github/workflows/ci.yml", "yaml"),
            ("docs/conf.py", "python"),
            ("examples/demo.py", "python"),
            ("requests/packages/urllib3/util.py", "python"),
            ("pip/_vendor/rich/text.py", "python"),
            ("packages/web/app.py", "python"),
        ]
    ] == ["source", "test", "doc", "config", "config", "example", "example", "vendored", "vendored", "source"]


def test_tests_are_named_the_way_each_language_names_them() -> None:
    tests = ["src/a.test.ts", "src/b.spec.tsx", "src/__tests__/c.ts", "d.test-d.ts", "cmd_test.go"]
    tests += ["tests/de.rs", "gson/src/test/java/GsonTest.java"]
    sources = ["src/latest.ts", "src/spec.ts", "src/contest.go", "src/types.d.ts", "src/main/java/Test.java"]
    assert [is_test_path(p) for p in tests] == [True] * len(tests)
    assert [is_test_path(p) for p in sources] == [False] * len(sources)


def test_lines_split_on_newlines_only() -> None:
    assert split_lines("a\x0cb\nc\r\nd") == ["a\x0cb\n", "c\r\n", "d"]
    assert chunk_text("e.py", "", "python", size=60, overlap=12) == []


def test_team_knowledge_is_cut_at_every_heading_and_never_shows_its_front_matter() -> None:
    from kbc.index.chunks import knowledge_chunks
    from kbc.index.tokencount import default_counter

    count = default_counter().count
    text = (
        "---\ntitle: Payments handbook\ntags: [payments, refunds]\nscope: domain\n---\n"
        "Which payments we take.\n\n## Methods\n\nCards and transfers.\n\n## Refunds\n\n"
        "### Window\n\nFourteen days.\n\n### Exceptions\n\nCustom goods.\n"
    )
    chunks = knowledge_chunks("@knowledge/team/pay.md", text, count)
    assert [(c.start_line, c.end_line, c.heading) for c in chunks] == [
        (6, 7, "Payments handbook"),
        (8, 11, "Payments handbook > Methods"),
        (12, 17, "Payments handbook > Refunds > Window"),  # a heading alone joins the next section
        (18, 20, "Payments handbook > Refunds > Exceptions"),
    ]
    assert not any("scope:" in c.text or "---" in c.text for c in chunks)
    assert {c.context for c in chunks} == {"Payments handbook payments refunds"}
    assert {c.kind for c in chunks} == {"knowledge"}


def test_an_oversized_knowledge_section_is_split_at_its_paragraphs() -> None:
    from kbc.index.chunks import knowledge_chunks
    from kbc.index.tokencount import default_counter

    count = default_counter().count
    paragraphs = [f"Paragraph {i}: " + "word " * 60 for i in range(10)]
    text = "# Long\n\n" + "\n\n".join(paragraphs) + "\n"
    chunks = knowledge_chunks("@knowledge/team/long.md", text, count, target=200)
    assert len(chunks) > 1 and all(count(c.text) <= 200 for c in chunks)
    assert all(c.text.startswith(("# Long", "Paragraph")) for c in chunks)  # never cut mid-paragraph
    assert "".join(c.text for c in chunks) == text
    assert {c.heading for c in chunks} == {"Long"}
