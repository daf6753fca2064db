;; define, bind, set!.

(define a 5)
;=> 5
a
;=> 5
(bind b 6)
;=> 6
b
;=> 6
(define (square x) (* x x))
;=> square
(symbol? (define (cube x) (* x x x)))
;=> true
(square 4)
;=> 16
square
;=> #<procedure square>
(define sq (lambda (x) (* x x)))
sq
;=> #<procedure sq>
(define anon (list (lambda (x) x)))
(car anon)
;=> #<procedure lambda>

;; Redefinition replaces; forward references resolve at call time.
(define a 7)
a
;=> 7
(define (calls-later) (later))
(define (later) 'later-result)
(calls-later)
;=> later-result

;; set! assigns the nearest existing binding.
(set! a 8)
;=> 8
a
;=> 8
(let ((a 1)) (set! a 2) a)
;=> 2
a
;=> 8
(define (bump) (set! a (+ a 1)))
(bump)
(bump)
a
;=> 10
(set! never-bound 1)
;!! set!: 'never-bound' is not bound
(set! squar 1)
;!! did you mean 'square'?

;; define inside a body binds in that body's frame.
(define (f) (define inner 1) (define (g) (* inner 2)) (g))
(f)
;=> 2
(try inner (catch e (get e "type")))
;=> "NAME_ERROR"
(define (uses-before) (helper) (define (helper) 1))
(uses-before)
;!! 'helper' is used before its definition has run

;; define anywhere at top level is global.
(list (define top-q 1) top-q)
;=> (1 1)
(progn (define in-progn 3))
in-progn
;=> 3
(bind in-let-local 0)
(let ((z 1)) (bind in-let-local 5) in-let-local)
;=> 5
in-let-local
;=> 0

;; Malformed forms.
(define)
;!! define: expected (define name expr) or (define (name params...) body...)
(define 1 2)
;!! define: expected (define name expr) or (define (name params...) body...)
(define x 1 2)
;!! define: expected (define name expr)
(bind (f x) 1)
;!! bind: expected (bind name expr)
(bind x)
;!! bind: expected (bind name expr)
(set! 1 2)
;!! set!: expected (set! name expr)
(set! x)
;!! set!: expected (set! name expr)
(define (bad a a) a)
;!! define: parameter 'a' appears twice
