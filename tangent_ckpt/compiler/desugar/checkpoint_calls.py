"""Desugar: ``tc.checkpoint(fn, *args)`` and ``tc.checkpointed_loop(step, x0, n, s)``
written as the statements they run, inside a ``with`` on a marker that the
lowering (``lower/statements.py``) turns into an ``ir.Segment`` or a checkpointed
``ir.For``; ``with tc.checkpoint_scope(name, enabled=e):`` checked and written on
the scope's marker (the plain block where ``e`` is false when compiling).

Both are recognized by object identity, under any alias (``tc.checkpoint``,
``from tangent_ckpt import checkpoint as ckpt``, a local bound once to one).  For

    y = tc.checkpoint(block, x @ V, W, min_bytes=m)
    h, _ = tc.checkpointed_loop(step, h0, n, 3)

the pass writes

    x_2 = x @ V
    with checkpointed_segment('block', 'tc.checkpoint(block, x @ V, W, min_bytes=m)', m):
        y = block(x_2, W)
    state = h0
    with checkpointed_steps(3, 'for k in range(...): state = step(state)'):
        for k in range(n):
            state = step(state)
    h, _ = (state, None)

The arguments are evaluated by the caller, in Python's order, before the segment
(each that is not a name, a constant or a module's attribute bound to a fresh
name named after the parameter it is given to); the call inside the segment is
then inlined by ``inline_functions.py`` like any call of the user's (or left to
the lowering, as any call is).  A marker call inside an expression Python
evaluates in order (``h = tc.checkpoint(block, h, W) + b``, ``np.sum(...)``) is
written before its statement, with what Python evaluates before it; where it
cannot be (a branch of ``a if c else b``, ``and``/``or``, a comprehension, a
``lambda``, a ``while`` test...), the call becomes a call of a ``def`` written at
the top of the enclosing function, whose body is the form above (its parameters
the arguments), which ``inline_functions.py`` inlines where the call stands (an
``if`` statement for a conditional expression, an ``and``/``or``, a ``while``
test) -- the lowering in a comprehension.  The markers' names denote ``segment_markers.py``'s context managers
(``ParsedFunction.inlined_names``); their arguments are the segment's and the loop's
options, constants but for ``min_bytes`` and ``enabled``, decided at run time.  A bad use (no function, an unknown keyword, a ``num_checkpoints``
that is not a constant int, a scope without a literal name or left by ``return``
/ ``break``, ``checkpoint_scope()`` outside a ``with``) is refused here, at its line.
"""

import ast
import inspect
import types
from collections import Counter

import gast

from tangent_ckpt.compiler.desugar.local_bindings import local_names
from tangent_ckpt.compiler.desugar.segment_markers import (
    checkpointed_scope, checkpointed_segment, checkpointed_steps,
)
from tangent_ckpt.compiler.desugar.view_facts import read_names_denote
from tangent_ckpt.compiler.desugar.view_shape import (
    DenotedObject, copy_node, fresh_name, name_node, names_taken, statement_lists, store_node,
)
from tangent_ckpt.compiler.frontend.parse import _UNRESOLVED
from tangent_ckpt.errors import UnsupportedSyntaxError
from tangent_ckpt.markers import checkpoint, checkpoint_scope
from tangent_ckpt.runtime.scheduling.savings import checkpointed_loop


#: the expressions whose parts Python evaluates in the order of their fields, always
_IN_ORDER = (gast.BinOp, gast.UnaryOp, gast.Call, gast.Subscript, gast.Attribute,
             gast.Tuple, gast.List, gast.Slice, gast.keyword)
_MARKERS = (checkpoint, checkpointed_loop)


