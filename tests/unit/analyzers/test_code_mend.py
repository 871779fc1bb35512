"""What C, C++ and Rust grammars cannot read, mended in place: macros blanked where they
stand for annotations, statements or strings, never a byte moved; a file so mended parses, and
keeps its definitions at their lines."""

from __future__ import annotations

import pytest

from kbc.analyzers.code.analyze import analyze_code
from kbc.analyzers.code.grammars import parse
from kbc.analyzers.code.mend import (
    Mender,
    blank_annotations,
    blank_define_bodies,
    blank_extern_c,
    blank_invocations_at,
    blank_statements,
    blank_strings,
    first_branches,
    flatten_conditionals,
    mend_rust,
)
from kbc.domain.models import AnalysisTask


def mended(mender: Mender, written: str, rows: set[int] | None = None) -> str:
    data = written.encode()
    out = mender(data, rows if rows is not None else set(range(written.count("\n") + 1)))
    assert len(out) == len(data)
    return out.decode()


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("LZ4LIB_API int f(void);", "           int f(void);"),
        ("LZ4LIB_API const char* v(void);", "           const char* v(void);"),
        ("LZ4LIB_STATIC_API void\nLZ4_reset(void);", "                  void\nLZ4_reset(void);"),
        ("static FORCE_INLINE U32 h(U32 x) {}", "static              U32 h(U32 x) {}"),
        (
            "JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm) {}",
            "          jint         JNI_OnLoad(JavaVM* vm) {}",
        ),
        ("class JSI_EXPORT Module : public Base {};", "class            Module : public Base {};"),
        ("  PyObject_HEAD Params *params;", "                Params *params;"),
        ('DEPRECATED_API("use g") int f(void);', "                        int f(void);"),
        ("int Run() GTEST_MUST_USE_RESULT_;", "int Run()                       ;"),
    ],
)
def test_annotation_macros_are_blanked(written: str, expected: str) -> None:
    assert mended(blank_annotations, written) == expected


@pytest.mark.parametrize(
    "written",
    [
        "U32 const mask = 1;",  # a type, then a qualifier
        "static U32 read32(const void* p);",  # a type after `static`
        "BOOL ok(void);",  # a type and a name only
        "return MAX(a, b);",
    ],
)
def test_types_in_capitals_are_kept(written: str) -> None:
    assert mended(blank_annotations, written) == written


def test_macros_standing_for_statements_and_units_are_blanked() -> None:
    assert (
        mended(blank_statements, "  Py_BEGIN_ALLOW_THREADS\n  x = f();\n")
        == "                        \n  x = f();\n"
    )
    assert mended(blank_statements, "size_t n = 64 KB;") == "size_t n = 64   ;"
    assert (
        mended(blank_statements, "  Py_BEGIN_ALLOW_THREADS d->dict = f();")
        == "                         d->dict = f();"
    )
    assert mended(blank_statements, "  BOOL ok = f();") == "  BOOL ok = f();"  # a declaration
    assert mended(blank_statements, "PARAM_GETTER(format, f)\nint g(void);\n") == (
        "                       \nint g(void);\n"
    )
    assert mended(blank_statements, 'MATCHER(IsEmpty, "is empty") {') == "MATCHER(IsEmpty" + " " * 12 + ") {"
    kept = "FOO(x)\n  && y;\nTEST(Suite, Name) {\n"  # continued, or a function's head
    assert mended(blank_statements, kept) == kept


def test_macros_beside_strings_and_extern_c_guards_are_blanked() -> None:
    assert mended(blank_strings, 'printf("%" PRIu64 "\\n", n);') == 'printf("%"        "\\n", n);'
    header = '#ifdef __cplusplus\nextern "C" {\n#endif\nint f(void);\n#ifdef __cplusplus\n}\n#endif\n'
    assert mended(blank_extern_c, header) == header.replace('extern "C" {', " " * 12).replace(
        "\n}\n", "\n \n"
    )


def test_one_branch_conditionals_are_read_as_compiled_and_others_kept() -> None:
    written = "int a[] = {\n#if X\n  1,\n#endif\n#if Y\n  2,\n#else\n  3,\n#endif\n};\n"
    assert mended(flatten_conditionals, written) == (
        "int a[] = {\n     \n  1,\n      \n#if Y\n  2,\n#else\n  3,\n#endif\n};\n"
    )


