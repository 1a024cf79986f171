"""Desugar: the user's function, rewritten (gast -> gast, in place) into the forms
the rest of the compiler knows, one pass after another.

Each pass rewrites a form of Python into one the next stages already handle,
keeping what the code computes exactly; the order matters where one pass's output
is another's input.  For the differentiated function and every helper the
lowering may inline (``fence/fence_once.py`` calls :func:`desugar` for each):

0. ``constant_arguments.py`` (the differentiated function, compiled for the string
   arguments the call gives, where it was refused with them as values of the run):
   each read of such a parameter as its constant;
   ``empty_displays.py``: ``list()``, ``dict()``, ``tuple()`` as ``[]``, ``{}``, ``()``;
   ``enumerate_starts.py``: ``enumerate(xs, start=k)`` as ``enumerate(xs, k)``;
   ``attribute_calls.py``: ``getattr(obj, "h")`` and ``setattr(obj, "h", v)`` as
   ``obj.h`` and ``obj.h = v`` (also with a local bound once to ``"h"`` before; a
   helper's, as inlining copies it);
   ``error_states.py``: ``with np.errstate(divide="ignore"): body`` as ``body``;
   ``extreme_arguments.py``: ``max(a, b, c)``, ``min([a, b])`` as pairs
   ``max(max(a, b), c)``;
   ``outer_calls.py``: ``np.add.outer(a, b)`` (a binary ufunc's ``outer``) as
   ``np.add(np.reshape(a, np.shape(a) + (1,) * np.ndim(b)), b)``;
   ``masked_ufuncs.py``: ``y = np.divide(a, b, out=np.zeros_like(a), where=b != 0)``
   as ``y = np.zeros_like(a)``, the ufunc of operands masked to 1 where the mask is
   false, and ``y[...] = np.where(mask, value, y)``;
1. ``evaluate_once.py``: ``a = b = e``, ``v[f()] += x``, ``a[0], a[1] = a[1], a[0]``,
   each part evaluated once and in Python's order;
1b. ``named_expressions.py``: a ``:=`` evaluated first in its statement
   (``while (k := k + 1) < n``, ``if (m := f(x)) > 1``) as the assignment before it
   (and, for a ``while`` test, at the end of each trip and before each ``continue``);
2. ``def_defaults.py``: a nested ``def``'s defaults that read local names, bound
   where the ``def`` runs; ``function_loops.py``: ``for act in (np.tanh, f)``,
   unrolled (each call of ``act`` then names its function; also ``zip(Ws,
   ACTS)`` with lists of known length, a local list of lambdas, each named, and
   ``sum(f(x) for f in fs)``; again after 3 where the call gives containers: a
   helper's ``zip(params, ACTS)`` over the caller's list, then 3 again); ``map_calls.py``:
   ``a, b = map(f, xs)``, ``list(map(f, xs))``, ``for h in map(f, xs)`` as the
   comprehension or loop they are, ``m = map(f, xs)`` (and any other) as the
   generator expression it is (before 5, which writes it as a loop);
   ``partial_calls.py``: ``p = functools.partial(f, a)`` bound once, each ``p(x)``
   written ``f(a_2, x)`` (``a`` evaluated where ``partial`` ran; a lambda or a
   method ``f`` too, named there); ``spread_arguments.py``: ``g(*(a, b))``,
   ``g(**{"k": v})`` and spreads of a name bound once to such a display, as
   ``g(a, b, k=v)`` (inlining runs these three again after each round);
2b. ``checkpoint_calls.py``: ``tc.checkpoint(fn, *args)`` as ``fn``'s call in a
   ``with`` on a segment marker, ``with tc.checkpoint_scope(...)`` on a scope marker,
   ``tc.checkpointed_loop(step, x0, n, s)`` as ``for k in range(n): state =
   step(state)`` in a ``with`` on a loop marker (``segment_markers.py``; the lowering
   makes them an ``ir.Segment`` and a checkpointed ``ir.For``; before 3, so the calls
   they leave are inlined like any other);
2c. ``named_constructions.py``: ``return Model(W).loss(x)``, the object bound to a
   name first (``model = Model(W)``), each operand evaluated before it in its
   statement bound to a name before that (``operand = np.sum(W ** 2)``);
   ``object_lists.py``: ``layers = [Dense(W1, b1), Tanh()]`` (or a comprehension
   of objects over a constant range, a display or a list the call gives, or
   ``layers = []`` and a statement ``layers.append(Dense(...))`` per object, or
   loops appending them that ``static_loops.py`` would unroll, ``for k in
   range(3)`` too, written as their trips first) only read (by a number, ``len``,
   loops and comprehensions over it), one name per object (``layers_0 = Dense(W1,
   b1)``), each loop over it unrolled; ``opts = {"W": Adam(W), "b": Adam(b)}``
   read by constant keys the same (``opts_W = Adam(W)``); an item naming an object
   made once (``keep = [opt]``) read as that name; ``a, b = Dense(W, b), Tanh()``, one binding
   per object (before 3, which makes each such object names; and again after 3,
   for a list read in a helper's body 3 inlined, then 3 again);
3. ``inline_functions.py``: calls of the user's functions (and ``for`` loops over
   the user's generators, a comprehension over one written as its loop first by
   ``comprehension_loops.py`` and ``enumerate`` of one as its counted loop by
   ``user_generators.py``; ``Cls.make(W)``, a ``classmethod``, with ``cls`` the
   class) written as the statements of their bodies, in Python's
   order (after 1: ``a = b = f(x)`` is one call; after 2: a default is a name; a
   call in ``a if c else b``, ``and``/``or`` or a ``while`` test with the ``if``
   statements that run the expression's parts, after 2b: ``tc.checkpoint`` there);
   with it ``scalar_objects.py``: each object of a user's class the function
   makes, its ``__init__`` and methods inlined, written as one name per attribute
   (``records.py``: a named tuple's or dataclass's generated constructor written
   as its field stores, a named tuple's tuple forms as field reads),
   and ``function_names.py``: a local surely naming one function, called by its name
   (one bound only to a method of one object, ``f = model.rhs``, called as the method;
   a helper's parameter given ``model.rhs`` stands for it, so the object is names;
   ``f = Derivatives.pend`` by the dotted name; ``f == pend`` decided);
   then ``constant_flags.py``: ``if log:`` of a local bound to a constant on every
   path to it (``log = False``, a helper's default inlining bound), as the branch
   that runs (POT's ``if log: log = {"err": []}`` dropped), an option a helper
   normalises bound as the string it gives (``key = name.lower()``: then
   ``function_names.py`` and 3 again, for ``LIMS[key](u)``);
   then ``keyed_lists.py``: a dict of constant keys bound once and only indexed by
   them, an item's method called (``log["loss"].append(l)``), as one name per key
   (``log_loss``: a list the function holds under one name);
   then ``prepended_lists.py``: a list grown only by ``returns.insert(0, G)``, at
   least once in a loop, as ``returns_reversed.append(G)`` read backwards
   (``returns_reversed[::-1]``: a list the lowering builds at run time, where the
   slices ``list_methods.py`` writes for ``insert`` change its length in the loop);
   then ``list_methods.py``: ``buf.pop(0)``, ``v = buf.pop()``, ``buf.insert(k, v)``,
   ``buf.reverse()``, ``buf.clear()``, ``buf.sort()`` (as ``buf = sorted(buf)``),
   ``del buf[k]`` on a list the function makes
   and holds under one name (``buf = []``, or ``bs, cs = [], []``), as the slices
   that make the same list (``buf = buf[1:]``);
   then ``concatenated_lists.py``: ``errs = errs + [e]``, ``errs += [a, b]`` on such a
   list (its reads that keep it only after it stops growing) as ``errs.append(e)``,
   ``errs.extend([a, b])``;
   then ``tuple_extensions.py``: ``t += (x,)`` on a local surely holding a tuple
   as ``t = t + (x,)`` (a new tuple: an alias keeps the old one);
   then ``boolean_values.py``: ``x = a or b`` / ``x = a and b`` as the ``if`` choosing
   the operand (``rng = rng or np.random.default_rng(0)``: ``if not rng: rng = ...``);
   then ``one_shot_iterators.py``: a name bound to an iterator (``map``, ``zip``,
   ``enumerate``, a generator expression, ...) read twice, or in a loop, refused
   (the rest holds it as the tuple of its items, which a second read would see again);
3b. ``first_iterations.py``: a ``range`` loop whose first iteration binds a name
   that was None (``if opt_m is None: opt_m = {}``), peeled (after 3: an
   optimiser's ``update`` is the loop's own code; a loop whose end is known at run
   time under ``if range(n):``);
4. ``raising_branches.py``: a branch that raises becomes a check, the rest of the
   function the other path;
5. ``tuple_loops.py``: ``for Z in (U, V)`` loops writing through ``Z``, unrolled;
   ``comprehension_loops.py``: list and dict comprehensions and generator
   expressions consumed at once (one bound to a name moved to its read), as
   ``items = []`` (``{}``) and the loop filling it before the statement (after 3's
   iterator check, which reads the generator expressions;
   after ``tuple_loops.py``, which would copy the loops it declares);
   ``ndindex_loops.py``: ``for i, j in np.ndindex(n, m)``, nested ``range`` loops;
6. ``loop_exits.py``: ``for``/``while ... else`` and ``return`` inside a loop, as
   flags and ``break`` (after 5: a return in an unrolled tuple loop stays a return);
6b. ``row_loops.py``: ``for row in X`` writing into ``row``, as ``for k in
   range(len(X)): row = X[k]`` (a view the view pass follows);
6c. ``static_loops.py``: ``for k, v in enumerate([a, b])``, ``for name in ("enc",
   "dec")``, ``zip`` of displays, strings and constant ranges, ``for W, b in
   params`` and ``for k, v in params.items()`` over a list, tuple or dict the call
   gives and the function only reads (a container nested in it too: ``for W, b in
   params[0]``, ``layer = params[0]``, ``enc, dec = params``), over a local every
   binding of which is a display of one structure that the function reads and
   stores items of (``for k in params: params[k] -= ...``, ``for i in
   range(len(ws)): ws[i] -= ...``), and over a name bound once to a display and
   only read (``ws = [a, b]; for w in ws``, ``d = {...}; d.items()``; also in a
   nested block holding its reads: ``for t: ws = (a, b); for w in ws``; a list
   built by ``ws.append(e)`` statements in straight code, or in the copies of a
   loop unrolled here, written as that display first; a comprehension's loop over
   any of these too, its conditions decided in each copy, ``if k != 1``; a range
   whose bound is a local bound once to an int, ``n = 4; range(n - 1)``; a header's
   display of calls or subscripts, ``enumerate([np.sin(a), b])``, its items bound
   first in their order; a constant slice ``ws[1:]`` of a list only read; the facts
   of ``fixed_structures.py``): the body
   once per item, a constant variable folded into its copy (``d["enc"]``, ``if 0
   == 0:``), ``continue`` and ``break`` as the rest of the copy in the ``if``'s
   other branch and a flag the later copies test; in a loop left for the
   lowering (``for w in [Dense(W, b), b]``) a name in the header's display that the
   body or target binds again read from ``b_item = b`` bound before it, and a
   container its header reads (``ws``, ``ws[1:]``) that the body binds again from
   ``ws_iter = ws``, and a copy it makes of one whose items the body writes as
   ``ws_iter = ws[:2]`` before it (after 5:
   the loops comprehensions became; after 6: a ``return`` there is a ``break``);
6d. ``tuple_lists.py``: ``traj = []`` grown by ``traj.append((s, a, r))`` in a loop
   (a loop of run-time length, ``range(200)``, ``for x in xs`` over an array given)
   and read by item (``traj[t][2]``),
   its truth (``if traj:``) or by loops (``for s, a, r in reversed(traj)``), also
   through an alias ``other = traj`` (read as ``traj``),
   as one list per tuple position (``traj_2[t]``, ``zip(traj_0[::-1], ...)``;
   ``enumerate(traj, 1)`` counted from 0, ``i = i_0 + 1``), each
   the lowering's list built at run time (after 5: a comprehension over it is a
   loop; after 6c: a loop over a display that appended is unrolled);
   then ``enumerate_starts.py`` again: each loop left counting from a start
   (``for i, row in enumerate(A, 1)`` over an array's rows) as ``for i_0, row in
   enumerate(A): i = i_0 + 1`` (the lowering counts from 0 only);
6e. ``starred_targets.py``: ``a, *rest, z = [x0, x1, x2, x3]`` (a display, a name
   bound to one just before, a list the call gives) as ``a, rest, z = x0, [x1,
   x2], x3``, also a ``for`` target over a display of displays; any other starred
   target refused (after 6c, whose copies bind plain targets, and 6d);
   ``extreme_items.py``: ``max(xs)``, ``min(xs)`` of such a list as pairs
   ``max(max(xs[0], xs[1]), xs[2])``, ``ys = sorted(xs)`` as ``ys_order =
   sorted_order(xs)`` and ``ys = [item_at(ys_order, 0, xs[0], ...), ...]`` (after
   5 and 6c: the appends of a comprehension or a loop they unrolled);
7. ``fill_calls.py``: ``a.fill(v)`` on an array, the write ``a[...] = v``;
   ``shuffle_calls.py``: ``np.random.shuffle(a)``, ``a[...] = np.random.permutation(a)``;
   ``dict_keys.py``: ``for k in d.keys()`` over a dict, ``for k in d``;
8. ``chained_subscripts.py``: ``U[i][j] = v`` on an array, ``U[i, j] = v`` (7 and
   8 read ``local_bindings.py``); ``transposed_targets.py``: ``D.T[:] -= x`` of an array as
   ``D_T = D.T; D_T[:] -= x``, a view the next pass follows;
9. ``views.py``: writes through views and aliases carried to every name sharing
   the memory (the fence refuses what it cannot follow);
10. ``outside_attributes.py``: the attributes the function stores on an object
   made outside it (``CELL.h = h``, a method of a module-level object inlined by
   3), written as names (``CELL_h``), bound at the top from the object where a
   read may come first (after 9: the fence judges a write through ``CELL_h``,
   bound to the object's array, as one into an array a module-level object holds).

``tangent-ckpt dump FILE.py:FUNC --stage desugar`` prints the result.
"""

