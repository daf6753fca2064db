;; Errors a program can make, and what they say.

;; Unbound symbols, with close names suggested.
undefined-thing
;!! errors.sexp:4:1: error: unbound symbol 'undefined-thing'
(lenght '(1 2))
;!! unbound symbol 'lenght'; did you mean 'length'
(string-uppercase "a")
;!! did you mean 'string-upcase'
(defin x 1)
;!! did you mean 'define'
(let ((counter 1)) (+ countr 1))
;!! unbound symbol 'countr'; did you mean 'counter'
(qqqqqqq)
;!! unbound symbol 'qqqqqqq'
(try (qqqqqqq) (catch e (get e "message")))
;=> "unbound symbol 'qqqqqqq'"

;; Calling something that is not a procedure.
(1 2)
;!! 1 is not a procedure
("str" 1)
;!! "str" is not a procedure
(:a 1)
;!! :a is not a procedure
(nil)
;!! nil is not a procedure
((list 1 2))
;!! (1 2) is not a procedure
(define not-a-fn 5)
(not-a-fn 1)
;!! 5 is not a procedure
(try (5) (catch e (get e "type")))
;=> "TYPE_ERROR"

;; The error points at the form being evaluated, inside the procedure that failed.
(define (adds-text x)
  (+ x "a"))
(adds-text 1)
;!! errors.sexp:38:3: error: +: expected numbers, got "a" (string)
(list 1
      (nth '() 0))
;!! errors.sexp:42:7: error: nth: index 0 out of range

;; Arity errors for primitives, prelude procedures and user procedures.
(length)
;!! length: expected 1 argument, got 0
(length '(1) '(2))
;!! length: expected 1 argument, got 2
(inc)
;!! inc: expected 1 argument, got 0
(define (f a b) a)
(f 1)
;!! f: expected 2 arguments, got 1

;; Type errors of each primitive family.
(+ 1 'a)
;!! +: expected numbers, got a (symbol)
(< 1 'a)
;!! <: expected numbers or strings, got a (symbol)
(car "abc")
;!! expected a list, got "abc" (string)
(length 1.5)
;!! length: expected a string, list or dict, got 1.5 (float)
(string-upcase 1)
;!! string-upcase: expected a string, got 1 (integer)
(keys 1)
;!! keys: expected a dict, got 1 (integer)
(json-parse 1)
;!! json-parse: expected a string, got 1 (integer)
(regex-match 1 "a")
;!! regex-match: expected a string, got 1 (integer)
(read-file 1)
;!! read-file: expected a string, got 1 (integer)
(map 1 '(1))
;!! 1 is not a procedure
(number->string 'a)
;!! number->string: expected a number, got a (symbol)

;; Values out of range.
(/ 5 0)
;!! /: division by zero
(nth '(1) 9)
;!! nth: index 9 out of range
(range 1 2 0)
;!! range: step must not be zero

;; A primitive's own failures are reported in the language's words.
(round 1.5 2.5)
;!! round: cannot be applied to (float, float)
(define big (reduce * 1 (map (lambda (i) 10) (range 400))))
(/ big 3)
;!! /: integer division result too large for a float
(+ 1.5 big)
;!! +: int too large to convert to float
(< 1.5 big)
;=> true
(define (nest n acc) (if (= n 0) acc (nest (- n 1) (list acc))))
(define deep-a (nest 150000 '()))
(define deep-b (nest 150000 '()))
(try (equal? deep-a deep-b) (catch e (list (get e "type") (get e "message"))))
;=> ("RECURSION_ERROR" "equal?: data nested too deeply")

;; error raises a user error that carries its message and details.
(error "custom")
;!! error: custom
(try (error "with" (list 1 2)) (catch e (list (get e "type") (get e "message") (get e "details"))))
;=> ("USER_ERROR" "with" (1 2))

;; After an error the session goes on.
(+ 1 1)
;=> 2

;; Malformed special forms are found before anything in the program runs.
(print "not printed")
(let ((x)) x)
;!! let: each binding must be (name expr)

;; A special form is not a value.
if
;!! errors.sexp:120:1: error: 'if' is a special form, not a value
(map cond (list 1))
;!! errors.sexp:122:1: error: 'cond' is a special form, not a value
(try (list lambda) (catch e (list (get e "type") (get e "message"))))
;=> ("FORM_ERROR" "'lambda' is a special form, not a value; it can only begin a form, as in (lambda ...)")

;; Suggestions never offer the name that failed, and names from other languages point at ours.
(let* ((f (lambda () x)) (x 3)) (f))
;!! unbound symbol 'x'
(json-stringify (list 1))
;!! unbound symbol 'json-stringify'; did you mean 'json-dump'
(strcat "a" "b")
;!! did you mean 'string-append'
(len "abc")
;!! did you mean 'length'

;; An error raised inside a library procedure points at the program's call of it.
(task-json "not json")
;!! errors.sexp:138:1: error: json-parse: invalid JSON
(define (parse-answer r) (task-json r))
(parse-answer "still not json")
;!! errors.sexp:141:1: error: json-parse: invalid JSON
(sum (list 1 "a"))
;!! errors.sexp:143:1: error: +: expected numbers
(try (task-json "x") (catch e (list (get e "line") (get e "column"))))
;=> (145 6)
(any? (lambda (x) (car x)) (list 5))
;!! errors.sexp:147:19: error: car: expected a list
