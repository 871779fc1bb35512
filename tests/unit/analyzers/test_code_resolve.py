"""The repository-wide step for languages read through tree-sitter: a call of a member no
definition declares reaches the class that owns it (a factory-made class's ``init``)."""

from __future__ import annotations

from kbc.analyzers.code.analyze import analyze_code
from kbc.analyzers.code.languages import code_modules
from kbc.analyzers.code.resolve import link_code
from kbc.domain.models import AnalysisTask

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
