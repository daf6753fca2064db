;;; Word statistics for a text file: the kind of pre-processing a workflow does before it
;;; calls a model. Run from the checkout root:  sexp run examples/word_stats.sexp

(define path "examples/data/release-notes.txt")

(define (words text)
  ;; Lower-case words without punctuation.
  (filter (lambda (w) (> (length w) 0))
          (map (lambda (w) (string-downcase (regex-replace "[^A-Za-z0-9']" w "")))
               (string-split text))))

(define stop-words '("the" "a" "and" "of" "to" "in" "on" "so" "at" "not" "that" "now" "their" "every"))

(define (frequencies xs)
  (reduce (lambda (counts w) (assoc counts w (+ 1 (get counts w 0)))) (dict) xs))

(define (top n counts)
  (take n (sort (keys counts) (lambda (w) (- (get counts w))))))

(let* ((text (read-file path))
       (all-words (words text))
       (content (remove (lambda (w) (member? w stop-words)) all-words))
       (counts (frequencies content)))
  (print (format "{}: {} words, {} distinct, {} lines"
                 path (length all-words) (length (keys (frequencies all-words)))
                 (length (string-split (string-trim text) "\n"))))
  (for-each (lambda (w) (print (format "  {} x{}" w (get counts w)))) (top 5 counts))
  (dict "words" (length all-words) "top" (top 3 counts)))
