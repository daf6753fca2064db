;; format: {} takes the next argument, {N} argument N; {{ and }} are braces; display forms.

(format "{} of {}" 1 2)
;=> "1 of 2"
(format "{0}{0}{1}" "a" "b")
;=> "aab"
(format "{1} before {0}" "a" "b")
;=> "b before a"
(format "no fields")
;=> "no fields"
(format "")
;=> ""
(format "{{}}")
;=> "{}"
(format "{{{}}}" 1)
;=> "{1}"
(format "{{literal}} {}" 'x)
;=> "{literal} x"

;; Display forms: strings raw, nil as nil, everything else as printed.
(format "{}|{}|{}|{}|{}" "s" nil '("x" nil) :k 'sym)
;=> "s|nil|(\"x\" nil)|:k|sym"
(format "{} {} {}" 1.5 true (dict "a" 1))
;=> "1.5 true {\"a\" 1}"
(format "{}" car)
;=> "#<procedure car>"
(format "{12}" 0 1 2 3 4 5 6 7 8 9 10 11 "twelve")
;=> "twelve"

;; Extra arguments are ignored; missing ones are errors.
(format "{}" 1 2)
;=> "1"
(format "{} {}" 1)
;!! format: field {} needs argument 2, but 1 given
(format "{3}" 1)
;!! format: field {3} needs argument 4, but 1 given
(format "{")
;!! format: unmatched '{' at offset 0 (write '{{' for a brace)
(format "a }")
;!! format: unmatched '}' at offset 2 (write '}}' for a brace)
(format "{x}" 1)
;!! format: unmatched '{'
(format "{:>5}" 1)
;!! format: unmatched '{'
(format 5)
;!! format: expected a string, got 5 (integer)
(format)
;!! format: expected at least 1 argument, got 0
