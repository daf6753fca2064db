;; Closures capture their lexical scope.

(let ((adder (lambda (n) (lambda (x) (+ n x))))) ((adder 10) 5))
;=> 15

(define (make-counter)
  (let ((n 0))
    (lambda () (set! n (+ n 1)) n)))
(define c1 (make-counter))
(define c2 (make-counter))
(c1)
(c1)
(list (c1) (c2))
;=> (3 1)

;; Lexical, not dynamic, scope.
(define x 10)
(define (getx) x)
(let ((x 20)) (getx))
;=> 10

;; Two closures over one frame see each other's assignments.
(define (make-account balance)
  (list (lambda (n) (set! balance (+ balance n)) balance)
        (lambda () balance)))
(define account (make-account 100))
((car account) 50)
;=> 150
((second account))
;=> 150

;; Each call gets a fresh frame.
(define fs (map (lambda (i) (lambda () (* i i))) (range 4)))
(map (lambda (f) (f)) fs)
;=> (0 1 4 9)

;; Nested closures reach every enclosing level.
(define (curry4 a) (lambda (b) (lambda (c) (lambda (d) (list a b c d)))))
((((curry4 1) 2) 3) 4)
;=> (1 2 3 4)
(define (outer a) (define (inner b) (+ a b)) inner)
((outer 10) 5)
;=> 15

;; Parameters shadow globals, primitives included.
(define (shadow car) (car 1))
(shadow (lambda (v) (* v 10)))
;=> 10
(car '(1 2))
;=> 1

;; Closures stored in data and called later.
(define table (dict "double" (lambda (v) (* 2 v)) "neg" (lambda (v) (- v))))
((get table "double") 21)
;=> 42
(map (lambda (name) ((get table name) 3)) '("double" "neg"))
;=> (6 -3)

;; A closure over a let* binding and a loop variable.
(define (make-multipliers)
  (let* ((base 3) (fs (map (lambda (k) (lambda (v) (* k base v))) '(1 2))))
    fs))
(map (lambda (f) (f 10)) (make-multipliers))
;=> (30 60)
