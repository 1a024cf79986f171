"""Lower: the refusal of a ``for`` loop over a user generator that desugar did not
inline (``desugar/inline_functions.py`` writes the loop body at each ``yield``);
the error says which construct stood in its way."""

import inspect

import gast

from tangent_ckpt.compiler.lower.scopes import LocalFunction, to_source
from tangent_ckpt.errors import UnsupportedSyntaxError


def generator_function(fn):
    """Is ``fn`` (an object or a LocalFunction) a generator function of the user's?"""
    if isinstance(fn, LocalFunction):
        return any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in _own_nodes(fn.node))
    return inspect.isgeneratorfunction(fn)


def _own_nodes(fnode):
    """The nodes of ``fnode``'s body, not those of a nested ``def`` or ``lambda``."""
    stack = list(fnode.body)
    while stack:
        n = stack.pop()
        yield n
        for child in gast.iter_child_nodes(n):
            if not isinstance(child, (gast.FunctionDef, gast.Lambda)):
                stack.append(child)


def _own_continue(stmts):
    """A ``continue`` of the loop whose body is ``stmts`` (not of a loop nested in it)."""
    for s in stmts:
        if isinstance(s, gast.Continue):
            return True
        if isinstance(s, (gast.For, gast.While)):
            if _own_continue(s.orelse):
                return True
        elif not isinstance(s, (gast.FunctionDef, gast.ClassDef)) and (any(
                _own_continue(getattr(s, f, [])) for f in ("body", "orelse", "finalbody")) or
                any(_own_continue(h.body) for h in getattr(s, "handlers", []))):
            return True
    return False


def refuse_generator_loop(lo, stmt, fn):
    """The error for ``for target in gen(...): body`` left to the lowering."""
    spelled = lo.current_scope.parsed.line_text(stmt.lineno).rstrip(":") or \
        f"for {to_source(stmt.target)} in {to_source(stmt.iter)}"
    if stmt.orelse:
        return lo.error(UnsupportedSyntaxError, "for ... else over a generator", stmt,
                        construct=spelled, hint="use a flag variable instead of the else clause")
    if _own_continue(stmt.body):
        return lo.error(UnsupportedSyntaxError, f"`{spelled}`: continue inside a `with` or "
                        "a loop's `else` in a loop over a generator", stmt, construct=spelled,
                        hint="write the rest of the body under an if")
    if isinstance(fn, LocalFunction):
        fnode, parsed = fn.node, fn.scope.parsed
    else:
        parsed = lo.callables.parsed(fn, stmt.iter)
        fnode = parsed.node
    statement_yields = {id(s.value) for s in _own_nodes(fnode) if isinstance(s, gast.Expr)}
    for node in _own_nodes(fnode):
        if isinstance(node, gast.YieldFrom):
            return lo.error(UnsupportedSyntaxError, "yield from", node, construct="yield from",
                            hint="loop over the inner generator and yield its items",
                            parsed=parsed)
        if isinstance(node, gast.Yield) and node.value is None:
            return lo.error(UnsupportedSyntaxError, "a bare yield", node, construct="yield",
                            hint="yield the loop's items", parsed=parsed)
        if isinstance(node, gast.Yield) and id(node) not in statement_yields:
            return lo.error(UnsupportedSyntaxError, "a yield used as a value", node,
                            construct="yield expression", hint="write yield as a statement",
                            parsed=parsed)
    return lo.error(UnsupportedSyntaxError, f"`{spelled}`: a loop over a generator that "
                    "could not be inlined (a return beside a break or continue in its body, "
                    "or a recursive or very long generator)", stmt, construct=spelled,
                    hint="loop over range(...) and call a function that returns the items "
                         "instead")
