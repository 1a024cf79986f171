"""The packaged gradient made for ``backend="numba"``, on its syntax trees, before emit.

Takes the :class:`~tangent_ckpt.compiler.package.gradient.GradientCode` of a
gradient and the global bindings it reads; gives the same code with:

* ``@njit(cache=True)`` on every generated function that does not drive a
  loop (a function that makes an ``rt.CheckpointedLoop``, ``rt.Segment`` or
  ``rt.MemoryPlan`` stays Python) and does not read one of the names Numba must
  not see (NumPy's global random functions, whose compiled copies draw other
  numbers; global arrays, which Numba would freeze at compile time): those
  stay NumPy, with a :class:`NumbaFallbackWarning` saying why;
* basic indices ``np.s_[1:-1]`` written ``slice(1, -1)``, which Numba reads;
* ``x[1:-1] = v`` written ``rt.assign_at(x, slice(1, -1), v)`` (a plain loop
  in compiled code, runtime/numba_writes.py);
* single-use temporaries put back into their reader (:mod:`numba_fusion`), and
  each elementwise operation (arithmetic and ufuncs over its operands) computed
  by an elementwise kernel (``@njit(cache=True, elementwise=True)``, one per
  distinct expression, shared by the lines that compute it): one compiled loop
  over the elements instead of Numba's general broadcasting loop, which is
  three to eight times slower on 1-D arrays of a thousand elements;
* per checkpointed loop, ``loopN_advance`` (many plain steps in one compiled
  call) and the compiled sweeps ``loopN_forward_sweep`` / ``loopN_reverse_sweep``
  that run the whole schedule (runtime/numba_sweep.py), attached to the step
  and the adjoint step for the driver to find.

Only trees are read and rewritten here; emit prints the result once.
"""

import ast
import dataclasses
import warnings

import numpy as np

from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Comment, Line, trees
from tangent_ckpt.compiler.naming import NUMPY, RUNTIME, builtin
from tangent_ckpt.compiler.numba_fusion import fuse, kernel_of
from tangent_ckpt.runtime import numba_sweep
from tangent_ckpt.runtime.numba_backend import NumbaFallbackWarning, legacy_random_names, njit

__all__ = ["numba_code"]

#: runtime objects whose calls keep a function in Python: they drive loops
_DRIVERS = frozenset({"CheckpointedLoop", "Segment", "MemoryPlan", "run_schedule"})
#: the sweep's action codes, by name
_CODE = {name: numba_sweep.CODES[kind] for name, kind in (
    ("ADVANCE", "advance"), ("STORE", "store"), ("RESTORE", "restore"),
    ("FIRST_TURN", "first_turn"), ("REVERSE", "reverse"))}


def numba_code(code, bindings):
    """Backend numba.  Takes the packaged ``code`` and its ``bindings``; gives
    (the rewritten ``GradientCode``, the bindings plus ``njit``)."""
    functions = {item.head.name: item for definition in code.definitions for item in definition
                 if isinstance(item, Block) and isinstance(item.head, ast.FunctionDef)}
    kept = _names_kept_in_python(bindings)
    taken = set(functions) | set(bindings)
    definitions, loops, kernels = [], [], {}
    for definition in code.definitions:
        out = []
        for item in definition:
            if not (isinstance(item, Block) and isinstance(item.head, ast.FunctionDef)):
                out.append(item)
                continue
            if _drives_loops(item):
                loops += _loops_driven(item, functions)
                out.append(item)
                continue
            reason = _kept_reason(item, kept)
            if reason is not None:
                warnings.warn(f"backend='numba': {item.head.name}() runs with NumPy: {reason}",
                              NumbaFallbackWarning, stacklevel=6)
                out.append(item)
                continue
            out.append(_compiled_function(item, taken, kernels))
        definitions.append(out)
    definitions = [[block] for _, block in kernels.values()] + definitions
    compiled = {name for d in definitions for item in d if isinstance(item, Block) and
                isinstance(item.head, ast.FunctionDef) and item.head.decorator_list
                for name in [item.head.name]}
    definitions += _loop_definitions(loops, compiled, taken)
    # the gradient itself stays last
    last = [d for d in definitions if any(isinstance(i, Block) and i.head.name == code.name
                                          for i in d if isinstance(i, Block) and
                                          isinstance(i.head, ast.FunctionDef))]
    rest = [d for d in definitions if d not in last]
    code = dataclasses.replace(code, definitions=rest + last)
    return code, dict(bindings, njit=njit)


