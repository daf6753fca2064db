;; read-file and write-file, confined to the workspace (here, the working directory).

(write-file "a.txt" "hello")
;=> "a.txt"
(read-file "a.txt")
;=> "hello"
(write-file "a.txt" "replaced\nwith two lines")
(read-file "a.txt")
;=> "replaced\nwith two lines"
(write-file "sub/dir/b.txt" 42)
;=> "sub/dir/b.txt"
(read-file "sub/dir/b.txt")
;=> "42"
(write-file "list.txt" '(1 "two"))
(read-file "list.txt")
;=> "(1 \"two\")"
(write-file "unicode.txt" "café ☃\n")
(read-file "unicode.txt")
;=> "café ☃\n"
(read-file "./sub/../a.txt")
;=> "replaced\nwith two lines"
(write-file "empty.txt" "")
(read-file "empty.txt")
;=> ""
(write-file "data.json" (json-dump (dict "k" (list 1 2))))
(get (json-parse (read-file "data.json")) "k")
;=> (1 2)

;; Missing files, directories, and paths outside the workspace are errors.
(read-file "missing.txt")
;!! read-file: no such file 'missing.txt'
(read-file "sub")
;!! read-file: 'sub' is a directory
(read-file "../x")
;!! read-file: '../x' is outside the workspace
(read-file "sub/../../x")
;!! read-file: 'sub/../../x' is outside the workspace
(read-file "/etc/passwd")
;!! read-file: '/etc/passwd' is outside the workspace
(write-file "../escape.txt" "x")
;!! write-file: '../escape.txt' is outside the workspace
(write-file "/tmp/escape.txt" "x")
;!! write-file: '/tmp/escape.txt' is outside the workspace
(try (read-file "../x") (catch e (list (get e "type") (string-contains? (get e "message") "outside the workspace"))))
;=> ("FILE_ERROR" true)
(write-file "sub" "x")
;!! write-file: cannot write 'sub'

;; Argument errors.
(read-file 5)
;!! read-file: expected a string, got 5 (integer)
(write-file 'name "x")
;!! write-file: expected a string, got name (symbol)
(read-file)
;!! read-file: expected 1 argument, got 0
(write-file "x.txt")
;!! write-file: expected 2 arguments, got 1
