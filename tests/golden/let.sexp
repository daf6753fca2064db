;; let (parallel) and let* (sequential).

(let ((x 1) (y 2)) (+ x y))
;=> 3
(let () 5)
;=> 5
(let ((x 1)))
;=> nil
(let ((x 1)) (print x) (+ x 1))
;>> 1
;=> 2

;; let binds in parallel: every expression sees the outer scope.
(define x 10)
(let ((x 1) (y x)) y)
;=> 10
(let ((x 1)) (let ((x 2) (y x)) (list x y)))
;=> (2 1)
(let ((a 1) (b a-unbound)) b)
;!! unbound symbol 'a-unbound'

;; let* binds in order: each expression sees the names before it.
(let* ((x 1) (y (+ x 1)) (z (* y 10))) (list x y z))
;=> (1 2 20)
(let* ((x 1) (x (+ x 1))) x)
;=> 2
(let* () 5)
;=> 5

;; Bindings are local: they do not leak, and shadow globals.
(let ((x 99)) x)
;=> 99
x
;=> 10
(let ((list (lambda (&rest xs) 'shadowed))) (list 1 2))
;=> shadowed
(list 1 2)
;=> (1 2)

;; A let body may define; the definition stays inside.
(let ((a 1)) (define b 2) (+ a b))
;=> 3
(try b (catch e (get e "message")))
;=> "unbound symbol 'b'"

;; Errors.
(let ((x 1) (x 2)) x)
;!! let: 'x' is bound twice
(let)
;!! let: expected (let ((name expr)...) body...)
(let x 1)
;!! let: expected (let ((name expr)...) body...)
(let ((1 2)) 1)
;!! let: each binding must be (name expr)
(let ((x 1 2)) x)
;!! let: each binding must be (name expr)
(let (x) x)
;!! let: each binding must be (name expr)
(let* ((x)) x)
;!! let*: each binding must be (name expr)
(let*)
;!! let*: expected (let* ((name expr)...) body...)
