;;; The prelude: library procedures written in the language itself, loaded at start-up.

;; Numbers
(define (inc n) (+ n 1))
(define (dec n) (- n 1))
(define (zero? n) (= n 0))
(define (positive? n) (> n 0))
(define (negative? n) (< n 0))
(define (even? n) (= (mod n 2) 0))
(define (odd? n) (= (mod n 2) 1))
(define (sum xs) (reduce + 0 xs))
(define (product xs) (reduce * 1 xs))

;; Procedures
(define (identity x) x)
(define (constantly x) (lambda (&rest _) x))
(define (compose &rest fs)
  (lambda (x) (reduce (lambda (acc f) (f acc)) x (reverse fs))))
(define (complement pred) (lambda (&rest args) (not (apply pred args))))

;; Lists
(define (second xs) (nth-or-nil xs 1))
(define (third xs) (nth-or-nil xs 2))
(define (nth-or-nil xs i) (if (< i (length xs)) (nth xs i) nil))
(define (last xs) (if (null? xs) nil (nth xs (- (length xs) 1))))
(define (empty? x) (= (length x) 0))

(define (take n xs)
  (define (go i acc)
    (if (or (>= i n) (>= i (length xs))) (reverse acc) (go (+ i 1) (cons (nth xs i) acc))))
  (go 0 '()))

(define (drop n xs)
  (if (or (<= n 0) (null? xs)) (if (null? xs) '() xs) (drop (- n 1) (rest xs))))

(define (any? pred xs)
  (cond ((null? xs) false)
        ((pred (first xs)) true)
        (else (any? pred (rest xs)))))

(define (every? pred xs)
  (cond ((null? xs) true)
        ((pred (first xs)) (every? pred (rest xs)))
        (else false)))

(define (find pred xs)
  (cond ((null? xs) nil)
        ((pred (first xs)) (first xs))
        (else (find pred (rest xs)))))

(define (count-if pred xs) (length (filter pred xs)))

(define (remove pred xs) (filter (complement pred) xs))

(define (flatten xs)
  (reduce (lambda (acc x) (if (list? x) (append acc (flatten x)) (append acc (list x)))) '() xs))

(define (zip &rest lists) (if (null? lists) '() (apply map list lists)))

(define (member? x xs) (any? (lambda (y) (equal? x y)) xs))

(define (distinct xs)
  (reverse (reduce (lambda (acc x) (if (member? x acc) acc (cons x acc))) '() xs)))

;; Dicts
(define (get-in d path)
  (reduce (lambda (acc k) (if (null? acc) nil (get-field acc k))) d path))

(define (dict-merge &rest ds)
  (reduce (lambda (acc d) (reduce (lambda (a k) (assoc a k (get d k))) acc (keys d))) (dict) ds))
