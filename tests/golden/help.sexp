;; help prints a name's documentation (what `sexp doc NAME` prints) and gives nil; the name is
;; not evaluated, so a bare name, a string and a quoted symbol are the same.

(help first)
;>> first (primitive)
;>>   (first xs)
;>>
;>> The first element; nil for nil or ().
;>>
;>> Example:
;>>   (first (list "a" "b"))
;>>   ;; => "a"
;>>   (first '())
;>>   ;; => nil
;=> nil
(help "dec")
;>> dec (procedure)
;>>   (dec n)
;>>
;>> n minus one.
;>>
;>> Example:
;>>   (dec 1)
;>>   ;; => 0
;; A procedure the program defined: its lambda list.
(define (scale x &optional (by 2)) (* x by))
(help 'scale)
;>> scale (procedure)
;>>   (scale x &optional (by 2))
;>>
;>> A procedure defined at help.sexp:26:1, without documentation.

(help mpa)
;!! help: no documentation for 'mpa'; did you mean
(help 42)
;!! help: expected (help name)
