;; Non-tail recursion: fine up to the limit (10,000 nested calls), then a clear error naming the procedure.

(define (fact n) (if (<= n 1) 1 (* n (fact (- n 1)))))
(fact 20)
;=> 2432902008176640000
(fact 30)
;=> 265252859812191058636308480000000
(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(fib 20)
;=> 6765

(define (depth n) (if (= n 0) 0 (+ 1 (depth (- n 1)))))
(depth 9000)
;=> 9000
(depth 9999)
;=> 9999
(depth 10000)
;!! recursion too deep in 'depth': more than 10000 nested calls
(depth 30000)
;!! recursion too deep in 'depth'

;; The error is a language error: try catches it, and the session goes on.
(try (depth 20000) (catch e (get e "type")))
;=> "RECURSION_ERROR"
(depth 10)
;=> 10

;; Through higher-order primitives, the procedure is still named.
(define (via-map n) (if (= n 0) 0 (+ 1 (car (map via-map (list (- n 1)))))))
(via-map 20000)
;!! recursion too deep in 'via-map'
(define (via-apply n) (if (= n 0) 0 (+ 1 (apply via-apply (list (- n 1))))))
(via-apply 20000)
;!! recursion too deep in 'via-apply'
(define (via-let n) (if (= n 0) 0 (let ((r (via-let (- n 1)))) (+ r 1))))
(via-let 20000)
;!! recursion too deep in 'via-let'

;; Mutual non-tail recursion names the procedure that went over.
(define (ping n) (if (= n 0) 0 (+ 1 (pong (- n 1)))))
(define (pong n) (if (= n 0) 0 (+ 1 (ping (- n 1)))))
(ping 1000)
;=> 1000
(ping 20001)
;!! recursion too deep in 'p

;; Recursion over a deep data structure.
(define (nest n) (if (= n 0) '() (list (nest (- n 1)))))
(define (measure xs) (if (null? xs) 0 (+ 1 (measure (car xs)))))
(measure (nest 5000))
;=> 5000
