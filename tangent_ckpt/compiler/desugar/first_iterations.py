"""Desugar: a loop whose first iteration makes what the later ones use, peeled.

An optimiser's ``update`` often starts ``if self.m is None: self.m = {}``; once
its object is names (``scalar_objects.py``) and it is inlined into the training
loop, the loop reads::

    opt_m = None                       opt_m = None
    for i in range(3):                 i = 0
        if opt_m is None:              opt_m = {}
            opt_m = {}          ->     ... (the rest of the body)
        ... (the rest)                 for i in range(1, 3):
                                           ... (the rest of the body)

The test is true in the first iteration and false in every later one, so the
loop becomes its first iteration with the branch taken, then the loop over the
rest with the branch's ``else`` (if any) in its place; the rest of the compiler
then sees a name that is one thing throughout each loop (a dict of known keys
here, which a loop cannot change from ``None``).

A loop whose end is known only at run time (``for epoch in range(n_epochs)``) is
peeled under the test that it runs at all, the range itself (empty: false)::

    if range(0, n_epochs):
        epoch = 0
        opt_m = {}
        ... (the rest of the body)
        for epoch in range(1, n_epochs):
            ... (the rest of the body)

Only where that is surely what the code does: the loop runs over a ``range``
whose start and step are constants and whose end is a constant (with at least
one iteration) or arithmetic of names the loop does not bind (read again for the
rest of the loop, the same value), has no ``else``, ``break`` or
``continue``; the ``if`` is a statement of the loop's own body testing ``name
is None`` (or ``is not None``), ``name`` not the loop's variable; before the loop,
in the same block, ``name``'s last binding is ``name = None``; in the loop the
name is bound only in that branch, whose own statements bind it to a value that
is never None (a display, arithmetic, a number, a NumPy call).  Any other loop
is left as it is.
"""

import copy

import gast
import numpy as np

from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import SCOPES, statement_blocks

_NEVER_NONE = (gast.Dict, gast.List, gast.Tuple, gast.Set, gast.ListComp, gast.DictComp,
               gast.SetComp, gast.BinOp, gast.UnaryOp)


def peel_first_iterations(parsed, copied):
    """Peel, in place, every such loop of ``parsed.node``; ``copied(parsed, node)``
    copies a node keeping what ``parsed`` notes of its nodes (their helper)."""
    fnode = parsed.node
    local = {n.id for n in gast.walk(fnode) if isinstance(n, gast.Name) and
             not isinstance(n.ctx, gast.Load)}

    def resolve(func):
        return resolve_dotted(func, parsed.resolve, local)
    _block(resolve, fnode.body, lambda node: copied(parsed, node))


def _block(resolve, stmts, copied):
    k = 0
    while k < len(stmts):
        stmt = stmts[k]
        for block in statement_blocks(stmt):
            _block(resolve, block, copied)
        peeled = _peeled(resolve, stmts, k, copied)
        if peeled is None:
            k += 1
            continue
        stmts[k:k + 1] = peeled
        k += len(peeled)


def _peeled(resolve, stmts, k, copied):
    loop = stmts[k]
    bounds = _constant_range(resolve, loop)
    if bounds is None or loop.orelse or not isinstance(loop.target, gast.Name):
        return None
    start, stop, step = bounds
    if not isinstance(stop, int) and any(_binds(s, n.id) for s in loop.body
                                         for n in gast.walk(stop) if isinstance(n, gast.Name)):
        return None  # the end read again after the first iteration: the same names
    if isinstance(stop, int) and not range(start, stop, step) or \
            any(_skips(s) for s in loop.body):
        return None
    tests = {}  # position in the loop's body -> (name, whether the test is `is None`)
    for i, s in enumerate(loop.body):
        found = _none_test(s)
        if found is not None and found[0] != loop.target.id and \
                _first_binding_is_none(stmts[:k], found[0]) and \
                _bound_only_in(loop.body, s, found[0]) and \
                _binds_never_none(resolve, s.body if found[1] else s.orelse, found[0]):
            tests[i] = found
    if not tests:
        return None
    first = [copied(s) for s in loop.body]
    rest = loop.body
    first_body, rest_body = [], []
    for i, (a, b) in enumerate(zip(first, rest)):
        if i in tests:
            _, is_none = tests[i]
            first_body += a.body if is_none else a.orelse
            rest_body += b.orelse if is_none else b.body
        else:
            first_body.append(a)
            rest_body.append(b)
    target = gast.copy_location(gast.Assign(
        targets=[copy.deepcopy(loop.target)], value=gast.copy_location(
            gast.Constant(value=start, kind=None), loop.iter), type_comment=None), loop)
    if not isinstance(stop, int):  # the end known at run time: under `if range(...):`
        loop.iter = _range_call(loop.iter, start + step, copy.deepcopy(stop), step, short=True)
        loop.body = rest_body
        guard = gast.copy_location(gast.If(
            test=_range_call(loop.iter, start, stop, step, short=True),
            body=[target] + first_body + ([loop] if rest_body else []), orelse=[]), loop)
        return [guard]
    rest_range = range(start + step, stop, step)
    if not rest_range or not rest_body:
        return [target] + first_body
    loop.iter = _range_call(loop.iter, rest_range.start, rest_range.stop, rest_range.step)
    loop.body = rest_body
    return [target] + first_body + [loop]


