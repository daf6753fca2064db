;; get-context (SPEC §5): files relevant to a query from the index `sexp index` builds.
;; Indexing real trees and ranking are tested in tests/test_memory.py; here no index exists.

(get-context "parse the syntax tree")
;=> ()
;2> warning: get-context: no file index at '.sexp/store.db'; run `sexp index` to build one

(get_context "parser" :limit 3)
;=> ()
;2> warning: get-context: no file index at '.sexp/store.db'; run `sexp index` to build one

(null? (get-context "anything"))
;=> true
;2> warning: get-context: no file index at '.sexp/store.db'; run `sexp index` to build one

(get-context 5)
;!! get-context: expected a string, got 5 (integer)

(get-context "parser" :limit 0)
;!! get-context: :limit must be a positive integer, got 0

(get-context "parser" :top 3)
;!! get-context: unexpected argument :top; the only option is :limit n

(get-context "parser" :limit)
;!! get-context: :limit needs a value

(get-context)
;!! get-context: expected 1 to 3 arguments, got 0
