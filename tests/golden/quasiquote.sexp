;; quasiquote, unquote and unquote-splicing.

`x
;=> x
`(1 2 3)
;=> (1 2 3)
`(1 ,(+ 1 1) ,@(list 3 4) 5)
;=> (1 2 3 4 5)
(quasiquote (1 (unquote (+ 1 1))))
;=> (1 2)
(quasiquote (1 (unquote-splicing (list 2 3))))
;=> (1 2 3)
(define xs '(a b))
`(start ,@xs end)
;=> (start a b end)
`(start ,xs end)
;=> (start (a b) end)
`(a b ,@nil c)
;=> (a b c)
`(a b ,@'() c)
;=> (a b c)
`(,@xs)
;=> (a b)
`((nested ,(car xs)) (deeper (,@xs)))
;=> ((nested a) (deeper (a b)))
`,(+ 1 2)
;=> 3
(define n 5)
`(n is ,n and ,(* n 2))
;=> (n is 5 and 10)

;; Dicts inside a template.
`{"a" ,(+ 1 2) :b 2}
;=> {"a" 3 "b" 2}

;; Nested quasiquote keeps inner unquotes at their level.
`(1 `(2 ,(3 ,(+ 1 2))))
;=> (1 (quasiquote (2 (unquote (3 3)))))
`(1 `(2 ,@(3 ,@(list 4 5))))
;=> (1 (quasiquote (2 (unquote-splicing (3 4 5)))))

;; Building code.
(define (make-adder-code k) `(lambda (x) (+ x ,k)))
(make-adder-code 3)
;=> (lambda (x) (+ x 3))

;; Errors.
`(a ,@5)
;!! unquote-splicing: expected a list, got 5
,x
;!! unquote: only allowed inside a quasiquote (`)
,@x
;!! unquote-splicing: only allowed inside a quasiquote (`)
(unquote x)
;!! unquote: only allowed inside a quasiquote (`)
(unquote-splicing x)
;!! unquote-splicing: only allowed inside a quasiquote (`)
(quasiquote)
;!! quasiquote: expected (quasiquote x)
(quasiquote 1 2)
;!! quasiquote: expected (quasiquote x)
