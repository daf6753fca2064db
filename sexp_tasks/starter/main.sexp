;;; A starter program: summarise a text with the `summarize` template (tasks/summarize.xml) and
;;; print the result.
;;;
;;; Offline, with a mock model whose replies come from mock_responses.json:
;;;   sexp run main.sexp --model mock/starter --mock-responses mock_responses.json
;;; With a real model: set `model` in sexp.toml and your provider's key (OPENAI_API_KEY for
;;; openai/... models; a .env file here works too), then:
;;;   sexp run main.sexp
;;; Summarise another text: sexp run main.sexp --set-str text="..."
;;; Test it offline: pytest (test_main.py)

(define text
  (or (try text (catch e nil))   ; --set-str text=... when given
      "The support team answered 1,240 tickets in March, 18% more than in February. Most of the
increase came from the new billing page: 310 tickets asked where invoices had moved. Median
time to first reply rose from 2 to 5 hours. The team asks for a link to invoices on the
dashboard and for one more person on the April rota."))

;; A task call: the template's name, its inputs as :key arguments. It returns a TaskResult.
(define result (summarize :text text :max_words 40))

(if (task-ok? result)
    (let ((summary (task-json result)))   ; the answer's JSON, checked against the schema
      (print (get summary "title"))
      (print (get summary "summary"))
      (for-each (lambda (point) (print "-" point)) (get summary "key_points")))
    result)   ; a FAILED result as the final value: sexp prints its error and exits 1
