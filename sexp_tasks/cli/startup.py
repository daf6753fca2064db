"""What starting `sexp` leaves for later: the one list of the package's function-local imports.

An import inside a function is kept only where it is measured to matter at start-up (or breaks
an import cycle; none does today); every one of them is listed here, with who imports what and
why. Nothing in the package reads this list: the start-up tests do (tests/test_cli.py). They check
that the list names exactly the function-local imports the code has, that `sexp --help` imports
none of these modules, and that a program that calls no model imports none of those marked
`program` (sqlite3 only when it records a run), so a new eager import of one of them fails a test.

Costs were measured with `python -X importtime` (best of 5, on a quiet machine), each module
imported after what that start has already loaded (`sexp_tasks.cli.main` for --help,
`sexp_tasks.runtime` for a program).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lazy:
    """A module imported inside a function: by whom, what it costs, and what starts without it."""

    importers: tuple[str, ...]  # the modules that import it inside a function
    why: str  # what needs it, and what importing it at the top would cost
    program: bool  # a program that calls no model and records no run starts without it (not only --help)
    brings: tuple[str, ...] = ()  # libraries that come only with it (the start-up tests check them too)


LAZY_IMPORTS: dict[str, Lazy] = {
    # Libraries: a program loads each only when it does what needs it.
    "litellm": Lazy(
        ("sexp_tasks.handler.llm",),
        "the first model call: seconds, and it may try the network (SPEC §1)",
        program=True,
    ),
    "asyncio": Lazy(
        (
            "sexp_tasks.handler.loop_thread",
            "sexp_tasks.handler.python_tools",
            "sexp_tasks.handler.mcp_client",
        ),
        "litellm's async transport, for a model call, an async Python tool or an MCP server: 15 ms",
        program=True,
    ),
    "sexp_tasks.handler.direct_call": Lazy(
        ("sexp_tasks.handler.llm",),
        "a model call on the direct path (its connection pool, and httpx's answers), with litellm: 0 ms more",
        program=True,
        brings=("httpx",),
    ),
    "certifi": Lazy(
        ("sexp_tasks.handler.http_pool",),
        "the first https connection of the direct path: the certificates httpx trusts",
        program=True,
    ),
    "tiktoken": Lazy(
        ("sexp_tasks.handler.tokens",),
        "counting a prompt's tokens: 5 ms",
        program=True,
    ),
    "jsonschema": Lazy(
        ("sexp_tasks.handler.json_schema",),
        "checking an answer against its JSON schema: 39 ms",
        program=True,
    ),
    "referencing": Lazy(
        ("sexp_tasks.handler.json_schema",),
        "resolving a JSON schema's $refs (it comes with jsonschema): 0 ms more",
        program=True,
    ),
    "pydantic": Lazy(
        ("sexp_tasks.handler.pydantic_models",),
        "validating by a pydantic model class (Session.call's output_type), which the caller has"
        " imported already, or a Python tool's schema, when a request first offers it: 30 ms",
        program=True,
    ),
    "lxml": Lazy(
        ("sexp_tasks.xmltools",),
        "reading a task template (the stdlib's are read when first called): 5 ms",
        program=True,
    ),
    "sqlite3": Lazy(
        ("sexp_tasks.runs.store",),
        "opening the run store: a recorded or resumed run, get-context, `sexp runs`: 2.4 ms",
        program=True,
    ),
    "regex": Lazy(
        ("sexp_tasks.lang.primitives.text",),
        "a program's first pattern: 6 ms",
        program=True,
    ),
    "lark": Lazy(
        ("sexp_tasks.syntax.tables",),
        "the reader's tables when their cache is cold: 22 ms, then the grammar's analysis",
        program=True,
    ),
    "tomllib": Lazy(
        ("sexp_tasks.config.loading",),
        "reading sexp.toml, when there is one: 3 ms",
        program=True,
    ),
    "difflib": Lazy(
        ("sexp_tasks.lang.suggest",),
        "a did-you-mean suggestion in an error message: 1.1 ms",
        program=True,
    ),
    # The package's own modules that a program needs only when it does what they do.
    "sexp_tasks.repl.shell": Lazy(
        ("sexp_tasks.repl",),
        "the REPL on a terminal (a piped REPL runs without prompt_toolkit and pygments): 67 ms",
        program=True,
        brings=("prompt_toolkit", "pygments"),
    ),
    # What `sexp --help` and `--version` start without: argparse and the package's small modules.
    "ctypes": Lazy(
        ("sexp_tasks.redact", "sexp_tasks.process.launcher", "sexp_tasks.lang.deepstack"),
        "hiding credentials (every command but --help), a script, an interrupt: 1.5 ms",
        program=False,
    ),
    "mcp": Lazy(
        ("sexp_tasks.handler.mcp_client",),
        "talking to an MCP server (sexp.toml [mcp.NAME]), when a task first offers its tools: 300 ms",
        program=True,
    ),
    "httpx2": Lazy(
        ("sexp_tasks.handler.mcp_client",),
        "an MCP server reached by url (the mcp package's HTTP client)",
        program=True,
    ),
    "sexp_tasks.handler.mcp_client": Lazy(
        ("sexp_tasks.tasks.mcp_pool", "sexp_tasks.tasks.mcp_services", "sexp_tasks.cli.tools_commands"),
        "the MCP servers sexp.toml declares, when a run first uses one or `sexp tools` lists them",
        program=True,
        brings=("mcp",),
    ),
    "sexp_tasks.batching.ray_executor": Lazy(
        ("sexp_tasks.batching.executors",),
        "`sexp batch --executor ray` alone: Ray is an optional extra, and importing it takes seconds",
        program=True,
        brings=("ray",),
    ),
    "sexp_tasks.runs.otel_export": Lazy(
        ("sexp_tasks.runs.telemetry",),
        "`--otel`, `otel = true` or OTEL_EXPORTER_OTLP_ENDPOINT alone: OpenTelemetry is an optional"
        " extra, and its SDK and OTLP exporter (requests, protobuf) take 120 ms",
        program=True,
        brings=("opentelemetry",),
    ),
    "sexp_tasks.runtime": Lazy(
        (
            "sexp_tasks.cli.program_commands",
            "sexp_tasks.cli.check_commands",
            "sexp_tasks.cli.task_reports",
            "sexp_tasks.cli.doc_commands",
        ),
        "running or checking a program: the language and the task system, 38 ms"
        " (`sexp tasks validate` reads templates without them)",
        program=False,
    ),
    "sexp_tasks.repl": Lazy(
        ("sexp_tasks.cli.repl_commands",),
        "the REPL, whose session builds a Runtime: 41 ms",
        program=False,
    ),
    "sexp_tasks.cli.run_reports": Lazy(
        ("sexp_tasks.cli.runs_commands", "sexp_tasks.cli.program_commands", "sexp_tasks.cli.cache_commands"),
        "`sexp runs`, `trace` and `cache clear`, and `run`'s closing summary: the run store, and traces"
        " (which import the handler): 35 ms",
        program=False,
    ),
    "sexp_tasks.batching.driver": Lazy(
        ("sexp_tasks.cli.batch_commands",),
        "`sexp batch`: the batch driver, the language and the run store, as `run` needs them",
        program=False,
    ),
    "sexp_tasks.cli.workspace_index": Lazy(
        ("sexp_tasks.cli.index_commands",),
        "`sexp index`: the memory system and the run store: 9 ms",
        program=False,
    ),
    "sexp_tasks.cli.task_reports": Lazy(
        ("sexp_tasks.cli.task_commands",),
        "`sexp tasks`: the template loader: 3.5 ms",
        program=False,
    ),
    "sexp_tasks.api": Lazy(
        ("sexp_tasks",),
        "the Python API (`sexp_tasks.run`, `Session`...), which builds a Runtime: 41 ms; every"
        " `sexp` command imports the package first",
        program=False,
    ),
    "sexp_tasks.api.async_api": Lazy(
        ("sexp_tasks.api", "sexp_tasks.api.embed"),
        "the async twins (arun, abatch, Session.aeval/acall), which bring asyncio: 15 ms, only"
        " for a program that awaits them",
        program=True,
    ),
    "sexp_tasks.api.streaming": Lazy(
        ("sexp_tasks.api.embed",),
        "Session.stream and astream, which bring asyncio and queue: only for a program that"
        " streams an answer",
        program=True,
    ),
    "sexp_tasks.syntax.reader": Lazy(
        ("sexp_tasks.cli.check_commands", "sexp_tasks.cli.bindings"),
        "reading --set values and the files `sexp check` checks: 1.7 ms",
        program=False,
    ),
}
