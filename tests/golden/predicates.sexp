;; Type predicates and not.

(list (null? nil) (null? '()) (null? (list)) (null? 0) (null? "") (null? '(1)) (null? false))
;=> (true true true false false false false)
(list (nil? nil) (nil? '()) (nil? 0) (nil? (dict)))
;=> (true true false false)
(list (number? 1) (number? 1.5) (number? -0.0) (number? true) (number? "1") (number? nil))
;=> (true true true false false false)
(list (integer? 1) (integer? 1.0) (integer? true) (integer? 99999999999999999999))
;=> (true false false true)
(list (string? "a") (string? "") (string? 'a) (string? 1))
;=> (true true false false)
(list (symbol? 'a) (symbol? "a") (symbol? :a) (symbol? nil) (symbol? true))
;=> (true false false false false)
(list (keyword? :a) (keyword? 'a) (keyword? ":a"))
;=> (true false false)
(list (boolean? true) (boolean? false) (boolean? nil) (boolean? 0))
;=> (true true false false)
(list (list? '()) (list? nil) (list? '(1)) (list? "a") (list? (dict)))
;=> (true false true false false)
(list (dict? (dict)) (dict? '()) (dict? (json-parse "{}")) (dict? nil))
;=> (true false true false)
(list (procedure? car) (procedure? (lambda () 1)) (procedure? 'car) (procedure? inc) (procedure? "car"))
;=> (true true false true false)
(list (task-result? 1) (task-result? nil) (task-result? (dict "status" "COMPLETE")))
;=> (false false false)

;; not: true for every false value.
(list (not nil) (not false) (not 0) (not 0.0) (not '()) (not "") (not (dict)))
;=> (true true true true true true true)
(list (not 1) (not "a") (not true) (not '(nil)) (not 'sym))
;=> (false false false false false)

;; Arity.
(null?)
;!! null?: expected 1 argument, got 0
(number? 1 2)
;!! number?: expected 1 argument, got 2
(not)
;!! not: expected 1 argument, got 0
(string? 1 2)
;!! string?: expected 1 argument, got 2
