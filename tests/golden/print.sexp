;; print writes display forms separated by spaces and a newline, and returns nil.

(print "hello")
;>> hello
;=> nil
(print)
;>>
;=> nil
(print "a" 1 'b :c nil true 1.5)
;>> a 1 b :c nil true 1.5
;=> nil
(print "strings inside lists are quoted:" '("x" nil) (dict "k" "v"))
;>> strings inside lists are quoted: ("x" nil) {"k" "v"}
(print "two\nlines")
;>> two
;>> lines
(print car (lambda (x) x))
;>> #<procedure car> #<procedure lambda>
(define (named) 1)
(print named)
;>> #<procedure named>
(print "")
;>>
(print "tab\there" "quote\"")
;>> tab	here quote"

;; print evaluates its arguments first, in order.
(print (progn (print "inner") 1) 2)
;>> inner
;>> 1 2

;; log-message writes to the log (stderr) and returns the joined string.
(log-message "hi" 1 '("x"))
;2> log: hi 1 ("x")
;=> "hi 1 (\"x\")"
(log-message "x" nil :k)
;2> log: x nil :k
;=> "x nil :k"

;; The printer's forms for every kind of value.
(list 1 -2 1.5 "s" true false nil 'sym :kw '() (dict "a" (list 1)))
;=> (1 -2 1.5 "s" true false nil sym :kw () {"a" (1)})
"escapes: \" \\ \n \t \r \u0001"
;=> "escapes: \" \\ \n \t \r \u0001"
(list car named (lambda () 1))
;=> (#<procedure car> #<procedure named> #<procedure lambda>)
(dict)
;=> {}
(list (list) (list (list)))
;=> (() (()))
