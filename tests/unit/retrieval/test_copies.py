"""Copies known for what they are: the definition the package reaches takes the copy's place."""

from kbc.domain.models import Chunk, FileFacts, Symbol
from kbc.retrieval.copies import Copies, prefer_originals
from kbc.retrieval.matched import Located


def symbol(qname: str, start: int, end: int, kind: str = "class", parent: str = "") -> Symbol:
    return Symbol(qname, qname.rsplit(".", 1)[-1], kind, start, end, "()", parent=parent)  # type: ignore[arg-type]


def facts(path: str, module: str, *symbols: Symbol) -> FileFacts:
    return FileFacts(path, module, "blob", False, 100, symbols=symbols)


BODY = "class OrderedMultiDict(dict):\n" + "".join(
    f"    def method_{i}(self): return self.get({i})\n" for i in range(8)
)


def test_a_class_copied_into_another_module_gives_way_to_the_module_it_came_from() -> None:
    files = [
        facts("lib/dictutils.py", "lib.dictutils", symbol("lib.dictutils.OrderedMultiDict", 1, 9)),
        facts(
            "lib/urlutils.py",
            "lib.urlutils",
            symbol("lib.urlutils.OrderedMultiDict", 20, 28),
            symbol(
                "lib.urlutils.OrderedMultiDict.poplast", 25, 28, "method", "lib.urlutils.OrderedMultiDict"
            ),
        ),
    ]
    copies = Copies(files, {"lib/dictutils.py": 3, "lib/urlutils.py": 0}, lambda path, start, end: BODY)
    units = {
        "lib/dictutils.py": [Located(1, 9, "real", ("lib.dictutils.OrderedMultiDict",), "class")],
        "lib/urlutils.py": [Located(20, 28, "copy", ("lib.urlutils.OrderedMultiDict",), "class")],
    }
    chunks = {
        "copy": Chunk(
            "copy",
            "lib/urlutils.py",
            20,
            28,
            "code",
            "python",
            BODY,
            symbols=("lib.urlutils.OrderedMultiDict",),
        ),
        "other": Chunk("other", "lib/other.py", 1, 5, "code", "python", "x = 1\n"),
    }
    real = Chunk(
        "real", "lib/dictutils.py", 1, 9, "code", "python", BODY, symbols=("lib.dictutils.OrderedMultiDict",)
    )
    order, added = prefer_originals(
        [("copy", 0.9), ("other", 0.5)], chunks, copies, units, lambda ids: {"real": real}
    )
    assert order == [("real", 0.9), ("other", 0.5), ("copy", 0.25)]  # the copy after everything
    assert added == {"real": real}


def test_a_legacy_tree_and_a_stub_are_copies_of_the_current_sources() -> None:
    files = [
        facts("pkg/mypy.py", "pkg.mypy", symbol("pkg.mypy.Plugin", 1, 50)),
        facts("pkg/v1/mypy.py", "pkg.v1.mypy", symbol("pkg.v1.mypy.Plugin", 1, 40)),
        facts("pkg/_make.py", "pkg._make", symbol("pkg._make.attrib", 1, 30, "function")),
        facts("pkg/__init__.pyi", "pkg", symbol("pkg.attrib", 1, 3, "function")),
    ]
    copies = Copies(files, {}, lambda path, start, end: "")
    legacy = Chunk("v1", "pkg/v1/mypy.py", 1, 40, "code", "python", "x\n", symbols=("pkg.v1.mypy.Plugin",))
    stub = Chunk("pyi", "pkg/__init__.pyi", 1, 3, "code", "python-stub", "x\n", symbols=("pkg.attrib",))
    found = copies.original_of(legacy)
    assert found is not None and (found.path, found.qname) == ("pkg/mypy.py", "pkg.mypy.Plugin")
    found = copies.original_of(stub)
    assert found is not None and (found.path, found.qname) == ("pkg/_make.py", "pkg._make.attrib")
    current = Chunk("cur", "pkg/mypy.py", 1, 50, "code", "python", "x\n", symbols=("pkg.mypy.Plugin",))
    assert copies.original_of(current) is None


def test_an_older_version_tree_copies_the_newest_definitions_of_its_names() -> None:
    files = [
        facts("src/v3/types.ts", "src.v3.types", symbol("src.v3.types.ZodObject", 1, 80)),
        facts(
            "src/v4/classic/schemas.ts",
            "src.v4.classic.schemas",
            symbol("src.v4.classic.schemas.ZodObject", 1, 90),
        ),
        facts("src/v4/core/util.ts", "src.v4.core.util", symbol("src.v4.core.util.merge", 1, 9, "function")),
    ]
    copies = Copies(files, {}, lambda path, start, end: "")
    older = Chunk(
        "v3", "src/v3/types.ts", 1, 80, "code", "typescript", "x\n", symbols=("src.v3.types.ZodObject",)
    )
    found = copies.original_of(older)
    assert found is not None and found.path == "src/v4/classic/schemas.ts"


def test_a_legacy_tree_is_one_kept_beside_the_code_that_replaced_it() -> None:
    from kbc.retrieval.copies import legacy_files

    paths = [
        *(f"pydantic/{name}.py" for name in ("main", "fields", "types")),
        *(f"pydantic/v1/{name}.py" for name in ("main", "fields", "types", "env_settings")),
        "api/__init__.py",
        "api/urls.py",
        "api/v1/views.py",
        "src/index.ts",
        "src/v3/types.ts",
        "src/v4/classic/schemas.ts",
        "svc/api/v1/a.py",
        "svc/api/v2/a.py",
        "only/v1/a.py",
    ]
    assert legacy_files(paths) == {
        *(f"pydantic/v1/{name}.py" for name in ("main", "fields", "types", "env_settings")),
        "src/v3/types.ts",
        "svc/api/v1/a.py",
    }
