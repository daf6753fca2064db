;;; Loops over tasks written in the DSL: refine (SPEC §2.7, §9 Loops).

(define (refine &key director evaluator (input nil) (max-iterations 3) (threshold 1.0))
  ;; Ask the director for an attempt, score it with the evaluator and pass the evaluator's
  ;; feedback to the next attempt; stop at the first attempt scoring at least threshold, or
  ;; after max-iterations. The value: {"success" "best" "score" "attempts"}, best the
  ;; highest-scoring attempt (the earliest among equals), attempts every {"attempt" "score" "feedback"}.
  ;; A director or evaluator that is a task and gives a FAILED result (it could not be called,
  ;; or its call failed) ends refine with that result, naming the phase and iteration (SPEC §10.1).
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
  (unless (procedure? f)
    (error (format "refine: :{} must be a procedure or a task, got {}" role f))))

(define (refine-attempt director input feedback)
  ;; A procedure director is called (d input feedback); a task gets its declared inputs among
  ;; `input` and `feedback` ("" before any feedback), else them in order, and gives its result.
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
  ;; Whether a task director or evaluator gave a FAILED result (a procedure's value is its own).
  (and (task? role) (task-result? value) (equal? (get-field value "status") "FAILED")))

(define (refine-evaluate evaluator attempt)
  ;; (e attempt); a task gets the attempt as its input `attempt`, else as its first input.
  (cond ((not (task? evaluator)) (evaluator attempt))
        ((member? "attempt" (task-inputs evaluator)) (evaluator :attempt attempt))
        (else (apply evaluator (take (length (task-inputs evaluator)) (list attempt))))))

(define (refine-verdict value)
  ;; An evaluator's value as {"score" n "feedback" f}: a number is the score, true/false 1/0, a
  ;; script 1 when it exits 0 (its output the feedback), a result or dict its score or success
  ;; and feedback, a string feedback scoring 0.
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
  ;; A verdict's "score" when it is a number (or a numeric string), else 1/0 for success.
  (let ((score (get fields "score")))
    (cond ((number? score) score)
          ((and (string? score) (number? (string->number score))) (string->number score))
          (succeeded 1)
          (else 0))))

(define (refine-true? v)
  (or (equal? v true) (and (string? v) (equal? (string-downcase (string-trim v)) "true"))))

(define (refine-script-output r)
  ;; stdout, then stderr when there is any (on a line of its own).
  (let ((out (get-field r "stdout")) (err (get-field r "stderr")))
    (cond ((or (null? err) (equal? err "")) out)
          ((or (null? out) (equal? out "")) err)
          ((regex-match "\n$" out) (string-append out err))
          (else (string-append out "\n" err)))))
