;; Arithmetic: + - * / // mod abs min max round (booleans count as 0/1, as in Python).

(+)
;=> 0
(+ 1)
;=> 1
(+ 1 2 3)
;=> 6
(+ 1 2.5)
;=> 3.5
(+ 0.1 0.2)
;=> 0.30000000000000004
(- 5)
;=> -5
(- 2.5)
;=> -2.5
(- 10 1 2)
;=> 7
(- 1 2 3 4)
;=> -8
(*)
;=> 1
(* 2 3 4)
;=> 24
(* 1.5 2)
;=> 3.0
(/ 7 2)
;=> 3.5
(/ 4 2)
;=> 2.0
(/ 2)
;=> 0.5
(/ 100 2 5)
;=> 10.0
(/ 1 3)
;=> 0.3333333333333333
(// 7 2)
;=> 3
(// -7 2)
;=> -4
(// 7.5 2)
;=> 3.0
(mod 7 3)
;=> 1
(mod -7 3)
;=> 2
(mod 7 -3)
;=> -2
(mod 5.5 2)
;=> 1.5
(abs -3)
;=> 3
(abs -2.5)
;=> 2.5
(abs 0)
;=> 0
(min 3 1 2)
;=> 1
(max 3 1 2)
;=> 3
(min 5)
;=> 5
(max 1 2.5)
;=> 2.5
(round 2.5)
;=> 2
(round 3.5)
;=> 4
(round -0.5)
;=> 0
(round 2.4)
;=> 2
(round 7)
;=> 7
(round 2.675 2)
;=> 2.67
(round 1234 -2)
;=> 1200

;; Integers have any size.
(+ 99999999999999999999999 1)
;=> 100000000000000000000000
(* 123456789123456789 987654321987654321)
;=> 121932631356500531347203169112635269
(- 0 (* 99999999999 99999999999 99999999999))
;=> -999999999970000000000299999999999
(length (str (reduce * 1 (map (lambda (i) 10) (range 5000)))))
;=> 5001

;; Booleans count as 0 and 1.
(+ true 1)
;=> 2
(+ true true)
;=> 2
(* false 3)
;=> 0
(- true)
;=> -1

;; Large floats print as Python writes them.
(list 1e100 1e16 123456789.123 1e-7)
;=> (1e+100 1e+16 123456789.123 1e-07)
(* 1e308 10)
;=> inf

;; Errors: division by zero, non-numbers, arity.
(/ 1 0)
;!! /: division by zero
(/ 1.0 0)
;!! /: division by zero
(/ 0)
;!! /: division by zero
(// 1 0)
;!! //: division by zero
(mod 1 0)
;!! mod: division by zero
(+ 1 "a")
;!! +: expected numbers, got "a" (string)
(+ 1 nil)
;!! +: expected numbers, got nil (nil)
(- "a")
;!! -: expected numbers, got "a" (string)
(- 5 '(1))
;!! -: expected numbers, got (1) (list)
(* 2 "a")
;!! *: expected numbers, got "a" (string)
(* "a" 3)
;!! *: expected numbers, got "a" (string)
(/ "a" 2)
;!! /: expected numbers, got "a" (string)
(// 1 "a")
;!! //: expected numbers, got "a" (string)
(mod 'x 2)
;!! mod: expected numbers, got x (symbol)
(abs "x")
;!! abs: expected numbers, got "x" (string)
(min 1 "a")
;!! min: expected numbers, got "a" (string)
(max 1 :k)
;!! max: expected numbers, got :k (keyword)
(round "a")
;!! round: expected numbers, got "a" (string)
(round 1.5 "a")
;!! round: expected numbers, got "a" (string)
(round (* 1e308 10))
;!! round: cannot round inf
(-)
;!! -: expected at least 1 argument, got 0
(/)
;!! /: expected at least 1 argument, got 0
(min)
;!! min: expected at least 1 argument, got 0
(max)
;!! max: expected at least 1 argument, got 0
(abs)
;!! abs: expected 1 argument, got 0
(abs 1 2)
;!! abs: expected 1 argument, got 2
(// 1)
;!! //: expected 2 arguments, got 1
(mod 1 2 3)
;!! mod: expected 2 arguments, got 3
(round)
;!! round: expected 1 to 2 arguments, got 0

;; A rebound + keeps its new meaning even where the primitive was inlined.
(define (add a b) (+ a b))
(add 2 3)
;=> 5
(let ((+ -)) (+ 5 2))
;=> 3
(add 2 3)
;=> 5
