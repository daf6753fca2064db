;;; The prelude: library procedures written in the language itself, loaded at start-up.
;;; Each one's documentation is the `;;` lines right after its `(define (name ...)` line: a
;;; summary, a paragraph, and an example whose results (`;; => value`) the test suite checks.

;; Numbers
(define (inc n)
  ;; n plus one.
  ;;
  ;; (inc 41)
  ;; => 42
  (+ n 1))

(define (dec n)
  ;; n minus one.
  ;;
  ;; (dec 1)
  ;; => 0
  (- n 1))

(define (zero? n)
  ;; Whether n is 0 (or 0.0).
  ;;
  ;; (zero? (- 3 3))
  ;; => true
  (= n 0))

(define (positive? n)
  ;; Whether n is greater than 0.
  ;;
  ;; (positive? -2)
  ;; => false
  (> n 0))

(define (negative? n)
  ;; Whether n is less than 0.
  ;;
  ;; (negative? -2)
  ;; => true
  (< n 0))

(define (even? n)
  ;; Whether the integer n is divisible by 2.
  ;;
  ;; (even? 10)
  ;; => true
  (= (mod n 2) 0))

(define (odd? n)
  ;; Whether the integer n is not divisible by 2.
  ;;
  ;; (odd? 7)
  ;; => true
  (= (mod n 2) 1))

(define (sum xs)
  ;; The sum of a list of numbers; 0 for an empty list.
  ;;
  ;; (sum (list 1 2 3.5))
  ;; => 6.5
  (reduce + 0 xs))

(define (product xs)
  ;; The product of a list of numbers; 1 for an empty list.
  ;;
  ;; (product (range 1 6))
  ;; => 120
  (reduce * 1 xs))

;; Procedures
(define (identity x)
  ;; x itself: a procedure that changes nothing, for where one is expected.
  ;;
  ;; (filter identity (list 1 nil 2 false))
  ;; => (1 2)
  x)

(define (constantly x)
  ;; A procedure that takes any arguments and always gives x.
  ;;
  ;; (map (constantly 0) (list "a" "b"))
  ;; => (0 0)
  (lambda (&rest _) x))

(define (compose &rest fs)
  ;; (compose f g ...) is the procedure (lambda (x) (f (g ... x))): the last applied first.
  ;;
  ;; ((compose string-upcase string-trim) "  hi ")
  ;; => "HI"
  (lambda (x) (reduce (lambda (acc f) (f acc)) x (reverse fs))))

(define (complement pred)
  ;; A predicate true where pred is false and false where it is true.
  ;;
  ;; (filter (complement even?) (range 5))
  ;; => (1 3)
  (lambda (&rest args) (not (apply pred args))))

;; Lists
(define (second xs)
  ;; The second element of xs; nil when it is shorter.
  ;;
  ;; (second (list "a" "b" "c"))
  ;; => "b"
  (nth-or-nil xs 1))

(define (third xs)
  ;; The third element of xs; nil when it is shorter.
  ;;
  ;; (third (list 1 2))
  ;; => nil
  (nth-or-nil xs 2))

(define (nth-or-nil xs i)
  ;; Element i of xs (from 0), or nil when xs is too short (where `nth` is an error).
  ;;
  ;; (nth-or-nil (list 1 2) 5)
  ;; => nil
  (if (< i (length xs)) (nth xs i) nil))

(define (last xs)
  ;; The last element of xs; nil for an empty list.
  ;;
  ;; (last (list 1 2 3))
  ;; => 3
  (if (null? xs) nil (nth xs (- (length xs) 1))))

(define (empty? x)
  ;; Whether a list, string or dict has no elements (nil counts as empty).
  ;;
  ;; (empty? "")
  ;; => true
  ;; (empty? (list nil))
  ;; => false
  (= (length x) 0))

