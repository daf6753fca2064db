;; Strings.

(str "a" 1 nil '("x") :k 'sym 1.5 true)
;=> "a1nil(\"x\"):ksym1.5true"
(str)
;=> ""
(str "only")
;=> "only"
(str (dict "a" "b"))
;=> "{\"a\" \"b\"}"

(string-append "Value: " 123 " units" 4.5)
;=> "Value: 123 units4.5"
(string-append)
;=> ""
(string-append "a" nil 'sym :kw 1 '(1 "x"))
;=> "asym:kw1(1 \"x\")"

(string=? "a" "a")
;=> true
(string=? "a" "a" "a")
;=> true
(string=? "a" "b")
;=> false
(string=? "a")
;=> true
(string=? "a" 1)
;!! string=?: expected a string, got 1 (integer)
(string=? 'a "a")
;!! string=?: expected a string, got a (symbol)

(string-contains? "hello" "ell")
;=> true
(string-contains? "hello" "xyz")
;=> false
(string-contains? "hello" "")
;=> true
(string-contains? "hello" 1)
;!! string-contains?: expected a string, got 1 (integer)
(string-contains? nil "a")
;!! string-contains?: expected a string, got nil (nil)

(string-starts-with? "hello" "he")
;=> true
(string-starts-with? "hello" "lo")
;=> false
(string-ends-with? "hello" "lo")
;=> true
(string-ends-with? "hello" "he")
;=> false
(string-starts-with? 1 "a")
;!! string-starts-with?: expected a string, got 1 (integer)
(string-ends-with? "a" 'b)
;!! string-ends-with?: expected a string, got b (symbol)

(string-split "  a b\tc\n ")
;=> ("a" "b" "c")
(string-split "a,b,,c" ",")
;=> ("a" "b" "" "c")
(string-split "a--b" "--")
;=> ("a" "b")
(string-split "")
;=> ()
(string-split "abc" ",")
;=> ("abc")
(string-split "a" "")
;!! string-split: separator must not be empty
(string-split 5)
;!! string-split: expected a string, got 5 (integer)

(string-join '("a" "b" "c") ", ")
;=> "a, b, c"
(string-join '("a" "b"))
;=> "ab"
(string-join '("a" 1 nil "b") "-")
;=> "a-1-nil-b"
(string-join '())
;=> ""
(string-join '("x" ("y")) " ")
;=> "x (\"y\")"
(string-join "ab")
;!! string-join: expected a list, got "ab" (string)
(string-join '("a") 1)
;!! string-join: expected a string, got 1 (integer)

(string-trim "  x y \n\t")
;=> "x y"
(string-trim "")
;=> ""
(string-trim 1)
;!! string-trim: expected a string, got 1 (integer)
(string-upcase "abc Déf")
;=> "ABC DÉF"
(string-downcase "ABC Déf")
;=> "abc déf"
(string-upcase 'a)
;!! string-upcase: expected a string, got a (symbol)
(string-downcase nil)
;!! string-downcase: expected a string, got nil (nil)

(string-replace "aXbXc" "X" "-")
;=> "a-b-c"
(string-replace "aaa" "a" "")
;=> ""
(string-replace "abc" "z" "y")
;=> "abc"
(string-replace "abc" "a" 1)
;!! string-replace: expected a string, got 1 (integer)

(substring "hello" 1 3)
;=> "el"
(substring "hello" 2)
;=> "llo"
(substring "hello" -3)
;=> "llo"
(substring "hello" 0 100)
;=> "hello"
(substring "hello" 1.0)
;!! substring: expected integer bounds, got 1.0
(substring 5 1)
;!! substring: expected a string, got 5 (integer)

(string->number "42")
;=> 42
(string->number " -1.5e2 ")
;=> -150.0
(string->number "+7")
;=> 7
(string->number "123456789012345678901234567890")
;=> 123456789012345678901234567890
(string->number "abc")
;=> nil
(string->number "")
;=> nil
(string->number "1_000")
;=> nil
(string->number "nan")
;=> nil
(string->number "inf")
;=> nil
(string->number 5)
;!! string->number: expected a string, got 5 (integer)
(number->string 42)
;=> "42"
(number->string 1.5)
;=> "1.5"
(number->string -3)
;=> "-3"
(number->string "1")
;!! number->string: expected a number, got "1" (string)
(number->string true)
;!! number->string: expected a number, got true (boolean)

;; Arity.
(string-trim)
;!! string-trim: expected 1 argument, got 0
(string-replace "a" "b")
;!! string-replace: expected 3 arguments, got 2
(substring "a")
;!! substring: expected 2 to 3 arguments, got 1
(string-split "a" "b" "c")
;!! string-split: expected 1 to 2 arguments, got 3
