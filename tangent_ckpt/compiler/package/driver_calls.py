"""Package: the driver a checkpointed loop calls, as generated code writes it.

``rt.CheckpointedLoop(range(n), snapshots=10, ...)`` with the loop's own options
(``tc.checkpointed_loop``) or the compile's, and the one-line description of
its schedule that the generated comments and the notebook display show.
"""

import ast
import operator
import types

import numpy as np

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.ir import operand_node
from tangent_ckpt.compiler.naming import NUMPY
from tangent_ckpt.errors import TransformError
from tangent_ckpt.runtime import random_state


def schedule_text(loop, options, plan):
    """``"Revolve schedule, 10 snapshots"``: how ``loop`` is checkpointed, with its
    own options or the compile's (``options``; ``plan``: the auto mode's plan)."""
    o = loop.options or options  # tc.checkpointed_loop: its own
    schedule = "online" if isinstance(loop, ir.While) or loop.break_flag else o.schedule
    label = {"revolve": "Revolve", "uniform": "uniform sqrt(n)", "online": "online"}[schedule]
    if o.snapshots:
        size = f"{o.snapshots} snapshots"
    elif plan and o is options:
        size = "snapshots from this loop's share of the auto plan's budget"
    elif o.memory_budget:
        size = f"snapshots fitted to a {o.memory_budget}-byte budget at run time"
    else:
        size = "snapshots chosen from the trip count at run time"
    return f"{label} schedule, {size}"


def budgeted(loop, options, plan):
    """Is this loop's snapshot count fitted to a memory budget at run time?"""
    o = loop.options or options
    return bool(o.memory_budget) or bool(plan and o is options)


def driver_constructor(loop, name, options, plan, in_place=(), segmented=False, probe=False,
                       random=(False, ()), steps=None, next_state=False):
    """``rt.CheckpointedLoop(...)`` for ``loop`` (the driver object ``name``):
    ``in_place``: carried arrays its steps write in place; ``segmented`` /
    ``probe``: it has a taped segment / an adjoint probe function; ``random``:
    what :func:`random_draws` found; ``steps``: what it iterates over (a tree),
    when not the loop's own range; ``next_state``: its adjoint step also takes
    the state after the step."""
    o = loop.options or options
    if isinstance(loop, ir.For):
        steps = sx.copy_tree(steps) if steps is not None else \
            sx.builtin_call("range", *[operand_node(b) for b in loop.bounds])
    else:
        steps = sx.const(None)
    kwargs = {}
    schedule = "online" if isinstance(loop, ir.While) or loop.break_flag else o.schedule
    if schedule != "revolve":
        kwargs["schedule"] = sx.const(schedule)
    if o.snapshots:
        kwargs["snapshots"] = sx.const(o.snapshots)
    if plan and o is options:  # checkpoint="auto"
        kwargs["plan"] = sx.name(plan)
    elif o.memory_budget:
        kwargs["memory_budget"] = sx.const(o.memory_budget)
    if o.disk_snapshots:
        kwargs["disk_snapshots"] = sx.const(o.disk_snapshots)
    if o.costs is not None:
        kwargs["costs"] = sx.const(o.costs)
    if o.disk_snapshots and o.snapshot_store is not None:
        kwargs["snapshot_store"] = _store_node(o.snapshot_store)
    if o.min_steps:
        kwargs["min_steps"] = sx.const(o.min_steps)
    if o.verify:
        kwargs["verify"] = sx.const(True)
    if segmented:
        kwargs["taped_segment"] = sx.name(f"{name}_segment")
    if probe:
        kwargs["adjoint_probe"] = sx.name(f"{name}_probe")
    kwargs["copy_snapshots"] = sx.const(False)  # the steps never write into their input
    if in_place:  # ... but into these, telling the journal what they overwrite
        kwargs["in_place"] = ast.List(elts=[sx.name(c) for c in in_place], ctx=ast.Load())
    if next_state:
        kwargs["next_state"] = sx.const(True)
    global_state, generators = random
    if global_state:
        kwargs["random_state"] = sx.const(True)
    if generators:
        kwargs["generators"] = ast.List(elts=[sx.name(g) for g in generators], ctx=ast.Load())
    kwargs["name"] = sx.const(name)
    return sx.rt("CheckpointedLoop", steps, **kwargs)


