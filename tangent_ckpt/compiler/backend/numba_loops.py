"""Backend numba, the loops: for each checkpointed loop of the packaged gradient,
``loopN_advance`` (many plain steps in one compiled call) and the compiled
sweeps ``loopN_forward_sweep`` / ``loopN_reverse_sweep`` that run its whole
schedule (runtime/jit/numba_sweep.py), attached to the step and the adjoint step
for the driver to find.  Used by :mod:`tangent_ckpt.compiler.backend.numba_code`, with
the helpers both share (the ``@njit`` header, fresh names, a function's trees).
"""

import ast
import dataclasses

from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Comment, Line, trees
from tangent_ckpt.compiler.naming import RUNTIME
from tangent_ckpt.runtime.jit import numba_sweep

__all__ = ["loops_driven", "loop_definitions", "decorated", "fresh", "function_trees",
           "is_rt"]

_CODE = {name: numba_sweep.CODES[kind] for name, kind in (
    ("ADVANCE", "advance"), ("STORE", "store"), ("RESTORE", "restore"),
    ("FIRST_TURN", "first_turn"), ("REVERSE", "reverse"))}


def decorated(head, **options):
    """A copy of the ``def`` header ``head`` with ``@njit(cache=True, ...)``."""
    keywords = [ast.keyword(arg="cache", value=ast.Constant(True))] + \
        [ast.keyword(arg=k, value=ast.Constant(v)) for k, v in options.items()]
    return ast.FunctionDef(name=head.name, args=head.args, body=[],
                           decorator_list=[ast.Call(func=sx.name("njit"), args=[],
                                                    keywords=keywords)],
                           returns=None)


def function_trees(block):
    """Every statement tree of a function block (its parameters' defaults too)."""
    yield block.head.args
    yield from trees(block.body)


def is_rt(node, names):
    """True for ``rt.<one of names>``."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
        node.value.id == RUNTIME and node.attr in names


def fresh(name, taken):
    """``name``, with underscores added until it is not in ``taken`` (then taken)."""
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


def loops_driven(driver, functions):
    """The checkpointed loops ``driver`` runs: its step, adjoint step, and whether
    the adjoint step takes the state after its step."""
    made, loops = {}, {}
    trees = list(function_trees(driver))
    for tree in trees:
        for node in sx.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    is_rt(node.value.func, {"CheckpointedLoop"}) and \
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


def loop_definitions(loops, compiled, taken):
    """For each loop whose step is compiled: ``*_advance``; whose adjoint step is
    too: the two sweeps; and the lines that attach them."""
    definitions, attach = [], []
    for loop in loops:
        step = loop.step.head.name
        if step not in compiled:
            continue
        base = step[:-len("_step")] if step.endswith("_step") else step
        advance = fresh(base + "_advance", taken)
        definitions.append([_advance(loop.step, advance)])
        attach.append(Line(ast.Assign(targets=[ast.Attribute(value=sx.name(step), attr="advance",
                                                             ctx=ast.Store())],
                                      value=sx.name(advance)),
                           comment="the driver runs many plain steps in one call"))
        if loop.adjoint is None or loop.adjoint.head.name not in compiled:
            continue
        forward, reverse = fresh(base + "_forward_sweep", taken), \
            fresh(base + "_reverse_sweep", taken)
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
        own[name] = fresh(name, taken)
    return params, own


def _advance(step, name):
    params, own = _names(step, ("first", "stride", "count", "_"))
    index, state, args = params[0], params[1], params[2:]
    first, stride, count = own["first"], own["stride"], own["count"]
    return Block(decorated(sx.def_(name, [first, stride, count, state] + args)), [
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
    return Block(decorated(sx.def_(name, [codes, first, stride, state, snaps] + args),
                            quiet=True), [
        Comment("the schedule's forward sweep in one compiled call: its plain steps and "
                "snapshot stores up to"),
        Comment(f"its first turn (a row of {codes}: action, count or slot, position; "
                "runtime/jit/numba_sweep.py)"),
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
    adjoint_args = [fresh(a, taken) for a in _params(adjoint)[skip:]]
    states = [state, after] if loop.next_state else [state]
    reverse = Line(sx.assign(bstate, sx.call(
        sx.name(adjoint.head.name), _index_at(first, codes, row, stride),
        *[sx.name(s) for s in states], sx.name(bstate), *[sx.name(a) for a in adjoint_args])))
    keep = [Line(sx.assign(after, sx.name(state)))] if loop.next_state else []
    return Block(decorated(sx.def_(name, [codes, start, first, stride] + states +
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
