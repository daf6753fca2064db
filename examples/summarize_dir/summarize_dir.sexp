;;; Map-reduce over a directory: summarise every text document concurrently with pmap, then
;;; combine the summaries into one weekly digest. A document that cannot be summarised stays a
;;; FAILED result in its place — reported, left out of the digest — and the run goes on.
;;;
;;; Offline, from its recorded cassette (the cassette answers each request by its content, so
;;; the order in which the concurrent calls finish does not matter):
;;;   sexp run examples/summarize_dir/summarize_dir.sexp --templates examples/summarize_dir/tasks \
;;;       --model openai/gpt-4o-mini --replay examples/summarize_dir/summarize_dir.cassette.jsonl
;;; Against a real provider, drop --replay and set OPENAI_API_KEY (or name another model).
;;; Summarise another directory: --set docs=PATH. Re-record: .venv/bin/python examples/record_summarize_dir.py

(define docs (or (try docs (catch unset nil)) "examples/summarize_dir/docs"))

(define files
  ;; The directory's .md and .txt files, by name.
  (let ((listing (system:run_script (command (list "ls" docs)))))
    (unless (equal? (get-field listing "exitCode") 0)
      (error (format "summarize_dir: cannot list {}: {}" docs (string-trim (get-field listing "stderr")))))
    (sort (filter (lambda (name) (regex-match "\\.(md|txt)$" name))
                  (string-split (get-field listing "stdout") "\n")))))

;; Map: one summary per file, at most four model calls at a time. An element that fails (a
;; model answer that is not the JSON asked for, a file that cannot be read) is a FAILED
;; TaskResult in its place.
(define summaries
  (pmap (lambda (name) (summarize-doc :name name :text (read-file (format "{}/{}" docs name))))
        files
        :concurrency 4))

(define (why result)
  (let ((err (task-error result)))
    (format "{}: {}" (or (get err "reason") (get err "type")) (get err "message"))))

(define (pad text width)
  (string-append text (string-join (map (lambda (i) " ") (range (- width (length text)))))))

(define width (apply max (cons 0 (map length files))))

(print (format "Summarised {} of {} documents in {}:"
               (count-if task-ok? summaries) (length files) docs))
(define results (zip files summaries))
(for-each (lambda (pair)
            (let ((name (pad (first pair) width)) (result (second pair)))
              (if (task-ok? result)
                  (print (format "  ok      {}  {}" name (get (task-json result) "title")))
                  (let ((answered (string-trim (or (task-content result) ""))))
                    (print (format "  FAILED  {}  {}" name (why result)))
                    (unless (equal? answered "")
                      (print (format "          {}  the model answered: {}" (pad "" width)
                                     (if (> (length answered) 70)
                                         (string-append (substring answered 0 70) "...")
                                         answered))))))))
          results)

;; Reduce: the summaries that worked, with their file names, into one digest.
(define done (filter (lambda (pair) (task-ok? (second pair))) results))

(define digest
  (write-digest
    :summaries (map (lambda (pair) (assoc (task-json (second pair)) "name" (first pair))) done)))

(print)
(if (task-ok? digest)
    (print (task-content digest))
    (print "No digest:" (why digest)))
(dict "documents" (length files) "summarised" (length done) "digest" (task-ok? digest))
