;;; A multi-task workflow: extract the changes from release notes, rate each one, and
;;; summarise the ones that matter. Offline, from its recorded cassette:
;;;   sexp run examples/release_review.sexp --templates examples/tasks \
;;;       --replay examples/release_review.cassette.jsonl
;;; Against a real provider, drop --replay (and set OPENAI_API_KEY), or pick a model: --model ...

(define notes (read-file "examples/data/release-notes.txt"))

(define changes (extract-changes (notes notes)))
(unless (task-ok? changes)
  (error "could not extract the changes" (task-error changes)))

(define rated
  (map (lambda (change)
         (let ((rating (rate-change :change change)))
           (dict "change" change
                 "score" (if (task-ok? rating) (get-field rating "score") 0))))
       (task-json changes)))

(define important (filter (lambda (r) (>= (get r "score") 3)) rated))
(for-each (lambda (r) (print (format "{}  {}" (get r "score") (get r "change")))) rated)

(define summary (write-summary (changes important)))
(print)
(print (task-content summary))
(dict "changes" (length rated) "important" (length important))
