"""The reader: atoms, lists, reader macros, spans, and every syntax error with its position."""

from __future__ import annotations

import sys

import pytest

from sexp_tasks.errors import ReadError, Source, Span
from sexp_tasks.syntax.nodes import (
    ArgumentNode,
    DictNode,
    FunctionCallNode,
    Keyword,
    ListNode,
    Literal,
    Node,
    Symbol,
    make_list,
)
from sexp_tasks.syntax.numerals import parse_number
from sexp_tasks.syntax.reader import MAX_NESTING, Reader, atom_node, read


def one(text: str) -> Node:
    """Read text that holds exactly one form and return it."""
    forms = read(text)
    assert len(forms) == 1, forms
    return forms[0]


def call(name: str, *args: Node) -> FunctionCallNode:
    """A FunctionCallNode without spans, for comparing trees."""
    return FunctionCallNode(Symbol(name), tuple(ArgumentNode(a) for a in args))


def read_error(text: str, origin: str = "<input>") -> ReadError:
    """Read text that must fail and return the error."""
    with pytest.raises(ReadError) as info:
        read(text, origin)
    return info.value


def where(err: ReadError) -> tuple[int, int]:
    assert err.span is not None
    return err.span.line, err.span.column


# Atoms ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, value",
    [
        ("0", 0),
        ("42", 42),
        ("-7", -7),
        ("+7", 7),
        ("007", 7),
        ("123456789012345678901234567890123456789", 123456789012345678901234567890123456789),
        ("-98765432109876543210987654321", -98765432109876543210987654321),
    ],
)
def test_integers_of_any_size(text: str, value: int) -> None:
    node = one(text)
    assert node == Literal(value)
    assert type(node.value) is int  # type: ignore[union-attr]


def test_integers_longer_than_pythons_conversion_limit() -> None:
    digits = "12345678901" * 500  # 5500 digits: int() alone refuses more than 4300
    assert one(digits) == Literal(int(digits[:2750]) * 10**2750 + int(digits[2750:]))
    assert one("-" + digits) == Literal(-(int(digits[:2750]) * 10**2750 + int(digits[2750:])))
    assert one("+" + digits) == one(digits)


def test_long_integer_literals_read_under_pythons_default_digit_limit() -> None:
    # Importing the package leaves Python's limit alone (the CLI and a Runtime lift it), so the
    # reader and string->number must not depend on it: put the default back for this test.
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(sys.int_info.default_max_str_digits)
    try:
        assert one("9" * 5000) == Literal(10**5000 - 1)
        assert one("-" + "9" * 5000) == Literal(1 - 10**5000)
        assert parse_number("1" + "0" * 5000) == 10**5000
    finally:
        sys.set_int_max_str_digits(previous)


@pytest.mark.parametrize(
    "text, value",
    [
        ("1.5", 1.5),
        ("-2e3", -2000.0),
        (".5", 0.5),
        ("1.", 1.0),
        ("+1.25", 1.25),
        ("3E-2", 0.03),
        ("-.5", -0.5),
    ],
)
def test_floats(text: str, value: float) -> None:
    node = one(text)
    assert node == Literal(value)
    assert type(node.value) is float  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "text, value",
    [
        (r'"plain"', "plain"),
        (r'""', ""),
        (r'"a\nb"', "a\nb"),
        (r'"a\tb"', "a\tb"),
        (r'"a\rb"', "a\rb"),
        (r'"say \"hi\""', 'say "hi"'),
        (r'"back\\slash"', "back\\slash"),
        (r'"\u00e9\u4E2D"', "\u00e9\u4e2d"),
        (r'"\\n is not a newline"', "\\n is not a newline"),
        ('"two\nlines"', "two\nlines"),
        ('"(not a list) ; nor a comment"', "(not a list) ; nor a comment"),
    ],
)
def test_strings_and_escapes(text: str, value: str) -> None:
    assert one(text) == Literal(value)


@pytest.mark.parametrize(
    "text, value",
    [("true", True), ("false", False), ("#t", True), ("#f", False), ("nil", None)],
)
def test_booleans_and_nil(text: str, value: object) -> None:
    node = one(text)
    assert node == Literal(value)
    assert node.value is value  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "text",
    [
        "x",
        "string=?",
        "system:run_script",
        "*loop-config*",
        "user:plan",
        "+",
        "-",
        "...",
        "1+",
        "1.2.3",
        "-x",
        "<=",
        "a/b",
        "%&^~$!",
        "nil?",
        "true-ish",
        "t",
    ],
)
def test_symbols(text: str) -> None:
    assert one(text) == Symbol(text)


