;; lambda and fn: closures with lambda lists (&optional &rest &key), exact arity otherwise.

((lambda (x y) (+ x y)) 1 2)
;=> 3
((fn (x) (* x 2)) 4)
;=> 8
((lambda () 'no-args))
;=> no-args
((lambda (x)))
;!! lambda: expected 1 argument, got 0
((lambda (x) (print x) (* x 10)) 3)
;>> 3
;=> 30
(procedure? (lambda (x) x))
;=> true
(lambda (x) x)
;=> #<procedure lambda>
(fn (x) x)
;=> #<procedure lambda>

;; Exact arity for required parameters.
((lambda () 1) 2)
;!! lambda: expected 0 arguments, got 1
((lambda (x y) 1) 2)
;!! lambda: expected 2 arguments, got 1
(define (two a b) (list a b))
(two 1)
;!! two: expected 2 arguments, got 1
(two 1 2 3)
;!! two: expected 2 arguments, got 3

;; &optional: missing ones are nil or their default; defaults may use earlier parameters.
(define (opt a &optional b (c (+ a 1))) (list a b c))
(list (opt 1) (opt 1 2) (opt 1 2 3))
;=> ((1 nil 2) (1 2 2) (1 2 3))
(opt)
;!! opt: expected 1 to 3 arguments, got 0
(opt 1 2 3 4)
;!! opt: expected 1 to 3 arguments, got 4
(define (chain a &optional (b (* a 2)) (c (+ a b))) (list a b c))
(list (chain 1) (chain 1 5))
;=> ((1 2 3) (1 5 6))
(define (counted &optional (n (progn (print "default evaluated") 0))) n)
(counted 5)
;=> 5
(counted)
;>> default evaluated
;=> 0

;; &rest collects the remaining arguments in a list.
(define (rst a &rest r) (list a r))
(list (rst 1) (rst 1 2 3))
;=> ((1 ()) (1 (2 3)))
(rst)
;!! rst: expected at least 1 argument, got 0
((lambda (&rest all) all))
;=> ()
((lambda (&rest all) all) 1 "two" 'three)
;=> (1 "two" three)

;; &key: passed as :name value, in any order; missing ones are nil or their default.
(define (kw a &key b (c (* a 10))) (list a b c))
(list (kw 1) (kw 1 :b 2) (kw 1 :c 3 :b 4))
;=> ((1 nil 10) (1 2 10) (1 4 3))
(kw 1 :d 3)
;!! kw: unknown keyword argument :d (expected one of :b :c)
(kw 1 :b)
;!! kw: keyword argument :b has no value
(kw 1 2)
;!! kw: expected a keyword argument, got 2
(kw)
;!! kw: expected at least 1 argument, got 0
(define (opt-key &optional a &key b) (list a b))
(list (opt-key) (opt-key :b 2) (opt-key 1 :b 2))
;=> ((nil nil) (nil 2) (1 2))
(define (all-kinds &optional (a 1) &rest r &key (z 9)) (list a r z))
(list (all-kinds) (all-kinds 5) (all-kinds 5 :z 1))
;=> ((1 () 9) (5 () 9) (5 (:z 1) 1))

;; Malformed lambda lists.
(lambda (a &rest) a)
;!! lambda: &rest needs a name after it
(lambda (a &rest b c) a)
;!! lambda: &rest takes exactly one name
(lambda (&key a &optional b) a)
;!! lambda: '&optional' out of order (expected &optional &rest &key)
(lambda (&rest r &optional b) r)
;!! lambda: '&optional' out of order
(lambda (a a) a)
;!! lambda: parameter 'a' appears twice
(lambda x x)
;!! lambda: expected a parameter list such as (x y), got x
(lambda)
;!! lambda: expected (lambda (params...) body...)
(fn)
;!! fn: expected (fn (params...) body...)
(lambda ((a 1)) a)
;!! lambda: expected a parameter name, got (a 1)
(lambda (&optional (a 1 2)) a)
;!! lambda: expected a name or (name default), got (a 1 2)
(lambda (1) 1)
;!! lambda: expected a parameter name, got 1

;; An empty body gives nil.
((lambda (x)) 1)
;=> nil

;; Calls with many arguments (a call site with more than 16 loops over them): procedures,
;; primitives, optional and rest parameters, errors at the call.
(define (twenty a b c d e f g h i j k l m n o p q r s t) (list a j t))
(twenty 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20)
;=> (1 10 20)
(+ 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20)
;=> 210
(define (seventeen-rest a &rest more) (list a (length more)))
(seventeen-rest 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18)
;=> (1 17)
(twenty 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19)
;!! twenty: expected 20 arguments, got 19
(+ 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 "x")
;!! +: expected numbers
(no-such-procedure 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17)
;!! unbound symbol 'no-such-procedure'
(let ((x 5)) (list x x x x x x x x x x x x x x x x x (+ x 1)))
;=> (5 5 5 5 5 5 5 5 5 5 5 5 5 5 5 5 5 6)

;; A tail call with many arguments runs in constant stack.
(define (wide-loop n a b c d e f g h i j k l m o p q)
  (if (= n 0) (+ a q) (wide-loop (- n 1) a b c d e f g h i j k l m o p (+ q 1))))
(wide-loop 20000 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 0)
;=> 20001

;; Many arguments are evaluated left to right, constants and expressions alike.
(list 1 (begin (print "first") 2) 3 4 5 6 7 8 9 10 11 12 13 14 15 16 (begin (print "second") 17) 18)
;>> first
;>> second
;=> (1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18)
