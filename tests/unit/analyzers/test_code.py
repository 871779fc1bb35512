"""Facts of languages read through tree-sitter: definitions at their exact spans with their
parents, signatures and docs; imports and calls as written; entry points; recovery from
syntax errors; credentials kept out of the facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbc.analyzers.code.analyze import analyze_code, analyze_code_file
from kbc.analyzers.code.languages import code_module
from kbc.domain.models import AnalysisOk, AnalysisTask, FileFacts


def facts(tmp_path: Path, path: str, language: str, source: str) -> FileFacts:
    file = tmp_path / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(source)
    result = analyze_code_file(AnalysisTask(path, str(file), code_module(path), False, language=language))
    assert isinstance(result, AnalysisOk), result
    return result.facts


def spans(found: FileFacts) -> dict[str, tuple[str, int, int]]:
    return {s.qname: (s.kind, s.start_line, s.end_line) for s in found.symbols}


def test_typescript_classes_methods_functions_and_arrow_functions_at_module_level(tmp_path: Path) -> None:
    found = facts(
        tmp_path,
        "src/shop/cart.ts",
        "typescript",
        (
            'import { round } from "../money/round";\n'
            'import express from "express";\n'
            "export interface Line { price: number }\n"
            "export abstract class Base {}\n"
            "export class Cart extends Base {\n"
            "  add(line: Line): void {\n"
            "    const check = (x: number) => x > 0;\n"
            "    this.lines.push(round(line.price));\n"
            "  }\n"
            "}\n"
            "export const total = async (cart: Cart) => {\n"
            "  return new Cart();\n"
            "};\n"
        ),
    )
    assert spans(found) == {
        "src.shop.cart.Line": ("class", 3, 3),
        "src.shop.cart.Base": ("class", 4, 4),
        "src.shop.cart.Cart": ("class", 5, 10),
        "src.shop.cart.Cart.add": ("method", 6, 9),
        "src.shop.cart.total": ("function", 11, 13),  # `check`, inside a function, is not a symbol
    }
    by_name = {s.name: s for s in found.symbols}
    assert by_name["add"].parent == "src.shop.cart.Cart" and by_name["Cart"].bases == ("Base",)
    assert by_name["total"].is_async and by_name["total"].public
    assert [(i.line, i.module) for i in found.imports] == [(1, "src.money.round"), (2, "express")]
    assert {(c.caller, c.text) for c in found.calls} >= {
        ("src.shop.cart.Cart.add", "this.lines.push"),
        ("src.shop.cart.Cart.add", "round"),
        ("src.shop.cart.total", "Cart"),
    }
    assert found.language == "typescript" and not found.warnings


def test_go_receivers_name_the_type_and_main_starts_a_program(tmp_path: Path) -> None:
    found = facts(
        tmp_path,
        "cmd/tool/main.go",
        "go",
        (
            "// Package main is the tool.\n"
            "package main\n"
            "\n"
            'import (\n\t"fmt"\n\tflag "github.com/spf13/pflag"\n)\n'
            "\n"
            "type config struct{ verbose bool }\n"
            "\n"
            "// Load reads the flags.\n"
            "func (c *config) Load() { flag.Parse(); fmt.Println(c.verbose) }\n"
            "\n"
            "func main() { (&config{}).Load() }\n"
        ),
    )
    assert spans(found) == {
        "cmd.tool.main.config": ("class", 9, 9),
        "cmd.tool.main.config.Load": ("method", 12, 12),
        "cmd.tool.main.main": ("function", 14, 14),
    }
    load = next(s for s in found.symbols if s.name == "Load")
    assert load.doc == "Load reads the flags." and load.public and load.signature == "func (c *config) Load()"
    assert not next(s for s in found.symbols if s.name == "config").public
    assert [(i.module, i.alias) for i in found.imports] == [("fmt", ""), ("github.com/spf13/pflag", "flag")]
    assert [(e.kind, e.target) for e in found.entry_points] == [("main", "cmd.tool.main.main")]
    assert found.doc == "Package main is the tool."


def test_java_members_nest_under_their_classes_with_annotations_in_their_span(tmp_path: Path) -> None:
    found = facts(
        tmp_path,
        "src/com/x/App.java",
        "java",
        (
            "package com.x;\n"
            "import java.util.List;\n"
            "/** The app. */\n"
            "public class App {\n"
            "    @Override\n"
            "    public String toString() { return List.of().toString(); }\n"
            "    static class Inner { void run() {} }\n"
            "    public static void main(String[] args) { new App(); }\n"
            "}\n"
        ),
    )
    assert spans(found) == {
        "src.com.x.App.App": ("class", 4, 9),
        "src.com.x.App.App.toString": ("method", 5, 6),
        "src.com.x.App.App.Inner": ("class", 7, 7),
        "src.com.x.App.App.Inner.run": ("method", 7, 7),
        "src.com.x.App.App.main": ("method", 8, 8),
    }
    assert next(s for s in found.symbols if s.name == "App").doc == "The app."
    hidden = facts(
        tmp_path,
        "src/com/x/Hidden.java",
        "java",
        "class Hidden extends Base {\n    public void go() {}\n    class In extends Other {}\n}\n",
    )
    (outer,) = [s for s in hidden.symbols if s.name == "Hidden"]
    assert not outer.public and outer.bases == ("Base",)  # not its members' modifiers or bases
    assert [(e.kind, e.target) for e in found.entry_points] == [("main", "src.com.x.App.App.main")]
    assert [i.module for i in found.imports] == ["java.util.List"]


def test_rust_impl_blocks_scope_their_methods_and_attributes_join_the_span(tmp_path: Path) -> None:
    found = facts(
        tmp_path,
        "crates/ledger/src/lib.rs",
        "rust",
        (
            "use crate::money::Cents;\n"
            "mod posting;\n"
            "/// A ledger.\n"
            "#[derive(Debug)]\n"
            "pub struct Ledger { total: i64 }\n"
            "impl std::fmt::Display for Ledger {\n"
            '    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { write!(f, "x") }\n'
            "}\n"
            "pub trait Post { fn post(&mut self); }\n"
            "mod tests { fn check() {} }\n"
        ),
    )
    assert spans(found) == {
        "crates.ledger.src.lib.Ledger": ("class", 4, 5),
        "crates.ledger.src.lib.Ledger.fmt": ("method", 7, 7),
        "crates.ledger.src.lib.Post": ("class", 9, 9),
        "crates.ledger.src.lib.Post.post": ("method", 9, 9),  # a trait's method, without a body
        "crates.ledger.src.lib.tests.check": ("function", 10, 10),
    }
    ledger = next(s for s in found.symbols if s.name == "Ledger")
    assert ledger.doc == "A ledger." and ledger.public
    assert [i.module for i in found.imports] == ["crates.ledger.src.money.Cents", "crates.ledger.src.posting"]


def test_c_and_cpp_definitions_typedefs_namespaces_and_out_of_class_methods(tmp_path: Path) -> None:
    c = facts(
        tmp_path,
        "lib/buf.c",
        "c",
        (
            '#include <stdio.h>\n#include "buf.h"\n'
            "typedef struct { int len; } Buf;\n"
            "static int grow(Buf *b) { return b->len * 2; }\n"
            "int buf_push(Buf *b) {\n  return grow(b);\n}\n"
        ),
    )
    assert spans(c) == {
        "lib.buf.Buf": ("class", 3, 3),
        "lib.buf.grow": ("function", 4, 4),
        "lib.buf.buf_push": ("function", 5, 7),
    }
    assert not next(s for s in c.symbols if s.name == "grow").public
    assert [i.module for i in c.imports] == ["stdio.h", "lib.buf"]
    cpp = facts(
        tmp_path,
        "lib/shape.cpp",
        "cpp",
        (
            "namespace geo {\n"
            "class Shape {\n public:\n  virtual double area() const;\n};\n"
            "double Shape::area() const { return 0; }\n"
            "template <typename T> T biggest(T a, T b) { return a > b ? a : b; }\n"
            "}\n"
        ),
    )
    assert spans(cpp) == {
        "lib.shape.geo.Shape": ("class", 2, 5),
        "lib.shape.geo.Shape.area": ("method", 6, 6),
        "lib.shape.geo.biggest": ("function", 7, 7),
    }
    assert (
        next(s for s in cpp.symbols if s.name == "biggest").signature
        == "template <typename T> T biggest(T a, T b)"
    )


def test_a_file_with_syntax_errors_keeps_the_definitions_it_can_read(tmp_path: Path) -> None:
    found = facts(
        tmp_path,
        "web/broken.js",
        "javascript",
        ("function ok(a) {\n  return a;\n}\nfunction broken( {\nclass Later { run() { return 1; } }\n"),
    )
    assert "web.broken.ok" in spans(found)
    assert found.warnings and "syntax errors" in found.warnings[0]


def test_credentials_in_a_declaration_are_kept_out_of_the_facts(tmp_path: Path) -> None:
    token = "ghp_R8vKq2LmZt5Yx9Wn3Hb7Jc1Pd4Fs6Ga0Eu2Q"
    found = facts(
        tmp_path,
        "src/client.ts",
        "typescript",
        (
            f"/** Uses {token} when none is given. */\n"
            f'export function connect(token: string = "{token}"): void {{}}\n'
        ),
    )
    (connect,) = found.symbols
    assert token not in connect.signature and token not in connect.doc
    assert found.secrets


@pytest.mark.parametrize("language", ["typescript", "tsx", "javascript", "go", "java", "rust", "c", "cpp"])
def test_empty_and_binary_looking_files_give_facts_not_errors(language: str) -> None:
    for data in (b"", b"\x00\xff\xfe garbage {{{ ((( \n", "é".encode() * 10):
        task = AnalysisTask("x/y.z", "/nonexistent", "x.y", False, language=language)
        assert analyze_code(data, task).path == "x/y.z"


def test_go_methods_are_members_of_their_receiver_type_also_a_generic_one(tmp_path: Path) -> None:
    found = facts(
        tmp_path,
        "srv/server.go",
        "go",
        (
            "package srv\n"
            "type Set[T comparable] struct{ m map[T]struct{} }\n"
            "func (s *Set[T]) Add(v T) { s.m[v] = struct{}{} }\n"
            'func (Server) Name() string { return "" }\n'
            "func (s *Server) Serve() error { return nil }\n"
        ),
    )
    assert {s.qname: (s.kind, s.parent, s.start_line) for s in found.symbols} == {
        "srv.server.Set": ("class", "", 2),
        "srv.server.Set.Add": ("method", "srv.server.Set", 3),
        "srv.server.Server.Name": ("method", "srv.server.Server", 4),
        "srv.server.Server.Serve": ("method", "srv.server.Server", 5),
    }
    assert not [s for s in found.symbols if s.kind == "function"]  # never a top-level `Serve`


def test_rust_methods_of_impls_and_traits_are_members_of_their_type(tmp_path: Path) -> None:
    found = facts(
        tmp_path,
        "src/geo.rs",
        "rust",
        (
            "pub struct Point { x: i32 }\n"
            "impl Point {\n    pub fn new() -> Self { Point { x: 0 } }\n}\n"
            "impl<T: Clone> From<T> for Wrapper<T> {\n    fn from(t: T) -> Self { todo!() }\n}\n"
            "impl std::fmt::Display for crate::geo::Point {\n    fn fmt(&self) {}\n}\n"
            "pub trait Shape {\n    fn area(&self) -> f64;\n"
            "    fn name(&self) -> String { String::new() }\n}\n"
            'extern "C" {\n    fn abs(x: i32) -> i32;\n}\n'
        ),
    )
    assert {s.qname: (s.kind, s.parent, s.start_line, s.end_line) for s in found.symbols} == {
        "src.geo.Point": ("class", "", 1, 1),
        "src.geo.Point.new": ("method", "src.geo.Point", 3, 3),
        "src.geo.Wrapper.from": ("method", "src.geo.Wrapper", 6, 6),
        "src.geo.Point.fmt": ("method", "src.geo.Point", 9, 9),
        "src.geo.Shape": ("class", "", 11, 14),
        "src.geo.Shape.area": ("method", "src.geo.Shape", 12, 12),
        "src.geo.Shape.name": ("method", "src.geo.Shape", 13, 13),
    }  # a foreign function's declaration (`abs`) is no definition


def test_java_records_and_enums_with_bodies_keep_their_methods_as_members(tmp_path: Path) -> None:
    found = facts(
        tmp_path,
        "src/p/Shapes.java",
        "java",
        (
            "package p;\n"
            "public record Point(int x, int y) {\n"
            "    public Point { if (x < 0) throw new IllegalArgumentException(); }\n"
            "    public int sum() { return x + y; }\n"
            "}\n"
            "enum Op {\n"
            "    ADD { int apply(int a, int b) { return a + b; } },\n"
            "    SUB { int apply(int a, int b) { return a - b; } },\n"
            "    NONE;\n"
            "    abstract int apply(int a, int b);\n"
            "    static Op of(String s) { return ADD; }\n"
            "}\n"
        ),
    )
    assert {s.qname: (s.kind, s.parent, s.start_line, s.end_line) for s in found.symbols} == {
        "src.p.Shapes.Point": ("class", "", 2, 5),
        "src.p.Shapes.Point.Point": ("method", "src.p.Shapes.Point", 3, 3),
        "src.p.Shapes.Point.sum": ("method", "src.p.Shapes.Point", 4, 4),
        "src.p.Shapes.Op": ("class", "", 6, 12),
        "src.p.Shapes.Op.ADD": ("class", "src.p.Shapes.Op", 7, 7),
        "src.p.Shapes.Op.ADD.apply": ("method", "src.p.Shapes.Op.ADD", 7, 7),
        "src.p.Shapes.Op.SUB": ("class", "src.p.Shapes.Op", 8, 8),
        "src.p.Shapes.Op.SUB.apply": ("method", "src.p.Shapes.Op.SUB", 8, 8),
        "src.p.Shapes.Op.apply": ("method", "src.p.Shapes.Op", 10, 10),
        "src.p.Shapes.Op.of": ("method", "src.p.Shapes.Op", 11, 11),
    }


def test_cpp_out_of_line_methods_are_members_of_every_type_that_qualifies_them(tmp_path: Path) -> None:
    found = facts(
        tmp_path,
        "src/foo.cpp",
        "cpp",
        (
            '#include "foo.h"\n'
            "void Foo::bar() {}\n"
            "int geo::Shape::area(int x) { return x; }\n"
            "template <typename T> void Box<T>::put(T v) {}\n"
            "Foo::~Foo() {}\n"
            "const std::string& Foo::name() const { return n; }\n"
            "bool Foo::operator==(const Foo& o) const { return true; }\n"
        ),
    )
    assert {s.qname: (s.kind, s.parent, s.start_line) for s in found.symbols} == {
        "src.foo.Foo.bar": ("method", "src.foo.Foo", 2),
        "src.foo.geo.Shape.area": ("method", "src.foo.geo.Shape", 3),
        "src.foo.Box.put": ("method", "src.foo.Box", 4),
        "src.foo.Foo.~Foo": ("method", "src.foo.Foo", 5),
        "src.foo.Foo.name": ("method", "src.foo.Foo", 6),
        "src.foo.Foo.operator==": ("method", "src.foo.Foo", 7),
    }
    assert next(s for s in found.symbols if s.name == "name").signature == (
        "const std::string& Foo::name() const"
    )
