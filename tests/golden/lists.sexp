;; Lists: construction, access, higher-order procedures.

(list)
;=> ()
(list 1 "a" 'b :c nil)
;=> (1 "a" b :c nil)
(cons 1 '(2 3))
;=> (1 2 3)
(cons 1 nil)
;=> (1)
(cons 1 '())
;=> (1)
(cons '(1) '(2))
;=> ((1) 2)
(car '(1 2))
;=> 1
(first '(1 2))
;=> 1
(cdr '(1 2 3))
;=> (2 3)
(rest '(1 2 3))
;=> (2 3)
(list (car nil) (car '()) (first nil) (cdr nil) (cdr '()) (rest nil) (rest '(1)))
;=> (nil nil nil () () () ())

;; The original list is never changed.
(define xs '(1 2 3))
(cons 0 xs)
(append xs '(4))
(reverse xs)
xs
;=> (1 2 3)

(nth '(10 20 30) 0)
;=> 10
(nth '(10 20 30) 2)
;=> 30
(nth "abc" 1)
;=> "b"
(nth '(1 2 3) 3)
;!! nth: index 3 out of range for a list of length 3
(nth '(1 2 3) -1)
;!! nth: index -1 out of range for a list of length 3
(nth '() 0)
;!! nth: index 0 out of range for a list of length 0
(nth '(1) 1.0)
;!! nth: expected an integer index, got 1.0 (float)
(nth 5 0)
;!! nth: expected a list, got 5 (integer)

(list (length nil) (length '()) (length "abc") (length '(1 2)) (length (dict "a" 1)))
;=> (0 0 3 2 1)
(length 5)
;!! length: expected a string, list or dict, got 5 (integer)
(length 'sym)
;!! length: expected a string, list or dict, got sym (symbol)

(append '(1) nil '() '(2 3))
;=> (1 2 3)
(append)
;=> ()
(append '(1) '((2)))
;=> (1 (2))
(append '(1) 2)
;!! append: expected a list, got 2 (integer)

(reverse '(1 2 3))
;=> (3 2 1)
(reverse "abc")
;=> "cba"
(reverse nil)
;=> ()
(reverse 5)
;!! reverse: expected a list, got 5 (integer)

(range 3)
;=> (0 1 2)
(range 0)
;=> ()
(range -2)
;=> ()
(range 1 4)
;=> (1 2 3)
(range 10 0 -3)
;=> (10 7 4 1)
(range 0 10 4)
;=> (0 4 8)
(range 0 5 0)
;!! range: step must not be zero
(range 1.5)
;!! range: expected integers, got 1.5 (float)
(range 1 "5")
;!! range: expected integers, got "5" (string)

;; map, filter, reduce, for-each, apply, sort.
(map (lambda (x) (* x x)) '(1 2 3))
;=> (1 4 9)
(map car '((1) (2)))
;=> (1 2)
(map + '(1 2 3) '(10 20))
;=> (11 22)
(map list '(1 2) '(a b) '("x" "y"))
;=> ((1 a "x") (2 b "y"))
(map inc nil)
;=> ()
(map (lambda (x) (print x) x) '(1 2))
;>> 1
;>> 2
;=> (1 2)
(map 5 '(1))
;!! 5 is not a procedure
(map inc 5)
;!! map: expected a list as second argument, got 5 (integer)
(map inc)
;!! map: expected at least 2 arguments, got 1
(map (lambda (a b) a) '(1))
;!! lambda: expected 2 arguments, got 1

(filter odd? (range 10))
;=> (1 3 5 7 9)
(filter (lambda (x) x) '(0 1 nil "" "a" () (0)))
;=> (1 "a" (0))
(filter odd? nil)
;=> ()
(filter odd? "abc")
;!! filter: expected a list as second argument, got "abc" (string)

(reduce + 0 '(1 2 3))
;=> 6
(reduce + '(1 2 3))
;=> 6
(reduce + 0 '())
;=> 0
(reduce + '(5))
;=> 5
(reduce (lambda (acc x) (cons x acc)) '() '(1 2 3))
;=> (3 2 1)
(reduce - 10 '(1 2))
;=> 7
(reduce + '())
;!! reduce: empty list and no initial value
(reduce + 0 5)
;!! reduce: expected a list as third argument, got 5 (integer)
(reduce + 5)
;!! reduce: expected a list, got 5 (integer)

(for-each print '(1 "a"))
;>> 1
;>> a
;=> nil
(for-each print 5)
;!! for-each: expected a list as second argument, got 5 (integer)

(apply + '(1 2 3))
;=> 6
(apply + 1 2 '(3))
;=> 6
(apply list)
;=> ()
(apply max '(3 9 2))
;=> 9
(apply (lambda (a &rest r) (list a r)) 1 '(2 3))
;=> (1 (2 3))
(apply + 1)
;!! apply: expected a list as last argument, got 1 (integer)
(apply 'not-a-procedure '(1))
;!! not-a-procedure is not a procedure

(sort '(3 1 2))
;=> (1 2 3)
(sort '("b" "a" "c"))
;=> ("a" "b" "c")
(sort '(2 1.5 true))
;=> (true 1.5 2)
(sort '())
;=> ()
(sort nil)
;=> ()
(sort '((1 b) (0 a)) car)
;=> ((0 a) (1 b))
(sort '(3 1 2) (lambda (x) (- x)))
;=> (3 2 1)
(sort '("bb" "a" "ccc") length)
;=> ("a" "bb" "ccc")
(sort '((1 "x") (0 "y") (1 "z")) first)
;=> ((0 "y") (1 "x") (1 "z"))
(sort '(1 "a"))
;!! sort: cannot order values of different kinds (integer, string)
(sort 5)
;!! sort: expected a list, got 5 (integer)

;; Arity.
(cons 1)
;!! cons: expected 2 arguments, got 1
(car)
;!! car: expected 1 argument, got 0
(nth '(1))
;!! nth: expected 2 arguments, got 1
;; An argument the signature does not name is an error, never a helper parameter of the code.
(rest (list 1 2 3) 99)
;!! rest: expected 1 argument, got 2
(first 5 "boom")
;!! first: expected 1 argument, got 2
(cdr '(1 2) "cdr")
;!! cdr: expected 1 argument, got 2
(reduce + 0 '(1 2) '(3))
;!! reduce: expected 2 to 3 arguments, got 4
(range)
;!! range: expected 1 to 3 arguments, got 0

;; Type errors name the procedure that was called.
(cons 1 2)
;!! cons: expected a list as second argument, got 2 (integer)
(first 5)
;!! first: expected a list, got 5 (integer)
(rest 5)
;!! rest: expected a list, got 5 (integer)
(car 5)
;!! car: expected a list, got 5 (integer)
(cdr "abc")
;!! cdr: expected a list, got "abc" (string)