@pytest.mark.parametrize("text, name", [(":name", "name"), (":a-b", "a-b"), ("::x", ":x"), (":1", "1")])
def test_keywords(text: str, name: str) -> None:
    assert one(text) == Keyword(name)


def test_lone_colon_is_a_symbol() -> None:
    assert one(":") == Symbol(":")


def test_hash_booleans_need_a_delimiter() -> None:
    assert read("(#t)") == [ListNode((Literal(True),))]
    assert read('#f"s"') == [Literal(False), Literal("s")]


def test_atom_node_classifies() -> None:
    span = Span((Source("f", "x"), 1, 1))
    assert atom_node("12", span) == Literal(12)
    assert atom_node("1.5", span) == Literal(1.5)
    assert atom_node(":k", span) == Keyword("k")
    assert atom_node("nil", span) == Literal(None)
    assert atom_node("sym", span) == Symbol("sym")
    assert atom_node("sym", span).span is span


# Lists, dicts, reader macros -------------------------------------------------------------


def test_empty_input_and_only_comments() -> None:
    assert read("") == []
    assert read("   \n\t ") == []
    assert read("; just a comment") == []
    assert read(";; one\n;; two\n") == []


def test_several_top_level_forms() -> None:
    assert read('1 two "three" :four') == [Literal(1), Symbol("two"), Literal("three"), Keyword("four")]


def test_call_with_symbol_head() -> None:
    node = one("(+ 1 (f x))")
    assert node == call("+", Literal(1), call("f", Symbol("x")))
    assert isinstance(node, FunctionCallNode)
    assert node.name == "+"
    assert node.args == (Literal(1), call("f", Symbol("x")))
    assert all(isinstance(a, ArgumentNode) for a in node.arguments)


def test_lists_without_symbol_head() -> None:
    assert one("()") == ListNode(())
    assert one("(1 2)") == ListNode((Literal(1), Literal(2)))
    assert one("((f) x)") == ListNode((call("f"), Symbol("x")))
    assert one('("s" a)') == ListNode((Literal("s"), Symbol("a")))
    assert one("(:k 1)") == ListNode((Keyword("k"), Literal(1)))


def test_nested_lists() -> None:
    node = one("(let ((y 1) (z (g 2))) (list y z))")
    expected = call(
        "let",
        ListNode((call("y", Literal(1)), call("z", call("g", Literal(2))))),
        call("list", Symbol("y"), Symbol("z")),
    )
    assert node == expected


def test_make_list_matches_reader() -> None:
    assert one("(f 1)") == make_list((Symbol("f"), Literal(1)), None)
    assert one("(1 f)") == make_list((Literal(1), Symbol("f")), None)


def test_dict_literals() -> None:
    assert one("{}") == DictNode(())
    assert one('{:a 1 "b" (f)}') == DictNode((Keyword("a"), Literal(1), Literal("b"), call("f")))
    assert one("{a {b c}}") == DictNode((Symbol("a"), DictNode((Symbol("b"), Symbol("c")))))
    assert one("(f {k v})") == call("f", DictNode((Symbol("k"), Symbol("v"))))


@pytest.mark.parametrize(
    "text, name",
    [("'x", "quote"), ("`x", "quasiquote"), (",x", "unquote"), (",@x", "unquote-splicing")],
)
def test_reader_macros(text: str, name: str) -> None:
    assert one(text) == call(name, Symbol("x"))


def test_reader_macros_nest_and_wrap_forms() -> None:
    assert one("'(a b)") == call("quote", call("a", Symbol("b")))
    assert one("`(a ,b ,@c)") == call(
        "quasiquote", call("a", call("unquote", Symbol("b")), call("unquote-splicing", Symbol("c")))
    )
    assert one("''x") == call("quote", call("quote", Symbol("x")))
    assert one("'{a 1}") == call("quote", DictNode((Symbol("a"), Literal(1))))
    assert one("' ; comment\n x") == call("quote", Symbol("x"))
    assert read("'1 '\"s\" '#t") == [
        call("quote", Literal(1)),
        call("quote", Literal("s")),
        call("quote", Literal(True)),
    ]


