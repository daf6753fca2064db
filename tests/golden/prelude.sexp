;; The prelude (stdlib/prelude.sexp): every procedure it defines.

;; Numbers.
(list (inc 1) (dec 1) (inc -1.5))
;=> (2 0 -0.5)
(list (zero? 0) (zero? 0.0) (zero? 1))
;=> (true true false)
(list (positive? 1) (positive? 0) (positive? -1))
;=> (true false false)
(list (negative? -1) (negative? 0) (negative? 1))
;=> (true false false)
(list (even? 2) (even? 3) (even? -2) (even? 0))
;=> (true false true true)
(list (odd? 3) (odd? 2) (odd? -3) (odd? 1.5))
;=> (true false true false)
(list (sum '(1 2 3)) (sum '()) (sum '(0.5 0.25)))
;=> (6 0 0.75)
(list (product '(2 3 4)) (product '()))
;=> (24 1)
(even? "a")
;!! mod: expected numbers, got "a" (string)
(inc)
;!! inc: expected 1 argument, got 0

;; Procedures.
(identity 5)
;=> 5
((constantly 7) 1 2 3)
;=> 7
((constantly 'k))
;=> k
((compose inc (lambda (x) (* x 2))) 5)
;=> 11
((compose (lambda (x) (* x 2)) inc) 5)
;=> 12
((compose) 5)
;=> 5
((complement odd?) 2)
;=> true
((complement <) 1 2)
;=> false

;; Lists.
(list (second '(1 2 3)) (third '(1 2 3)) (second '(1)) (third '()) (second nil))
;=> (2 3 nil nil nil)
(list (nth-or-nil '(1 2) 1) (nth-or-nil '(1 2) 5))
;=> (2 nil)
(list (last '(1 2 3)) (last '()) (last nil))
;=> (3 nil nil)
(list (empty? '()) (empty? "") (empty? '(1)) (empty? nil) (empty? (dict)) (empty? "a"))
;=> (true true false true true false)
(list (take 2 '(1 2 3)) (take 5 '(1 2)) (take 0 '(1)) (take 2 '()))
;=> ((1 2) (1 2) () ())
(list (drop 1 '(1 2 3)) (drop 5 '(1 2)) (drop 0 '(1 2)) (drop 1 nil) (drop -1 '(1)))
;=> ((2 3) () (1 2) () (1))
(list (any? odd? '(2 3)) (any? odd? '(2 4)) (any? odd? '()))
;=> (true false false)
(list (every? odd? '(1 3)) (every? odd? '(1 2)) (every? odd? '()))
;=> (true false true)
(list (find odd? '(2 3 5)) (find odd? '(2)) (find odd? nil))
;=> (3 nil nil)
(list (count-if odd? '(1 2 3)) (count-if odd? '()))
;=> (2 0)
(list (remove odd? '(1 2 3)) (remove odd? '()))
;=> ((2) ())
(list (flatten '(1 (2 (3 (4))) 5)) (flatten '()) (flatten '(() (()))))
;=> ((1 2 3 4 5) () ())
(zip '(1 2) '(a b))
;=> ((1 a) (2 b))
(zip '(1 2 3) '(a b) '("x" "y"))
;=> ((1 a "x") (2 b "y"))
(list (member? 2 '(1 2)) (member? 5 '(1)) (member? '(1) '((1))) (member? 1 '()))
;=> (true false true false)
(list (distinct '(1 2 1 3 2)) (distinct '()) (distinct '("a" "a")))
;=> ((1 2 3) () ("a"))
(every? number? (range 100))
;=> true
(take 2 '(1 2 3) 4)
;!! take: expected 2 arguments, got 3

;; Dicts.
(get-in (dict "a" (dict "b" '((c 5)))) '("a" "b" "c"))
;=> 5
(get-in (dict "a" 1) '("x" "y"))
;=> nil
(get-in (dict "a" 1) '())
;=> {"a" 1}
(dict-merge (dict "a" 1 "b" 2) (dict "b" 3 "c" 4))
;=> {"a" 1 "b" 3 "c" 4}
(dict-merge (dict "a" 1))
;=> {"a" 1}
(dict-merge)
;=> {}

;; Prelude procedures are ordinary values: they can be passed, and shadowed locally.
(map inc '(1 2))
;=> (2 3)
(let ((inc dec)) (inc 5))
;=> 4
(inc 5)
;=> 6