def random_draws(body, line, bindings, namer, filename=None, what="loop", test=None,
                 carried=()):
    """The random state ``body`` (of the checkpointed loop or segment at ``line``;
    ``what``: which) draws from, as ``(global_state,
    generators)``: whether it calls NumPy's legacy global random functions, and
    the global names (``bindings``) of the generator objects it reaches without
    being passed them -- a module global, a closure's variable, an object's
    attribute (a generator passed in is found among the steps' arguments).
    A draw from a generator the body picks itself (``rng = gens[k]``) is refused
    (``filename`` names the user's file): no snapshot could put it back; so is
    ``next(it)`` of an iterator made outside the body (``x = next(batches)``): a
    recomputed step would read the items after the ones it read.  ``test``:
    a ``while`` loop's test (``while np.random.rand() < p``), which draws too.
    ``carried``: the names the loop carries from one step to the next; a generator
    the body makes from a seed and carries (``if t == 1: rng = default_rng(9)``,
    drawn from in later steps) is refused: a snapshot restores the states of the
    generators the loop starts with, not of one a step made, so a recomputed step
    would draw other numbers (a silently wrong gradient before this check)."""
    global_state = test is not None and test.draws
    generators = []
    made = _generators_made(body)
    for name in carried:
        if _seeded(made.get(name)):
            raise TransformError(
                f"a random generator made in the checkpointed {what} at line {line} and "
                f"carried to its next steps ({name} = "
                f"{ast.unparse(ir.expr_node(made[name]))})",
                filename=filename, lineno=next(
                    (s.line for s in ir.walk(body) if isinstance(s, ir.Assign) and
                     s.target == name), line),
                construct=name,
                hint="snapshots restore the generators the loop starts with: make every "
                     "generator before the loop, or make it afresh in each step before "
                     "drawing from it, or leave this loop taped (no checkpoint=)")
    for stmt in ir.walk(body):
        if isinstance(stmt, ir.While) and stmt.test.draws:  # an inner while's test
            global_state = True
        expr = getattr(stmt, "expr", None)
        if isinstance(expr, ir.NonDiff):  # if rng.uniform() < p: a draw kept as written
            global_state |= expr.draws
            for call in _next_calls(expr.node, bindings):  # if next(it) > 0: ...
                _refuse_an_outside_iterator(ast.unparse(call), call.args[0], made, line,
                                            stmt.line, filename, what)
            for node in ast.walk(expr.node):
                if _is_numpy_random(node):
                    global_state = True
                if not isinstance(node, ast.Name) or node.id not in bindings:
                    continue
                if random_state.is_generator(bindings[node.id]):
                    _add(generators, node.id)
                    continue
                found = []  # a helper, a method or an object called as written
                global_state |= _reached_generators(bindings[node.id], found, set(), 0)
                for generator in found:
                    _add(generators, _bound_name(generator, bindings, namer))
            continue
        if not isinstance(expr, ir.Prim):
            continue
        if expr.fn is next and expr.args:  # x = next(it)
            spelled = f"next({', '.join(ast.unparse(operand_node(a)) for a in expr.args)})"
            _refuse_an_outside_iterator(spelled, operand_node(expr.args[0]), made, line,
                                        stmt.line, filename, what)
        if random_state.uses_global_state(expr.fn):
            global_state = True
            continue
        owner = random_state.generator_of(expr.fn)  # RS.seed(1), rng.shuffle(...)
        if owner is not None:
            _add(generators, _bound_name(owner, bindings, namer))
        elif expr.fn in _DRAWS and isinstance(expr.args[0], ir.Name):
            root, picked = _generator_root(expr.args[0].id, made)
            if root in bindings:  # RS.randn(3) of a module's RS, GENS[1].normal()
                _add(generators, root)
            elif picked is not None:
                raise TransformError(
                    f"a random draw in the checkpointed {what} at line {line} from a "
                    f"generator that the loop body picks itself ({picked})",
                    filename=filename, lineno=stmt.line, construct=f".{expr.fn.__name__}()",
                    hint="recomputed steps would draw new numbers: bind the generator "
                         "before the loop (rng = ...) and draw from that name, or make "
                         "it in the body from a seed (np.random.default_rng(seed))")
    return global_state, generators


_DRAWS = frozenset(random_state.DRAWS.values())
_SEEDED = (np.random.default_rng, np.random.RandomState, np.random.Generator)


def _next_calls(node, bindings):
    """The calls ``next(it, ...)`` of the builtin in the expression ``node``."""
    return [call for call in ast.walk(node) if isinstance(call, ast.Call) and
            isinstance(call.func, ast.Name) and call.func.id == "next" and call.args and
            bindings.get("next", next) is next]


def _refuse_an_outside_iterator(spelled, iterator, made, line, at, filename, what):
    """Refuse ``next(it)`` (``spelled``; in the body of the checkpointed loop or
    segment at ``line``) where ``it`` is not made in the body: the driver restores
    arrays and random states, never an iterator's position, so the step recomputed
    for the reverse sweep would take other items (a silently wrong gradient before
    this check)."""
    if isinstance(iterator, ast.Name) and iterator.id in made:
        return  # an iterator the step makes afresh each time
    raise TransformError(
        f"{spelled} in the checkpointed {what} at line {line} advances an iterator made "
        "outside it: a step recomputed for the reverse sweep would read the items after "
        "the ones it read the first time",
        filename=filename, lineno=at, construct=spelled,
        hint="index the items (batches[t]) or loop over them (for x in batches), or "
             f"leave this {what} taped (no checkpoint=)")