import threading
import types

import gast

from tangent_ckpt.compiler.desugar.attribute_calls import write_attribute_calls
from tangent_ckpt.compiler.desugar.boolean_values import write_boolean_values
from tangent_ckpt.compiler.desugar.chained_subscripts import join_chained_subscripts
from tangent_ckpt.compiler.desugar.checkpoint_calls import write_checkpoint_calls
from tangent_ckpt.compiler.desugar.comprehension_loops import (
    over_user_generators, write_comprehension_loops,
)
from tangent_ckpt.compiler.desugar.concatenated_lists import write_concatenated_lists
from tangent_ckpt.compiler.desugar.constant_flags import fold_constant_flags
from tangent_ckpt.compiler.desugar.def_defaults import bind_def_defaults
from tangent_ckpt.compiler.desugar.dict_keys import iterate_dicts_directly
from tangent_ckpt.compiler.desugar.empty_displays import write_empty_displays
from tangent_ckpt.compiler.desugar.enumerate_starts import (count_enumerates_from_zero,
                                                            position_enumerate_starts)
from tangent_ckpt.compiler.desugar.error_states import drop_silent_error_states
from tangent_ckpt.compiler.desugar.extreme_arguments import write_extreme_arguments
from tangent_ckpt.compiler.desugar.extreme_items import write_extreme_items
from tangent_ckpt.compiler.desugar.evaluate_once import evaluate_once
from tangent_ckpt.compiler.desugar.fill_calls import rewrite_fill_calls
from tangent_ckpt.compiler.desugar.function_loops import unroll_function_loops
from tangent_ckpt.compiler.desugar.function_names import resolve_function_names
from tangent_ckpt.compiler.desugar.first_iterations import peel_first_iterations
from tangent_ckpt.compiler.desugar.inline_functions import copied, inline_functions
from tangent_ckpt.compiler.desugar.keyed_lists import split_keyed_lists
from tangent_ckpt.compiler.desugar.list_methods import write_list_methods
from tangent_ckpt.compiler.desugar.loop_exits import desugar_loop_exits
from tangent_ckpt.compiler.desugar.map_calls import write_map_calls
from tangent_ckpt.compiler.desugar.masked_ufuncs import write_masked_ufuncs
from tangent_ckpt.compiler.desugar.named_expressions import write_named_expressions
from tangent_ckpt.compiler.desugar.named_constructions import name_constructions
from tangent_ckpt.compiler.desugar.ndindex_loops import nest_ndindex_loops
from tangent_ckpt.compiler.desugar.constant_arguments import read_constant_arguments
from tangent_ckpt.compiler.desugar.object_lists import split_object_lists
from tangent_ckpt.compiler.desugar.outer_calls import write_outer_calls
from tangent_ckpt.compiler.desugar.outside_attributes import write_outside_attributes
from tangent_ckpt.compiler.desugar.parameter_writes import ParameterWrites
from tangent_ckpt.compiler.desugar.one_shot_iterators import refuse_reused_iterators
from tangent_ckpt.compiler.desugar.partial_calls import bind_partials
from tangent_ckpt.compiler.desugar.prepended_lists import append_prepended_lists
from tangent_ckpt.compiler.desugar.raising_branches import hoist_raising_branches
from tangent_ckpt.compiler.desugar.row_loops import index_row_loops
from tangent_ckpt.compiler.desugar.scalar_objects import given_object
from tangent_ckpt.compiler.desugar.shuffle_calls import rewrite_shuffle_calls
from tangent_ckpt.compiler.desugar.spread_arguments import write_spread_arguments
from tangent_ckpt.compiler.desugar.starred_targets import write_starred_targets
from tangent_ckpt.compiler.desugar.static_loops import unroll_static_loops
from tangent_ckpt.compiler.desugar.transposed_targets import name_transposed_targets
from tangent_ckpt.compiler.desugar.user_generators import count_enumerated_generators
from tangent_ckpt.compiler.desugar.tuple_loops import unroll_writing_tuple_loops
from tangent_ckpt.compiler.desugar.tuple_extensions import write_tuple_extensions
from tangent_ckpt.compiler.desugar.tuple_lists import split_tuple_lists
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.views import follow_views
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.compiler.memory_sharing import unbuffered_target, unbuffered_write
from tangent_ckpt.errors import TangentCkptError


