"""The repository-wide step for languages read through tree-sitter: a call of a member no
definition declares reaches the class that owns it (a factory-made class's ``init``); a method
defined apart from its type is that type's member; Go imports name packages by the module
paths of the repository's ``go.mod`` files."""

from __future__ import annotations

from pathlib import Path

from kbc.analyzers.code.analyze import analyze_code
from kbc.analyzers.code.gomod import go_modules
from kbc.analyzers.code.languages import code_modules
from kbc.analyzers.code.resolve import link_code
from kbc.domain.models import AnalysisTask, FileFacts

FILES = {
    "src/core/schemas.ts": (
        "export interface $ZodEmail { pattern: RegExp }\n"
        'export const $ZodEmail = core.$constructor("$ZodEmail", (inst, def) => {\n'
        "  def.pattern ??= regexes.email;\n"
        "});\n"
    ),
    "src/classic/schemas.ts": (
        'import * as core from "../core/index.js";\n'
        'export const ZodEmail = core.$constructor("ZodEmail", (inst, def) => {\n'
        "  core.$ZodEmail.init(inst, def);\n"
        "  this.init(inst);\n"
        "  Object.keys(def);\n"
        "});\n"
    ),
}


def test_a_member_a_factory_made_reaches_the_class_that_owns_it() -> None:
    facts = [
        analyze_code(
            text.encode(),
            AnalysisTask(
                path, "/nonexistent", path.rsplit(".", 1)[0].replace("/", "."), False, language="typescript"
            ),
        )
        for path, text in FILES.items()
    ]
    linked = link_code(facts)
    targets = {c.text: c.target for c in linked["src/classic/schemas.ts"].calls}
    assert targets["core.$ZodEmail.init"] == "src.core.schemas.$ZodEmail"
    assert targets["this.init"] == "" and targets["Object.keys"] == ""


def test_a_call_reaches_the_definition_beside_its_own_kind_of_file() -> None:
    files = {
        "pkg/util.js": "export function helper(value) {\n  return value;\n}\n",
        "pkg/util.cjs": "exports.helper = function (value) {\n  return value;\n};\n",
        "pkg/main.js": 'import * as util from "./util.js";\nutil.helper(1);\n',
        "pkg/main.cjs": 'const util = require("./util.cjs");\nutil.helper(2);\n',
    }
    modules = code_modules(files)
    facts = [
        analyze_code(
            text.encode(), AnalysisTask(path, "/nonexistent", modules[path], False, language="javascript")
        )
        for path, text in files.items()
    ]
    linked = link_code(facts)
    assert [c.target for c in linked["pkg/main.js"].calls] == ["pkg.util.helper"]
    assert [c.target for c in linked["pkg/main.cjs"].calls if c.text == "util.helper"] == [
        "pkg.util.cjs.helper"
    ]


def analyzed(files: dict[str, str], language: str) -> list[FileFacts]:
    modules = code_modules(files)
    return [
        analyze_code(
            text.encode(), AnalysisTask(path, "/nonexistent", modules[path], False, language=language)
        )
        for path, text in files.items()
    ]


def test_a_method_defined_apart_from_its_type_is_a_member_of_that_type() -> None:
    go = analyzed(
        {
            "srv/server.go": "package srv\ntype Server struct{}\n",
            "srv/serve.go": "package srv\nfunc (s *Server) Serve() error { return s.listen() }\n",
            "srv/listen.go": "package srv\nfunc (s *Server) listen() error { return nil }\n",
            "other/server.go": "package other\ntype Server struct{}\n",
        },
        "go",
    )
    linked = link_code(go)
    (serve,) = linked["srv/serve.go"].symbols
    assert (serve.qname, serve.kind, serve.parent) == (
        "srv.serve.Server.Serve",
        "method",
        "srv.server.Server",
    )
    assert [c.target for c in linked["srv/serve.go"].calls] == ["srv.listen.Server.listen"]
    cpp = analyzed(
        {
            "include/geo/shape.h": "namespace geo { class Shape { int area(); }; }\n",
            "src/shape.cpp": "int geo::Shape::area() { return 0; }\n",
        },
        "cpp",
    )
    (area,) = link_code(cpp)["src/shape.cpp"].symbols
    assert (area.qname, area.parent) == ("src.shape.geo.Shape.area", "include.geo.shape.geo.Shape")
    rust = analyzed(
        {
            "src/a.rs": "pub struct Dup;\n",
            "src/b.rs": "pub struct Dup;\n",
            "src/c.rs": "impl Dup { fn go(&self) {} }\n",
        },
        "rust",
    )
    (go_method,) = link_code(rust)["src/c.rs"].symbols
    assert go_method.parent == "src.c.Dup"  # two types of that name: none is guessed


GO_FILES = {
    "go.mod": "module github.com/acme/shop // the shop\n\ngo 1.22\n",
    "cmd/shop/main.go": (
        "package main\n"
        "import (\n"
        '\t"fmt"\n'
        '\t"github.com/acme/shop/pkg/cart"\n'
        '\t"github.com/acme/shop/tools/gen"\n'
        '\t"github.com/acme/shop/pkg/missing"\n'
        '\t"github.com/other/lib/pkg/cart"\n'
        ")\n"
        "func main() { fmt.Println(cart.New(), gen.Run()) }\n"
    ),
    "pkg/cart/cart.go": "package cart\nfunc New() int { return 0 }\n",
    "vendor/github.com/other/lib/pkg/cart/cart.go": "package cart\nfunc New() int { return 1 }\n",
    "tools/go.mod": 'module "github.com/acme/shop/tools"\n',
    "tools/gen/gen.go": "package gen\nfunc Run() int { return 0 }\n",
}


def test_go_imports_name_the_repository_s_packages_by_the_module_paths_of_its_go_mod_files(
    tmp_path: Path,
) -> None:
    for path, text in GO_FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    modules = go_modules(tmp_path, sorted(GO_FILES))
    assert modules == {"": "github.com/acme/shop", "tools": "github.com/acme/shop/tools"}
    code = analyzed({p: t for p, t in GO_FILES.items() if p.endswith(".go")}, "go")
    imports = {i.module: i for i in link_code(code, modules)["cmd/shop/main.go"].imports}
    assert (imports["fmt"].kind, imports["github.com/acme/shop/pkg/cart"].target) == (
        "stdlib",
        "pkg.cart.cart",
    )
    assert imports["github.com/acme/shop/tools/gen"].target == "tools.gen.gen"  # the nested module
    assert imports["github.com/acme/shop/pkg/missing"].kind == "unresolved"
    other = imports["github.com/other/lib/pkg/cart"]  # a dependency, though a folder ends the same
    assert (other.kind, other.distribution) == ("external", "github.com/other/lib")
    by_folder = {i.module: i for i in link_code(code)["cmd/shop/main.go"].imports}  # without go.mod
    assert by_folder["github.com/other/lib/pkg/cart"].kind == "internal"
