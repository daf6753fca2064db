"""Batch runs (SPEC §10.5): a program run once per input line, each line its own recorded run.

`driver.py` checks the input, records the batch and writes OUT in input order; `rows.py` is the
plain data a row's runner gets; `row_runner.py` runs one row; `thread_executor.py` runs rows on
threads of this process, `ray_executor.py` on Ray. Named `batching`, not `batch`: the package's
`sexp_tasks.batch` is the Python entry point (api/batch_runs.py), and a subpackage of that name
would replace it as an attribute of `sexp_tasks` once imported.
"""