def _generators_made(body):
    """``{name: expression}`` for every name ``body`` assigns: the Prim or
    NonDiff it is assigned (None for a subscript write or a loop variable)."""
    made = {}
    for stmt in ir.walk(body):
        if isinstance(stmt, ir.Assign):
            made[stmt.target] = stmt.expr
        elif isinstance(stmt, (ir.SetItem, ir.For)):
            made[stmt.target] = None
    return made


def _generator_root(name, made):
    """Where a draw's generator comes from: ``(root, None)`` where it is a name
    the loop body does not assign (an argument of the steps or a global name,
    possibly through items: ``pair[0]``), or a generator the body makes from a
    seed, or one the loop carries from step to step unchanged (``g = state[1]``,
    ``state = (y, g)``: a cycle of items and copies, the generator of the state the
    loop starts with, which the driver keeps with its snapshots); ``(name, text)``
    where the body picks it some other way (``text``: how)."""
    seen = set()
    while name in made and name not in seen:
        seen.add(name)
        expr = made[name]
        if isinstance(expr, ir.Prim) and expr.fn is operator.getitem and \
                isinstance(expr.args[0], ir.Name):
            name = expr.args[0].id  # pair[0]: the generator is an item of pair
            continue
        if isinstance(expr, ir.Copy) and isinstance(expr.value, ir.Name):
            name = expr.value.id
            continue
        if _seeded(expr):
            return None, None  # made again, from the same seed, by a recomputed step
        text = ast.unparse(ir.expr_node(expr)) if expr is not None else name
        return name, text
    return name, None


def _seeded(expr):
    """Whether ``expr`` makes a generator from a seed (``np.random.default_rng(3)``)."""
    return isinstance(expr, ir.Prim) and expr.fn in _SEEDED and any(
        not (isinstance(a, ir.Const) and a.value is None)
        for a in (*expr.args, *expr.kwargs.values()))


def _reached_generators(value, found, seen, depth):
    """Add to ``found`` the generators a value kept as written may draw from when
    it runs (a user function through its closure, defaults and the globals it
    names; a bound method and an object through their attributes and their
    class's functions); True when it may call NumPy's legacy global random
    functions."""
    if id(value) in seen or depth > 4 or isinstance(value, types.ModuleType):
        return False
    seen.add(id(value))
    if random_state.is_generator(value):
        found.append(value)
        return False
    if random_state.uses_global_state(value):
        return True
    inner = []
    legacy = False
    if isinstance(value, types.MethodType):
        inner = [value.__self__, value.__func__]
    elif isinstance(value, types.BuiltinMethodType):
        # a method of a compiled class: NumPy 1.x's Generator.uniform (2.x's is a method)
        inner = [getattr(value, "__self__", None)]
    elif isinstance(value, types.FunctionType):
        if str(getattr(value, "__module__", "") or "").split(".")[0] in _LIBRARIES:
            return False
        names = set()
        codes = [value.__code__]
        while codes:
            code = codes.pop()
            names.update(code.co_names)
            codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        legacy = "random" in names  # np.random.normal(...) in its body
        inner = [value.__globals__[n] for n in sorted(names) if n in value.__globals__]
        inner += [cell.cell_contents for cell in value.__closure__ or ()
                  if _cell_is_set(cell)]
        inner += list(value.__defaults__ or ())
    elif isinstance(value, (list, tuple)):
        inner = list(value)
    elif isinstance(value, dict):
        inner = list(value.values())
    elif isinstance(value, type):
        inner = [v for v in vars(value).values() if isinstance(v, types.FunctionType)]
    elif hasattr(value, "__dict__") and not callable(getattr(value, "__array__", None)):
        inner = [*vars(value).values(), type(value)]
    for item in inner:
        legacy |= _reached_generators(item, found, seen, depth + 1)
    return legacy


_LIBRARIES = ("numpy", "scipy", "tangent_ckpt", "builtins")


def _cell_is_set(cell):
    try:
        cell.cell_contents
    except ValueError:  # an empty cell
        return False
    return True


def _is_numpy_random(node):
    """``np.random.<anything>`` in a syntax tree kept as written."""
    return isinstance(node, ast.Attribute) and node.attr == "random" and \
        isinstance(node.value, ast.Name) and node.value.id in (NUMPY, "np")


def _add(names, name):
    if name not in names:
        names.append(name)


def _bound_name(obj, bindings, namer):
    """The global name generated code sees ``obj`` under, bound now if it has none."""
    for name, value in bindings.items():
        if value is obj:
            return name
    name = namer.fresh("rng")
    bindings[name] = obj
    return name


def _store_node(spec):
    """An rt.SnapshotStore as generated code writes it: a plain folder or URL as a string."""
    options = {}
    if spec.codec is not None:
        options["codec"] = sx.const(spec.codec)
    if spec.level is not None:
        options["level"] = sx.const(spec.level)
    if spec.write_queue != 2:
        options["write_queue"] = sx.const(spec.write_queue)
    if not spec.prefetch:
        options["prefetch"] = sx.const(False)
    if not options:
        return sx.const(spec.where)
    return sx.rt("SnapshotStore", sx.const(spec.where), **options)
