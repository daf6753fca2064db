;;; Loops over tasks written in the DSL: refine, and its helpers. Each
;;; one's documentation is the `;;` lines right after its `(define (name ...)` line (see
;;; prelude.sexp); refine's first line is its signature as a call is written.

(define (refine &key director evaluator (input nil) (max-iterations 3) (threshold 1.0))
  ;; (refine :director d :evaluator e [:input x] [:max-iterations 3] [:threshold 1.0])
  ;; Improve an attempt with feedback until it scores well enough: a director-evaluator loop.
  ;;
  ;; Ask the director for an attempt, score it with the evaluator and pass the evaluator's
  ;; feedback to the next attempt; stop at the first attempt scoring at least threshold, or
  ;; after max-iterations. A procedure director is called (d input feedback), feedback nil at
  ;; first; a task director gets its inputs `input` and `feedback` (either is optional). The
  ;; evaluator is called (e attempt) (a task: input `attempt`); its value scores the attempt: a
  ;; number is the score, true/false 1/0, a script result 1 when it exits 0 (its output the
  ;; feedback), a result or dict its "score" (or "success") and "feedback", a string is feedback
  ;; scoring 0. The value: {"success" "best" "score" "attempts"}, best the highest-scoring
  ;; attempt (the earliest among equals), attempts every {"attempt" "score" "feedback"}. A
  ;; director or evaluator that is a task and gives a FAILED result (it could not be called,
  ;; or its call failed) ends refine with that result, naming the phase and iteration.
  ;;
  ;; (define result
  ;;   (refine :director (lambda (text feedback) (if feedback (string-append text "!!") text))
  ;;           :evaluator (lambda (attempt)
  ;;                        (if (string-ends-with? attempt "!!") 1 (dict "score" 0 "feedback" "louder")))
  ;;           :input "hello"))
  ;; (get result "best")
  ;; => "hello!!"
  ;; (map (lambda (a) (get a "feedback")) (get result "attempts"))
  ;; => ("louder" nil)
  (refine-check "director" director)
  (refine-check "evaluator" evaluator)
  (unless (and (integer? max-iterations) (>= max-iterations 0))
    (error (format "refine: :max-iterations must be a non-negative integer, got {}" max-iterations)))
  (unless (number? threshold)
    (error (format "refine: :threshold must be a number, got {}" threshold)))
  (let ((feedback nil) (attempts '()) (best nil) (best-score nil) (failure nil))
    (director-evaluator-loop
      (max-iterations max-iterations)
      (initial-director-input input)
      (director
        (lambda (in i)
          (let ((made (refine-attempt director in feedback)))
            (if (refine-failed? director made)
                (progn (set! failure (phase-failure made "refine" "director" i)) nil)
                (task-content made)))))
      (evaluator
        (lambda (attempt plan i)
          (unless failure
            (let ((value (refine-evaluate evaluator attempt)))
              (if (refine-failed? evaluator value)
                  (progn (set! failure (phase-failure value "refine" "evaluator" i)) false)
                  (let* ((verdict (refine-verdict value))
                         (score (get verdict "score")))
                    (set! feedback (get verdict "feedback"))
                    (set! attempts (append attempts (list (dict "attempt" attempt "score" score "feedback" feedback))))
                    (when (or (null? best-score) (> score best-score))
                      (set! best attempt)
                      (set! best-score score))
                    (>= score threshold)))))))
      (controller
        (lambda (passed plan attempt i)
          (cond (failure (list 'stop failure))
                (passed (list 'stop attempt))
                (else (list 'continue input))))))
    (or failure
        (dict "success" (and (number? best-score) (>= best-score threshold))
              "best" best
              "score" best-score
              "attempts" attempts))))

(define (refine-check role f)
  ;; A helper of refine: an error unless f, given as refine's :role, is a procedure or a task.
  ;;
  ;; (try (refine-check "director" 5) (catch e (get e "message")))
  ;; => "refine: :director must be a procedure or a task, got 5"
  (unless (procedure? f)
    (error (format "refine: :{} must be a procedure or a task, got {}" role f))))

(define (refine-attempt director input feedback)
  ;; A helper of refine: the director's attempt for input, given the last feedback.
  ;;
  ;; A procedure director is called (d input feedback); a task gets its declared inputs among
  ;; `input` and `feedback` ("" before any feedback), else them in order, and gives its result.
  ;;
  ;; (refine-attempt (lambda (text feedback) (string-append text "?")) "draft" nil)
  ;; => "draft?"
  (if (task? director)
      (let ((declared (task-inputs director))
            (said (if (null? feedback) "" feedback)))
        (cond ((and (member? "input" declared) (member? "feedback" declared))
               (director :input input :feedback said))
              ((member? "input" declared) (director :input input))
              ((member? "feedback" declared) (director :feedback said))
              (else (apply director (take (length declared) (list input said))))))
      (director input feedback)))

(define (refine-failed? role value)
  ;; A helper of refine: whether a task director or evaluator gave a FAILED result.
  ;;
  ;; A procedure's value is its own, never a failure of the phase.
  ;;
  ;; (refine-failed? (lambda (x) x) (system:run_script (command "false")))
  ;; => false
  (and (task? role) (task-result? value) (equal? (get-field value "status") "FAILED")))

(define (refine-evaluate evaluator attempt)
  ;; A helper of refine: the evaluator's value for an attempt.
  ;;
  ;; (e attempt); a task gets the attempt as its input `attempt`, else as its first input.
  ;;
  ;; (refine-evaluate length "four")
  ;; => 4
  (cond ((not (task? evaluator)) (evaluator attempt))
        ((member? "attempt" (task-inputs evaluator)) (evaluator :attempt attempt))
        (else (apply evaluator (take (length (task-inputs evaluator)) (list attempt))))))

(define (refine-verdict value)
  ;; A helper of refine: an evaluator's value as {"score" n "feedback" f}.
  ;;
  ;; A number is the score, true/false 1/0, a script 1 when it exits 0 (its output the
  ;; feedback), a result or dict its score or success and feedback, a string feedback scoring 0.
  ;;
  ;; (refine-verdict 0.5)
  ;; => {"score" 0.5 "feedback" nil}
  ;; (refine-verdict "too long")
  ;; => {"score" 0 "feedback" "too long"}
  (cond ((script-result? value)
         (dict "score" (if (equal? (get-field value "exitCode") 0) 1 0)
               "feedback" (refine-script-output value)))
        ((task-result? value)
         (let ((parsed (get-field value "parsedContent"))
               (notes (get-field value "notes")))
           (let ((fields (if (dict? parsed) parsed (dict))))
             (dict "score" (refine-score fields (evaluation-success? value))
                   "feedback" (cond ((has-key? fields "feedback") (get fields "feedback"))
                                    ((has-key? notes "feedback") (get notes "feedback"))
                                    (else (get-field value "content")))))))
        ((dict? value)
         (dict "score" (refine-score value (refine-true? (get value "success")))
               "feedback" (get value "feedback")))
        ((boolean? value) (dict "score" (if value 1 0) "feedback" nil))
        ((number? value) (dict "score" value "feedback" nil))
        ((string? value) (dict "score" 0 "feedback" value))
        (else (dict "score" (if value 1 0) "feedback" nil))))

(define (refine-score fields succeeded)
  ;; A helper of refine: a verdict's "score" when it is a number (or a numeric string), else 1/0
  ;; for success.
  ;;
  ;; (refine-score (dict "score" "0.8") false)
  ;; => 0.8
  ;; (refine-score (dict) true)
  ;; => 1
  (let ((score (get fields "score")))
    (cond ((number? score) score)
          ((and (string? score) (number? (string->number score))) (string->number score))
          (succeeded 1)
          (else 0))))

(define (refine-true? v)
  ;; A helper of refine: whether v is true or a string saying "true" (any case, spaces around).
  ;;
  ;; (refine-true? " TRUE ")
  ;; => true
  (or (equal? v true) (and (string? v) (equal? (string-downcase (string-trim v)) "true"))))

(define (refine-script-output r)
  ;; A helper of refine: a script result's stdout, then its stderr when there is any (on a line
  ;; of its own): the feedback of a script evaluator.
  ;;
  ;; (refine-script-output (system:run_script (command "echo out")))
  ;; => "out\n"
  (let ((out (get-field r "stdout")) (err (get-field r "stderr")))
    (cond ((or (null? err) (equal? err "")) out)
          ((or (null? out) (equal? out "")) err)
          ((regex-match "\n$" out) (string-append out err))
          (else (string-append out "\n" err)))))
