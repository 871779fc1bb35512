"""One module per file: a TypeScript source and the JavaScript and declarations of its stem
beside it are different files with different module names."""

from __future__ import annotations

from kbc.analyzers.code.languages import code_module, code_modules


def test_each_file_of_one_stem_has_a_module_of_its_own() -> None:
    paths = [
        "pkg/schemas.cjs",
        "pkg/schemas.d.ts",
        "pkg/schemas.js",
        "pkg/schemas.mjs",
        "pkg/schemas.ts",
        "pkg/schemas.d.cts",
    ]
    assert code_modules(paths) == {
        "pkg/schemas.ts": "pkg.schemas",  # the source keeps the stem's name
        "pkg/schemas.js": "pkg.schemas.js",
        "pkg/schemas.cjs": "pkg.schemas.cjs",
        "pkg/schemas.mjs": "pkg.schemas.mjs",
        "pkg/schemas.d.ts": "pkg.schemas.d.ts",
        "pkg/schemas.d.cts": "pkg.schemas.d.cts",
    }
    without_source = code_modules(["dist/index.cjs", "dist/index.js", "dist/index.d.ts"])
    assert without_source == {
        "dist/index.js": "dist.index",
        "dist/index.cjs": "dist.index.cjs",
        "dist/index.d.ts": "dist.index.d.ts",
    }


def test_a_file_alone_keeps_its_stem_and_other_languages_are_unchanged() -> None:
    assert code_modules(["types/index.d.ts", "web/app.js", "lib/buf.c", "lib/buf.h"]) == {
        "types/index.d.ts": "types.index",  # what `import "./index"` names
        "web/app.js": "web.app",
        "lib/buf.c": "lib.buf",
        "lib/buf.h": "lib.buf",
    }
    assert code_module("web/src/router.ts") == "web.src.router"
