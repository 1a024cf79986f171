"""Lower: the aliasing fence's run-time guards (``compiler/alias_guards.py``),
one ``rt.distinct_arrays(W, b, names=('W', 'b'), line=6)`` per guarded pair,
at the top of the function: a parameter's memory is the caller's for the whole
call, so one check when the gradient starts covers every write, loops included.
Each runs in the forward sweep only, as an ``assert`` does, at the user's line
of the write it protects (the line table places its error there).  A helper's
guards need no run-time check where its call gives one variable for both
parameters: that call is refused as it is lowered."""

import gast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.lower.observers import emit_observation
from tangent_ckpt.errors import UnsupportedSyntaxError


def emit_guards(lo, guards, node):
    """Emit ``guards`` (alias_guards.Guard) into the statements being written,
    naming the arrays as the function's first statement sees them: a parameter
    (a container parameter is one variable per element: not an array, not
    guarded) or the bound module-level array."""
    for guard in guards:
        written = lo.expressions.load_name(guard.written, node)
        other = lo.expressions.load_name(guard.other, node)
        if not (isinstance(written, ir.Name) and isinstance(other, ir.Name)):
            continue
        check = sx.rt("distinct_arrays", ir.operand_node(written), ir.operand_node(other),
                      names=sx.const((guard.written, guard.other)), line=sx.const(guard.line))
        local = tuple(n.id for n in (written, other) if n.id not in lo.bindings)
        emit_observation(lo, check, local, guard.line)


def refuse_a_variable_given_twice(lo, guards, fnode, call):
    """A helper whose fence noted ``guards`` (a write into parameter ``W`` while
    ``b`` is read afterwards), called with one variable for both (``step(y,
    y)``): the write changes what the helper reads, which the inlined value
    semantics would not follow.  Refused at the call, naming both parameters."""
    args = fnode.args
    given = dict(zip([a.id for a in args.posonlyargs + args.args], call.args))
    given.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
    for guard in guards:
        written, other = given.get(guard.written), given.get(guard.other)
        if isinstance(written, gast.Name) and isinstance(other, gast.Name) and \
                written.id == other.id:
            raise lo.error(UnsupportedSyntaxError,
                           f"{fnode.name}() is given '{written.id}' for both '{guard.written}' "
                           f"and '{guard.other}': its write into '{guard.written}' (line "
                           f"{guard.line}) changes '{guard.other}', which it reads afterwards, "
                           f"and the compiler would differentiate the two as separate arrays",
                           call, construct=f"the same array for two parameters of "
                                           f"{fnode.name}()",
                           hint=f"let {fnode.name}() take the array once when both names are "
                                f"meant to change together")
