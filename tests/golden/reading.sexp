;; Reading (SPEC §2.1): atoms, strings, comments, reader macros, and syntax errors with positions.

;; A program is any number of forms; its value is the last one.
1 2 3
;=> 3

;; Comments run from ; to the end of the line.
(+ 1 ; one
   2) ; two
;=> 3

;; Integers: any size, optional sign, leading zeros.
42
;=> 42
-7
;=> -7
+7
;=> 7
007
;=> 7
123456789012345678901234567890123456789
;=> 123456789012345678901234567890123456789
-98765432109876543210987654321
;=> -98765432109876543210987654321

;; Floats.
1.5
;=> 1.5
-2e3
;=> -2000.0
.5
;=> 0.5
1.
;=> 1.0
1e-3
;=> 0.001
-0.0
;=> -0.0

;; Strings and their escapes.
"plain"
;=> "plain"
"tab\there"
;=> "tab\there"
"line\nbreak"
;=> "line\nbreak"
"cr\rx"
;=> "cr\rx"
"quote\"inside"
;=> "quote\"inside"
"back\\slash"
;=> "back\\slash"
"\u00e9\u0041"
;=> "éA"
(string-length-of "\u0041")
;!! unbound symbol 'string-length-of'
(length "\u0041\n")
;=> 2
"multi
line"
;=> "multi\nline"
"unicode ☃ 😀"
;=> "unicode ☃ 😀"
""
;=> ""

;; Booleans and nil.
(list true false #t #f nil)
;=> (true false true false nil)

;; Symbols use letters, digits and - _ + * / < > = ! ? : . % & ^ ~ $
'(string=? system:run_script user:plan *loop-config* a.b %x &y ^z ~w $v a_b <=> +)
;=> (string=? system:run_script user:plan *loop-config* a.b %x &y ^z ~w $v a_b <=> +)
(symbol? 'system:run_script)
;=> true
(symbol? '+)
;=> true
(symbol? '-)
;=> true
(symbol? '...)
;=> true

;; Keywords are self-evaluating.
:name
;=> :name
(keyword? :name)
;=> true

;; Reader macros.
'x
;=> x
''x
;=> (quote x)
'`(a ,b ,@c)
;=> (quasiquote (a (unquote b) (unquote-splicing c)))

;; Lists: () is the empty list; a dict literal reads as a dict.
()
;=> ()
'(1 (2 (3)) ())
;=> (1 (2 (3)) ())
{"a" 1 "b" (list 2 3)}
;=> {"a" 1 "b" (2 3)}

;; Syntax errors name the place and what was expected.
(list 1
      2
;!! reading.sexp:106:1: error: unclosed '(' opened at 106:1; expected ')' before end of input

  (+ 1 2))
;!! reading.sexp:110:10: error: unexpected ')' with no matching opening bracket

"no end
;!! reading.sexp:113:1: error: unterminated string (no closing '"')

(list #x)
;!! unexpected character '#'

[1 2]
;!! unexpected character '['

{"a"}
;!! a dict literal needs an even number of forms

(list 1 'a ')
;!! expected an expression after the quote

(list (1 2}
;!! expected ')' to close '(' opened at

"\q"
;!! unknown escape '\q'
"\u12"
;!! unknown escape '\u'

;; A syntax error anywhere stops the whole program before anything runs.
(print "never printed")
(+ 1
;!! unclosed '('
