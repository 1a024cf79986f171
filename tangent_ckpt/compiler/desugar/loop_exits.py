"""Desugar: the ways out of a loop other than its test and ``break`` --
``for ... else``, ``while ... else`` and ``return`` inside a loop -- written with
flags and ``break``, the forms the lowering and the checkpointer already take.

``for``/``while ... else``: the ``else`` body runs when the loop ends without
``break``.  Each ``break`` of the loop first sets a flag, and the ``else`` body
follows the loop under ``if not broke_out:``; a loop without a ``break`` of its
own always runs it, so it simply follows the loop::

    for x in xs:                     broke_out = False
        if c(x):                     for x in xs:
            break          ->            if c(x):
    else:                                    broke_out = True
        y = ...                              break
                                     if not broke_out:
                                         y = ...

``return`` inside a loop: the value goes into a result name, a flag says that
the function returned, and ``break`` leaves the loop; each enclosing loop breaks
too, right after the inner loop, when the flag is set, and at the function's
level ``if returned: return result`` follows the outermost loop (the lowering
takes the statements after that ``if`` as its other path)::

    for i in range(n):               returned = False
        x = step(x)                  for i in range(n):
        if done(x):        ->            x = step(x)
            return x                     if done(x):
    return 0.0                               result = x
                                             returned = True
                                             break
                                     if returned:
                                         return result
                                     return 0.0

Nothing runs between the ``return`` and the ``return result`` it becomes, so
the function gives the same value and has the same effects as written.  A
``while True`` loop without a ``break`` of its own ends only by its returns:
``return result`` follows it unconditionally (the function still always returns).
A ``break`` makes a loop a while-like loop: it is checkpointed with the online
schedule (docs/loops.md).  It runs after ``tuple_loops.py``, which unrolls a loop
over a tuple of arrays with its returns as they are.  Each function of the tree
(nested ones too, which the lowering may inline) is rewritten on its own; the
``else`` bodies first, inner loops before outer ones, so a ``break`` or
``continue`` in an ``else`` body belongs to the loop around it, as in Python.
"""

import gast

from tangent_ckpt.compiler.desugar.view_shape import (
    fresh_name, located, name_node, names_taken, store_node,
)

_BLOCKS = ("body", "orelse", "finalbody")
_LOOPS = (gast.For, gast.While)
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)


def desugar_loop_exits(fnode, taken=None):
    """Rewrite, in place, every ``for``/``while ... else`` and every ``return``
    inside a loop of ``fnode`` and of the functions defined in it.  ``taken``: the
    names the flags must not be, besides ``fnode``'s own (updated in place)."""
    taken = names_taken(fnode) if taken is None else _with_names_of(fnode, taken)
    functions = [n for n in gast.walk(fnode)
                 if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef))]
    for function in functions:
        _without_else(function.body, taken)
        function.body = _Returns(function, taken).block(function.body, 0, ends=True)


def _with_names_of(fnode, taken):
    taken |= names_taken(fnode)
    return taken


# --- for/while ... else ----------------------------------------------------------

def _without_else(stmts, taken):
    """``stmts`` with every loop's ``else`` body moved after the loop, inner loops
    first."""
    out = []
    for s in stmts:
        if not isinstance(s, _SCOPES):
            _in_blocks(s, lambda block: _without_else(block, taken))
        if isinstance(s, _LOOPS) and s.orelse:
            out.extend(_else_after(s, taken))
        else:
            out.append(s)
    stmts[:] = out


def _else_after(loop, taken):
    rest, loop.orelse = loop.orelse, []
    if not _own_breaks(loop.body):
        return [loop] + rest  # no break: the else body always runs
    flag = fresh_name("broke_out", taken)
    _flag_breaks(loop.body, flag)
    test = gast.UnaryOp(op=gast.Not(), operand=name_node(flag))
    return [_set(flag, False, loop), loop, _if(test, rest, loop)]


def _if(test, body, where):
    node = located(gast.If(test=test, body=[], orelse=[]), where)
    node.body = body  # the user's statements keep their own lines
    return node


def _own_breaks(stmts):
    """Whether ``stmts`` (a loop's body) hold a ``break`` of that loop."""
    return any(isinstance(s, gast.Break) for s in _own_statements(stmts))


def _own_statements(stmts):
    """The statements of a loop's body, not those of the loops or functions in it."""
    blocks = []
    for s in stmts:
        yield s
        if not isinstance(s, _SCOPES):
            _in_blocks(s, blocks.append, loops=False)
    for block in blocks:
        yield from _own_statements(block)


def _flag_breaks(stmts, flag):
    """``flag = True`` before each ``break`` of the loop whose body is ``stmts``."""
    k = 0
    while k < len(stmts):
        s = stmts[k]
        if isinstance(s, gast.Break):
            stmts.insert(k, _set(flag, True, s))
            k += 1
        elif not isinstance(s, _SCOPES):
            _in_blocks(s, lambda block: _flag_breaks(block, flag), loops=False)
        k += 1