def test_comments_are_ignored() -> None:
    text = "; header\n(f ; trailing\n  x) ; after\n;; end"
    assert read(text) == [call("f", Symbol("x"))]
    assert read("x;comment") == [Symbol("x")]


def test_atoms_split_at_delimiters() -> None:
    assert read("a'b") == [Symbol("a"), call("quote", Symbol("b"))]
    assert read('a"s"b') == [Symbol("a"), Literal("s"), Symbol("b")]
    assert read("(a)(b)") == [call("a"), call("b")]


def test_ten_thousand_nested_lists_read_fine() -> None:
    depth = 10_000
    node = one("(" * depth + "x" + ")" * depth)
    for _ in range(depth - 1):
        assert isinstance(node, ListNode)
        (node,) = node.items
    assert node == call("x")


def test_deep_quotes_read_fine() -> None:
    node = one("'" * 5000 + "x")
    for _ in range(5000):
        assert isinstance(node, FunctionCallNode) and node.name == "quote"
        node = node.args[0]
    assert node == Symbol("x")


def test_reader_instances_and_module_function_agree() -> None:
    text = "(define (f x) (if (> x 0) x (- x)))"
    assert Reader().read(text, "a.sexp") == read(text)


# Spans -----------------------------------------------------------------------------------


def span_of(node: object) -> tuple[str, int, int]:
    span = node.span  # type: ignore[attr-defined]
    assert isinstance(span, Span)
    return span.origin, span.line, span.column


def test_spans_of_nodes() -> None:
    text = '(define x\n  (f :k "s" 1.5))\n\n  \'y'
    first, second = read(text, "prog.sexp")
    assert span_of(first) == ("prog.sexp", 1, 1)
    assert isinstance(first, FunctionCallNode)
    assert span_of(first.head) == ("prog.sexp", 1, 2)
    x_arg, f_arg = first.arguments
    assert span_of(x_arg) == span_of(x_arg.value) == ("prog.sexp", 1, 9)
    assert span_of(f_arg) == ("prog.sexp", 2, 3)
    f = f_arg.value
    assert isinstance(f, FunctionCallNode)
    assert [span_of(a.value)[1:] for a in f.arguments] == [(2, 6), (2, 9), (2, 13)]
    assert span_of(second) == ("prog.sexp", 4, 3)
    assert isinstance(second, FunctionCallNode)
    assert span_of(second.head) == ("prog.sexp", 4, 3)
    assert span_of(second.arguments[0].value) == ("prog.sexp", 4, 4)


def test_spans_after_multiline_strings() -> None:
    text = '(a "one\ntwo\nthree" b\n c) "x\n" d'
    first, string, d = read(text)
    assert isinstance(first, FunctionCallNode)
    s, b, c = (a.value for a in first.arguments)
    assert span_of(s)[1:] == (1, 4)
    assert span_of(b)[1:] == (3, 8)
    assert span_of(c)[1:] == (4, 2)
    assert span_of(string)[1:] == (4, 5)
    assert span_of(d)[1:] == (5, 3)


def test_spans_of_dicts_and_tokens_after_comments() -> None:
    text = ";; c\n  {a 1} ; more\n#t x"
    dct, hb, x = read(text)
    assert span_of(dct)[1:] == (2, 3)
    assert span_of(hb)[1:] == (3, 1)
    assert span_of(x)[1:] == (3, 4)


def test_spans_with_crlf_and_tabs() -> None:
    a, b = read("a\r\n\tb")
    assert span_of(a)[1:] == (1, 1)
    assert span_of(b)[1:] == (2, 2)


def test_span_keeps_the_source() -> None:
    (node,) = read("(f)", "file.sexp")
    assert node.span is not None
    assert node.span.source.text == "(f)"
    assert str(node.span) == "file.sexp:1:1"


# Errors ----------------------------------------------------------------------------------


def test_unclosed_paren_says_where_it_was_opened() -> None:
    err = read_error("(a\n  (b c)\n  (d")
    assert str(err) == "unclosed '(' opened at 3:3; expected ')' before end of input"
    assert where(err) == (3, 3)


