;; Comparison: = < > <= >= (n-ary; numbers, and strings for ordering).

(= 1 1)
;=> true
(= 1 2)
;=> false
(= 1 1.0)
;=> true
(= 1 1 1)
;=> true
(= 1 1 2)
;=> false
(= 1)
;=> true
(= "a" "a")
;=> true
(= '(1) '(1))
;=> true
(= 1 true)
;=> true
(< 1 2)
;=> true
(< 2 1)
;=> false
(< 1 2 3)
;=> true
(< 1 3 2)
;=> false
(< 1 1)
;=> false
(< 1)
;=> true
(< 1 2.5)
;=> true
(> 3 2 1)
;=> true
(> 3 3)
;=> false
(<= 1 1 2)
;=> true
(<= 2 1)
;=> false
(>= 2 2 1)
;=> true
(>= 1 2)
;=> false
(< "a" "b")
;=> true
(> "b" "a" "A")
;=> true
(<= "abc" "abd")
;=> true
(< false true)
;=> true
(< -99999999999999999999 1)
;=> true

;; Errors.
(< 1 "a")
;!! <: cannot compare 1 (integer) with "a" (string)
(>= 1 "a")
;!! >=: cannot compare 1 (integer) with "a" (string)
(< 'a 'b)
;!! <: expected numbers or strings, got a (symbol)
(> nil 1)
;!! >: expected numbers or strings, got nil (nil)
(<= 1 '())
;!! <=: expected numbers or strings, got () (list)
(>= (dict) 1)
;!! >=: expected numbers or strings, got {} (dict)
(<)
;!! <: expected at least 1 argument, got 0
(=)
;!! =: expected at least 1 argument, got 0
