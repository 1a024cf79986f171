"""A hypothesis strategy that writes random NumPy programs as Python source.

    from program_strategy import programs, load_program, make_inputs
    @given(programs())
    def test(prog): ...

Each program is ``def f(a, B, c, s, M, n): ... return <scalar>`` over the
supported subset: straight-line code, ``for`` loops (``range`` with run-time or
literal bounds, iteration over an array's rows, ``while``, ``break``) carrying
one to three variables, ``if``/``else`` in loop bodies, nested loops, augmented assignment
and subscript assignment into local arrays, reductions, ``@`` and broadcasting
between the shapes ``()``, ``(3,)``, ``(1, 3)`` and ``(2, 3)``; local variables
sometimes take the names the generated code uses (``rt``, ``tape``, ``state``...).

Values stay well conditioned: every expression carries a bound on its absolute
value, and anything that could exceed it is squashed with ``np.tanh``;
division is by ``2 + cos(.)``, ``log`` and ``sqrt`` see ``1.5 + sin(.)`` and
``1 + x**2``, ``exp`` only sees bounded arguments.  Non-smooth functions are not
generated (an ``if`` on a data-dependent condition is the only kink).

Families of statements beyond that core (``FAMILIES``): random draws in loops
(the legacy ``np.random`` functions, which the harness seeds before every
evaluation, and ``rng = np.random.default_rng(seed)`` made in the function),
trajectories (``S = np.zeros((n + 1, 3)); S[0] = x; S[t + 1] = f(S[t])``),
in-place updates of slices (``v[1:] *= ...``) and ``np.fft`` calls with complex
intermediates, writes through views and aliases, containers and list
building, comprehensions, closures, ``*args``/``**kwargs``.  A family written
before the compiler supports it goes in ``PENDING_FAMILIES`` (written only on
request) until it does; ``tests/test_fuzz.py`` checks that CPython runs what
every family writes.

Arrays assigned into (``v[0] = ...``, ``v += ...``) are always fresh local arrays,
never a parameter or a view of one, so the program never mutates its inputs
(Python semantics would) — the harness checks that the gradient does not either.
"""

import hashlib
import importlib.util
import linecache
import os
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

PARAMS = ("a", "B", "c", "s", "M", "n")
FLOAT_PARAMS = (0, 1, 2, 3, 4)
SHAPES = {"a": (3,), "B": (2, 3), "c": (1, 3), "s": (), "M": (3, 3)}
FAMILY = [(), (3,), (1, 3), (2, 3)]
MAX_BOUND = 6.0
# names generated gradient code introduces (runtime and loop objects, step
# parameters, seeds, saved and transposed copies, plans): programs use them as
# local variables too (the programs never call the builtins that generated code
# calls, such as reversed, so those are fair game as well)
SHADOWING_NAMES = ("rt", "tape", "state", "next_state", "bstate", "steps", "plan", "bf",
                   "df", "result", "loop3", "loop4", "loop4_step", "loop5_adjoint",
                   "loop3_segment", "M_T", "B_T", "s_old", "a_next", "stop", "reversed",
                   "np_2", "rt_2", "bv1", "v1_mul", "ba", "bB", "bs", "bx", "g", "ans",
                   "loop", "i", "np_", "rt_", "tape_2")

#: families of outputs and container arguments (#28): an array returned (the
#: gradient of its sum), ``return loss, aux`` (has_aux), nested lists / tuples /
#: dicts of (W, b) pairs through a helper that rebinds its parameter
OUTPUT_FAMILIES = ("vector_output", "aux_output", "nested_containers")

#: statement families the generator writes (beyond the core), and those written
#: only on request until the compiler supports them (enabled at merge by moving
#: a name from PENDING_FAMILIES to FAMILIES)
FAMILIES = frozenset({"random", "trajectory", "slices", "fft", "views", "containers",
                      "comprehensions", "closures", "varargs", "comprehension_forms",
                      "item_writes", "clock", "loop_views", "carried_tuples",
                      "helper_writes", "loop_variables", "converging_while",
                      "boolean_tests"} | set(OUTPUT_FAMILIES))
#: issue #28's value classes: casts to integer dtypes, generators reached without
#: being passed, items of containers bound to names (see the family_* methods)
VALUE_FAMILIES = ("dtype_casts", "reached_generators", "container_items", "integer_stores")
FAMILIES = FAMILIES | frozenset(VALUE_FAMILIES)
#: the families added to hunt wrong gradients the older ones never wrote
#: (tests/test_fuzz.py runs each of them on its own)
HUNTING_FAMILIES = ("comprehension_forms", "item_writes", "clock", "loop_views",
                    "carried_tuples", "helper_writes", "loop_variables", "converging_while",
                    "boolean_tests") + OUTPUT_FAMILIES + VALUE_FAMILIES
PENDING_FAMILIES = frozenset()
#: a line a family writes to be refused, which tests/test_fuzz.py checks is refused
#: (with the reason after the mark) instead of differentiated
REFUSED_MARK = "# refused:"
#: a read of a name a block that may not run binds (unrun_loop_reads): where Python
#: raises UnboundLocalError there, tests/test_fuzz.py checks both gradients raise it
UNBOUND_MARK = "# unbound if not run"
#: such a read the compiler is known to answer with a value where Python raises
#: (an open wrong result, with the reason after the mark): the harness does not check
#: the program where Python raises (test_fuzz.py pins the reproducer, strict xfail)
OPEN_MARK = "# open:"
#: masked singular operations: sqrt, log, a division, a negative power... at points a
#: mask discards (issue #28: 0 * inf = nan where the adjoint is exactly 0)
FAMILIES |= {"masked_singular"}
HUNTING_FAMILIES += ("masked_singular",)
#: issue #29, what the aliasing fence proves separate: arrays a module-level helper
#: returns (new arrays, one per allocation, beside in-place writes into its
#: arguments' arrays), boolean-mask and fancy-index reads (copies: lists, index arrays,
#: np.argsort, a drawn permutation) written and restored after an in-place update, two
#: buffers swapped after np.copyto / out= writes, a comprehension's new arrays updated
ALIAS_PRECISION_FAMILIES = ("helper_results", "masked_copies", "buffer_swaps",
                            "comprehended_arrays")
FAMILIES |= set(ALIAS_PRECISION_FAMILIES)
HUNTING_FAMILIES += ALIAS_PRECISION_FAMILIES
#: real aliasing followed on purpose (#29): writes through the variable of a loop over
#: a tuple of arrays (``for Z in (U, V): Z[0] = Z[1]``), and writes into the
#: differentiated function's arguments (directly, through a view or a plain alias,
#: through a helper that adds into its parameter).  Written only on request (their
#: own hunting runs): as fillers of other families' programs they meet the fence's
#: static imprecision (a helper's result taken to alias its arguments, #29), which
#: refuses a program no wrong gradient comes from
REQUESTED_FAMILIES = ("tuple_loops", "argument_writes")
HUNTING_FAMILIES += REQUESTED_FAMILIES
#: unbuffered scatter-adds, as particle and mesh codes accumulate (np.add.at,
#: np.subtract.at): random indices that repeat, into a fresh array, a column of it
#: or a named view, in a loop or not (tests/test_effect_calls.py)
FAMILIES |= {"scatter_adds"}
HUNTING_FAMILIES += ("scatter_adds",)
#: statements that name a value twice though Python evaluates it once: ``a = b = e``
#: (one object under two names, one draw) and ``u[rng.integers(k)] op= e`` (one
#: index drawn, the item read and written there), in a loop or not
#: (tests/test_evaluate_once.py)
FAMILIES |= {"evaluated_once"}
HUNTING_FAMILIES += ("evaluated_once",)
#: lists and tuples where NumPy takes an array (np.asarray of them): stored into
#: rows, an operand of an array's operator (augmented too, in a loop or not), a list
#: of lists appended in a loop and read whole by NumPy (session 9's p22, p23, p25)
FAMILIES |= {"lists_as_arrays"}
HUNTING_FAMILIES += ("lists_as_arrays",)

#: iterators bound to a name (map, zip, enumerate, a generator
#: expression): read once (summed, looped over, unpacked, in a comprehension, made
#: and read in each trip of a loop), or read twice, which is refused at the second
#: read (the compiler held them as the tuple of their items: a second read saw the
#: items again where Python sees none; tests/test_one_shot_iterators.py)
FAMILIES |= {"one_shot_iterators"}
HUNTING_FAMILIES += ("one_shot_iterators",)

#: lists and dicts whose items are reached at run time, or look so (session 10's
#: outside hunt, q10 q12 q35): a list grown by concatenation in a loop
#: (``hs = hs + [h]``), a helper writing a dict at keys built at run time
#: (``p["k" + str(i % 2)] = ...``, returned or not), a loop over a constant range
#: reading a static list at ``ps[i - 1]`` (``m = len(ps)``), a local ragged list of
#: lists read at ``A[i][j]`` in a comprehension over ``range(i)`` (a Butcher tableau)
FAMILIES |= {"run_time_containers"}
HUNTING_FAMILIES += ("run_time_containers",)

#: writes spelled another way, which desugar makes explicit (``compiler/desugar/``):
#: ``G.fill(v)``, chains of subscripts ``G[k][k + 1] = ...``, and an input check that
#: raises (never firing here)
FAMILIES |= {"spelled_writes"}
HUNTING_FAMILIES += ("spelled_writes",)
#: a loop body's value read after the loop, whose shape changes from step to step
FAMILIES |= {"body_value_shapes"}
HUNTING_FAMILIES += ("body_value_shapes",)
#: a name that indexes while it holds an int (a range counter, int() of a value, a
#: helper's index parameter) and is rebound to a differentiated number afterwards
#: (the hunt's SIR program: ``cur = pop[i]; i = cur[1]``): activity is per name, the
#: index check asks where the index is read (compiler/analyze/activity.py)
FAMILIES |= {"rebound_indices"}
HUNTING_FAMILIES += ("rebound_indices",)

#: a list or dict holding one array at two places (``[a] * 2``, ``[a, a]``, ``{'p': a,
#: 'q': a}``, one array appended twice), one place updated in place (``L[0] += v``:
#: NumPy changes every place) and the container read after it, which the aliasing
#: fence must refuse; beside places that are each their own array (a comprehension
#: or display of new arrays, appends of new arrays) updated in place, and a repeated
#: place rebound (``L[k] = L[k] * 0.9 + v``), which are differentiated.  Written on
#: its own hunting runs only, as REQUESTED_FAMILIES: a filler of every program, it
#: would redraw the other families' derandomized examples
HUNTING_FAMILIES += ("repeated_items",)


#: repeated_items: form -> (the statements making the container ``L`` (``w``: an
#: array bound first, ``x``, ``y``: new arrays), whether one array is at two places)
REPEATED_ITEMS = {
    "times": ("{L} = [{w}] * 2", True),
    "display": ("{L} = [{w}, {w}]", True),
    "dict": ("{L} = {{'p': {w}, 'q': {w}}}", True),
    "appended": ("{L} = []; {L}.append({w}); {L}.append({w})", True),
    "comprehension": ("{L} = [{w} for _ in range(2)]", True),
    "concatenated": ("{L} = [{w}] + [{w}]", True),
    "rebound": ("{L} = [{w}] * 2", True),
    "fresh_display": ("{L} = [{x}, {y}]", False),
    "fresh_comprehension": ("{L} = [np.zeros(3) + {x} * j for j in range(2)]", False),
    "fresh_appended": ("{L} = []; {L}.append({x}); {L}.append({w} * 0.5)", False),
    "fresh_times": ("{L} = [{x} * 1.0 for _ in range(2)]", False),
    "dict_fresh": ("{L} = {{'p': {x}, 'q': {y}}}", False),
}

#: ways out of a loop that desugar writes as flags and ``break``
#: (``compiler/desugar/loop_exits.py``): ``return`` inside a loop of a helper (a
#: ``for``, a ``while``, ``while True``, nested loops, two returns in an ``if``), and
#: ``for``/``while ... else`` (with a ``break``, and the inner loop's ``else`` that
#: continues the outer loop).  Written on request (its own hunting runs), like
#: REQUESTED_FAMILIES, so that the other families' derandomized samples stay as
#: they were (moving it into FAMILIES is a one-line change, for a merge with time
#: to rerun the whole of test_fuzz.py)
REQUESTED_FAMILIES += ("loop_exits",)
HUNTING_FAMILIES += ("loop_exits",)

#: calls of the user's functions that desugar writes into the caller
#: (``compiler/desugar/inline_functions.py``): inside an expression that reads or
#: draws before the call (what Python evaluates first stays first), a helper writing
#: into its parameter (the caller's array), a helper returning early from a branch,
#: a ``for`` over a user generator whose arguments the loop body rebinds, a closure
#: factory whose argument the caller rebinds before calling the closure, a nested
#: ``def`` whose default reads a name rebound before the call, a
#: ``functools.partial`` of such a name (all three once read the rebound name:
#: silent wrong gradients), an object of a class with a ``super().__init__``, a
#: class default it adds to, a moment it makes in its first call (``if self.m is
#: None``) and a method writing into (or rebinding) the caller's array it holds
#: (``scalar_objects.py``: one name per attribute; ``first_iterations.py``), a nested
#: ``def`` and a ``lambda`` whose own parameter has the helper's parameter's name (the
#: caller's argument once replaced theirs: a silent wrong gradient), a helper rebinding
#: its number parameter by ``x -= ...``, a ``continue`` (and a ``break``) in a loop
#: over a user generator, ``u[0] += f(u)`` by a helper writing nothing, a closure
#: factory called in a loop whose closure reads a local the factory changes after
#: the ``def`` (all once left to the lowering), a loop over a tuple of functions
#: (refused before), an object's method passed to a helper (``_advance(field.rhs,
#: u, h)``, or ``self.rhs`` in a method's loop: the helper's ``f = field.rhs`` in the
#: loop, refused before; ``function_names.py``), and forms the fence or the lowering must refuse (writes
#: through a view of a helper's parameter, or of an object's array, in a call the
#: lowering inlines, now desugar's in a conditional expression; two ``def`` of one
#: name): once silent wrong values; in a loop or not.  Written on
#: request, like
#: ``loop_exits``
REQUESTED_FAMILIES += ("inlined_calls",)
HUNTING_FAMILIES += ("inlined_calls",)

#: generators a loop draws from, made before the loop, or from a seed in each trip
#: before the draw, or made again in a trip and carried to later trips (``if t ==
#: 1: rng = np.random.default_rng(9)``): a checkpointed loop refuses that last one
#: (snapshots restore the generators the loop starts with; recomputed steps drew
#: other numbers: a silent wrong gradient before session 19), a taped one is exact.
#: Written on request, like ``loop_exits``
REQUESTED_FAMILIES += ("rebound_generators",)
HUNTING_FAMILIES += ("rebound_generators",)

#: a list the function makes changed by ``pop``, ``insert``, ``reverse``, ``clear``
#: and ``del`` (``compiler/desugar/list_methods.py`` writes them as the slices that
#: make the same list), a history kept to its last entries in a loop (``if
#: len(hist) > 2: hist.pop(0)``), and the list held under a second name first or
#: changed in a loop over it: rebinding one holder there would be a silent wrong
#: gradient, so those lines must be refused (REFUSED_MARK); two histories made by one
#: statement (``L, M = [], []``), read by a loop (``zip(reversed(L), reversed(M))``)
#: before the oldest pair is popped and a new one appended, as L-BFGS keeps its
#: (s, y) pairs.  Written on request, like ``loop_exits``
REQUESTED_FAMILIES += ("list_methods",)
HUNTING_FAMILIES += ("list_methods",)

#: gradient steps over a list of arrays the function holds (``held_lists.py``):
#: ``gs = [2 * w for w in ws]`` (or appends, or ``[2 * ws[j] for j in ...]``) is new
#: arrays, so ``ws[i] -= lr * gs[i]`` is exact (the fence once read ``2 * w`` as a
#: list maybe repeated); beside the forms that do share, which stay refused
#: (REFUSED_MARK): items that are lists repeated by ``2 * w``, items kept as they
#: are.  Written on request, like ``loop_exits``
REQUESTED_FAMILIES += ("list_steps",)
HUNTING_FAMILIES += ("list_steps",)

#: a loop over a generator expression whose items read a variable the loop's body
#: rebinds (``for y in (np.sum(np.tanh(s) * v) for v in range(n)): s = ...``): Python
#: computes each item at its trip, after the body of the trip before; the compiler
#: wrote the items out whole before the loop (a silent wrong value and gradient
#: before session 21; ``desugar/comprehension_loops.py`` now writes the loop Python
#: runs).  Plain, filtered, enumerated, leaving by ``break`` with an ``else``; read
#: lazily through ``zip`` it is refused (REFUSED_MARK).  Written on request, like
#: ``loop_exits``
REQUESTED_FAMILIES += ("generator_loops",)
HUNTING_FAMILIES += ("generator_loops",)

#: state outside the function (session 20's hunt): a module-level object of the
#: module's own class whose float and array attributes the function stores and reads
#: back (by its name, under another module name, through ``getattr``, by a method, by
#: a helper called in a comprehension, by a closure over it), a counter attribute,
#: module-level generators (NumPy's and ``random.Random``) drawn from, module-level
#: dicts and lists of arrays read; in a loop (checkpointed at the top level) or not.
#: What would not be exact is refused at its line (REFUSED_MARK): the stored attribute
#: read through another path (``CELLS[0].h``, a dict's item, a default parameter's
#: ``cells[0].h``), ``CELL.h += x`` on an array, a write into a module-level dict or
#: list, ``global``.  Each module written holds ``_reset<k>()`` functions that put its
#: objects back as they were made: tests/test_fuzz.py calls them before every
#: evaluation, checks the gradient leaves the objects as they were (it never changes
#: them, docs/python_support.md) and the generators as one run of the function does.
#: Written on request, like ``loop_exits``
REQUESTED_FAMILIES += ("module_state",)
HUNTING_FAMILIES += ("module_state",)

#: an episode buffer (session 22, ``desugar/tuple_lists.py``, ``prepended_lists.py``):
#: a list of tuples of 2 to 4 positions (arrays, floats, ints) appended in a loop of
#: run-time length (``for t in range(n)``, ``range(m)`` of ``m = n + 1``, a ``while``,
#: made again in each trip of an outer loop), once or twice a trip, read in the loop
#: (``traj[-1][j]``, ``traj[t][j]``) and after it by ``for`` over ``traj``,
#: ``reversed(traj)``, ``traj[::-1]``, ``enumerate(traj)`` (of ``reversed(traj)``, from
#: a start; the tuple unpacked or whole), ``traj[u][j]``, ``traj[u]`` assigned or given
#: to a helper, a helper looping over the list, a comprehension, ``len``, and
#: discounted returns inserted at the front (``rets.insert(0, G)``) read by items,
#: ``sum``, ``np.array``; a first read the pass does not split (``zip(traj, other)``,
#: ``traj[u][u % 2]``), and an array the list holds written in place (the one appended,
#: one read from it, a loop variable over it), refused at its line (REFUSED_MARK).
#: Written on request, like ``loop_exits``
REQUESTED_FAMILIES += ("tuple_lists",)
HUNTING_FAMILIES += ("tuple_lists",)

#: a log kept in a dict of constant keys (session 22, ``desugar/keyed_lists.py``):
#: ``log = {"loss": [..], "w": x, "err": [..]}`` in the display's order of keys, in a
#: loop of run-time length (``range(n)``, a ``while``) or of constants, the ``"w"`` item
#: rebound (``log["w"] = ...``) or updated in place (``log["w"] += ...``), appended to
#: (``log["loss"].append(...)``, arrays to ``log["err"]``), read in the loop
#: (``log["loss"][-1]``) and after it (``sum``, ``np.stack``, ``len``, an item).
#: Written on request, like ``loop_exits``
REQUESTED_FAMILIES += ("keyed_lists",)
HUNTING_FAMILIES += ("keyed_lists",)

#: names and coefficients read where Python reads them (session 23): a display on
#: the right of a tuple assignment reading a name the same statement rebinds (``p, q
#: = q, [p, 2.0]``, a dict display too, once or carried through a loop: a silent wrong
#: value before session 22), coefficients a module-level class holds in a *list*
#: (``class _Coef: cs = [0.6, 0.4]``) read by a method as ``for c in self.cs``,
#: ``self.cs[j]`` over ``range(len(self.cs))`` or ``zip(self.cs, self.ds)``, the method
#: called twice or in a loop, and a helper's flag left at its default or given as a
#: constant (``if log: log = {"err": []}``, ``log["err"].append(..)`` only where the
#: flag is true: ``desugar/constant_flags.py``).  Written on request, like ``loop_exits``
REQUESTED_FAMILIES += ("coefficient_forms",)
HUNTING_FAMILIES += ("coefficient_forms",)

#: calls whose keyword arguments come out of parameter order, each drawing from a
#: random generator (made in the function, the legacy ``np.random``, a module-level
#: one): ``f(x, b=rng.normal(), a=rng.normal())``, ``**kwargs`` items around a named
#: keyword, a module-level (or local) ``functools.partial``, a partial's keyword given
#: again, a positional draw before keywords, a ``**{...}`` display, a dict built
#: first, a method, a lambda, a call nested in an argument, a helper drawing after
#: its arguments, ``*args`` before keywords, keyword-only parameters; in a loop or
#: not (session 23 fixed two such silent wrong gradients: the draws went to other
#: parameters).  Written on request, like ``loop_exits``
REQUESTED_FAMILIES += ("keyword_calls",)
HUNTING_FAMILIES += ("keyword_calls",)

#: options chosen by name, and functions chosen from a table (session 24): a helper
#: given a string (a literal, a default it leaves, ``None`` then defaulted) that it
#: normalises (``name = name.strip().lower()``, ``name = name or "alpha"``) and
#: dispatches on (an ``if`` chain on ``==``/``in``, a conditional expression, a
#: module-level dict of functions read at the name or at a normalised key, the item
#: called where it is looked up), and loops over functions (``enumerate`` of a display,
#: a module-level list of them, a local bound once to one); in a loop or not.
#: Written on request, like ``loop_exits``
REQUESTED_FAMILIES += ("option_dispatch",)
HUNTING_FAMILIES += ("option_dispatch",)

#: a list of the module's objects (some holding a function, ``self.act = np.tanh``),
#: or of (object, number) pairs, passed to ``f`` after ``n`` and never in ``wrt``
#: (Program.extra: the harness passes the list a module-level function makes): read by items, by a
#: loop (inside a loop of the function or not), ``enumerate``, its loop variable
#: after the loop (the loop in a branch too), beside a helper storing another
#: attribute or read back by the object's own name; and refused at its line
#: (REFUSED_MARK): an attribute a helper stores read back through the list (after
#: the store, in a loop, through the loop variable after its loop, before it) (session
#: 23: such a read was compiled for the list's structure, the attribute as the call
#: gave it: a silent wrong gradient; a list of objects holding a function then raised
#: "wrt names an object" though it is not in wrt).  Written on request, like
#: ``loop_exits``
REQUESTED_FAMILIES += ("outside_object_lists",)
HUNTING_FAMILIES += ("outside_object_lists",)

#: a list of objects the function makes (a display, a comprehension over a range,
#: appends in a loop of a constant count), their attributes updated by a loop over
#: the list (assignments, or methods storing them; in a loop of ``n`` trips or not),
#: then totalled by a comprehension or a generator given to ``sum``/``max``/``min``
#: that binds the loop's variable again (its own, in its own scope), the last item
#: read after the loop; and comprehensions over a call of a module-level generator
#: function (session 25: the first two were refused, the comprehension's variable
#: counted as a second binding of the loop's; the third refused as a generator loop
#: that could not be inlined).  Written on request, like ``loop_exits``
REQUESTED_FAMILIES += ("object_totals",)
HUNTING_FAMILIES += ("object_totals",)

#: a loop over a container (a list, tuple or dict display of arrays) whose body
#: binds the container's name again (session 24's wrong gradient: the lowering's
#: later copies read the items of the container the body bound; Python's iterator
#: keeps the one of before the loop): the header reads the name (``ws``,
#: ``enumerate``, ``zip``, ``reversed``, ``d.items()``, ``d.values()``, ``d`` and
#: ``d[k]``) or an expression of it Python evaluates once (``ws[1:]``, ``ws[::-1]``,
#: ``list(ws)``, ``enumerate(ws[1:])``, ``zip(ws[1:], ws[:-1])``,
#: ``list(d.items())``: a wrong value and gradient until session 25), the body binds
#: it by a display (of another length too), a comprehension over it, a helper, a
#: tuple assignment or in a branch, or writes one of its items (``ws[1] = ...``,
#: ``d['q'] = ...``: a copy the header made keeps the old items, a wrong value and
#: gradient until session 25), in a loop of ``n`` trips or not.  Written on
#: request, like ``loop_exits``
REQUESTED_FAMILIES += ("rebound_iterables",)
HUNTING_FAMILIES += ("rebound_iterables",)

#: views and aliases taken before their root is bound again in a loop (session 24:
#: a view read in the next trip was taken again of the NEW root: 430.8 for 169.3;
#: an alias read after its loop whose root is rebound then written: 13.02 for
#: 12.37): the alias read after the loop, a view of the root copied
#: (``U = U.copy()`` / ``np.array(U)``) then written, ``.T`` and ``reshape`` views,
#: the root updated in place, a view taken in a branch, the previous array carried
#: (``prev = theta``), a swap ``U, V = V, U``; exact.  Refused at their line
#: (REFUSED_MARK): a view read in the next trip across its root's rebinding (``view
#: across a rebinding``) and a root rebound by ``np.asarray`` (the same object) then
#: written (``view kept by asarray``).  Written on request, like ``loop_exits``
REQUESTED_FAMILIES += ("rebound_roots",)
HUNTING_FAMILIES += ("rebound_roots",)

#: a loop's variable read after the loop outside a block that may not run (``if n >
#: k:``, a loop over ``range(n)``, the inner loop of such one in a branch on the
#: trip): where it does not run Python raises UnboundLocalError, and both gradients
#: must raise it too (UNBOUND_MARK on the read; session 24 fixed the field read of a
#: list of objects: the gradient gave a value): a loop over a list of the module's
#: objects read by field after it, a loop over a list of arrays, over ``range``, a
#: name the body binds; the loop's object read through a METHOD, or with the list read
#: after the loop, too (open until session 25's objects fix, 8f3f361).  Written on
#: request, like ``loop_exits``
REQUESTED_FAMILIES += ("unrun_loop_reads",)
HUNTING_FAMILIES += ("unrun_loop_reads",)

#: module_state: the module-level lines written once per statement ({k}: its number,
#: {seed}); ``_Cell{k}`` objects start from ``__init__`` again in ``_reset{k}``
MODULE_STATE_LINES = (
    "import random", "", "",
    "class _Sub{k}:",
    "    def __init__(self):",
    "        self.h = np.array([0.2, 0.1, -0.3])", "", "",
    "class _Cell{k}:",
    "    def __init__(self):",
    "        self.h = np.array([0.1, -0.2, 0.3])",
    "        self.w = 0.5",
    "        self.t = 0",
    "        self.sub = _Sub{k}()",
    "        self.hist = []",
    "        self.cache = {{'h': np.zeros(3)}}",
    "",
    "    @property",
    "    def energy(self):",
    "        return np.sum(self.h ** 2)",
    "",
    "    def __call__(self, x):",
    "        self.h = np.tanh(self.h + x)",
    "        return self.h",
    "",
    "    def outer(self, x):",
    "        return self.inner(x) * 2.0",
    "",
    "    def inner(self, x):",
    "        self.h = np.sin(self.h + x)",
    "        return self.h",
    "",
    "    def step(self, x):",
    "        self.t += 1",
    "        self.h = np.tanh(self.h * 0.9 + x)",
    "        return self.h",
    "",
    "    def noisy(self, x):",
    "        self.h = np.tanh(self.h + 0.1 * RNG{k}.standard_normal(3) + x)",
    "        return self.h", "", "",
    "CELL{k} = _Cell{k}()",
    "OTHER{k} = _Cell{k}()",
    "SUB{k} = CELL{k}.sub",
    "CELLS{k} = [CELL{k}]",
    "PAIR{k} = (CELL{k}, OTHER{k})",
    "ALIAS{k} = CELL{k}",
    "STEP{k} = CELL{k}.step",
    "GET{k} = lambda: CELL{k}.h",
    "BOX{k} = {{'c': CELL{k}}}",
    "RNG{k} = np.random.default_rng({seed})",
    "RR{k} = random.Random({seed})",
    "TABLE{k} = {{'p': np.array([0.2, 0.4, -0.1]), 'q': 0.5}}",
    "ROWS{k} = [np.array([0.3, -0.1, 0.2]), np.array([-0.2, 0.5, 0.1])]", "", "",
    "def _cache{k}(v):",
    "    CELL{k}.h = CELL{k}.h * 0.5 + np.tanh(v)",
    "    return v * CELL{k}.w", "", "",
    "def _noise{k}(v):",
    "    return v + 0.1 * RNG{k}.standard_normal(3)", "", "",
    "def _gauss{k}(v):",
    "    CELL{k}.w = CELL{k}.w * 0.5 + 0.1 * RR{k}.gauss(0.0, 1.0)",
    "    return v * (1.0 + CELL{k}.w)", "", "",
    "def _make{k}(cell):",
    "    def run(v):",
    "        cell.h = np.tanh(cell.h * 0.5 + v)",
    "        return np.sum(cell.h) * cell.w",
    "    return run", "", "",
    "RUN{k} = _make{k}(CELL{k})", "", "",
    "def _make_stepper{k}(cell):",
    "    def stepped(v):",
    "        return cell.step(v)",
    "    return stepped", "", "",
    "STEPPER{k} = _make_stepper{k}(CELL{k})",
    "ARR{k} = np.array([0.5, 0.25, -0.5])", "", "",
    "def _sq{k}(v):",
    "    return v * v", "", "",
    "def _reset{k}():",
    "    for obj in (CELL{k}, OTHER{k}, SUB{k}):",
    "        vars(obj).clear()",
    "        obj.__init__()",
    "    CELL{k}.sub = SUB{k}",
    "    ARR{k}[:] = [0.5, 0.25, -0.5]", "", "",
)