# ----------------------------------------------------------------- what stays Python

def _names_kept_in_python(bindings):
    """{name: why} for the bound names a compiled function must not read."""
    kept = {name: "it draws from NumPy's global random state, which compiled code would not "
                  "share" for name in legacy_random_names(bindings)}
    for name, value in bindings.items():
        if isinstance(value, np.ndarray):
            kept[name] = (f"it reads the global array {name!r}, which Numba would freeze at its "
                          "first compile (a later change in place would not be seen): pass it "
                          "as an argument to compile this function")
    return kept


def _kept_reason(function, kept):
    read = set()
    for tree in _trees(function):
        read |= sx.loads(tree)
    names = sorted(read & set(kept))
    return kept[names[0]] if names else None


def _trees(block):
    """Every statement tree of a function block (its parameters' defaults too)."""
    yield block.head.args
    yield from trees(block.body)


def _is_rt(node, names):
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
        node.value.id == RUNTIME and node.attr in names


def _drives_loops(function):
    return any(_is_rt(node, _DRIVERS) for tree in _trees(function) for node in sx.walk(tree))


# ----------------------------------------------------------------- compiled functions

def _decorated(head, **options):
    """A copy of the ``def`` header ``head`` with ``@njit(cache=True, ...)``."""
    keywords = [ast.keyword(arg="cache", value=ast.Constant(True))] + \
        [ast.keyword(arg=k, value=ast.Constant(v)) for k, v in options.items()]
    return ast.FunctionDef(name=head.name, args=head.args, body=[],
                           decorator_list=[ast.Call(func=sx.name("njit"), args=[],
                                                    keywords=keywords)],
                           returns=None)


class _Slices(ast.NodeTransformer):
    """``np.s_[1:-1]`` -> ``slice(1, -1)`` (a basic index only)."""

    def visit_Subscript(self, node):  # noqa: N802
        self.generic_visit(node)
        if isinstance(node.value, ast.Attribute) and node.value.attr == "s_" and \
                isinstance(node.value.value, ast.Name) and node.value.value.id == NUMPY:
            index = _basic_index(node.slice)
            if index is not None:
                return index
        return node


def _basic_index(node):
    """``np.s_[...]``'s index as slices Numba reads, or None when it is not made
    of ints, names and slices."""
    if isinstance(node, ast.Tuple):
        parts = [_basic_index(e) for e in node.elts]
        return None if None in parts else ast.Tuple(elts=parts, ctx=ast.Load())
    if isinstance(node, ast.Slice):
        bounds = [node.lower, node.upper, node.step]
        if bounds[2] is None:
            bounds.pop()
        return sx.call(sx.name(builtin("slice")),
                       *[b if b is not None else ast.Constant(None) for b in bounds])
    if all(isinstance(n, (ast.Name, ast.Constant, ast.UnaryOp, ast.BinOp)) and
           not (isinstance(n, ast.Constant) and not isinstance(n.value, int))
           for n in sx.walk(node)):
        return node
    return None


