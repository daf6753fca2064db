;; eq? and equal?: structural; symbols compare by name; (eq? 1 1.0) is true.

(eq? 1 1.0)
;=> true
(equal? 1 1.0)
;=> true
(eq? 'a 'a)
;=> true
(equal? 'a 'b)
;=> false
(equal? 'a "a")
;=> false
(equal? :a 'a)
;=> false
(equal? :a :a)
;=> true
(equal? "abc" "abc")
;=> true
(equal? "abc" "abd")
;=> false
(equal? '(1 (2 "x") nil) (list 1 (list 2 "x") nil))
;=> true
(eq? '(1 2) '(1 2))
;=> true
(equal? '(1 2) '(2 1))
;=> false
(equal? (dict "a" 1 "b" 2) (dict "b" 2 "a" 1))
;=> true
(equal? (dict "a" 1) (dict "a" 2))
;=> false
(equal? nil nil)
;=> true
(equal? nil '())
;=> false
(equal? nil false)
;=> false
(equal? '() (list))
;=> true
(equal? true true)
;=> true
(equal? 1 true)
;=> true
(equal? car car)
;=> true
(equal? car cdr)
;=> false
(let ((f (lambda (x) x))) (equal? f f))
;=> true
(equal? (lambda (x) x) (lambda (x) x))
;=> false
(equal? (json-parse "[1, {\"a\": null}]") (list 1 (dict "a" nil)))
;=> true
(eq? 1)
;!! eq?: expected 2 arguments, got 1
(equal? 1 2 3)
;!! equal?: expected 2 arguments, got 3
