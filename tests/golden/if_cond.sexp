;; if, cond, when, unless.

(if (< 1 2) "yes" "no")
;=> "yes"
(if (> 1 2) "yes" "no")
;=> "no"
(if false 2)
;=> nil
(if true 2)
;=> 2

;; Truthiness is Python's: false, nil, 0, 0.0, "", () and {} are false.
(list (if false 1 2) (if nil 1 2) (if 0 1 2) (if 0.0 1 2) (if "" 1 2) (if '() 1 2) (if (dict) 1 2))
;=> (2 2 2 2 2 2 2)
(list (if true 1 2) (if 1 1 2) (if -1 1 2) (if "a" 1 2) (if '(0) 1 2) (if (dict "a" 1) 1 2) (if 'sym 1 2))
;=> (1 1 1 1 1 1 1)
(list (if :k 1 2) (if car 1 2) (if " " 1 2))
;=> (1 1 1)

;; Only the chosen branch is evaluated.
(if true (print "then") (print "else"))
;>> then
;=> nil
(if false (error "never") 'ok)
;=> ok

(if)
;!! if: expected (if test then [else])
(if 1)
;!! if: expected (if test then [else])
(if 1 2 3 4)
;!! if: expected (if test then [else])

;; cond: the first true clause; else last; no true clause gives nil.
(cond ((= 1 2) 'a) ((= 1 1) 'b) (else 'c))
;=> b
(cond ((= 1 2) 'a) (else 'c))
;=> c
(cond (false 1))
;=> nil
(cond)
;=> nil
(cond ((+ 1 1)))
;=> 2
(cond (false 1) (nil 2) (0 3))
;=> nil
(cond (true 1 2 3))
;=> 3
(cond (else))
;=> nil
(cond ((print "test 1") 'no) ((print "test 2") 'no) (else (print "else") 'yes))
;>> test 1
;>> test 2
;>> else
;=> yes
(cond ((= 1 1) 'first) ((error "not evaluated") 'second))
;=> first

(cond 5)
;!! cond: each clause must be (test expr...) or (else expr...)
(cond ())
;!! cond: each clause must be (test expr...) or (else expr...)
(cond (else 1) (true 2))
;!! cond: else must be the last clause

;; when / unless.
(when true 1 2 3)
;=> 3
(when false 1)
;=> nil
(when (print "tested") (print "never"))
;>> tested
;=> nil
(unless false 1 2)
;=> 2
(unless true 1)
;=> nil
(unless nil 'ran)
;=> ran
(when true)
;=> nil
(when)
;!! when: expected (when test body...)
(unless)
;!! unless: expected (unless test body...)