def write_checkpoint_calls(parsed, fnode=None):
    """Rewrite, in place, every ``tc.checkpoint`` / ``tc.checkpointed_loop`` call of
    ``fnode`` (``parsed.node`` by default; a helper's tree, resolved in ``parsed``)
    and of the ``def`` statements nested in it (see the module's docstring)."""
    fnode = parsed.node if fnode is None else fnode
    if not read_names_denote(fnode, parsed.resolve, _MARKERS + (checkpoint_scope,)):
        return
    writer = _Writer(parsed, fnode)
    if writer.any_marker():
        writer.function(fnode, frozenset())


def _source(node):
    return ast.unparse(gast.gast_to_ast(node)).strip()


def _own_expressions(stmt):
    """The expressions of ``stmt`` itself (not of the statements in its blocks)."""
    out = []
    for _, value in gast.iter_fields(stmt):
        items = value if isinstance(value, list) else [value]
        out += [v for v in items if isinstance(v, (gast.expr, gast.withitem, gast.keyword))]
    return out


def _in_order(node):
    """The parts of ``node`` Python evaluates, in order (an ``_IN_ORDER`` node)."""
    children = []
    for _, value in gast.iter_fields(node):
        items = value if isinstance(value, list) else [value]
        children += [v for v in items if isinstance(v, (gast.expr, gast.keyword))]
    return children


