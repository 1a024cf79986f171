"""Lower: a user generator as a loop source.

``for W, b in unpack_layers(weights):`` where ``unpack_layers`` is a generator
function: the generator is inlined, and at each ``yield`` the loop target is
assigned the yielded value and the loop body runs there.  The loops of the
generator are the loops of the program (taped or checkpointed as any other).
"""

import inspect

import gast

from tangent_ckpt.compiler.lower.scopes import (
    CompileTimeValue, LocalFunction, TupleValue, to_source,
)
from tangent_ckpt.errors import UnsupportedSyntaxError


def generator_function(fn):
    """Is ``fn`` (an object or a LocalFunction) a generator function of the user's?"""
    if isinstance(fn, LocalFunction):
        return any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in _own_nodes(fn.node))
    return inspect.isgeneratorfunction(fn)


def _own_nodes(fnode):
    stack = list(fnode.body)
    while stack:
        node = stack.pop()
        yield node
        for child in gast.iter_child_nodes(node):
            if not isinstance(child, (gast.FunctionDef, gast.Lambda)):
                stack.append(child)


def generator_loop(lo, stmt, fn):
    """Lower ``for target in gen(...): body`` by inlining ``gen`` with the body
    at each of its ``yield`` statements."""
    caller_scope, caller_ctx = lo.current_scope, lo.ctx
    spelled = caller_scope.parsed.line_text(stmt.lineno).rstrip(":") or \
        f"for {to_source(stmt.target)} in {to_source(stmt.iter)}"
    if stmt.orelse:
        raise lo.error(UnsupportedSyntaxError, "for ... else over a generator", stmt,
                       construct=spelled, hint="use a flag variable instead of the else clause")
    for node in gast.walk(stmt):
        if isinstance(node, gast.Break) or (isinstance(node, gast.Return) and node in stmt.body):
            raise lo.error(UnsupportedSyntaxError, f"`{spelled}`: break out of a loop over a "
                           "generator", node,
                           construct=spelled, hint="loop over range(...) and call a function "
                                                   "that returns the items instead")

    def at_yield(ynode):
        if ynode.value is None:
            raise lo.error(UnsupportedSyntaxError, "a bare yield", ynode, construct="yield",
                           hint="yield the loop's items")
        value = _yielded(lo, ynode.value, stmt.target)
        generator_scope, generator_ctx = lo.current_scope, lo.ctx
        lo.current_scope = caller_scope
        lo.ctx = dict(caller_ctx, loop={"break_flag": None})
        try:
            lo.assignments.assign_operand(stmt.target, value, stmt)
            lo.statements.block(stmt.body)
        finally:
            lo.current_scope, lo.ctx = generator_scope, generator_ctx

    if isinstance(fn, LocalFunction):
        fnode, scope, parsed = fn.node, fn.scope, fn.scope.parsed
    else:
        parsed = lo.callables.parsed(fn, stmt.iter)
        fnode, scope = parsed.node, None
    statement_yields = {id(s.value) for s in _own_nodes(fnode) if isinstance(s, gast.Expr)}
    for node in _own_nodes(fnode):
        if isinstance(node, gast.YieldFrom):
            raise lo.error(UnsupportedSyntaxError, "yield from", node, construct="yield from",
                           hint="loop over the inner generator and yield its items")
        if isinstance(node, gast.Yield) and id(node) not in statement_yields:
            raise lo.error(UnsupportedSyntaxError, "a yield used as a value", node,
                           construct="yield expression", hint="write yield as a statement")
    lo.inlining.inline(fnode, scope, stmt.iter, "item", parsed, yield_to=at_yield)


def _yielded(lo, node, target):
    """The yielded value, its temporaries named after the loop's targets
    (``yield Ws[k], bs[k]`` into ``W, b`` gives ``W_item``, ``b_item``)."""
    if isinstance(node, gast.Tuple) and isinstance(target, gast.Tuple) and \
            len(node.elts) == len(target.elts) and \
            all(isinstance(t, gast.Name) for t in target.elts):
        items = []
        for e, t in zip(node.elts, target.elts):
            v = lo.expressions.value(e, t.id)
            items.append(v if isinstance(v, (TupleValue, CompileTimeValue))
                         else lo.expressions.atomize(v, t.id))
        return TupleValue(items)
    hint = target.id if isinstance(target, gast.Name) else "item"
    return lo.expressions.value(node, hint)
