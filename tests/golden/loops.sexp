;; loop and while.

(let ((x 0)) (loop 3 (bind x (+ x 1))))
;=> 3
(loop 0 (error "never"))
;=> nil
(loop 2 (print "x"))
;>> x
;>> x
;=> nil
(loop (+ 1 1) 'last)
;=> last
(define acc '())
(loop 3 (set! acc (cons (length acc) acc)))
;=> (2 1 0)

;; loop runs in the current scope.
(let ((n 0)) (loop 4 (define n2 (+ n 1)) (set! n n2)) n)
;=> 4
(define (doubling) (define v 1) (loop 3 (set! v (* v 2))) v)
(doubling)
;=> 8

;; The count must be a non-negative integer.
(loop -1 1)
;!! loop: count must be a non-negative integer, got -1
(loop 1.5 1)
;!! loop: count must be a non-negative integer, got 1.5
(loop "3" 1)
;!! loop: count must be a non-negative integer, got "3"
(loop nil 1)
;!! loop: count must be a non-negative integer, got nil
(loop true 1)
;!! loop: count must be a non-negative integer, got true
(loop)
;!! loop: expected (loop count body...)
;; loop takes a count, not bindings as in other Lisps' loops; it says so before anything runs.
(print "not printed")
(loop ((i 0)) (print i))
;!! loops.sexp:39:7: error: loop: expected (loop count body...)

;; while: the value of the last body run, nil when it never runs.
(define i 0)
(while (< i 5) (set! i (+ i 1)))
;=> 5
(while false 1)
;=> nil
(define j 0)
(while (< j 3) (print j) (set! j (+ j 1)) 'body-value)
;>> 0
;>> 1
;>> 2
;=> body-value
(let ((n 0)) (while (< n 3) (bind n (+ n 1))) n)
;=> 3
(define (count-to n)
  (let ((k 0) (out '()))
    (while (< k n) (set! out (cons k out)) (set! k (+ k 1)))
    (reverse out)))
(count-to 4)
;=> (0 1 2 3)
(while)
;!! while: expected (while test body...)

;; Many iterations run in constant stack.
(define total 0)
(loop 100000 (set! total (+ total 1)))
total
;=> 100000
(define w 0)
(while (< w 100000) (set! w (+ w 1)))
w
;=> 100000
