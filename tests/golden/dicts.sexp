;; Dicts: dict get get-field assoc keys values has-key?; dict literals.

(dict)
;=> {}
(dict :a 1 'b 2 "c" 3)
;=> {"a" 1 "b" 2 "c" 3}
(dict "a" 1 "a" 2)
;=> {"a" 2}
(dict "n" (list 1 2) "d" (dict "x" nil))
;=> {"n" (1 2) "d" {"x" nil}}
(dict 1 "one")
;=> {"1" "one"}
{"a" (+ 1 2) :b 'x}
;=> {"a" 3 "b" x}
{}
;=> {}
(dict :a)
;!! dict: expected key value pairs, got an odd number of arguments (1)
(dict (list 1) 2)
;!! dict keys must be strings, keywords or symbols, got (1)
{(list 1) 2}
;!! dict keys must be strings, keywords or symbols, got (1)

(define d (dict "a" 1 "b" (dict "c" 2)))
(get d "a")
;=> 1
(get d :a)
;=> 1
(get d 'a)
;=> 1
(get d "z")
;=> nil
(get d "z" 5)
;=> 5
(get (get d "b") "c")
;=> 2
(get '(10 20 30) 1)
;=> 20
(get '(10 20 30) -1)
;=> 30
(get '(10 20 30) 5 'default)
;=> default
(get nil "a")
;=> nil
(get nil "a" 3)
;=> 3
(get "str" 1)
;!! get: expected a dict or list, got "str" (string)
(get 5 "a")
;!! get: expected a dict or list, got 5 (integer)
(get d (list 1))
;!! dict keys must be strings, keywords or symbols, got (1)

;; get-field: dict keys, association lists, nil when missing.
(get-field d "a")
;=> 1
(get-field d 'a)
;=> 1
(get-field d :a)
;=> 1
(get-field d "missing")
;=> nil
(get-field '((a 1) ("b" 2)) "b")
;=> 2
(get-field '((a 1) ("b" 2)) 'a)
;=> 1
(get-field '((a 1)) "z")
;=> nil
(get-field (list) "k")
;=> nil
(get-field nil "x")
;=> nil
(get-field 5 "x")
;=> nil
(get-field "text" "x")
;=> nil

;; assoc returns a new dict; the old one is unchanged.
(assoc (dict "a" 1) :b 2)
;=> {"a" 1 "b" 2}
(define d2 (dict "a" 1))
(assoc d2 "a" 9)
;=> {"a" 9}
d2
;=> {"a" 1}
(assoc nil "a" 1)
;=> {"a" 1}
(assoc 5 "a" 1)
;!! assoc: expected a dict, got 5 (integer)
(assoc (dict) '(1) 1)
;!! dict keys must be strings, keywords or symbols

(keys (dict "a" 1 "b" 2))
;=> ("a" "b")
(keys (dict))
;=> ()
(values (dict "a" 1 "b" 2))
;=> (1 2)
(keys '(1))
;!! keys: expected a dict, got (1) (list)
(values nil)
;!! values: expected a dict, got nil (nil)

(has-key? (dict "a" 1) :a)
;=> true
(has-key? (dict "a" nil) "a")
;=> true
(has-key? (dict "a" 1) "b")
;=> false
(has-key? nil "b")
;!! has-key?: expected a dict, got nil (nil)

;; Insertion order is kept.
(keys (assoc (dict "z" 1 "a" 2) "m" 3))
;=> ("z" "a" "m")

;; Arity.
(get (dict))
;!! get: expected 2 to 3 arguments, got 1
(get-field (dict))
;!! get-field: expected 2 arguments, got 1
(assoc (dict) "a")
;!! assoc: expected 3 arguments, got 2
(keys)
;!! keys: expected 1 argument, got 0
(has-key? (dict))
;!! has-key?: expected 2 arguments, got 1