def desugar(parsed, helper=False, given=None, structures=None, constants=None):
    """Run the passes on ``parsed.node`` in place; returns what the view pass
    follows (:class:`~.views.Followed`), for the fence.  ``helper``: ``parsed``
    is a function the lowering may inline (views of its parameters are followed
    back to the caller's arrays).  ``given``: {parameter: structure} of the
    objects the call gives (:func:`given_objects`); ``structures``: of the lists,
    tuples and dicts it gives (:func:`given_containers`); ``constants``:
    {parameter: str} the gradient is compiled for (``constant_arguments.py``)."""
    read_constant_arguments(parsed, constants)
    write_empty_displays(parsed)
    position_enumerate_starts(parsed)
    write_attribute_calls(parsed)
    drop_silent_error_states(parsed)
    write_extreme_arguments(parsed)
    write_outer_calls(parsed)
    write_masked_ufuncs(parsed)
    evaluate_once(parsed.node)
    write_named_expressions(parsed.node)
    bind_def_defaults(parsed.node)
    unroll_function_loops(parsed, structures=structures)
    write_map_calls(parsed.node, parsed.resolve)
    bind_partials(parsed.node, parsed.resolve)
    write_spread_arguments(parsed.node)
    write_checkpoint_calls(parsed)
    name_constructions(parsed)
    split_object_lists(parsed, structures)
    write_comprehension_loops(parsed, over_user_generators(parsed))
    count_enumerated_generators(parsed)
    inline_functions(parsed, given)
    if split_object_lists(parsed, structures):  # a list an inlined helper's body reads, by its name
        inline_functions(parsed)
    if structures and unroll_function_loops(parsed, structures=structures):
        inline_functions(parsed)  # a helper's zip(params, ACTS) over the list the call gives
    if fold_constant_flags(parsed) and resolve_function_names(parsed, parsed.node):
        inline_functions(parsed)  # key = "beta" normalised: LIMS[key](u) is lb(u), inlined
    split_keyed_lists(parsed)
    append_prepended_lists(parsed)
    write_list_methods(parsed)
    write_concatenated_lists(parsed)
    write_tuple_extensions(parsed.node)
    write_boolean_values(parsed.node)
    refuse_reused_iterators(parsed)
    peel_first_iterations(parsed, copied)
    hoist_raising_branches(parsed.node)
    unroll_writing_tuple_loops(parsed.node)
    write_comprehension_loops(parsed)
    nest_ndindex_loops(parsed)
    desugar_loop_exits(parsed.node)
    index_row_loops(parsed)
    unroll_static_loops(parsed, structures)
    split_tuple_lists(parsed, structures)
    count_enumerates_from_zero(parsed)
    write_starred_targets(parsed, structures)
    write_extreme_items(parsed, structures)
    bindings = rewrite_fill_calls(parsed)
    bindings = rewrite_shuffle_calls(parsed, bindings)
    iterate_dicts_directly(parsed.node)
    join_chained_subscripts(parsed, bindings)
    name_transposed_targets(parsed, bindings)
    followed = follow_views(parsed, helper, writer_parameters)
    if not helper:  # (a helper's stores are seen by its caller: the lowering's)
        write_outside_attributes(parsed)
    return followed


