;; Programs in the original dialect (SPEC §2.9) that call no model run unchanged.

(let ((adder (lambda (n) (lambda (x) (+ n x)))))
  ((adder 10) 5))
;=> 15

(let ((x 0)) (loop 3 (bind x (+ x 1))))
;=> 3

(string-append "Value: " 123 " units" 4.5)
;=> "Value: 123 units4.5"

(eq? 1 1.0)
;=> true

(+ true 1)
;=> 2

(null? (get-field (list) "k"))
;=> true

;; Other habits of the original programs.
(progn
  (bind total 0)
  (loop 4 (bind total (+ total 2)))
  total)
;=> 8
(let ((config (list (list "max-iterations" 3) (list "initial-input" "x"))))
  (list (get-field config "max-iterations") (get-field config "initial-input") (get-field config "missing")))
;=> (3 "x" nil)
(let ((result (dict "status" "COMPLETE" "content" "ok")))
  (if (string=? (get-field result "status") "COMPLETE") (get-field result "content") "failed"))
;=> "ok"
(begin (define (square x) (* x x)) (map square (list 1 2 3)))
;=> (1 4 9)
(let ((items (list)))
  (list (null? items) (nil? items) (length items) (if items 'non-empty 'empty)))
;=> (true true 0 empty)
