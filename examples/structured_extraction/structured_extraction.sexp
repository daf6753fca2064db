;;; Structured extraction with native JSON and repairs: pull the order out of each customer
;;; email as JSON valid against the template's JSON Schema. The model is sent the schema as its
;;; response_format (gpt-4o-mini takes it), and an answer that still breaks the schema is sent
;;; back with its violations (retries="2"): here the first email's first answer gives a
;;; quantity as a string, and the repaired answer is right.
;;;
;;; Offline, from its recorded cassette (see README.md):
;;;   sexp run examples/structured_extraction/structured_extraction.sexp --model openai/gpt-4o-mini \
;;;       --replay examples/structured_extraction/structured_extraction.cassette.jsonl
;;; Against a real provider, drop --replay and set OPENAI_API_KEY (or name another model).
;;; Other emails: --set-str emails=PATH (emails separated by lines of ---).
;;; Re-record: .venv/bin/python examples/record_structured_extraction.py

(define emails-file (or (try emails (catch unset nil)) "examples/structured_extraction/emails.txt"))

(define emails
  (filter (lambda (text) (not (equal? text "")))
          (map string-trim (string-split (read-file emails-file) "\n---\n"))))

(define orders (map (lambda (email) (extract-order :email email)) emails))

(define (repairs result) (or (get (get-field result "notes") "repairs") 0))

(define (show-item item) (format "{} x{}" (get item "sku") (get item "quantity")))

(for-each
  (lambda (result)
    (if (task-ok? result)
        (let ((order (task-json result)))
          (print (format "{} <{}>: {} (repairs: {})"
                         (get order "customer") (get order "email")
                         (string-join (map show-item (get order "items")) ", ")
                         (repairs result))))
        (print (format "FAILED: {}" (get (task-error result) "message")))))
  orders)

(dict "orders" (length orders)
      "extracted" (count-if task-ok? orders)
      "items" (sum (map (lambda (r) (if (task-ok? r) (sum (map (lambda (i) (get i "quantity")) (get (task-json r) "items"))) 0)) orders))
      "repairs" (sum (map repairs orders)))