def given_objects(parsed, containers):
    """{parameter: structure} of the parameters ``containers`` (position ->
    ``container_args.structure_of``) says are given objects that desugar may write
    as one parameter per attribute: positional, without a default."""
    args = parsed.node.args
    positional = args.posonlyargs + args.args
    defaulted = len(args.defaults)
    return {positional[k].id: structure for k, structure in (containers or {}).items()
            if 0 <= k < len(positional) - defaulted and given_object(structure)}


def given_containers(parsed, containers):
    """{parameter: structure} of the parameters ``containers`` (position ->
    ``container_args.structure_of``) says are given a list, tuple or dict of
    arrays and numbers (nested too): positional, without a default (the compiled function is specialised to
    these structures)."""
    args = parsed.node.args
    positional = args.posonlyargs + args.args
    defaulted = len(args.defaults)
    return {positional[k].id: structure for k, structure in (containers or {}).items()
            if 0 <= k < len(positional) - defaulted and structure != "leaf" and
            _of_arrays(structure)}


def _of_arrays(structure):
    """Is ``structure`` a leaf, or a list, tuple or dict of such (no object, no
    named tuple, whose items the lowering binds its own way)?"""
    return structure == "leaf" or structure[0] in ("list", "tuple", "dict") and \
        all(_of_arrays(s) for s in structure[-1])