(define (take n xs)
  ;; The first n elements of xs (all of them when xs is shorter).
  ;;
  ;; (take 2 (list 1 2 3))
  ;; => (1 2)
  (define (go i acc)
    (if (or (>= i n) (>= i (length xs))) (reverse acc) (go (+ i 1) (cons (nth xs i) acc))))
  (go 0 '()))

(define (drop n xs)
  ;; xs without its first n elements (() when xs is shorter).
  ;;
  ;; (drop 2 (list 1 2 3))
  ;; => (3)
  (if (or (<= n 0) (null? xs)) (if (null? xs) '() xs) (drop (- n 1) (rest xs))))

(define (any? pred xs)
  ;; Whether (pred x) is true for some element; false for an empty list.
  ;;
  ;; It stops at the first element that passes.
  ;;
  ;; (any? negative? (list 3 -1 2))
  ;; => true
  (cond ((null? xs) false)
        ((pred (first xs)) true)
        (else (any? pred (rest xs)))))

(define (every? pred xs)
  ;; Whether (pred x) is true for every element; true for an empty list.
  ;;
  ;; It stops at the first element that fails.
  ;;
  ;; (every? string? (list "a" 1))
  ;; => false
  (cond ((null? xs) true)
        ((pred (first xs)) (every? pred (rest xs)))
        (else false)))

(define (find pred xs)
  ;; The first element for which (pred x) is true; nil when there is none.
  ;;
  ;; (find (lambda (x) (> x 10)) (list 5 12 30))
  ;; => 12
  (cond ((null? xs) nil)
        ((pred (first xs)) (first xs))
        (else (find pred (rest xs)))))

(define (count-if pred xs)
  ;; How many elements (pred x) is true for.
  ;;
  ;; (count-if odd? (list 1 2 3))
  ;; => 2
  (length (filter pred xs)))

(define (remove pred xs)
  ;; The elements for which (pred x) is false: `filter` the other way round.
  ;;
  ;; (remove null? (list 1 nil 2 '()))
  ;; => (1 2)
  (filter (complement pred) xs))

(define (flatten xs)
  ;; The elements of xs and of every list nested in it, in order, in one flat list.
  ;;
  ;; (flatten (list 1 (list 2 (list 3)) 4))
  ;; => (1 2 3 4)
  (reduce (lambda (acc x) (if (list? x) (append acc (flatten x)) (append acc (list x)))) '() xs))

(define (zip &rest lists)
  ;; Lists of the first elements of each list, the second elements ..., up to the shortest.
  ;;
  ;; (zip (list 1 2 3) (list "a" "b"))
  ;; => ((1 "a") (2 "b"))
  (if (null? lists) '() (apply map list lists)))

(define (member? x xs)
  ;; Whether x is an element of xs (compared with `equal?`).
  ;;
  ;; (member? "b" (list "a" "b"))
  ;; => true
  (any? (lambda (y) (equal? x y)) xs))

(define (distinct xs)
  ;; xs without repeated elements, each kept where it first appears.
  ;;
  ;; (distinct (list 1 2 1 3 2))
  ;; => (1 2 3)
  (reverse (reduce (lambda (acc x) (if (member? x acc) acc (cons x acc))) '() xs)))

;; Dicts
(define (get-in d path)
  ;; The value at a path of keys in nested dicts (or results): nil as soon as one is missing.
  ;;
  ;; Each step reads a field as `get-field` does.
  ;;
  ;; (get-in (json-parse "{\"user\": {\"name\": \"Ada\"}}") (list "user" "name"))
  ;; => "Ada"
  ;; (get-in (dict) (list "a" "b"))
  ;; => nil
  (reduce (lambda (acc k) (if (null? acc) nil (get-field acc k))) d path))

(define (dict-merge &rest ds)
  ;; One new dict with the keys of every dict given; a later dict's value wins.
  ;;
  ;; (dict-merge (dict "a" 1 "b" 2) (dict "b" 3))
  ;; => {"a" 1 "b" 3}
  (reduce (lambda (acc d) (reduce (lambda (a k) (assoc a k (get d k))) acc (keys d))) (dict) ds))
