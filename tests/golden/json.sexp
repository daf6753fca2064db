;; JSON: json-parse and json-dump; null is nil, [] the empty list, and values round-trip.

(json-parse "{\"a\": [1, 2.5, null, true, \"x\"], \"b\": {}}")
;=> {"a" (1 2.5 nil true "x") "b" {}}
(json-parse "[]")
;=> ()
(json-parse "null")
;=> nil
(json-parse "\"s\"")
;=> "s"
(json-parse "  42 ")
;=> 42
(json-parse "[false, -1e3]")
;=> (false -1000.0)
(json-parse "\"\\u00e9\"")
;=> "é"
(null? (json-parse "null"))
;=> true
(list? (json-parse "[]"))
;=> true

(json-dump (list 1 nil '() 'sym :kw "s" 1.5 true (dict "a" '(1))))
;=> "[1, null, [], \"sym\", \":kw\", \"s\", 1.5, true, {\"a\": [1]}]"
(json-dump nil)
;=> "null"
(json-dump '())
;=> "[]"
(json-dump (dict))
;=> "{}"
(json-dump "é☃")
;=> "\"é☃\""
(json-dump (dict "a" 1) 2)
;=> "{\n  \"a\": 1\n}"
(json-dump (lambda (x) x))
;=> "\"#<procedure lambda>\""

;; Round trips.
(define data (dict "a" (list nil '() 1.5 "x" (dict "b" false))))
(equal? (json-parse (json-dump data)) data)
;=> true
(json-parse (json-dump data))
;=> {"a" (nil () 1.5 "x" {"b" false})}
(json-dump (json-parse "{\"k\": [null, [], {}]}"))
;=> "{\"k\": [null, [], {}]}"

;; Errors.
(json-parse "{bad")
;!! json-parse: invalid JSON at line 1 column 2
(json-parse "[1,\n 2,]")
;!! json-parse: invalid JSON at line 2
(json-parse "")
;!! json-parse: invalid JSON
(json-parse 5)
;!! json-parse: expected a string, got 5 (integer)
(json-parse nil)
;!! json-parse: expected a string, got nil (nil)
(json-dump 1 "x")
;!! json-dump: indent must be an integer, got "x"
(json-dump)
;!! json-dump: expected 1 to 2 arguments, got 0