#: module_state: form -> (statements in the loop (or alone), statements after it);
#: {x}: a bounded (3,) expression, {C}: the object's module name, {k}, {t}: the
#: loop index (0 outside a loop), {mark}: REFUSED_MARK for a refused form
MODULE_STATE_FORMS = {
    "store_read": (["{C}.h = np.tanh({C}.h * 0.5 + {x})"], "np.sum({C}.h * {x})"),
    "float_attribute": (["{C}.w = {C}.w * 0.9 + 0.1 * np.sum(np.tanh({x}))"],
                        "{C}.w * np.sum({x})"),
    "counter": (["{C}.t += 1", "{C}.h = {C}.h * 0.5 + 0.1 * {C}.t * {x}"],
                "np.sum({C}.h) * (1.0 + 0.1 * {C}.t)"),
    "method": (["{y} = {C}.step(0.5 * {x})"], "np.sum({y} * {C}.h) + 0.1 * {C}.t"),
    "getattr": (["{C}.h = np.tanh(getattr({C}, 'h') + {x})"],
                "np.sum(getattr({C}, 'h') * {x})"),
    "alias": (["{C}.h = np.tanh({C}.h * 0.5 + {x})"], "np.sum(ALIAS{k}.h * {x})"),
    "comprehension_helper": (["{y} = [_cache{k}(v) for v in ({x}, {x} * s)]"],
                             "np.sum({C}.h) + np.sum({y}[-1])"),
    "closure": (["{y} = RUN{k}({x} * 0.5)"], "{y} + np.sum({C}.h)"),
    "generator": (["{y} = np.tanh({x} + 0.1 * RNG{k}.standard_normal(3)) * "
                   "(1.0 + 0.1 * RR{k}.gauss(0.0, 1.0))"], "np.sum({y})"),
    "generator_helper": (["{y} = [np.sum(_noise{k}(v)) for v in ({x}, {x} * s)]"],
                         "sum({y})"),
    "generator_index": (["{y} = {x}[RNG{k}.integers(0, 3)] * (1.0 + 0.1 * RR{k}.random())"],
                        "{y} * s"),
    "generator_branch": (["if RR{k}.random() < 0.5:", "    {C}.h = np.tanh({C}.h + {x})",
                          "else:", "    {C}.h = {C}.h * RNG{k}.uniform(0.5, 1.0, 3)"],
                         "np.sum({C}.h * {x})"),
    "stdlib_helper": (["{y} = [_gauss{k}(v) for v in ({x}, {x} * s)]"],
                      "np.sum({y}[0] * {y}[-1]) + {C}.w"),
    "table_read": (["{y} = np.tanh(TABLE{k}['p'] * {x} + ROWS{k}[{t} % 2]) * TABLE{k}['q']"],
                   "np.sum({y})"),
    # refused: what would read an old value or change what outlives the call
    "list_path": (["{C}.h = np.tanh({x})"], "np.sum(CELLS{k}[0].h * {x})  {mark} other path"),
    "dict_path": (["{C}.h = np.tanh({x})"], "np.sum(BOX{k}['c'].h * {x})  {mark} other path"),
    "default_path": (["{C}.h = np.tanh({x})"],
                     "np.sum(cells{k}[0].h * {x})  {mark} other path"),
    "in_place": (["{C}.h += 0.1 * np.tanh({x})  {mark} attribute added in place"],
                 "np.sum({C}.h)"),
    "table_write": (["TABLE{k}['p'] = np.tanh({x})  {mark} module container"],
                    "np.sum(TABLE{k}['p'])"),
    "rows_write": (["ROWS{k}[0][1] = np.sum(np.tanh({x}))  {mark} module container"],
                   "np.sum(ROWS{k}[0])"),
    "global": (["global COUNT{k}  {mark} global", "COUNT{k} = COUNT{k} + 1"],
               "np.sum({x}) * COUNT{k}"),
    "counter_list": (["COUNTER{k}[0] += 1  {mark} module container"],
                     "np.sum({x}) * COUNTER{k}[0]"),
    # more ways to store and read back
    "new_attribute": (["{C}.g = np.tanh({x}) * s"], "np.sum({C}.g * {x})"),
    "branch_store": (["if np.sum({x}) > 0.0:", "    {C}.h = np.tanh({C}.h + {x})"],
                     "np.sum({C}.h * {x})"),
    "setattr": (["setattr({C}, 'h', np.tanh({C}.h * 0.5 + {x}))"], "np.sum({C}.h * {x})"),
    "tuple_store": (["{C}.h, {C}.w = np.tanh({C}.h + {x}), {C}.w * 0.9 + 0.1 * s"],
                    "np.sum({C}.h) * {C}.w"),
    "float_augmented": (["{C}.w += 0.1 * np.sum(np.tanh({x}))"], "{C}.w * np.sum({x})"),
    "method_in_comprehension": (["{y} = [{C}.step(0.3 * v) for v in ({x}, {x} * s)]"],
                                "np.sum({y}[0] * {C}.h) + np.sum({y}[-1])"),
    # the array the method stores, changed in place under the caller's name
    "write_returned": (["{y} = {C}.step(0.5 * {x})", "{y} *= 0.5  {mark} cached array written"],
                       "np.sum({C}.h) + np.sum({y})"),
    "old_kept": (["{y} = {C}.h", "{C}.h = np.tanh({x})"], "np.sum({y} * {x}) + np.sum({C}.h)"),
    "lambda": (["{C}.h = np.tanh({C}.h * 0.5 + {x})"], "np.sum(GET{k}() * {x})"),
    "bound_method": (["{y} = STEP{k}(0.5 * {x})"], "np.sum({y} * {C}.h)"),
    "sub_store": (["{C}.sub.h = np.tanh({C}.sub.h * 0.5 + {x})"], "np.sum(SUB{k}.h * {x})"),
    "sub_module_store": (["SUB{k}.h = np.tanh(SUB{k}.h * 0.5 + {x})"],
                         "np.sum({C}.sub.h * {x})"),
    "pair_loop": (["for cell in PAIR{k}:",
                   "    cell.h = np.tanh(cell.h + {x})  {mark} module object written"],
                  "np.sum({C}.h) + np.sum(OTHER{k}.h)"),
    "pair_index": (["{C}.h = np.tanh({x})"], "np.sum(PAIR{k}[0].h * {x})  {mark} other path"),
    "dict_read": (["{C}.h = np.tanh({C}.h * 0.5 + {x})"],
                  "np.sum({C}.__dict__['h'] * {x})  {mark} attribute dict"),
    "vars_read": (["{y} = vars({C})  {mark} attribute dict", "{C}.h = np.tanh({x})"],
                  "np.sum({y}['h'] * {x})"),
    "default_store": (["cell{k}.h = np.tanh({x})  {mark} store through a parameter"],
                      "np.sum({C}.h * {x})"),
    "cached_then_written": (["{y} = np.tanh({x}) * 1.0", "{C}.h = {y}",
                             "{y}[0] = 0.5  {mark} cached array written"],
                            "np.sum({C}.h * {x})"),
    "alias_method": (["{y} = ALIAS{k}.step(0.5 * {x})"], "np.sum({C}.h * {x}) + np.sum({y})"),
    "method_draw": (["{y} = {C}.noisy(0.5 * {x})"], "np.sum({C}.h * {x}) + np.sum({y})"),
    "counter_index": (["{C}.t += 1", "{C}.h = np.tanh({C}.h * 0.5 + ROWS{k}[{C}.t % 2] * {x})"],
                      "np.sum({C}.h * {x}) + 0.1 * {C}.t"),
    "closure_method": (["{y} = [STEPPER{k}(v) for v in ({x}, {x} * s)]"],
                       "np.sum({C}.h * {x}) + np.sum({y}[0]) + 0.1 * {C}.t"),
    "twice_stepped": (["{y} = {C}.step(0.5 * {x})", "{y} = {y} + {C}.step({x} * s)"],
                      "np.sum({y} * {x}) + np.sum({C}.h)"),
    "dict_method": (["{y} = BOX{k}['c'].step(0.5 * {x})  {mark} method on an item"],
                    "np.sum({C}.h * {x}) + np.sum({y})"),
    "attribute_array_written": (["{y} = {C}.h", "{y} *= 0.9  {mark} module object written"],
                                "np.sum({C}.h * {x})"),
    "stored_array_written": (["{C}.h = {x} * s", "{y} = {C}.h",
                              "{y} += 0.1  {mark} cached array written"], "np.sum({C}.h * {x})"),
    "module_array_written": (["{y} = ARR{k}[:2]", "{y} *= 0.9  {mark} module array written"],
                             "np.sum(ARR{k} * {x})"),
    "module_array_out": (["np.multiply({x}, 0.5, out=ARR{k})  {mark} module array written"],
                         "np.sum(ARR{k} * {x})"),
    "while_counter": (["while {C}.t < 2:", "    {C}.t += 1",
                       "    {C}.h = np.tanh({C}.h * 0.5 + {x})"], "np.sum({C}.h * {x})"),
    "property": (["{C}.h = np.tanh({C}.h * 0.5 + {x})"], "{C}.energy * np.sum({x})"),
    "call": (["{y} = {C}(0.5 * {x})"], "np.sum({C}.h * {x}) + np.sum({y})"),
    "nested_method": (["{y} = {C}.outer(0.5 * {x})"], "np.sum({C}.h * {x}) + np.sum({y})"),
    # (a container stored where the lowering follows the object: refused)
    "tuple_attribute": (["{C}.pair = (np.tanh({x}), 0.5 * s){mark_lowering}",
                         "{y}, {y}_w = {C}.pair"], "np.sum({y}) * {y}_w"),
    "dict_attribute": (["{C}.cache = {{'h': np.tanh({x})}}{mark_lowering}"],
                       "np.sum({C}.cache['h'] * {x})"),
    "list_attribute_grown": (["{C}.hist = {C}.hist + [np.tanh({x})]  {mark} list grown"],
                             "np.sum({C}.hist[-1])"),
    "list_attribute_appended": (["{C}.hist.append(np.tanh({x}))  {mark} list appended"],
                                "np.sum({C}.hist[-1])"),
    "dict_attribute_item": (["{C}.cache['h'] = np.tanh({x})  {mark} module object written"],
                            "np.sum({C}.cache['h'])"),
    # another path read before the store: refused too (in a loop the next trip's read
    # comes after a store; the lowering does not tell the first read from the others)
    "path_read_first": (["{y} = np.sum(CELLS{k}[0].h * {x})  {mark} other path",
                         "{C}.h = np.tanh({C}.h * 0.5 + {x})"], "{y} + np.sum({C}.h)"),
}
MODULE_STATE_REFUSED = ("list_path", "dict_path", "default_path", "in_place", "table_write",
                        "rows_write", "global", "counter_list", "path_read_first",
                        "pair_loop", "pair_index", "dict_read", "vars_read", "default_store",
                        "cached_then_written", "write_returned", "dict_method",
                        "attribute_array_written", "stored_array_written",
                        "module_array_written", "module_array_out", "tuple_attribute",
                        "dict_attribute", "list_attribute_grown", "list_attribute_appended",
                        "dict_attribute_item")


#: comprehension_forms: name -> (the comprehension made from the list ``ws``, what
#: reads its items); ``i``, ``j``: item positions, ``others``: a second list's items
COMPREHENSION_FORMS = {
    "same": ("[w for w in {ws}]", "np.sum({out}[{i}] * {out}[{j}]) + np.sum({out}[-1])"),
    "tuple": ("[(w, w * s) for w in {ws}]",
              "sum(np.sum(p * q) for p, q in {out}) + np.sum({out}[{i}][0])"),
    "nested": ("[[w * x for x in {ws}] for w in {ws}]",
               "np.sum({out}[{i}][{j}]) + np.sum({out}[{j}][{i}] * s)"),
    "zip": ("[w * v + v for w, v in zip({ws}, [{others}])]",
            "np.sum({out}[{i}]) + np.sum({out}[{j}] ** 2)"),
    "enumerate": ("[w * (k + 1.0) for k, w in enumerate({ws})]",
                  "np.sum({out}[{i}]) * 0.3 + np.sum({out}[-1] * {out}[0]) * 0.1"),
    "dict": ("{{k: w for k, w in enumerate({ws})}}",
             "np.sum({out}[{i}]) + np.sum({out}[{j}] * s)"),
    "filtered": ("[w for k, w in enumerate({ws}) if k != {i}] + [{ws}[{i}]]",
                 "np.sum({out}[0]) + np.sum({out}[-1] * 0.5)"),
    "stack": ("np.stack([w * s for w in {ws}])",
              "np.sum({out}[{i}]) + np.sum({out} ** 2) * 0.1"),
    "generator": ("sum(w for w in {ws})", "np.sum({out} * {ws}[{i}])"),
    "pairs_of_zip": ("[(v, w) for w, v in zip({ws}, {ws}[1:])]",
                     "np.sum({out}[0][0] * {out}[-1][1])"),
}


@dataclass
class Var:
    shape: tuple
    bound: float
    fresh: bool = False   # a local array nobody else views: safe to assign into
    index: bool = False   # a loop variable: read, never rebound


@dataclass
class Program:
    source: str
    seed: int
    n: int
    wrt: tuple
    features: set = field(default_factory=set)
    #: module-level functions making what ``f`` takes after ``n`` (never in ``wrt``),
    #: called once a check: the outside_object_lists family's lists of the module's
    #: objects (a list no module name holds)
    extra: tuple = ()

    def __repr__(self):  # hypothesis prints this for a failing example
        return (f"Program(seed={self.seed}, n={self.n}, wrt={self.wrt}"
                f"{f', extra={self.extra}' if self.extra else ''})\n"
                f"--- source ---\n{self.source}")