def containers_left(parsed, containers, parameters):
    """``containers`` (by position among ``parameters``, the names the function
    had) once desugar flattened some into one parameter per leaf: the others, by
    their positions now."""
    left, shift = {}, 0
    for k, name in enumerate(parameters):
        if name in parsed.flattened_parameters:
            shift += len(parsed.flattened_parameters[name]) - 1
        elif k in (containers or {}):
            left[k + shift] = containers[k]
    return left


_ANALYSING = threading.local()  # the helpers being analysed by this thread (recursion)


def writer_parameters(fn):
    """The parameters a user helper writes into, with how: ``"item-call"`` for
    ``H[1:-1] += ...`` or a write through a view of ``H`` (the caller's array),
    ``"aug-call"`` for ``H += ...`` (the caller's array when it is an array),
    ``"rebound-call"`` for a parameter the helper also rebinds, or hands to a
    helper whose write into it is not followed: what the caller's array holds
    after the call is then not known here (followed only where the caller never
    reads it again, ``ViewMarks.unobserved_arguments``)."""
    module = str(getattr(fn, "__module__", "") or "")
    in_progress = _ANALYSING.__dict__.setdefault("codes", set())
    if not isinstance(fn, types.FunctionType) or fn.__code__ in in_progress or \
            module.split(".")[0] in ("numpy", "scipy", "tangent_ckpt"):
        return {}
    in_progress.add(fn.__code__)
    try:
        parsed = parse_function(fn)
        marks = desugar(parsed, helper=True).marks
    except TangentCkptError:
        return {}
    finally:
        in_progress.discard(fn.__code__)
    args = parsed.node.args
    params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    def unbuffered(node):   # np.add.at(H, i, v) writes into H
        if isinstance(node, gast.Expr) and isinstance(node.value, gast.Call) and \
                unbuffered_write(resolve_dotted(node.value.func, parsed.resolve, params)):
            return unbuffered_target(node.value, node)
        return None
    found, unfollowed, rebound = {}, set(), set()
    for param, kind in ParameterWrites(parsed.node, marks, rebound, unbuffered).writes:
        if kind == "unfollowed":
            unfollowed.add(param)
        elif kind == "item-call" or param not in found:
            found[param] = kind
    return {p: "rebound-call" if p in rebound | unfollowed else found[p]
            for p in params if p in found or p in unfollowed}
