"""'Did you mean' suggestions: the one place close names are found and worded."""

from __future__ import annotations

from collections.abc import Iterable

# Names other Lisps, Python and JavaScript use for what this language calls otherwise. Spelling
# alone would not lead there (json-stringify is closer to substring than to json-dump).
OTHER_LANGUAGES = {
    # JSON
    "json-stringify": "json-dump",
    "json-dumps": "json-dump",
    "json-encode": "json-dump",
    "to-json": "json-dump",
    "json-loads": "json-parse",
    "json-decode": "json-parse",
    "parse-json": "json-parse",
    "from-json": "json-parse",
    # strings
    "strcat": "string-append",
    "concat": "string-append",
    "concatenate": "string-append",
    "string-concat": "string-append",
    "len": "length",
    "count": "length",
    "size": "length",
    "string-length": "length",
    "list-length": "length",
    "upcase": "string-upcase",
    "upper": "string-upcase",
    "toupper": "string-upcase",
    "downcase": "string-downcase",
    "lower": "string-downcase",
    "tolower": "string-downcase",
    "trim": "string-trim",
    "strip": "string-trim",
    "split": "string-split",
    "split-string": "string-split",
    "join": "string-join",
    "replace": "string-replace",
    "contains?": "string-contains?",
    "includes?": "string-contains?",
    "starts-with?": "string-starts-with?",
    "startswith": "string-starts-with?",
    "string-prefix?": "string-starts-with?",
    "ends-with?": "string-ends-with?",
    "endswith": "string-ends-with?",
    "string-suffix?": "string-ends-with?",
    "substr": "substring",
    "subseq": "substring",
    "sprintf": "format",
    "to-string": "str",
    "string->int": "string->number",
    "parse-int": "string->number",
    "parse-float": "string->number",
    "int->string": "number->string",
    # output and errors
    "println": "print",
    "display": "print",
    "printf": "print",
    "puts": "print",
    "echo": "print",
    "raise": "error",
    "throw": "error",
    "panic": "error",
    # lists
    "head": "first",
    "hd": "first",
    "tail": "rest",
    "tl": "rest",
    "list-ref": "nth",
    "elt": "nth",
    "mapcar": "map",
    "foldl": "reduce",
    "fold": "reduce",
    "fold-left": "reduce",
    "remove-if-not": "filter",
    "foreach": "for-each",
    "dolist": "for-each",
    "sorted": "sort",
    "reversed": "reverse",
    "parallel-map": "pmap",
    "member": "member?",
    # dicts
    "hash-ref": "get",
    "gethash": "get",
    "dict-get": "get",
    "hash-set": "assoc",
    "dict-set": "assoc",
    "make-hash-table": "dict",
    "hash-map": "dict",
    "make-dict": "dict",
    "hash-keys": "keys",
    "dict-keys": "keys",
    "has-key": "has-key?",
    "contains-key?": "has-key?",
    # numbers
    "modulo": "mod",
    "remainder": "mod",
    "rem": "mod",
    "quotient": "//",
    "1+": "inc",
    "1-": "dec",
    # special forms
    "defun": "define",
    "defn": "define",
    "def": "define",
    "setq": "set!",
    "setf": "set!",
    "dotimes": "loop",
    "handler-case": "try",
    "begin0": "progn",
}


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """'; did you mean 'x' or 'y'?' naming up to three close candidates (never name itself), or ''."""
    import difflib  # lazy: ~0.7 ms of start-up, and only error messages need it

    others = set(candidates)
    others.discard(name)
    ours = OTHER_LANGUAGES.get(name)
    close = [ours] if ours in others else []
    close += [c for c in difflib.get_close_matches(name, sorted(others), n=3, cutoff=0.6) if c not in close]
    return "; did you mean " + " or ".join(f"'{c}'" for c in close[:3]) + "?" if close else ""
