"""Properties of the reader on generated text: junk in, ReadError (or forms) out, nothing else."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sexp_tasks.errors import ReadError, Source, Span
from sexp_tasks.syntax.nodes import Literal
from sexp_tasks.syntax.numerals import parse_number
from sexp_tasks.syntax.reader import atom_node, read

# The characters the grammar gives meaning to, plus a few it does not ([ ] @ alone), and
# whole pieces (tokens, escapes, quote marks) so that generated text nests and breaks in
# many more ways than single random characters would.
GRAMMAR_CHARS = "()'`,@\"\\;:#{}[]tfu0123456789abcxyz-+.eE_ \n\t"
GRAMMAR_PIECES = st.sampled_from(
    ["(", ")", "{", "}", "'", "`", ",", ",@", '"', "\\", "\\n", "\\u00e9", ";", "#t", "#f", ":", "nil"]
    + ["1.5", "-2e3", " ", "\n"]
)
grammar_text = st.one_of(
    st.text(alphabet=GRAMMAR_CHARS, max_size=200),
    st.lists(st.one_of(GRAMMAR_PIECES, st.text(alphabet=GRAMMAR_CHARS, max_size=3)), max_size=80).map(
        "".join
    ),
)


def read_or_read_error(text: str) -> None:
    """Read text; a ReadError is an acceptable outcome, anything else escapes to fail the test."""
    try:
        forms = read(text, "gen.sexp")
    except ReadError as err:
        assert err.span is not None
        assert err.span.line >= 1 and err.span.column >= 1
        assert str(err)
    else:
        assert isinstance(forms, list)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_reads_or_raises_read_error(text: str) -> None:
    read_or_read_error(text)


@settings(max_examples=300, deadline=None)
@given(grammar_text)
def test_text_from_grammar_characters_reads_or_raises_read_error(text: str) -> None:
    read_or_read_error(text)


NUMBER_CHARS = "0123456789+-.eE_x:"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=NUMBER_CHARS, min_size=1, max_size=12))
def test_an_atom_reads_as_the_number_string_to_number_makes_of_it(text: str) -> None:
    # One definition of how numbers are written serves the reader and string->number.
    node = atom_node(text, Span((Source("gen.sexp", text), 1, 1)))
    number = parse_number(text)
    if number is None:
        assert not isinstance(node, Literal)
    else:
        assert isinstance(node, Literal) and node.value == number and type(node.value) is type(number)