class _Writer:
    """The rewriting of one function's marker calls."""

    def __init__(self, parsed, fnode):
        self.parsed, self.fnode = parsed, fnode
        self.taken = names_taken(fnode)
        self.local = local_names(fnode)
        self.defs = {n.name: n for n in gast.walk(fnode) if isinstance(n, gast.FunctionDef)}
        self.marker_names = {}
        self.alias_markers = self.local_aliases()
        self.new_defs = []  # the defs written for calls in the function being rewritten

    def any_marker(self):
        return any(self.called(n) is not None for n in gast.walk(self.fnode))

    def local_aliases(self):
        """{name: marker} of the locals bound once, to a marker (``ck = tc.checkpoint``)."""
        bound = Counter(n.id for n in gast.walk(self.fnode) if isinstance(n, gast.Name) and
                        not isinstance(n.ctx, gast.Load))
        bound.update(n.name for n in gast.walk(self.fnode)
                     if isinstance(n, (gast.FunctionDef, gast.ClassDef)))
        found = {}
        for n in gast.walk(self.fnode):
            if isinstance(n, gast.Assign) and len(n.targets) == 1 and \
                    isinstance(n.targets[0], gast.Name) and bound[n.targets[0].id] == 1:
                fn = _static(n.value, self.parsed.resolve, self.local - {n.targets[0].id})
                found.update((n.targets[0].id, m) for m in _MARKERS if fn is m)
        return found

    def marker(self, node):
        """``checkpoint`` or ``checkpointed_loop`` when ``node`` calls one, else None."""
        fn = self.called(node)
        return next((m for m in _MARKERS if fn is m), None)

    def called(self, node):
        """The marker ``node`` calls (``checkpoint_scope`` too), else None."""
        if not isinstance(node, gast.Call):
            return None
        if isinstance(node.func, gast.Name) and node.func.id in self.alias_markers:
            return self.alias_markers[node.func.id]
        fn = _static(node.func, self.parsed.resolve, self.local)
        return next((m for m in _MARKERS + (checkpoint_scope,) if fn is m), None)

    def scope(self, stmt):
        """``with tc.checkpoint_scope(name, enabled=e):`` -> ``with checkpointed_scope(
        name, label, e):``, or the plain block where ``e`` is false when compiling."""
        call = stmt.items[0].context_expr
        args = dict(zip(("name", "enabled"), call.args))
        for k in call.keywords:
            if k.arg not in ("name", "enabled"):
                raise self.error(f"checkpoint_scope() got keyword '{k.arg or '**'}'", stmt,
                                 "checkpoint_scope")
            args[k.arg] = k.value
        name = args.get("name")
        if not (isinstance(name, gast.Constant) and isinstance(name.value, str) and name.value):
            raise self.error("checkpoint_scope() needs a literal name", stmt,
                             "checkpoint_scope", 'write checkpoint_scope("attention"): the '
                             "name appears in the generated code and the profiler")
        exit_node, what = _exits(stmt.body)
        if exit_node is not None:
            raise self.error(f"{what} inside a checkpoint_scope block", exit_node,
                             f"{what} in checkpoint_scope",
                             "leave the with block normally; return/break after it")
        enabled = args.get("enabled", gast.Constant(value=None, kind=None))
        static = enabled.value if isinstance(enabled, gast.Constant) else \
            _static(enabled, self.parsed.resolve, self.local) \
            if isinstance(enabled, gast.Name) or self.stands_for_itself(enabled) else _UNRESOLVED
        if static is not _UNRESOLVED and isinstance(static, (bool, int, type(None))):
            if not static and "enabled" in args:
                return stmt.body  # switched off: the plain block
            enabled = gast.Constant(value=None, kind=None)
        label = f"with {_source(call)}"
        stmt.items[0].context_expr = self.marker_call(checkpointed_scope, call, name.value,
                                                      label, enabled)
        return [stmt]

    def function(self, fdef, enclosing):
        """Rewrite the calls of ``fdef``'s own scope, then of its nested defs."""
        saved, self.local = self.local, set(enclosing) | local_names(fdef)
        saved_defs, self.new_defs = self.new_defs, []
        nested = []
        for block in reversed(list(statement_lists(fdef))):  # (inner blocks first)
            i = 0
            while i < len(block):
                stmt = block[i]
                if isinstance(stmt, gast.FunctionDef):
                    nested.append(stmt)
                new = self.statement(stmt)
                if new is None:
                    i += 1
                    continue
                block[i:i + 1] = new
                i += len(new)
        for stmt in nested:
            self.function(stmt, self.local)
        body = fdef.body
        docstring = bool(body) and isinstance(body[0], gast.Expr) and \
            isinstance(body[0].value, gast.Constant) and isinstance(body[0].value.value, str)
        body[1 if docstring else 0:1 if docstring else 0] = self.new_defs
        self.local, self.new_defs = saved, saved_defs

    def statement(self, stmt):
        """The statements that replace ``stmt``, or None."""
        if isinstance(stmt, (gast.FunctionDef, gast.ClassDef)):
            return None
        if isinstance(stmt, gast.With) and len(stmt.items) == 1 and \
                stmt.items[0].optional_vars is None and \
                self.called(stmt.items[0].context_expr) is checkpoint_scope:
            return self.scope(stmt)
        scope_call = next((n for e in _own_expressions(stmt) for n in gast.walk(e)
                           if self.called(n) is checkpoint_scope), None)
        if scope_call is not None and not isinstance(stmt, gast.With):
            raise self.error("checkpoint_scope() outside a with statement", scope_call,
                             "checkpoint_scope", 'write `with tangent_ckpt.checkpoint_scope('
                             '"name"):` around a block')
        if not any(
                self.marker(n) is not None for e in _own_expressions(stmt)
                for n in gast.walk(e)):
            return None
        before = []
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name) and \
                self.marker(stmt.value) is checkpoint and not any(
                    isinstance(n, gast.Name) and n.id == stmt.targets[0].id
                    for n in gast.walk(stmt.value)):
            # y = tc.checkpoint(fn, x): y bound in the segment (not x = ...(fn, x): the
            # segment would write its own input)
            before, _ = self.hoist_children(stmt.value)
            return before + self.segment(stmt.value, stmt.targets[0].id)[0]
        if isinstance(stmt, gast.If):
            before, stmt.test = self.hoist(stmt.test)
        elif isinstance(stmt, gast.For):
            before, stmt.iter = self.hoist(stmt.iter)
        elif isinstance(stmt, (gast.Assign, gast.Expr)) or \
                isinstance(stmt, gast.Return) and stmt.value is not None or \
                isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name) or \
                isinstance(stmt, gast.AnnAssign) and stmt.value is not None:
            before, stmt.value = self.hoist(stmt.value)
        for e in _own_expressions(stmt):  # what cannot be written before the statement
            _ReplaceCalls(self).visit(e)
        return before + [stmt]

    # --- calls inside expressions ---------------------------------------------------
    def holds(self, node):
        """Does ``node`` hold a marker call Python evaluates whenever ``node`` is?"""
        if self.marker(node) is not None:
            return True
        if isinstance(node, gast.Call) and (
                any(isinstance(a, gast.Starred) for a in node.args) or
                any(k.arg is None for k in node.keywords)):
            return False  # (f(*xs, g(y)): xs is iterated before g runs)
        return isinstance(node, _IN_ORDER) and any(self.holds(c) for c in _in_order(node))

    def hoist(self, node):
        """``(statements, node')``: the marker calls in ``node`` written before it,
        with every part Python evaluates before such a call evaluated before it."""
        if not self.holds(node):
            return [], node
        before, node = self.hoist_children(node)
        if self.marker(node) is checkpoint:
            statements, value = self.segment(node)
        elif self.marker(node) is checkpointed_loop:
            statements, value = self.loop(node)
        else:
            return before, node
        return before + statements, value

    def hoist_children(self, node):
        children = _in_order(node)
        holding = [k for k, child in enumerate(children) if self.holds(child)]
        if not holding:
            return [], node
        before = []
        for k, child in enumerate(children[:holding[-1] + 1]):
            part = child.value if isinstance(child, gast.keyword) else child
            statements, new = self.hoist(part)
            before += statements
            if k < holding[-1] and not self.stands_for_itself(new) and \
                    not (isinstance(node, gast.Call) and child is node.func and _dotted(new)):
                # (a method is looked up on its object when called: h.dot(...))
                before.append(self.bind("operand", new))
                new = gast.copy_location(name_node(before[-1].targets[0].id), new)
            if isinstance(child, gast.keyword):
                child.value = new
            elif new is not child:
                _ReplaceChild(child, new).generic_visit(node)
        return before, node

    def stands_for_itself(self, node):
        """May ``node`` be evaluated later, to the same object?  A name, a constant, a
        module's attribute (``np.tanh``)."""
        if isinstance(node, (gast.Name, gast.Constant)):
            return True
        root = node
        while isinstance(root, gast.Attribute):
            root = root.value
        return root is not node and isinstance(root, gast.Name) and \
            root.id not in self.local and \
            isinstance(self.parsed.resolve(root.id), types.ModuleType)

    def bind(self, stem, value):
        name = fresh_name(stem, self.taken)
        return gast.copy_location(
            gast.Assign(targets=[store_node(name)], value=value, type_comment=None), value)

    # --- the two markers --------------------------------------------------------------
    def marker_name(self, marker):
        """The name this function reads ``marker`` by."""
        if marker not in self.marker_names:
            for name, (denoted, _) in self.parsed.inlined_names.items():
                if isinstance(denoted, DenotedObject) and denoted.obj is marker and \
                        name not in self.local:
                    break
            else:
                name = fresh_name(marker.__name__, self.taken | set(self.parsed.globals) |
                                  set(self.parsed.closure))
                self.parsed.inlined_names[name] = (DenotedObject(marker), name)
            self.taken.add(name)
            self.marker_names[marker] = name
        return self.marker_names[marker]

    def error(self, message, node, construct, hint=None):
        return self.parsed.located(UnsupportedSyntaxError, message, node,
                                   construct=construct, hint=hint)

    def checkpoint_arguments(self, call):
        """(fn, arguments, min_bytes) of a ``tc.checkpoint`` call, checked."""
        if not call.args:
            raise self.error("checkpoint() needs the function to run", call, "checkpoint",
                             "write tangent_ckpt.checkpoint(fn, *args)")
        min_bytes = gast.Constant(value=None, kind=None)
        for k in call.keywords:
            if k.arg != "min_bytes":
                raise self.error(f"checkpoint() got keyword '{k.arg or '**'}'", call,
                                 "checkpoint", "pass fn's arguments positionally; the only "
                                 "keyword is min_bytes")
            min_bytes = k.value
        return call.args[0], call.args[1:], min_bytes

    def segment(self, call, target=None, label=None, name=None):
        """``(statements, value)`` of ``tc.checkpoint(fn, *args)``: ``fn``'s call in a
        segment, bound to ``target`` (a name, or a fresh one, the value); ``label``
        and ``name``: the user's call and function where ``call`` stands for it."""
        fn, args, min_bytes = self.checkpoint_arguments(call)
        obj = _static(fn, self.parsed.resolve, self.local)
        _borrow_lines(self.parsed, obj)
        names = self.parameter_names(fn, obj)
        before, given = [], []
        if not _dotted(fn):  # block(rng) runs first, once, as Python calls it
            before.append(self.bind(f"{_stem(fn)}_fn", fn))
            fn = gast.copy_location(name_node(before[-1].targets[0].id), fn)
        for k, a in enumerate(args):
            value = a.value if isinstance(a, gast.Starred) else a
            if not self.stands_for_itself(value):
                before.append(self.bind(names[k] if k < len(names) else "arg", value))
                value = gast.copy_location(name_node(before[-1].targets[0].id), value)
            given.append(gast.copy_location(gast.Starred(value=value, ctx=gast.Load()), a)
                         if isinstance(a, gast.Starred) else value)
        result = target or fresh_name(f"{_stem(fn)}_result", self.taken)
        body = gast.Assign(targets=[store_node(result)], type_comment=None,
                           value=gast.Call(func=copy_node(fn), args=given, keywords=[]))
        marker = self.marker_call(checkpointed_segment, call, name or _source(fn),
                                  label or _source(call), min_bytes)
        return before + [_with(marker, [body], call)], \
            gast.copy_location(name_node(result), call)

    def loop(self, call, text=None):
        """``(statements, value)`` of ``tc.checkpointed_loop(step, x0, n, s)``: the
        loop ``for k in range(n): state = step(state)`` and ``(state, None)``
        (``text``: the user's ``step`` where ``call`` stands for it)."""
        func, initial, length, snapshots = self.loop_arguments(call)
        state, index = fresh_name("state", self.taken), fresh_name("k", self.taken)
        before = []
        if not _dotted(func):  # make_step(W, rng): called once, before x0, as in Python
            before.append(self.bind("step", func))
            func = gast.copy_location(name_node(before[-1].targets[0].id), func)
        before.append(gast.copy_location(gast.Assign(targets=[store_node(state)], value=initial,
                                                     type_comment=None), call))
        if not self.stands_for_itself(length):
            before.append(self.bind("n", length))
            length = gast.copy_location(name_node(before[-1].targets[0].id), length)
        step = gast.Assign(targets=[store_node(state)], type_comment=None,
                           value=gast.Call(func=copy_node(func), args=[name_node(state)],
                                           keywords=[]))
        loop = gast.For(target=store_node(index), iter=gast.Call(
            func=name_node("range"), args=[length], keywords=[]), body=[step], orelse=[],
            type_comment=None)
        header = f"for {index} in range(...): {state} = {text or _source(func)}({state})"
        marker = self.marker_call(checkpointed_steps, call, snapshots, header)
        value = gast.Tuple(elts=[name_node(state), gast.Constant(value=None, kind=None)],
                           ctx=gast.Load())
        return before + [_with(marker, [loop], call)], _located(value, call)

    def loop_arguments(self, call):
        """(func, initial state, length, num_checkpoints) of a ``checkpointed_loop``."""
        names = ("func", "initial_state", "seq_length", "num_checkpoints")
        bound = dict(zip(names, call.args))
        if any(isinstance(a, gast.Starred) for a in call.args):
            raise self.error("checkpointed_loop() with *arguments", call, "checkpointed_loop",
                             "pass func, initial_state, seq_length one by one")
        for k in call.keywords:
            if k.arg not in names or k.arg in bound:
                raise self.error(f"checkpointed_loop() got keyword '{k.arg or '**'}'", call,
                                 "checkpointed_loop")
            bound[k.arg] = k.value
        missing = [n for n in names[:3] if n not in bound]
        if missing:
            raise self.error(f"checkpointed_loop() missing {missing[0]}", call,
                             "checkpointed_loop")
        snapshots = None
        if bound.get("num_checkpoints") is not None:
            c = bound["num_checkpoints"]
            snapshots = c.value if isinstance(c, gast.Constant) else \
                _static(c, self.parsed.resolve, self.local)
            if snapshots is not None and (isinstance(snapshots, bool) or
                                          not isinstance(snapshots, int)):
                raise self.error("checkpointed_loop(): num_checkpoints must be a constant int",
                                 call, "checkpointed_loop", "write the number, or use "
                                 "grad(..., checkpoint=True, snapshots=s)")
        return bound["func"], bound["initial_state"], bound["seq_length"], snapshots

    def marker_call(self, marker, where, *args):
        args = [a if isinstance(a, gast.AST) else gast.Constant(value=a, kind=None)
                for a in args]
        return _located(gast.Call(func=name_node(self.marker_name(marker)), args=args,
                                  keywords=[]), where)

    def parameter_names(self, fn, obj):
        """The parameter names of the checkpointed function (to name its computed
        arguments)."""
        if isinstance(fn, gast.Name) and fn.id in self.defs and fn.id in self.local:
            args = self.defs[fn.id].args
            return [a.id for a in args.posonlyargs + args.args]
        try:
            return list(inspect.signature(obj).parameters) if callable(obj) else []
        except (TypeError, ValueError):
            return []

    # --- where a call cannot be written before its statement -----------------------
    def as_def_call(self, call):
        """``call`` as a call of a ``def`` (written at the top of the enclosing
        function) whose body is the marker's form, its parameters the arguments."""
        marker = self.marker(call)
        if marker is checkpoint:
            fn, args, min_bytes = self.checkpoint_arguments(call)
            _borrow_lines(self.parsed, _static(fn, self.parsed.resolve, self.local))
            names = self.parameter_names(fn, _static(fn, self.parsed.resolve, self.local))
            given = [fn] + list(args)
            stems = ["fn"] + ["args" if isinstance(a, gast.Starred) else
                              names[k] if k < len(names) else "arg" for k, a in enumerate(args)]
            if not isinstance(min_bytes, gast.Constant):
                given.append(min_bytes)
                stems.append("min_bytes")
        else:
            func, initial, length, snapshots = self.loop_arguments(call)
            given, stems = [func, initial, length], ["step", "state", "n"]
        saved, self.local = self.local, set(self.local)
        params = [fresh_name(stem, self.taken) for stem in stems]
        self.local.update(params)
        inner = [gast.Starred(value=name_node(p), ctx=gast.Load())
                 if isinstance(a, gast.Starred) else name_node(p) for p, a in zip(params, given)]
        if marker is checkpoint:
            keywords = [] if isinstance(min_bytes, gast.Constant) else \
                [gast.keyword(arg="min_bytes", value=inner.pop())]
            stand_in = _located(gast.Call(func=copy_node(call.func), args=inner,
                                          keywords=keywords), call)
            body, value = self.segment(stand_in, label=_source(call), name=_source(fn))
        else:
            stand_in = _located(gast.Call(func=copy_node(call.func), args=inner + [
                gast.Constant(value=snapshots, kind=None)], keywords=[]), call)
            body, value = self.loop(stand_in, text=_source(func))
        self.local = saved
        body.append(_located(gast.Return(value=value), call))
        name = fresh_name(f"{marker.__name__}_{_stem(given[0])}", self.taken)
        vararg = next((p for p, a in zip(params, given) if isinstance(a, gast.Starred)), None)
        fdef = gast.FunctionDef(
            name=name, body=body, decorator_list=[], returns=None, type_comment=None,
            args=gast.arguments(
                args=[_param(p) for p in params if p != vararg], posonlyargs=[],
                vararg=None if vararg is None else _param(vararg), kwonlyargs=[],
                kw_defaults=[], kwarg=None, defaults=[]))
        if "type_params" in gast.FunctionDef._fields:
            fdef.type_params = []
        gast.copy_location(fdef, call)
        fdef.end_lineno = getattr(call, "end_lineno", None)
        self.new_defs.append(fdef)
        self.defs[name] = fdef
        self.local.add(name)
        return _located(gast.Call(func=name_node(name), args=[
            gast.Starred(value=a.value, ctx=gast.Load()) if isinstance(a, gast.Starred) else a
            for a in given], keywords=[]), call)


