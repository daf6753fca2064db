;; Loops over tasks (SPEC §2.7, §9 Loops): director-evaluator-loop, iterative-loop, refine.
;; Calls that reach a model are tested in test_task_loops.py; tasks here fail before any call.

;; --- director-evaluator-loop: plan = (director input i), out = (executor plan i),
;; fb = (evaluator out plan i), (controller fb plan out i) -> (stop value) | (continue next-input)

(director-evaluator-loop
  (max-iterations 5)
  (initial-director-input 1)
  (director (lambda (n i) (* n 10)))
  (executor (lambda (plan i) (+ plan i)))
  (evaluator (lambda (out plan i) (> out 100)))
  (controller (lambda (fb plan out i) (if fb (list 'stop (list out i)) (list 'continue out)))))
;=> (112 2)

;; Every phase sees its arguments in the documented order.
(director-evaluator-loop
  (max-iterations 2)
  (initial-director-input "in")
  (director (lambda (input i) (print "director" input i) "plan"))
  (executor (lambda (plan i) (print "executor" plan i) "out"))
  (evaluator (lambda (out plan i) (print "evaluator" out plan i) "fb"))
  (controller (lambda (fb plan out i) (print "controller" fb plan out i) (list 'continue (format "in{}" i)))))
;>> director in 1
;>> executor plan 1
;>> evaluator out plan 1
;>> controller fb plan out 1
;>> director in1 2
;>> executor plan 2
;>> evaluator out plan 2
;>> controller fb plan out 2
;=> "out"

;; Iterations run out: the value is the last executor result.
(director-evaluator-loop
  (max-iterations 3)
  (initial-director-input 0)
  (director (lambda (n i) (+ n 1)))
  (executor (lambda (plan i) (* plan 100)))
  (evaluator (lambda (out plan i) false))
  (controller (lambda (fb plan out i) (list 'continue plan))))
;=> 300

;; max-iterations 0: nil, and no phase runs.
(director-evaluator-loop
  (max-iterations 0)
  (initial-director-input "x")
  (director (lambda (x i) (print "called") x))
  (evaluator (lambda (out plan i) true)))
;=> nil

;; Clauses in any order; no executor (out is the plan); the default controller stops with out
;; once the evaluation succeeds.
(director-evaluator-loop
  (evaluator (lambda (out plan i) (= out "draft 2")))
  (director (lambda (input i) (format "draft {}" i)))
  (initial-director-input "topic")
  (max-iterations 5))
;=> "draft 2"

;; The default controller continues with {"input" <previous input> "feedback" <evaluation>}.
(director-evaluator-loop
  (max-iterations 3)
  (initial-director-input "topic")
  (director (lambda (input i) (print input) input))
  (evaluator (lambda (out plan i) (if (< i 3) 0 "done"))))
;>> topic
;>> {"input" "topic" "feedback" 0}
;>> {"input" {"input" "topic" "feedback" 0} "feedback" 0}
;=> {"input" {"input" "topic" "feedback" 0} "feedback" 0}

;; Exhausted under the default controller: the last out.
(director-evaluator-loop
  (max-iterations 2)
  (initial-director-input "x")
  (director (lambda (input i) i))
  (evaluator (lambda (out plan i) nil)))
;=> 2

;; The controller's words may be symbols, keywords or strings.
(director-evaluator-loop
  (max-iterations 3)
  (initial-director-input 0)
  (director (lambda (n i) (+ n 1)))
  (evaluator (lambda (out plan i) out))
  (controller (lambda (fb plan out i) (if (= i 2) (list "stop" (* fb 7)) (list :continue fb)))))
;=> 14

(director-evaluator-loop
  (max-iterations 3)
  (initial-director-input 0)
  (director (lambda (n i) n))
  (evaluator (lambda (out plan i) out))
  (controller (lambda (fb plan out i) '(stop (quoted data)))))
;=> (quoted data)

;; *loop-config* is bound during every phase call, whatever procedure reads it.
(define (show-config &rest args) *loop-config*)
(director-evaluator-loop
  (max-iterations 2)
  (initial-director-input "x")
  (director show-config)
  (evaluator (lambda (out plan i) true)))
;=> ((max-iterations 2) (initial-director-input "x"))

(director-evaluator-loop
  (max-iterations 4)
  (initial-director-input "x")
  (director (lambda (input i) (get-field *loop-config* "max-iterations")))
  (executor (lambda (plan i) (list plan (get-field *loop-config* 'initial-director-input))))
  (evaluator (lambda (out plan i) (show-config)))
  (controller (lambda (fb plan out i) (list 'stop (list out (length fb))))))
;=> ((4 "x") 2)

;; ... and unbound again afterwards.
*loop-config*
;!! unbound symbol '*loop-config*'

;; A nested loop binds its own configuration and gives the outer one back.
(director-evaluator-loop
  (max-iterations 1)
  (initial-director-input "outer")
  (director
    (lambda (x i)
      (list (iterative-loop
              (max-iterations 1)
              (initial-input "inner")
              (test-command "t")
              (executor (lambda (input i) (get-field *loop-config* "initial-input")))
              (validator (lambda (cmd i) true))
              (controller (lambda (out ok input i) (list 'stop out))))
            (get-field *loop-config* "initial-director-input"))))
  (evaluator (lambda (out plan i) true)))
;=> ("inner" "outer")

;; An earlier binding of *loop-config* comes back after the loop, also after an error.
(define *loop-config* "mine")
(try
  (director-evaluator-loop
    (max-iterations 1)
    (initial-director-input 0)
    (director (lambda (x i) (error "no")))
    (evaluator (lambda (out plan i) true)))
  (catch e *loop-config*))
;=> "mine"

(set! *loop-config* "again")
(director-evaluator-loop
  (max-iterations 1)
  (initial-director-input 0)
  (director (lambda (x i) *loop-config*))
  (evaluator (lambda (out plan i) true)))
;=> ((max-iterations 1) (initial-director-input 0))

*loop-config*
;=> "again"

;; Errors in a phase name the phase and the iteration, keep their type, and can be caught.
(director-evaluator-loop
  (max-iterations 3)
  (initial-director-input 0)
  (director (lambda (x i) i))
  (evaluator (lambda (out plan i) (if (= i 2) (error "boom") false))))
;!! director-evaluator-loop: evaluator failed in iteration 2: boom

(try
  (director-evaluator-loop
    (max-iterations 3)
    (initial-director-input 0)
    (director (lambda (x i) i))
    (executor (lambda (plan i) (car 5)))
    (evaluator (lambda (out plan i) false)))
  (catch e (list (get e "type") (get e "message"))))
;=> ("TYPE_ERROR" "director-evaluator-loop: executor failed in iteration 1: car: expected a list, got 5 (integer)")

(director-evaluator-loop
  (max-iterations 3)
  (initial-director-input 0)
  (director (lambda (x) x))
  (evaluator (lambda (out plan i) false)))
;!! director-evaluator-loop: director failed in iteration 1: lambda: expected 1 argument, got 2

(director-evaluator-loop
  (max-iterations 3)
  (initial-director-input 0)
  (director (lambda (x i) x))
  (evaluator (lambda (out plan i) false))
  (controller (lambda (fb plan out i) (if (= i 3) (undefined-thing) (list 'continue i)))))
;!! director-evaluator-loop: controller failed in iteration 3: unbound symbol 'undefined-thing'

;; The same error raised again is annotated afresh, not twice.
(define (run-bad-defatom)
  (try
    (director-evaluator-loop
      (max-iterations 1)
      (initial-director-input 0)
      (director (lambda (x i) (defatom broken (params x)) x))
      (evaluator (lambda (out plan i) true)))
    (catch e (get e "message"))))
(run-bad-defatom)
(run-bad-defatom)
;=> "director-evaluator-loop: director failed in iteration 1: defatom broken: missing (instructions \"...\")"

;; A malformed decision names the controller and the iteration.
(director-evaluator-loop
  (max-iterations 3)
  (initial-director-input 0)
  (director (lambda (x i) x))
  (evaluator (lambda (out plan i) false))
  (controller (lambda (fb plan out i) 'stop)))
;!! director-evaluator-loop: controller returned stop in iteration 1; expected (list 'stop value) or (list 'continue next-input)

(director-evaluator-loop
  (max-iterations 3)
  (initial-director-input 0)
  (director (lambda (x i) x))
  (evaluator (lambda (out plan i) false))
  (controller (lambda (fb plan out i) (if (= i 1) (list 'continue 1) (list 'halt 1)))))
;!! director-evaluator-loop: controller returned (halt 1) in iteration 2

(director-evaluator-loop
  (max-iterations 1)
  (initial-director-input 0)
  (director (lambda (x i) x))
  (evaluator (lambda (out plan i) false))
  (controller (lambda (fb plan out i) (list 'stop 1 2))))
;!! controller returned (stop 1 2) in iteration 1

;; Phases must be procedures; max-iterations a non-negative integer (checked before any phase runs).
(director-evaluator-loop
  (max-iterations 1)
  (initial-director-input 0)
  (director 5)
  (evaluator (lambda (out plan i) false)))
;!! director-evaluator-loop: director must be a procedure or a task, got 5 (integer)

(director-evaluator-loop
  (max-iterations 0)
  (initial-director-input 0)
  (director (lambda (x i) x))
  (evaluator "judge"))
;!! director-evaluator-loop: evaluator must be a procedure or a task, got "judge" (string)

(director-evaluator-loop
  (max-iterations -1)
  (initial-director-input 0)
  (director (lambda (x i) x))
  (evaluator (lambda (out plan i) false)))
;!! director-evaluator-loop: max-iterations must be a non-negative integer, got -1

(director-evaluator-loop
  (max-iterations 2.0)
  (initial-director-input 0)
  (director (lambda (x i) x))
  (evaluator (lambda (out plan i) false)))
;!! director-evaluator-loop: max-iterations must be a non-negative integer, got 2.0

(director-evaluator-loop
  (max-iterations true)
  (initial-director-input 0)
  (director (lambda (x i) x))
  (evaluator (lambda (out plan i) false)))
;!! director-evaluator-loop: max-iterations must be a non-negative integer, got true

;; Malformed forms: unknown, duplicate, empty and missing clauses.
(director-evaluator-loop
  (max-iterations 1)
  (initial-director-input 0)
  (directr (lambda (x i) x))
  (evaluator (lambda (out plan i) false)))
;!! director-evaluator-loop: unknown clause (directr ...); did you mean 'director'?

(director-evaluator-loop (max-iterations 1) (bogus 1))
;!! director-evaluator-loop: unknown clause (bogus ...) (clauses: max-iterations, initial-director-input, director, executor, evaluator, controller)

(director-evaluator-loop
  (max-iterations 1)
  (max-iterations 2)
  (initial-director-input 0)
  (director (lambda (x i) x))
  (evaluator (lambda (out plan i) false)))
;!! director-evaluator-loop: duplicate clause (max-iterations ...)

(director-evaluator-loop
  (max-iterations 1)
  (initial-director-input 0)
  (director)
  (evaluator (lambda (out plan i) false)))
;!! director-evaluator-loop: (director ...) takes one expression

(director-evaluator-loop (max-iterations 1) 5)
;!! director-evaluator-loop: expected clauses such as (max-iterations n), got 5

(director-evaluator-loop (max-iterations 1) (initial-director-input 0) (director car))
;!! director-evaluator-loop: missing clause (evaluator ...)

(director-evaluator-loop)
;!! director-evaluator-loop: missing clauses (max-iterations ...) (initial-director-input ...) (director ...) (evaluator ...)

;; A malformed loop is refused before anything in the program runs.
(print "before")
(director-evaluator-loop (max-iterations 1))
;!! director-evaluator-loop: missing clauses

;; --- Tasks as phases: a task gets only as many arguments as it declares inputs.
(defatom needs-int (params (x int)) (instructions "Check {{x}}"))
;=> needs-int

;; A task phase whose result is FAILED ends the loop with that result as its value (SPEC §10.1),
;; its message naming the phase and the iteration; no controller sees it.
(define failed
  (director-evaluator-loop
    (max-iterations 2)
    (initial-director-input "a")
    (director (lambda (x i) x))
    (evaluator needs-int)
    (controller (lambda (fb plan out i) (list 'continue "never")))))
(list (get-field failed "status") (get (get-field failed "error") "reason") (get (get-field failed "error") "message"))
;=> ("FAILED" "input_validation_failure" "director-evaluator-loop: evaluator failed in iteration 1: task 'needs-int': input 'x' must be integer, got string")

(get (get-field failed "notes") "loop")
;=> {"form" "director-evaluator-loop" "phase" "evaluator" "iteration" 1}

;; The same with the default controller: a FAILED evaluation is not swallowed as feedback.
(director-evaluator-loop
  (max-iterations 2)
  (initial-director-input "a")
  (director (lambda (x i) x))
  (evaluator needs-int))
;=> #<TaskResult FAILED "">

;; A procedure phase's values are the program's own: its controller decides about them.
(director-evaluator-loop
  (max-iterations 2)
  (initial-director-input "a")
  (director (lambda (x i) x))
  (evaluator (lambda (out plan i) (needs-int out)))
  (controller (lambda (fb plan out i) (list 'stop (get-field fb "status")))))
;=> "FAILED"

;; A task executor of iterative-loop that cannot be called (a missing input) ends it the same way.
(defatom pair-up (params a b c) (instructions "{{a}} {{b}} {{c}}"))
;=> pair-up

(get-field
  (iterative-loop
    (max-iterations 3)
    (initial-input "x")
    (test-command "t")
    (executor pair-up)
    (validator (lambda (cmd i) (print "never") true))
    (controller (lambda (out val input i) (list 'continue out))))
  "error")
;=> {"type" "TASK_FAILURE" "reason" "input_validation_failure" "message" "iterative-loop: executor failed in iteration 1: task 'pair-up': missing required input 'c'" "details" {"parameter" "c"}}

;; A task called as a phase that cannot run: the error names the phase (no model here).
(defatom shout (params text) (instructions "Shout {{text}}"))
;=> shout

(director-evaluator-loop
  (max-iterations 2)
  (initial-director-input "hi")
  (director shout)
  (evaluator (lambda (out plan i) true)))
;!! director-evaluator-loop: director failed in iteration 1: task 'shout' has no model

;; phase-failure: a FAILED result saying it ended a loop (what refine, written in the language, stops with).
(get (get-field (phase-failure (needs-int "a") "my-loop" "step" 2) "error") "message")
;=> "my-loop: step failed in iteration 2: task 'needs-int': input 'x' must be integer, got string"

(phase-failure 1 "my-loop" "step" 2)
;!! phase-failure: expected a FAILED task result, got 1

;; The predicates the loops and refine use.
(list (task? needs-int) (task? car) (task? (lambda () 1)) (task? "needs-int"))
;=> (true false false false)

(list (task-inputs needs-int) (task-inputs shout))
;=> (("x") ("text"))

(task-inputs car)
;!! task-inputs: expected a task, got #<procedure car> (procedure)

(list (script-result? 1) (script-result? (needs-int "a")) (task-result? (needs-int "a")))
;=> (false false true)

(list (evaluation-success? true) (evaluation-success? 0) (evaluation-success? "yes")
      (evaluation-success? nil) (evaluation-success? (needs-int "a")))
;=> (true false true false false)

;; --- iterative-loop: out = (executor input i), val = (validator test-command i),
;; (controller out val input i).

(iterative-loop
  (max-iterations 5)
  (initial-input 1)
  (test-command "make test")
  (executor (lambda (n i) (* n 2)))
  (validator (lambda (cmd i) (list cmd i)))
  (controller (lambda (out val input i) (if (> out 10) (list 'stop (list out val input i)) (list 'continue out)))))
;=> (16 ("make test" 4) 8 4)

(iterative-loop
  (controller (lambda (out val input i) (list 'continue out)))
  (validator (lambda (cmd i) false))
  (executor (lambda (n i) (+ n i)))
  (test-command "true")
  (initial-input 10)
  (max-iterations 3))
;=> 16

(iterative-loop
  (max-iterations 0)
  (initial-input 1)
  (test-command "t")
  (executor (lambda (n i) (print "ran") n))
  (validator (lambda (cmd i) true))
  (controller (lambda (out val input i) (list 'stop out))))
;=> nil

(iterative-loop
  (max-iterations 1)
  (initial-input "x")
  (test-command "pytest -q")
  (executor (lambda (input i) *loop-config*))
  (validator (lambda (cmd i) (get-field *loop-config* "test-command")))
  (controller (lambda (out val input i) (list 'stop (list out val)))))
;=> (((max-iterations 1) (initial-input "x") (test-command "pytest -q")) "pytest -q")

(iterative-loop
  (max-iterations 3)
  (initial-input 0)
  (test-command "t")
  (executor (lambda (n i) n))
  (validator (lambda (cmd i) (if (= i 2) (nth '() 1) true)))
  (controller (lambda (out val input i) (list 'continue out))))
;!! iterative-loop: validator failed in iteration 2:

(iterative-loop
  (max-iterations 3)
  (initial-input 0)
  (test-command "t")
  (executor (lambda (n i) n))
  (validator (lambda (cmd i) true))
  (controller (lambda (out val input i) nil)))
;!! iterative-loop: controller returned nil in iteration 1

(iterative-loop
  (max-iterations 1)
  (initial-input 0)
  (test-command 42)
  (executor (lambda (n i) n))
  (validator (lambda (cmd i) true))
  (controller (lambda (out val input i) (list 'stop out))))
;!! iterative-loop: test-command must be a string, got 42

(iterative-loop
  (max-iterations "3")
  (initial-input 0)
  (test-command "t")
  (executor (lambda (n i) n))
  (validator (lambda (cmd i) true))
  (controller (lambda (out val input i) (list 'stop out))))
;!! iterative-loop: max-iterations must be a non-negative integer, got "3"

(iterative-loop (max-iterations 1) (initial-input 0) (executor car))
;!! iterative-loop: missing clauses (test-command ...) (validator ...) (controller ...)

(iterative-loop (max-iterations 1) (evaluator car))
;!! iterative-loop: unknown clause (evaluator ...)

;; A task executor gets only its declared inputs (its one input, not the iteration too).
(get (get-field
       (iterative-loop
         (max-iterations 1)
         (initial-input "not a number")
         (test-command "t")
         (executor needs-int)
         (validator (lambda (cmd i) true))
         (controller (lambda (out val input i) (list 'stop "never"))))
       "error")
     "message")
;=> "iterative-loop: executor failed in iteration 1: task 'needs-int': input 'x' must be integer, got string"

;; --- refine (stdlib): (refine :director d :evaluator e [:input x] [:max-iterations 3] [:threshold 1.0])

;; The evaluator's feedback reaches the next attempt; stop on success.
(refine
  :director (lambda (input feedback) (print "feedback:" feedback) (if (null? feedback) input (string-append feedback "!")))
  :evaluator (lambda (attempt) (dict "score" (/ (length attempt) 4) "feedback" attempt))
  :input "ab"
  :max-iterations 5)
;>> feedback: nil
;>> feedback: ab
;>> feedback: ab!
;=> {"success" true "best" "ab!!" "score" 1.0 "attempts" ({"attempt" "ab" "score" 0.5 "feedback" "ab"} {"attempt" "ab!" "score" 0.75 "feedback" "ab!"} {"attempt" "ab!!" "score" 1.0 "feedback" "ab!!"})}

;; Keep the best attempt, not the last; give up after n with the history.
(define scores (list 0.5 0.9 0.2))
(refine
  :director (lambda (input feedback) (if (null? feedback) 0 (+ feedback 1)))
  :evaluator (lambda (n) (dict "score" (nth scores n) "feedback" n)))
;=> {"success" false "best" 1 "score" 0.9 "attempts" ({"attempt" 0 "score" 0.5 "feedback" 0} {"attempt" 1 "score" 0.9 "feedback" 1} {"attempt" 2 "score" 0.2 "feedback" 2})}

;; Equal scores keep the earliest attempt.
(get (refine :director (lambda (input feedback) (if (null? feedback) "a" "b"))
             :evaluator (lambda (attempt) (dict "score" 0.5 "feedback" "again")))
     "best")
;=> "a"

;; A score threshold; numbers, booleans, dicts with success, strings as evaluations.
(get (refine :director (lambda (input feedback) (if (null? feedback) 1 (+ feedback 1)))
             :evaluator (lambda (n) (dict "score" (* n 0.3) "feedback" n))
             :threshold 0.5 :max-iterations 10)
     "attempts")
;=> ({"attempt" 1 "score" 0.3 "feedback" 1} {"attempt" 2 "score" 0.6 "feedback" 2})

(refine :director (lambda (input feedback) input) :evaluator (lambda (a) (> a 2)) :input 3)
;=> {"success" true "best" 3 "score" 1 "attempts" ({"attempt" 3 "score" 1 "feedback" nil})}

(get (refine :director (lambda (input feedback) input) :evaluator (lambda (a) false) :input 3 :max-iterations 2) "score")
;=> 0

(refine :director (lambda (input feedback) "x") :evaluator (lambda (a) 0.25) :max-iterations 1 :threshold 0.2)
;=> {"success" true "best" "x" "score" 0.25 "attempts" ({"attempt" "x" "score" 0.25 "feedback" nil})}

(get (refine :director (lambda (input feedback) "x")
             :evaluator (lambda (a) (dict "success" true "feedback" "fine"))
             :max-iterations 4)
     "attempts")
;=> ({"attempt" "x" "score" 1 "feedback" "fine"})

(get (refine :director (lambda (input feedback) "x")
             :evaluator (lambda (a) (dict "success" "false" "feedback" "no"))
             :max-iterations 2)
     "attempts")
;=> ({"attempt" "x" "score" 0 "feedback" "no"} {"attempt" "x" "score" 0 "feedback" "no"})

(get (refine :director (lambda (input feedback) (or feedback "first"))
             :evaluator (lambda (a) (string-append "critique of " a))
             :max-iterations 2)
     "attempts")
;=> ({"attempt" "first" "score" 0 "feedback" "critique of first"} {"attempt" "critique of first" "score" 0 "feedback" "critique of critique of first"})

;; No iterations: nothing tried.
(refine :director (lambda (input feedback) 1) :evaluator (lambda (a) true) :max-iterations 0)
;=> {"success" false "best" nil "score" nil "attempts" ()}

;; A task evaluator gets the attempt as its input `attempt`; a FAILED result ends refine with it
;; (SPEC §10.1), never scored 0 as if it had judged.
(defatom grade (params (attempt int)) (instructions "Grade {{attempt}}") (output_format (type "json")))
;=> grade

(get (get-field (refine :director (lambda (input feedback) "text") :evaluator grade :max-iterations 3) "error")
     "message")
;=> "refine: evaluator failed in iteration 1: task 'grade': input 'attempt' must be integer, got string"

;; So does a task director that lacks an input refine needs (it passes only :feedback here).
(defatom on-topic (params topic feedback) (instructions "{{topic}} {{feedback}}"))
;=> on-topic

(define r (refine :director on-topic :evaluator (lambda (a) 1) :input "owls"))
(list (get-field r "status") (get (get-field r "error") "message") (get (get-field r "notes") "loop"))
;=> ("FAILED" "refine: director failed in iteration 1: task 'on-topic': missing required input 'topic'" {"form" "refine" "phase" "director" "iteration" 1})

;; Errors: bad arguments, and phase errors named as the loop's.
(refine :director 5 :evaluator (lambda (a) true))
;!! refine: :director must be a procedure or a task, got 5

(refine :director (lambda (input feedback) 1))
;!! refine: :evaluator must be a procedure or a task, got nil

(refine :director (lambda (input feedback) 1) :evaluator (lambda (a) true) :max-iterations -2)
;!! refine: :max-iterations must be a non-negative integer, got -2

(refine :director (lambda (input feedback) 1) :evaluator (lambda (a) true) :threshold "high")
;!! refine: :threshold must be a number, got high

(refine :director (lambda (input feedback) 1) :evaluator (lambda (a) (error "judge crashed")))
;!! director-evaluator-loop: evaluator failed in iteration 1: judge crashed

(refine :director (lambda (input) 1) :evaluator (lambda (a) true))
;!! director-evaluator-loop: director failed in iteration 1: lambda: expected 1 argument, got 2

(refine :director shout :evaluator (lambda (a) true))
;!! director-evaluator-loop: director failed in iteration 1: task 'shout' has no model

;; --- Script evaluators (system:run_script): success is exit code 0, the output is the feedback.

(director-evaluator-loop
  (max-iterations 5)
  (initial-director-input "n")
  (director (lambda (input i) i))
  (evaluator (lambda (out plan i) (system:run_script (command (format "test {} -ge 2" out))))))
;=> 2

(director-evaluator-loop
  (max-iterations 1)
  (initial-director-input "n")
  (director (lambda (input i) i))
  (evaluator (lambda (out plan i) (system:run_script (command "sh") (args (list "-c" "echo failing; exit 1")))))
  (controller (lambda (fb plan out i) (list 'stop (list (evaluation-success? fb) (script-result? fb) (get-field fb "exitCode"))))))
;=> (false true 1)

(iterative-loop
  (max-iterations 3)
  (initial-input 0)
  (test-command "true")
  (executor (lambda (n i) (+ n 1)))
  (validator (lambda (cmd i) (system:run_script (command cmd))))
  (controller (lambda (out result input i)
                (if (= (get-field result "exitCode") 0) (list 'stop (list out cmd-ok)) (list 'continue out)))))
;!! iterative-loop: controller failed in iteration 1: unbound symbol 'cmd-ok'

(iterative-loop
  (max-iterations 3)
  (initial-input 0)
  (test-command "false")
  (executor (lambda (n i) (+ n 1)))
  (validator (lambda (cmd i) (system:run_script (command cmd))))
  (controller (lambda (out result input i)
                (if (= (get-field result "exitCode") 0) (list 'stop out) (list 'continue out)))))
;=> 3

(define (check-at-least n)
  (lambda (attempt)
    (system:run_script (command "sh")
                       (args (list "-c" (format "if [ {} -ge {} ]; then echo ok; else echo too small: {}; exit 1; fi"
                                                attempt n attempt))))))
(refine
  :director (lambda (input feedback)
              (if (null? feedback) input (+ 1 (string->number (last (string-split (string-trim feedback)))))))
  :evaluator (check-at-least 3)
  :input 1
  :max-iterations 5)
;=> {"success" true "best" 3 "score" 1 "attempts" ({"attempt" 1 "score" 0 "feedback" "too small: 1\n"} {"attempt" 2 "score" 0 "feedback" "too small: 2\n"} {"attempt" 3 "score" 1 "feedback" "ok\n"})}

(get (refine :director (lambda (input feedback) "x")
             :evaluator (lambda (a) (system:run_script (command "sh") (args (list "-c" "echo out; echo err >&2; exit 2"))))
             :max-iterations 1)
     "attempts")
;=> ({"attempt" "x" "score" 0 "feedback" "out\nerr\n"})

(get (refine :director (lambda (input feedback) "x")
             :evaluator (lambda (a) (system:run_script (command "sh") (args (list "-c" "printf out; echo err >&2; exit 2"))))
             :max-iterations 1)
     "best")
;=> "x"

(get-field (refine :director (lambda (input feedback) "x")
                   :evaluator (lambda (a) (system:run_script (command "sh") (args (list "-c" "printf out; printf err >&2; exit 2"))))
                   :max-iterations 1)
           "attempts")
;=> ({"attempt" "x" "score" 0 "feedback" "out\nerr"})
