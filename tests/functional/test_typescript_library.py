"""A TypeScript library written the way zod is: classes made by a factory and bound to
constants beside an interface of the same name, type parameters with variance annotations,
the string formats' patterns in a module of their own; and a package of compiled JavaScript
whose ``.js``, ``.cjs`` and ``.d.ts`` share a stem. Built lexical, asked through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import RepoFactory

from kbc.cli.main import cli

EMAIL = r"/^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$/"
FORMATS = {  # the string formats beside email, with the patterns that check them
    "url": r"/^https?:\/\/[^\s/$.?#].[^\s]*$/",
    "uuid": r"/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/",
    "cuid": r"/^[cC][^\s-]{8,}$/",
    "ulid": r"/^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$/",
    "nanoid": r"/^[a-zA-Z0-9_-]{21}$/",
    "ipv4": r"/^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/",
    "e164": r"/^\+(?:[0-9]){6,14}[0-9]$/",
    "base64": r"/^$|^(?:[0-9a-zA-Z+/]{4})*(?:(?:[0-9a-zA-Z+/]{2}==)|(?:[0-9a-zA-Z+/]{3}=))?$/",
    "emoji": r"/^(\p{Extended_Pictographic}|\p{Emoji_Component})+$/u",
    "lowercase": r"/^[^A-Z]*$/",
    "uppercase": r"/^[^a-z]*$/",
    "duration": (
        r"/^P(?:(\d+W)|(?!.*W)(?=\d|T\d)(\d+Y)?(\d+M)?(\d+D)?"
        r"(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?)$/"
    ),
}


def _title(name: str) -> str:
    return name[0].upper() + name[1:]


def _regexes() -> str:
    out = ["/** The patterns the string formats check. */\n\n"]
    out.append(f"/** Practical email validation */\nexport const email: RegExp =\n  {EMAIL};\n\n")
    for name, pattern in FORMATS.items():
        out.append(f"/** Matches a {name}. */\nexport const {name}: RegExp = {pattern};\n\n")
    return "".join(out)


def _schemas() -> str:
    out = [
        'import * as core from "./core.js";\n'
        'import * as regexes from "./regexes.js";\n\n'
        "export interface $ZodTypeInternals<out O = unknown, out I = unknown> {\n"
        "  output: O;\n  input: I;\n  pattern?: RegExp;\n}\n\n"
        "export interface $ZodType<out O = unknown, out I = unknown> {\n"
        "  _zod: $ZodTypeInternals<O, I>;\n}\n\n"
        "export const $ZodType: core.$constructor<$ZodType> = /*@__PURE__*/ "
        'core.$constructor("$ZodType", (inst, def) => {\n'
        "  inst._zod.def = def;\n"
        "  inst._zod.run = (payload, ctx) => {\n"
        "    for (const check of inst._zod.checks ?? []) check._zod.check(payload);\n"
        "    return payload;\n"
        "  };\n"
        "});\n\n"
        "export interface $ZodStringFormat extends $ZodType {\n  format: string;\n}\n\n"
        "export const $ZodStringFormat: core.$constructor<$ZodStringFormat> = /*@__PURE__*/ "
        "core.$constructor(\n"
        '  "$ZodStringFormat",\n'
        "  (inst, def) => {\n"
        "    $ZodType.init(inst, def);\n"
        "    inst._zod.check = (payload) => {\n"
        "      if (def.pattern.test(payload.value)) return;\n"
        '      payload.issues.push({ code: "invalid_format", format: def.format });\n'
        "    };\n"
        "  }\n"
        ");\n\n"
    ]
    for name in ("email", *FORMATS):
        title = _title(name)
        out.append(
            f"//////////////////////////////   Zod{title}   //////////////////////////////\n\n"
            f'export interface $Zod{title}Def {{\n  format: "{name}";\n  pattern?: RegExp;\n}}\n'
            f"export interface $Zod{title} extends $ZodType {{\n  _zod: $ZodTypeInternals<string>;\n}}\n\n"
            f"export const $Zod{title}: core.$constructor<$Zod{title}> = /*@__PURE__*/ core.$constructor(\n"
            f'  "$Zod{title}",\n'
            "  (inst, def): void => {\n"
            f"    def.pattern ??= regexes.{name};\n"
            "    $ZodStringFormat.init(inst, def);\n"
            "  }\n"
            ");\n\n"
        )
    out.append(
        "//////////////////////////////   ZodObject   //////////////////////////////\n\n"
        "export interface $ZodObject<\n"
        "  /** @ts-ignore Cast variance */\n"
        "  out Shape extends Readonly<$ZodShape> = Readonly<$ZodShape>,\n"
        "  out Params extends $ZodObjectConfig = $ZodObjectConfig,\n"
        "> extends $ZodType {\n"
        "  shape: Shape;\n"
        "}\n\n"
        "export const $ZodObject: core.$constructor<$ZodObject> = /*@__PURE__*/ "
        'core.$constructor("$ZodObject", (inst, def) => {\n'
        "  $ZodType.init(inst, def);\n"
        "  const keys = Object.keys(def.shape);\n"
        "  inst._zod.parse = (payload, ctx) => {\n"
        "    const input = payload.value;\n"
        "    for (const key of keys) {\n"
        "      const result = def.shape[key]._zod.run({ value: input[key], issues: [] }, ctx);\n"
        "      if (result.issues.length) payload.issues.push(...result.issues);\n"
        "    }\n"
        "    return payload;\n"
        "  };\n"
        "});\n"
    )
    return "".join(out)


def _api() -> str:
    out = ['import type * as schemas from "./schemas.js";\n\n']
    for name in ("email", *FORMATS):
        out.append(
            f"export function _{name}<T extends schemas.$Zod{_title(name)}>(\n"
            "  Class: SchemaClass<T>,\n"
            "  params?: string\n"
            "): T {\n"
            "  return new Class({\n"
            '    type: "string",\n'
            f'    format: "{name}",\n'
            '    check: "string_format",\n'
            "    abort: false,\n"
            "    ...normalizeParams(params),\n"
            "  });\n"
            "}\n\n"
        )
    return "".join(out)


def _classic() -> str:
    names = ("email", *FORMATS)
    out = [
        'import * as core from "../core/index.js";\n\nexport interface ZodString extends core.$ZodType {\n',
        *(f"  {name}(params?: string): this;\n" for name in names),
        "}\n\n"
        "export const ZodString: core.$constructor<ZodString> = /*@__PURE__*/ "
        'core.$constructor("ZodString", (inst, def) => {\n'
        "  core.$ZodType.init(inst, def);\n",
        *(
            f"  inst.{name} = (params) => inst.check(core._{name}(Zod{_title(name)}, params));\n"
            for name in names
        ),
        "});\n\n",
    ]
    for name in names:
        title = _title(name)
        out.append(
            f"export const Zod{title}: core.$constructor<Zod{title}> = /*@__PURE__*/ "
            f'core.$constructor("Zod{title}", (inst, def) => {{\n'
            f"  core.$Zod{title}.init(inst, def);\n"
            "});\n\n"
            f"export function {name}(params?: string): Zod{title} {{\n"
            f"  return core._{name}(Zod{title}, params);\n"
            "}\n\n"
        )
    return "".join(out)


def _compile() -> str:  # shares the task's words without being the code that checks an email
    formats = "\n".join(f'  "{name}",' for name in ("email", *FORMATS))
    cases = "".join(
        f'    case "{name}":\n'
        f"      doc.write(`if (!${{pattern}}.test(${{accessor}})) return INVALID; // {name} validation`);\n"
        "      break;\n"
        for name in ("email", *FORMATS)
    )
    return (
        "/**\n * Built-in string formats that validate with nothing but `def.pattern`: compiling the\n"
        " * pattern reproduces the runtime validation exactly, and an invalid string is rejected.\n */\n"
        f"const PATTERN_IS_COMPLETE: Set<string> = new Set([\n{formats}\n]);\n\n"
        "export function generateStringFormatCheck(doc: Doc, def: FormatDef, accessor: string): string {\n"
        "  // A string format whose pattern is not complete keeps its runtime validation.\n"
        "  const pattern = addConstant(doc, def.pattern);\n"
        "  switch (def.format) {\n"
        f"{cases}"
        "  }\n"
        "  return accessor;\n"
        "}\n"
    )


def _tests() -> str:
    return "".join(
        f'test("z.string().{name}() rejects an invalid {name} string", () => {{\n'
        f'  expect(z.string().{name}().safeParse("not a valid {name}").success).toBe(false);\n'
        f'  expect(z.string().{name}().safeParse("").success).toBe(false);\n'
        "});\n\n"
        for name in ("email", *FORMATS)
    )


LOCALES = {  # language -> how its messages say "Invalid email address" and the rest
    "en": ("Invalid", {"email": "email address", "url": "URL", "ipv4": "IPv4 address"}),
    "de": ("Ungültige", {"email": "E-Mail-Adresse", "url": "URL", "ipv4": "IPv4-Adresse"}),
    "fr": ("Invalide", {"email": "adresse e-mail", "url": "URL", "ipv4": "adresse IPv4"}),
    "es": ("Inválido", {"email": "dirección de correo electrónico", "url": "URL", "ipv4": "dirección IPv4"}),
    "it": ("Non valido", {"email": "indirizzo email", "url": "URL", "ipv4": "indirizzo IPv4"}),
    "nl": ("Ongeldig", {"email": "e-mailadres", "url": "URL", "ipv4": "IPv4-adres"}),
    "pt": ("Inválido", {"email": "endereço de e-mail", "url": "URL", "ipv4": "endereço IPv4"}),
    "sv": ("Ogiltig", {"email": "e-postadress", "url": "URL", "ipv4": "IPv4-adress"}),
    "pl": ("Nieprawidłowy", {"email": "adres email", "url": "URL", "ipv4": "adres IPv4"}),
    "fi": ("Virheellinen", {"email": "sähköpostiosoite", "url": "URL", "ipv4": "IPv4-osoite"}),
    "cs": ("Neplatný", {"email": "e-mailová adresa", "url": "URL", "ipv4": "IPv4 adresa"}),
    "da": ("Ugyldig", {"email": "e-mailadresse", "url": "URL", "ipv4": "IPv4-adresse"}),
}


def _locale(invalid: str, nouns: dict[str, str]) -> str:
    entries = "".join(f'    {name}: "{noun}",\n' for name, noun in nouns.items())
    return (
        'import type * as errors from "../core/errors.js";\n\n'
        "const error: () => errors.$ZodErrorMap = () => {\n"
        "  const FormatDictionary: Record<string, string> = {\n"
        f"{entries}"
        "  };\n"
        "  return (issue) => {\n"
        "    switch (issue.code) {\n"
        '      case "invalid_format":\n'
        f"        return `{invalid}: ${{FormatDictionary[issue.format] ?? issue.format}}`;\n"
        "      default:\n"
        f'        return "{invalid}";\n'
        "    }\n"
        "  };\n"
        "};\n\n"
        "export default function (): { localeError: errors.$ZodErrorMap } {\n"
        "  return { localeError: error() };\n"
        "}\n"
    )


ZOD = {
    "packages/zod/src/v4/core/core.ts": (
        "export interface $constructor<T, D = unknown> {\n"
        "  new (def: D): T;\n"
        "  init(inst: T, def: D): asserts inst is T;\n"
        "}\n\n"
        "export function $constructor<T, D>(\n"
        "  name: string,\n"
        "  initializer: (inst: T, def: D) => void\n"
        "): $constructor<T, D> {\n"
        "  function init(inst: T, def: D) {\n"
        "    initializer(inst, def);\n"
        "  }\n"
        "  return Object.assign(function (def: D) { init(this, def); }, { init }) as any;\n"
        "}\n"
    ),
    "packages/zod/src/v4/core/regexes.ts": _regexes(),
    "packages/zod/src/v4/core/schemas.ts": _schemas(),
    "packages/zod/src/v4/core/api.ts": _api(),
    "packages/zod/src/v4/core/compile.ts": _compile(),
    "packages/zod/src/v4/core/index.ts": (
        'export * from "./core.js";\nexport * from "./schemas.js";\nexport * from "./api.js";\n'
    ),
    "packages/zod/src/v4/classic/schemas.ts": _classic(),
    "packages/zod/src/v4/classic/tests/string.test.ts": _tests(),
    **{f"packages/zod/src/v4/locales/{name}.ts": _locale(*words) for name, words in LOCALES.items()},
}


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def zodlike(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from helpers import repo_factory

    make: RepoFactory = repo_factory(tmp_path_factory.mktemp("zodlike"))
    root = make(ZOD)
    invoke("-c", "index.embed_model=none", "build", str(root), "--no-llm")
    return root


def test_a_factory_made_class_is_listed_with_its_whole_export_const_statement(zodlike: Path) -> None:
    reports = json.loads(invoke("symbols", "$ZodObject", "--repo", str(zodlike), "--format", "json"))
    source = ZOD["packages/zod/src/v4/core/schemas.ts"].splitlines()
    start = source.index(next(line for line in source if line.startswith("export const $ZodObject"))) + 1
    end = start + source[start - 1 :].index("});")
    interface = source.index("export interface $ZodObject<") + 1
    assert [r["location"] for r in reports] == [
        f"packages/zod/src/v4/core/schemas.ts:{interface}-{interface + 6}",  # the interface, variance and all
        f"packages/zod/src/v4/core/schemas.ts:{start}-{end}",  # the constructor, `export` to `});`
    ]
    constructor = reports[1]
    assert constructor["symbol"]["signature"].startswith(
        "export const $ZodObject: core.$constructor<$ZodObject>"
    )
    callees = {c["qname"] for c in constructor["callees"]}
    assert "packages.zod.src.v4.core.schemas.$ZodType" in callees  # `$ZodType.init(inst, def)`


def test_a_task_about_email_validation_gets_the_email_schema_and_its_pattern(zodlike: Path) -> None:
    sliced = invoke(
        "retrieve",
        "--repo",
        str(zodlike),
        "--budget",
        "4000",
        "`z.string().email()` accepts an invalid email address",
    )
    assert "def.pattern ??= regexes.email;" in sliced  # the email schema, a unit of its own
    assert EMAIL in sliced  # the pattern it checks


COMPILED = {  # a package published without its TypeScript: one stem, three files
    "pkg/util.js": "export function helper(value) {\n  return value;\n}\n",
    "pkg/schemas.js": 'import { helper } from "./util.js";\n\nregister(helper(1));\n',
    "pkg/schemas.cjs": '"use strict";\nconst { helper } = require("./util.cjs");\n\n\nregister(helper(2));\n',
    "pkg/schemas.d.ts": "export declare function register(value: number): void;\n",
}


def test_each_file_of_one_stem_is_a_module_of_its_own_and_calls_stay_where_they_are_made(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from helpers import repo_factory

    make: RepoFactory = repo_factory(tmp_path_factory.mktemp("compiled"))
    root = make(COMPILED)
    invoke("-c", "index.embed_model=none", "build", str(root), "--no-llm")
    (report,) = json.loads(invoke("symbols", "helper", "--repo", str(root), "--format", "json"))
    calls = sorted((c["qname"], c["location"], c["call_path"], c["lines"]) for c in report["callers"])
    assert calls == [
        ("pkg.schemas", "pkg/schemas.js", "pkg/schemas.js", [3]),
        ("pkg.schemas.cjs", "pkg/schemas.cjs", "pkg/schemas.cjs", [5]),
    ]
