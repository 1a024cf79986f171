"""Desugar: the methods that reorder or shorten a list the function builds
itself, as the slices and concatenations that make the same list.

    buf.pop(0)              ->  buf = buf[1:]
    v = buf.pop()           ->  v = buf[-1]; buf = buf[:-1]
    buf.insert(k, v)        ->  buf = buf[:k] + [v] + buf[k:]
    buf.reverse()           ->  buf = buf[::-1]
    buf.clear()             ->  buf = []
    buf.sort(reverse=True)  ->  buf = sorted(buf, reverse=True)
    del buf[k], del buf[a:b] ->  buf = buf[:k] + buf[k + 1:], buf[:a] + buf[b:]

A history kept to its last few entries (``hist.append(f); if len(hist) > 3:
hist.pop(0)``, the Adams-Bashforth multistep form) was refused as a call made
for its effect.  Python changes the list in place and these rebind the name
to a new list, which is the same thing wherever nothing else holds the list:
only a list the function makes and holds under one name (``held_lists.py``)
is rewritten, and not where a loop over it runs while it changes (Python's
iterator would see the change).  The indices are constants (``pop(k)``,
``del buf[k]``), except ``insert``'s, a constant or a name, whose slices mean
what ``insert`` means for any integer.  Anything else is left as written, for
the lowering, which refuses what it cannot follow."""

import copy

import gast

from tangent_ckpt.compiler.desugar.held_lists import held_lists, mentions
from tangent_ckpt.compiler.desugar.local_bindings import builtins_meant, own_statements

_REWRITTEN = ("pop", "insert", "reverse", "clear", "sort")


def write_list_methods(parsed, fnode=None):
    """Rewrite, in ``fnode`` (default ``parsed.node``, whose names ``parsed``
    resolves), the methods above on the lists it makes as slices of them."""
    fnode = parsed.node if fnode is None else fnode
    names = {_receiver(s) for s in own_statements(fnode.body)} - {None}
    if not names:
        return
    held = held_lists(fnode, parsed.resolve)
    lists = {n for n in names if n in held and not _changed_in_a_loop_over_it(n, fnode)}
    if lists:
        sortable = bool(builtins_meant(("sorted",), fnode, parsed.resolve))
        _Rewrite(lists, fnode, sortable).visit(fnode)


def _changed_in_a_loop_over_it(name, fnode):
    """Python's iterator sees the list change under it (``for v in ws: ws.pop()``)."""
    return any(isinstance(loop, gast.For) and mentions(loop.iter, name) and
               any(_receiver(s) == name for s in own_statements(loop.body))
               for loop in gast.walk(fnode))