class _ReplaceCalls(gast.NodeTransformer):
    """Each marker call in an expression (inner ones first) as a call of a ``def``."""

    def __init__(self, writer):
        self.writer = writer

    def visit_Call(self, node):
        self.generic_visit(node)
        return self.writer.as_def_call(node) if self.writer.marker(node) is not None else node


class _ReplaceChild(gast.NodeTransformer):
    """``.generic_visit(parent)``: ``old``, a child of ``parent``, replaced by ``new``."""

    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit(self, node):
        return self.new if node is self.old else node


def _static(node, resolve, local):
    """The object a dotted name outside the function denotes, or ``_UNRESOLVED``."""
    path = []
    while isinstance(node, gast.Attribute):
        path.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name) or node.id in local:
        return _UNRESOLVED
    obj = resolve(node.id)
    for part in reversed(path):
        if obj is _UNRESOLVED:
            break
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 - any failure means "not known"
            return _UNRESOLVED
    return obj


def _dotted(node):
    """Is ``node`` a name, or a chain of attributes of one?"""
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name)


def _borrow_lines(parsed, fn):
    """Comments in the generated segment functions quote ``fn``'s lines when it is
    defined in the same file as the function."""
    code = getattr(fn, "__code__", None)
    if not isinstance(fn, types.FunctionType) or code is None or \
            code.co_filename != parsed.filename:
        return
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return
    for k, text in enumerate(lines):
        parsed.source_lines.setdefault(first + k, text.rstrip("\n"))


