"""Desugar: loops over the user's generators made plain for ``inline_functions.py``.

``inline_functions.py`` writes ``for target in gen(...)`` over a generator
function of the user's as the generator's statements, the loop's body at each
``yield``.  Two spellings of that loop reach it only through this pass:

- a comprehension iterating such a call (``sum(np.sum(s) for s in trajectory(x,
  n))``), written as its loop first by ``comprehension_loops.py``
  (:func:`~.comprehension_loops.over_user_generators` chooses it);
- ``for k, s in enumerate(gen(...), start)``, written here as the loop over the
  generator counting its trips::

      for k, s in enumerate(states(x, n)):      ->   k_next = 0
          body                                       for s in states(x, n):
                                                         k = k_next
                                                         k_next = k_next + 1
                                                         body

  ``k`` is bound at the top of each trip, as ``enumerate`` binds it: after the
  loop it holds the last trip's count, and it is unbound where the loop made no
  trip; a ``continue`` or ``break`` in the body leaves the count as
  ``enumerate`` does.  The start is a constant or a name (evaluated after the
  generator's arguments, as the call evaluates it; nothing between can change a
  name).
"""

import inspect

import gast

from tangent_ckpt.compiler.desugar.local_bindings import (
    builtins_meant, local_names, own_scope_walk,
)
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import (
    block_holding, fresh_name, located, name_node, names_taken, store_node,
)


def user_generator_call(parsed, fnode=None):
    """The test of a node: a call of the user's generator function -- a
    module-level one (``parsed.resolve`` finds it), or a ``def`` in ``fnode`` (by
    default ``parsed.node``) that no other statement binds."""
    fnode = fnode if fnode is not None else parsed.node
    local = local_names(fnode)
    defs = [n for n in gast.walk(fnode) if isinstance(n, gast.FunctionDef) and n is not fnode]
    nested = {d.name for d in defs if [e.name for e in defs].count(d.name) == 1 and
              any(isinstance(n, (gast.Yield, gast.YieldFrom)) for st in d.body
                  for n in own_scope_walk(st))}

    def called(node):
        if not isinstance(node, gast.Call):
            return False
        if isinstance(node.func, gast.Name) and node.func.id in local:
            return node.func.id in nested
        return inspect.isgeneratorfunction(resolve_dotted(node.func, parsed.resolve, local))
    return called


def count_enumerated_generators(parsed, fnode=None):
    """Rewrite, in ``fnode`` (by default ``parsed.node``; a helper's template,
    ``parsed`` its module's), each ``for k, t in enumerate(gen(...))`` over a call
    of the user's generator as the loop over the generator counting its trips
    (see the module), in place."""
    fnode = fnode if fnode is not None else parsed.node
    loops = [n for n in gast.walk(fnode) if isinstance(n, gast.For) and _enumerated(n)]
    if not loops or not builtins_meant({"enumerate"}, fnode, parsed.resolve):
        return
    called = user_generator_call(parsed, fnode)
    taken = names_taken(fnode)
    for loop in loops:
        if not called(loop.iter.args[0]):
            continue
        index, item = loop.target.elts
        start = loop.iter.args[1] if len(loop.iter.args) == 2 else \
            gast.Constant(value=0, kind=None)
        counter = fresh_name(f"{index.id}_next", taken)
        taken.add(counter)
        before = located(gast.Assign(targets=[store_node(counter)], value=start,
                                     type_comment=None), loop)
        top = [located(gast.Assign(targets=[store_node(index.id)], value=name_node(counter),
                                   type_comment=None), loop),
               located(gast.Assign(targets=[store_node(counter)], value=gast.BinOp(
                   left=name_node(counter), op=gast.Add(),
                   right=gast.Constant(value=1, kind=None)), type_comment=None), loop)]
        loop.iter, loop.target = loop.iter.args[0], item
        loop.body[:0] = top
        block, k = block_holding(fnode, loop)
        block.insert(k, before)


def _enumerated(loop):
    """``for k, t in enumerate(call)`` or ``enumerate(call, start)`` (a constant or a
    name), ``k`` a name, no ``else``."""
    it, target = loop.iter, loop.target
    return isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and \
        it.func.id == "enumerate" and not it.keywords and len(it.args) in (1, 2) and \
        isinstance(it.args[0], gast.Call) and \
        (len(it.args) == 1 or isinstance(it.args[1], (gast.Constant, gast.Name))) and \
        isinstance(target, (gast.Tuple, gast.List)) and len(target.elts) == 2 and \
        isinstance(target.elts[0], gast.Name) and not loop.orelse
