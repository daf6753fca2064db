"""'Did you mean' suggestions: close names, never the name that failed, and names from other
languages mapped to ours."""

from __future__ import annotations

import pytest

from sexp_tasks.errors import FormError, NameError_, SexpError
from sexp_tasks.lang.suggest import OTHER_LANGUAGES, did_you_mean
from sexp_tasks.runtime import Runtime


def error_of(runtime: Runtime, text: str) -> SexpError:
    with pytest.raises(SexpError) as info:
        runtime.run_source(text, "<test>")
    return info.value


def test_suggestions_never_offer_the_name_that_failed() -> None:
    assert did_you_mean("if", ["if", "iff"]) == "; did you mean 'iff'?"
    assert did_you_mean("x", ["x"]) == ""


@pytest.mark.parametrize("name", ["if", "cond", "let", "lambda", "define", "loop", "try"])
def test_a_special_form_used_as_a_value_says_so(runtime: Runtime, name: str) -> None:
    assert name in runtime.compiler.forms
    err = error_of(runtime, name)
    assert isinstance(err, FormError)
    assert err.message.startswith(f"'{name}' is a special form, not a value")
    assert "did you mean" not in err.message


def test_a_name_bound_later_in_let_star_is_not_suggested_to_itself(runtime: Runtime) -> None:
    err = error_of(runtime, "(let* ((f (lambda () x)) (x 3)) (f))")
    assert isinstance(err, NameError_)
    assert err.message == "unbound symbol 'x'"


@pytest.mark.parametrize(
    "name, ours",
    [
        ("json-stringify", "json-dump"),
        ("json-dumps", "json-dump"),
        ("json-loads", "json-parse"),
        ("strcat", "string-append"),
        ("concat", "string-append"),
        ("len", "length"),
    ],
)
def test_names_from_other_languages_suggest_ours(runtime: Runtime, name: str, ours: str) -> None:
    err = error_of(runtime, f"({name} 1)")
    assert err.message.startswith(f"unbound symbol '{name}'; did you mean '{ours}'")


def test_every_name_the_table_suggests_exists(runtime: Runtime) -> None:
    known = set(runtime.globals.values) | set(runtime.globals.pending) | set(runtime.compiler.forms)
    assert sorted(set(OTHER_LANGUAGES.values()) - known) == []
    assert not set(OTHER_LANGUAGES) & known  # an entry never hides one of our own names


def test_loop_given_bindings_says_what_it_takes(runtime: Runtime) -> None:
    err = error_of(runtime, '(print "not run") (loop ((i 0)) (print i))')
    assert isinstance(err, FormError)
    assert err.message.startswith("loop: expected (loop count body...)")
    assert "did you mean" not in err.message
    assert runtime.out.getvalue() == ""  # found when compiling, before anything ran