def _store(stmt):
    """``x[1:-1] = v`` -> ``rt.assign_at(x, slice(1, -1), v)`` (runtime/numba_writes.py),
    else ``stmt``."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], ast.Subscript) and
            isinstance(stmt.targets[0].value, ast.Name)):
        return stmt
    target = stmt.targets[0]
    index = _basic_index(target.slice)
    if index is None or not any(isinstance(n, ast.Slice) for n in sx.walk(target.slice)):
        return stmt
    return sx.statement(sx.rt("assign_at", sx.name(target.value.id), index, stmt.value))


def _rewritten(items):
    out = []
    for item in items:
        if isinstance(item, Line) and item.stmt is not None:
            item = dataclasses.replace(item, stmt=_store(_Slices().visit(sx.copy_tree(item.stmt))))
        elif isinstance(item, Block):
            head = item.head
            if isinstance(head, (ast.If, ast.While, ast.For)):
                head = _Slices().visit(sx.copy_tree(head))
            item = Block(head, _rewritten(item.body), item.line, item.adjoint)
        out.append(item)
    return out


def _compiled_function(block, taken, kernels):
    """The function ``block`` decorated, its slices and stores rewritten, its
    temporaries fused and its elementwise operations computed by ``kernels``."""
    body = fuse(_rewritten(block.body), {a.arg for a in block.head.args.args})
    body = _with_kernels(body, block.head.name, taken, kernels)
    return Block(_decorated(block.head), body, block.line, block.adjoint)


def _with_kernels(items, owner, taken, kernels):
    """``items`` with each elementwise operation computed by a kernel (one per
    distinct expression, shared by the lines that compute it: ``kernels`` maps
    its key to (name, block))."""
    out = []
    for item in items:
        if isinstance(item, Block):
            out.append(item.with_body(_with_kernels(item.body, owner, taken, kernels)))
        elif isinstance(item, Line) and item.stmt is not None:
            where = f"line {item.line} of {owner}()" if item.line else f"{owner}()"
            out.append(dataclasses.replace(
                item, stmt=_Kernels(owner, item.line, where, taken, kernels).visit(
                    sx.copy_tree(item.stmt))))
        else:
            out.append(item)
    return out


class _Kernels(ast.NodeTransformer):
    """Replaces each outermost elementwise operation by a call of its kernel
    (not in indices: they are ints)."""

    def __init__(self, owner, line, where, taken, kernels):
        self.owner, self.line, self.where = owner, line, where
        self.taken, self.kernels = taken, kernels

    def visit_Subscript(self, node):  # noqa: N802
        node.value = self.visit(node.value)
        return node

    def visit_AugAssign(self, node):  # noqa: N802
        node.value = self.visit(node.value)
        return node

    def generic_visit(self, node):
        found = kernel_of(node) if isinstance(node, ast.expr) else None
        if found is None:
            return super().generic_visit(node)
        params, operands, element, key = found
        if key not in self.kernels:
            stem = f"{self.owner}_line{self.line}" if self.line else f"{self.owner}_kernel"
            name, k = stem, 1
            while name in self.taken:
                k += 1
                name = f"{stem}_{k}"
            self.taken.add(name)
            head = _decorated(sx.def_(name, params), elementwise=True)
            self.kernels[key] = (name, Block(head, [
                Comment(f"{self.where}, one element at a time (NumPy: whole arrays)"),
                Line(sx.return_([element]))]))
        name = self.kernels[key][0]
        return sx.call(sx.name(name), *[self.visit(o) for o in operands])


def _fresh(name, taken):
    while name in taken:
        name += "_"
    taken.add(name)
    return name


# ----------------------------------------------------------------- loops

@dataclasses.dataclass
class _Loop:
    step: Block
    adjoint: Block = None
    next_state: bool = False


def _loops_driven(driver, functions):
    """The checkpointed loops ``driver`` runs: its step, adjoint step, and whether
    the adjoint step takes the state after its step."""
    made, loops = {}, {}
    trees = list(_trees(driver))
    for tree in trees:
        for node in sx.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    _is_rt(node.value.func, {"CheckpointedLoop"}) and \
                    isinstance(node.targets[0], ast.Name):
                made[node.targets[0].id] = any(
                    k.arg == "next_state" and isinstance(k.value, ast.Constant) and
                    k.value.value is True for k in node.value.keywords)
    for tree in trees:
        for node in sx.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in ("forward", "reverse") and node.args and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id in made and \
                    isinstance(node.args[0], ast.Name) and node.args[0].id in functions:
                loop = loops.setdefault(node.func.value.id, _Loop(None))
                loop.next_state = made[node.func.value.id]
                if node.func.attr == "forward":
                    loop.step = functions[node.args[0].id]
                else:
                    loop.adjoint = functions[node.args[0].id]
    return [loop for loop in loops.values() if loop.step is not None]


def _params(block):
    return [a.arg for a in block.head.args.args]


def _loop_definitions(loops, compiled, taken):
    """For each loop whose step is compiled: ``*_advance``; whose adjoint step is
    too: the two sweeps; and the lines that attach them."""
    definitions, attach = [], []
    for loop in loops:
        step = loop.step.head.name
        if step not in compiled:
            continue
        base = step[:-len("_step")] if step.endswith("_step") else step
        advance = _fresh(base + "_advance", taken)
        definitions.append([_advance(loop.step, advance)])
        attach.append(Line(ast.Assign(targets=[ast.Attribute(value=sx.name(step), attr="advance",
                                                             ctx=ast.Store())],
                                      value=sx.name(advance)),
                           comment="the driver runs many plain steps in one call"))
        if loop.adjoint is None or loop.adjoint.head.name not in compiled:
            continue
        forward, reverse = _fresh(base + "_forward_sweep", taken), \
            _fresh(base + "_reverse_sweep", taken)
        definitions.append([_forward_sweep(loop.step, advance, forward)])
        definitions.append([_reverse_sweep(loop, advance, reverse)])
        for fn, sweep in ((step, forward), (loop.adjoint.head.name, reverse)):
            attach.append(Line(ast.Assign(
                targets=[ast.Attribute(value=sx.name(fn), attr="sweep", ctx=ast.Store())],
                value=sx.name(sweep)), comment="the whole schedule compiled"))
    if attach:
        definitions.append(attach)
    return definitions


def _names(step, extra):
    """The step's parameters and fresh names for the sweep's own variables."""
    params = _params(step)
    taken = set(params)
    own = {}
    for name in extra:
        own[name] = _fresh(name, taken)
    return params, own


def _advance(step, name):
    params, own = _names(step, ("first", "stride", "count", "_"))
    index, state, args = params[0], params[1], params[2:]
    first, stride, count = own["first"], own["stride"], own["count"]
    return Block(_decorated(sx.def_(name, [first, stride, count, state] + args)), [
        Comment(f"{count} plain steps of {step.head.name}() in one compiled call, from "
                f"index {first} by {stride}"),
        Line(sx.assign(index, sx.name(first))),
        Block(sx.for_(own["_"], sx.builtin_call("range", sx.name(count))), [
            Line(sx.assign(state, sx.call(sx.name(step.head.name),
                                          *[sx.name(p) for p in [index, state] + args]))),
            Line(ast.AugAssign(target=sx.store(index), op=ast.Add(), value=sx.name(stride))),
        ]),
        Line(sx.return_([sx.name(state)])),
    ])


def _row(codes, row, column):
    return sx.subscript(codes, ast.Tuple(elts=[sx.name(row), ast.Constant(column)],
                                         ctx=ast.Load()))


def _is(kind, codes, row):
    return ast.Compare(left=_row(codes, row, 0), ops=[ast.Eq()],
                       comparators=[ast.Constant(_CODE[kind])])


def _index_at(first, codes, row, stride):
    return sx.binop(sx.name(first), "+", sx.binop(_row(codes, row, 2), "*", sx.name(stride)))


def _advance_line(advance, state, args, first, stride, codes, row):
    return Line(sx.assign(state, sx.call(sx.name(advance), _index_at(first, codes, row, stride),
                                         sx.name(stride), _row(codes, row, 1), sx.name(state),
                                         *[sx.name(a) for a in args])))


def _store_line(codes, row, snapshots, state):
    return Line(sx.statement(sx.rt("store_snapshot", sx.name(snapshots), _row(codes, row, 1),
                                   sx.name(state))))


def _forward_sweep(step, advance, name):
    params, own = _names(step, ("codes", "row", "first", "stride", "snapshots"))
    state, args = params[1], params[2:]
    codes, row, first, stride, snaps = (own[k] for k in ("codes", "row", "first", "stride",
                                                         "snapshots"))
    return Block(_decorated(sx.def_(name, [codes, first, stride, state, snaps] + args),
                            quiet=True), [
        Comment("the schedule's forward sweep in one compiled call: its plain steps and "
                "snapshot stores up to"),
        Comment(f"its first turn (a row of {codes}: action, count or slot, position; "
                "runtime/numba_sweep.py)"),
        Block(sx.for_(row, sx.builtin_call("range", sx.subscript(sx.attr(codes, "shape"),
                                                                  ast.Constant(0)))), [
            Block(sx.if_(_is("FIRST_TURN", codes, row)), [Line(sx.break_())]),
            Block(sx.if_(_is("ADVANCE", codes, row)), [
                _advance_line(advance, state, args, first, stride, codes, row)]),
            Block(sx.if_(_is("STORE", codes, row)), [_store_line(codes, row, snaps, state)]),
        ]),
        Line(sx.return_([sx.name(state)])),
    ])


def _reverse_sweep(loop, advance, name):
    step, adjoint = loop.step, loop.adjoint
    params, own = _names(step, ("codes", "start", "row", "first", "stride", "snapshots",
                                "bstate", "after"))
    state, args = params[1], params[2:]
    codes, start, row, first, stride, snaps, bstate, after = (
        own[k] for k in ("codes", "start", "row", "first", "stride", "snapshots", "bstate",
                         "after"))
    taken = set(params) | set(own.values())
    skip = 4 if loop.next_state else 3
    adjoint_args = [_fresh(a, taken) for a in _params(adjoint)[skip:]]
    states = [state, after] if loop.next_state else [state]
    reverse = Line(sx.assign(bstate, sx.call(
        sx.name(adjoint.head.name), _index_at(first, codes, row, stride),
        *[sx.name(s) for s in states], sx.name(bstate), *[sx.name(a) for a in adjoint_args])))
    keep = [Line(sx.assign(after, sx.name(state)))] if loop.next_state else []
    return Block(_decorated(sx.def_(name, [codes, start, first, stride] + states +
                                    [bstate, snaps] + args + adjoint_args), quiet=True), [
        Comment(f"the rest of the schedule in one compiled call, from its first turn (row "
                f"{start}):"),
        Comment("restores, plain steps, snapshot stores and the adjoint steps"),
        Line(sx.assign(row, sx.name(start))),
        reverse, *keep,
        Block(sx.for_(row, sx.builtin_call("range", sx.binop(sx.name(start), "+",
                                                              ast.Constant(1)),
                                           sx.subscript(sx.attr(codes, "shape"),
                                                        ast.Constant(0)))), [
            Block(sx.if_(_is("REVERSE", codes, row)),
                  [Line(sx.copy_tree(reverse.stmt))] + [Line(sx.copy_tree(k.stmt)) for k in keep]),
            Block(sx.if_(_is("RESTORE", codes, row)), [
                Line(sx.assign(state, sx.rt("restore_snapshot", sx.name(snaps),
                                            _row(codes, row, 1), sx.name(state))))]),
            Block(sx.if_(_is("ADVANCE", codes, row)), [
                _advance_line(advance, state, args, first, stride, codes, row)]),
            Block(sx.if_(_is("STORE", codes, row)), [_store_line(codes, row, snaps, state)]),
        ]),
        Line(sx.return_([sx.name(bstate)])),
    ])