def test_unclosed_outer_paren() -> None:
    err = read_error("(define (f x)\n  (g x)")
    assert str(err) == "unclosed '(' opened at 1:1; expected ')' before end of input"
    assert where(err) == (1, 1)


def test_unclosed_paren_ignores_brackets_in_strings_and_comments() -> None:
    err = read_error('(a "(" ; (\n  b')
    assert str(err) == "unclosed '(' opened at 1:1; expected ')' before end of input"
    assert where(err) == (1, 1)


def test_unclosed_brace() -> None:
    err = read_error("{a 1")
    assert str(err) == "unclosed '{' opened at 1:1; expected '}' before end of input"
    assert where(err) == (1, 1)


def test_unexpected_close_paren() -> None:
    err = read_error("(a b))")
    assert str(err) == "unexpected ')' with no matching opening bracket"
    assert where(err) == (1, 6)
    err = read_error("x\n  )")
    assert str(err) == "unexpected ')' with no matching opening bracket"
    assert where(err) == (2, 3)


def test_unexpected_close_brace() -> None:
    err = read_error("}")
    assert str(err) == "unexpected '}' with no matching opening bracket"
    assert where(err) == (1, 1)


def test_mismatched_brackets() -> None:
    err = read_error("(a b}")
    assert str(err) == "unexpected '}'; expected ')' to close '(' opened at 1:1"
    assert where(err) == (1, 5)
    err = read_error("{a (b c}")
    assert str(err) == "unexpected '}'; expected ')' to close '(' opened at 1:4"
    assert where(err) == (1, 8)
    err = read_error("(x\n  {a 1)")
    assert str(err) == "unexpected ')'; expected '}' to close '{' opened at 2:3"
    assert where(err) == (2, 7)
    err = read_error("{)")
    assert str(err) == "unexpected ')'; expected '}' to close '{' opened at 1:1"
    assert where(err) == (1, 2)


@pytest.mark.parametrize(
    "text, column",
    [("(a ')", 5), ("(a `)", 5), ("(a ,)", 5), ("(a ,@)", 6), ("(a ' )", 6), ("{a '}", 5)],
)
def test_dangling_quote_before_close(text: str, column: int) -> None:
    err = read_error(text)
    close = text[column - 1]
    assert str(err) == f"unexpected '{close}'; expected an expression after the quote"
    assert where(err) == (1, column)


@pytest.mark.parametrize(
    "text, line, column",
    [("(a b) '", 1, 8), ("'", 1, 2), ("x\n,@  ", 2, 5), ("`", 1, 2), ("(f) ,\n", 2, 1)],
)
def test_dangling_quote_at_end(text: str, line: int, column: int) -> None:
    err = read_error(text)
    assert str(err) == "unexpected end of input; expected an expression after the quote"
    assert where(err) == (line, column)


def test_dangling_quote_inside_unclosed_list() -> None:
    err = read_error("(a '")
    assert str(err) == "unclosed '(' opened at 1:1; expected ')' before end of input"
    assert where(err) == (1, 1)


def test_unterminated_string() -> None:
    err = read_error('(a "abc')
    assert str(err) == "unterminated string (no closing '\"')"
    assert where(err) == (1, 4)
    err = read_error('x\n  "abc\ndef')
    assert str(err) == "unterminated string (no closing '\"')"
    assert where(err) == (2, 3)
    err = read_error('"ends with backslash\\"')
    assert str(err) == "unterminated string (no closing '\"')"
    assert where(err) == (1, 1)


UNKNOWN_ESCAPE = "unknown escape '{}' in string (expected \\n \\t \\r \\\" \\\\ or \\uXXXX)"


def test_unknown_escape_points_at_the_backslash() -> None:
    err = read_error('(a "ab\\qc")')
    assert str(err) == UNKNOWN_ESCAPE.format("\\q")
    assert where(err) == (1, 7)


def test_unknown_escape_inside_multiline_string() -> None:
    err = read_error('(a "line1\nxy\\q")')
    assert str(err) == UNKNOWN_ESCAPE.format("\\q")
    assert where(err) == (2, 3)
    err = read_error('\n  "one\\n\ntwo\nab \\x"')
    assert str(err) == UNKNOWN_ESCAPE.format("\\x")
    assert where(err) == (4, 4)