def _range_call(where, start, stop, step, short=False):
    """``range(start, stop, step)`` (``stop`` an int or a node); ``short``: without
    a step of 1 and then a start of 0 (``range(n)``, ``range(1, n)``)."""
    def node(v):
        return v if isinstance(v, gast.AST) else gast.Constant(value=v, kind=None)
    args = [start, stop, step]
    if short and step == 1:
        args = [stop] if start == 0 else [start, stop]
    return gast.copy_location(gast.Call(
        func=gast.Name(id="range", ctx=gast.Load(), annotation=None, type_comment=None),
        args=[node(a) for a in args], keywords=[]), where)


def _constant_range(resolve, loop):
    """``(start, stop, step)`` of ``for ... in range(...)`` whose start and step
    are int constants and whose stop is one too, or else arithmetic of names and
    int constants (the node then), else None."""
    if not isinstance(loop, gast.For) or not isinstance(loop.iter, gast.Call) or \
            loop.iter.keywords or resolve(loop.iter.func) is not range:
        return None
    args = loop.iter.args
    if not 1 <= len(args) <= 3 or not all(_int_constant(a) for k, a in enumerate(args)
                                          if k != (0 if len(args) == 1 else 1)):
        return None
    values = [a.value if _int_constant(a) else a for a in args]
    start, stop, step = (0, values[0], 1) if len(values) == 1 else \
        (values[0], values[1], values[2] if len(values) == 3 else 1)
    if not isinstance(stop, int) and not all(
            isinstance(n, _ARITHMETIC) or _int_constant(n) for n in gast.walk(stop)):
        return None
    return (start, stop, step) if step else None


#: the nodes of a range's end read twice (once for the test, once for the rest)
_ARITHMETIC = (gast.Name, gast.Load, gast.BinOp, gast.UnaryOp, gast.operator, gast.unaryop)


def _int_constant(node):
    return isinstance(node, gast.Constant) and type(node.value) is int


def _skips(stmt):
    """Has ``stmt`` a ``break`` or ``continue`` of the loop it is in (not of a loop
    nested in it)?  An iteration could then end before the test, and the peeled
    first iteration is no loop to leave.  (A ``return`` or ``raise`` ends the
    loop, so no later iteration meets the name still None.)"""
    stack = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, (gast.Break, gast.Continue)):
            return True
        stack.extend(child for child in gast.iter_child_nodes(node)
                     if not isinstance(child, SCOPES + (gast.For, gast.While)))
    return False


def _none_test(stmt):
    """``(name, True)`` for ``if name is None:``, ``(name, False)`` for ``if name
    is not None:``, else None."""
    if not isinstance(stmt, gast.If):
        return None
    test = stmt.test
    if isinstance(test, gast.Compare) and isinstance(test.left, gast.Name) and \
            len(test.ops) == 1 and isinstance(test.ops[0], (gast.Is, gast.IsNot)) and \
            isinstance(test.comparators[0], gast.Constant) and test.comparators[0].value is None:
        return test.left.id, isinstance(test.ops[0], gast.Is)
    return None


def _binds(node, name):
    return any(isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load)
               for n in gast.walk(node))


def _first_binding_is_none(before, name):
    """Is ``name = None`` the last statement of ``before`` binding ``name``?"""
    for stmt in reversed(before):
        if not _binds(stmt, name):
            continue
        values = [v for t, v in _named_values(stmt) if t == name]
        return bool(values) and all(isinstance(v, gast.Constant) and v.value is None
                                    for v in values)
    return False


def _bound_only_in(body, test_stmt, name):
    """Is ``name`` bound in the loop's ``body`` only inside ``test_stmt``'s branches
    (never in its test)?"""
    return not any(_binds(s, name) for s in body if s is not test_stmt) and \
        not _binds(test_stmt.test, name)


def _binds_never_none(resolve, branch, name):
    """Does a statement of ``branch`` itself bind ``name`` to a value never None,
    and no other statement of the branch bind it to None?"""
    bound = False
    for stmt in branch:
        values = [v for t, v in _named_values(stmt) if t == name]
        if values:
            if not all(_never_none(resolve, v) for v in values):
                return False
            bound = True
        elif _binds(stmt, name):
            return False
    return bound


def _named_values(stmt):
    """``[(name, value node)]`` an assignment binds (``a, b = {}, {}`` item by
    item); what it binds another way is not among them."""
    if not isinstance(stmt, gast.Assign):
        return []
    pairs = []
    for target in stmt.targets:
        stack = [(target, stmt.value)]
        while stack:
            t, v = stack.pop()
            if isinstance(t, gast.Name):
                pairs.append((t.id, v))
            elif isinstance(t, (gast.Tuple, gast.List)) and isinstance(v, (gast.Tuple, gast.List)) \
                    and len(t.elts) == len(v.elts) and \
                    not any(isinstance(e, gast.Starred) for e in t.elts + v.elts):
                stack.extend(zip(t.elts, v.elts))
    return pairs


def _never_none(resolve, value):
    if isinstance(value, _NEVER_NONE):
        return True
    if isinstance(value, gast.Constant):
        return value.value is not None
    if isinstance(value, gast.Call):
        fn = resolve(value.func)
        module = getattr(fn, "__module__", None) or ""
        return isinstance(fn, np.ufunc) or module.split(".")[0] == "numpy"
    return False