def make_inputs(seed, n):
    """(a, B, c, s, M, n) drawn from the seed: uniform in [-1, 1], M in [-0.5, 0.5]."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, (3,)), rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (1, 3)),
            float(rng.uniform(-1, 1)), rng.uniform(-0.5, 0.5, (3, 3)), int(n)]


def broadcast(s1, s2):
    return tuple(np.broadcast_shapes(s1, s2))


def _size(shape):
    return int(np.prod(shape)) if shape else 1


class _Gen:
    def __init__(self, draw, families=FAMILIES):
        self.draw = draw
        self.families = families
        self.lines = []
        self.helpers = []  # module-level helper functions, written before def f
        self.counter = 0
        self.features = set()
        self.shadowing = set()
        self.vector_output = None  # vector_output: the array variable the return scales
        self.aux_output = None  # aux_output: the variable returned as the aux value
        self.module_refused = False  # module_state: a refused form written
        self.extra = []  # module-level functions making what f takes after n (Program.extra)
        # names the return reads whatever else it reads (unrun_loop_reads: the read
        # Python may raise at feeds the result, a read the gradient needs)
        self.read_at_return = []

    def fresh_name(self, prefix="v"):
        """``v1``, ``v2``...; one time in four a name the generated gradient
        code also uses (SHADOWING_NAMES), which must not confuse it."""
        self.counter += 1
        unused = [n for n in SHADOWING_NAMES if n not in self.shadowing]
        if unused and self.draw(st.integers(0, 3)) == 0:
            name = self.pick(unused)
            self.shadowing.add(name)
            self.features.add("shadowing")
            return name
        return f"{prefix}{self.counter}"

    def emit(self, indent, text):
        self.lines.append("    " * indent + text)

    def pick(self, options):
        return self.draw(st.sampled_from(options))

    # ------------------------------------------------------------ expressions
    def leaf(self, env):
        names = [k for k, v in env.items() if v.shape in FAMILY]
        choice = self.draw(st.integers(0, 9))
        if choice == 0:
            return repr(self.pick([0.5, 1.5, -0.7, 2.0])), (), 2.0
        if choice == 1:
            subs = [(k, v) for k, v in env.items() if v.shape in ((3,), (2, 3), (1, 3))]
            if subs:
                k, v = self.pick(subs)
                if v.shape == (3,):
                    return f"{k}[{self.pick([0, 1, -1])}]", (), v.bound
                if v.shape == (2, 3):
                    return f"{k}[{self.pick([0, 1])}]", (3,), v.bound
                return f"{k}[0]", (3,), v.bound
        k = self.pick(sorted(names))
        return k, env[k].shape, env[k].bound

    def expr(self, env, depth):
        """(text, shape, bound) of a compound expression (never a bare name)."""
        if depth <= 0:
            return self.leaf(env)
        kind = self.draw(st.integers(0, 15))
        if kind >= 12:
            text, shape, bound = self.library_call(env, depth)
        elif kind <= 3:
            op = self.pick(["+", "-", "*"])
            lt, ls, lb = self.expr(env, depth - 1)
            rt, rs, rb = self.expr(env, depth - 1)
            bound = lb * rb if op == "*" else lb + rb
            text, shape = f"({lt} {op} {rt})", broadcast(ls, rs)
        elif kind <= 6:
            t, shape, b = self.expr(env, depth - 1)
            fn = self.pick(["tanh", "sin", "cos", "exp", "log", "sqrt", "square", "neg", "div"])
            if fn in ("tanh", "sin", "cos"):
                text, bound = f"np.{fn}({t})", 1.0
            elif fn == "exp":
                if b > 2.0:
                    t, b = f"np.tanh({t})", 1.0
                text, bound = f"np.exp({t})", float(np.exp(b))
            elif fn == "log":
                text, bound = f"np.log(1.5 + np.sin({t}))", 1.0
            elif fn == "sqrt":
                text, bound = f"np.sqrt(1.0 + ({t}) ** 2)", 1.0 + b
                self.features.add("pow")
            elif fn == "square":
                text, bound = f"np.square({t})", b * b
            elif fn == "neg":
                text, bound = f"(-{t})", b
            else:
                ut, us, ub = self.expr(env, depth - 1)
                text, shape, bound = f"({t} / (2.0 + np.cos({ut})))", broadcast(shape, us), b
                self.features.add("div")
        elif kind <= 8:
            t, shape, b = self.expr(env, depth - 1)
            if shape == ():
                text, bound = f"({t} * s)", b
            else:
                text, bound = f"({t} @ M)", 1.5 * b
                self.features.add("matmul")
        else:
            t, shape, b = self.expr(env, depth - 1)
            if shape == (2, 3):
                form = self.pick(["sum0", "mean0k", "mean", "method"])
                if form == "sum0":
                    text, shape, bound = f"np.sum({t}, axis=0)", (3,), 2 * b
                elif form == "mean0k":
                    text, shape, bound = f"np.mean({t}, axis=0, keepdims=True)", (1, 3), b
                elif form == "mean":
                    text, shape, bound = f"np.mean({t})", (), b
                else:
                    text, shape, bound = f"{t}.sum(axis=0)", (3,), 2 * b
                    self.features.add("method")
            elif shape in ((3,), (1, 3)):
                text, shape, bound = f"np.sum({t})", (), 3 * b
            else:
                text, bound = f"({t} * {self.pick(['0.5', '1.5', 'c[0, 1]', 'a[2]'])})", 1.5 * b
        if bound > MAX_BOUND:
            text, bound = f"np.tanh({text})", 1.0
        return text, shape, bound

    def library_call(self, env, depth):
        """(text, shape, bound) of a call of the wider NumPy library (smooth where
        the program evaluates it): element-wise, statistics, linear algebra,
        building and reshaping."""
        t, shape, b = self.expr(env, depth - 1)
        u, b2 = self.expr_of(env, shape, depth - 1)
        form = self.pick(["arctan", "arcsinh", "logaddexp", "hypot", "arctan2", "sinc", "mod",
                          "deg2rad", "shaped", "linalg", "join", "stats"] +
                         (["fft", "fft"] if "fft" in self.families else []))
        self.features.add(form)
        if form == "fft":
            return self.fft_call(t, shape, b)
        if form == "arctan":
            return f"np.arctan({t})", shape, 1.6
        if form == "arcsinh":
            return f"np.arcsinh({t})", shape, b
        if form == "logaddexp":
            return f"np.logaddexp(np.tanh({t}), {u} * 0.1)", shape, 1.0 + 0.1 * b2 + 0.7
        if form == "hypot":
            return f"np.hypot({t}, 1.5 + np.sin({u}))", shape, b + 2.5
        if form == "arctan2":
            return f"np.arctan2({t}, 2.0 + np.cos({u}))", shape, 3.2
        if form == "sinc":
            return f"np.sinc(np.tanh({t}))", shape, 1.0
        if form == "mod":
            return f"((np.tanh({t}) + 2.0) % 5.0)", shape, 3.0
        if form == "deg2rad":
            return f"np.rad2deg(np.deg2rad({t}))", shape, b
        if shape == ():
            if form == "shaped":
                return f"np.sum(np.linspace({t}, 2.0 * {u} + 1.0, 3) * c[0])", (), 3 * (2 * b2 + 1)
            if form == "linalg":
                return (f"np.tanh(np.linalg.slogdet(M + 3.0 * np.eye(3))[1] * {t})", (), 1.0)
            if form == "join":
                return f"np.sum(np.r_[{t}, {u}, a] * 0.3)", (), 0.3 * (b + b2 + 3)
            return f"np.var(np.stack([{t}, {u}, a[0]]))", (), (b + b2 + 1) ** 2
        if shape == (2, 3):
            options = {
                "shaped": (f"np.flip(np.roll({t}, 1, axis=1), 0)", (2, 3), b),
                "linalg": (f"np.einsum('ij,jk->ik', {t}, M)", (2, 3), 1.5 * b),
                "join": (f"np.vstack(({t}[0], {u}[1]))", (2, 3), max(b, b2)),
                "stats": (f"np.var({t}, axis=0)", (3,), b * b),
            }
            return options[form]
        # (3,) or (1, 3)
        options = {
            "shaped": (f"np.cumsum({t}, axis=-1)", shape, 3 * b),
            "linalg": (f"np.linalg.solve(M + 3.0 * np.eye(3), np.ravel({t}))", (3,), b),
            "join": (f"np.array([np.ravel({t}), np.ravel({u})])", (2, 3), max(b, b2)),
            "stats": (f"np.average(np.r_[np.ravel({t}), np.ravel({u})], weights=np.arange(1.0, 7.0))",
                      (), max(b, b2)),
        }
        return options[form]

    def fft_call(self, t, shape, b):
        """(text, shape, bound) of a spectral expression: complex in between, real out."""
        k = self.pick(["(0.6 + 0.3j)", "(0.5 - 0.4j)", "np.exp(0.3j * np.arange(3))"])
        if shape == ():
            options = [(f"np.sum(np.abs(np.fft.fft(a * {t}, n=4)) ** 2) * 0.05", (), 1 + 2 * b * b),
                       (f"np.real(np.fft.ifft(np.fft.fft(c * {t}) * {k}))[0, 1]", (), b)]
        elif shape == (2, 3):
            options = [(f"np.real(np.fft.ifft2(np.fft.fft2({t}) * (1.0 - 0.5j), norm='ortho'))",
                        (2, 3), 1.2 * b),
                       (f"np.fft.fftshift({t}, axes=1)", (2, 3), b),
                       (f"np.fft.irfft(np.fft.rfft({t}, axis=0) * {k}, n=2, axis=0)", (2, 3),
                        b)]
        else:
            axis = ", axis=-1" if shape == (1, 3) else ""
            options = [(f"np.real(np.fft.ifft(np.fft.fft({t}{axis}) * {k}{axis}))", shape, b),
                       (f"np.fft.irfft(np.fft.rfft({t}{axis}, norm='ortho') * (0.7 + 0.2j), n=3"
                        f"{axis}, norm='ortho')", shape, b),
                       (f"np.imag(np.fft.fft({t}{axis}, norm='ortho'))", shape, 2.0 * b),
                       (f"np.fft.ifftshift({t})", shape, b)]
        return self.pick(options)

    def coerce(self, text, shape, bound, target):
        """An expression of shape ``target`` from one of shape ``shape``."""
        if shape == target:
            return text, bound
        if target == ():
            return (f"np.sum({text})", bound * _size(shape)) if _size(shape) <= 3 \
                else (f"np.mean({text})", bound)
        if shape == ():
            return f"({text} * np.ones({target}))", bound
        if target == (3,):
            return (f"np.sum({text}, axis=0)", bound * shape[0])
        if target == (1, 3):
            if shape == (3,):
                return f"np.reshape({text}, (1, 3))", bound
            return f"np.mean({text}, axis=0, keepdims=True)", bound
        return f"({text} * np.ones((2, 3)))", bound  # target (2, 3)

    def expr_of(self, env, shape, depth):
        t, s, b = self.expr(env, depth)
        t, b = self.coerce(t, s, b, shape)
        if b > MAX_BOUND:
            t, b = f"np.tanh({t})", 1.0
        return t, b

    # ------------------------------------------------------------ statements
    def assign(self, env, indent):
        name = self.fresh_name()
        depth = self.draw(st.integers(1, 3))
        t, s, b = self.expr(env, depth)
        if s not in FAMILY:  # pragma: no cover - all generated shapes are in the family
            t, b = self.coerce(t, s, b, ())
            s = ()
        self.emit(indent, f"{name} = {t}")
        env[name] = Var(s, b, fresh=True)
        return name

    def mutate(self, env, indent, in_loop=False):
        """``v += e`` or ``v[i] = e`` on a fresh local array; False if none."""
        cands = sorted(k for k, v in env.items() if v.fresh)
        if not cands:
            return False
        k = self.pick(cands)
        v = env[k]
        if v.shape != () and self.draw(st.booleans()):
            if v.shape == (3,):
                idx, sub = self.pick(["0", "1", "-1"]), ()
            elif v.shape == (2, 3):
                idx, sub = self.pick(["0", "1"]), (3,)
            else:
                idx, sub = "0", (3,)
            t, b = self.expr_of(env, sub, self.draw(st.integers(1, 2)))
            self.emit(indent, f"{k}[{idx}] = np.tanh({t})")
            v.bound = max(v.bound, 1.0)
            self.features.add("setitem")
        else:
            op = self.pick(["+=", "-=", "*="])
            t, b = self.expr_of(env, v.shape, self.draw(st.integers(1, 2)))
            if op == "*=":
                t = f"np.tanh({t})"
                b = 1.0
            elif in_loop or v.bound + b > MAX_BOUND:
                t = f"0.1 * np.tanh({t})"
                b = 0.1
            self.emit(indent, f"{k} {op} {t}")
            v.bound = v.bound * b if op == "*=" else v.bound + b
            self.features.add("augassign")
        return True

    # ------------------------------------------------------------ families
    def family_statement(self, env, indent, family):
        """One statement (or a few) of ``family``; see FAMILIES and PENDING_FAMILIES."""
        self.features.add(family)
        getattr(self, "family_" + family)(env, indent)

    def _carried(self, env):
        """A variable a loop may rebind (not M, n or a loop index)."""
        names = sorted(k for k, v in env.items() if not v.index and k not in ("M", "n")
                       and v.shape in FAMILY)
        return self.pick(names)

    def family_random(self, env, indent):
        """A loop drawing random numbers: legacy np.random (seeded by the harness
        before every evaluation) or a generator made in the function."""
        k = self._carried(env)
        shape = env[k].shape
        size = "" if shape == () else repr(shape if len(shape) > 1 else shape[0])
        if self.draw(st.booleans()):
            self.features.add("legacy_random")
            # a differentiated scale (the pathwise derivative, the draw kept)
            scale = "(0.2 + 0.1 * np.tanh(s))"
            draw = self.pick([f"np.random.randn({', '.join(map(str, shape))})",
                              f"np.random.normal(0.0, 0.3, size={size or None})",
                              f"np.random.uniform(0.5, 1.5, size={size or None})",
                              f"np.random.standard_normal({size})",
                              f"np.random.normal(0.0, {scale}, size={size or None})",
                              f"np.random.uniform(0.5, 0.5 + {scale}, size={size or None})"])
            if scale in draw:
                self.features.add("random_differentiated_parameter")
        else:
            rng = self.fresh_name("rng")
            self.emit(indent, f"{rng} = np.random.default_rng({self.draw(st.integers(0, 99))})")
            draw = self.pick([f"{rng}.standard_normal({size})",
                              f"{rng}.normal(0.0, 0.3, size={size or None})",
                              f"{rng}.uniform(0.5, 1.5, size={size or None})",
                              f"{rng}.normal(0.1 * s, 0.3, size={size or None})",
                              f"{rng}.laplace(0.0, 0.2 + 0.1 * np.tanh(s), size={size or None})"])
        index = self.fresh_name("t")
        self.emit(indent, f"for {index} in range(n):")
        if "np.random." in draw and self.draw(st.booleans()):  # reseeded in each step
            self.features.add("random_seeded_in_loop")
            self.emit(indent + 1, f"np.random.seed({self.pick(['7', index, f'{index} + 11'])})")
        self.emit(indent + 1, self.pick([f"{k} = np.tanh({k} * 0.9 + 0.1 * {draw})",
                                         f"{k} = np.sin({k}) * {draw} * 0.5",
                                         f"{k} = {k} * 0.5 + np.tanh({k} + {draw})"]))
        env[k].bound = max(env[k].bound, 3.0)
        env[k].fresh = env[k].fresh and k not in PARAMS

    def family_trajectory(self, env, indent):
        """``S = np.zeros((n + 1, 3)); S[0] = x; S[t + 1] = f(S[t])``, then a
        variable that reads the whole trajectory."""
        name = self.fresh_name("S")
        first, _ = self.expr_of(env, (3,), 1)
        step, _ = self.expr_of(env, (3,), self.draw(st.integers(1, 2)))
        self.emit(indent, f"{name} = np.zeros((n + 1, 3))")
        self.emit(indent, f"{name}[0] = np.tanh({first})")
        index = self.fresh_name("t")
        if self.draw(st.booleans()):
            self.emit(indent, f"for {index} in range(n):")
            now, before = f"{index} + 1", index
        else:
            self.emit(indent, f"for {index} in range(1, n + 1):")
            now, before = index, f"{index} - 1"
        self.emit(indent + 1, self.pick([
            f"{name}[{now}] = np.tanh({name}[{before}] @ M + 0.5 * np.tanh({step}))",
            f"{name}[{now}] = 0.9 * {name}[{before}] + 0.1 * np.sin({step})"]))
        total = self.fresh_name()
        self.emit(indent, f"{total} = np.mean({name}, axis=0)")
        env[total] = Var((3,), 2.0, fresh=True)

    def family_slices(self, env, indent):
        """An in-place update of a slice of a fresh local array: ``v[1:] *= ...``.
        The array is a NumPy function's result: the aliasing fence refuses
        ``v[1:] *= ...`` on ``v = c * np.ones(...)`` of a parameter ``c``
        (test_fuzz.py: fence_refuses_slice_update_of_a_broadcast_parameter)."""
        k = self.fresh_name()
        shape = self.pick([(3,), (2, 3)])
        t, _ = self.expr_of(env, shape, 1)
        self.emit(indent, f"{k} = np.tanh({t})")
        env[k] = Var(shape, 1.0, fresh=True)
        part = self.pick(["[0:2]", "[1:]", "[::2]"] if env[k].shape == (3,)
                         else ["[1:]", "[:, 1:]", "[0, ::2]", "[:1]"])
        t, _ = self.expr_of(env, (), self.draw(st.integers(1, 2)))
        op = self.pick(["+=", "-=", "*="])
        self.emit(indent, f"{k}{part} {op} {'' if op == '*=' else '0.1 * '}np.tanh({t})")
        env[k].bound += 0.1

    def family_views(self, env, indent):
        """A write through a view or an alias of a fresh array, the array read
        after by a new variable.  The array and its view stay out of ``env``:
        later statements would rebind the array (``v = v * ...`` in a loop) or
        loop over its rows, which docs/inplace.md refuses while a view of it lives."""
        base = self.fresh_name()
        t, b = self.expr_of(env, (2, 3), 1)
        self.emit(indent, f"{base} = {t} * 1.0")
        view = self.fresh_name("w")
        self.emit(indent, f"{view} = {base}{self.pick(['[1:]', '[:, 1:]', '.T', '', '[0]'])}")
        u, _ = self.expr_of(env, (), 1)
        self.emit(indent, self.pick([f"{view} *= np.tanh({u})", f"{view} += 0.1 * np.sin({u})",
                                     f"{view}[0] = np.tanh({u})"]))
        read = self.fresh_name()
        self.emit(indent, f"{read} = np.tanh({base})")
        env[read] = Var((2, 3), 1.0, fresh=True)

    def family_containers(self, env, indent):
        """Parameters in a list of pairs and a dict, and a list built in a loop."""
        pairs, acc, hs = self.fresh_name("pairs"), self.fresh_name(), self.fresh_name("hs")
        self.emit(indent, f"{pairs} = [(a, c), (B[0], s), (a * 0.5, c[0])]")
        self.emit(indent, f"{acc} = 0.0")
        self.emit(indent, f"for p, q in {pairs}:")
        self.emit(indent + 1, f"{acc} = {acc} + np.sum(np.tanh(p * q))")
        self.emit(indent, f"d = {{'w': a, 'v': B}}")
        # a NumPy function's result: an item computed with `*` from a name the
        # dict holds would make the appends writes into it (docs/python_support.md)
        self.emit(indent, f"{hs} = [np.tanh(d['w'] * {acc})]")
        self.emit(indent, "for t in range(n):")
        self.emit(indent + 1, f"{hs}.append(np.tanh({hs}[-1] @ M + d['v'][0]))")
        total = self.fresh_name()
        self.emit(indent, f"{total} = np.sum(np.stack({hs}), axis=0) / len({hs})")
        env[total] = Var((3,), 1.0, fresh=True)

    def family_comprehensions(self, env, indent):
        """List, generator and dict comprehensions over arrays."""
        ws, total = self.fresh_name("ws"), self.fresh_name()
        self.emit(indent, f"{ws} = [np.sin(a * k) for k in range(3)]")
        self.emit(indent, f"{total} = sum(np.sum(w ** 2) for w in {ws}) * 0.1")
        scaled = self.fresh_name("d")
        self.emit(indent, f"{scaled} = {{k: v * 2.0 for k, v in zip(('x', 'y'), {ws}[:2])}}")
        self.emit(indent, f"{total} = {total} + np.sum({scaled}['y'])")
        env[total] = Var((), 0.9 + 6.0, fresh=True)

    def family_closures(self, env, indent):
        """A function made by a factory, called on arrays."""
        make, inner, fn = self.fresh_name("make"), self.fresh_name("inner"), self.fresh_name("g")
        self.emit(indent, f"def {make}(k):")
        self.emit(indent + 1, f"def {inner}(x):")
        self.emit(indent + 2, "return np.tanh(x * k)")
        self.emit(indent + 1, f"return {inner}")
        self.emit(indent, f"{fn} = {make}(s)")
        total = self.fresh_name()
        self.emit(indent, f"{total} = {fn}(a) + {fn}(c[0]) * 0.5")
        env[total] = Var((3,), 1.5, fresh=True)

    def family_varargs(self, env, indent):
        """A helper with ``*args`` and ``**kwargs``, called with spread arguments."""
        helper = self.fresh_name("h")
        self.emit(indent, f"def {helper}(*xs, **options):")
        self.emit(indent + 1, "total = 0.0")
        self.emit(indent + 1, "for x in xs:")
        self.emit(indent + 2, "total = total + np.sum(np.tanh(x * options.get('scale', 1.0)))")
        self.emit(indent + 1, "return total")
        args, total = self.fresh_name("args"), self.fresh_name()
        self.emit(indent, f"{args} = (a, B, c)")
        self.emit(indent, f"{total} = {helper}(*{args}, scale=0.5) + {helper}(a, s)")
        env[total] = Var((), 10.0, fresh=True)

    def _items(self, env, count, shape=(3,)):
        """``count`` bounded expressions of ``shape`` (|x| <= 1) over ``env``."""
        return [f"np.tanh({self.expr_of(env, shape, self.draw(st.integers(0, 1)))[0]})"
                for _ in range(count)]

    def family_comprehension_forms(self, env, indent):
        """Comprehensions whose item is the loop variable itself, a tuple, another
        comprehension, or reads ``zip``/``enumerate`` targets, and what reads their
        items.  (``[w for w in ws]`` once gave every item the last ``w``.)"""
        ws, out, total = self.fresh_name("ws"), self.fresh_name("cs"), self.fresh_name()
        count = self.draw(st.integers(2, 3))
        self.emit(indent, f"{ws} = [{', '.join(self._items(env, count))}]")
        form = self.pick(sorted(COMPREHENSION_FORMS))
        self.features.add("comprehension_" + form)
        made, read = COMPREHENSION_FORMS[form]
        fields = dict(ws=ws, out=out, i=self.draw(st.integers(0, count - 1)),
                      j=self.draw(st.integers(0, count - 1)))
        if "{others}" in made:
            fields["others"] = ", ".join(self._items(env, count))
        self.emit(indent, f"{out} = " + made.format(**fields))
        read = read.format(**fields)
        self.emit(indent, f"{total} = {read}")
        env[total] = Var((), 3 * count * count, fresh=True)

    def family_item_writes(self, env, indent):
        """Writes into one item of a list or dict of known length, appends, and
        reads of the items after (``S = [x, 2 * x]; S[1] = 2 * x`` once read the
        old item)."""
        L, total = self.fresh_name("L"), self.fresh_name()
        x, y, z = self._items(env, 3, self.pick([(3,), ()]))
        form = self.pick(["list", "list", "dict", "nested"])
        self.features.add("item_writes_" + form)
        if form == "list":
            self.emit(indent, f"{L} = [{x}, 2.0 * {x}]")
            k = self.pick(["0", "1", "-1"])
            self.emit(indent, self.pick([f"{L}[{k}] = {y}", f"{L}[{k}] = 2.0 * {L}[0]",
                                         f"{L}[{k}] = {L}[{k}] * {y}"]))
            if self.draw(st.booleans()):
                self.emit(indent, f"{L}.append(np.sin({L}[-1]) * s)")
            if self.draw(st.booleans()):
                self.emit(indent, f"{L}[0], {L}[1] = {L}[1], {L}[0] * 0.5")
            if self.draw(st.booleans()):
                self.emit(indent, f"{L} += [{z}]")
            read = f"sum(np.sum(v * (k + 1.0)) for k, v in enumerate({L}))"
        elif form == "dict":
            self.emit(indent, f"{L} = {{'p': {x}, 'q': 2.0 * {x}}}")
            self.emit(indent, self.pick([f"{L}['q'] = {y}", f"{L}['q'] = {L}['p'] * {y}",
                                         f"{L}['p'] = {L}['q'] * 0.5"]))
            if self.draw(st.booleans()):
                self.emit(indent, f"{L}['r'] = np.cos({L}['q']) * s")
            if self.draw(st.booleans()):
                # (d.update(...) and {**d} are refused: docs/python_support.md)
                self.emit(indent, f"{L} = {{'p': {L}['p'], 'q': {z}}}")
            read = f"sum(np.sum(v) for v in {L}.values()) + np.sum({L}['p'] * {L}['q'])"
        else:
            self.emit(indent, f"{L} = [[{x}, {y}], [{z}]]")
            # (L[0][1] = ... is refused: rebuild the inner list, docs/python_support.md)
            self.emit(indent, f"{L}[0] = [{L}[0][0], {L}[0][0] * {L}[1][0]]")
            # (L[1].append(...) is refused: tests/test_fuzz.py
            # test_append_to_an_inner_list_of_a_list, a strict xfail)
            self.emit(indent, f"{L}[1] = {L}[1] + [{L}[0][1] + s]")
            read = f"np.sum({L}[0][1]) + np.sum({L}[1][-1]) + np.sum({L}[0][0])"
        self.emit(indent, f"{total} = {read}")
        env[total] = Var((), 30.0, fresh=True)

    def family_clock(self, env, indent):
        """A loop whose step branches on a carried counter, or reads a carried
        value only inside a condition (a Hodgkin-Huxley clock opening a stimulus
        window): the counter must keep counting in every checkpointed step."""
        clock, x, y = self.fresh_name("clk"), self.fresh_name("x"), self.fresh_name("y")
        start, step = self.pick(["0.0", "0", "-0.5"]), self.pick(["0.3", "1", "0.25"])
        self.emit(indent, f"{clock} = {start}")
        self.emit(indent, f"{x} = {self._items(env, 1, self.pick([(3,), ()]))[0]}")
        self.emit(indent, f"{y} = {self._items(env, 1, ())[0]}")
        index = self.fresh_name("t")
        loop = self.pick(["range(n)", "range(4)", "range(1, n + 2)"])
        self.emit(indent, f"for {index} in {loop}:")
        inner = indent + 1
        test = self.pick([f"{clock} > 0.5", f"0.2 < {clock} < 1.2", f"{clock} < 0.8",
                          f"{clock} >= 1 and {index} % 2 == 0"])
        form = self.pick(["window", "only_in_branch", "counter_after", "break_on_clock"])
        self.features.add("clock_" + form)
        if form in ("counter_after", "break_on_clock"):
            self.emit(inner, f"{x} = 0.9 * {x} + 0.1 * np.tanh({x} * s + {y})")
        self.emit(inner, f"if {test}:")
        self.emit(inner + 1, self.pick([f"{x} = {x} + 0.2 * np.tanh({y} + s)",
                                        f"{x} = np.sin({x}) * {y}",
                                        f"{y} = 0.5 * {y} + 0.1 * np.sum({x})"]))
        if form == "only_in_branch":
            self.emit(inner + 1, f"{y} = np.tanh({y} + 0.1 * np.sum({x}))")
        if form != "counter_after" and self.draw(st.booleans()):
            self.emit(inner, "else:")
            self.emit(inner + 1, f"{x} = 0.95 * {x}")
        self.emit(inner, f"{clock} = {clock} + {step}")
        if form == "break_on_clock":
            self.emit(inner, f"if {clock} > 2.5:")
            self.emit(inner + 1, "break")
        total = self.fresh_name()
        self.emit(indent, f"{total} = np.sum({x}) + {y}" +
                  (f" + {clock}" if self.draw(st.booleans()) else ""))
        env[total] = Var((), 10.0, fresh=True)

    def family_loop_views(self, env, indent):
        """Writes into slices of, and through views of, a fresh array carried by a
        loop: ``u[1:] = f(u[:-1])``, ``w = u[1:]; w *= ...``, ``u[0] = ...``."""
        u, total = self.fresh_name("u"), self.fresh_name()
        shape = self.pick([(3,), (2, 3)])
        self.emit(indent, f"{u} = {self._items(env, 1, shape)[0]} * 1.0")
        index = self.fresh_name("t")
        self.emit(indent, f"for {index} in {self.pick(['range(n)', 'range(3)'])}:")
        inner = indent + 1
        if shape == (3,):
            forms = [f"{u}[1:] = 0.9 * {u}[1:] + 0.1 * np.sin({u}[:-1] * s)",
                     f"{u}[0] = np.tanh({u}[-1] + s)",
                     f"{u}[::2] *= np.cos({u}[1] * s)",
                     f"{u}[:2] += 0.1 * np.tanh({u}[1:] * s)"]
        else:
            forms = [f"{u}[1] = np.tanh({u}[0] @ M + s)",
                     f"{u}[:, 1:] += 0.1 * np.tanh({u}[:, :-1] * s)",
                     f"{u}[0, ::2] *= np.cos(s + {u}[1, 1])",
                     f"{u}[:] = np.tanh({u} * s + 0.1)"]
        for text in self.draw(st.lists(st.sampled_from(forms), min_size=1, max_size=2)):
            self.emit(inner, text)
        if self.draw(st.booleans()):
            w = self.fresh_name("w")
            self.emit(inner, f"{w} = {u}{self.pick(['[1:]', '[0]', ''] if shape == (2, 3) else ['[1:]', '[:2]', ''])}")
            self.emit(inner, self.pick([f"{w} *= np.tanh(s + 0.5)", f"{w} += 0.1 * np.sin(s)",
                                        f"{w}[0] = np.tanh({w}[-1] * s)"]))
            self.features.add("loop_views_view")
        if shape == (2, 3) and self.draw(st.booleans()):  # written through its own rows
            row, k = self.fresh_name("row"), self.fresh_name("k")
            header = self.pick([f"for {row} in {u}:", f"for {k}, {row} in enumerate({u}):"])
            self.emit(inner, header)
            self.emit(inner + 1, self.pick([f"{row} *= np.cos(s * 0.5)",
                                            f"{row}[1:] += 0.1 * np.tanh({row}[:-1] + s)",
                                            f"{row}[:] = np.sin({row} * s)"]))
            self.features.add("loop_views_rows")
        self.emit(indent, f"{total} = np.sum({u} ** 2)")
        env[total] = Var((), 6.0, fresh=True)

    def family_evaluated_once(self, env, indent):
        """``a = b = <value>`` with a random draw in the value, or a fresh array then
        written through one name and read through the other; a tuple of rows or
        slices stored from views of each other (``u[0], u[1] = u[1], u[0]``: NumPy
        copies one row into both); ``u[<drawn index>] op=
        <value>`` with the index an int, a slice start or a column, drawn from a
        generator made in the function; in a loop that carries ``u`` or not."""
        rng, u, total = self.fresh_name("rng"), self.fresh_name("u"), self.fresh_name()
        self.emit(indent, f"{rng} = np.random.default_rng({self.draw(st.integers(0, 99))})")
        shape = self.pick([(3,), (2, 3)])
        value, _ = self.expr_of(env, shape, self.draw(st.integers(1, 2)))
        # surely an array: a tuple store of views of what may be a list is refused
        self.emit(indent, f"{u} = np.zeros({shape!r}) + np.tanh({value})")
        inner = indent
        if self.draw(st.booleans()):
            index = self.fresh_name("t")
            self.emit(indent, f"for {index} in {self.pick(['range(n)', 'range(3)'])}:")
            inner = indent + 1
            self.features.add("evaluated_once_loop")
        form = self.pick(["names_draw", "names_write", "index", "tuple_store"])
        self.features.add("evaluated_once_" + form)
        a, b = self.fresh_name("a"), self.fresh_name("b")
        if form == "names_draw":
            size = shape[0] if len(shape) == 1 else shape
            self.emit(inner, f"{a} = {b} = np.tanh({u}) * {rng}.normal(0.0, 0.5, size={size!r})")
            self.emit(inner, f"{u} = {a} * {b} + {a}")
        elif form == "names_write":
            self.emit(inner, f"{a} = {b} = np.zeros({shape!r})")
            self.emit(inner, f"{a}[{self.pick(['0', '-1', '1:'])}] = np.tanh({u})[0]")
            self.emit(inner, f"{u} = {b} * 0.5 + {a} * {u}")
        elif form == "tuple_store":  # the values are views of rows the stores write
            first, second = self.pick([("[0]", "[1]"), ("[1]", "[0]")]) if shape == (2, 3) \
                else self.pick([("[:1]", "[1:2]"), ("[0]", "[2]"), ("[1:]", "[:-1]")])
            # (not `.copy()`: a fresh method is taken to keep its array, so the view
            # pass does not follow the group and the fence refuses it, honestly)
            scale = self.pick(["", " * 0.5"])
            self.emit(inner, f"{u}{first}, {u}{second} = {u}{second}{scale}, {u}{first}")
        else:
            op = self.pick(["+=", "-=", "*="])
            place = self.pick([f"{rng}.integers({shape[0]})", f"{rng}.integers({shape[0]}):"] +
                              ([f":, {rng}.integers(3)"] if shape == (2, 3) else []))
            part = self.pick(["0.5", f"np.tanh({self.expr_of(env, (), 1)[0]})"])
            if place.endswith(":") or self.draw(st.booleans()):  # (two drawn slices
                self.emit(inner, f"{u}[{place}] {op} {part}")    # may differ in length)
            else:  # the value's draw comes first, then the place's
                self.features.add("evaluated_once_value_first")
                self.emit(inner, f"{u}[{place}] = {u}[{place}] {op[0]} {part}")
        self.emit(indent, f"{total} = np.sum(np.tanh({u}) ** 2)")
        env[total] = Var((), float(_size(shape)), fresh=True)

    def family_scatter_adds(self, env, indent):
        """``np.add.at(u, idx, v)`` / ``np.subtract.at`` with random indices that
        repeat (each occurrence adds once), into a fresh array, a column
        ``u[:, j]``, a named view of one, one element per axis (a tuple of index
        arrays) or under a boolean mask, the values a scalar, one per index or
        broadcast along a row; in a loop that carries ``u`` or not."""
        u, total = self.fresh_name("u"), self.fresh_name()
        shape = self.pick([(3,), (2, 3)])
        self.emit(indent, f"{u} = {self._items(env, 1, shape)[0]} * 1.0")
        inner = indent
        if self.draw(st.booleans()):
            index = self.fresh_name("t")
            self.emit(indent, f"for {index} in {self.pick(['range(n)', 'range(3)'])}:")
            inner = indent + 1
            self.features.add("scatter_adds_loop")

        def indices(high):
            return repr(self.draw(st.lists(st.integers(0, high - 1), min_size=3, max_size=3)))
        for _ in range(self.draw(st.integers(1, 2))):
            ufunc = self.pick(["add", "subtract"])
            form = self.pick(["whole", "column", "named", "pairs", "mask"] if shape == (2, 3)
                             else ["whole", "named", "pairs", "mask"])
            self.features.add("scatter_adds_" + form)
            written = self.pick([(), (3,)])   # u[idx] has 3 rows or 3 entries: both broadcast
            if form == "whole":
                target, idx = u, indices(shape[0])
            elif form == "column":
                target, idx = f"{u}[:, {self.pick([0, 1, -1])}]", indices(2)
            elif form == "named":
                target = self.fresh_name("w")
                part = self.pick(["[:, 1]", "[1:]"] if shape == (2, 3) else ["[1:]", "[::2]"])
                self.emit(inner, f"{target} = {u}{part}")
                idx = indices({"[:, 1]": 2, "[1:]": shape[0] - 1, "[::2]": 2}[part])
            elif form == "mask":  # every entry where the mask is True, once
                target, written = u, ()
                mask = self.draw(st.lists(st.booleans(), min_size=_size(shape),
                                          max_size=_size(shape)))
                idx = f"np.array({mask}).reshape({shape!r})"
            else:  # one index array per axis, written as a tuple
                target = u
                arrays = [f"np.array({indices(n)})" for n in shape]
                idx = f"({arrays[0]},)" if len(arrays) == 1 else f"({', '.join(arrays)})"
            value, _ = self.expr_of(env, written, self.draw(st.integers(1, 2)))
            self.emit(inner, f"np.{ufunc}.at({target}, {idx}, 0.1 * np.tanh({value}))")
        self.emit(indent, f"{total} = np.sum(np.tanh({u}) ** 2)")
        env[total] = Var((), float(_size(shape)), fresh=True)

    def family_lists_as_arrays(self, env, indent):
        """A list or tuple of numbers and scalar expressions where NumPy takes an
        array: stored into a row (``Z[0] = (1, 2, 3)``), added into one
        (``Z[t % 3] += [x, 2.0 * y, z]``), an operand of an array's operator
        (``a + [x, 1, y]``, ``[x, 0.5, y] * a``); or a list of lists appended in a
        loop, read whole (``np.asarray(rows)[:, 0]``), its last row read in the loop where
        the list is not empty (``np.asarray(Z)[-1, 0] if Z else 0.0``: its rows are an array, whose
        truth the gradient once took, a bare ValueError)."""
        Z, total = self.fresh_name("Z"), self.fresh_name()
        x, y, z = self._items(env, 3, ())
        form = self.pick(["store", "added", "operator", "rows"])
        self.features.add("lists_as_arrays_" + form)
        loop = self.draw(st.booleans())
        k = self.fresh_name("t")
        inner = indent + 1 if loop else indent
        if form == "rows":
            e = self.fresh_name("e")
            self.emit(indent, f"{e} = {x}")
            self.emit(indent, f"{Z} = [[{e}, {y}, 1]]")
            self.emit(indent, f"for {k} in range({self.pick(['n', '3'])}):")
            self.emit(indent + 1, f"{e} = np.tanh({e} * s + {z})")
            if self.draw(st.booleans()):  # the list's truth: whether it has items
                self.features.add("lists_as_arrays_truth")
                self.emit(indent + 1, f"{e} = {e} + (0.1 * np.asarray({Z})[-1, 0] if {Z} else 0.0)")
            self.emit(indent + 1, f"{Z}.append({self.pick([f'[{e}, {e} * {e}, {k}]', f'({e}, 0.5, {y} * {e})'])})")
            self.emit(indent, f"{total} = np.sum(np.asarray({Z})[:, {self.pick([0, 1, -1])}] ** 2) "
                              f"+ np.sum(np.array({Z})) * 0.1")
            env[total] = Var((), 30.0, fresh=True)
            return
        self.emit(indent, f"{Z} = np.zeros((3, 3))")
        if loop:
            self.emit(indent, f"for {k} in range({self.pick(['n', '3'])}):")
        row = f"{k} % 3" if loop else self.pick(["0", "-1"])
        if form == "store":
            self.emit(inner, f"{Z}[{row}] = {self.pick([f'({x}, 2, {y})', f'[{x}, {y} * {z}, 0.5]', '(1, 2, 3)'])}")
            self.emit(inner, f"{Z}[1] = {Z}[1] * 0.5 + {Z}[{row}] * {z}")
        elif form == "added":
            self.emit(inner, f"{Z}[{row}] {self.pick(['+=', '-=', '*='])} [{x}, 2.0 * {y}, {z}]")
            self.emit(inner, f"{Z}[{row}] += (0.1, {x}, 1)")
        else:
            left = self.pick([f"a + [{x}, 1, {y}]", f"[{x}, 0.5, {y}] * a",
                              f"(a * {z}) - ({y}, {x}, 2)", f"a / [2.0, 1.5 + {x}, 3]"])
            self.emit(inner, f"{Z}[{row}] = np.tanh({left})")
        self.emit(indent, f"{total} = np.sum({Z} * {Z})")
        env[total] = Var((), 90.0, fresh=True)

    def family_run_time_containers(self, env, indent):
        """Lists and dicts reached at run time, or seemingly (the FAMILIES entry
        run_time_containers): ``hs = hs + [h]`` in a loop; a helper writing a dict at
        ``"k" + str(i % 2)``; ``ps[t - 1]`` in a loop over ``range(1, len(ps))``; a
        local ragged tableau ``A[t][j]`` in a comprehension over ``range(t)``."""
        x, y, z = self._items(env, 3)
        total = self.fresh_name()
        form = self.pick(["concatenated", "keys_in_a_helper", "constant_loop", "tableau",
                          "preallocated"])
        self.features.add("run_time_containers_" + form)
        t = self.fresh_name("t")
        if form == "preallocated":
            # a list made of ints (or bools, or int arrays) then filled with floats:
            # a list holds each item itself (the rows, of the first items' dtype,
            # truncated them: a wrong value and a zero gradient)
            hs = self.fresh_name("hs")
            vector = self.draw(st.booleans())
            start = self.pick(["[np.zeros(3, dtype=int)] * (n + 1)", "[np.ones(3, dtype=bool)]"
                               " * (n + 1)", "[np.zeros(3)] * (n + 1)"] if vector else
                              ["[0] * (n + 1)", "[0 for _ in range(n + 1)]", "[False] * (n + 1)",
                               "[0.0] * (n + 1)"])
            self.emit(indent, f"{hs} = {start}")
            self.emit(indent, f"{hs}[0] = {x if vector else f'np.sum({x}) * 0.5'}")
            self.emit(indent, f"for {t} in range(n):")
            self.emit(indent + 1, f"{hs}[{t} + 1] = np.tanh({hs}[{t}] * s + "
                                  f"{y if vector else f'np.sum({y})'})")
            self.emit(indent, f"{total} = " + (f"np.sum(np.stack({hs}), axis=0)" if vector
                                               else f"sum({hs}) * {z}"))
            env[total] = Var((3,), 20.0, fresh=True)
            return
        if form == "concatenated":
            hs = self.fresh_name("hs")
            self.emit(indent, f"{hs} = {self.pick([f'[{x}]', '[]'])}")
            self.emit(indent, f"{hs} = {hs} + [{y} * 0.5]")  # before the loop: known length
            self.emit(indent, f"for {t} in range({self.pick(['n', '3'])}):")
            self.emit(indent + 1, f"{hs} = {hs} + {self.pick([f'[np.tanh({hs}[-1] * s + {z})]', f'[np.sin({hs}[-1]), {z} * {hs}[0]]'])}")
            self.emit(indent, f"{total} = np.sum(np.stack({hs}), axis=0) / len({hs})")
            env[total] = Var((3,), 1.0, fresh=True)
            return
        if form == "keys_in_a_helper":
            helper, p = self.fresh_name("scale"), self.fresh_name("p")
            # a nested helper called for its effect alone is refused by the fence (it
            # may write the arrays it is given): tests/test_containers.py has that
            # form with a module-level helper
            returns = True
            self.emit(indent, f"def {helper}(q, m):")
            self.emit(indent + 1, "for i in range(m):")
            self.emit(indent + 2, 'key = "k" + str(i % 2)')
            self.emit(indent + 2, "q[key] = np.tanh(q[key] * s + q['k' + str(1 - i % 2)])")
            if returns:
                self.emit(indent + 1, "return q")
            self.emit(indent, f"{p} = {{'k0': {x}, 'k1': {y}}}")
            call = f"{helper}({p}, {self.pick(['n', '2', 'len(' + p + ')'])})"
            self.emit(indent, f"{p} = {call}" if returns else call)
            self.emit(indent, f"{total} = {p}['k0'] * {z} + {p}['k1']")
            env[total] = Var((3,), 2.0, fresh=True)
            return
        if form == "constant_loop":
            ps, m = self.fresh_name("ps"), self.fresh_name("m")
            self.emit(indent, f"{ps} = [{x}, {y}, {z}]")
            self.emit(indent, f"{m} = len({ps})")
            self.emit(indent, f"for {t} in range(1, {m}):")
            self.emit(indent + 1, f"{ps}[{t}] = np.tanh({ps}[{t}] * s + {ps}[{t} - 1])")
            self.emit(indent, f"{total} = {ps}[{m} - 1] + {ps}[0] * 0.5")
            env[total] = Var((3,), 1.5, fresh=True)
            return
        A, k = self.fresh_name("A"), self.fresh_name("k")
        self.emit(indent, f"{A} = [[], [0.5], [0.25, {self.pick(['0.5', '-0.5'])}]]")
        self.emit(indent, f"{k} = []")
        self.emit(indent, f"for {t} in range(3):")
        self.emit(indent + 1, f"{k}.append(np.tanh({x} + s * sum([{A}[{t}][j] * {k}[j] "
                              f"for j in range({t})])))")
        self.emit(indent, f"{total} = {k}[2] - {k}[1] * {y}")
        env[total] = Var((3,), 2.0, fresh=True)

    def family_spelled_writes(self, env, indent):
        """A fresh 2-d array filled (``G.fill(v)``, ``G[1].fill(v)``: a write of every
        element), written through chains of subscripts with ``range`` counters
        (``G[k][k + 1] = ...``, ``G[1 - k][0] += ...``, ``G[k][1:] *= ...``: the one
        subscript write ``G[k, k + 1]``), and checked by a ``raise`` that never fires
        here, before the loop or in it (``compiler/desugar/fill_calls.py``,
        ``chained_subscripts.py``, ``raising_branches.py``)."""
        G, k, total = self.fresh_name("G"), self.fresh_name("k"), self.fresh_name()
        x, y = self._items(env, 2, ())
        self.emit(indent, f"{G} = np.zeros((2, 3))")
        fill = self.pick(["0.5", "-1", x])
        self.emit(indent, self.pick([f"{G}.fill({fill})", f"{G}[1].fill({fill})"]))
        if self.draw(st.booleans()):
            self.emit(indent, f"if np.any(np.abs({G}) > 100.0):")
            self.emit(indent + 1, f"raise ValueError(f'{G} too large: {{np.max({G})}}')")
        self.emit(indent, f"for {k} in range(2):")
        i = self.fresh_name("i")  # an index made by int(): an int, as a counter is
        write = self.pick([f"{G}[{k}][{k} + 1] = {G}[{k}][{k}] * {y} + 0.5",
                           f"{G}[1 - {k}][0] += 0.5 * {y}",
                           f"{G}[{k}][1:] *= np.tanh({y} + {k})",
                           f"{G}[{i}][({i} + {k}) % 3] = {G}[{i}][{k}] * {y} + 0.5"])
        if i in write:
            self.features.add("spelled_int_index")
            self.emit(indent + 1, f"{i} = int(np.abs({x}) * 3.0 + {k}) % 2")
        self.emit(indent + 1, write)
        if self.draw(st.booleans()):
            self.emit(indent + 1, f"if {G}[{k}][0] > 100.0:")
            self.emit(indent + 2, f"raise FloatingPointError('diverged at step ' + str({k}))")
            self.emit(indent + 1, f"{G}[{k}][2] = np.sin({G}[{k}][0])")
        self.emit(indent, f"{total} = np.sum({G} * {G})")
        env[total] = Var((), 24.0, fresh=True)

    def family_rebound_indices(self, env, indent):
        """In a ``range`` loop, a name bound to an int (the counter, or ``int()`` of
        a value) reads an item of a vector at it, then is rebound to a
        differentiated number read afterwards; or a helper doing the same with its
        index parameter, called with the counter (inlined: the parameter is
        renamed and rebound in the caller's loop)."""
        j, w, k, total = (self.fresh_name("j"), self.fresh_name("w"), self.fresh_name("k"),
                          self.fresh_name())
        vec, x = self._items(env, 1, (3,))[0], self._items(env, 1, ())[0]
        form = self.pick(["counter", "int", "helper"])
        self.features.add("rebound_indices_" + form)
        self.emit(indent, f"{total} = 0.0")
        self.emit(indent, f"for {k} in range(3):")
        if form == "helper":
            helper = self.fresh_name("pick")
            self.helpers += [f"def {helper}(u, i):", "    w = u[i]",
                             "    i = np.tanh(w * 2.0) + w", "    return w * i", "", ""]
            self.emit(indent + 1, f"{total} = {total} + {helper}({vec}, {k})")
        else:
            start = k if form == "counter" else f"int(np.abs({x}) * 2.0 + {k}) % 3"
            self.emit(indent + 1, f"{j} = {start}")
            self.emit(indent + 1, f"{w} = ({vec})[{j}]")
            self.emit(indent + 1, f"{j} = np.tanh({w} * {x})")
            self.emit(indent + 1, f"{total} = {total} + {w} * {j}")
        env[total] = Var((), 6.0, fresh=True)

    def family_carried_tuples(self, env, indent):
        """Loops carrying state through tuple assignment (a swap), conditional
        expressions, min/max of floats, and a helper function with a default."""
        x, y, total = self.fresh_name("x"), self.fresh_name("y"), self.fresh_name()
        shape = self.pick([(3,), ()])
        px, py = self._items(env, 2, shape)
        self.emit(indent, f"{x}, {y} = {px}, {py}")
        index = self.fresh_name("t")
        self.emit(indent, f"for {index} in {self.pick(['range(n)', 'range(3)'])}:")
        form = self.pick(["swap", "ternary", "minmax", "helper"])
        self.features.add("carried_" + form)
        inner = indent + 1
        if form == "swap":
            self.emit(inner, f"{x}, {y} = {y} * 0.9, np.tanh({x} + s)")
        elif form == "ternary":
            self.emit(inner, f"{x} = np.tanh({x} * s) if {index} % 2 == 0 else {y} * 0.5")
            self.emit(inner, f"{y} = {y} + 0.1 * ({x} if s > 0.0 else -{x})")
        elif form == "minmax":
            self.emit(inner, f"{x} = {x} * min(2.0, 1.0 + {index}) * 0.4 + np.tanh({y})")
            self.emit(inner, f"{y} = {y} * max(0.5, 0.1 * {index})")
        else:
            helper = self.fresh_name("step")
            self.emit(inner, f"def {helper}(p, q, rate=0.5):")
            self.emit(inner + 1, "return p * rate + np.tanh(q * s)")
            self.emit(inner, f"{x} = {helper}({x}, {y})")
            self.emit(inner, f"{y} = {helper}({y}, {x}, rate=0.25)")
        self.emit(indent, f"{total} = np.sum({x}) + np.sum({y} * {y})")
        env[total] = Var((), 10.0, fresh=True)

    def family_helper_writes(self, env, indent):
        """Module-level helpers that write into their parameters, called from a
        helper's loop (npbench's cavity_flow calls pressure_poisson(nit, p, ...) in
        its time loop: each trip read the caller's array again, a silently wrong
        value and gradient), maybe on a parameter of ``f`` rebound to a copy first
        (``a = a.copy()``, once refused as the caller's array)."""
        k = self.counter = self.counter + 1
        write, sweep = f"_write{k}", f"_sweep{k}"
        form = self.pick(["item", "augmented", "two_levels"])
        self.features.add("helper_writes_" + form)
        # a parameter spelled like a keyword with an underscore (npbench's as_) once
        # became `as = ...` in the generated code
        b = self.pick(["b", "lambda_", "in_"])
        self.helpers.append(f"def {write}(p, {b}):")
        if form == "augmented":
            self.helpers.append("    p *= 0.5")
            self.helpers.append(f"    p += np.tanh({b} * 0.5)")
        else:
            self.helpers.append(f"    p[..., 1:] = p[..., 1:] * 0.5 + np.tanh({b}[..., :-1] * 0.5)")
        self.helpers += ["", "", f"def {sweep}(u, p, k):"]
        self.helpers.append("    for q in range(k):")
        self.helpers.append(f"        {write}(p, u)")
        if form == "two_levels":
            self.helpers.append("        un = u.copy()")
            self.helpers.append("        u[..., :-1] = un[..., :-1] * 0.5 + 0.5 * np.tanh(p[..., 1:])")
        self.helpers += ["", ""]
        shape = self.pick([(3,), (2, 3)])
        own = {(3,): "a", (2, 3): "B"}[shape]
        u, p, total = self.fresh_name("u"), self.fresh_name("p"), self.fresh_name()
        if self.draw(st.booleans()):  # the parameter itself, rebound to a copy
            self.emit(indent, f"{own} = {own}.copy()")
            self.features.add("helper_writes_parameter")
            env[own] = Var(shape, 2.0, fresh=False)
            p = own
        else:
            self.emit(indent, f"{p} = {self._items(env, 1, shape)[0]} * 1.0")
        self.emit(indent, f"{u} = {self._items(env, 1, shape)[0]} * 1.0")
        self.emit(indent, f"{sweep}({u}, {p}, {self.pick(['n', '2', '3'])})")
        self.emit(indent, f"{total} = np.sum({p} ** 2) + np.sum({u})")
        env[total] = Var((), 20.0, fresh=True)
        if p != own:
            env[p] = Var(shape, 2.0, fresh=False)

    # ------------------------------------------ issue #29: what the fence proves separate
    def family_helper_results(self, env, indent):
        """A module-level helper whose result is a new array (arithmetic, a
        reduction, np.zeros filled in place, a pair of new arrays), called in a
        loop beside in-place writes into the array passed to it (a leapfrog step:
        ``vel += acc * dt; acc = accel(pos, vel, k)``); its float argument is a
        number, never an alias of an array."""
        k = self.counter = self.counter + 1
        helper = f"_accel{k}"
        form = self.pick(["negated", "zeros_filled", "pair", "reduced"])
        self.features.add("helper_results_" + form)
        if form == "negated":
            self.helpers += [f"def {helper}(x, v, rate):", "    r = -np.tanh(x)",
                             "    r -= rate * v", "    return r"]
        elif form == "zeros_filled":
            self.helpers += [f"def {helper}(x, v, rate):", "    r = np.zeros(x.shape)",
                             "    r[...] = np.sin(x)", "    r += rate * np.tanh(v)",
                             "    return r"]
        elif form == "pair":
            self.helpers += [f"def {helper}(x, v, rate):",
                             "    return -np.tanh(x) * rate, np.zeros_like(v) + 0.5 * v"]
        else:
            self.helpers += [f"def {helper}(x, v, rate):",
                             "    return np.sin(x) - rate * v * np.sum(np.tanh(v) ** 2) / v.size"]
        self.helpers += ["", ""]
        shape = self.pick([(3,), (2, 3)])
        x, v, acc, total = (self.fresh_name(p) for p in ("x", "vel", "acc", "v"))
        rate = self.pick(["s", "0.3", "s * 0.5"])
        self.emit(indent, f"{x} = {self._items(env, 1, shape)[0]} * 1.0")
        self.emit(indent, f"{v} = np.zeros({x}.shape)")
        call = f"{helper}({x}, {v}, {rate})"
        take = f"{acc}, _{acc}2 = {call}" if form == "pair" else f"{acc} = {call}"
        self.emit(indent, take)
        index = self.fresh_name("t")
        self.emit(indent, f"for {index} in range({self.pick(['n', '2', '3'])}):")
        self.emit(indent + 1, f"{v} += {acc} * 0.05")
        self.emit(indent + 1, f"{x} = {x} + {v} * 0.1")
        self.emit(indent + 1, take)
        if form == "pair":
            self.emit(indent + 1, f"_{acc}2 *= 0.5")
            self.emit(indent + 1, f"{v} += _{acc}2 * 0.01")
        self.emit(indent + 1, f"{v} += {acc} * 0.05")
        self.emit(indent, f"{total} = np.sum({x} ** 2) + np.sum({v} * {acc})")
        env[total] = Var((), 20.0, fresh=True)

    def family_masked_copies(self, env, indent):
        """A boolean-mask or fancy-index read is a copy (lattice Boltzmann's
        ``bndry = F[mask, :]``), kept across an in-place update of the array and
        written back (``F[mask, :] = bndry``), at top level or in a loop."""
        F, b, total = self.fresh_name("F"), self.fresh_name("bndry"), self.fresh_name()
        self.emit(indent, f"{F} = np.tanh(B * {self._items(env, 1, ())[0]}) + 0.1 * c")
        form = self.pick(["mask", "mask_name", "inverted", "fancy", "index_array", "argsort",
                          "permutation"])
        self.features.add("masked_copies_" + form)
        if form == "mask":
            index = f"{F}[:, 0] > 0.0, :"
        elif form == "fancy":
            index = self.pick(["[1, 0]", "[1, 0], :", ":, [2, 0]"])  # (unique: a write)
        elif form == "index_array":
            index = self.pick(["np.array([1, 0])", "np.array([1, 0]), :", ":, np.array([2, 0])"])
        elif form == "argsort":
            index = f"np.argsort({F}[:, 0])"
        elif form == "permutation":
            index = f"np.random.RandomState({self.draw(st.integers(0, 9))}).permutation(2)"
        else:
            mask = self.fresh_name("mask")
            self.emit(indent, f"{mask} = np.abs({F}) < 0.5")
            index = mask if form == "mask_name" else f"~{mask}"
        inner = indent
        if self.draw(st.booleans()):
            t = self.fresh_name("t")
            # (at least one trip: the copy is read after the loop)
            self.emit(indent, f"for {t} in range({self.pick(['n + 1', '2'])}):")
            inner = indent + 1
        self.emit(inner, f"{b} = {F}[{index}]")
        if self.draw(st.booleans()):  # the copy written: F stays as it was
            self.emit(inner, f"{b} *= 0.5 + 0.1 * s")
        self.emit(inner, f"{F} += 0.3 * np.tanh({F} * s)")
        self.emit(inner, f"{F}[{index}] = {b} * 0.9")
        self.emit(indent, f"{total} = np.sum({F} ** 2) + np.sum({b})")
        env[total] = Var((), 20.0, fresh=True)

    def family_comprehended_arrays(self, env, indent):
        """A list of new arrays made by a comprehension (``[np.zeros(3) for _ in
        range(2)]``: two arrays, holding nothing of ``np``), its items updated in
        place, at top level or in a loop."""
        rows, total = self.fresh_name("rows"), self.fresh_name()
        item = self._items(env, 1, (3,))[0]
        self.emit(indent, f"{rows} = [{self.pick(['np.zeros(3)', 'np.ones(3) * 0.5'])} "
                          f"for _ in range(2)]")
        inner = indent
        if self.draw(st.booleans()):
            t = self.fresh_name("t")
            self.emit(indent, f"for {t} in range({self.pick(['n', '2'])}):")
            inner = indent + 1
        self.emit(inner, f"{rows}[0] += 0.5 * np.tanh({item})")
        self.emit(inner, f"{rows}[1] *= 0.9")
        self.emit(inner, f"{rows}[1] += {rows}[0] * s")
        self.emit(indent, f"{total} = np.sum({rows}[0] ** 2) + np.sum({rows}[1])")
        env[total] = Var((), 20.0, fresh=True)

    def family_one_shot_iterators(self, env, indent):
        """An iterator over two arrays bound to a name, then read once (or read a
        second time: refused there, REFUSED_MARK)."""
        a, b = self._items(env, 2)
        it, total = self.fresh_name("it"), self.fresh_name()
        v, w = self.fresh_name("v"), self.fresh_name("w")
        pair = f"({a}, 0.5 * {b})"
        make = self.pick([f"map(np.tanh, {pair})", f"(np.tanh({v}) for {v} in {pair})",
                          f"zip({pair}, ({b}, {a}))", f"enumerate({pair})"])
        zipped, counted = make.startswith("zip"), make.startswith("enumerate")
        read = f"np.sum({v} * {w})" if zipped else \
            f"{v} * np.sum({w})" if counted else f"np.sum({v})"
        target = f"{v}, {w}" if zipped or counted else v
        form = self.pick(["sum", "loop", "trip", "twice"])
        self.features.add("iterator_" + form)
        if form == "trip":  # made and read in each trip
            t = self.fresh_name("t")
            self.emit(indent, f"{total} = 0.0")
            self.emit(indent, f"for {t} in range({self.pick(['n', '2'])}):")
            self.emit(indent + 1, f"{it} = {make}")
            self.emit(indent + 1, f"{total} = {total} + 0.1 * sum({read} for {target} in {it})")
        else:
            self.emit(indent, f"{it} = {make}")
            if form == "loop":
                self.emit(indent, f"{total} = 0.0")
                self.emit(indent, f"for {target} in {it}:")
                self.emit(indent + 1, f"{total} = {total} + 0.1 * {read}")
            else:
                self.emit(indent, f"{total} = 0.1 * sum({read} for {target} in {it})")
            if form == "twice":
                self.emit(indent, f"{total} = {total} + len(list({it}))  "
                                  f"{REFUSED_MARK} iterator read twice")
        env[total] = Var((), 20.0, fresh=True)

    def family_rebound_generators(self, env, indent):
        """A loop drawing from a generator made before it, made from a seed in each
        trip, or made again in one trip and carried on (refused when checkpointed:
        REFUSED_MARK, at the top level only, where ``checkpoint=True`` surely
        checkpoints the loop)."""
        k = self._carried(env)
        shape = env[k].shape
        size = "" if shape == () else repr(shape if len(shape) > 1 else shape[0])
        rng, t, eps = self.fresh_name("rng"), self.fresh_name("t"), self.fresh_name("eps")
        forms = ["kept", "each_trip"] + (["carried"] if indent == 1 else [])
        form = self.pick(forms)
        self.features.add("generator_" + form)
        seed = self.draw(st.integers(0, 99))
        if form != "each_trip":
            self.emit(indent, f"{rng} = np.random.default_rng({seed})")
        self.emit(indent, f"for {t} in range(n):")
        if form == "each_trip":
            self.emit(indent + 1, f"{rng} = np.random.default_rng({t} + {seed})")
        self.emit(indent + 1, f"{eps} = " + self.pick([f"{rng}.standard_normal({size})",
                                                       f"{rng}.normal(0.0, 0.3, size={size or None})"]))
        if form == "carried":
            self.emit(indent + 1, f"if {t} == 1:")
            self.emit(indent + 2, f"{rng} = np.random.default_rng({seed + 1})  "
                                  f"{REFUSED_MARK} generator carried")
        self.emit(indent + 1, self.pick([f"{k} = np.tanh({k} * 0.9 + 0.1 * {eps})",
                                         f"{k} = {k} * 0.5 + np.tanh({k} + {eps})"]))
        env[k].bound = max(env[k].bound, 3.0)
        env[k].fresh = env[k].fresh and k not in PARAMS

    def family_generator_loops(self, env, indent):
        """A loop over a generator expression reading what the body rebinds (see the
        ``generator_loops`` comment above)."""
        k = self._carried(env)
        y, v, j = self.fresh_name("y"), self.fresh_name("v"), self.fresh_name("j")
        form = self.pick(["plain", "filtered", "enumerated", "left", "zipped"])
        self.features.add("generator_loop_" + form)
        item = self.pick([f"np.sum(np.tanh({k}) * ({v} + 1.0))",
                          f"np.mean({k} * {k}) * 0.5 + {v}"])
        gen = f"({item} for {v} in range(n){' if ' + v + ' != 1' if form == 'filtered' else ''})"
        if form == "enumerated":
            self.emit(indent, f"for {j}, {y} in enumerate({gen}):")
        elif form == "zipped":
            self.emit(indent, f"for {y}, {j} in zip({gen}, range(n)):  "
                              f"{REFUSED_MARK} lazy generator")
        else:
            self.emit(indent, f"for {y} in {gen}:")
        if form == "left":
            self.emit(indent + 1, f"if {y} > 50.0:")
            self.emit(indent + 2, "break")
        self.emit(indent + 1, f"{k} = np.tanh({k} * 0.8 + 0.1 * {y})")
        if form == "left":
            self.emit(indent, "else:")
            self.emit(indent + 1, f"{k} = {k} * 0.9")
        env[k].fresh = env[k].fresh and k not in PARAMS

    def family_list_methods(self, env, indent):
        """A list made here, changed by its methods, read after (see the
        ``list_methods`` comment above)."""
        L, other, total = self.fresh_name("L"), self.fresh_name("alias"), self.fresh_name()
        x, y, z, w = self._items(env, 4, self.pick([(3,), ()]))
        form = self.pick(["straight", "straight", "history", "aliased", "iterated",
                          "kept_iterator", "window"])
        self.features.add("list_methods_" + form)
        read = f"sum(np.sum(v * (j + 1.0)) for j, v in enumerate({L})) + len({L})"
        if form == "window":
            # L-BFGS's history: two lists bound by one statement, read by a loop before
            # the oldest pair is popped and the new one appended (the empty lists'
            # adjoints crashed; the pops were refused; zip(reversed(...)) too)
            # (a local named so would hide the builtin: none after this, and no
            # reversed() where one came before)
            hidden = "reversed" in self.shadowing
            self.shadowing.add("reversed")
            t, M, acc = self.fresh_name("t"), self.fresh_name("M"), self.fresh_name("acc")
            v, m = self.fresh_name("v"), self.fresh_name("m")
            keep = self.draw(st.integers(1, 3))
            starts = self.pick([("[]", "[]"), (f"[{x}]", f"[{y} * 0.5]")])
            self.emit(indent, f"{L}, {M} = {starts[0]}, {starts[1]}")
            self.emit(indent, f"for {t} in range(n):")
            self.emit(indent + 1, f"{acc} = {y} * 0.5")
            self.emit(indent + 1, self.pick(
                [f"for {v}, {m} in zip(reversed({L}), reversed({M})):"] * (not hidden) +
                [f"for {v}, {m} in zip({L}, {M}):", f"for {v} in {L}:"]))
            self.emit(indent + 2, f"{acc} = {acc} * 0.9 + np.tanh({v}) * 0.5")
            self.emit(indent + 1, f"if len({L}) >= {keep}:")
            self.emit(indent + 2, self.pick([f"{L}.pop(0)", f"del {L}[0]"]))
            self.emit(indent + 2, f"{M}.pop(0)")
            self.emit(indent + 1, f"{L}.append(np.tanh({acc} + {z} * ({t} + 1.0)))")
            self.emit(indent + 1, f"{M}.append({acc} * 0.5)")
            read = f"sum(np.sum(q) for q in {L}) + sum(np.sum(q) for q in {M}) + len({L})"
        elif form == "history":
            t = self.fresh_name("t")
            keep = self.draw(st.integers(1, 3))
            self.emit(indent, f"{L} = [{x}]")
            self.emit(indent, f"for {t} in range(n):")
            self.emit(indent + 1, f"{L}.append(np.tanh({L}[-1] * 0.9 + {y} * ({t} + 1.0)))")
            self.emit(indent + 1, f"if len({L}) > {keep}:")
            self.emit(indent + 2, self.pick([f"{L}.pop(0)", f"del {L}[0]"]))
            read = f"np.sum({L}[0]) * len({L}) + np.sum({L}[-1])"
        else:
            self.emit(indent, f"{L} = [{x}, 2.0 * {y}, {z}]")
            if form == "aliased":
                self.emit(indent, f"{other} = {L}")
            # step -> (the length it needs, the change of length)
            steps = {f"{L}.pop()": (1, -1), f"{L}.pop(0)": (1, -1), f"{L}.pop(1)": (2, -1),
                     f"{L}.insert(1, {w})": (0, 1), f"{L}.insert(0, {w} * 0.5)": (0, 1),
                     f"{L}.insert(-1, {w})": (0, 1), f"{L}.reverse()": (0, 0),
                     f"del {L}[-1]": (1, -1), f"del {L}[1:2]": (0, None),
                     f"{L}.append({w} * 0.5)": (0, 1)}
            if form == "iterated":
                acc = self.fresh_name("acc")
                item = self.fresh_name("v")
                self.emit(indent, f"{acc} = 0.0")
                self.emit(indent, f"for {item} in {L}:")
                self.emit(indent + 1, f"{acc} = {acc} + np.sum({item})")
                self.emit(indent + 1, f"{L}.pop()  {REFUSED_MARK} changed in a loop over it")
                read = f"{acc} + len({L})"
            elif form == "kept_iterator":  # the iterator reads the list as it changes
                it, item = self.fresh_name("it"), self.fresh_name("v")
                made = self.pick([f"enumerate({L})", f"reversed({L})",
                                  f"({item} * 2.0 for {item} in {L})"])
                self.emit(indent, f"{it} = {made}")
                self.emit(indent, self.pick([f"{L}.pop(0)", f"{L}.insert(0, {w})"]) +
                          f"  {REFUSED_MARK} list held twice")
                target = f"_, {item}" if made.startswith("enumerate") else item
                read = f"sum(np.sum({item}) for {target} in {it})"
            else:
                length = 3
                # (one step on a list held twice: the fence, which runs first, would
                # refuse a later append before the lowering refuses an earlier pop)
                for _ in range(1 if form == "aliased" else self.draw(st.integers(1, 3))):
                    # keep one item at least, so that the read after has one to read
                    step = self.pick(sorted(q for q, (need, change) in steps.items()
                                            if length >= need and length + (change or 0) >= 1))
                    change = steps[step][1]
                    length += -1 if change is None and length > 1 else (change or 0)
                    mark = f"  {REFUSED_MARK} list held twice" if form == "aliased" else ""
                    if ".pop(" in step and not mark and self.draw(st.booleans()):
                        got = self.fresh_name("got")
                        self.emit(indent, f"{got} = {step}")
                        read += f" + np.sum({got})"
                    else:
                        self.emit(indent, step + mark)
                if form == "aliased":
                    read += f" + np.sum({other}[0])"
        self.emit(indent, f"{total} = {read}")
        env[total] = Var((), 150.0, fresh=True)

    def family_list_steps(self, env, indent):
        """Gradient steps over a list of arrays (see the ``list_steps`` comment)."""
        ws, gs, w, total = (self.fresh_name("ws"), self.fresh_name("gs"),
                            self.fresh_name("w"), self.fresh_name())
        x, y = self._items(env, 2, (3,))
        form = self.pick(["comprehension", "appends", "indices", "nested", "kept"])
        self.features.add("list_steps_" + form)
        scale = self.pick(["2", "s", "2 * s", "0.5"])
        if form == "nested":
            self.emit(indent, f"{ws} = [[{x}], [{y}]]")
            # (an int: a list repeated; a float times a list raises in Python)
            self.emit(indent, f"{gs} = [2 * {w} for {w} in {ws}]")
            self.emit(indent, f"{ws}[0][0] += 0.1 * {x}  {REFUSED_MARK} list item shared")
            self.emit(indent, f"{total} = np.sum({gs}[0][0]) + np.sum({ws}[1][0])")
            env[total] = Var((), 10.0, fresh=True)
            return
        self.emit(indent, f"{ws} = [{x}, {y}]")
        inner = indent
        if self.draw(st.booleans()):
            t = self.fresh_name("t")
            self.emit(indent, f"for {t} in range({self.pick(['n', '2'])}):")
            inner = indent + 1
        if form == "appends":
            self.emit(inner, f"{gs} = []")
            self.emit(inner, f"for {w} in {ws}:")
            self.emit(inner + 1, f"{gs}.append({scale} * {w})")
        elif form == "indices":
            j = self.fresh_name("j")
            self.emit(inner, f"{gs} = [{scale} * {ws}[{j}] for {j} in range(2)]")
        elif form == "kept":
            self.emit(inner, f"{gs} = [{w} for {w} in {ws}]")
        else:
            self.emit(inner, f"{gs} = [{scale} * {w} for {w} in {ws}]")
        i = self.fresh_name("i")
        mark = f"  {REFUSED_MARK} list item shared" if form == "kept" else ""
        self.emit(inner, f"for {i} in range(len({ws})):")
        self.emit(inner + 1, f"{ws}[{i}] -= 0.1 * np.tanh({gs}[{i}]){mark}")
        # (gs, made in a loop that may run no step, is read after it only without one)
        read_gs = f" + np.sum({gs}[1])" if inner == indent else ""
        self.emit(indent, f"{total} = np.sum({ws}[0] * {ws}[1]){read_gs}")
        env[total] = Var((), 10.0, fresh=True)

    def family_buffer_swaps(self, env, indent):
        """Two buffers swapped every step (``grid, scratch = scratch, grid``) after
        the next state is written into the scratch one: ``np.copyto`` then a
        stencil added in place, ``out=`` of a ufunc, or a slice assignment."""
        grid, scratch, total = (self.fresh_name(p) for p in ("grid", "scratch", "v"))
        self.emit(indent, f"{grid} = {self._items(env, 1, (3,))[0]} * 1.0")
        self.emit(indent, f"{scratch} = {self.pick(['np.zeros_like', 'np.empty_like'])}({grid})")
        t = self.fresh_name("t")
        self.emit(indent, f"for {t} in range({self.pick(['n', '2', '3'])}):")
        form = self.pick(["copyto", "out", "slices"])
        self.features.add("buffer_swaps_" + form)
        if form == "copyto":
            self.emit(indent + 1, f"np.copyto({scratch}, {grid})")
            self.emit(indent + 1, f"{scratch}[1:-1] += 0.2 * ({grid}[2:] - 2.0 * {grid}[1:-1] "
                                  f"+ {grid}[:-2])")
        elif form == "out":
            self.emit(indent + 1, f"np.multiply({grid}, 0.8, out={scratch})")
            self.emit(indent + 1, f"{scratch} += 0.2 * np.tanh({grid} * s)")
        else:
            self.emit(indent + 1, f"{scratch}[:] = {grid}[::-1] * 0.5")
            self.emit(indent + 1, f"{scratch}[0] = {grid}[0] + 0.1 * a[0]")
        self.emit(indent + 1, f"{grid}, {scratch} = {scratch}, {grid}")
        self.emit(indent, f"{total} = np.sum({grid} ** 2) + np.sum({grid} * a)")
        env[total] = Var((), 20.0, fresh=True)

    def _written_argument(self, env):
        """``a`` or ``B``, the differentiated function's array arguments (or what they
        were rebound to: a new array of the same shape), or None."""
        names = [k for k in ("a", "B") if k in env and env[k].shape in ((3,), (2, 3))
                 and not env[k].index]
        return self.pick(names) if names else None

    def family_tuple_loops(self, env, indent):
        """Boundary conditions on several fields: ``for Z in (U, V): Z[0] = Z[1]``
        writes into ``U`` and ``V`` (the loop variable is each array), in a time
        loop; the fields are new arrays or the function's arguments themselves."""
        k = self.counter = self.counter + 1
        form = self.pick(["fresh", "arguments"])
        if form == "arguments" and all(k_ in env and not env[k_].index and
                                       env[k_].shape == sh for k_, sh in
                                       (("a", (3,)), ("B", (2, 3)))):
            U, V = "a", "B"
            self.features.add("tuple_loops_arguments")
        else:
            U, V = self.fresh_name("U"), self.fresh_name("V")
            shape = self.pick([(3,), (2, 3)])
            pu, pv = self._items(env, 2, shape)
            self.emit(indent, f"{U} = {pu} * 1.0")
            self.emit(indent, f"{V} = {pv} * 1.0")
            env[U] = Var(shape, 1.0)
            env[V] = Var(shape, 1.0)
        for name in (U, V):
            env[name].bound = max(env[name].bound, 1.0) + 1.0
        index, Z, total = self.fresh_name("t"), self.fresh_name("Z"), self.fresh_name()
        trips = self.pick(['range(n)', 'range(3)'])
        self.emit(indent, f"for {index} in {trips}:")
        inner = indent + 1
        self.emit(inner, self.pick([f"{U} = 0.9 * {U} + 0.1 * np.tanh(np.sum({V}) * s)",
                                    f"{U}[...] = 0.8 * {U} + 0.2 * np.sin({U} * s)",
                                    f"{U} *= np.cos(s + 0.1 * {index})"]))
        self.emit(inner, self.pick([f"{V} = {V} * np.cos(np.sum({U}) * 0.3)",
                                    f"{V} += 0.1 * np.tanh({V} * s)"]))
        self.emit(inner, f"for {Z} in {self.pick(['({U}, {V})', '[{U}, {V}]', '({V}, {U}, {V})'])}:".format(U=U, V=V))
        forms = [f"{Z}[0] = {Z}[1]", f"{Z}[-1] = 0.5 * {Z}[-2]",
                 f"{Z}[..., 0] = np.tanh({Z}[..., 1] * s)", f"{Z}[...] *= 0.95",
                 f"_reflect{k}({Z})"]
        body = self.draw(st.lists(st.sampled_from(forms), min_size=1, max_size=3))
        if f"_reflect{k}({Z})" in body:
            self.helpers += [f"def _reflect{k}(p):", "    p[..., -1] = -0.5 * p[..., -2]", "", ""]
            self.features.add("tuple_loops_helper")
        for text in body:
            self.emit(inner + 1, text)
        if U != "a" and self.draw(st.booleans()):  # (fresh arrays: rebinding the
            # arguments after V += ... meets the refusal of a loop that both writes
            # into an argument and rebinds it, left as it is)
            # a display holding the loop's own variable: each copy reads the item as
            # the display made it (the second copy of an unrolled ``for U in (V, U)``
            # read the U the first trip bound, V, before session 21)
            self.features.add("tuple_loops_rebound")
            self.emit(inner, f"for {U} in ({V}, {U}):")
            self.emit(inner + 1, f"{V} = {V} * 0.9 + 0.1 * np.tanh(np.sum({U} * {U}) * s)")
        if trips == "range(3)" and self.draw(st.booleans()):
            # the loop variable read after the loop (bound: the time loop ran): the last array
            self.emit(indent, f"{total} = np.sum({U} * {U}) + np.sum({V}) + np.sum({Z}) * 0.5")
        else:
            self.emit(indent, f"{total} = np.sum({U} * {U}) + np.sum({V})")
        env[total] = Var((), 12.0, fresh=True)

    def family_argument_writes(self, env, indent):
        """Writes into the differentiated function's argument ``a`` or ``B`` (polybench
        kernels, boundary conditions): into its elements, through a view of it or a
        plain alias (``w = a``), by a helper that adds into its parameter, by a
        method of an object made here (``a = opt.update(a, s)``: ``p -= ...; return
        p``), by a helper that writes into its parameter and then rebinds it where
        the caller's array is read no more after the call (``a = drift(a, s)``, or a
        copy handed over and dropped), or two levels down (``a = sim(a, s, 2)``, whose
        loop rebinds ``p = step(p, q)`` with ``step`` writing into ``p``), maybe in a
        loop; the gradient works on a private copy of the argument."""
        P = self._written_argument(env)
        if P is None:
            self.assign(env, indent)
            return
        k = self.counter = self.counter + 1
        form = self.pick(["item", "view", "alias", "helper", "method", "dead", "two_levels"])
        self.features.add("argument_writes_" + form)
        two = env[P].shape == (2, 3)
        outside = indent
        opt = self._object_with_a_writing_method(k, indent) if form == "method" else None
        if self.draw(st.booleans()):
            index = self.fresh_name("t")
            self.emit(indent, f"for {index} in {self.pick(['range(n)', 'range(2)'])}:")
            indent += 1
        if form == "item":
            self.emit(indent, self.pick(
                [f"{P}[0] = np.tanh({P}[-1] * s)", f"{P}[1:] = 0.5 * {P}[1:] + 0.5 * np.sin({P}[:-1])",
                 f"{P}[..., :1] += 0.1 * np.tanh({P}[..., 1:2] * s)"]))
        elif form == "view":
            w = self.fresh_name("w")
            self.emit(indent, f"{w} = {P}{self.pick(['[1:]', '[0]'] if two else ['[1:]', '[:2]'])}")
            self.emit(indent, self.pick([f"{w} *= np.tanh(s + 0.5)", f"{w} += 0.1 * np.sin({w} * s)",
                                         f"{w}[0] = np.tanh({w}[-1] * s)"]))
        elif form == "alias":
            al = self.fresh_name("al")
            self.emit(indent, f"{al} = {P}")
            self.emit(indent, f"{al}[0] = np.tanh({al}[-1] * s + {P}[0])")
        elif form == "helper":
            self.helpers += [f"def _add{k}(p, q):", "    p += 0.1 * np.tanh(p * q)", "", ""]
            self.emit(indent, f"_add{k}({P}, s)")
        elif form == "method":  # the array written back, its value used or not
            self.emit(indent, self.pick([f"{P} = {opt}.update({P}, s)", f"{opt}.update({P}, s)"]))
        elif form == "dead":
            self._argument_written_and_rebound_by_a_helper(P, k, indent)
        else:
            self._argument_written_two_levels_down(P, k, indent)
        env[P].bound = max(env[P].bound, 1.0) + 0.5
        total = self.fresh_name()
        self.emit(outside, f"{total} = np.sum({P} ** 2)")
        env[total] = Var((), 3.0 * (env[P].bound ** 2) * 6, fresh=True)

    def _object_with_a_writing_method(self, k, indent):
        """``opt = _Opt(rate)``, made once (before any loop), whose ``update`` adds
        into its parameter and returns it (``P = opt.update(P, s)``)."""
        op = self.pick(["-=", "+=", "*="])
        change = "0.1 * np.tanh(p * q) * self.rate" if op != "*=" else \
            "1.0 - 0.1 * np.tanh(p * q) * self.rate"
        self.helpers += [f"class _Opt{k}:", "    def __init__(self, rate):",
                         "        self.rate = rate", "        self.t = 0", "",
                         "    def update(self, p, q):", "        self.t = self.t + 1",
                         f"        p {op} {change}", "        return p", "", ""]
        opt = self.fresh_name("opt")
        self.emit(indent, f"{opt} = _Opt{k}({self.pick(['0.5', 's', '0.3 * s'])})")
        return opt

    def _argument_written_and_rebound_by_a_helper(self, P, k, indent):
        """A helper adds into its parameter, then rebinds it: what the caller's array
        holds after the call is not followed, and needs not be: the caller binds
        its name anew in the call's statement, or hands over a copy it drops."""
        self.helpers += [f"def _drift{k}(p, q):", "    p += 0.1 * np.tanh(p * q)",
                         "    p = 0.9 * p + 0.05 * np.sin(q)", "    p[..., :1] *= 0.5",
                         "    return p", "", ""]
        if self.draw(st.booleans()):
            self.emit(indent, f"{P} = _drift{k}({P}, s)")
            self.features.add("argument_writes_dead_rebound")
        else:
            c, total = self.fresh_name("c"), self.fresh_name()
            self.emit(indent, f"{c} = {P} * 1.0")
            self.emit(indent, f"{total} = np.sum(_drift{k}({c}, s) ** 2)")
            self.emit(indent, f"{P} = {P} * (1.0 + 0.05 * np.tanh({total}))")
            self.features.add("argument_writes_dead_copy")

    def _argument_written_two_levels_down(self, P, k, indent):
        """``P = _sim(P, s, 2)``: its loop rebinds ``p = _step(p, q)``, and ``_step``
        writes into ``p`` (boundary and interior) and returns it."""
        self.helpers += [f"def _step{k}(p, q):", "    p[..., :1] = p[..., 1:2] * 0.5",
                         "    p[..., 1:] -= 0.1 * np.tanh(p[..., :-1] * q)", "    return p",
                         "", "", f"def _sim{k}(p, q, m):", "    for j in range(m):",
                         f"        p = _step{k}(p, q)", "    return p", "", ""]
        self.features.add("argument_writes_two_levels")
        self.emit(indent, f"{P} = _sim{k}({P}, s, {self.pick(['2', 'n'])})")

    # ------------------------------------------------ issue #28: value families
    def _module_block(self, lines):
        """Lines of the program's module, written before ``def f``."""
        self.lines[1:1] = ["", ""] + list(lines)

    def _size_of(self, shape):
        return "None" if shape == () else repr(shape if len(shape) > 1 else shape[0])

    def family_dtype_casts(self, env, indent):
        """A cast in the differentiated path: to an integer or bool dtype (piecewise
        constant, derivative 0) however it is spelled -- ``dtype=`` of any function,
        ``astype``, ``int(...)``, ``np.int64(...)``, ``round``, a dtype known only
        at run time -- or to a floating dtype (the identity's derivative)."""
        t, _ = self.expr_of(env, (3,), 1)
        level = f"np.tanh({t}) * 2.5"
        u, _ = self.expr_of(env, (3,), 1)
        name, scale = self.fresh_name(), self.fresh_name()
        if self.draw(st.integers(0, 3)) == 0:  # a floating dtype: differentiable
            cast = self.pick([f"np.asarray({level}, dtype=np.float64)", f"({level}).astype(float)",
                              f"np.asarray({level}, dtype=a.dtype)", f"np.array({level}, float)"])
            self.emit(indent, f"{scale} = {cast}")
            self.emit(indent, f"{name} = np.tanh({u}) * {scale}")
            env[name] = Var((3,), 2.5, fresh=True)
            return
        cast = self.pick([
            f"np.asarray({level}, dtype=int)", f"np.array({level}, dtype=np.int64)",
            f"np.asarray({level}, 'i8')", f"({level}).astype(np.int32)",
            f"np.asarray(np.floor({level}), dtype=bool) * 1.0",
            f"np.cumsum({level}, dtype=int) * 0.3",
            f"np.asarray({level}, dtype=np.asarray(n).dtype)",
            f"np.full_like(a, np.sum({level}), dtype=int) * 0.1",
            f"int(np.sum({level})) * 0.1", f"np.int64(np.sum({level})) * 0.1",
            f"round(np.sum({level}) * 0.5)"])
        self.emit(indent, f"{scale} = {cast}")
        self.emit(indent, f"{name} = np.tanh({u}) * (1.0 + 0.1 * {scale})")
        env[name] = Var((3,), 2.5, fresh=True)

    def family_integer_stores(self, env, indent):
        """A float stored into an integer or boolean array: NumPy truncates it (a
        step function, derivative 0), whether the array is made from integer
        literals, ``np.arange``, ``np.zeros_like`` of an integer array, ``np.full``
        of an int or ``dtype=bool``; at top level, augmented, or in a loop."""
        t, _ = self.expr_of(env, (), 1)
        level = f"np.tanh({t}) * 2.5"
        Z, total = self.fresh_name("Z"), self.fresh_name()
        form = self.pick(["literal", "arange", "zeros_like", "full", "bool", "float"])
        self.features.add("integer_stores_" + form)
        self.emit(indent, f"{Z} = " + {
            "literal": "np.array([1, 2, 3])", "arange": "np.arange(3)",
            "zeros_like": "np.zeros_like(np.arange(3))", "full": "np.full(3, 2)",
            "bool": "np.zeros(3, dtype=bool)", "float": "np.zeros(3)"}[form])
        write = self.pick(["store", "augmented", "slice", "loop"])
        if write == "store":
            self.emit(indent, f"{Z}[{self.pick(['0', '2', '-1'])}] = {level}")
        elif write == "augmented":
            self.emit(indent, f"{Z}[1] += {level}")
        elif write == "slice":
            self.emit(indent, f"{Z}[1:] = np.array([{level}, 0.5 * {level}])")
        else:
            k = self.fresh_name("t")
            self.emit(indent, f"for {k} in range({self.pick(['n', '3'])}):")
            self.emit(indent + 1, f"{Z}[{k} % 3] = {Z}[({k} + 1) % 3] * 0.5 + {level}")
        self.emit(indent, f"{total} = np.sum({Z} * a) + np.sum({Z}) * {level}")
        env[total] = Var((), 20.0, fresh=True)

    #: reached_generators: how the generator is reached -> (module lines, the draw)
    #: with {g}: a fresh module name, {seed}, {size}, {t}: the loop index
    REACHED = {
        "global_random_state": (["{G} = np.random.RandomState({seed})"],
                                "{G}.normal(0.0, 0.3, size={size})"),
        "global_generator": (["{G} = np.random.default_rng({seed})"],
                             "{G}.standard_normal({size}) * 0.3"),
        "closure": (["def make_{g}(seed):",
                     "    rs = np.random.RandomState(seed)",
                     "    def noise(size):",
                     "        return rs.uniform(-0.3, 0.3, size=size)",
                     "    return noise", "", "", "{g} = make_{g}({seed})"],
                    "{g}({size})"),
        "default": (["{G} = np.random.default_rng({seed})"], "{g}.normal(0.0, 0.3, size={size})"),
        "attribute": (["class Noisy_{g}:",
                       "    def __init__(self, seed):",
                       "        self.rng = np.random.default_rng(seed)",
                       "",
                       "    def draw(self, size):",
                       "        return self.rng.uniform(-0.3, 0.3, size=size)", "", "",
                       "{G} = Noisy_{g}({seed})"],
                      "{G}.draw({size})"),
        "global_list": (["{G} = [np.random.default_rng({seed}), np.random.RandomState({seed})]"],
                        "{G}[{t} % 2].normal(0.0, 0.3, size={size})"),
        # the standard library's generator object (its state was no snapshot's before
        # session 19: a silently wrong checkpointed gradient)
        "global_stdlib": (["import random", "{G} = random.Random({seed})"],
                          "{G}.gauss(0.0, 0.3)"),
    }

    def family_reached_generators(self, env, indent):
        """Random draws in a loop from a generator the function is not passed: a
        module global (NumPy's, or the standard library's ``random.Random``), a
        closure's variable, a default argument, an object's attribute, an item of a
        global list (the harness restores every generator
        the module holds before each evaluation)."""
        k = self._carried(env)
        shape = env[k].shape
        how = self.pick(sorted(self.REACHED))
        self.features.add("reached_" + how)
        g = self.fresh_name("rng")
        fields = dict(g=g, G=g.upper(), seed=self.draw(st.integers(0, 99)),
                      size=self._size_of(shape))
        module, draw = self.REACHED[how]
        self._module_block([line.format(**fields) for line in module])
        if how == "default":
            at = next(i for i, line in enumerate(self.lines) if line.startswith("def f("))
            self.lines[at] = self.lines[at][:-2] + f", {g}={g.upper()}):"
        index = self.fresh_name("t")
        draw = draw.format(t=index, **fields)
        form = self.pick(["loop", "comprehension", "condition"])
        if form == "comprehension":
            total = self.fresh_name()
            self.emit(indent, f"{total} = sum([np.sum(np.tanh({k} + {draw})) for {index} in "
                              f"range(n)]) * 0.3")
            env[total] = Var((), 1.0 + 0.3 * 3 * 5, fresh=True)
            return
        self.emit(indent, f"for {index} in range(n):")
        if form == "condition":
            self.emit(indent + 1, f"if np.sum({draw}) > 0.0:")
            self.emit(indent + 2, f"{k} = np.sin({k}) * 0.9")
            self.emit(indent + 1, "else:")
            self.emit(indent + 2, f"{k} = np.cos({k}) * 0.9")
        else:
            self.emit(indent + 1, self.pick([f"{k} = np.tanh({k} * 0.9 + {draw})",
                                             f"{k} = np.sin({k}) * (1.0 + {draw})",
                                             f"{k} = {k} * 0.5 + np.tanh({k} + {draw})"]))
        env[k].bound = max(env[k].bound, 3.0)
        env[k].fresh = env[k].fresh and k not in PARAMS

    def family_container_items(self, env, indent):
        """A name bound to an item of a list, tuple or dict (``b = lst[0]``), which
        NumPy makes the item itself: rebound (``b = b + ...``), copied, or written
        in place where no other live name holds it; a pair whose items a loop reads
        and rebuilds; or written in place while the container is read after it,
        which the aliasing fence must refuse (the line carries REFUSED_MARK)."""
        x, y = self._items(env, 2)
        box, item, total = self.fresh_name("box"), self.fresh_name(), self.fresh_name()
        form = self.pick(["rebound", "copied", "in_place", "dict", "loop_pair", "refused"])
        self.features.add("items_" + form)
        step, _ = self.expr_of(env, (3,), 1)
        if form == "loop_pair":
            index = self.fresh_name("t")
            self.emit(indent, f"{box} = ({x}, {y})")
            self.emit(indent, f"for {index} in range(n):")
            self.emit(indent + 1, f"{item} = {box}[0]")
            self.emit(indent + 1, f"{item} = {item} * 0.9 + 0.1 * np.tanh({box}[1] + {step})")
            self.emit(indent + 1, f"{box} = ({item}, {box}[1])")
            self.emit(indent, f"{total} = {box}[0] * {box}[1]")
        elif form == "dict":
            self.emit(indent, f"{box} = {{'w': {x}, 'v': {y}}}")
            self.emit(indent, f"{item} = {box}['w']")
            self.emit(indent, f"{item} = {item} * s + {box}['v']")
            self.emit(indent, f"{total} = {item} * 0.5")
        else:
            self.emit(indent, f"{box} = {self.pick([f'[{x}, {y}]', f'({x}, {y})'])}")
            self.emit(indent, f"{item} = {box}[{self.pick(['0', '-2'])}]"
                              + (".copy()" if form == "copied" else ""))
            if form == "rebound":
                self.emit(indent, f"{item} = {item} + 0.1 * np.tanh({step})")
                self.emit(indent, f"{total} = {item} * {box}[0] + {box}[1]")
            elif form == "refused":  # the item is also the container's, read after it
                self.emit(indent, f"{item} += 0.1 * np.tanh({step})  {REFUSED_MARK} item alias")
                self.emit(indent, f"{total} = {item} * {box}[0] + {box}[1]")
            else:
                self.emit(indent, f"{item} {self.pick(['+=', '-='])} 0.1 * np.tanh({step})")
                if form == "copied":
                    self.emit(indent, f"{total} = {item} * {box}[0] + {box}[1]")
                else:  # the container is not read again: the write changes nothing live
                    self.emit(indent, f"{total} = {item} * 0.5")
        env[total] = Var((3,), 2.5, fresh=True)

    def family_repeated_items(self, env, indent):
        """One array at two places of a list or dict, one place updated in place
        while the container is read after (refused: REFUSED_MARK), or places that
        are each their own array updated in place, or a repeated place rebound
        (differentiated); in a loop of ``n`` steps or not (see REPEATED_ITEMS)."""
        x, y = self._items(env, 2)
        L, shared, total = self.fresh_name("L"), self.fresh_name("w"), self.fresh_name()
        form = self.pick(sorted(REPEATED_ITEMS))
        self.features.add("repeated_" + form)
        made, repeated = REPEATED_ITEMS[form]
        keyed = form.startswith("dict")
        keys = ["'p'", "'q'"] if keyed else ["0", self.pick(["1", "-1"])]
        step, _ = self.expr_of(env, (3,), 1)
        if "{w}" in made:
            self.emit(indent, f"{shared} = {self.pick([x, 'a'])}" if repeated else
                      f"{shared} = {x}")
        for line in made.format(L=L, w=shared, x=x, y=y).split("; "):
            self.emit(indent, line)
        body = indent
        if self.draw(st.booleans()):
            self.emit(indent, f"for {self.fresh_name('t')} in range(n):")
            body = indent + 1
        k = self.pick(keys)
        if form == "rebound":
            self.emit(body, f"{L}[{k}] = {L}[{k}] * 0.9 + 0.1 * np.tanh({step})")
        else:
            mark = f"  {REFUSED_MARK} repeated item" if repeated else ""
            self.emit(body, self.pick([f"{L}[{k}] += 0.1 * np.tanh({step}){mark}",
                                       f"{L}[{k}] *= 0.9{mark}"]))
            if not repeated and self.draw(st.booleans()):
                other = keys[1] if k == keys[0] else keys[0]
                self.emit(body, f"{L}[{other}] -= 0.1 * np.tanh({L}[{k}])")
        self.emit(indent, f"{total} = {L}[{keys[0]}] * {L}[{keys[1]}]")
        env[total] = Var((3,), 4.0, fresh=True)

    # ------------------------------------------------------------ output families
    def family_vector_output(self, env, indent):
        """An array output (``np.stack`` of scalars, a vector, a matrix): the
        gradient with the default output adjoint is the gradient of its sum
        (``np.stack([np.sum(x), np.sum(x ** 2)])`` once crashed in stack's rule,
        and a scalar input broadcast to an array output got 1 instead of n)."""
        v = self.fresh_name("out")
        x, y = self._items(env, 2, self.pick([(3,), (2, 3), ()]))
        form = self.pick(["stack", "vector", "matrix", "concat"])
        self.features.add("vector_output_" + form)
        if form == "stack":
            self.emit(indent, f"{v} = np.stack([np.sum({x}), np.sum({y} ** 2)])")
        elif form == "vector":
            self.emit(indent, f"{v} = np.tanh({x}) * a + s")
        elif form == "matrix":
            self.emit(indent, f"{v} = np.outer(np.ravel({x})[:2], a) * np.tanh(s)")
        else:
            self.emit(indent, f"{v} = np.concatenate([np.ravel({x}), np.ravel({y}) * s])")
        self.vector_output = v

    def family_aux_output(self, env, indent):
        """``return loss, aux`` (JAX's has_aux habit): aux a dict, list or tuple of
        arrays, numbers and strings, returned as computed next to the gradient."""
        aux = self.fresh_name("aux")
        shape = self.pick([(3,), ()])
        x, y = self._items(env, 2, shape)
        form = self.pick(["dict", "list", "tuple", "array", "written"])
        self.features.add("aux_output_" + form)
        if form == "written":
            # a trajectory written row by row, returned as the aux and read by the
            # loss: the reverse sweep puts back what each write overwrote, in its
            # memory (the aux came back as zeros); a row stored from a (1, 3) value
            # (its adjoint was summed along the axis of length 1)
            t = self.fresh_name("t")
            rows = 2 if shape else 3  # (2, 3) or (3,): shapes the other statements write
            self.emit(indent, f"{aux} = np.zeros({(rows,) + shape})")
            self.emit(indent, f"{aux}[0] = {x}")
            self.emit(indent, f"for {t} in range({rows - 1}):")
            row = self.pick(["[None]", ""]) if shape else ""
            self.emit(indent + 1, f"{aux}[{t} + 1] = np.tanh({aux}[{t}] * s + {y}){row}")
            env[aux] = Var((rows,) + shape, 1.0, fresh=True)
        elif form == "dict":
            self.emit(indent, f"{aux} = {{'norm': np.sum({x} ** 2), 'tag': 'step', "
                              f"'parts': [{y}, ({x}, 3)]}}")
        elif form == "list":
            self.emit(indent, f"{aux} = [{x} * 2.0, np.mean({y}), None]")
        elif form == "tuple":
            self.emit(indent, f"{aux} = ({x}, [{y}, 'label'])")
        else:
            self.emit(indent, f"{aux} = np.tanh({x})")
        self.aux_output = aux

    def family_nested_containers(self, env, indent):
        """Nested lists, tuples and dicts of (W, b) pairs through a helper that
        loops over them rebinding its parameter ``x``, called with the nested
        container or a list rebuilt from it (a VAE's encoder and decoder)."""
        net, layers, out = self.fresh_name("net"), self.fresh_name("layers"), self.fresh_name()
        form = self.pick(["nested", "rebuilt", "dict", "tuples"])
        self.features.add("nested_containers_" + form)
        pair = self.pick(["(M, a)", "[M, a]"])
        second = self.pick(["(M * s, c[0])", "(M.T * 0.5, a * 0.1)"])
        if form == "dict":
            self.emit(indent, f"def {net}(layers, x):")
            self.emit(indent + 1, "for name in ('enc', 'dec'):")
            self.emit(indent + 2, "for W, b in layers[name]:")
            self.emit(indent + 3, "x = np.tanh(x @ W + b)")
            self.emit(indent + 1, "return x")
            self.emit(indent, f"{layers} = {{'enc': [{pair}, {second}], 'dec': [(M * 0.5, c[0])]}}")
        else:
            self.emit(indent, f"def {net}(layers, x):")
            self.emit(indent + 1, "for layer in layers:")
            if form == "rebuilt":
                self.emit(indent + 2, "layer = [(W * 1.0, b) for W, b in layer]")
            self.emit(indent + 2, "for W, b in layer:")
            self.emit(indent + 3, "x = np.tanh(x @ W + b)")
            self.emit(indent + 1, "return x")
            outer = "({}, {})" if form == "tuples" else "[{}, {}]"
            self.emit(indent, f"{layers} = " + outer.format(f"[{pair}, {second}]",
                                                            "[(M * 0.5, c[0])]"))
        if form == "rebuilt":
            self.emit(indent, f"{layers} = [[(W, b * 1.0) for W, b in layer] for layer in {layers}]")
        shape = self.pick([(3,), (2, 3)])
        x, = self._items(env, 1, shape)
        self.emit(indent, f"{out} = {net}({layers}, {x})")
        # not fresh: no later write into it (v[0] = ..., v += ...): the aliasing fence
        # cannot tell the helper's result from the arrays its container holds and
        # refuses such a write (an over-refusal the long run found, 43 in 152)
        env[out] = Var(shape, 1.0, fresh=False)

    def return_statement(self, terms):
        """``return`` the sum of ``terms``; an array output scales it
        (vector_output); with aux_output, the pair (output, aux)."""
        total = " + ".join(terms)
        output = total if self.vector_output is None else \
            f"{self.vector_output} * (1.0 + 0.1 * np.tanh({total}))"
        if self.aux_output is not None:
            return f"return {output}, {self.aux_output}"
        return f"return {output}"

    #: masked_singular: a function singular at exact zeros, made by a mask (``z``)
    SINGULAR_AT_ZERO = ("np.sqrt({z})", "np.log({z})", "1.0 / {z}", "{z} ** -1.5",
                        "np.hypot({z}, {z})", "np.cbrt({z}) + {z} ** -0.5",
                        "np.log1p({z} - 1.0)", "np.arctan2({z}, {z})",
                        "np.reciprocal({z}) + {w} / {z}", "np.log10({z}) - np.log2({z})")
    # ({w}: s, a number, so that the shape stays z's)
    #: ... and functions whose value is NaN outside their domain, under np.where
    #: (the function, where it is kept: well inside its domain)
    SINGULAR_OUTSIDE = (("np.sqrt({t})", "{t} > 0.3"), ("np.log({t})", "{t} > 0.3"),
                        ("np.arcsin({t})", "np.abs({t}) < 0.9"),
                        ("np.arccosh({t} + 0.7)", "{t} > 0.6"),
                        ("np.arctanh({t})", "np.abs({t}) < 0.9"))

    def family_masked_singular(self, env, indent):
        """A singular function at points a mask then discards, so that the adjoint
        there is exactly 0 (and so is the derivative finite differences see):
        exact zeros made by a mask (``z = t * (t > 0.3)``, ``np.maximum(t, 0.3) -
        0.3``) under ``np.where(z > 0, ...)``, arguments outside the domain (NaN
        values: ``sqrt`` of a negative number) under ``np.where(t > 0.3, ...)``
        (``np.abs(t) < 0.9`` for ``arcsin``), a
        pair-distance matrix whose zero diagonal ``np.triu`` or a mask discards;
        at top level or in a loop carrying the variable it reads (taped,
        checkpointed).  Before singular rules kept a zero adjoint zero, each gave
        ``0 * inf = nan``.  The zeros are also divided by NumPy's safe-division
        idiom, ``np.divide(s, z, out=np.zeros_like(z), where=z > 0)`` (refused
        before desugar/masked_ufuncs.py)."""
        shape = self.pick([(3,), (2, 3), ()])
        in_loop = self.draw(st.booleans())
        if in_loop:   # a carried variable of that shape, rebound through the mask
            carried = sorted(k for k, v in env.items() if not v.index and v.shape == shape
                             and k not in ("M", "n") and k not in PARAMS)
            if not carried:
                k = self.fresh_name()
                t, _ = self.expr_of(env, shape, 1)
                self.emit(indent, f"{k} = np.tanh({t})")
                env[k] = Var(shape, 1.0, fresh=True)
                carried = [k]
            k = self.pick(carried)
            index = self.fresh_name("t")
            self.emit(indent, f"for {index} in range(n):")
            indent += 1
            env[k].fresh = False
            t = k
        else:
            t, _ = self.expr_of(env, shape, self.draw(st.integers(1, 2)))
        form = self.pick(["zeros", "outside", "pairs"] if shape == (3,) else ["zeros", "outside"])
        self.features.add("masked_" + form)
        if form == "zeros":
            z = self.fresh_name("z")
            self.emit(indent, self.pick([f"{z} = ({t}) * (({t}) > 0.3)",
                                         f"{z} = np.maximum({t}, 0.3) - 0.3"]))
            if self.draw(st.booleans()):
                # the safe-division idiom (desugar/masked_ufuncs.py): divided only
                # where the mask holds, into a new array made first
                q = self.fresh_name("q")
                numerator = self.pick(["s", "1.0", f"{z} * s + 1.0"])
                made = self.pick([f"np.zeros_like({z})", f"np.ones_like({z})",
                                  f"np.full(np.shape({z}), s)"])
                self.emit(indent, f"{q} = np.divide({numerator}, {z}, out={made}, "
                                  f"where={z} > 0)")
                self.features.add("masked_division")
                value = q
            else:
                op = self.pick(self.SINGULAR_AT_ZERO).format(z=z, w="s")
                cond = f"{z} > 0"
                if self.draw(st.booleans()):   # a mask held in a variable, maybe inverted
                    mask = self.fresh_name("mask")
                    self.emit(indent, self.pick([f"{mask} = {z} > 0", f"{mask} = {z} == 0"]))
                    cond = mask if self.lines[-1].endswith("> 0") else f"~{mask}"
                value = f"np.where({cond}, {op}, 0.0)"
        elif form == "outside":
            op, kept = (part.format(t=f"({t})") for part in self.pick(self.SINGULAR_OUTSIDE))
            value = f"np.where({kept}, {op}, {self.pick(['0.0', '1.0'])})"
        else:
            # points spread by their offsets: t alone may be one number broadcast, whose
            # pairs are all 0 off the diagonal too (sqrt(d * d) there: a real singularity)
            d, r, p = self.fresh_name("d"), self.fresh_name("r"), self.fresh_name("p")
            self.emit(indent, f"{p} = ({t}) + np.array([0.0, 1.5, 3.0])")
            self.emit(indent, f"{d} = {p}[:, None] - {p}[None, :]")
            self.emit(indent, self.pick([f"{r} = np.sqrt({d} * {d})",
                                         f"{r} = np.sqrt({d} ** 2 + 0.0 * {d})",
                                         f"{r} = np.hypot({d}, 0.0 * {d})"]))
            value = self.pick([f"np.sum(np.triu(np.tanh({r}), 1), axis=0)",
                               f"np.sum(np.where(np.eye(3) > 0, 0.0, 1.0 / (1.0 + {r})), axis=1)",
                               f"np.sum(np.where({r} > 0, np.log(0.5 + {r}), 0.0), axis=0)",
                               f"np.sum(np.tril(np.sqrt(0.5 + {r}) * {r} ** 0.5, -1), axis=0)"])
        if in_loop:
            self.emit(indent, f"{t} = 0.5 * {t} + 0.3 * np.tanh({value})")
            env[t].bound = max(env[t].bound, 2.0 * 0.3 + 0.5 * env[t].bound)
        else:
            name = self.fresh_name()
            self.emit(indent, f"{name} = np.tanh({value})")
            env[name] = Var(shape, 1.0, fresh=True)

    def family_loop_variables(self, env, indent):
        """A loop whose variable is read after it: Python leaves it at its last
        value, or as it was when the loop ran no step.  The name is sometimes bound
        before the loop too (to a differentiated float the code before the loop
        reads), rebound in the body, a loop over rows or ``enumerate``, left by a
        ``break``, or an inner loop's.  (A checkpointed loop never rebound it: a
        wrong value and gradient, or a NameError; the taped reverse loop left the
        first index to the code before the loop.)"""
        x, total = self.fresh_name("x"), self.fresh_name()
        shape = self.pick([(3,), ()])
        self.emit(indent, f"{x} = {self._items(env, 1, shape)[0]}")
        index = self.fresh_name("t")
        form = self.pick(["range", "range3", "enumerate", "rows", "break", "rebound",
                          "nested", "while", "rebound_sequence", "updated_sequence"])
        prior = self.pick(["none", "int", "float"])
        self.features.add("loop_variable_" + form)
        inner = indent + 1
        if prior == "int":
            self.emit(indent, f"{index} = {self.pick(['0', '-1', '5'])}")
        elif prior == "float":  # read before the loop: its adjoint must stop at the loop
            self.emit(indent, f"{index} = 0.5 * s")
            self.emit(indent, f"{x} = {x} * (1.0 + {index})")
        # a loop that may run no step only where the name is bound before it
        runs = prior == "none"
        step = f"{x} = 0.9 * {x} + 0.1 * np.tanh({x} * s + 0.1 * {{i}})"
        after = f"(1.0 + 0.1 * {index})"
        if form in ("range", "break", "rebound", "nested"):
            bound = self.pick(["n + 1", "3"] if runs else ["n", "n + 1", "2"])
            self.emit(indent, f"for {index} in range({bound}):")
            if form == "rebound":
                self.emit(inner, f"{index} = 0.5 * {index} + 0.1 * s")
            self.emit(inner, step.format(i=index))
            if form == "break":
                self.emit(inner, self.pick([f"if {index} >= 1:", f"if np.sum({x}) > 0.3:"]))
                self.emit(inner + 1, "break")
            if form == "nested":
                other = self.fresh_name("u")
                self.emit(inner, f"for {other} in range(2):")
                self.emit(inner + 1, step.format(i=other))
                self.emit(inner, f"{x} = {x} * (1.0 - 0.1 * {other})")
        elif form == "range3":
            start, stop, stride = self.pick(
                [("1", "n + 3", "2"), ("n + 1", "0", "-1")] if runs else
                [("1", "n + 3", "2"), ("n", "0", "-1"), ("2", "n", "1"), ("n", "-1", "-2")])
            self.emit(indent, f"for {index} in range({start}, {stop}, {stride}):")
            self.emit(inner, step.format(i=index))
        elif form == "enumerate":
            row = self.fresh_name("row")
            self.emit(indent, f"for {index}, {row} in enumerate({self.pick(['B', 'M'])}):")
            self.emit(inner, step.format(i=index))
            self.emit(inner, f"{x} = {x} + 0.1 * np.sum(np.tanh({row} * s))")
            after = f"(1.0 + 0.1 * {index}) + 0.1 * np.sum({row})"
        elif form == "rebound_sequence":
            # the body rebinds the array it loops over: Python goes on over the
            # array bound when the loop began (enumerate and zip read the new one:
            # a wrong value and gradient, taped and checkpointed)
            seq, row = self.fresh_name("Q"), self.fresh_name("row")
            self.emit(indent, f"{seq} = {self.pick(['B', 'M'])} * 1.0")
            head = self.pick([f"{row} in {seq}", f"{index}, {row} in enumerate({seq})",
                              f"{row}, _ in zip({seq}, M)", f"_, {row} in zip(M, {seq})",
                              f"{index}, ({row}, _) in enumerate(zip({seq}, M))",
                              f"{row} in reversed({seq})"])
            self.emit(indent, f"for {head}:")
            self.emit(inner, f"{seq} = {seq} * 0.5 + 0.1 * s")
            self.emit(inner, f"{x} = 0.9 * {x} + 0.1 * np.tanh({x} * s + np.sum({row}))")
            after = f"(1.0 + 0.1 * np.sum({row})) + np.sum({seq})"
        elif form == "updated_sequence":
            # the body updates the array it loops over in place: Python's iterator
            # reads each row when it reaches it, so later rows show the update (the
            # rows were pinned to the array from before the loop: a wrong value)
            seq, row = self.fresh_name("Q"), self.fresh_name("row")
            self.emit(indent, f"{seq} = {self.pick(['B', 'M'])} * 1.0")
            # (or over a view of it: each step's row read from the current array)
            head = self.pick([f"{row} in {seq}", f"{index}, {row} in enumerate({seq})",
                              f"{row}, _ in zip({seq}, M)", f"{row} in reversed({seq})",
                              f"{row} in {seq}[1:]", f"{index}, {row} in enumerate({seq}[:-1])"])
            self.emit(indent, f"for {head}:")
            # (the row, a view of the array, is read before the update only: read
            # after it, the fence refuses the write)
            self.emit(inner, f"{x} = 0.9 * {x} + 0.1 * np.tanh({x} * s + np.sum({row}))")
            self.emit(inner, self.pick([f"{seq} += 0.1 * s * {row}",
                                        f"{seq} *= 0.5 + 0.1 * np.sum({row} * s)",
                                        f"{seq}[0] = {seq}[0] * 0.5 + {row} * s"]))
            after = f"(1.0 + 0.1 * np.sum({seq}))"
        elif form == "rows":
            self.emit(indent, f"for {index} in {self.pick(['B', 'M'])}:")
            self.emit(inner, f"{x} = 0.9 * {x} + 0.1 * np.tanh({x} * s + np.sum({index}))")
            after = f"(1.0 + 0.1 * np.sum({index}))"
        else:
            if prior != "int":
                self.emit(indent, f"{index} = 0")
            self.emit(indent, f"while {index} < {self.pick(['n', '3'])}:")
            self.emit(inner, step.format(i=index))
            self.emit(inner, f"{index} = {index} + 1")
        self.emit(indent, f"{total} = np.sum({x}) * {after}")
        env[total] = Var((), 12.0, fresh=True)

    #: body_value_shapes: a value the loop body makes, by its shape from step to step
    #: (``{x}`` the carried value, ``{i}`` the loop index, ``{k}`` = ``{i} % 3 + 1``)
    BODY_VALUE_SHAPES = {
        "grow": "np.tanh(M[:{k}] * {x})",                # (1, 3), (2, 3), (3, 3), (1, 3)...
        "shrink": "np.tanh(M[{i} % 3:] * ({x} + 0.5))",  # (3, 3), (2, 3), (1, 3), (3, 3)...
        "transposed": "np.tanh(M[:{k}] * {x}).T",        # (3, 1), (3, 2), (3, 3)...
        "same": "np.tanh(M * {x} + 0.1 * {i})",          # (3, 3) every step
    }

    def family_body_value_shapes(self, env, indent):
        """A value the loop body makes afresh each step and the code after the
        loop reads, whose shape changes from step to step: one row of ``M`` more
        or fewer each step, transposed, another shape every other step (an
        ``if``), made only on some steps, or first of another shape in the step
        than the one it ends with; one that keeps its shape too.  Sometimes bound
        (and read) before the loop; a ``for``, ``while``, ``break`` or inner loop.
        (The taped reverse loop zeroed its adjoint at the loop head like the
        step's own value, not the previous step's: the previous step's
        contribution was broadcast to the larger shape and summed again, a
        wrong gradient, taped only.)"""
        x, v, total = self.fresh_name("x"), self.fresh_name("w"), self.fresh_name()
        i = self.fresh_name("t")
        shape = self.pick([(3,), ()])
        form = self.pick(sorted(self.BODY_VALUE_SHAPES) + ["alternate", "sometimes",
                                                           "first_other"])
        loop = self.pick(["for", "while", "break", "inner"])
        prior = self.pick(["none", "float", "row"])
        self.features.add("body_value_" + form)
        self.emit(indent, f"{x} = {self._items(env, 1, shape)[0]}")
        if prior == "float":   # read before the loop: its adjoint must stop at the loop
            self.emit(indent, f"{v} = 0.5 * s")
            self.emit(indent, f"{x} = {x} * (1.0 + {v})")
        elif prior == "row":
            self.emit(indent, f"{v} = M[0] * s")
            self.emit(indent, f"{x} = {x} + 0.1 * np.sum({v})")
        # a loop that may run no step only where the value is bound before it
        bound = self.pick(["n + 1", "3"] if prior == "none" else ["n", "n + 1", "2"])
        if loop == "inner":
            outer = self.fresh_name("u")
            self.emit(indent, f"for {outer} in range(2):")
            indent += 1
        if loop == "while":
            self.emit(indent, f"{i} = 0")
            self.emit(indent, f"while {i} < {bound}:")
        else:
            self.emit(indent, f"for {i} in range({bound}):")
        inner = indent + 1
        fields = dict(x=x, i=i, k=f"{i} % 3 + 1")
        row_sum = f"np.sum({v}, axis=0)" if shape == (3,) else f"np.sum({v})"
        step = f"{x} = 0.9 * {x} + 0.1 * np.tanh({{red}} * s + 0.1 * {i})"
        if form in self.BODY_VALUE_SHAPES:
            self.emit(inner, f"{v} = " + self.BODY_VALUE_SHAPES[form].format(**fields))
            red = row_sum if form in ("grow", "shrink") else f"np.sum({v})"
            self.emit(inner, step.format(red=red))
        elif form == "alternate":   # (2, 3) on even steps, x's shape on odd ones
            self.emit(inner, f"if {i} % 2 == 0:")
            self.emit(inner + 1, f"{v} = np.tanh(B * {x})")
            self.emit(inner, "else:")
            self.emit(inner + 1, f"{v} = np.tanh({x} * s + 0.2)")
            self.emit(inner, step.format(red=f"np.sum({v})"))
        elif form == "sometimes":   # made on even steps only (the first step is one)
            self.emit(inner, f"if {i} % 2 == 0:")
            self.emit(inner + 1, f"{v} = " + self.BODY_VALUE_SHAPES["grow"].format(**fields))
            self.emit(inner + 1, step.format(red=row_sum))
            self.emit(inner, f"{x} = np.tanh({x} * 1.1)")
        else:                       # (3, 3) first in the step, x's shape at its end
            self.emit(inner, f"{v} = np.tanh(M * {x})")
            self.emit(inner, step.format(red=f"np.sum({v})"))
            self.emit(inner, f"{v} = np.tanh({x} * s + 0.1 * {i})")
            self.emit(inner, f"{x} = {x} + 0.1 * {v}")
        if loop == "while":
            self.emit(inner, f"{i} = {i} + 1")
        elif loop == "break":
            self.emit(inner, self.pick([f"if {i} >= 1:", f"if np.sum({x}) > 0.3:"]))
            self.emit(inner + 1, "break")
        elif loop == "inner":
            self.emit(indent, f"{x} = {x} * (1.0 - 0.1 * np.tanh(np.sum({v})))")
            indent -= 1
        self.emit(indent, f"{total} = " + self.pick([
            f"np.sum({x}) * (1.0 + 0.1 * np.sum({v}))",
            f"np.sum({x}) + 0.5 * np.sum({v} * {v})",
            f"np.sum({x} * np.sum({v})) * 0.3 + np.sum(np.sin({v}))"]))
        env[total] = Var((), 12.0, fresh=True)

    def family_converging_while(self, env, indent):
        """A loop that runs until a value its body computes says stop -- the usual
        convergence loop ``while err > tol`` -- with a step cap on either side of
        ``and``, a flag, ``or``, a ``break`` out of ``while True`` or of a ``for``, a
        test that draws a random number (``rng.random() < 0.9``);
        what the test reads is read after the loop too, sometimes.  (The test's
        variables were dropped from a checkpointed loop's state: a NameError.)"""
        x, new, err, k = (self.fresh_name("x"), self.fresh_name("x_new"),
                          self.fresh_name("err"), self.fresh_name("k"))
        total = self.fresh_name()
        shape = self.pick([(3,), ()])
        self.emit(indent, f"{x} = {self._items(env, 1, shape)[0]}")
        drive = self._items(env, 1, shape)[0]
        tol = self.pick(["1e-2", "1e-3"])
        form = self.pick(["err", "err_and_cap", "cap_and_err", "flag", "or", "while_true",
                          "for_break", "drawn_test"])
        self.features.add("converging_" + form)
        inner = indent + 1
        counted = form in ("err_and_cap", "cap_and_err", "or", "flag", "drawn_test")
        if form != "for_break":
            self.emit(indent, f"{err} = 1.0")
        if counted:
            self.emit(indent, f"{k} = 0")
        if form == "err":
            self.emit(indent, f"while {err} > {tol}:")
        elif form == "err_and_cap":
            self.emit(indent, f"while {err} > {tol} and {k} < 30:")
        elif form == "cap_and_err":
            self.emit(indent, f"while {k} < 30 and {err} > {tol}:")
        elif form == "or":
            self.emit(indent, f"while {err} > {tol} or {k} < 2:")
        elif form == "flag":
            done = self.fresh_name("done")
            self.emit(indent, f"{done} = False")
            self.emit(indent, f"while not {done}:")
        elif form == "while_true":
            self.emit(indent, "while True:")
        elif form == "drawn_test":  # the test draws: a budget's probe must not draw again
            rng = self.fresh_name("rng")
            self.emit(indent, f"{rng} = np.random.default_rng({self.draw(st.integers(0, 99))})")
            self.emit(indent, f"while {k} < 30 and {rng}.random() < 0.9:")
        else:
            self.emit(indent, f"for {k} in range(40):")
        # a contraction (rate <= 0.75): every form stops within 30 steps
        self.emit(inner, f"{new} = 0.5 * {x} + 0.25 * np.tanh({x} * s + {drive})")
        self.emit(inner, self.pick([f"{err} = np.max(np.abs({new} - {x}))",
                                    f"{err} = np.sqrt(np.sum(({new} - {x}) ** 2))"]))
        self.emit(inner, f"{x} = {new}")
        if counted:
            self.emit(inner, f"{k} = {k} + 1")
        if form == "flag":
            self.emit(inner, f"{done} = {err} < {tol} or {k} >= 30")
        elif form in ("while_true", "for_break"):
            self.emit(inner, f"if {err} < {tol}:")
            self.emit(inner + 1, "break")
        read = self.pick(["", f" + {err}"] + ([f" * (1.0 + 0.01 * {k})"] if counted or
                                              form == "for_break" else []))
        self.emit(indent, f"{total} = np.sum({x}){read}")
        env[total] = Var((), 8.0, fresh=True)

    def family_inlined_calls(self, env, indent):
        """One of the call forms desugar inlines (see the comment at
        ``REQUESTED_FAMILIES += ("inlined_calls",)``)."""
        k = self.counter = self.counter + 1
        shape = self.pick([(3,), (2, 3)])
        u, total = self.fresh_name("u"), self.fresh_name()
        self.emit(indent, f"{u} = np.zeros({shape!r}) + np.tanh({self._items(env, 1, shape)[0]})")
        form = self.pick(["draw_before", "write_after_read", "early_return", "generator",
                          "closure_factory", "def_default", "partial", "object_methods",
                          "shadowed_parameters", "scalar_descent", "generator_continue",
                          "item_added_call", "closure_over_a_local", "view_written_in_a_branch",
                          "object_in_a_dict_aliased", "object_in_a_list_aliased",
                          "def_in_each_branch",
                          "function_tuple_loop", "bound_method_argument"])
        self.features.add("inlined_calls_" + form)
        in_place = False
        if form == "object_methods":  # made before any loop; holds the caller's array
            obj = self.fresh_name("acc")
            # (in place in a loop that rebinds u is refused: acc.v is then the old u)
            in_place = self.draw(st.booleans())
            self.features.add("inlined_calls_object_in_place" if in_place else
                              "inlined_calls_object_rebinding")
            update = "self.v += self.rate * np.tanh(c)" if in_place else \
                "self.v = self.v + self.rate * np.tanh(c)"
            self.helpers += [f"class _Rated{k}:", "    def __init__(self, rate):",
                             "        self.rate = rate", "", "",
                             f"class _Acc{k}(_Rated{k}):", "    count = 0", "",
                             "    def __init__(self, v, rate):",
                             "        super().__init__(rate)", "        self.v = v",
                             "        self.m = None", "",
                             "    def push(self, c):", "        if self.m is None:",
                             "            self.m = np.zeros_like(c)",
                             "        self.m = 0.5 * self.m + np.sin(c)", f"        {update}",
                             "        self.count += 1",
                             "        return self.v * 1.0 + 0.1 * self.m", "", ""]
            self.emit(indent, f"{obj} = _Acc{k}({u}, {self.pick(['0.3', '-0.2'])})")
        if form == "bound_method_argument":  # made before any loop; its method passed on
            obj = self.fresh_name("field")
            self.helpers += [f"class _Field{k}:", "    def __init__(self, c):",
                             "        self.c = c", "",
                             "    def rhs(self, v):", "        return -self.c * np.tanh(v)", "",
                             "    def run(self, v, m):", "        for j in range(m):",
                             f"            v = _advance{k}(self.rhs, v, 0.1)",
                             "        return v", "", "",
                             f"def _advance{k}(f, v, h):", "    a = f(v)",
                             "    return v + h * f(v + 0.5 * h * a)", "", ""]
            self.emit(indent, f"{obj} = _Field{k}({self.pick(['0.7', '-0.4'])})")
        if form == "draw_before":
            rng = self.fresh_name("rng")
            self.emit(indent, f"{rng} = np.random.default_rng({self.draw(st.integers(0, 99))})")
        inner = indent
        # (a closure bound in a loop is refused by the lowering: bound once, before)
        if form not in ("closure_factory", "def_default", "partial") and not in_place and \
                self.draw(st.booleans()):
            self.emit(indent, f"for {self.fresh_name('t')} in {self.pick(['range(n)', 'range(2)'])}:")
            inner = indent + 1
            self.features.add("inlined_calls_loop")
        if form == "draw_before":
            self.helpers += [f"def _noisy{k}(g, a):", "    return a * g.normal(0.0, 0.5)", "", ""]
            self.emit(inner, f"{u} = {rng}.normal(0.0, 0.5) + _noisy{k}({rng}, {u})")
        elif form == "write_after_read":  # v[0] is read before the helper writes it
            self.helpers += [f"def _bump{k}(v, c):", "    v[0] += c", "    return c * 2.0",
                             "", ""]
            self.emit(inner, f"{u} = {u} * 0.5 + 0.1 * {u}[0] * _bump{k}({u}, np.sum(np.tanh({u})))")
        elif form == "early_return":
            self.helpers += [f"def _clip{k}(v, limit):", "    if np.max(np.abs(v)) > limit:",
                             "        return v * (limit / np.max(np.abs(v)))",
                             "    v = v + 0.0", "    return v * 1.5", "", ""]
            self.emit(inner, f"{u} = np.tanh(_clip{k}({u}, {self.pick(['0.5', '2.0'])}))")
        elif form == "partial":  # functools.partial binds the object the name holds now
            scale = self.fresh_name("k")
            self.helpers += ["import functools", "", "", f"def _scaled{k}(c, v):",
                             "    return c * np.tanh(v)", "", ""]
            self.emit(inner, f"{scale} = np.sum({u}) * 0.1")
            self.emit(inner, f"_h{k} = functools.partial(_scaled{k}, {scale})")
            self.emit(inner, f"{scale} = {scale} + 1.0")
            self.emit(inner, f"{u} = _h{k}({u}) + {scale}")
        elif form == "def_default":  # the default is the value when the def ran
            scale = self.fresh_name("k")
            self.emit(inner, f"{scale} = np.sum({u}) * 0.1")
            self.emit(inner, f"def _g{k}(v, c={scale}):")
            self.emit(inner + 1, "return c * np.tanh(v)")
            self.emit(inner, f"{scale} = {scale} + 1.0")
            self.emit(inner, f"{u} = _g{k}({u}) + {scale}")
        elif form == "closure_factory":  # the closure keeps what its factory was given
            scale = self.fresh_name("k")
            self.helpers += [f"def _make{k}(c):", "    def scaled(v):",
                             "        return c * np.tanh(v)", "    return scaled", "", ""]
            self.emit(inner, f"{scale} = np.sum({u}) * 0.1")
            self.emit(inner, f"_f{k} = _make{k}({scale})")
            self.emit(inner, f"{scale} = {scale} + 1.0")
            self.emit(inner, f"{u} = _f{k}({u}) + {scale}")
        elif form == "object_methods":  # in place: the caller's u changes too
            self.emit(inner, f"{u} = {obj}.push({u}) + {u} * {obj}.count")
        elif form == "view_written_in_a_branch":  # inlined by desugar in the if
            # statement the conditional expression is written as, where the view pass
            # follows the write through a view of the caller's u (once the lowering's
            # call: a lost write, then a refusal); in a loop rebinding u it does not
            # follow it, and the fence refuses the write where the helper makes it
            looped = inner != indent
            mark = f"  {REFUSED_MARK} view in a loop" if looped else ""
            if len(shape) == 2 and self.pick([False, True]):
                self.helpers += [f"def _bump_row{k}(a, j):", "    T = a.T",
                                 f"    T[0, j] = T[0, j] * 1.5{mark}", "    return np.sum(T)",
                                 "", ""]
            else:
                view = "a[j]" if len(shape) == 2 else "a[j:]"
                self.helpers += [f"def _bump_row{k}(a, j):", f"    row = {view}",
                                 f"    row[0] = row[0] * 1.5{mark}",
                                 "    return np.sum(row)", "", ""]
            self.emit(inner, f"{total}_b = _bump_row{k}({u}, int(n) % 2) if n >= 0 else 0.0")
            self.emit(inner, f"{u} = {u} + 0.1 * {total}_b")
        elif form == "bound_method_argument":  # f = field.rhs, bound in the loop once inlined
            if self.pick([False, True]):
                self.features.add("inlined_calls_bound_method_of_self")
                self.emit(inner, f"{u} = {obj}.run({u}, 2)")
            else:
                self.emit(inner, f"{u} = _advance{k}({obj}.rhs, {u}, 0.1) + 0.1 * {u}")
        elif form == "function_tuple_loop":  # each trip's call names its function
            self.helpers += [f"def _soft{k}(v):", "    return v / (1.0 + v * v)", "", ""]
            self.emit(inner, f"for _act{k} in (np.tanh, _soft{k}, np.sin):")
            self.emit(inner + 1, f"{u} = 0.8 * {u} + 0.2 * _act{k}({u})")
        elif form == "def_in_each_branch":  # which def a call means: refused
            # (once every call meant the def read last, whatever branch ran)
            self.emit(inner, f"if np.sum({u}) > 0.0:")
            self.emit(inner + 1, f"def _pick{k}(v):  {REFUSED_MARK} two defs")
            self.emit(inner + 2, "return v * 0.5")
            self.emit(inner, "else:")
            self.emit(inner + 1, f"def _pick{k}(v):")
            self.emit(inner + 2, "return v * 2.0")
            self.emit(inner, f"{u} = _pick{k}({u}) + 0.1 * {u}")
        elif form in ("object_in_a_dict_aliased", "object_in_a_list_aliased"):
            # a method writing through w = self.w (once the object kept its old array,
            # then refused on the lowering's object): exact in a list only read or a
            # dict read by constant keys (desugar/object_lists.py: the object is names)
            box = self.fresh_name("box")
            self.helpers += [f"class _Bump{k}:", "    def __init__(self, w):",
                             "        self.w = w * 1.0", "    def bump(self):",
                             "        r = self.w", "        r += 0.1",
                             "        return np.sum(r)", "", ""]
            key = '"b"' if form == "object_in_a_dict_aliased" else "0"
            made = f"{{{key}: _Bump{k}({u})}}" if form == "object_in_a_dict_aliased" else \
                f"[_Bump{k}({u})]"
            self.emit(inner, f"{box} = {made}")
            self.emit(inner, f"{total}_c = {box}[{key}].bump()")
            self.emit(inner, f"{u} = {u} + 0.1 * {total}_c + {box}[{key}].w")
        elif form == "closure_over_a_local":  # the closure reads acc after the +=
            self.helpers += [f"def _make_acc{k}(a):", "    acc = a * 0.5",
                             "    def pulled(v):", "        return np.tanh(v) * acc",
                             "    acc += 0.1", "    return pulled", "", ""]
            self.emit(inner, f"for _j{k} in range(2):")
            self.emit(inner + 1, f"_g{k} = _make_acc{k}(np.sin({u}))")
            self.emit(inner + 1, f"{u} = _g{k}({u}) + 0.5 * {u}")
            self.emit(inner, f"{u} = {u} + _make_acc{k}({u})({u})")
        elif form == "shadowed_parameters":  # inner's a and the lambda's a are their own
            other = self.fresh_name("w")
            self.helpers += [f"def _mix{k}(a, x):", "    def inner(a, y):",
                             "        return a * np.tanh(y)",
                             "    half = lambda a: 0.5 * a",
                             "    return inner(x, a) + half(x) + inner(a=a, y=x)", "", ""]
            self.emit(inner, f"{other} = np.sin({u})")
            self.emit(inner, f"{u} = _mix{k}({u}, {other})")
        elif form == "scalar_descent":  # x -= ... on a number rebinds the helper's x
            scale = self.fresh_name("k")
            self.helpers += [f"def _descend{k}(x, g, lr):", "    x -= lr * g",
                             "    x *= 0.9", "    return x", "", ""]
            self.emit(inner, f"{scale} = float(np.sum({u})) * 0.1")
            self.emit(inner, f"{u} = {u} * _descend{k}({scale}, np.tanh({scale}), 0.3) + {scale}")
        elif form == "item_added_call":  # u[0] is read before the call, which writes nothing
            self.helpers += [f"def _pull{k}(a, j):", "    d = a - a[j]",
                             "    return np.sum(np.tanh(d) * 0.5, axis=0)", "", ""]
            self.emit(inner, f"{u}[0] += _pull{k}({u}, {self.pick(['0', '1'])})")
            self.emit(inner, f"{u}[1] *= 1.0 + _pull{k}(np.sin({u}), 0)")
        elif form == "generator_continue":  # the rest of the body skipped, then a break
            other = self.fresh_name("w")
            self.helpers += [f"def _rows{k}(a, m):", "    for j in range(m):",
                             "        yield a * (0.5 - 0.3 * j)", "", ""]
            self.emit(inner, f"for {other} in _rows{k}({u}, 3):")
            self.emit(inner + 1, f"if np.sum({other}) > {self.pick(['0.0', '0.2'])}:")
            self.emit(inner + 2, "continue")
            self.emit(inner + 1, f"{u} = {u} * 0.9 + 0.2 * np.tanh({other})")
            if self.pick([False, True]):
                self.emit(inner + 1, f"if np.max({u}) > 1.5:")
                self.emit(inner + 2, "break")
        else:  # the body rebinds what the generator was given: it keeps the first
            other = self.fresh_name("w")
            self.helpers += [f"def _pairs{k}(a, b, m):", "    for j in range(m):",
                             "        yield b, a * 0.5", "", ""]
            self.emit(inner, f"{other} = np.sin({u})")
            self.emit(inner, f"for {u}, {other} in _pairs{k}({u}, {other}, 2):")
            self.emit(inner + 1, f"{other} = {other} + 0.1 * {u}")
        self.emit(indent, f"{total} = np.sum(np.tanh({u}) ** 2)")
        env[total] = Var((), float(_size(shape)), fresh=True)

    def family_module_state(self, env, indent):
        """Module-level state the function reads and writes (see
        ``REQUESTED_FAMILIES += ("module_state",)``): one MODULE_STATE_FORMS form,
        in a loop (checkpointed at the top level) or not, its value read after."""
        k = self.counter = self.counter + 1
        forms = sorted(MODULE_STATE_FORMS)
        if self.module_refused:  # one refused line a program (check_refused reads one)
            forms = [f for f in forms if f not in MODULE_STATE_REFUSED]
        form = self.pick(forms)
        self.features.add("module_state_" + form)
        self.module_refused = self.module_refused or form in MODULE_STATE_REFUSED
        lines = [line.format(k=k, seed=self.draw(st.integers(0, 99))) for line in
                 MODULE_STATE_LINES]
        if form == "global":
            lines += [f"COUNT{k} = 0", "", ""]
        if form == "counter_list":
            lines += [f"COUNTER{k} = [0]", "", ""]
        self._module_block(lines)
        if form in ("default_path", "default_store"):  # a parameter reaching the object
            at = next(i for i, line in enumerate(self.lines) if line.startswith("def f("))
            self.lines[at] = self.lines[at][:-2] + (f", cells{k}=CELLS{k}):" if
                                                    form == "default_path" else
                                                    f", cell{k}=CELL{k}):")
        x = self._items(env, 1, (3,))[0]
        y, total = self.fresh_name("y"), self.fresh_name()
        body, after = MODULE_STATE_FORMS[form]
        inner, t = indent, "0"
        squares = None
        if self.draw(st.booleans()):  # a helper in a comprehension: the lowering's objects
            squares = self.fresh_name("sq")
            self.emit(indent, f"{squares} = [_sq{k}(v) for v in ({x},)]")
            self.features.add("module_state_lowering")
        # (a container stored on the object in a loop is refused at the loop's line)
        if form not in ("global", "tuple_attribute", "dict_attribute") and \
                self.draw(st.booleans()):
            t = self.fresh_name("t")
            # (at least one trip: what the loop binds is read after it)
            self.emit(indent, f"for {t} in {self.pick(['range(n + 1)', 'range(2)'])}:")
            inner = indent + 1
            self.features.add("module_state_loop")
        fields = dict(x=x, C=f"CELL{k}", k=k, t=t, y=y, mark=REFUSED_MARK,
                      mark_lowering="" if squares is None else
                      f"  {REFUSED_MARK} container stored")
        for line in body:
            self.emit(inner, line.format(**fields))
        after = after.format(**fields)
        if squares is not None:  # (before a mark, which ends the line)
            read, _, mark = after.partition(f"  {REFUSED_MARK}")
            after = f"{read} + np.sum({squares}[0])" + (f"  {REFUSED_MARK}{mark}" if mark else "")
        self.emit(indent, f"{total} = {after}")
        env[total] = Var((), 12.0, fresh=True)

    def family_loop_exits(self, env, indent):
        """A module-level helper iterating a contraction until it settles, left by
        a ``return`` inside its loop, or by a ``break`` that skips the loop's
        ``else`` body, called once or in a loop of ``f``.  (Both were refused.)"""
        k = self.counter = self.counter + 1
        helper = f"_settle{k}"
        form = self.pick(["for_return", "while_return", "while_true_return", "nested_return",
                          "two_returns", "for_else", "while_else", "else_continue",
                          "in_place_return", "in_place_break"])
        self.features.add("loop_exits_" + form)
        cap = self.pick(["m", "m", "3"])
        tol = self.pick(["1e-2", "1e-3"])
        step = ["    new = 0.5 * x + 0.25 * np.tanh(x * s + d)",  # in the loop
                self.pick(["    err = np.max(np.abs(new - x))",
                           "    err = np.sqrt(np.sum((new - x) ** 2))"])]
        body = {
            "for_return": [f"for i in range({cap}):", *step,
                           f"    if err < {tol}:", "        return new * (1.0 + 0.01 * i)",
                           "    x = new", "return x * 0.5"],
            "while_return": ["i = 0", f"while i < {cap}:", *step, "    i = i + 1",
                             f"    if err < {tol}:", "        return new + 0.1 * err",
                             "    x = new", "return x"],
            "while_true_return": ["while True:", *step, f"    if err < {tol}:",
                                  "        return new", "    x = new"],
            "nested_return": ["for j in range(2):", f"    for i in range({cap}):",
                              *["    " + line for line in step],
                              f"        if err < {tol}:",
                              "            return new * (1.0 + 0.1 * j)",
                              "        x = new", "    x = 0.9 * x", "return x"],
            "two_returns": [f"for i in range({cap}):", *step, f"    if err < {tol}:",
                            "        if np.sum(new) > 0.0:", "            return new",
                            "        else:", "            return -new", "    x = new",
                            "return x"],
            "for_else": [f"for i in range({cap}):", *step, "    x = new",
                         f"    if err < {tol}:", "        break", "else:",
                         "    x = x * 0.5", "return x"],
            "while_else": ["i = 0", f"while i < {cap}:", *step, "    x = new", "    i = i + 1",
                           f"    if err < {tol}:", "        break", "else:",
                           "    x = np.tanh(x)", "return x"],
            "else_continue": ["for j in range(2):", f"    for i in range({cap}):",
                              *["    " + line for line in step], "        x = new",
                              f"        if err < {tol}:", "            break",
                              "    else:", "        x = 0.9 * x", "        continue",
                              "    x = x + 0.1", "    break", "return x"],
            # updated in place, left with the array itself: no alias of it lives on
            # into the next iteration (the fence refused NumCSE's Newton iteration)
            "in_place_return": ["x = np.copy(x)", "while True:", *step, "    x -= x - new",
                                f"    if err < {tol}:", "        return x"],
            "in_place_break": ["x = x * 1.0", f"for i in range({cap}):", *step,
                               "    x *= 0.0", "    x += new", f"    if err < {tol}:",
                               "        out = x", "        break", "else:",
                               "    out = x * 0.5", "return out + 0.1 * x"],
        }[form]
        self.helpers.append(f"def {helper}(x, d, s, m):")
        self.helpers += ["    " + line for line in body]
        self.helpers += ["", ""]
        shape = self.pick([(3,), ()])
        x, total = self.fresh_name("x"), self.fresh_name()
        start, drive = self._items(env, 1, shape)[0], self._items(env, 1, shape)[0]
        trips = self.pick(["n", "40"])
        if self.draw(st.booleans()):  # called in a loop of f
            q = self.fresh_name("q")
            self.emit(indent, f"{x} = {start}")
            self.emit(indent, f"for {q} in range(2):")
            self.emit(indent + 1, f"{x} = {helper}({x}, {drive}, s, {trips})")
        else:
            self.emit(indent, f"{x} = {helper}({start}, {drive}, s, {trips})")
        self.emit(indent, f"{total} = np.sum({x})")
        env[total] = Var((), 3.0, fresh=True)

    def family_boolean_tests(self, env, indent):
        """``and``/``or``/``not`` in ``if`` and ``while`` tests and in conditional
        expressions, where only the truth is used: operands that are numbers or
        flags, not booleans, and a right side that must not run when the left
        decides (``t >= 3 or a[t] > 0.0`` would index past the end).  (Such a test
        was refused as "`and`/`or` used as a value".)"""
        flag, x, total = self.fresh_name("flag"), self.fresh_name("x"), self.fresh_name()
        shape = self.pick([(3,), ()])
        self.emit(indent, f"{flag} = {self.pick(['s > 0.2', 'np.sum(c) < 0.0', 'n > 2', 'n'])}")
        self.emit(indent, f"{x} = {self._items(env, 1, shape)[0]}")
        index = self.fresh_name("t")
        form = self.pick(["if", "ifexp", "while"])
        self.features.add("boolean_" + form)
        tests = [f"{flag} or {index} >= 2", f"{index} > 0 and {flag}",
                 f"not ({flag} and {index} % 2 == 0)", f"{index} >= 3 or a[{index}] > 0.0",
                 f"{flag} and np.sum({x}) > 0.0 or {index} == 1",
                 f"({index} or {flag}) and s < 0.5"]
        test = self.pick(tests)
        inner = indent + 1
        grow = f"{x} * 0.9 + 0.1 * np.tanh({x} * s)"
        shrink = f"{x} * np.cos(s)"
        if form == "while":
            self.emit(indent, f"{index} = 0")
            self.emit(indent, f"while {index} < {self.pick(['n', '4'])} and ({test}):")
            self.emit(inner, f"{x} = {grow}")
            self.emit(inner, f"{index} = {index} + 1")
        else:
            self.emit(indent, f"for {index} in range({self.pick(['n', '4', 'n + 1'])}):")
            if form == "if":
                self.emit(inner, f"if {test}:")
                self.emit(inner + 1, f"{x} = {grow}")
                if self.draw(st.booleans()):
                    self.emit(inner, "else:")
                    self.emit(inner + 1, f"{x} = {shrink}")
            else:
                self.emit(inner, f"{x} = {grow} if {test} else {shrink}")
        self.emit(indent, f"{total} = np.sum({x})")
        env[total] = Var((), 3.0, fresh=True)

    def family_keyed_lists(self, env, indent):
        """A log kept in a dict of constant keys (see the ``keyed_lists`` comment above)."""
        log, t, total = self.fresh_name("log"), self.fresh_name("t"), self.fresh_name()
        x, y, z = self._items(env, 3)
        entries = {"loss": self.pick(["[0.0]", f"[np.sum({x}) * 0.1]"]), "w": f"{x} * 1.0",
                   "err": f"[{y}]"}
        order = self.draw(st.permutations(sorted(entries)))
        self.emit(indent, f"{log} = {{" + ", ".join(f'"{key}": {entries[key]}' for key in order)
                  + "}")
        loop = self.pick(["range_n", "while", "constant"])
        self.features.add(f"keyed_lists_{loop}")
        if loop == "while":
            self.emit(indent, f"{t} = 0")
            self.emit(indent, f"while {t} < n:")
        else:
            self.emit(indent, f"for {t} in range({'n' if loop == 'range_n' else '3'}):")
        inner = indent + 1
        update = self.pick(["rebound", "in_place"])
        self.features.add(f"keyed_lists_{update}")
        if self.draw(st.booleans()):
            self.features.add("keyed_lists_read_in_loop")
            self.emit(inner, f'{log}["w"] = {log}["w"] * 0.5 + 0.1 * {log}["loss"][-1]')
        if update == "rebound":
            self.emit(inner, f'{log}["w"] = np.tanh({log}["w"] * s + {z})')
        else:
            self.emit(inner, f'{log}["w"] += 0.1 * np.tanh({log}["w"] * s + {z})')
        self.emit(inner, f'{log}["loss"].append(np.tanh(np.sum({log}["w"] * c[0])))')
        arrays = self.draw(st.booleans())
        if arrays:
            self.features.add("keyed_lists_arrays")
            self.emit(inner, f'{log}["err"].append({log}["w"] * {self.pick(["0.5", "s"])})')
        if loop == "while":
            self.emit(inner, f"{t} = {t} + 1")
        read = self.pick(["sum", "item", "len"])
        self.features.add(f"keyed_lists_{read}")
        tail = {"sum": f'0.1 * sum({log}["loss"])', "item": f'{log}["loss"][-1] * 0.5',
                "len": f'0.1 * len({log}["loss"]) / (len({log}["loss"]) + 1.0)'}[read]
        errs = f' + 0.1 * np.sum(np.stack({log}["err"]), axis=0) / len({log}["err"])' \
            if arrays else f' + {log}["err"][0] * 0.1'
        self.emit(indent, f'{total} = {log}["w"] + {tail}{errs}')
        env[total] = Var((3,), 3.0, fresh=True)

    def family_coefficient_forms(self, env, indent):
        """Names and coefficients read where Python reads them (see the
        ``coefficient_forms`` comment above)."""
        k = self.counter = self.counter + 1
        total = self.fresh_name()
        form = self.pick(["display", "carried_display", "class_list", "flag"])
        self.features.add(f"coefficient_forms_{form}")
        x, y = self._items(env, 2)
        if form == "display":  # p, q = q, [p, 2.0]: the display reads the old p
            p, q = self.fresh_name("p"), self.fresh_name("q")
            self.emit(indent, f"{p}, {q} = {x}, {y}")
            if self.draw(st.booleans()):
                self.features.add("coefficient_forms_dict")
                self.emit(indent, f"{p}, {q} = {q}, {{'a': {p} * s, 'b': 2.0}}")
                self.emit(indent, f"{total} = {p} * 0.5 + {q}['a'] * {q}['b']")
            else:
                self.emit(indent, f"{p}, {q} = {q}, [{p} * s, 2.0, {q}]")
                self.emit(indent, f"{total} = {p} * 0.5 + {q}[0] * {q}[1] - {q}[2]")
            env[total] = Var((3,), 3.0, fresh=True)
            return
        if form == "carried_display":  # a, L = f(L, a), [g(a), L[0]] in each trip
            a, L, t = self.fresh_name("a"), self.fresh_name("L"), self.fresh_name("t")
            self.emit(indent, f"{a}, {L} = np.sum({x}) * 0.1, [{x}, {y}]")
            self.emit(indent, f"for {t} in range({self.pick(['n', '3'])}):")
            self.emit(indent + 1, f"{a}, {L} = np.tanh({L}[0][0] + {a} * s), "
                                  f"[{L}[1] * 0.9 + {a}, np.tanh({L}[0])]")
            self.emit(indent, f"{total} = {a} + np.sum({L}[0] * {L}[1]) * 0.1")
            env[total] = Var((), 2.0, fresh=True)
            return
        if form == "flag":  # a helper's log, kept only when asked for
            helper = f"_solve{k}"
            given = self.pick(["default", "false", "true_unread"])
            self.features.add(f"coefficient_forms_flag_{given}")
            self.helpers += [
                f"def {helper}(u, w, m, log=False):",
                "    if log:",
                "        log = {'err': []}",
                "    for it in range(m):",
                "        u = np.tanh(u * w + 0.1)",
                "        if it % 2 == 0 and log:",
                "            log['err'].append(np.sum(u))",
                "    if log:",
                "        return u, log",
                "    return u", "", ""]
            call = {"default": f"{helper}({x}, s, n)", "false": f"{helper}({x}, s, 3, log=False)",
                    "true_unread": f"{helper}({x}, s, 2, False)"}[given]
            self.emit(indent, f"{total} = {call}")
            env[total] = Var((3,), 1.0, fresh=True)
            return
        cls, o, u, v = f"_Coef{k}", self.fresh_name("o"), self.fresh_name("u"), self.fresh_name("v")
        read = self.pick(["for", "indexed", "zipped"])
        self.features.add(f"coefficient_forms_class_{read}")
        cs = self.pick(["[0.6, 0.4]", "[0.5, 0.3, 0.2]"])
        ds = "[1.0, 0.0]" if cs == "[0.6, 0.4]" else "[0.5, 0.5, 0.0]"
        body = {"for": ["        for c_ in self.cs:",
                        "            u = u + c_ * np.tanh(self.w * v)",
                        "            v = v - c_ * 0.5 * u"],
                "indexed": ["        for j in range(len(self.cs)):",
                            "            u = u + self.cs[j] * np.tanh(self.w * v)",
                            "            v = v - self.ds[j] * 0.5 * u"],
                "zipped": ["        for c_, d_ in zip(self.cs, self.ds):",
                           "            u = u + c_ * np.tanh(self.w * v)",
                           "            v = v - d_ * 0.5 * u"]}[read]
        self.helpers += [f"class {cls}:", f"    cs = {cs}", f"    ds = {ds}", "",
                         "    def __init__(self, w):", "        self.w = w", "",
                         "    def step(self, u, v):"] + body + ["        return u, v", "", ""]
        self.emit(indent, f"{o} = {cls}(s)")
        self.emit(indent, f"{u}, {v} = {x}, {y}")
        calls = self.pick(["twice", "loop"])
        self.features.add(f"coefficient_forms_class_{calls}")
        if calls == "twice":
            self.emit(indent, f"{u}, {v} = {o}.step({u}, {v})")
            self.emit(indent, f"{u}, {v} = {o}.step({u}, {v})")
        else:
            t = self.fresh_name("t")
            self.emit(indent, f"for {t} in range(n):")
            self.emit(indent + 1, f"{u}, {v} = {o}.step({u}, {v})")
        self.emit(indent, f"{total} = np.tanh({u}) + 0.5 * np.tanh({v})")
        env[total] = Var((3,), 1.5, fresh=True)

    def family_keyword_calls(self, env, indent):
        """Calls whose keyword arguments come out of parameter order, each drawing
        from a random generator (see the ``keyword_calls`` comment above): Python
        evaluates the arguments in the order the call writes them, whatever order the
        parameters take them in."""
        k = self.counter = self.counter + 1
        form = self.pick(["out_of_order", "kwargs_around", "module_partial", "local_partial",
                          "keyword_partial", "positional_then_keywords", "dict_spread",
                          "dict_built_first", "method", "lambda", "nested", "body_draws",
                          "star_args", "keyword_only"])
        self.features.add("keyword_calls_" + form)
        source = self.pick(["local", "legacy", "module"])
        self.features.add("keyword_calls_draw_" + source)
        rng = {"local": self.fresh_name("rng"), "legacy": "np.random",
               "module": f"RNG{k}"}[source]
        if source == "legacy":
            self.features.add("legacy_random")
        if source == "module":
            self._module_block([f"RNG{k} = np.random.default_rng({self.draw(st.integers(0, 99))})",
                                "", ""])
        if source == "local":
            self.emit(indent, f"{rng} = np.random.default_rng({self.draw(st.integers(0, 99))})")

        def draw():
            return self.pick([f"{rng}.normal()", f"{rng}.uniform(-1.0, 1.0)",
                              f"{rng}.normal(0.0, 0.5)", f"float({rng}.standard_normal())",
                              f"{rng}.normal(0.0, 0.5, size=3)"])
        # each parameter moves the value its own way: draws given to the wrong one
        # change the value and the gradient
        body = "return np.tanh(x * a + b) * (1.0 + 0.1 * np.tanh(scale)) + 0.3 * a - 0.2 * b"
        mix = f"_mix{k}"
        self.helpers += [f"def {mix}(x, a=0.5, b=0.0, scale=1.0):", f"    {body}", "", ""]
        x = self._items(env, 1)[0]
        u, total = self.fresh_name("u"), self.fresh_name()
        self.emit(indent, f"{u} = {x}")
        if form == "method":  # made before any loop
            obj = self.fresh_name("m")
            self.helpers += [f"class _Mixer{k}:", "    def __init__(self, w):",
                             "        self.w = w", "",
                             "    def mix(self, x, a=0.5, b=0.0):",
                             "        return np.tanh(self.w * x * a + b) + 0.3 * a - 0.2 * b",
                             "", ""]
            self.emit(indent, f"{obj} = _Mixer{k}({self.pick(['0.7', '1.2'])})")
        inner = indent
        if form not in ("local_partial",) and self.draw(st.booleans()):
            self.emit(indent, f"for {self.fresh_name('t')} in {self.pick(['range(n)', 'range(2)'])}:")
            inner = indent + 1
            self.features.add("keyword_calls_loop")
        d1, d2, d3 = draw(), draw(), draw()
        if form == "out_of_order":
            call = f"{mix}({u}, b={d1}, a={d2})"
        elif form == "kwargs_around":  # scale and shift go to **kw, b between them
            self.helpers += [f"def _kw{k}(x, b=0.0, **kw):",
                             "    return np.tanh(x * kw['scale'] + b) - 0.3 * kw['shift'] + 0.1 * b",
                             "", ""]
            call = f"_kw{k}({u}, scale={d1}, b={d2}, shift={d3})"
        elif form == "module_partial":
            self.helpers += ["import functools", "", "",
                             f"SHIFTED{k} = functools.partial({mix}, scale=0.5)", "", ""]
            call = f"SHIFTED{k}({u}, b={d1}, a={d2})"
        elif form == "local_partial":
            self.helpers += ["import functools", "", ""]
            self.emit(inner, f"_p{k} = functools.partial({mix}, scale=0.5)")
            call = f"_p{k}({u}, b={d1}, a={d2})"
        elif form == "keyword_partial":  # the partial's keyword given again by the call
            self.helpers += ["import functools", "", "",
                             f"BIASED{k} = functools.partial({mix}, b=0.25)", "", ""]
            call = f"BIASED{k}({u}, scale={d1}, b={d2}, a={d3})"
        elif form == "positional_then_keywords":
            call = f"{mix}({u}, {d1}, scale={d2}, b={d3})"
        elif form == "dict_spread":
            call = f"{mix}({u}, **{{'b': {d1}, 'a': {d2}}})"
        elif form == "dict_built_first":
            kw = self.fresh_name("kw")
            self.emit(inner, f"{kw} = {{'scale': {d1}, 'b': {d2}}}")
            call = f"{mix}({u}, a={d3}, **{kw})"
        elif form == "method":
            call = f"{obj}.mix({u}, b={d1}, a={d2})"
        elif form == "lambda":
            self.emit(inner, f"_l{k} = lambda x, a, b: np.tanh(x * a + b) + 0.3 * a - 0.2 * b")
            call = f"_l{k}({u}, b={d1}, a={d2})"
        elif form == "nested":  # an argument that is itself such a call
            call = f"{mix}({u}, b=np.sum({mix}({u}, b={d1}, a={d2})) * 0.1, a={d3})"
        elif form == "body_draws":  # the helper draws after its arguments were drawn
            gen = rng if source != "legacy" else None
            if gen is None:
                self.helpers += [f"def _noisy{k}(x, a=0.5, b=0.0):",
                                 "    return np.tanh(x * a + b + 0.1 * np.random.normal()) - 0.2 * b",
                                 "", ""]
                call = f"_noisy{k}({u}, b={d1}, a={d2})"
            else:
                self.helpers += [f"def _noisy{k}(x, g, a=0.5, b=0.0):",
                                 "    return np.tanh(x * a + b + 0.1 * g.normal()) - 0.2 * b",
                                 "", ""]
                call = f"_noisy{k}({u}, b={d1}, g={gen}, a={d2})"
        elif form == "star_args":  # *args gathered, then keywords out of order
            self.helpers += [f"def _star{k}(x, *rest, b=0.0, a=0.5):",
                             "    return np.tanh(x * a + b + 0.1 * sum(rest)) - 0.2 * b + 0.3 * a",
                             "", ""]
            call = f"_star{k}({u}, {d1}, b={d2}, a={d3})"
        else:  # keyword_only
            self.helpers += [f"def _only{k}(x, *, a, b):",
                             "    return np.tanh(x * a + b) + 0.3 * a - 0.2 * b", "", ""]
            call = f"_only{k}({u}, b={d1}, a={d2})"
        self.emit(inner, f"{u} = np.tanh(0.5 * {u} + 0.5 * {call})")
        self.emit(indent, f"{total} = np.sum({u} * {u})")
        env[total] = Var((), 3.0, fresh=True)

    def family_option_dispatch(self, env, indent):
        """A helper choosing what it computes by a string option, or a loop over
        functions (see the ``option_dispatch`` comment above): only the branch or
        the functions the option names run, as in Python."""
        k = self.counter = self.counter + 1
        form = self.pick(["if_chain", "membership", "choice", "table", "normalised_key",
                          "called_item", "none_default", "or_default", "enumerate_display",
                          "module_list", "local_list"])
        self.features.add("option_dispatch_" + form)
        alpha, beta = f"_alpha{k}", f"_beta{k}"
        self._module_block([
            f"def {alpha}(r):", "    return np.tanh(r) * 0.8", "", "",
            f"def {beta}(r):", "    return np.sin(r) * 0.5 + 0.1 * r", "", "",
            f"TABLE{k} = {{'alpha': {alpha}, 'beta': {beta}, 'gamma': np.tanh}}",
            f"FUNCS{k} = [{beta}, np.sin, {alpha}]", "", ""])
        spelled = self.pick(["alpha", "Beta", " GAMMA ", "beta"])
        name = spelled.strip().lower()
        helper = f"_pick{k}"
        if form == "if_chain":
            body = ["    name = name.strip().lower()",
                    "    if name == 'alpha':", f"        return {alpha}(u)",
                    "    elif name == 'beta':", f"        return {beta}(u)",
                    "    elif name == 'gamma':", "        return np.tanh(u)",
                    "    raise ValueError('unknown ' + name)"]
        elif form == "membership":
            body = ["    name = name.strip().lower()", "    out = np.zeros_like(u)",
                    "    if name in ('alpha', 'gamma'):",
                    "        factor = 0.8 if 'alpha' == name else 1.0",
                    "        out = out + np.tanh(u) * factor", "        return out",
                    "    if name not in ('beta',):", "        raise ValueError(name)",
                    f"    return out + {beta}(u)"]
        elif form == "choice":
            body = ["    name = name.strip().lower()",
                    f"    fn = {alpha} if name == 'alpha' else ({beta} if name == 'beta' else np.tanh)",
                    "    return fn(u)"]
        elif form == "table":
            body = ["    name = name.strip().lower()", f"    fn = TABLE{k}[name]", "    return fn(u)"]
        elif form == "normalised_key":
            body = ["    key = name.strip().lower()", f"    return TABLE{k}[key](u)"]
        elif form == "called_item":
            body = ["    name = name.strip().lower()",
                    f"    if name not in TABLE{k}:", "        raise KeyError(name)",
                    f"    return TABLE{k}[name](u) * 1.0"]
        elif form == "none_default":
            spelled = self.pick([None, spelled])
            name = "beta" if spelled is None else name
            body = ["    if name is None:", "        name = 'beta'",
                    "    name = name.strip().lower()", f"    return TABLE{k}[name](u)"]
        elif form == "or_default":
            spelled = self.pick(["", spelled])
            name = "alpha" if not spelled else name
            body = ["    name = name or 'alpha'", "    name = name.strip().lower()",
                    f"    return TABLE{k}[name](u)"]
        elif form == "enumerate_display":
            body = ["    out = u * 0.0",
                    f"    for j, fn in enumerate(({alpha}, np.sin, {beta}), start=1):",
                    "        out = out + fn(u) / j", "    return out + 0.1 * j"]
        elif form == "module_list":
            body = ["    out = u * 0.0", f"    for j, fn in enumerate(FUNCS{k}):",
                    "        out = out + fn(u) * (1.0 + 0.5 * j)", "    return out"]
        else:  # local_list
            body = [f"    fns = [np.tanh, {alpha}, {beta}]", "    out = u * 0.0",
                    "    for fn in fns:", "        out = np.tanh(out + fn(u))", "    return out"]
        self.helpers += [f"def {helper}(u, name):"] + body + ["", ""]
        if form in ("enumerate_display", "module_list", "local_list"):
            spelled = None
        x = self._items(env, 1)[0]
        u, total = self.fresh_name("u"), self.fresh_name()
        self.emit(indent, f"{u} = {x}")
        inner = indent
        if self.draw(st.booleans()):
            self.emit(indent, f"for {self.fresh_name('t')} in {self.pick(['range(n)', 'range(2)'])}:")
            inner = indent + 1
            self.features.add("option_dispatch_loop")
        self.emit(inner, f"{u} = np.tanh(0.5 * {u} + 0.5 * {helper}({u}, {spelled!r}))")
        self.emit(indent, f"{total} = np.sum({u} * {u})")
        env[total] = Var((), 3.0, fresh=True)

    def family_object_totals(self, env, indent):
        """Objects made in a list, updated by a loop over it, totalled by a
        comprehension naming the loop's variable again; or a comprehension over a
        module-level generator (see the ``object_totals`` comment above)."""
        k = self.counter = self.counter + 1
        x, y = self._items(env, 2)
        total = self.fresh_name()
        if self.draw(st.booleans()):
            form = self.pick(["sum", "listed", "filtered", "pairs", "nested"])
            self.features.add("object_totals_generator_" + form)
            self._module_block([
                f"def _states{k}(u, m):", "    v = u * 0.0", "    for _ in range(m):",
                "        v = v - 0.2 * np.tanh(u)", "        u = u + 0.2 * v",
                "        yield u, v", "", ""])
            m = self.pick(["n", "3"])
            read = {
                "sum": f"sum(np.sum(a * b) for a, b in _states{k}({x}, {m}))",
                "listed": f"np.sum([np.sum(np.tanh(a)) for a, _ in _states{k}({x}, {m})])",
                "filtered": f"sum([np.sum(a) for a, b in _states{k}({x}, {m}) "
                            f"if np.sum(b) < 10.0])",
                "pairs": f"max([np.sum(a * {y}) for a, b in _states{k}({x}, {m})] + [0.0])",
                "nested": f"sum(np.sum(a * c) for a, _ in _states{k}({x}, 2) "
                          f"for c, _ in _states{k}(a, 2))",
            }[form]
            self.emit(indent, f"{total} = {read}")
            env[total] = Var((), 40.0, fresh=True)
            return
        made = self.pick(["display", "comprehension", "appended"])
        update = self.pick(["fields", "methods"])
        closing = self.pick(["sum_same", "sum_other", "listed", "max", "min"])
        timed = self.draw(st.booleans())
        last = not timed and self.draw(st.booleans())
        self.features.update({"object_totals_" + made, "object_totals_" + update,
                              "object_totals_" + closing})
        cls, parts = f"_Body{k}", self.fresh_name("parts")
        self.helpers += [f"class {cls}:", "    def __init__(self, pos, vel):",
                         "        self.pos = pos", "        self.vel = vel", "",
                         "    def drift(self, dt):",
                         "        self.pos = self.pos + dt * np.tanh(self.vel)", "",
                         "    def kick(self, dt):",
                         "        self.vel = self.vel - dt * np.tanh(self.pos)", "",
                         "    def energy(self):",
                         "        return np.sum(self.vel ** 2) + 0.1 * np.sum(self.pos)", "", ""]
        if made == "display":
            self.emit(indent, f"{parts} = [{cls}({x}, {y}), {cls}({y} * 0.5, {x}), "
                              f"{cls}({x} * {y}, {y})]")
        elif made == "comprehension":
            self.emit(indent, f"{parts} = [{cls}({x} * (j + 1.0), {y}) for j in range(3)]")
        else:
            j = self.fresh_name("j")
            self.emit(indent, f"{parts} = []")
            self.emit(indent, f"for {j} in range(3):")
            self.emit(indent + 1, f"{parts}.append({cls}({x} - 0.5 * {j}, {y} * {j}))")
        inner = indent
        if timed:
            self.emit(indent, f"for {self.fresh_name('t')} in range(n):")
            inner = indent + 1
        p = self.fresh_name("p")
        self.emit(inner, f"for {p} in {parts}:")
        if update == "fields":
            self.emit(inner + 1, f"{p}.vel = {p}.vel - 0.2 * np.tanh({p}.pos)")
            self.emit(inner + 1, f"{p}.pos = {p}.pos + 0.2 * np.tanh({p}.vel)")
        else:
            self.emit(inner + 1, f"{p}.kick(0.2)")
            self.emit(inner + 1, f"{p}.drift(0.2)")
        q = p if closing != "sum_other" else self.fresh_name("q")
        read = {
            "sum_same": f"sum(np.sum({q}.pos * {q}.vel) for {q} in {parts})",
            "sum_other": f"sum(np.sum({q}.pos * {q}.vel) for {q} in {parts})",
            "listed": f"np.mean([{q}.energy() for {q} in {parts}])",
            "max": f"max({q}.energy() for {q} in {parts})",
            "min": f"min(np.sum({q}.pos) for {q} in {parts})",
        }[closing]
        if last:
            read += f" + np.sum({p}.pos)"
            self.features.add("object_totals_last_item")
        self.emit(indent, f"{total} = {read}")
        env[total] = Var((), 40.0, fresh=True)

    def family_outside_object_lists(self, env, indent):
        """A list of the module's objects, or of (object, number) pairs, passed to
        ``f`` after ``n`` (Program.extra, never in ``wrt``), read by items, loops,
        ``enumerate``, its loop variable after the loop (see the
        ``outside_object_lists`` comment above)."""
        k = self.counter = self.counter + 1
        pairs = self.draw(st.booleans())
        acts = self.draw(st.booleans())  # each object holds a function
        self.features.add("outside_object_lists_" + ("pairs" if pairs else "objects"))
        if acts:
            self.features.add("outside_object_lists_act")
        passed = f"_pairs{k}" if pairs else f"_units{k}"  # makes the list f is given
        L = f"units{k}"
        self._module_block([
            f"class _Unit{k}:", "    def __init__(self):",
            "        self.h = np.array([0.1, -0.2, 0.3])", "        self.w = 0.5"] +
            (["        self.act = np.tanh"] if acts else []) + ["", "",
            f"UNIT{k} = _Unit{k}()", f"OTHER{k} = _Unit{k}()",
            "", "",  # (a list the module holds is refused as another path earlier)
            f"def {passed}():", f"    return [UNIT{k}, OTHER{k}]" if not pairs else
            f"    return [(UNIT{k}, 1.5), (OTHER{k}, 0.5)]", "", "",
            f"def _store_h{k}(v):", f"    UNIT{k}.h = np.tanh(v) * 2.0", "    return v", "", "",
            f"def _store_w{k}(v):", f"    UNIT{k}.w = float(np.sum(np.tanh(v))) * 0.3",
            "    return v", "", "",
            f"def _reset{k}():", f"    for obj in (UNIT{k}, OTHER{k}):",
            "        vars(obj).clear()", "        obj.__init__()", "", ""])
        at = next(i for i, line in enumerate(self.lines) if line.startswith("def f("))
        self.lines[at] = self.lines[at][:-2] + f", {L}):"
        self.extra.append(passed)

        def item(j):  # (the object, its weight) at place j
            return (f"{L}[{j}][0]", f"{L}[{j}][1]") if pairs else (f"{L}[{j}]", "1.0")
        o, wt, y, z = (self.fresh_name("unit"), self.fresh_name("wt"), self.fresh_name("y"),
                       self.fresh_name("z"))
        header = f"for {o}, {wt} in {L}:" if pairs else f"for {o} in {L}:"
        weight = wt if pairs else "1.0"
        form = self.pick(["read", "loop_read", "loop_variable_after",
                          "loop_variable_after_branch", "enumerated", "store_other_attribute",
                          "store_read_by_name", "store_then_path", "store_in_loop_then_path",
                          "loop_variable_after_store", "path_read_then_store",
                          "store_w_then_path"])
        self.features.add("outside_object_lists_" + form)
        x = self._items(env, 1)[0]
        mark = f"  {REFUSED_MARK} outside list path"
        (o0, w0), (o1, w1) = item(0), item(1)
        # a helper called in a comprehension is the lowering's (session 23's wrong
        # gradient went that way), called alone desugar's
        comprehended = self.draw(st.booleans())
        if comprehended:
            self.features.add("outside_object_lists_comprehended")

        def store(attribute, arg):
            return f"[_store_{attribute}{k}(v) for v in ({arg},)][0]" if comprehended else \
                f"_store_{attribute}{k}({arg})"
        inner = indent
        if form in ("read", "loop_read", "store_other_attribute", "store_read_by_name") and \
                self.draw(st.booleans()):
            self.emit(indent, f"{y} = 0.0")
            self.emit(indent, f"for {self.fresh_name('t')} in {self.pick(['range(n)', 'range(2)'])}:")
            inner = indent + 1
            self.features.add("outside_object_lists_loop")
        else:
            self.emit(indent, f"{y} = 0.0")
        if form == "read":
            self.emit(inner, f"{y} = {y} * 0.5 + np.sum({o0}.h * {x}) * {o1}.w * {w0}")
        elif form == "loop_read":
            self.emit(inner, header)
            self.emit(inner + 1, f"{y} = {y} * 0.5 + {weight} * np.sum({o}.h * {x})")
        elif form in ("loop_variable_after", "loop_variable_after_branch"):
            at_ = indent
            if form == "loop_variable_after_branch":  # (always true: |s| <= 1)
                self.emit(indent, "if s > -2.0:")
                at_ = indent + 1
            self.emit(at_, header)
            self.emit(at_ + 1, f"{z} = np.tanh({o}.h * {weight} + {x})")
            self.emit(indent, f"{y} = np.sum({o}.h * {z}) * {weight}")
        elif form == "enumerated":
            target = f"j{k}, ({o}, {wt})" if pairs else f"j{k}, {o}"
            self.emit(indent, f"for {target} in enumerate({L}):")
            self.emit(indent + 1, f"{y} = {y} + {weight} * (j{k} + 1) * np.sum({o}.h * {x})")
        elif form == "store_other_attribute":  # w stored, h read through the list
            self.emit(inner, f"{z} = {store('w', x)}")
            self.emit(inner, f"{y} = {y} * 0.5 + np.sum({o0}.h * {x}) + UNIT{k}.w * np.sum({z})")
        elif form == "store_read_by_name":  # h stored, read by the object's own name
            self.emit(inner, f"{z} = {store('h', x)}")
            self.emit(inner, f"{y} = {y} * 0.5 + np.sum(UNIT{k}.h * {z}) * {o1}.w")
        elif form == "store_then_path":  # the stored h read through the list: refused
            self.emit(indent, f"{z} = {store('h', x)}")
            self.emit(indent, f"{y} = np.sum({o0}.h * {x}) + np.sum({z}){mark}")
        elif form == "store_in_loop_then_path":
            self.emit(indent, f"for {self.fresh_name('t')} in range(2):")
            self.emit(indent + 1, f"{z} = {store('h', x + ' * ' + w0)}")
            self.emit(indent + 1, f"{y} = {y} + np.sum({o0}.h * {z}){mark}")
        elif form == "loop_variable_after_store":
            self.emit(indent, header)
            self.emit(indent + 1, f"{z} = {store('h', x + ' * ' + weight)}")
            self.emit(indent, f"{y} = np.sum({o}.h * {z}){mark}")
        elif form == "path_read_then_store":  # read first, then stored: refused too
            self.emit(indent, header)
            self.emit(indent + 1, f"{y} = {y} + {weight} * np.sum({o}.h * {x}){mark}")
            self.emit(indent, f"{z} = {store('h', x)}")
            self.emit(indent, f"{y} = {y} + np.sum(UNIT{k}.h * {z})")
        else:  # store_w_then_path
            self.emit(indent, f"{z} = {store('w', x)}")
            self.emit(indent, f"{y} = {o0}.w * np.sum({x}) + np.sum({z}){mark}")
        total = self.fresh_name()
        self.emit(indent, f"{total} = np.tanh({y})")
        env[total] = Var((), 1.0, fresh=True)

    def family_rebound_iterables(self, env, indent):
        """A loop over a container whose body binds the container's name again
        (see the ``rebound_iterables`` comment above)."""
        k = self.counter = self.counter + 1
        x, p, q, r = self._items(env, 4)
        ws, y, w, v, j = (self.fresh_name("ws"), self.fresh_name("y"), self.fresh_name("w"),
                          self.fresh_name("v"), self.fresh_name("j"))
        kind = self.pick(["list", "tuple", "dict"])
        self.features.add(f"rebound_iterables_{kind}")
        three = self.draw(st.booleans())
        items = [p, q, r] if three else [p, q]
        if kind == "dict":
            keys = ["'p'", "'q'", "'r'"][:len(items)]
            self.emit(indent, f"{ws} = {{{', '.join(f'{a}: {b}' for a, b in zip(keys, items))}}}")
            header, read = self.pick([
                (f"for {j}, {w} in {ws}.items():", w),
                (f"for {j}, {w} in list({ws}.items()):", w),
                (f"for {w} in {ws}.values():", w),
                (f"for {j} in {ws}:", f"{ws}[{j}]")])
        else:
            opening, closing = ("[", "]") if kind == "list" else ("(", ")")
            self.emit(indent, f"{ws} = {opening}{', '.join(items)}{closing}")
            bare = "reversed" not in self.shadowing  # (no name bound reversed yet)
            self.shadowing.add("reversed")  # (nor later: fresh_name skips it)
            header, read = self.pick([
                (f"for {w} in {ws}:", w),
                (f"for {w} in {ws}[1:]:", w),
                (f"for {w} in {ws}[::-1]:", w),
                (f"for {w} in list({ws}):", w),
                (f"for {w} in tuple({ws}):", w),
                (f"for {w} in {ws}[:2]:", w),
                (f"for {j}, {w} in enumerate({ws}):", f"{w} * ({j} + 1)"),
                (f"for {j}, {w} in enumerate({ws}[:-1]):", f"{w} * ({j} + 1)"),
                (f"for {w} in {'reversed(' + ws + ')' if bare else ws + '[::-1]'}:", w),
                (f"for {j}, {w} in enumerate({ws}[1:]):", f"{w} * ({j} + 1)"),
                (f"for {w}, {v} in zip({ws}, {ws}[::-1]):", f"{w} * {v}"),
                (f"for {w}, {v} in zip({ws}[1:], {ws}[:-1]):", f"{w} * {v}"),
                (f"for {j} in range(len({ws})):", f"{ws}[{j}]")])
        self.features.add("rebound_iterables_header_" + header.split(" in ", 1)[1].split("(")[0]
                          .replace(ws, "name").rstrip(":"))
        # the body's new container: same structure or not, each item bounded
        new = [f"np.tanh({read}) * 0.5", f"{x} * 0.9"] + ([f"np.tanh({read} + {x})"]
                                                         if three else [])
        how, longer = None, False
        if kind == "dict":
            # (a write into the dict in a loop over list(d.items()), a copy, is the
            # lowering's refusal 'may change the rows it has still to visit')
            how = self.pick(["display"] + (["item"] if "in list(" not in header else []))
            rebind = f"{ws} = {{{', '.join(f'{a}: {b}' for a, b in zip(keys, new))}}}" \
                if how == "display" else f"{ws}[{self.pick(keys)}] = {new[0]}"
            self.features.add(f"rebound_iterables_{how}")
        else:
            how = self.pick(["display", "longer", "comprehension", "helper", "tuple"] +
                            (["item"] if kind == "list" else []))
            self.features.add(f"rebound_iterables_{how}")
            opening, closing = ("[", "]") if kind == "list" else ("(", ")")
            if how == "longer" and "range(len(" not in header:
                longer = True
                rebind = f"{ws} = {opening}{', '.join(new + [x])}{closing}"
            elif how == "comprehension":
                rebind = f"{ws} = {opening if kind == 'list' else 'tuple('}np.tanh(e_ * 0.8) " \
                         f"for e_ in {ws}{closing}"
            elif how == "helper":
                helper = f"_renewed{k}"
                self.helpers += [f"def {helper}(xs, z):",
                                 f"    return {'[' if kind == 'list' else 'tuple('}"
                                 f"np.tanh(e_ + z) for e_ in xs{']' if kind == 'list' else ')'}",
                                 "", ""]
                rebind = f"{ws} = {helper}({ws}, {x} * 0.1)"
            elif how == "tuple":
                rebind = f"{ws}, {y} = {opening}{', '.join(new)}{closing}, {y} * 0.9"
            elif how == "item":  # the list changed in place: a copy keeps its items
                rebind = f"{ws}[{self.pick(list(range(len(items))))}] = {new[0]}"
            else:
                rebind = f"{ws} = {opening}{', '.join(new)}{closing}"
        inner = indent
        self.emit(indent, f"{y} = 0.0")
        # (a container changing its length in a loop of n trips or on one path of an
        # if, and one a helper or a tuple(...) comprehension makes again on one path
        # of an if in such a loop, are the lowering's documented refusals: 'changes its length or keys inside a
        # loop', 'of a different length or keys on the two paths', 'on one path of
        # this if')
        if not longer and self.draw(st.booleans()):
            self.features.add("rebound_iterables_time_loop")
            self.emit(indent, f"for {self.fresh_name('t')} in range({self.pick(['n', '2'])}):")
            inner = indent + 1
        self.emit(inner, header)
        self.emit(inner + 1, f"{y} = {y} * 0.5 + np.sum(np.tanh({read}) * {x})")
        if not longer and not (how in ("helper", "comprehension") and inner > indent) and \
                self.draw(st.booleans()):
            self.features.add("rebound_iterables_branch")
            self.emit(inner + 1, f"if {y} > -100.0:")  # (always: |y| < 2 * 3)
            self.emit(inner + 2, rebind)
        else:
            self.emit(inner + 1, rebind)
        total = self.fresh_name()
        first = f"{ws}['p']" if kind == "dict" else f"{ws}[0]"
        self.emit(indent, f"{total} = np.tanh({y}) + np.sum({first}) * 0.1")
        env[total] = Var((), 1.5, fresh=True)

    def family_rebound_roots(self, env, indent):
        """Views and aliases taken before their root is bound again in a loop (see
        the ``rebound_roots`` comment above)."""
        x, z = self._items(env, 2)
        U, u, V, y, t = (self.fresh_name("U"), self.fresh_name("u"), self.fresh_name("V"),
                         self.fresh_name("y"), self.fresh_name("t"))
        form = self.pick(["alias_after", "copied_root", "array_root", "transposed", "reshaped",
                          "in_place_root", "branch_view", "carried", "swapped",
                          "next_trip", "asarray_root"])
        self.features.add(f"rebound_roots_{form}")
        trips = self.pick(["n + 1", "3"])  # (at least one trip: u is read after it)
        self.emit(indent, f"{U} = {x} * 1.0")
        self.emit(indent, f"{y} = 0.0")
        if form == "transposed":
            self.emit(indent, f"{U} = np.outer({U}, {z}) * 0.5")
        elif form == "reshaped":
            self.emit(indent, f"{U} = np.concatenate([{U}, {z}])")
        elif form == "carried":
            self.emit(indent, f"{u} = {U}")
        elif form == "swapped":
            self.emit(indent, f"{V} = {z} * 2.0")
        self.emit(indent, f"for {t} in range({trips}):")
        b = indent + 1
        if form == "alias_after":  # m = theta; m[0] *= ..; theta = m + ..; theta[1] = ..
            self.emit(b, f"{u} = {U}")
            self.emit(b, f"{u}[0] = {u}[0] * 0.5")
            self.emit(b, f"{U} = np.tanh({u} + 0.1)")
            self.emit(b, f"{U}[1] = 0.5 * s")
            self.emit(indent, f"{y} = np.sum({u} ** 2) + np.sum({U})")
        elif form in ("copied_root", "array_root"):
            self.emit(b, f"{u} = {U}[:2]")
            self.emit(b, f"{U} = {U}.copy()" if form == "copied_root" else f"{U} = np.array({U})")
            self.emit(b, f"{U}[0] = np.tanh({U}[0] * 0.5 + s)")
            self.emit(b, f"{y} = {y} * 0.5 + np.sum({u} * {U}[:2])")
        elif form == "transposed":
            self.emit(b, f"{u} = {U}.T")
            self.emit(b, f"{U} = np.tanh({U} * 0.9)")
            self.emit(b, f"{U}[0, 1] = 0.3 * s")
            self.emit(b, f"{y} = {y} * 0.5 + np.sum({u} * {U})")
        elif form == "reshaped":
            self.emit(b, f"{u} = {U}.reshape(2, 3)")
            self.emit(b, f"{U} = np.tanh({U} * 1.1)")
            self.emit(b, f"{U}[0] = 0.7 * s")
            self.emit(b, f"{u}[1, 0] = {u}[1, 0] * 0.5")
            self.emit(b, f"{y} = {y} * 0.5 + np.sum({u} ** 2)")
        elif form == "in_place_root":  # the view sees the root's in-place update
            self.emit(b, f"{u} = {U}[1:]")
            self.emit(b, f"{U} *= 0.5")
            self.emit(b, f"{U}[0] = np.tanh({U}[0] + s)")
            self.emit(b, f"{y} = {y} * 0.5 + np.sum({u} ** 2)")
        elif form == "branch_view":  # the view of trip 0 read in trip 1
            self.emit(b, f"if {t} % 2 == 0:")
            self.emit(b + 1, f"{u} = {U}[1:]")
            self.emit(b, f"{U} = np.tanh({U} * 1.5)")
            self.emit(b, f"{U}[2] = 0.25 * s")
            self.emit(b, f"{y} = {y} * 0.5 + np.sum({u} ** 2)")
        elif form == "carried":  # the previous trip's array under another name
            self.emit(b, f"{U} = {U} * 0.9")
            self.emit(b, f"{U}[0] += 0.1 * s")
            self.emit(b, f"{y} = {y} * 0.5 + np.sum({u} * {U})")
            self.emit(b, f"{u} = {U}")
        elif form == "swapped":
            self.emit(b, f"{u} = {U}[1:]")
            self.emit(b, f"{U}, {V} = {V}, {U}")
            self.emit(b, f"{U}[1] = 0.5 * s")
            self.emit(b, f"{y} = {y} * 0.5 + np.sum({u} ** 2) + np.sum({V}) * 0.1")
        elif form == "next_trip":  # refused: taken again of the new root it was wrong
            self.emit(b, f"if {t} > 0:")
            self.emit(b + 1, f"{y} = {y} * 0.5 + np.sum({u} ** 2)")
            self.emit(b, f"{u} = {U}[1:]")
            self.emit(b, f"{u} += 0.5  {REFUSED_MARK} view across a rebinding")
            self.emit(b, f"{U} = np.tanh({U} * 2.0)")
            self.emit(b, f"{U}[0] = 0.5 * s")
        else:  # asarray_root: np.asarray(U) is U, whose write changes the view
            self.emit(b, f"{u} = {U}[1:]")
            self.emit(b, f"{U} = np.asarray({U})")
            self.emit(b, f"{U}[1] = 0.5 * s  {REFUSED_MARK} view kept by asarray")
            self.emit(b, f"{y} = {y} * 0.5 + np.sum({u} ** 2)")
        total = self.fresh_name()
        self.emit(indent, f"{total} = np.tanh({y}) + np.sum({U}) * 0.1")
        env[total] = Var((), 2.0, fresh=True)

    def family_unrun_loop_reads(self, env, indent):
        """A loop's variable read after the loop outside a block that may not run
        (see the ``unrun_loop_reads`` comment above)."""
        k = self.counter = self.counter + 1
        x, p, q = self._items(env, 3)
        y, o, L = self.fresh_name("y"), self.fresh_name("layer"), self.fresh_name("layers")
        cls = f"_Layer{k}"
        self.helpers += [f"class {cls}:", "    def __init__(self, w, b):",
                         "        self.w = w", "        self.b = b", "",
                         "    def forward(self, h):", "        return np.tanh(self.w * h + self.b)",
                         "", "    def scale(self):", "        return self.b * 0.5", "", ""]
        loop = self.pick(["objects", "arrays", "range", "body_name"])
        read = self.pick(["field", "method", "list_after"]) if loop == "objects" else "plain"
        block = self.pick(["if", "time_loop", "time_loop_branch"])
        self.features.add(f"unrun_loop_reads_{loop}_{read}_{block}")
        # y reads every parameter wrt may name, and the return reads y's sum: the read
        # after the loop is one the gradient needs (a read it drops keeps its check
        # since dead_primal's a4c4c6d; that is tested where other families leave one)
        self.emit(indent, f"{y} = np.tanh({x} + a + B[0] + c[0] + M[0] + s)")
        if loop == "objects":
            self.emit(indent, f"{L} = [{cls}({p}, {q}), {cls}({q} * 0.5, {p})]")
            header = f"for {o} in {L}:"
            body = f"{y} = {o}.forward({y})"
            after = {"field": f"{o}.b",
                     "method": self.pick([f"{o}.forward({y})", f"{o}.scale()"]),
                     "list_after": f"{o}.b + {L}[0].b"}[read]
        elif loop == "arrays":
            self.emit(indent, f"{L} = [{p}, {q} * 0.5]")
            header = f"for {o} in {L}:"
            body = f"{y} = np.tanh({y} * {o} + 0.1)"
            after = o
        elif loop == "range":
            header = f"for {o} in range(3):"
            body = f"{y} = np.tanh({y} * 0.9 + {p} * {o})"
            after = f"{o} * 0.2"
        else:
            header = f"for j{k} in range(2):"
            body = f"{o} = np.tanh({y} * {p} + j{k})"
            after = o
        if block == "if":
            self.emit(indent, f"if n > {self.pick([0, 1, 2])}:")
            self.emit(indent + 1, header)
            self.emit(indent + 2, body)
            self.emit(indent + 2, f"{y} = np.tanh({y})")
            line_indent = indent
        elif block == "time_loop":
            self.emit(indent, f"for t{k} in range(n):")
            self.emit(indent + 1, header)
            self.emit(indent + 2, body)
            self.emit(indent + 2, f"{y} = np.tanh({y})")
            line_indent = indent
        else:  # the inner loop on even trips, read on every trip (bound in trip 0)
            self.emit(indent, f"for t{k} in range(n):")
            self.emit(indent + 1, f"if t{k} % 2 == 0:")
            self.emit(indent + 2, header)
            self.emit(indent + 3, body)
            self.emit(indent + 3, f"{y} = np.tanh({y})")
            line_indent = indent + 1
        mark = f"  {UNBOUND_MARK}"
        self.emit(line_indent, f"{y} = np.tanh({y} * ({after}) + 0.1){mark}")
        total = self.fresh_name()
        self.emit(indent, f"{total} = np.sum({y})")
        env[total] = Var((), 3.0, fresh=True)
        self.read_at_return.append(total)

    def family_tuple_lists(self, env, indent):
        """An episode buffer (see the ``tuple_lists`` comment above): tuples of 2 to 4
        positions (arrays, floats, ints) appended in a loop of run-time length, read
        in it and after it, discounted returns inserted at the front; or a first
        read the compiler does not split, refused at its line (REFUSED_MARK)."""
        k = self.counter = self.counter + 1
        self.shadowing.add("reversed")  # (a local named so would hide the builtin)
        traj, h, acc = self.fresh_name("traj"), self.fresh_name("h"), self.fresh_name()
        width = self.draw(st.integers(2, 4))
        kinds = self.draw(st.permutations(
            ["array"] + [self.pick(["array", "float", "int"]) for _ in range(width - 1)]))
        arrays = [j for j, kind in enumerate(kinds) if kind == "array"]
        refused = self.pick([None] * 12 + ["zipped", "position_variable", "append_written",
                                          "item_written", "loop_variable_written"])
        loop = self.pick(["range_n", "while", "range_derived", "episodes"])
        start = self.pick(["empty", "display", "append"])
        self.features.add(f"tuple_lists_{loop}")
        if refused:
            self.features.add(f"tuple_lists_refused_{refused}")

        def term(parts):
            """A bounded number from one tuple's items ``parts`` (texts)."""
            pieces = [f"np.sum({p} * c[0])" if kind == "array" else
                      p if kind == "float" else f"0.1 * {p}" for p, kind in zip(parts, kinds)]
            return f"np.tanh({' + '.join(pieces)})"

        def targets(prefix):
            names = [self.fresh_name(prefix) for _ in kinds]
            return names, ", ".join(names)

        if loop == "episodes":  # the buffer made again in each trip of an outer loop
            ep = self.fresh_name("ep")
            self.emit(indent, f"{acc} = 0.0")
            self.emit(indent, f"for {ep} in range(2):")
            indent += 1
        else:
            self.emit(indent, f"{acc} = 0.0")
        x0 = self._items(env, 1)[0]
        self.emit(indent, f"{h} = {x0}")
        first = [h if kind == "array" else "s" if kind == "float" else "0" for kind in kinds]
        if start == "display":
            self.emit(indent, f"{traj} = [({', '.join(first)})]")
        else:
            self.emit(indent, f"{traj} = []")
            if start == "append":
                self.emit(indent, f"{traj}.append(({', '.join(first)}))")
        nonempty = start != "empty"
        t = self.fresh_name("t")
        if loop == "while":
            self.emit(indent, f"{t} = 0")
            self.emit(indent, f"while {t} < n:")
        elif loop == "range_derived":
            m = self.fresh_name("m")
            self.emit(indent, f"{m} = {self.pick(['n + 1', 'n - 1', '2 * n'])}")
            self.emit(indent, f"for {t} in range({m}):")
        else:
            self.emit(indent, f"for {t} in range(n):")
        inner = indent + 1
        body_env = {name: Var(v.shape, v.bound, False, v.index) for name, v in env.items()}
        body_env[h] = Var((3,), 1.0)

        def read_in_loop():
            """``h`` updated from an item the list holds already."""
            j = self.pick(arrays)
            # (t: one item at least before the loop and per trip)
            index = self.pick(["-1", f"len({traj}) - 1", t])
            self.features.add("tuple_lists_read_in_loop")
            self.emit(inner, f"{h} = np.tanh({h} * 0.5 + {traj}[{index}][{j}] * s)")

        # (a read the pass does not split is refused at the list's first read)
        interleave = nonempty and refused not in ("zipped", "position_variable") and \
            self.draw(st.booleans())
        if interleave and self.draw(st.booleans()):
            read_in_loop()
        self.emit(inner, f"{h} = np.tanh({h} @ M * 0.5 + {self._items(body_env, 1)[0]})")

        def items():
            out = []
            for j, kind in enumerate(kinds):
                if kind == "array" and refused == "append_written" and j == arrays[0]:
                    out.append(h)  # (the array written after the append)
                elif kind == "array":
                    out.append(self.pick([h, f"{h} * s", self._items(body_env, 1)[0]]))
                elif kind == "float":
                    out.append(self._items(body_env, 1, ())[0])
                else:
                    out.append(self.pick([t, f"{t} % 2", f"2 * {t} + 1"]))
            return f"({', '.join(out)})"

        self.emit(inner, f"{traj}.append({items()})")
        if self.draw(st.integers(0, 2)) == 0:
            self.features.add("tuple_lists_two_appends")
            self.emit(inner, f"if {t} % 2 == {self.pick([0, 1])}:")
            self.emit(inner + 1, f"{traj}.append({items()})")
        if refused == "append_written":  # the array appended is the list's item: NumPy
            # changes it there too
            self.emit(inner, f"{h} += 0.1 * np.tanh({h})  {REFUSED_MARK} tuple item written")
        if interleave:
            if self.draw(st.booleans()):
                read_in_loop()
            else:
                self.emit(inner, f"{acc} = {acc} * 0.9 + 0.1 * "
                                 f"{term([f'{traj}[-1][{i}]' for i in range(width)])}")
        if loop == "while":
            self.emit(inner, f"{t} = {t} + 1")
        elif self.draw(st.integers(0, 4)) == 0:
            self.emit(inner, f"if {t} == {self.draw(st.integers(1, 3))}:")
            self.emit(inner + 1, "break")
        # ------------------------------------------------------------ reads after the loop
        if refused == "zipped":
            names, text = targets("p")
            w = self.fresh_name("w")
            self.emit(indent, f"for ({text}), {w} in zip({traj}, [0.5] * len({traj})):  "
                              f"{REFUSED_MARK} tuple list read")
            self.emit(indent + 1, f"{acc} = {acc} * 0.9 + {w} * {term(names)}")
        elif refused in ("item_written", "loop_variable_written"):
            j, x = self.pick(arrays), self.fresh_name("x")
            if refused == "item_written":
                u = self.fresh_name("u")
                self.emit(indent, f"for {u} in range(len({traj})):")
                self.emit(indent + 1, f"{x} = {traj}[{u}][{j}]")
            else:
                names, text = targets("p")
                x = names[j]
                self.emit(indent, f"for {text} in {self.pick([traj, f'reversed({traj})'])}:")
            self.emit(indent + 1, f"{x} *= 0.5  {REFUSED_MARK} tuple item written")
            self.emit(indent + 1, f"{acc} = {acc} + np.sum({x})")
        elif refused == "position_variable":
            u = self.fresh_name("u")
            self.emit(indent, f"for {u} in range(len({traj})):")
            self.emit(indent + 1, f"{acc} = {acc} + np.tanh(np.sum({traj}[{u}][{u} % {width}]))"
                                  f"  {REFUSED_MARK} tuple list read")
        readers = ["forward", "reversed", "slice_reversed", "enumerate", "whole_item",
                   "index", "assigned", "helper_list", "helper_item", "comprehension",
                   "returns", "length"] + (["ends"] if nonempty else [])
        for reader in self.draw(st.lists(st.sampled_from(readers), min_size=1, max_size=3,
                                         unique=True)):
            self.features.add(f"tuple_lists_{reader}")
            self._tuple_list_read(reader, traj, kinds, term, targets, acc, indent, k, nonempty)
        if loop == "episodes":
            indent -= 1
        total = self.fresh_name()
        self.emit(indent, f"{total} = {acc}")
        env[total] = Var((), 60.0, fresh=True)

    def _tuple_list_read(self, reader, traj, kinds, term, targets, acc, indent, k, nonempty):
        """One read of the tuple list ``traj`` after the loop growing it (family_tuple_lists)."""
        width = len(kinds)
        inner = indent + 1
        if reader in ("forward", "reversed", "slice_reversed"):
            names, text = targets("p")
            iterable = {"forward": traj, "reversed": f"reversed({traj})",
                        "slice_reversed": f"{traj}[::-1]"}[reader]
            self.emit(indent, f"for {text} in {iterable}:")
            self.emit(inner, f"{acc} = {acc} * 0.9 + {term(names)}")
        elif reader == "enumerate":
            i = self.fresh_name("i")
            # (a start: counted from 0 by the lowering, added by desugar; read once)
            start = self.pick(["", "", ", 1", ", start=-2", f", len({traj})", ", n - 1"])
            of = self.pick([traj, traj, f"reversed({traj})"])
            self.features.add("tuple_lists_enumerate" + ("_start" if start else "") +
                              ("_reversed" if of != traj else ""))
            if self.draw(st.booleans()):
                names, text = targets("p")
                self.emit(indent, f"for {i}, ({text}) in enumerate({of}{start}):")
            else:
                step = self.fresh_name("step")
                names = [f"{step}[{j}]" for j in range(width)]
                self.emit(indent, f"for {i}, {step} in enumerate({of}{start}):")
            self.emit(inner, f"{acc} = {acc} + 0.1 * {i} * {term(names)}")
        elif reader == "whole_item":  # the loop variable is the tuple
            step = self.fresh_name("step")
            of = self.pick([traj, f"{traj}[::-1]", f"reversed({traj})"])
            self.emit(indent, f"for {step} in {of}:")
            if self.draw(st.booleans()):
                names, text = targets("q")
                self.emit(inner, f"{text} = {step}")
            else:
                names = [f"{step}[{j}]" for j in range(width)]
            self.emit(inner, f"{acc} = {acc} * 0.9 + {term(names)}")
        elif reader in ("index", "assigned", "helper_item"):
            u = self.fresh_name("u")
            stop = self.pick([f"len({traj})", f"len({traj}) - 1"])
            self.emit(indent, f"for {u} in range({stop}):")
            if reader == "index":
                names = [f"{traj}[{u}][{self.pick([j, j - width])}]" for j in range(width)]
                self.emit(inner, f"{acc} = {acc} + {term(names)}")
            elif reader == "assigned":
                if self.draw(st.booleans()):
                    names, text = targets("q")
                    self.emit(inner, f"{text} = {traj}[{u}]")
                else:
                    q = self.fresh_name("q")
                    self.emit(inner, f"{q} = {traj}[{u}]")
                    names = [f"{q}[{j}]" for j in range(width)]
                self.emit(inner, f"{acc} = {acc} + {term(names)}")
            else:
                helper = f"_score{k}"
                self.helpers += [f"def {helper}(p, c):",
                                 f"    return {term([f'p[{j}]' for j in range(width)])}", "", ""]
                self.emit(inner, f"{acc} = {acc} + {helper}({traj}[{u}], c)")
        elif reader == "helper_list":
            helper = f"_walk{k}"
            self.helpers += [f"def {helper}(rows, c, g):", "    out = 0.0",
                             f"    for {', '.join(f'p{j}' for j in range(width))} in rows:",
                             f"        out = g * out + {term([f'p{j}' for j in range(width)])}",
                             "    return out", "", ""]
            self.emit(indent, f"{acc} = {acc} + {helper}({traj}, c, 0.9)")
        elif reader == "comprehension":
            names, text = targets("p")
            self.emit(indent, f"{acc} = {acc} + sum([{term(names)} for {text} in {traj}])")
        elif reader == "length":
            self.emit(indent, f"{acc} = {acc} + 0.1 * len({traj})")
        elif reader == "ends":
            index = self.pick(["0", "-1", f"len({traj}) // 2", f"len({traj}) - 1"])
            picked = term([f"{traj}[{index}][{i}]" for i in range(width)])
            last = term([f"{traj}[-1][{i}]" for i in range(width)])
            self.emit(indent, f"{acc} = {acc} + {picked} * {last}")
        else:  # returns: discounted, inserted at the front (REINFORCE)
            rets, G = self.fresh_name("rets"), self.fresh_name("G")
            names, text = targets("p")
            self.emit(indent, f"{rets} = []")
            self.emit(indent, f"{G} = 0.0")
            self.emit(indent, f"for {text} in reversed({traj}):")
            self.emit(inner, f"{G} = {term(names)} + 0.9 * {G}")
            self.emit(inner, f"{rets}.insert(0, {G})")
            # (the mean of no returns is nan)
            form = self.pick(["sum", "items", "array"] +
                             (["first", "normalised"] if nonempty else []))
            self.features.add(f"tuple_lists_returns_{form}")
            if form == "sum":
                self.emit(indent, f"{acc} = {acc} + 0.1 * sum({rets}) + len({rets})")
            elif form == "first":
                self.emit(indent, f"{acc} = {acc} + {rets}[0] * {rets}[-1]")
            elif form == "items":
                u = self.fresh_name("u")
                arrays = [j for j, kind in enumerate(kinds) if kind == "array"]
                self.emit(indent, f"for {u} in range(len({rets})):")
                self.emit(inner, f"{acc} = {acc} + 0.1 * {rets}[{u}] * "
                                 f"np.sum({traj}[{u}][{self.pick(arrays)}])")
            elif form == "array":
                self.emit(indent, f"{acc} = {acc} + 0.1 * np.sum(np.array({rets}) ** 2)")
            else:
                self.emit(indent, f"{rets} = np.array({rets})")
                self.emit(indent, f"{rets} = {rets} - np.mean({rets})")
                self.emit(indent, f"{acc} = {acc} + np.sum({rets} * {rets}) * 0.1")

    def update(self, env, name, indent):
        """Rebind carried variable ``name`` keeping its shape and bound."""
        v = env[name]
        form = self.draw(st.integers(0, 3))
        t, b = self.expr_of(env, v.shape, self.draw(st.integers(1, 3)))
        if form == 0:
            self.emit(indent, f"{name} = np.tanh({t})")
        elif form == 1:
            self.emit(indent, f"{name} = 0.5 * {name} + 0.5 * np.sin({t})")
        elif form == 2:
            self.emit(indent, f"{name} = {name} + 0.1 * np.tanh({t})")
        else:
            self.emit(indent, f"{name} = {name} * np.cos({t})")
        # keep the bound the loop-invariant one chosen at loop entry
        v.fresh = True

    def condition(self, env, index):
        choice = self.draw(st.integers(0, 2))
        if choice == 0 and index is not None:
            return f"{index} % 2 == {self.pick([0, 1])}"
        if choice == 1:
            return f"s > {self.pick(['0.0', '0.3', '-0.4'])}"
        t, _, _ = self.expr(env, 1)
        return f"np.sum({t}) > {self.pick(['0.0', '0.2', '-0.1'])}"

    def loop(self, env, indent, level):
        """A loop carrying one to three variables; returns nothing, updates env."""
        candidates = sorted(k for k, v in env.items()
                            if not v.index and ((k in SHAPES and k != "M") or
                                                   (k not in PARAMS and v.shape in FAMILY)))
        carried = self.draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=3,
                                     unique=True))
        for k in carried:  # bound valid at every iteration (each update grows it <= 0.1)
            env[k].bound = max(env[k].bound, 1.0) + 2.0
        kind = self.pick(["range_n", "range_lit", "range3", "rows", "while"] if level == 0
                         else ["range_lit", "range_n", "rows"])
        index = f"t{level}" if level else "t"
        rows_of = None
        if kind == "range_n":
            self.emit(indent, f"for {index} in range(n):")
        elif kind == "range_lit":
            self.emit(indent, f"for {index} in range({self.draw(st.integers(0, 3))}):")
        elif kind == "range3":
            start, step = self.draw(st.integers(0, 1)), self.draw(st.integers(1, 2))
            self.emit(indent, f"for {index} in range({start}, n + 1, {step}):")
            self.features.add("range3")
        elif kind == "rows":
            two_d = sorted(k for k, v in env.items() if v.shape == (2, 3) and k not in carried)
            if not two_d:
                self.emit(indent, f"for {index} in range(n):")
                kind = "range_n"
            else:
                rows_of = self.pick(two_d)
                index = f"row{level}"
                self.emit(indent, f"for {index} in {rows_of}:")
                self.features.add("rows")
        else:
            counter = f"k{level}"
            self.emit(indent, f"{counter} = 0")
            self.emit(indent, f"while {counter} < n:")
            index = counter
            self.features.add("while")
        self.features.add("loop")
        if level:
            self.features.add("nested")
        body_env = {k: Var(v.shape, v.bound, v.fresh, v.index) for k, v in env.items()}
        for k in carried:
            body_env[k].fresh = False  # may alias a parameter on the first trip
        if rows_of is not None:
            body_env[index] = Var((3,), env[rows_of].bound, index=True)
        inner = indent + 1
        # temporaries, then the carried updates, optionally under an if
        for _ in range(self.draw(st.integers(0, 2))):
            self.assign(body_env, inner)
        if rows_of is None and kind != "while" and self.draw(st.booleans()):
            name = self.fresh_name()
            self.emit(inner, f"{name} = 0.1 * {index} + s")
            body_env[name] = Var((), 1.0 + 0.1 * 12, fresh=False)
        for k in carried:
            if self.draw(st.integers(0, 3)) == 0:
                self.emit(inner, f"if {self.condition(body_env, index if kind != 'rows' else None)}:")
                was_fresh = body_env[k].fresh
                self.update(body_env, k, inner + 1)
                if self.draw(st.booleans()):
                    self.emit(inner, "else:")
                    self.update(body_env, k, inner + 1)
                else:
                    body_env[k].fresh = was_fresh
                self.features.add("if")
            else:
                self.update(body_env, k, inner)
        if level == 0 and self.draw(st.integers(0, 3)) == 0:
            self.loop(body_env, inner, level + 1)
        if self.draw(st.integers(0, 4)) == 0:
            self.mutate({k: v for k, v in body_env.items() if k in carried and v.fresh}, inner, in_loop=True)
        if kind == "while":
            self.emit(inner, f"{index} = {index} + 1")
        if kind in ("range_n", "range3", "while") and self.draw(st.integers(0, 4)) == 0:
            self.emit(inner, f"if {index} == {self.draw(st.integers(1, 3))}:")
            self.emit(inner + 1, "break")
            self.features.add("break")
        for k in carried:  # the bound chosen at entry holds after the loop
            env[k].fresh = env[k].fresh and body_env[k].fresh


