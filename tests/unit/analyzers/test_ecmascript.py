"""TypeScript and JavaScript definitions as projects write them: bound to constants and to
CommonJS exports, made by factories, held by objects and namespaces, merged by name; members
under their owners, never top-level names; type parameter variance that the grammar lacks."""

from __future__ import annotations

import textwrap

from kbc.analyzers.code.analyze import analyze_code
from kbc.domain.models import AnalysisTask, FileFacts, Symbol


def facts(source: str, language: str = "typescript", path: str = "src/core/schemas.ts") -> FileFacts:
    data = textwrap.dedent(source).lstrip("\n").encode()
    module = path.rsplit(".", 1)[0].replace("/", ".")
    return analyze_code(data, AnalysisTask(path, "/nonexistent/" + path, module, False, language=language))


def spans(found: FileFacts) -> dict[str, tuple[str, int, int]]:
    return {
        s.qname.removeprefix("src.core.schemas."): (s.kind, s.start_line, s.end_line) for s in found.symbols
    }


def named(found: FileFacts, qname: str) -> list[Symbol]:
    return [s for s in found.symbols if s.qname == "src.core.schemas." + qname]


def test_functions_and_classes_bound_to_a_const_let_or_var_outside_any_function() -> None:
    found = facts(
        """
        export const parse = (input: string): number => {
          const inner = () => 1;
          return inner();
        };
        let format = function (value: number) {
          return String(value);
        };
        var Legacy = class extends Base {
          run() {}
        };
        const table = { a: 1, b: [2, 3] };
        """
    )
    assert spans(found) == {
        "parse": ("function", 1, 4),  # `inner`, inside it, is not a symbol
        "format": ("function", 5, 7),
        "Legacy": ("class", 8, 10),
        "Legacy.run": ("method", 9, 9),
    }  # `table` holds data, and no module exports it
    (parse,) = named(found, "parse")
    assert parse.public and parse.signature == "export const parse = (input: string): number =>"
    (legacy,) = named(found, "Legacy")
    assert not legacy.public and legacy.bases == ("Base",)


def test_a_const_made_by_a_call_given_a_function_is_a_definition_spanning_its_whole_statement() -> None:
    found = facts(
        """
        import * as core from "./core.js";

        /** The object schema's constructor. */
        export const $ZodObject: core.$constructor<$ZodObject> = /*@__PURE__*/ core.$constructor(
          "$ZodObject",
          (inst, def) => {
            $ZodType.init(inst, def);
            const shape = () => def.shape;
          }
        );
        export const handler = wrap(async (event: Event) => event);
        const plain = compute(1, 2);
        """
    )
    assert spans(found) == {
        "$ZodObject": ("class", 4, 10),  # a class by its name; `export` to the closing `);`
        "handler": ("function", 11, 11),
    }
    (made,) = named(found, "$ZodObject")
    assert made.doc == "The object schema's constructor." and made.public
    assert made.signature.startswith("export const $ZodObject: core.$constructor<$ZodObject> =")
    assert (made.qname, 7, "$ZodType.init") in {(c.caller, c.line, c.text) for c in found.calls}
    assert named(found, "handler")[0].kind == "function"


def test_a_value_a_module_exports_as_a_const_is_a_constant() -> None:
    found = facts(
        """
        /** Practical email validation */
        export const email: RegExp =
          /^[A-Za-z0-9_'+\\-\\.]*@([A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$/;
        export const uuid4: RegExp = /*@__PURE__*/ uuid(4);
        export const NEVER = Object.freeze({ status: "aborted" }) as never;
        export const idnEmail = email;
        export let counter = 0;
        const local = /x/;
        """
    )
    assert spans(found) == {
        "email": ("constant", 2, 3),
        "uuid4": ("constant", 4, 4),
        "NEVER": ("constant", 5, 5),
    }  # not an alias of another name, a `let`, nor what no module exports
    (email,) = named(found, "email")
    assert email.doc == "Practical email validation" and email.signature == "export const email: RegExp"
    assert email.public


def test_an_interface_and_a_const_of_one_name_are_two_definitions_of_that_name() -> None:
    found = facts(
        """
        export interface $ZodString<Input = unknown> {
          _zod: $ZodStringInternals<Input>;
        }

        export const $ZodString: core.$constructor<$ZodString> = core.$constructor("$ZodString", (inst) => {
          inst._zod.check = (payload) => payload;
        });
        """
    )
    merged = named(found, "$ZodString")
    assert [(s.kind, s.start_line, s.end_line) for s in merged] == [("class", 1, 3), ("class", 5, 7)]
    assert [s.signature.split(" ")[1] for s in merged] == ["interface", "const"]


