;; (sequential (context ...)? step...): steps in order, the last value (context passing is tested
;; against a model server in test_context.py).

(sequential)
;=> nil

(sequential 1 2 3)
;=> 3

(sequential (print "a") (print "b") 'done)
;>> a
;>> b
;=> done

(define total 0)
(sequential (context (accumulate_data false) (inherit_context "none"))
  (set! total (+ total 1))
  (set! total (+ total 10)))
;=> 11

(sequential (context (accumulation_format "full_output")) (list 1 2))
;=> (1 2)

(sequential (context (inherit_context "most")) 1)
;!! sequential: inherit_context must be one of full, none, subset, got 'most'

(sequential (context (accumulate_data "maybe")) 1)
;!! sequential: accumulate_data must be true or false

(sequential (context (colour "red")) 1)
;!! sequential: unknown context setting 'colour'

(sequential (context 5) 1)
;!! sequential: (context ...) holds (setting value) clauses

(sequential (context (inherit_context "full") (fresh_context "enabled")) 1)
;!! sequential: fresh_context enabled cannot be combined with inherit_context full

(try (sequential (error "inside")) (catch e (get e "message")))
;=> "inside"

(defatom greet-seq (params (who str)) (instructions "Say hello to {{who}}"))
(get-field (sequential (greet-seq :who 5)) "status")
;=> "FAILED"
