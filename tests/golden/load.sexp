;; load evaluates a file in the global environment and returns its last value.

(write-file "lib.sexp" "(define libval 41)\n(define (lib-inc x) (+ x 1))\n(lib-inc libval)")
(load "lib.sexp")
;=> 42
libval
;=> 41
(lib-inc 1)
;=> 2

;; Definitions made inside a procedure's load are still global.
(write-file "more.sexp" "(define from-more 'yes)")
(define (load-it) (load "more.sexp"))
(load-it)
from-more
;=> yes

;; A relative path inside a loaded file is taken from that file's directory.
(write-file "sub/a.sexp" "(load \"b.sexp\")")
(write-file "sub/b.sexp" "'from-b")
(load "sub/a.sexp")
;=> from-b

;; Output of a loaded file.
(write-file "printer.sexp" "(print \"loaded\")\n'done")
(load "printer.sexp")
;>> loaded
;=> done

;; An empty file gives nil.
(write-file "empty.sexp" "; only a comment\n")
(load "empty.sexp")
;=> nil

;; Errors in a loaded file name that file and line.
(write-file "bad.sexp" "(+ 1")
(load "bad.sexp")
;!! bad.sexp:1:1: error: unclosed '(' opened at 1:1
(write-file "err.sexp" "\n\n  (nth 5 0)")
(load "err.sexp")
;!! err.sexp:3:3: error: nth: expected a list, got 5 (integer)
(try (load "err.sexp") (catch e (list (get e "line") (get e "column"))))
;=> (3 3)
(load "nope.sexp")
;!! load: no such file 'nope.sexp'
(load 5)
;!! load: expected a string, got 5 (integer)
(load)
;!! load: expected 1 argument, got 0
