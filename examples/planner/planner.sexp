;;; A planner whose model spawns its own subtasks: plan-project lists spawn_subtask among its
;;; tools, and its model hands the research and the outline to two subtasks (the Task System
;;; picks research-topic and outline-plan from the model's template_hints), resumes with their
;;; results, and writes the plan. The subtasks it ran are in the result's notes.
;;;
;;; Offline, from its recorded cassette:
;;;   sexp run examples/planner/planner.sexp --templates examples/planner/tasks \
;;;       --model openai/gpt-4o-mini --replay examples/planner/planner.cassette.jsonl
;;; Against a real provider, drop --replay and set OPENAI_API_KEY (or name another model);
;;; plan something else with --set goal="...". Re-record: .venv/bin/python examples/record_planner.py
;;; `sexp trace <run id>` shows the subtasks as steps under the planner's.

(define goal
  (or (try goal (catch unset nil))
      "Move the team's CI from Jenkins to GitHub Actions within one quarter"))

(define plan (plan-project :goal goal))

(unless (task-ok? plan)
  (error (format "planner: no plan: {}" (get (task-error plan) "message")) (task-error plan)))

(define subtasks (or (get (get-field plan "notes") "subtasks") '()))
(print (format "Planned \"{}\" with {} subtasks:" goal (length subtasks)))
(for-each (lambda (s) (print (format "  {}  {}" (get s "status") (get s "template")))) subtasks)
(print)
(print (task-content plan))