#: the families written as statements of their own (fft is written inside expressions),
#: the pending ones too (a program writes them only when asked, see programs())
STATEMENT_FAMILIES = tuple(sorted((FAMILIES | PENDING_FAMILIES | set(REQUESTED_FAMILIES) |
                                    {"repeated_items"}) - {"fft"}))


@st.composite
def programs(draw, max_statements=6, families=FAMILIES, require=None):
    """A :class:`Program`: source text of ``def f(a, B, c, s, M, n)``, a seed, n and wrt.

    ``families``: the statement families written (FAMILIES by default; add a
    name of PENDING_FAMILIES to write it too); ``require``: a family the
    program's first statement belongs to."""
    g = _Gen(draw, families)
    env = {k: Var(SHAPES[k], 1.0) for k in SHAPES}
    g.emit(0, "import numpy as np")
    g.emit(0, "")
    g.emit(0, "")
    g.emit(0, f"def f({', '.join(PARAMS)}):")
    statement_families = [f for f in STATEMENT_FAMILIES if f in families]
    if require is not None:
        g.family_statement(env, 1, require)
    for _ in range(draw(st.integers(1, max_statements))):
        # two draws in eight are a family statement (eight families share them)
        kind = draw(st.integers(0, 7 if statement_families else 5))
        if kind >= 6:
            # one family statement in four is a hunting family (each is also fuzzed on
            # its own, test_fuzz.py), so the older families keep most of their share
            hunting = [f for f in statement_families if f in HUNTING_FAMILIES]
            older = [f for f in statement_families if f not in HUNTING_FAMILIES]
            pool = hunting if hunting and (not older or draw(st.integers(0, 3)) == 0) \
                else older
            g.family_statement(env, 1, draw(st.sampled_from(pool)))
        elif kind <= 1:
            g.assign(env, 1)
        elif kind == 2:
            if not g.mutate(env, 1):
                g.assign(env, 1)
        elif kind == 3 and draw(st.booleans()):  # a branch rebinding variables
            names = sorted(k for k, v in env.items()
                           if not v.index and k not in ("M", "n") and v.shape in FAMILY)
            k = draw(st.sampled_from(names))
            g.emit(1, f"if {g.condition(env, None)}:")
            was_fresh = env[k].fresh
            g.update(env, k, 2)
            if draw(st.booleans()):
                g.emit(1, "else:")
                g.update(env, k, 2)
            else:
                env[k].fresh = was_fresh
            g.features.add("if")
        else:
            g.loop(env, 1, 0)
    # the result reads the most recent variables (and maybe one more)
    local = [k for k in env if k not in PARAMS]
    picks = local[-2:] if local else []
    extra = draw(st.sampled_from(sorted(k for k in env if k != "n" and k != "M")))
    terms = []
    for k in picks + [extra] + [k for k in g.read_at_return if k not in picks + [extra]]:
        terms.append(f"np.sum({k})" if env[k].shape != () else k)
    g.emit(1, g.return_statement(terms))
    lines = g.lines[:3] + g.helpers + g.lines[3:]  # helpers after `import numpy as np`
    source = "\n".join(lines) + "\n"
    wrt = tuple(draw(st.lists(st.sampled_from(FLOAT_PARAMS), min_size=1, max_size=3,
                              unique=True)))
    return Program(source, draw(st.integers(0, 2**16)), draw(st.integers(0, 5)), wrt,
                   g.features, tuple(g.extra))


