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
  in compiled code, runtime/jit/numba_writes.py);
* runs of elementwise statements moved into functions that compiled code runs
  as a few loops over the elements (:mod:`numba_runs`, runtime/jit/numba_passes.py);
* other single-use temporaries put back into their reader (:mod:`numba_fusion`), and
  each elementwise operation (arithmetic and ufuncs over its operands) computed
  by an elementwise kernel (``@njit(cache=True, elementwise=True)``, one per
  distinct expression, shared by the lines that compute it): one compiled loop
  over the elements instead of Numba's general broadcasting loop, which is
  three to eight times slower on 1-D arrays of a thousand elements;
* per checkpointed loop, ``loopN_advance`` (many plain steps in one compiled
  call) and the compiled sweeps ``loopN_forward_sweep`` / ``loopN_reverse_sweep``
  that run the whole schedule (runtime/jit/numba_sweep.py), attached to the step
  and the adjoint step for the driver to find (:mod:`numba_loops`).

Only trees are read and rewritten here; emit prints the result once.
"""

import ast
import dataclasses
import warnings

import numpy as np

from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Comment, Line
from tangent_ckpt.compiler.naming import NUMPY, builtin
from tangent_ckpt.compiler.backend.numba_fusion import fuse, kernel_of
from tangent_ckpt.compiler.backend.numba_runs import fused_runs
from tangent_ckpt.compiler.backend.numba_loops import (
    decorated, function_trees, is_rt, loop_definitions, loops_driven,
)
from tangent_ckpt.runtime.jit.numba_backend import NumbaFallbackWarning, legacy_random_names, njit

__all__ = ["numba_code"]

#: runtime objects whose calls keep a function in Python: they drive loops
_DRIVERS = frozenset({"CheckpointedLoop", "Segment", "MemoryPlan", "run_schedule"})
#: the sweep's action codes, by name
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
                loops += loops_driven(item, functions)
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
    definitions += loop_definitions(loops, compiled, taken)
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
        if isinstance(value, (np.random.Generator, np.random.RandomState)):
            kept[name] = (f"it draws from the generator {name!r}, whose state the driver keeps "
                          "with the snapshots (compiled code would not share it)")
        if _holds_an_array(value):
            what = "array" if isinstance(value, np.ndarray) else "tuple or list holding an array"
            kept[name] = (f"it reads the global {what} {name!r}, which Numba would freeze at "
                          "its first compile (a later change in place would not be seen): pass "
                          "it as an argument to compile this function")
    return kept


def _holds_an_array(value, depth=0):
    """An array, or a tuple or list holding one (``PARAMS = (W, 0.5)``)."""
    if isinstance(value, np.ndarray):
        return True
    return isinstance(value, (tuple, list)) and depth < 8 and \
        any(_holds_an_array(item, depth + 1) for item in value)


def _kept_reason(function, kept):
    read = set()
    for tree in function_trees(function):
        read |= sx.loads(tree)
    names = sorted(read & set(kept))
    return kept[names[0]] if names else None


def _drives_loops(function):
    return any(is_rt(node, _DRIVERS) for tree in function_trees(function) for node in sx.walk(tree))


# ----------------------------------------------------------------- compiled functions

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
    """``x[1:-1] = v`` -> ``rt.assign_at(x, slice(1, -1), v)`` (runtime/jit/numba_writes.py),
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
        elif isinstance(item, Block) and _asks_replaying(item.head):
            # compiled code cannot ask: a print in a compiled step runs when it runs
            out.extend(_rewritten(item.body))
            continue
        elif isinstance(item, Block):
            head = item.head
            if isinstance(head, (ast.If, ast.While, ast.For)):
                head = _Slices().visit(sx.copy_tree(head))
            item = Block(head, _rewritten(item.body), item.line, item.adjoint)
        out.append(item)
    return out


def _asks_replaying(head):
    """``if not rt.replaying():`` around an observation in a loop's step."""
    test = head.test if isinstance(head, ast.If) else None
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and \
        isinstance(test.operand, ast.Call) and is_rt(test.operand.func, ("replaying",))


def _compiled_function(block, taken, kernels):
    """The function ``block`` decorated, its slices and stores rewritten, its
    temporaries fused and its elementwise operations computed by ``kernels``."""
    body = fused_runs(_rewritten(block.body), block.head.name, taken, kernels)
    body = fuse(body, {a.arg for a in block.head.args.args})
    body = _with_kernels(body, block.head.name, taken, kernels)
    return Block(decorated(block.head), body, block.line, block.adjoint)


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
            head = decorated(sx.def_(name, params), elementwise=True)
            self.kernels[key] = (name, Block(head, [
                Comment(f"{self.where}, one element at a time (NumPy: whole arrays)"),
                Line(sx.return_([element]))]))
        name = self.kernels[key][0]
        return sx.call(sx.name(name), *[self.visit(o) for o in operands])
