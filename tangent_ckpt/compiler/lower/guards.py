"""Lower: the aliasing fence's run-time guards (``compiler/alias_guards.py``),
one ``rt.distinct_arrays(W, b, names=('W', 'b'), line=6)`` per guarded pair,
at the top of the function: a parameter's memory is the caller's for the whole
call, so one check when the gradient starts covers every write, loops included.
Each runs in the forward sweep only, as an ``assert`` does, at the user's line
of the write it protects (the line table places its error there)."""

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.lower.observers import emit_observation


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