@st.composite
def checkpoint_options(draw):
    """Random keyword options for tc.grad(..., checkpoint=True)."""
    opts = {"schedule": draw(st.sampled_from(["revolve", "uniform", "online"]))}
    how = draw(st.integers(0, 3))
    if how == 1:
        opts["snapshots"] = draw(st.integers(1, 6))
    elif how == 2:
        opts["memory_budget"] = draw(st.sampled_from([600, 1200, 4000, "64kB", "1MB"]))
    if draw(st.integers(0, 3)) == 0:
        opts["disk_snapshots"] = draw(st.integers(1, 2))
    if draw(st.booleans()):
        opts["verify"] = True
    if draw(st.integers(0, 3)) == 0:
        opts["min_steps"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        opts["nested"] = True
    return opts


class LoadedProgram:
    """``with load_program(source) as f:`` imports ``f`` from a temporary module file;
    the file, its folder, the module and its linecache entry are removed on exit."""

    def __init__(self, source, name="f"):
        self.source, self.name = source, name

    def __enter__(self):
        # named after the source, so that a program hypothesis replays fails at the
        # same file and line again (with random names every replay looked "flaky",
        # and hypothesis then hid the program instead of shrinking and printing it)
        digest = hashlib.sha1(self.source.encode()).hexdigest()[:24]
        self.dir = os.path.join(tempfile.gettempdir(), f"tc_fuzz_{os.getpid()}_{digest}")
        try:
            os.mkdir(self.dir)
        except FileExistsError:  # the same program loaded again while it is loaded
            self.dir = tempfile.mkdtemp(prefix="tc_fuzz_")
        self.modname = "tc_fuzz_" + digest
        if self.modname in sys.modules:
            self.modname += "_" + uuid.uuid4().hex
        self.path = os.path.join(self.dir, self.modname + ".py")
        with open(self.path, "w") as fh:
            fh.write(self.source)
        spec = importlib.util.spec_from_file_location(self.modname, self.path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[self.modname] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            self.__exit__()
            raise
        return getattr(module, self.name)

    def __exit__(self, *exc):
        sys.modules.pop(self.modname, None)
        linecache.cache.pop(self.path, None)
        shutil.rmtree(self.dir, ignore_errors=True)
        return False


def load_program(source, name="f"):
    return LoadedProgram(source, name)


# ---------------------------------------------------------------- nested container arguments
#: the float parameters a nested layout holds, in the order f takes them
NESTED_LEAVES = ("a", "B", "c", "s", "M")


@st.composite
def nested_layouts(draw):
    """The five float parameters of ``f`` held in nested lists, tuples and dicts
    (``[[a, (B, c)], {'k0': s, 'k1': [M]}]``): the structure a ``wrt`` container
    argument has (a VAE's ``[[(W, b), ...], [(W, b), ...]]``), with parameter
    names as its leaves.  See :func:`nested_wrapper` and :func:`pack_nested`."""
    def node(names, depth):
        if len(names) == 1 and (depth >= 3 or draw(st.integers(0, 2)) > 0):
            return names[0]
        cuts = sorted(draw(st.sets(st.integers(1, len(names) - 1),
                                   min_size=1, max_size=min(2, len(names) - 1)))) \
            if len(names) > 1 else []  # a lone parameter wrapped in a container
        groups = [names[i:j] for i, j in zip([0] + cuts, cuts + [len(names)]) if names[i:j]]
        items = [node(group, depth + 1) for group in groups]
        kind = draw(st.sampled_from(["list", "tuple", "dict"]))
        if kind == "dict":
            return {f"k{i}": item for i, item in enumerate(items)}
        return items if kind == "list" else tuple(items)
    return node(list(NESTED_LEAVES), 0)


def _nested_paths(layout, path="P"):
    """{parameter name: the expression reading it from ``P``}."""
    if isinstance(layout, str):
        return {layout: path}
    keys = layout.keys() if isinstance(layout, dict) else range(len(layout))
    paths = {}
    for k in keys:
        paths.update(_nested_paths(layout[k], f"{path}[{k!r}]"))
    return paths


def nested_wrapper(layout):
    """Source of ``def g(P, n)``: ``f`` called with the parameters read from the
    nested container ``P`` (appended to a program's source)."""
    paths = _nested_paths(layout)
    call = ", ".join(paths[name] for name in NESTED_LEAVES)
    return f"\n\ndef g(P, n):\n    return f({call}, n)\n"


def pack_nested(layout, args):
    """The nested container of ``layout`` holding ``args`` (make_inputs's values)."""
    if isinstance(layout, str):
        return args[PARAMS.index(layout)]
    if isinstance(layout, dict):
        return {k: pack_nested(v, args) for k, v in layout.items()}
    items = [pack_nested(v, args) for v in layout]
    return items if isinstance(layout, list) else tuple(items)
