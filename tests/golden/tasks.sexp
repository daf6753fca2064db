;; Task forms and primitives that need no model (calls with a model are tested in test_handler/test_tasks).

(defatom greet (params (who str)) (instructions "Say hello to {{who}}"))
;=> greet

(task-result? (greet))
;=> true

(get-field (greet :who 5) "status")
;=> "FAILED"

(get-field (get-field (greet (who 5)) "error") "reason")
;=> "input_validation_failure"

(get-field (get-field (call-atomic-task "greet" (who 5)) "error") "type")
;=> "TASK_FAILURE"

(call-atomic-task "gret" (who "x"))
;!! unknown task 'gret'; did you mean 'greet'?

(call-atomic-task 5)
;!! call-atomic-task: the task name must be a string, got 5

(call-atomic-task)
;!! call-atomic-task: expected (call-atomic-task name (param expr)...)

(map (lambda (m) (get m "name")) (match-tasks "greet someone"))
;=> ("greet")

(match-tasks "zzz")
;=> ()

(load-templates "no-such-directory")
;!! load-templates: no such directory 'no-such-directory'

(defatom)
;!! defatom: expected (defatom name (params ...) (instructions "...") ...)

(defatom nothing (params x))
;!! defatom nothing: missing (instructions "...")

(task-ok? (greet (who 1)))
;=> false
