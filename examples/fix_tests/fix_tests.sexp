;;; Fix until the tests pass: a model proposes a corrected module, pytest judges it, and pytest's
;;; report goes back to the model until every test passes (or three attempts are spent).
;;; The buggy project stays pristine in examples/fix_tests/project/; each run copies it to
;;; examples/fix_tests/work/ and edits the copy, so running twice behaves the same.
;;;
;;; Offline, from its recorded cassette (needs pytest: .venv/bin/pip install pytest):
;;;   sexp run examples/fix_tests/fix_tests.sexp --templates examples/fix_tests/tasks \
;;;       --model openai/gpt-4o-mini --replay examples/fix_tests/fix_tests.cassette.jsonl
;;; Against a real provider, drop --replay and set OPENAI_API_KEY (or name another model).
;;; The Python that runs pytest: --set python=PATH, else the first of .venv/bin/python, python3,
;;; python that has pytest. Re-record the cassette: .venv/bin/python examples/record_fix_tests.py

(define project "examples/fix_tests/project")
(define work "examples/fix_tests/work")
(define module "pricing.py")
(define tests "test_pricing.py")

(define (pytest-runs? candidate)
  (equal? (get-field (system:run_script (command (list candidate "-m" "pytest" "--version"))) "exitCode") 0))

(define python
  (or (try python (catch unset nil))
      (find pytest-runs? (list ".venv/bin/python" "python3" "python"))
      (error "fix_tests: no Python here can run pytest; install it (.venv/bin/pip install pytest) or name one with --set python=PATH")))

(define (run-tests)
  ;; pytest's report on the work copy, made the same from run to run before a model sees it:
  ;; no progress line, no timing, no work-directory prefix, and separator lines of one width.
  (let* ((run (system:run_script
                (command (list python "-m" "pytest" "-q" "--tb=short" work))
                (env (dict "PYTHONDONTWRITEBYTECODE" "1" "PYTEST_DISABLE_PLUGIN_AUTOLOAD" "1"))
                (timeout 120)))
         (text (get-field run "stdout"))
         (text (regex-replace "(?m)^[.FEsxX]+ *\\[ *\\d+%\\]\n" text ""))
         (text (regex-replace "(?m)^=+ (.*?) =+$" text "== \\1 =="))
         (text (regex-replace "(?m)^_+ (.*?) _+$" text "__ \\1 __"))
         (text (regex-replace " in \\d+(\\.\\d+)?s\\b" text ""))
         (text (string-replace text (string-append work "/") "")))
    (dict "passed" (equal? (get-field run "exitCode") 0)
          "report" (string-trim text)
          "counts" (last (string-split (string-trim text) "\n")))))

(define (strip-fence text)
  ;; The module without a Markdown fence around it, should the model add one anyway.
  (string-append (string-trim (regex-replace "^\\s*```[a-zA-Z]*\n|\n?```\\s*$" text "")) "\n"))

;; A fresh copy of the project to work on.
(for-each (lambda (name) (write-file (format "{}/{}" work name) (read-file (format "{}/{}" project name))))
          (list module tests "pytest.ini"))

(define before (run-tests))
(print (format "{} in {}: {}" tests work (get before "counts")))

(define attempt-number 0)

(define outcome
  (refine
    :input (get before "report")
    :max-iterations 3
    ;; The director sees the module as it is now (the last attempt) and pytest's latest report.
    :director (lambda (first-report feedback)
                (strip-fence
                  (task-content
                    (propose-fix :module module
                                 :code (read-file (format "{}/{}" work module))
                                 :tests (read-file (format "{}/{}" work tests))
                                 :feedback (or feedback first-report)))))
    ;; The evaluator writes the attempt and runs pytest: score 1 when every test passes.
    :evaluator (lambda (code)
                 (set! attempt-number (+ attempt-number 1))
                 (write-file (format "{}/{}" work module) code)
                 (let ((result (run-tests)))
                   (print (format "attempt {}: {}" attempt-number (get result "counts")))
                   (dict "score" (if (get result "passed") 1 0) "feedback" (get result "report"))))))

(print)
(if (get outcome "success")
    (let ((diff (system:run_script
                  (command (list "diff" "-u" (format "{}/{}" project module) (format "{}/{}" work module))))))
      (print (format "The tests pass after {} attempts. The fix, in {}/{}:" attempt-number work module))
      (print (string-join (drop 2 (string-split (get-field diff "stdout") "\n")) "\n")))
    (print (format "The tests still fail after {} attempts; the best attempt scored {}."
                   attempt-number (get outcome "score"))))
