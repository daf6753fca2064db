;; pmap: map on worker threads; input order kept, failures in their place (SPEC §3.6).

(pmap (lambda (x) (* x x)) '(1 2 3 4 5))
;=> (1 4 9 16 25)
(pmap (lambda (x) (* x x)) (range 20) :concurrency 3)
;=> (0 1 4 9 16 25 36 49 64 81 100 121 144 169 196 225 256 289 324 361)
(pmap abs '(-1 2 -3) :concurrency 1)
;=> (1 2 3)
(pmap abs '(-7))
;=> (7)
(list (pmap abs '()) (pmap abs nil))
;=> (() ())
(pmap (lambda (x) (pmap (lambda (y) (list x y)) '(a b))) '(1 2))
;=> (((1 a) (1 b)) ((2 a) (2 b)))

;; Closures see their environment; the results equal map's.
(define scale 10)
(equal? (pmap (lambda (x) (* scale x)) (range 30)) (map (lambda (x) (* scale x)) (range 30)))
;=> true

;; An element that raises is a FAILED TaskResult in its place; the others complete.
(define rs (pmap (lambda (x) (/ 12 x)) '(1 0 3)))
rs
;=> (12.0 #<TaskResult FAILED ""> 4.0)
(get-field (nth rs 1) "error")
;=> {"type" "TASK_FAILURE" "reason" "element_failure" "message" "pmap: element 1 failed: VALUE_ERROR: /: division by zero (line 22, column 30)" "details" {"index" 1 "error" {"type" "VALUE_ERROR" "message" "/: division by zero" "line" 22 "column" 30}}}
(map task-result? rs)
;=> (false true false)
(get-field (car (pmap (lambda (x) (error "no" x)) '(1))) "status")
;=> "FAILED"

;; Printing from elements works; lines come in whatever order the elements finish.
(length (pmap (lambda (x) (print "hi") x) '(1 1)))
;>> hi
;>> hi
;=> 2

;; Bad arguments are errors at the call.
(pmap 5 '(1))
;!! pmap: expected a procedure or task, got 5 (integer)
(pmap abs 5)
;!! pmap: expected a list as second argument, got 5 (integer)
(pmap abs '(1) :concurrency 0)
;!! pmap: :concurrency must be a positive integer, got 0
(pmap abs '(1) :concurrency -2)
;!! pmap: :concurrency must be a positive integer, got -2
(pmap abs '(1) :concurrency 2.5)
;!! pmap: :concurrency must be a positive integer, got 2.5
(pmap abs '(1) :concurrency)
;!! pmap: :concurrency needs a value
(pmap abs '(1) :width 2)
;!! pmap: unexpected argument :width; the only option is :concurrency n
(pmap abs)
;!! pmap: expected 2 to 4 arguments, got 1
