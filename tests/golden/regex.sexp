;; Regular expressions (Python re syntax, pattern first).

(regex-match "(\\d+)-(\\d+)" "ab 12-34 cd")
;=> ("12-34" "12" "34")
(regex-match "b+" "abbbc")
;=> ("bbb")
(regex-match "x" "abc")
;=> nil
(regex-match "a(x)?" "a")
;=> ("a" nil)
(regex-match "^$" "")
;=> ("")
(regex-match "(?i)HELLO" "say hello")
;=> ("hello")

(regex-find-all "\\d+" "1 22 333")
;=> ("1" "22" "333")
(regex-find-all "\\d+" "none")
;=> ()
(regex-find-all "(\\w)=(\\d)" "a=1 b=2")
;=> (("a" "1") ("b" "2"))
(regex-find-all "(\\w)=\\d" "a=1 b=2")
;=> ("a" "b")

(regex-replace "(\\w+)@(\\w+)" "me@host" "\\2 at \\1")
;=> "host at me"
(regex-replace "\\s+" "a  b   c" " ")
;=> "a b c"
(regex-replace "z" "abc" "y")
;=> "abc"

;; Errors.
(regex-match "(" "abc")
;!! regex-match: invalid pattern "(": missing ), unterminated subpattern at position 0
(regex-find-all "[" "abc")
;!! regex-find-all: invalid pattern "["
(regex-replace "a" "aaa" "\\9")
;!! regex-replace: invalid replacement: invalid group reference 9
(regex-replace 1 "a" "b")
;!! regex-replace: expected a string, got 1 (integer)
(regex-match "a" nil)
;!! regex-match: expected a string, got nil (nil)
(regex-find-all "a" 'abc)
;!! regex-find-all: expected a string, got abc (symbol)
(regex-match "a")
;!! regex-match: expected 2 arguments, got 1
