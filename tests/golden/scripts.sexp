;; system:run_script: a command run from an argument list in the workspace, never through a
;; shell unless (shell true); the result is a TaskResult whose content is stdout.

(system:run_script (command "echo hello world"))
;=> #<TaskResult COMPLETE "hello world\n">
(get-field (system:run_script (command "echo hello world")) "stdout")
;=> "hello world\n"
(script-result? (system:run_script (command "true")))
;=> true

;; A non-zero exit is COMPLETE with its exit code: the program decides.
(define r (system:run_script (command "sh -c 'echo out; echo err >&2; exit 3'")))
(list (get-field r "status") (get-field r "exitCode") (get-field r "stdout") (get-field r "stderr"))
;=> ("COMPLETE" 3 "out\n" "err\n")
(get-field r "content")
;=> "out\n"
(task-ok? r)
;=> true
(list (get (get-field r "notes") "stdout_truncated_bytes") (get (get-field r "notes") "stderr_truncated_bytes"))
;=> (0 0)
(number? (get (get-field r "notes") "duration_ms"))
;=> true

;; Pair syntax and keyword syntax are the same call; args are appended, never split.
(get-field (system:run_script (command "echo") (args (list "one two" "three"))) "stdout")
;=> "one two three\n"
(get-field (system:run_script :command "echo" :args (list "-n" "kw")) "stdout")
;=> "kw"
(get-field (system:run_script (command (list "printf" "%s|" "a b" "c"))) "stdout")
;=> "a b|c|"
(define (shout text) (get-field (system:run_script (command "tr a-z A-Z") (input text)) "stdout"))
(shout "computed input")
;=> "COMPUTED INPUT"

;; No shell: ; $ and * reach the command as they are written.
(get-field (system:run_script (command "echo a; echo $HOME *")) "stdout")
;=> "a; echo $HOME *\n"
(get-field (system:run_script (command "echo a; echo b") (shell true)) "stdout")
;=> "a\nb\n"
(get-field (system:run_script (command "echo \"$1-$2\"") (args (list "x" "y")) (shell true)) "stdout")
;=> "x-y\n"

;; The workspace is the working directory; cwd is taken from it.
(write-file "sub/notes.txt" "one\ntwo\n")
(get-field (system:run_script (command "wc -l sub/notes.txt")) "stdout")
;=> "2 sub/notes.txt\n"
(get-field (system:run_script (command "cat notes.txt") (cwd "sub")) "stdout")
;=> "one\ntwo\n"

;; The environment is scrubbed; env adds to it.
(get-field (system:run_script (command "sh -c 'echo ${GREETING:-unset}'")) "stdout")
;=> "unset\n"
(get-field (system:run_script (command "sh -c 'echo $GREETING'") (env (dict "GREETING" "hi"))) "stdout")
;=> "hi\n"

;; A timeout is FAILED execution_timeout with the output so far.
(define slow (system:run_script (command "sh -c 'echo partial; sleep 10'") (timeout 0.5)))
(list (get-field slow "status") (get-field slow "content") (get-field slow "exitCode"))
;=> ("FAILED" "partial\n" nil)
(get (get-field slow "error") "reason")
;=> "execution_timeout"
(get (get-field slow "error") "message")
;=> "\"sh -c 'echo partial; sleep 10'\" timed out after 0.5 s"

;; A command that cannot be started is FAILED execution_halted, naming it.
(define missing (system:run_script (command "no-such-command-xyz --help")))
(list (get-field missing "status") (get (get-field missing "error") "reason"))
;=> ("FAILED" "execution_halted")
(get (get-field missing "error") "message")
;=> "cannot start 'no-such-command-xyz': command not found"
(get (get-field (system:run_script (command "ls") (cwd "nowhere")) "error") "message")
;=> "cannot start 'ls': no such directory 'nowhere'"

;; Malformed forms are errors when the form is compiled.
(system:run_script (comand "ls"))
;!! system:run_script: unknown parameter 'comand'; did you mean 'command'? (parameters: command, args, timeout, cwd, input, env, shell)
(system:run_script (args (list "-l")))
;!! system:run_script: missing (command ...)
(system:run_script (command "ls") (command "pwd"))
;!! system:run_script: parameter 'command' given twice
(system:run_script "ls")
;!! system:run_script: expected (parameter expr) or :parameter expr

;; Values of the wrong type are positioned errors a program can catch.
(system:run_script (command "ls") (timeout "ten"))
;!! system:run_script: timeout must be a number of seconds, got "ten"
(system:run_script (command "ls") (args "-l"))
;!! system:run_script: args must be a list of strings, got "-l"
(try (system:run_script (command 42)) (catch err (list (get err "type") (get err "message"))))
;=> ("TYPE_ERROR" "system:run_script: command must be a string or a list of strings, got 42")
(try (system:run_script (command "ls") (shell "yes")) (catch err (get err "type")))
;=> "TYPE_ERROR"
(try (system:run_script (command "ls") (timeout -1)) (catch err (get err "type")))
;=> "VALUE_ERROR"