def test_short_unicode_escape() -> None:
    err = read_error('"ab\\u12"')
    assert str(err) == UNKNOWN_ESCAPE.format("\\u")
    assert where(err) == (1, 4)


@pytest.mark.parametrize(
    "text, char, line, column",
    [
        ("(a [b])", "[", 1, 4),
        ("(a #x)", "#", 1, 4),
        ("#tx", "#", 1, 1),
        ("@", "@", 1, 1),
        ("a\n  ]", "]", 2, 3),
    ],
)
def test_unexpected_character(text: str, char: str, line: int, column: int) -> None:
    err = read_error(text)
    assert str(err) == f"unexpected character {char!r}"
    assert where(err) == (line, column)


def test_odd_dict_literal() -> None:
    err = read_error("(x\n {a 1 b})")
    assert str(err) == "a dict literal needs an even number of forms (key value ...)"
    assert where(err) == (2, 2)


def test_first_error_in_the_text_wins() -> None:
    # A syntax error before a lexical one is reported, and vice versa.
    assert str(read_error(') "\\q"')) == "unexpected ')' with no matching opening bracket"
    assert str(read_error('"\\q" )')) == UNKNOWN_ESCAPE.format("\\q")
    assert str(read_error("{a} [")) == "unexpected character '['"
    assert str(read_error("{a} )")) == "a dict literal needs an even number of forms (key value ...)"
    assert str(read_error("{a}")) == "a dict literal needs an even number of forms (key value ...)"
    assert str(read_error("[ (")) == "unexpected character '['"


def test_nesting_deeper_than_max_is_a_read_error() -> None:
    depth = MAX_NESTING + 1
    err = read_error("(" * depth + ")" * depth)
    assert str(err) == f"lists nested more than {MAX_NESTING} deep"
    assert where(err) == (1, MAX_NESTING + 1)
    err = read_error("{" * depth)
    assert str(err) == f"lists nested more than {MAX_NESTING} deep"


def test_nesting_of_exactly_max_reads() -> None:
    depth = MAX_NESTING
    (node,) = read("(" * depth + ")" * depth)
    assert isinstance(node, ListNode)


def test_error_span_names_the_origin() -> None:
    err = read_error("(a", "prog.sexp")
    assert err.span is not None
    assert str(err.span) == "prog.sexp:1:1"


# Byte-order marks and surrogate escapes ------------------------------------------------


def test_a_leading_byte_order_mark_is_ignored() -> None:
    assert read("\ufeff(a 1)") == [call("a", Literal(1))]
    (form,) = read("\ufeff\n(b)")
    assert form.span is not None and (form.span.line, form.span.column) == (2, 1)


def test_a_byte_order_mark_elsewhere_is_still_an_error() -> None:
    err = read_error("(a \ufeff)")
    assert str(err) == f"unexpected character {chr(0xFEFF)!r}"


@pytest.mark.parametrize(
    "text, value",
    [
        (r'"\ud83d\ude00"', "\U0001f600"),
        (r'"a\uD83D\uDE00b"', "a\U0001f600b"),
        (r'"\ud83d\ude00\ud83d\ude01"', "\U0001f600\U0001f601"),
    ],
)
def test_surrogate_pair_escapes_combine_into_one_character(text: str, value: str) -> None:
    assert one(text) == Literal(value)


def test_an_escaped_surrogate_pair_has_length_one() -> None:
    node = one(r'"\ud83d\ude00"')
    assert isinstance(node, Literal) and len(node.value) == 1


@pytest.mark.parametrize(
    "text, shown, column",
    [
        (r'"\ud83d"', "\\ud83d", 2),
        (r'"ab\ude00"', "\\ude00", 4),
        (r'"\ud83dx"', "\\ud83d", 2),
        (r'"\ude00\ud83d"', "\\ude00", 2),
        (r'"\ud83d\ud83d"', "\\ud83d", 2),
        (r'"\ud83d\n"', "\\ud83d", 2),
    ],
)
def test_a_lone_surrogate_escape_is_a_syntax_error_at_the_escape(text: str, shown: str, column: int) -> None:
    err = read_error(f"(a {text})")
    assert "surrogate" in str(err) and shown in str(err)
    assert where(err) == (1, column + 3)