# --- return inside a loop ----------------------------------------------------------

class _Returns:
    """The ``return`` statements inside loops of one function, as flags and breaks
    (one flag and one result name for the function, named when first needed)."""

    def __init__(self, function, taken):
        self.taken = taken
        self.flag = None
        self.result = None
        self.flagged = True  # whether the outermost loop being rewritten needs the flag
        # a value to return (a bare `return` among them returns None, as in Python)
        self.valued = any(r.value is not None for r in _returns_in_loops(function.body))

    def block(self, stmts, depth, ends=False):
        """``stmts`` rewritten; ``depth``: how many loops of the function hold them;
        ``ends``: ``stmts`` is the function's body."""
        out = []
        for s in stmts:
            if isinstance(s, gast.Return) and depth:
                out.extend(self.leave(s))
            elif isinstance(s, _LOOPS) and _returns_inside(s):
                only_by_return = _ends_only_by_return(s)
                # a bare `return` at the function's end is its end (a generator's too)
                falls_off = ends and s is stmts[-1] and not self.valued
                if not depth:  # a loop left only by its own returns needs no flag
                    self.flagged = not (only_by_return or falls_off) or any(
                        isinstance(n, _LOOPS) and _returns_inside(n)
                        for n in _walk_function(s) if n is not s)
                s.body = self.block(s.body, depth + 1)
                s.orelse = self.block(s.orelse, depth)
                if depth:  # the loop around this one ends too
                    out += [s, _if(name_node(self.flag), [located(gast.Break(), s)], s)]
                else:
                    out += [_set(self.flag, False, s)] if self.flagged else []
                    out += [s] if falls_off else [s, self.returned_after(s, only_by_return)]
            else:
                if not isinstance(s, _SCOPES):
                    _in_blocks(s, lambda block: self.replace(block, depth))
                out.append(s)
        return out

    def replace(self, block, depth):
        block[:] = self.block(block, depth)

    def leave(self, ret):
        """``return value`` inside a loop: ``result = value``, the flag, ``break``."""
        leave = []
        if self.valued:
            if self.result is None:
                self.result = fresh_name("result", self.taken)
            value = ret.value if ret.value is not None else \
                located(gast.Constant(value=None, kind=None), ret)
            assign = gast.Assign(targets=[located(store_node(self.result), ret)], value=value,
                                 type_comment=None)
            leave.append(gast.copy_location(assign, ret))
        if self.flagged:
            if self.flag is None:
                self.flag = fresh_name("returned", self.taken)
            leave.append(_set(self.flag, True, ret))
        return leave + [located(gast.Break(), ret)]

    def returned_after(self, loop, only_by_return):
        """What follows the function's outermost loop holding returns."""
        value = name_node(self.result) if self.result is not None else None
        ret = located(gast.Return(value=value), loop)
        if only_by_return:
            return ret  # while True: every way out is a return
        return _if(name_node(self.flag), [ret], loop)


def _returns_in_loops(stmts, in_loop=False):
    for s in stmts:
        if isinstance(s, gast.Return) and in_loop:
            yield s
        elif not isinstance(s, _SCOPES):
            blocks = []
            _in_blocks(s, blocks.append)
            for block in blocks:
                yield from _returns_in_loops(block, in_loop or isinstance(s, _LOOPS))


def _returns_inside(loop):
    return any(isinstance(n, gast.Return) for n in _walk_function(loop))


def _ends_only_by_return(loop):
    """``while True`` (a constant true test) without a ``break`` of its own."""
    return isinstance(loop, gast.While) and isinstance(loop.test, gast.Constant) and \
        bool(loop.test.value) and not _own_breaks(loop.body)


# --- small helpers ---------------------------------------------------------------

def _in_blocks(s, rewrite, loops=True):
    """Apply ``rewrite`` to each statement block of ``s`` (``loops=False``: not to
    the body of a loop, whose ``break`` statements are its own)."""
    for field in _BLOCKS:
        if field == "body" and not loops and isinstance(s, _LOOPS):
            continue
        block = getattr(s, field, None)
        if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
            rewrite(block)
    for handler in getattr(s, "handlers", []):
        rewrite(handler.body)


def _walk_function(node):
    """The nodes under ``node``, not those of functions or classes defined there."""
    yield node
    for child in gast.iter_child_nodes(node):
        if not isinstance(child, _SCOPES):
            yield from _walk_function(child)


def _set(flag, value, where):
    return located(gast.Assign(targets=[store_node(flag)],
                               value=gast.Constant(value=value, kind=None),
                               type_comment=None), where)
