"""What the task system adds to `sexp check`: a call of a task whose template is known before the
run (a registered template, a defatom of the file) is checked against its inputs: unknown names,
missing required inputs, too many positions; and each tool a defatom of the file or a template
it calls names must be a built-in tool, a Session.tool function or a procedure; a `NAME/tool`
(there, or in a call's literal `tools`) needs a declared server NAME offering tool."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ...errors import ArityError, SexpError, Span
from ...handler.python_tools import PythonTool
from ...handler.tool_schema import TOOL_NAME
from ...handler.tools import TOOL_SCHEMAS
from ...lang.calls import Closure
from ...lang.check import CallCheck, Checker, all_calls
from ...lang.forms import SpecialForm, global_definitions, walk_clauses
from ...lang.values import Value
from ...syntax.nodes import FunctionCallNode, Keyword, Literal, Node, Symbol
from ..inputs import missing_inputs, mixed_arguments, too_many_arguments, unknown_inputs
from ..library import TaskLibrary
from ..procedure_tools import unknown_server, unknown_server_tool, unknown_tool
from ..task import RESERVED
from ..template import TaskTemplate
from .defatom import NAME as DEFATOM
from .defatom import defatom_template


@dataclass(frozen=True)
class TaskCall:
    """The check of calls of one task, by name; template None when it is not known before the run."""

    template: TaskTemplate | None
    # The problems of the tools a call names by literal (task, names, where): its `NAME/...`.
    call_tools: Callable[[str, tuple[str, ...], Span | None], list[SexpError]] | None = None

    def __call__(self, checker: Checker, node: FunctionCallNode, local: frozenset[str]) -> None:
        """Its arguments walked (a pair's head names an input, not a procedure), then checked
        against the template's inputs when the template is known."""
        template = self.template
        args = node.args
        if self.call_tools is not None and (tools_given := _tools_argument(args)) is not None:
            names = literal_names(tools_given)
            if names:
                checker.problems += self.call_tools(node.name, names, tools_given.span)
        if args and len(args) % 2 == 0 and all(isinstance(a, Keyword) for a in args[::2]):
            checker.walk(args[1::2], local)
            named: list[tuple[str, Span | None]] | None = [(a.name, a.span) for a in args[::2]]  # type: ignore[union-attr]
        elif args and all(self._is_pair(checker, a, local) for a in args):
            for pair in args:  # (param expr): only expr is code
                checker.walk(pair.args, local)  # type: ignore[union-attr]
            named = [(a.name, a.span) for a in args]  # type: ignore[union-attr]
        else:
            checker.walk(args, local)
            named = None
        if template is None:
            return
        if named is not None:
            self.input_problems(checker, node, named)
        elif any(isinstance(a, Keyword) for a in args):
            checker.problems.append(ArityError(str(mixed_arguments(template)), node.span))
        elif (too_many := too_many_arguments(template, len(args))) is not None:
            checker.problems.append(ArityError(str(too_many), node.span))
        else:
            given = [spec.name for spec in template.inputs[: len(args)]]
            checker.problems += [ArityError(str(p), node.span) for p in missing_inputs(template, given)]

    def _is_pair(self, checker: Checker, node: Node, local: frozenset[str]) -> bool:
        """Whether an argument reads as `(param expr)`: headed by an input or reserved parameter,
        or by a name that is no procedure (a misspelt input, reported as such)."""
        if not (isinstance(node, FunctionCallNode) and len(node.args) == 1):
            return False
        head = node.name
        if head in RESERVED or (self.template is not None and self.template.input(head) is not None):
            return True
        return head not in local and head not in checker.known and head not in checker.forms

    def input_problems(
        self, checker: Checker, node: FunctionCallNode, named: list[tuple[str, Span | None]]
    ) -> None:
        """Unknown input names (where each is written) and missing required inputs (at the call)."""
        template = self.template
        if template is None:
            return
        given = [name for name, _ in named if name not in RESERVED]
        where = dict(reversed(named))
        for problem in unknown_inputs(template, given):
            checker.problems.append(ArityError(str(problem), where.get(problem.parameter) or node.span))
        checker.problems += [ArityError(str(p), node.span) for p in missing_inputs(template, given)]


def _tools_argument(args: Sequence[Node]) -> Node | None:
    """The expression a call gives its `tools` (`:tools expr` or `(tools expr)`), if any."""
    for i, arg in enumerate(args):
        if isinstance(arg, Keyword) and arg.name == "tools" and i + 1 < len(args):
            return args[i + 1]
        if isinstance(arg, FunctionCallNode) and arg.name == "tools" and len(arg.args) == 1:
            return arg.args[0]
    return None


def literal_names(node: Node) -> tuple[str, ...]:
    """The names a literal tools value gives (`"a"`, `(list "a" ...)`, `'(a "b" ...)`); () for
    an expression known only when the program runs."""
    if isinstance(node, Literal) and isinstance(node.value, str):
        return (node.value,)
    if not isinstance(node, FunctionCallNode):
        return ()
    if node.name == "list":
        items: tuple[Node, ...] = node.args  # strings only: a variable's value is not known yet
        names = [i.value for i in items if isinstance(i, Literal) and isinstance(i.value, str)]
    elif node.name == "quote" and len(node.args) == 1 and isinstance(node.args[0], FunctionCallNode):
        items = (node.args[0].head, *node.args[0].args)
        names = [i.name for i in items if isinstance(i, Symbol)]
        names += [i.value for i in items if isinstance(i, Literal) and isinstance(i.value, str)]
    else:
        return ()
    return tuple(names) if len(names) == len(items) else ()


def check_call_atomic_task(checker: Checker, form: FunctionCallNode, local: frozenset[str]) -> None:
    """`(call-atomic-task "name" (param expr)...)`: the expressions, and the named inputs against
    the template when the name is a string whose template is known."""
    args = form.args
    walk_clauses(checker, args[1:], local)
    if args and isinstance(args[0], Literal) and isinstance(args[0].value, str):
        task = checker.calls.get(args[0].value)
        if isinstance(task, TaskCall) and task.template is not None:
            named = [(a.name, a.span) for a in args[1:] if isinstance(a, (FunctionCallNode, Keyword))]
            task.input_problems(checker, form, named)


class TaskChecks:
    """The task system's CheckExtension: its templates are names, and calls of tasks are checked;
    forms are the special forms in force (the compiler's, Compiler.forms)."""

    def __init__(
        self,
        library: TaskLibrary,
        forms: Mapping[str, SpecialForm],
        python_tools: Mapping[str, PythonTool],
        mcp_servers: Collection[str] = (),
        server_tools: Callable[[str], Collection[str] | None] | None = None,
    ) -> None:
        self.library = library
        self.forms = forms
        self.python_tools = python_tools  # Session.tool's functions (none for `sexp check`)
        self.mcp_servers = mcp_servers  # sexp.toml's [mcp.NAME] servers: their tools are NAME/...
        # The names of a server's tools (None when it cannot be asked): asked only for a
        # `NAME/tool` of a declared server, so a program naming none starts no server.
        self.server_tools = server_tools

    def global_names(self) -> Iterable[str]:
        return self.library.templates

    def call_checks(self, forms: Sequence[Node], globals_: Mapping[str, Value]) -> dict[str, CallCheck]:
        """Names that call tasks, resolved as a run resolves them (SPEC §2.5): the file's defatoms
        (their templates built now; None when one is defined twice or does not build), then
        registered templates that no global and nothing the file defines shadows."""
        defined: dict[str, list[FunctionCallNode]] = {}
        for form in global_definitions(forms, self.forms):
            defined.setdefault(getattr(form.args[0], "name", "?"), []).append(form)
        names: dict[str, CallCheck] = {
            name: TaskCall(template, self.call_tool_problems)
            for name, template in self.library.templates.items()
            if name not in globals_ and name not in defined
        }
        for name, forms_defining in defined.items():
            # By name, and honestly so: what is checked is the template defatom_template reads
            # from defatom's own clauses, which no other defining form has (its description says
            # only that it defines, and that its value's arity is unknown before the run).
            if any(f.name != DEFATOM for f in forms_defining):
                continue  # a procedure (also): which one a call meets depends on the run
            template = None
            if len(forms_defining) == 1:
                try:
                    template = defatom_template(forms_defining[0])
                except SexpError:
                    pass  # compiling the defatom reports it
            names[name] = TaskCall(template, self.call_tool_problems)
        return names

    def program_problems(self, forms: Sequence[Node], globals_: Mapping[str, Value]) -> list[SexpError]:
        """A NameError for each tool a defatom of the file (at its tools clause) or a registered
        template it calls (at the first call) names that is no built-in tool, Session.tool
        function or procedure (one the file defines, or a global one)."""
        defined = {getattr(f.args[0], "name", "?"): f for f in global_definitions(forms, self.forms)}
        procedures = {name for name, form in defined.items() if form.name != DEFATOM}
        procedures |= {name for name, value in globals_.items() if isinstance(value, Closure)}
        tools = {*TOOL_SCHEMAS, *self.python_tools, *(n for n in procedures if TOOL_NAME.fullmatch(n))}
        named: list[tuple[TaskTemplate, Span | None]] = []
        for form in defined.values():
            if form.name == DEFATOM:
                clause = next(
                    (c for c in form.args if isinstance(c, FunctionCallNode) and c.name == "tools"), form
                )
                try:
                    named.append((defatom_template(form), clause.span))
                except SexpError:
                    pass  # compiling the defatom reports it
        first_calls = {
            call.name: call for call in all_calls(forms)
        }  # the last given is the first in the text
        for name, template in self.library.templates.items():
            if name in first_calls and name not in defined and name not in globals_:
                named.append((template, first_calls[name].span))
        servers = self.mcp_servers
        problems: list[SexpError] = [
            unknown_server(template.name, tool.partition("/")[0], servers, span)
            if "/" in tool
            else unknown_tool(template.name, tool, tools, span)
            for template, span in named
            for tool in template.tools
            if tool not in tools and tool.partition("/")[0] not in servers
        ]
        return problems + self._server_tool_problems(named)

    def call_tool_problems(self, task: str, names: tuple[str, ...], span: Span | None) -> list[SexpError]:
        """What is wrong with the `NAME/...` tools a call names: an undeclared server, a tool its
        server does not offer (the other names are checked when the program runs)."""
        problems: list[SexpError] = []
        for tool in names:
            server, slash, _ = tool.partition("/")
            if slash and server not in self.mcp_servers:
                problems.append(unknown_server(task, server, self.mcp_servers, span))
            elif slash and (problem := self._unoffered(task, tool, span)) is not None:
                problems.append(problem)
        return problems

    def _server_tool_problems(self, named: list[tuple[TaskTemplate, Span | None]]) -> list[SexpError]:
        """A NameError for each `NAME/tool` of a declared server that the server does not offer,
        when its tools can be listed (`NAME/*` asks nothing)."""
        found = (self._unoffered(t.name, tool, span) for t, span in named for tool in t.tools)
        return [problem for problem in found if problem is not None]

    def _unoffered(self, task: str, tool: str, span: Span | None) -> SexpError | None:
        """The error of a `NAME/tool` whose declared server, listed, does not offer it; None for
        what is not such a name, `NAME/*`, or a server that cannot be listed."""
        server, slash, wanted = tool.partition("/")
        if not slash or wanted == "*" or server not in self.mcp_servers or self.server_tools is None:
            return None
        offers = self.server_tools(server)
        if offers is None or wanted in offers:
            return None
        return unknown_server_tool(task, server, wanted, offers, span)
