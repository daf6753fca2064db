"""The evaluator's first half: every AST node is compiled once into a Python closure.

A compiled expression is a function `code(frame) -> value`. Local names are resolved at
compile time to (depth, slot) in the frame chain, special forms are looked up in the
compiler's own table of them (`forms`, filled from the registries of `forms/` installed in it),
and calls become the specialised call sites of `callsite.py`.

The compiler knows no task: a part of the system that adds special forms (the task system)
gives them its state through `extend`, and a procedure whose parameters have names (a task)
is a NamedProcedure, which pair syntax `(name (param expr)...)` calls by name.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TypeVar

from ..errors import SexpError, Span
from ..syntax.nodes import DictNode, FunctionCallNode, Keyword, ListNode, Literal, Node, Symbol
from .calls import nested_too_deeply
from .callsite import Operand, can_inline, inline_primitive, make_call, make_if
from .codegen import checked_reference, constant, frame_at, sequence
from .dynamic import DynamicVariable
from .environment import GlobalEnvironment, Scope
from .forms import SpecialForm
from .quoting import dict_key
from .values import UNBOUND, Code, Frame, NamedProcedure, Value

T = TypeVar("T")
# What _shared_compilations keeps: id(node) -> (node, scope, tail, the operand compiled for them).
SharedCompilations = dict[int, tuple[Node, "Scope | None", bool, Operand]]


class Compiler:
    """Compiles nodes against a global environment, for closures with a recursion limit."""

    def __init__(self, globals_: GlobalEnvironment, recursion_limit: int) -> None:
        self.globals = globals_
        self.recursion_limit = recursion_limit
        self._extensions: list[object] = []  # see extend
        # The special forms this compiler knows, by name: the registries installed (add_forms).
        # A plain dict, as looking a form up is on the path of every call compiled.
        self.forms: dict[str, SpecialForm] = {}
        # The dynamically bound variables this compiler knows, by name (add_dynamic_variable).
        self.dynamic_variables: dict[str, DynamicVariable] = {}
        self._sharing = threading.local()  # its table: see _shared_compilations

    def add_forms(self, registry: Mapping[str, SpecialForm]) -> None:
        """Install a registry's special forms (the core's, the task system's) in this compiler; a
        name it knows already is an error (no registry overrides another's form)."""
        taken = sorted(self.forms.keys() & registry.keys())
        if taken:
            raise ValueError(f"special forms installed twice: {', '.join(taken)}")
        self.forms.update(registry)

    def add_dynamic_variable(self, variable: DynamicVariable) -> None:
        """Make variable's name dynamically bound in the code this compiler compiles from now on
        (the task system's `*loop-config*`); a name it knows already is an error."""
        if variable.name in self.dynamic_variables:
            raise ValueError(f"dynamic variable installed twice: {variable.name}")
        self.dynamic_variables[variable.name] = variable

    def extend(self, extension: object) -> None:
        """Make extension (the task system) known to the special forms it installed, which find
        it with `extension`."""
        self._extensions.append(extension)

    def extension(self, kind: type[T]) -> T | None:
        """The extension of that kind given to `extend`, None when there is none (the language
        core alone: forms that need it say so)."""
        for found in self._extensions:
            if isinstance(found, kind):
                return found
        return None

    def compile(self, node: Node, scope: Scope | None, tail: bool = False) -> Code:
        """Compile one expression; `tail` says whether its value is the enclosing lambda's."""
        if type(node) is Symbol:
            return self.compile_reference(node, scope)
        if type(node) is Literal:
            return constant(node.value)
        if type(node) is Keyword:
            return constant(node)
        operand = self.compile_operand(node, scope, tail)  # a call, list or dict: code or int_op
        if operand.kind == "int_op" and operand.fallback is not None:
            return operand.fallback
        code: Code = operand.value
        return code

    def compile_body(self, nodes: Sequence[Node], scope: Scope | None, tail: bool) -> Code:
        """Compile a sequence: every value but the last is discarded; empty gives nil."""
        codes = [self.compile(n, scope, tail and i == len(nodes) - 1) for i, n in enumerate(nodes)]
        return sequence(codes)

    def compile_operand(self, node: Node, scope: Scope | None, tail: bool = False) -> Operand:
        """How a call site should get node's value: inline when it is a constant, a variable or
        an integer operation on those, else by calling its code.

        Each expression is compiled once: a call's operand, its code and its integer fast path
        all come from one compilation of its arguments, so compile time is linear in the size
        of the program.
        """
        if type(node) is Literal:
            return Operand("const", node.value)
        if type(node) is Keyword:
            return Operand("const", node)
        if type(node) is Symbol:
            return self._variable(node, scope)
        shared: SharedCompilations | None = getattr(self._sharing, "table", None)
        if shared is not None:
            found = shared.get(id(node))
            if found is not None and found[0] is node and found[1] is scope and found[2] is tail:
                return found[3]
        try:
            if type(node) is FunctionCallNode:
                operand = self._compile_call(node, scope, tail)
            elif type(node) is ListNode:
                operand = Operand("code", self._compile_list(node, scope, tail))
            elif type(node) is DictNode:
                operand = Operand("code", self._compile_dict(node, scope))
            else:
                raise TypeError(f"cannot compile {node!r}")
        except RecursionError:
            # Python's stack ran out; the compilations this one is inside report where.
            raise nested_too_deeply(node.span) from None
        if shared is not None:
            shared[id(node)] = (node, scope, tail, operand)
        return operand

    def _variable(self, node: Symbol, scope: Scope | None) -> Operand:
        name = node.name
        found = scope.resolve(name) if scope is not None else None
        if found is None:
            if name in self.dynamic_variables:  # read through its binding, below
                return Operand("code", self._global_reference(node, scope, node.span))
            return Operand("global", name)
        depth, slot, maybe_unbound = found
        if depth <= 2 and not maybe_unbound:
            return Operand("slot", None, depth, slot)
        return Operand("code", self.compile_reference(node, scope))

    def _compile_call(self, node: FunctionCallNode, scope: Scope | None, tail: bool) -> Operand:
        """A special form by its entry in this compiler's table, else a call of whatever the head
        names."""
        form = self.forms.get(node.head.name)
        if form is not None:
            return Operand("code", form.compile(node, scope, tail, self))
        if _looks_like_pairs(node) and self._may_take_pairs(node.head.name, scope):
            with self._shared_compilations():
                return Operand("code", self._pair_call(node, scope, tail))
        # An unbound operator is reported at the call, the form being evaluated.
        operator = self.compile_operand(node.head, scope)
        operands = [self.compile_operand(a.value, scope) for a in node.arguments]
        call = self._call(operator, operands, node.span, scope, tail)
        if not tail and len(operands) == 2 and operator.kind == "global" and all(map(can_inline, operands)):
            primitive = inline_primitive(operator.value, self.globals.values)
            if primitive is not None:  # (op x y) computed in place for ints, by the call otherwise
                return Operand(
                    "int_op", operator.value, primitive=primitive, parts=tuple(operands), fallback=call
                )
        return Operand("code", call)

    @contextmanager
    def _shared_compilations(self) -> Iterator[None]:
        """While inside, an expression compiled again in the same scope and position gets the
        operand its first compilation made (kept per thread: pmap's workers may compile)."""
        if getattr(self._sharing, "table", None) is not None:
            yield
            return
        self._sharing.table = {}
        try:
            yield
        finally:
            self._sharing.table = None

    def _may_take_pairs(self, name: str, scope: Scope | None) -> bool:
        """Whether name could be a NamedProcedure (a task) when the call runs: a global bound to
        one, or not bound yet to anything (a resolver may give one)."""
        if scope is not None and scope.resolve(name) is not None:
            return False
        value = self.globals.values.get(name)
        if value is not None:
            return isinstance(value, NamedProcedure)
        return name not in self.globals.pending

    def _pair_call(self, node: FunctionCallNode, scope: Scope | None, tail: bool) -> Code:
        """`(name (param expr)...)`: pair syntax when name is a NamedProcedure (a task) declaring
        those params.

        Which it is can only be known when the operator's value is: otherwise the same form
        is an ordinary call whose arguments are calls. Both readings compile each expr; the
        second gets the first's compilation (see _shared_compilations).
        """
        call = self._call(
            self.compile_operand(node.head, scope),
            [self.compile_operand(a.value, scope) for a in node.arguments],
            node.span,
            scope,
            tail,
        )
        operator = self.compile(node.head, scope)
        pairs = [a.value for a in node.arguments if type(a.value) is FunctionCallNode]  # all are
        names = [pair.head.name for pair in pairs]
        codes = [self.compile(pair.args[0], scope) for pair in pairs]
        span = node.span

        def pair_or_call(env: Frame) -> Value:
            fn = operator(env)
            if isinstance(fn, NamedProcedure) and fn.accepts_pairs(names):
                try:
                    return fn.call_named(
                        {name: code(env) for name, code in zip(names, codes, strict=True)}, span
                    )
                except SexpError as err:
                    raise err.at(span)
            return call(env)

        return pair_or_call

    def compile_if(
        self,
        test: Node,
        then: Node,
        otherwise: Node | None,
        scope: Scope | None,
        tail: bool,
        span: Span | None,
    ) -> Code:
        """An if whose test and branches are read inline when they are simple."""
        globals_ = self.globals

        def missing(name: str, at: Span | None) -> Value:
            return globals_.missing(name, at, scope)

        return make_if(
            self.compile_operand(test, scope),
            self.compile_operand(then, scope, tail),
            None if otherwise is None else self.compile_operand(otherwise, scope, tail),
            span,
            missing,
            globals_.values,
        )

    def _call(
        self, operator: Operand, operands: list[Operand], span: Span | None, scope: Scope | None, tail: bool
    ) -> Code:
        globals_ = self.globals

        def missing(name: str, at: Span | None) -> Value:
            return globals_.missing(name, at, scope)

        return make_call(operator, operands, span, tail, missing, globals_.values)

    def compile_reference(self, node: Symbol, scope: Scope | None, span: Span | None = None) -> Code:
        """Read a variable: a frame slot when the name is local, else the global table."""
        name = node.name
        found = scope.resolve(name) if scope is not None else None
        if found is None:
            return self._global_reference(node, scope, span or node.span)
        depth, slot, maybe_unbound = found
        if maybe_unbound:
            return checked_reference(depth, slot, node)
        if depth == 0:
            return lambda env: env[slot]
        if depth == 1:
            return lambda env: env[0][slot]
        if depth == 2:
            return lambda env: env[0][0][slot]
        return lambda env: frame_at(env, depth)[slot]

    def _global_reference(self, node: Symbol, scope: Scope | None, span: Span | None) -> Code:
        name = node.name
        table = self.globals.values
        missing = self.globals.missing

        def reference(env: Frame) -> Value:
            try:
                return table[name]
            except KeyError:
                return missing(name, span, scope)

        variable = self.dynamic_variables.get(name)
        if variable is None:
            return reference
        binding = variable.binding

        def dynamic_reference(env: Frame) -> Value:
            value = binding()
            return reference(env) if value is UNBOUND else value

        return dynamic_reference

    def _compile_list(self, node: ListNode, scope: Scope | None, tail: bool) -> Code:
        if not node.items:
            return lambda env: []
        operator = self.compile_operand(node.items[0], scope)
        operands = [self.compile_operand(item, scope) for item in node.items[1:]]
        return self._call(operator, operands, node.span, scope, tail)

    def _compile_dict(self, node: DictNode, scope: Scope | None) -> Code:
        pairs = [
            (self.compile(node.items[i], scope), self.compile(node.items[i + 1], scope), node.items[i].span)
            for i in range(0, len(node.items), 2)
        ]

        def make_dict(env: Frame) -> Value:
            result: dict[str, Value] = {}
            for key_code, value_code, span in pairs:
                try:
                    key = dict_key(key_code(env))
                except SexpError as err:
                    raise err.at(span)
                result[key] = value_code(env)
            return result

        return make_dict


def _looks_like_pairs(node: FunctionCallNode) -> bool:
    """Every argument is a two-element list headed by a symbol: `(param expr)`."""
    return bool(node.arguments) and all(
        type(a.value) is FunctionCallNode and len(a.value.arguments) == 1 for a in node.arguments
    )