def test_object_literal_methods_of_an_exported_object_are_its_members() -> None:
    found = facts(
        """
        export const util = {
          parse(input: string) {
            return input;
          },
          check: async (value: number) => value > 0,
          "kebab-name": function () {},
          nested: { deep() {} },
          version: 1,
        } as const;
        """
    )
    assert spans(found) == {
        "util": ("class", 1, 9),
        "util.parse": ("method", 2, 4),
        "util.check": ("method", 5, 5),
        "util.kebab-name": ("method", 6, 6),
        "util.nested": ("class", 7, 7),
        "util.nested.deep": ("method", 7, 7),
    }
    (check,) = named(found, "util.check")
    assert check.is_async and check.parent == "src.core.schemas.util"


def test_methods_are_members_of_their_type_never_top_level_names() -> None:
    found = facts(
        """
        export class Cart {
          @log
          add(item: Item) {}
          handle = () => 1;
          private secret() {}
          #hidden() {}
        }
        function make() {
          return { inner() {} };
        }
        Object.assign(proto, { loose() {} });
        export default { data() {} };
        register(class { anonymous() {} });
        """
    )
    assert spans(found) == {
        "Cart": ("class", 1, 7),
        "Cart.add": ("method", 2, 3),  # with its decorator
        "Cart.handle": ("method", 4, 4),
        "Cart.secret": ("method", 5, 5),
        "Cart.#hidden": ("method", 6, 6),
        "make": ("function", 8, 10),
    }
    public = {s.name: s.public for s in found.symbols}
    assert public["add"] and public["handle"] and not public["secret"] and not public["#hidden"]
    top_level = {s.name for s in found.symbols if not s.parent}
    assert top_level == {"Cart", "make"}


def test_namespaces_hold_their_definitions() -> None:
    found = facts(
        """
        export namespace Shapes {
          export function area(): number {
            return 1;
          }
          export const perimeter = () => 2;
        }
        declare module "external" {
          function outside(): void;
        }
        """
    )
    assert spans(found) == {
        "Shapes": ("class", 1, 6),
        "Shapes.area": ("function", 2, 4),
        "Shapes.perimeter": ("function", 5, 5),
    }


def test_commonjs_exports_bound_to_functions_and_factories_are_definitions() -> None:
    found = facts(
        """
        "use strict";
        exports.$ZodObject = exports.$ZodString = void 0;
        exports.$ZodObject = core.$constructor("$ZodObject", (inst, def) => {
          core.init(inst);
        });
        module.exports.helper = function helper() {
          return 1;
        };
        exports.VERSION = "4.0.0";
        module.exports = { api() {} };
        """,
        language="javascript",
        path="src/core/schemas.cjs",
    )
    assert spans(found) == {
        "$ZodObject": ("class", 3, 5),  # not the `void 0` that declares the exports first
        "helper": ("function", 6, 8),
        "VERSION": ("constant", 9, 9),
    }
    assert all(s.public for s in found.symbols)


def test_variance_annotations_parse_and_every_span_stays_exact() -> None:
    found = facts(
        """
        export interface $ZodType<
          /** @ts-ignore Cast variance */
          out O = unknown,
          in out I extends (value: string) => number = never,
        > {
          _zod: O;
        }
        export interface $ZodCheck<in T = never> {
          check(payload: T): void;
        }
        type Getter<out T> = () => T;
        class Box<const in T> {
          put(value: T) {}
        }
        export function keep<out>(value: out): out {
          return value;
        }
        """
    )
    assert not found.warnings
    assert spans(found) == {
        "$ZodType": ("class", 1, 7),
        "$ZodCheck": ("class", 8, 10),
        "Getter": ("class", 11, 11),
        "Box": ("class", 12, 14),
        "Box.put": ("method", 13, 13),
        "keep": ("function", 15, 17),
    }
    (check,) = named(found, "$ZodCheck")
    assert check.signature == "export interface $ZodCheck<in T = never>"  # as written, not as parsed


def test_overloads_of_a_dual_api_parse_and_the_function_it_makes_is_a_definition() -> None:
    found = facts(
        """
        export const map: {
          <A, B>(f: (a: A) => B): (self: Option<A>) => Option<B>
          <A, B>(self: Option<A>, f: (a: A) => B): Option<B>
        } = dual(2, <A, B>(self: Option<A>, f: (a: A) => B): Option<B> => self)
        export interface Mapper {
          (a: A): B
          /** The generic one. */
          <X>(b: X): X
        }
        """
    )
    assert not found.warnings
    assert spans(found) == {"map": ("function", 1, 4), "Mapper": ("class", 5, 9)}


def test_a_file_that_does_not_parse_keeps_the_definitions_that_did() -> None:
    found = facts(
        """
        export interface Schema<out T> {
          value: T;
        }
        export const $ZodSchema = core.$constructor("$ZodSchema", (inst) => {
          inst.ok = true;
        });
        export function broken( {
        export const later = () => 2;
        """
    )
    assert found.warnings and "syntax errors" in found.warnings[0]
    assert {k: v for k, v in spans(found).items() if k in ("Schema", "$ZodSchema")} == {
        "Schema": ("class", 1, 3),
        "$ZodSchema": ("class", 4, 6),
    }