def _stem(fn):
    """A name for the function ``fn`` (an expression) to name what is made for it."""
    if isinstance(fn, gast.Attribute):
        return fn.attr
    return fn.id if isinstance(fn, gast.Name) else "fn"


def _param(name):
    return gast.Name(id=name, ctx=gast.Param(), annotation=None, type_comment=None)


def _with(marker, body, where):
    return _located(gast.With(items=[gast.withitem(context_expr=marker, optional_vars=None)],
                              body=body, type_comment=None), where)


def _located(node, where):
    """``node``, each of its nodes that has no place yet placed at ``where``."""
    for n in gast.walk(node):
        if getattr(n, "lineno", None) is None and "lineno" in n._attributes:
            gast.copy_location(n, where)
            if hasattr(where, "end_lineno"):
                n.end_lineno = where.end_lineno
                n.end_col_offset = getattr(where, "end_col_offset", None)
    return node


def _exits(stmts):
    """The first ``return``, or ``break`` / ``continue`` leaving ``stmts``, and its kind."""
    for stmt in stmts:
        todo = [(stmt, False)]
        while todo:
            n, in_loop = todo.pop()
            if isinstance(n, gast.Return):
                return n, "return"
            if isinstance(n, (gast.Break, gast.Continue)) and not in_loop:
                return n, "break" if isinstance(n, gast.Break) else "continue"
            if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef,
                              gast.Lambda)):
                continue
            inner = in_loop or isinstance(n, (gast.For, gast.While, gast.AsyncFor))
            todo.extend(reversed([(c, inner) for c in gast.iter_child_nodes(n)]))
    return None, None
