;;; Helpers for task results, written in the language itself.

(define (task-ok? r)
  (and (task-result? r) (equal? (get-field r "status") "COMPLETE")))

(define (task-content r)
  (if (task-result? r) (get-field r "content") r))

(define (task-json r)
  ;; The parsed JSON of a result: its parsedContent, else its content parsed.
  (let ((parsed (get-field r "parsedContent")))
    (if (null? parsed) (json-parse (task-content r)) parsed)))

(define (task-error r)
  (get-field r "error"))
