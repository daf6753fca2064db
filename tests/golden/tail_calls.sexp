;; Calls in tail position run in constant Python stack (the default recursion limit is 10,000).

(define (count-down n acc) (if (= n 0) acc (count-down (- n 1) (+ acc 1))))
(count-down 1000000 0)
;=> 1000000

;; Mutual tail recursion.
(define (my-even? n) (if (= n 0) true (my-odd? (- n 1))))
(define (my-odd? n) (if (= n 0) false (my-even? (- n 1))))
(my-even? 100001)
;=> false
(my-odd? 100001)
;=> true

;; Every tail position: cond, when, unless, and, or, let, let*, progn, begin, else branch.
(define (via-cond n) (cond ((= n 0) 'done) (else (via-cond (- n 1)))))
(via-cond 20000)
;=> done
(define (via-when n) (if (= n 0) 'done (when true (via-when (- n 1)))))
(via-when 20000)
;=> done
(define (via-unless n) (if (= n 0) 'done (unless false (via-unless (- n 1)))))
(via-unless 20000)
;=> done
(define (via-and n) (if (= n 0) 'done (and true (via-and (- n 1)))))
(via-and 20000)
;=> done
(define (via-or n) (if (= n 0) 'done (or false (via-or (- n 1)))))
(via-or 20000)
;=> done
(define (via-let n) (if (= n 0) 'done (let ((m (- n 1))) (via-let m))))
(via-let 20000)
;=> done
(define (via-let* n) (if (= n 0) 'done (let* ((m (- n 1)) (k m)) (via-let* k))))
(via-let* 20000)
;=> done
(define (via-progn n) (if (= n 0) 'done (progn 1 (via-progn (- n 1)))))
(via-progn 20000)
;=> done
(define (via-begin n) (if (= n 0) 'done (begin (via-begin (- n 1)))))
(via-begin 20000)
;=> done
(define (via-else n) (if (> n 0) (via-else (- n 1)) 'done))
(via-else 20000)
;=> done
(define (via-catch n) (if (= n 0) 'done (try (error "x") (catch e (via-catch (- n 1))))))
(via-catch 20000)
;=> done

;; Tail calls to closures with optional, rest and keyword parameters, and through apply.
(define (opt-loop n &optional (acc 0)) (if (= n 0) acc (opt-loop (- n 1) (+ acc 2))))
(opt-loop 20000)
;=> 40000
(define (rest-loop n &rest seen) (if (= n 0) seen (rest-loop (- n 1) n)))
(rest-loop 20000)
;=> (1)
(define (key-loop n &key (acc 0)) (if (= n 0) acc (key-loop (- n 1) :acc (+ acc 1))))
(key-loop 20000)
;=> 20000

;; A tail call through a procedure held in a variable.
(define (trampoline-a f n) (if (= n 0) 'done (f f (- n 1))))
(trampoline-a trampoline-a 20000)
;=> done

;; A tail-recursive loop building a list.
(define (build n acc) (if (= n 0) (length acc) (build (- n 1) (cons n acc))))
(build 11000 '())
;=> 11000
