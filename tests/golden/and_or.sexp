;; and / or: short-circuit, return the deciding value.

(and)
;=> true
(or)
;=> false
(and 1 2 3)
;=> 3
(and 1 nil 2)
;=> nil
(and 1 false 2)
;=> false
(and 0 (error "not evaluated"))
;=> 0
(and "" 1)
;=> ""
(or nil 0 "x")
;=> "x"
(or nil false)
;=> false
(or false nil)
;=> nil
(or 5 (error "not evaluated"))
;=> 5
(or '() (dict) 'found)
;=> found
(and 'only)
;=> only
(or 'only)
;=> only

;; Evaluation order and short-circuit, observed through print.
(and (print "a") (print "b"))
;>> a
;=> nil
(or (progn (print "a") nil) (progn (print "b") 2) (print "c"))
;>> a
;>> b
;=> 2
(and (progn (print "a") 1) (progn (print "b") 2))
;>> a
;>> b
;=> 2
