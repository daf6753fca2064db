;; quote: data unevaluated; symbols stay symbols, lists stay lists.

(quote x)
;=> x
'x
;=> x
(symbol? 'x)
;=> true
'(+ 1 2)
;=> (+ 1 2)
(car '(+ 1 2))
;=> +
(symbol? (car '(+ 1 2)))
;=> true
'(a "b" 1.5 :k nil true (c))
;=> (a "b" 1.5 :k nil true (c))
'()
;=> ()
'nil
;=> nil
'"s"
;=> "s"
'42
;=> 42
':kw
;=> :kw
'(quote x)
;=> (quote x)
''x
;=> (quote x)
(car ''x)
;=> quote
(length ''x)
;=> 2

;; Quoted dicts: keyword and symbol keys become their names.
'{"a" 1 b 2 :c 3}
;=> {"a" 1 "b" 2 "c" 3}
'{"a" (+ 1 2)}
;=> {"a" (+ 1 2)}

;; A quoted list is a value like any other.
(length '(1 2 3))
;=> 3
(equal? '(1 (2)) (list 1 (list 2)))
;=> true

;; Malformed quote.
(quote)
;!! quote: expected (quote x)
(quote 1 2)
;!! quote: expected (quote x)