def _method_call(node):
    """``(name, method, call)`` of ``name.method(...)``, or None."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
            isinstance(node.func.value, gast.Name) and node.func.attr in _REWRITTEN and \
            all(node.func.attr == "sort" and k.arg == "reverse" and
                isinstance(k.value, gast.Constant) and isinstance(k.value.value, bool)
                for k in node.keywords) and \
            not any(isinstance(a, gast.Starred) for a in node.args):
        return node.func.value.id, node.func.attr, node
    return None


def _statement_call(s):
    """The rewritten method call a statement makes: ``buf.pop(0)`` alone, or
    as the whole value of an assignment to one target."""
    if isinstance(s, gast.Expr):
        return _method_call(s.value)
    if isinstance(s, gast.Assign) and len(s.targets) == 1:
        found = _method_call(s.value)
        if found and found[1] == "pop":
            return found
    return None


def _receiver(s):
    found = _statement_call(s)
    if found is not None and _rewrite(s, found) is not None:
        return found[0]
    if isinstance(s, gast.Delete) and len(s.targets) == 1 and \
            isinstance(s.targets[0], gast.Subscript) and \
            isinstance(s.targets[0].value, gast.Name) and _deleted(s.targets[0]) is not None:
        return s.targets[0].value.id
    return None


def _int_constant(node):
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and \
            isinstance(node.operand, gast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return None


# --- the rewrite ----------------------------------------------------------------
def _load(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _store(name):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def _slice(name, lower=None, upper=None, step=None):
    """``name[lower:upper:step]``; each bound an int constant, a node or None."""
    return gast.Subscript(value=_load(name), slice=gast.Slice(
        lower=_bound(lower), upper=_bound(upper), step=_bound(step)), ctx=gast.Load())


def _bound(value):
    if value is None or isinstance(value, gast.AST):
        return value
    return gast.Constant(value=value, kind=None)


def _plus(*parts):
    acc = parts[0]
    for part in parts[1:]:
        acc = gast.BinOp(left=acc, op=gast.Add(), right=part)
    return acc


def _without(name, k):
    """The list ``name`` without its item ``k`` (a constant)."""
    if k == 0:
        return _slice(name, lower=1)
    if k == -1:
        return _slice(name, upper=-1)
    return _plus(_slice(name, upper=k), _slice(name, lower=k + 1))


def _deleted(target):
    """The list ``del target`` leaves, as a function of the name, or None."""
    part = target.slice
    if isinstance(part, gast.Slice):
        if part.step is not None:
            return None
        lower = None if part.lower is None else _int_constant(part.lower)
        upper = None if part.upper is None else _int_constant(part.upper)
        if (part.lower is not None and (lower is None or lower < 0)) or \
                (part.upper is not None and (upper is None or upper < 0)):
            return None
        if lower is not None and upper is not None and lower > upper:
            return None
        if upper is None:
            return lambda name: _slice(name, upper=lower) if lower is not None else gast.List(
                elts=[], ctx=gast.Load())
        if lower is None:
            return lambda name: _slice(name, lower=upper)
        return lambda name: _plus(_slice(name, upper=lower), _slice(name, lower=upper))
    k = _int_constant(part)
    if k is None:
        return None
    return lambda name: _without(name, k)


def _rewrite(s, found):
    """The statements that do what ``s`` (which calls ``found``) does, or None."""
    name, method, call = found
    args = call.args
    if any(mentions(a, name) for a in args):
        return None
    if method == "pop":
        if len(args) > 1:
            return None
        k = -1 if not args else _int_constant(args[0])
        if k is None:
            return None
        rest = [gast.Assign(targets=[_store(name)], value=_without(name, k), type_comment=None)]
        if isinstance(s, gast.Expr):
            return rest
        item = gast.Subscript(value=_load(name), slice=gast.Constant(value=k, kind=None),
                              ctx=gast.Load())
        target = s.targets[0]
        if isinstance(target, gast.Name) and target.id != name:
            return [gast.Assign(targets=[target], value=item, type_comment=None)] + rest
        return None  # another target is evaluated after the call: left as written
    if not isinstance(s, gast.Expr):
        return None
    if method == "insert" and len(args) == 2:
        at, value = args
        if _int_constant(at) == 0:
            made = _plus(gast.List(elts=[value], ctx=gast.Load()), _load(name))
        elif _int_constant(at) is not None or isinstance(at, gast.Name):  # read twice
            made = _plus(_slice(name, upper=at), gast.List(elts=[value], ctx=gast.Load()),
                         _slice(name, lower=copy.deepcopy(at)))
        else:
            return None
        return [gast.Assign(targets=[_store(name)], value=made, type_comment=None)]
    if method == "reverse" and not args:
        return [gast.Assign(targets=[_store(name)], value=_slice(name, step=-1),
                            type_comment=None)]
    if method == "clear" and not args:
        return [gast.Assign(targets=[_store(name)], value=gast.List(elts=[], ctx=gast.Load()),
                            type_comment=None)]
    if method == "sort" and not args:  # (reverse=True the only keyword _method_call lets by)
        ordered = gast.Call(func=_load("sorted"), args=[_load(name)],
                            keywords=copy.deepcopy(call.keywords))
        return [gast.Assign(targets=[_store(name)], value=ordered, type_comment=None)]
    return None


class _Rewrite(gast.NodeTransformer):
    def __init__(self, lists, root, sortable):
        self.lists = lists
        self.root = root
        self.sortable = sortable  # `sorted` means the builtin here

    def visit_FunctionDef(self, node):
        if node is self.root:  # a nested function's names are its own
            self.generic_visit(node)
        return node

    def visit_Lambda(self, node):
        return node

    def visit_ClassDef(self, node):
        return node

    def _located(self, statements, s):
        for new in statements:
            gast.copy_location(new, s)
            for sub in gast.walk(new):
                if not hasattr(sub, "lineno") and hasattr(s, "lineno"):
                    gast.copy_location(sub, s)
        return statements

    def visit_Expr(self, node):
        return self._statement(node)

    def visit_Assign(self, node):
        return self._statement(node)

    def _statement(self, s):
        found = _statement_call(s)
        if found is None or found[0] not in self.lists or \
                (found[1] == "sort" and not self.sortable):
            return s
        new = _rewrite(s, found)
        return s if new is None else self._located(new, s)

    def visit_Delete(self, node):
        if len(node.targets) == 1 and isinstance(node.targets[0], gast.Subscript):
            target = node.targets[0]
            if isinstance(target.value, gast.Name) and target.value.id in self.lists:
                left = _deleted(target)
                if left is not None:
                    name = target.value.id
                    return self._located([gast.Assign(targets=[_store(name)], value=left(name),
                                                      type_comment=None)], node)
        return node