def test_macro_statements_are_blanked_only_on_the_lines_with_errors() -> None:
    written = "MOCK_METHOD(void, f, ());\nEXPECT_EQ(a, b);\n"
    assert mended(blank_invocations_at, written, {0}) == " " * 25 + "\nEXPECT_EQ(a, b);\n"


def test_rust_2015_try_tilde_and_negative_impls_are_mended() -> None:
    assert mended(mend_rust, "let v = try!(f());") == "let v =    !(f());"
    assert mended(mend_rust, "(~$($t:tt)*) => {}") == "( $($t:tt)*) => {}"
    assert mended(mend_rust, "impl !Send for X {}") == "impl  Send for X {}"


def test_a_mended_file_parses_and_keeps_its_definitions_at_their_lines() -> None:
    header = (
        "#ifndef LIB_H\n#define LIB_H\n"
        '#ifdef __cplusplus\nextern "C" {\n#endif\n'
        "LIB_API int lib_version(void);\n"
        "static FORCE_INLINE unsigned lib_hash(unsigned x) {\n  return x * 64 KB;\n}\n"
        "LIB_API const char* lib_name(void) { return NAME; }\n"
        "#ifdef __cplusplus\n}\n#endif\n#endif\n"
    )
    assert parse("c", header.encode()).root_node.has_error is False
    found = analyze_code(header.encode(), AnalysisTask("lib.h", "/nonexistent", "lib", False, language="c"))
    assert [(s.name, s.start_line, s.end_line, s.signature) for s in found.symbols] == [
        ("lib_hash", 7, 9, "static FORCE_INLINE unsigned lib_hash(unsigned x)"),  # as written
        ("lib_name", 10, 10, "const char* lib_name(void)"),  # from the first byte read
    ]
    assert not found.warnings
    rust = b"fn f() -> Result<(), E> {\n    let v = try!(g());\n    Ok(v)\n}\n"
    assert not parse("rust", rust).root_node.has_error


def test_a_directive_is_never_mended() -> None:
    written = '#define VISIBLE __attribute__((visibility("default")))\n#undef VISIBLE\n'
    assert mended(blank_annotations, written) == written


def test_comments_in_a_define_body_and_named_variadics_are_blanked_on_lines_with_errors() -> None:
    written = "#define BOUND(n) ((n) > 8 ? 0 /* none */ : (n) \\\n    /* more */ + 1)\nint x;\n"
    assert mended(blank_define_bodies, written, {1}) == written.replace("/* none */", " " * 10).replace(
        "/* more */", " " * 10
    )
    assert mended(blank_define_bodies, written, {2}) == written  # not on a line with an error
    logging = "#define log_v(prio, fmt...) vlog(prio, fmt)\n"
    assert mended(blank_define_bodies, logging) == logging.replace("fmt...", "fmt   ")


def test_a_conditional_of_several_branches_with_an_error_is_read_as_its_first_branch() -> None:
    written = (
        "int f(void) {\n  if (p == 0)\n#if A\n    return 1;\n#else\n    return 2;\n#endif\n  return 3;\n}\n"
    )
    out = mended(first_branches, written, {1})
    assert (
        out
        == "int f(void) {\n  if (p == 0)\n     \n    return 1;\n     \n"
        + " " * 13
        + "\n      \n  return 3;\n}\n"
    )
    assert not parse("c", out.encode()).root_node.has_error
    assert mended(first_branches, written, {8}) == written  # no error near it


def test_a_continued_directive_is_blanked_whole_and_region_macros_with_the_annotations() -> None:
    written = "int a[] = {\n#if defined(X) && \\\n    defined(Y)\n  1,\n#endif\n};\n"
    assert mended(flatten_conditionals, written) == (
        "int a[] = {\n" + " " * 19 + "\n" + " " * 14 + "\n  1,\n      \n};\n"  # every line kept
    )
    header = "YG_EXTERN_C_BEGIN\nYG_EXPORT float round_to_pixel(double v);\nYG_EXTERN_C_END\n"
    out = mended(blank_annotations, header)
    assert out.splitlines()[0].strip() == "" and out.splitlines()[2].strip() == ""
    assert not parse("c", out.encode()).root_node.has_error
    assert mended(blank_annotations, "LZ4_FORCE_INLINE\nint f(void);\n").startswith("LZ4_FORCE_INLINE")
