;;; Helpers for task results, written in the language itself. Each one's documentation is the
;;; `;;` lines right after its `(define (name ...)` line (see prelude.sexp).

(define (task-ok? r)
  ;; Whether r is a TaskResult whose status is COMPLETE.
  ;;
  ;; A FAILED task is a value, not an error: test it with this (or read its "error" field).
  ;;
  ;; (task-ok? (system:run_script (command "true")))
  ;; => true
  ;; (task-ok? "not a result")
  ;; => false
  (and (task-result? r) (equal? (get-field r "status") "COMPLETE")))

(define (task-content r)
  ;; A result's content (its text); any other value as it is.
  ;;
  ;; (task-content (system:run_script (command "echo hi")))
  ;; => "hi\n"
  ;; (task-content "plain")
  ;; => "plain"
  (if (task-result? r) (get-field r "content") r))

(define (task-json r)
  ;; The parsed JSON of a result: its parsedContent, else its content parsed.
  ;;
  ;; A template with a JSON output format fills parsedContent; otherwise the content (or a
  ;; string given) is parsed, and text that is not JSON is an error.
  ;;
  ;; (task-json (system:run_script (command "echo") (args (list "{\"ok\": true}"))))
  ;; => {"ok" true}
  (let ((parsed (get-field r "parsedContent")))
    (if (null? parsed) (json-parse (task-content r)) parsed)))

(define (task-error r)
  ;; A FAILED result's error as a dict (type, reason, message ...); nil for any other value.
  ;;
  ;; (defatom count-to (params (n integer)) (instructions "Count to {{n}}") (model "mock/demo"))
  ;; (get (task-error (count-to :n "ten")) "reason")
  ;; => "input_validation_failure"
  (get-field r "error"))
