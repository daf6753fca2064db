;; try / catch: a raised language error becomes a dict with type, message, line and column.

(try (+ 1 2) (catch e 'unused))
;=> 3
(try (error "boom") (catch e (get e "message")))
;=> "boom"
(try (error "boom") (catch e (get e "type")))
;=> "USER_ERROR"
(try
  (error "where")
  (catch e (list (get e "line") (get e "column"))))
;=> (10 3)
(try (error "boom") (catch e (keys e)))
;=> ("type" "message" "line" "column")
(try (error "with details" (dict "k" 1)) (catch e (get e "details")))
;=> {"k" 1}
(try (error "with details" (dict "k" 1)) (catch e (get-field e "details")))
;=> {"k" 1}
(try (error 'a-symbol) (catch e (get e "message")))
;=> "a-symbol"
(try (error (list 1 "two")) (catch e (get e "message")))
;=> "(1 \"two\")"

;; Every kind of language error is catchable, with its type.
(try (car 5) (catch e (get e "type")))
;=> "TYPE_ERROR"
(try (/ 1 0) (catch e (get e "type")))
;=> "VALUE_ERROR"
(try (undefined-symbol) (catch e (get e "type")))
;=> "NAME_ERROR"
(try ((lambda (x) x)) (catch e (get e "type")))
;=> "ARITY_ERROR"
(try (read-file "../outside") (catch e (get e "type")))
;=> "FILE_ERROR"
(try (nth '(1) 5) (catch e (get e "message")))
;=> "nth: index 5 out of range for a list of length 1"

;; The body's earlier forms run; the handler's value is the value.
(try (print "before") (error "x") (print "after") (catch e (print "handler") 'handled))
;>> before
;>> handler
;=> handled
(try 1 2 (catch e 3))
;=> 2
(try (error "x") (catch e))
;=> nil

;; Nested try: the innermost handler runs; a handler may raise again.
(try (try (error "in") (catch e (error (str "re:" (get e "message"))))) (catch e2 (get e2 "message")))
;=> "re:in"
(try (try (error "inner") (catch e 'inner-handled)) (catch e 'outer))
;=> inner-handled

;; The error variable is local to the handler.
(try (error "x") (catch err-local 1))
(try err-local (catch e (get e "type")))
;=> "NAME_ERROR"

;; An error from a procedure is caught where the procedure was called.
(define (risky n) (if (> n 2) (error (format "too big: {}" n)) n))
(map (lambda (n) (try (risky n) (catch e (get e "message")))) '(1 2 3))
;=> (1 2 "too big: 3")
(define (recursive-try n) (try (if (= n 0) 'done (recursive-try (- n 1))) (catch e (get e "message"))))
(recursive-try 100)
;=> done

;; Uncaught errors propagate.
(error "custom failure")
;!! try_catch.sexp:68:1: error: custom failure
(error "x" (dict "a" 1))
;!! error: x

;; Malformed try and a stray catch are errors before anything runs.
(try (+ 1 2))
;!! try: expected (try body... (catch err handler...))
(try)
;!! try: expected (try body... (catch err handler...))
(try 1 (catch))
;!! try: expected (try body... (catch err handler...))
(try 1 (catch 5 1))
;!! try: expected (try body... (catch err handler...))
(catch e 1)
;!! catch: only allowed as the last clause of (try body... (catch err handler...))
(print "not run")
(try (if) (catch e 'caught))
;!! if: expected (if test then [else])
