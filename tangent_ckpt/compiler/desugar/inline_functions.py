"""Desugar: calls of the user's functions, inlined as statements.

``h = step(h, x)`` where ``step`` is a ``def`` of the user's (module level, a
closure's, or a ``def`` / ``name = lambda`` at the top of the caller's body; not a
function with a rule) becomes the statements of ``step``'s body, in the caller's
function.  So do ``obj = Cls(...)`` (``Cls.__init__``) and ``obj.method(...)``
where the function makes ``obj`` (``self`` is ``obj``; ``super().f(...)`` the
function Python's method resolution finds for ``obj``'s class, ``super(Cls,
self).f(...)`` the one after ``Cls`` in it), and ``Cls.make(W)``, a
``classmethod`` of a class the function reads by name (``cls`` is ``Cls``
wherever the body reads it, so ``cls(W, 0.5)`` is a construction), when
``scalar_objects.py`` can then write ``obj`` as one name per attribute (a round
that finds an object more than its attributes is done again without it).  The
statements are written so:

- each parameter is the caller's argument: a name or a constant it is given
  stands for the parameter wherever the body reads it (the parameter is never
  rebound there; ``p += v`` only where the name is surely an array), anything
  else is evaluated once, in the order the call writes it, into a fresh name
  (``lr_2 = 0.1 * scale``); a method of an object this pass made
  (``rk4(model.rhs, u, dt)``) stands for the parameter too, so ``f(u, t)`` is
  ``model.rhs(u, t)``, inlined (the same bound method: the object is the caller's
  name, and a round whose function binds ``rhs`` anew keeps the object);
  a default is a name or constant, or else the object it is under a fresh name
  (``w_default``; an array or list default is ONE object every call shares, so
  the fence refuses a write into it as one into a module-level array);
  ``*args`` is a tuple display of the extra arguments,
  ``**kwargs`` a dict display of the other keywords (a keyword evaluated after a
  named one, ``f(x, scale=s(), b=g(), shift=k())``, bound first where Python
  evaluates it), and the body's spreads of either (``g(u, *args, **kwargs)``) the
  display, each computed item of it bound first (``args_0 = x * 2.0``, in the
  call's order), so ``g`` is inlined too after the round
  (``spread_arguments.py``) -- Python's binding of
  arguments, so a write into a parameter is a write into the caller's array,
  which the view pass and the fence then see as the caller's own code;
- the body's local names get names the caller does not use (``a`` stays ``a``
  where it is free, else ``a_2``); a name the body reads from its own module
  keeps its name when the caller's function sees the same object there, else
  gets a fresh one, which the caller's :class:`ParsedFunction` resolves in the
  helper's namespace (``ParsedFunction.inlined_names``);
- every ``return value`` becomes ``target = value`` as the last statement of its
  path (the statements after a branch that returns go into its other path; a
  return inside a loop is first a flag, ``loop_exits.py``); a helper returning
  its own object (``made = Cls(...)`` ... ``return made``) makes it under the
  caller's name instead (``made_as_target``).
- a ``def`` of the caller's (or one an inlined helper or factory makes) that
  declares ``nonlocal s`` rebinds the caller's ``s`` where its body now runs (a
  ``nonlocal`` of a scope around the caller stays a call); a name such a ``def``
  rebinds is read where Python reads it, into ``operand`` before the call, and
  never stands for a parameter (``s += bump(x)`` stays a call).

The call is the whole value of its statement (``f(x)``, ``y = f(x)``, ``a, b =
f(x)``, ``return f(x)``), or sits in an expression Python evaluates in order
(``loss += sq(h) + sq(h[0] * x)``, an ``if`` test): then it is inlined before the
statement, with whatever Python evaluates before it (``operand = rng.normal()``).
An expression that may not run all its parts is written as the statements that
run them, where one of its parts holds such a call: ``y = f(x) if c else x`` as
``if c: y = f(x)`` / ``else: y = x``; ``x and y`` as ``either = x`` / ``if
either: either = y`` (``or``: ``if not either``); ``while test: body`` as ``while
True:`` / the test's statements / ``if not test': break`` / ``body`` (not with an
``else``).  In a test -- of such an ``if``, an ``and``/``or``, a ``while`` -- only a
call of a function defined in the caller is written so (the lowering keeps a
test's other calls as calls, and refuses a local function's; ``tc.checkpoint``
there is one, ``checkpoint_calls.py``).
``for target in gen(...)`` over a user generator is the generator's statements
with the loop body at each ``yield`` (a ``break`` ends the generator there); the
generator's arguments are the objects they named when the loop began.

What this pass cannot write as statements is left as it is, for the lowering to
inline where it stands: a method of an object made elsewhere, or of one that is
more than its attributes, a call inside a comprehension, a helper whose nested
``def`` or ``lambda`` reads its own names (the closure keeps that call's
bindings) called in a loop, a ``return`` inside ``try`` or ``with``, ``global``,
a default other than a name, a constant, a function, a module, or constants in
an array, tuple or list (a dict, an object: the lowering's), an argument that is
a ``lambda`` the helper hands on, ``*args`` of a name (but the helper's own, above), ``continue`` in a generator loop, recursion.  Every node the pass copies is noted with the helper it came
from and the line calling it (``ParsedFunction.origins``, ``call_sites``,
``inlined_places``), so a refusal names the helper's file and line and the call,
in the helper's own names (``spellings``); comments quote the helper's lines
(``ParsedFunction.inlined_lines``).
"""

import copy
import inspect
import types
from collections import Counter

import gast
import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler.desugar.attribute_calls import write_attribute_calls
from tangent_ckpt.compiler.desugar.checkpoint_calls import write_checkpoint_calls
from tangent_ckpt.compiler.desugar.error_states import drop_silent_error_states
from tangent_ckpt.compiler.desugar.extreme_arguments import write_extreme_arguments
from tangent_ckpt.compiler.desugar.list_methods import write_list_methods
from tangent_ckpt.compiler.desugar.comprehension_loops import (
    over_user_generators, write_comprehension_loops,
)
from tangent_ckpt.compiler.desugar.enumerate_starts import position_enumerate_starts
from tangent_ckpt.compiler.desugar.evaluate_once import evaluate_once
from tangent_ckpt.compiler.desugar.function_names import resolve_function_names
from tangent_ckpt.compiler.desugar.local_bindings import (
    COMPREHENSIONS, LocalBindings, local_names, own_scope_nodes, parameter_names,
)
from tangent_ckpt.compiler.desugar.loop_exits import desugar_loop_exits
from tangent_ckpt.compiler.desugar import records
from tangent_ckpt.compiler.desugar.function_loops import unroll_function_loops
from tangent_ckpt.compiler.desugar.user_generators import count_enumerated_generators
from tangent_ckpt.compiler.desugar.map_calls import write_map_calls
from tangent_ckpt.compiler.desugar.masked_ufuncs import write_masked_ufuncs
from tangent_ckpt.compiler.desugar.named_expressions import write_named_expressions
from tangent_ckpt.compiler.desugar.partial_calls import bind_partials
from tangent_ckpt.compiler.desugar.pure_values import (
    computing_call, only_computes, reads_a_property,
)
from tangent_ckpt.compiler.desugar.spread_arguments import write_spread_arguments
from tangent_ckpt.compiler.desugar.scalar_objects import (
    Constructed, method_function, next_method, outside_receiver, replace_objects,
    replaceable_class,
)
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import (
    SCOPES, DenotedObject, fresh_name, name_node, names_taken, statement_blocks, statement_lists,
    store_node,
)
from tangent_ckpt.compiler.frontend.parse import _UNRESOLVED, parse_function, place_of
from tangent_ckpt.compiler.frontend.reached_functions import user_function, user_object
from tangent_ckpt.compiler.memory_sharing import returns_new

#: the most statements one function may grow to by inlining (then calls stay calls)
_MOST_STATEMENTS = 20_000
_SIMPLE_CONSTANTS = (int, float, complex, bool, str, type(None))


def _kept_default(obj):
    """A default the call may read as the object it is: a function, class or
    module, or constants (:func:`_default_numbers`)."""
    return callable(obj) or isinstance(obj, types.ModuleType) or _default_numbers(obj)


def _default_numbers(obj):
    """Is ``obj`` an array of numbers or booleans (not a subclass: a matrix, a masked
    array), or a tuple or list of constants and such arrays?  One object, made when
    the ``def`` ran and shared by every call (Python's mutable default), which the
    fence sees as it sees a module-level one: a write into it (through the
    parameter, an alias, a view, a helper, ``out=``, an append, or by a caller it
    is returned to) is refused, since it outlives the call."""
    if type(obj) in (tuple, list):
        return all(isinstance(v, _SIMPLE_CONSTANTS) or
                   type(v) is np.ndarray and _default_numbers(v) for v in obj)
    return type(obj) is np.ndarray and obj.dtype.kind in "biufc"


class _Callee:
    """A function this pass may inline: ``identity`` (its object, or its ``def``
    node in the caller: recursion is a call of one being inlined), ``name``,
    ``helper`` (the ParsedFunction whose namespace its free names are read in),
    ``template`` (its ``def``, after the passes before this one), ``defaults``
    ({parameter: object, or a name node}), ``closure`` (a def of the caller's own:
    its free names are the caller's), ``generator``, ``size`` (its statements)."""

    __slots__ = ("identity", "name", "helper", "template", "defaults", "closure",
                 "generator", "size", "closes_over", "nonlocals")

    def __init__(self, identity, name, helper, template, defaults, closure, generator):
        self.identity, self.name, self.helper = identity, name, helper
        self.template, self.defaults = template, defaults
        self.closure, self.generator = closure, generator
        self.size = _count(template.body)  # statements, for the growth limit
        # a def or lambda nested in it reads its own names: a closure factory
        self.closes_over = _closes_over_its_names(template)
        # the caller's names it rebinds (``nonlocal s``: only a closure's, _writable)
        self.nonlocals = _declared_nonlocal(template)


def _writable(callee):
    """``callee``, or None where its body is not one this pass writes into a caller
    (the lowering's, then): looked at once per function.  ``nonlocal`` only in a
    ``def`` of the caller's (a closure: the names it declares are the caller's,
    :meth:`_Inliner.prepare`)."""
    body = callee.template.body
    if _has(body, (gast.Global, gast.YieldFrom, gast.Await)) or \
            not callee.closure and _declared_nonlocal(callee.template) or \
            not callee.generator and _has(body, (gast.Yield,)) or \
            callee.generator and _has(body, (gast.Return,)) or \
            any(_has(s.body + s.orelse, (gast.Return,))
                for s in body for s in _own_nodes(s)
                if isinstance(s, (gast.For, gast.While, gast.AsyncFor))) or \
            any(_has([s], (gast.Return,)) for s in body for s in _own_nodes(s)
                if isinstance(s, (gast.With, gast.AsyncWith, gast.Try))):
        return None
    return callee


def _prepared(fnode, helper=None):
    """``fnode`` without its docstring, after the passes that run before this one
    (``evaluate_once.py``, ``named_expressions.py``; ``helper``: the ParsedFunction
    of a module-level one, whose checkpoint markers are written here, and its
    ``enumerate`` starts and loops over functions, ``function_loops.py``,
    ``checkpoint_calls.py``, comprehensions and ``enumerate`` over its own
    generators, ``comprehension_loops.py``, ``user_generators.py``; a local one's were with its caller's),
    and with its returns inside loops written as flags (desugar/loop_exits.py)."""
    body = fnode.body
    if len(body) > 1 and isinstance(body[0], gast.Expr) and \
            isinstance(body[0].value, gast.Constant) and isinstance(body[0].value.value, str):
        fnode.body = body[1:]
    evaluate_once(fnode)
    write_named_expressions(fnode)
    if helper is not None:
        write_attribute_calls(helper, fnode)
        drop_silent_error_states(helper, fnode)
        write_extreme_arguments(helper, fnode)
        write_masked_ufuncs(helper, fnode)
        write_list_methods(helper, fnode)
        write_checkpoint_calls(helper, fnode)
        position_enumerate_starts(helper, fnode)
        unroll_function_loops(helper, fnode)
        write_comprehension_loops(helper, over_user_generators(helper, fnode), fnode)
        count_enumerated_generators(helper, fnode)
    desugar_loop_exits(fnode)
    return fnode


def _positional(fnode):
    return [a.id for a in fnode.args.posonlyargs + fnode.args.args]


def _local_functions(fnode, stmts=None):
    """{name: node}: the ``def`` statements, and ``name = lambda ...`` assignments,
    of ``fnode``'s own scope (or among ``stmts`` in it), whose name nothing else
    binds.  One in a branch or a loop is called where its call is: a closure reads
    the names it shares with the caller when it runs, as the inlined body does, and
    its defaults are names bound where the ``def`` ran (``def_defaults.py``)."""
    found = {}
    for stmt in own_scope_nodes(fnode, comprehensions=False) if stmts is None else stmts:
        if isinstance(stmt, gast.FunctionDef) and not stmt.decorator_list:
            found[stmt.name] = stmt
        elif isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Lambda):
            found[stmt.targets[0].id] = stmt
    bindings = Counter(n.id for n in gast.walk(fnode) if isinstance(n, gast.Name) and
                       isinstance(n.ctx, (gast.Store, gast.Del, gast.Param)))
    bindings.update(n.name for n in gast.walk(fnode)
                    if isinstance(n, (gast.FunctionDef, gast.ClassDef)) and n is not fnode)
    return {name: node for name, node in found.items() if bindings[name] == 1}


def _breaks_as_returns(stmt, kind=gast.Break):
    """``stmt`` (of a loop's body) with each ``break`` (or ``continue``: ``kind``)
    of that loop a ``return``."""
    if isinstance(stmt, kind):
        return gast.copy_location(gast.Return(value=None), stmt)
    if isinstance(stmt, SCOPES):
        return stmt
    if isinstance(stmt, (gast.For, gast.While, gast.AsyncFor)):
        stmt.orelse = [_breaks_as_returns(s, kind) for s in stmt.orelse]
        return stmt  # the exits of its body are its own
    for block in statement_blocks(stmt):
        block[:] = [_breaks_as_returns(s, kind) for s in block]
    return stmt


def _continues_as_paths(stmts):
    """``stmts`` (a loop's body, without a ``return``) with each ``continue`` of
    that loop the end of its path: what follows it runs in the other path of each
    ``if`` around it (``if c: continue`` + rest -> ``if not c: rest``); None where
    a ``continue`` stands elsewhere (a loop's ``else``, a ``with``)."""
    stmts = _single_exit([_breaks_as_returns(s, gast.Continue) for s in stmts], None)
    return None if any(_returns_in(s) for s in stmts) else stmts


def _writes_nothing(fnode, static_value, computes):
    """Does ``fnode`` (a helper) write nothing but arrays it makes itself: bind
    names, compute values (``computes(call)``), and write items of (or add into)
    locals every binding of which is a new value (``x = np.zeros_like(x0)``,
    ``mask = r < a``)?"""
    made = _made_locals(fnode, static_value)
    for s in fnode.body:
        for n in _own_nodes(s):
            if isinstance(n, gast.AugAssign):
                if _root_name(n.target) not in made:
                    return False
            elif isinstance(n, (gast.Subscript, gast.Attribute, gast.Starred)) and \
                    isinstance(n.ctx, gast.Store):
                if not isinstance(n, gast.Subscript) or _root_name(n) not in made:
                    return False
            elif isinstance(n, SCOPES + (gast.Delete, gast.Global, gast.Nonlocal,
                                         gast.Yield, gast.YieldFrom)) or \
                    isinstance(n, gast.Call) and not computes(n) or \
                    reads_a_property(n, static_value):
                return False
    return True


def _root_name(target):
    """The name ``a`` of ``a``, ``a[i]``, ``a[i][j]`` (None for anything else)."""
    while isinstance(target, gast.Subscript):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None


def _made_locals(fnode, static_value):
    """The locals of ``fnode`` (not its parameters) bound only by plain
    assignments of new values: an arithmetic result, a comparison, a constant, or
    a call of a NumPy function that returns a new array (``memory_sharing``); an
    augmented assignment keeps such a local new."""
    def new(value):
        if isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Constant)):
            return True
        return isinstance(value, gast.Call) and returns_new(static_value(value.func)) and \
            only_computes(value, static_value)
    values, plain = {}, set()
    for n in own_scope_nodes(fnode):
        if isinstance(n, gast.Assign) and all(isinstance(t, gast.Name) for t in n.targets):
            for t in n.targets:
                values.setdefault(t.id, []).append(n.value)
                plain.add(id(t))
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            plain.add(id(n.target))
    other = set(parameter_names(fnode))
    other |= {n.id for n in own_scope_nodes(fnode) if isinstance(n, gast.Name) and
              isinstance(n.ctx, (gast.Store, gast.Del)) and id(n) not in plain}
    return {name for name, vs in values.items()
            if name not in other and all(new(v) for v in vs)}


def _statement_yields(fnode):
    return {id(s.value) for s in fnode.body for s in _own_nodes(s)
            if isinstance(s, gast.Expr) and isinstance(s.value, gast.Yield)}


def _own_exits(stmts, kind):
    """Is there a ``break`` (or ``continue``: ``kind``) in ``stmts`` that leaves (or
    goes on with) the loop they are the body of, not one nested in them?"""
    stack = list(stmts)
    while stack:
        s = stack.pop()
        if isinstance(s, kind):
            return True
        if isinstance(s, (gast.For, gast.While, gast.AsyncFor)):
            stack.extend(s.orelse)  # the exits of its body are its own
            continue
        for block in statement_blocks(s):
            stack.extend(block)
    return False


def _plain_user_function(fn):
    """A function of the user's that this pass may inline (no rule of ours, not a
    wrapper or a coroutine)."""
    return fn is not None and fn is not _UNRESOLVED and user_function(fn) and \
        registry.lookup(fn) is None and not hasattr(fn, "__wrapped__") and \
        not inspect.iscoroutinefunction(fn)


def _super_call(node, me=None):
    """``super().name(...)`` (or, ``me`` given, ``super(Cls, me).name(...)``, ``me``
    a name)."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and
            isinstance(node.func.value, gast.Call) and
            isinstance(node.func.value.func, gast.Name) and
            node.func.value.func.id == "super" and not node.func.value.keywords):
        return False
    args = node.func.value.args
    return not args or me is not None and len(args) == 2 and \
        isinstance(args[1], gast.Name) and args[1].id == me and \
        not any(isinstance(a, gast.Starred) for a in args)


def _after(receiver, cls, name):
    """The function ``super(cls, obj).name`` denotes for ``obj`` of class
    ``receiver``: the next definition after ``cls`` in ``receiver``'s method
    resolution order; None where ``cls`` is not in it or nothing defines it."""
    if not (inspect.isclass(cls) and cls in receiver.__mro__):
        return None
    mro = receiver.__mro__
    return next((vars(k)[name] for k in mro[mro.index(cls) + 1:] if name in vars(k)), None)


class _NotInlined(Exception):
    """This call stays a call (the lowering inlines it, or refuses it, as before)."""


#: rounds of inlining after objects were replaced (an object's attribute is an object)
_MOST_OBJECT_ROUNDS = 4


def inline_functions(parsed, given=None):
    """Inline, in place, the calls of the user's functions and of the methods of
    the objects ``parsed`` makes (see the module's docstring); each such object
    becomes one name per attribute (``scalar_objects.py``).

    A round inlines into a copy of the function; where an object it made proves
    to be more than its attributes (handed on, a method left a call), the round
    is done again without making that one, which stays for the lowering.  Before
    the first round (``rate = model.rate``: its calls are the method's, so the
    object is only its attributes) and after each, a local that surely names one
    function is called by that function's name (``function_names.py``), and
    another round inlines what that and the objects' attributes (an object held
    by an object) made inlinable.

    ``given``: {parameter: the structure of the object the call gives it}
    (``scalar_objects.given_object``); each such parameter is tried as an object
    made here, and where it is nothing but its attributes it becomes one
    parameter per leaf attribute (``parsed.flattened_parameters``)."""
    own_places = {place_of(n) for n in gast.walk(parsed.node)}
    excluded, rounds = set(), 0
    given = dict(given or {})
    callees = {}  # parsed once for every round (each round copies what it inlines)
    resolve_function_names(parsed, parsed.node)  # f = model.rhs: f(u) is model.rhs(u)
    while rounds < _MOST_OBJECT_ROUNDS:
        trial = copied(parsed, parsed.node)
        inliner = _Inliner(parsed, trial, own_places, excluded, callees)
        trying = {name: structure for name, structure in given.items()
                  if name not in excluded}
        for name, structure in trying.items():
            inliner.constructed[name] = {structure[1]}
        inliner.block(trial.body, ())
        made = inliner.constructed
        failed = replace_objects(parsed, trial, made, inliner.taken, trying,
                                 inliner.constructor_stores) if made else set()
        failed |= _methods_stored_over(trial, inliner.bound_methods)
        if failed:
            excluded |= failed
            continue
        for name in trying:
            given.pop(name)
        resolved = resolve_function_names(parsed, trial)  # f = self.f: calls of f are rhs's
        resolved = write_map_calls(trial, parsed.resolve) | \
            bind_partials(trial, parsed.resolve) | write_spread_arguments(trial) | \
            resolved  # an inlined map, partial, or g(*args) of a helper's *args
        parsed.node.body = trial.body
        parsed.node.args = trial.args
        rounds += 1
        if not resolved and not (made and _constructions(parsed, trial, excluded)):
            break
    _drop_unread_functions(parsed.node)


def _methods_stored_over(fnode, bound_methods):
    """The objects of ``bound_methods`` ({(object, method)} a helper's parameter
    stood for) whose method the function may bind anew (``Cls.rhs = g``,
    ``setattr``): reading ``model.rhs`` again could then give another function
    than the bound method the helper was given."""
    if not bound_methods:
        return set()
    stored = {n.attr for n in gast.walk(fnode)
              if isinstance(n, gast.Attribute) and not isinstance(n.ctx, gast.Load)}
    if any(isinstance(n, gast.Name) and n.id in ("setattr", "delattr")
           for n in gast.walk(fnode)):
        return {name for name, _ in bound_methods}
    return {name for name, attr in bound_methods if attr in stored}


def _drop_unread_functions(fnode):
    """Remove the ``def`` statements and ``name = lambda ...`` bindings whose
    function nothing reads any more (every call of it inlined): binding such a
    function computes nothing but its defaults, kept where they may do more
    than read a name or a constant (and a decorated ``def`` is kept)."""
    while True:
        read = {n.id for n in gast.walk(fnode)
                if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Load, gast.Del))}
        functions = None  # the local functions, found when a binding may name one
        dropped = False
        for block in statement_lists(fnode):
            for stmt in list(block):
                if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                        isinstance(stmt.targets[0], gast.Name) and \
                        stmt.targets[0].id not in read and isinstance(stmt.value, gast.Name):
                    if functions is None:
                        functions = set(_local_functions(fnode))
                    if stmt.value.id not in functions:
                        continue
                    name, args = stmt.targets[0].id, None  # inner = loss_2, never read
                elif isinstance(stmt, gast.FunctionDef) and not stmt.decorator_list:
                    name, args = stmt.name, stmt.args
                elif isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                        isinstance(stmt.targets[0], gast.Name) and \
                        isinstance(stmt.value, gast.Lambda):
                    name, args = stmt.targets[0].id, stmt.value.args
                else:
                    continue
                defaults = [] if args is None else \
                    args.defaults + [d for d in args.kw_defaults if d is not None]
                if name in read or not all(isinstance(d, (gast.Constant, gast.Name))
                                           for d in defaults):
                    continue
                block.remove(stmt)
                if not block:
                    block.append(gast.copy_location(gast.Pass(), stmt))
                dropped = True
        if not dropped:
            return


def _constructions(parsed, fnode, excluded):
    """Is any name of ``fnode`` (not in ``excluded``) bound to a new object of a
    user's class, which another round may replace (``model_cell = Cell(n)``)?"""
    local = local_names(fnode)
    for node in gast.walk(fnode):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], gast.Name) and \
                node.targets[0].id not in excluded and isinstance(node.value, gast.Call) and \
                _made_class(resolve_dotted(node.value.func, parsed.resolve, local)):
            return True
    return False


def _made_class(cls):
    """May an object ``cls(...)`` makes be written as one name per attribute
    (``scalar_objects.py``), its constructor inlined or written (``records.py``)?"""
    return replaceable_class(cls) or records.record_class(cls)


def copied(parsed, node):
    """A deep copy of ``node`` whose nodes keep the origins and call sites of the
    originals."""
    memo = {}
    copy_ = copy.deepcopy(node, memo)
    for table in (parsed.origins, parsed.call_sites):
        for n in gast.walk(node):
            fact = table.get(n)
            if fact is not None and id(n) in memo:
                table[memo[id(n)]] = fact
    return copy_


def _own_nodes(node):
    """The nodes of ``node`` that belong to its own scope (not to a nested
    ``def``, ``class`` or ``lambda``, whose names are their own)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        for child in gast.iter_child_nodes(n):
            if not isinstance(child, SCOPES):
                stack.append(child)


def _stored_names(fnode):
    """Every name ``fnode``'s body binds, in its own scope or a nested one."""
    names = set()
    for n in gast.walk(fnode):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del, gast.Param)):
            names.add(n.id)
        elif isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)) and \
                n is not fnode:
            names.add(n.name)
    return names


def _nested_scopes(fnode):
    """[(scope, the names it binds itself)] for each ``def``, ``lambda`` and
    comprehension nested in ``fnode``."""
    scopes = []
    for n in gast.walk(fnode):
        if n is fnode:
            continue
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
            scopes.append((n, _bound_in_scope(n)))
        elif isinstance(n, COMPREHENSIONS):
            scopes.append((n, {m.id for g in n.generators for m in gast.walk(g.target)
                               if isinstance(m, gast.Name)}))
    return scopes


def _captured(scopes, parameter, value):
    """Does a nested scope read ``parameter`` (not binding it for its own) while
    ``value`` reads a caller's name?  Written there, that name would be read when
    the closure runs, perhaps after the caller rebound it (a closure the helper
    returns), or taken by the scope's own binding of it: the parameter then needs
    a name of its own."""
    if not any(isinstance(n, gast.Name) for n in gast.walk(value)):
        return False
    return any(parameter not in bound and
               any(isinstance(m, gast.Name) and m.id == parameter for m in gast.walk(scope))
               for scope, bound in scopes)


def _closes_over_its_names(fnode):
    """Does a ``def`` or ``lambda`` nested in ``fnode`` read a name of ``fnode``'s
    own (a parameter or local)?  Such a closure keeps the bindings of that one
    call: the caller's names standing for them do so only where the call runs
    once (outside any loop, :meth:`_Inliner.prepare`)."""
    own = local_names(fnode)
    for n in gast.walk(fnode):
        if n is not fnode and isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef,
                                             gast.Lambda)):
            inner = {m.id for m in gast.walk(n) if isinstance(m, gast.Name) and
                     isinstance(m.ctx, (gast.Store, gast.Del, gast.Param))}
            if any(isinstance(m, gast.Name) and isinstance(m.ctx, gast.Load) and
                   m.id in own and m.id not in inner for m in gast.walk(n)):
                return True
    return False


def _has(stmts, kinds):
    return any(isinstance(n, kinds) for s in stmts for n in _own_nodes(s))


def _always_returns(stmts):
    """Does every path through ``stmts`` end in a ``return`` or a ``raise``?"""
    for s in stmts:
        if isinstance(s, (gast.Return, gast.Raise)):
            return True
        if isinstance(s, gast.If) and _always_returns(s.body) and _always_returns(s.orelse):
            return True
    return False


def _count(stmts):
    return sum(1 for s in stmts for n in gast.walk(s) if isinstance(n, gast.stmt))


class _Inliner:
    """The inlining of one function's calls: the names taken in it, its locals,
    the callees met (parsed once each), its own ``def`` statements."""

    def __init__(self, parsed, fnode, own_places, excluded, callees):
        self.parsed, self.fnode = parsed, fnode  # fnode: a copy of parsed.node
        self.loops = 0  # the loops around the statements being inlined into
        # (call, name) of the statement `name = call` being inlined (a closure factory
        # there may be written into a loop: only_called), and the calls whose value is
        # called at once (make(u)(u)): a closure one call reads
        self.closure_binding, self.called_results = None, set()
        self.taken = names_taken(fnode)
        self.locals = local_names(fnode)
        self.statements = _count(fnode.body)
        self.callees = callees  # function object, or def node -> _Callee (None: not inlined)
        self.local_functions = _local_functions(fnode)
        # where the caller's own nodes are written (see ParsedFunction.inlined_places)
        self.own_places = own_places
        # objects made here whose __init__ and methods are inlined: name -> classes;
        # ``excluded``: names whose objects stay (a round found them more than attributes)
        self.constructed, self.excluded = {}, excluded
        # the ids of the field stores of the records' constructors (records.py): the
        # only stores a named tuple or frozen dataclass takes
        self.constructor_stores = set()
        self.super_methods = {}  # the name given super().f in a method -> the object's class
        # (object, method) of the methods of objects made here a parameter stands for
        # (made_objects_method): the object stays where the round stores such a name
        self.bound_methods = set()
        # the caller's names a closure rebinds (``nonlocal s``): read where Python reads
        # them, never standing for a parameter (a call inlined may rebind them)
        self.closure_written = {name for n in gast.walk(fnode) if isinstance(n, gast.Nonlocal)
                                for name in n.names}

    # --- walking the caller's statements ---------------------------------------------
    def block(self, stmts, stack):
        """Inline the calls of ``stmts`` (a statement list, rewritten in place)."""
        i = 0
        while i < len(stmts):
            stmt = stmts[i]
            looping = isinstance(stmt, (gast.For, gast.While, gast.AsyncFor))
            self.loops += looping
            try:
                for block in statement_blocks(stmt):
                    self.block(block, stack)
            finally:
                self.loops -= looping
            # hoisting rewrites the statement's own expression: kept, to put back
            kept = {field: self.copy(getattr(stmt, field)) for field in ("value", "test")
                    if isinstance(getattr(stmt, field, None), gast.AST)}
            try:
                replacement = self.statement(stmt, stack)
            except _NotInlined:  # (a call found inlinable may still not be: as it was)
                for field in ("value", "test"):
                    if field in kept:
                        setattr(stmt, field, kept[field])
                replacement = None
            if replacement is None:
                i += 1
                continue
            stmts[i:i + 1] = replacement
            i += len(replacement)

    def statement(self, stmt, stack):
        """The statements that replace ``stmt``, or None."""
        value = getattr(stmt, "value", None)
        for field in ("value", "test"):  # what prepare may be asked about below
            if isinstance(getattr(stmt, field, None), gast.expr):
                self.called_results.update(
                    n.func for n in gast.walk(getattr(stmt, field))
                    if isinstance(n, gast.Call) and isinstance(n.func, gast.Call))
        made = self.construction(stmt)
        if made is not None:
            return self.construct(stmt, made, stack)
        for field in ("value", "test"):
            if isinstance(getattr(stmt, field, None), gast.expr):
                setattr(stmt, field, self.property_reads(getattr(stmt, field)))
        if isinstance(stmt, gast.Expr) and self.inlinable(value, stack):
            return self.inline(value, None, stack)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name):
            self.closure_binding = (value, stmt.targets[0].id)
            try:
                if self.inlinable(value, stack):
                    return self.inline(value, stmt.targets[0].id, stack)
            finally:
                self.closure_binding = None
            if isinstance(value, gast.IfExp) and self.calls_in(value, stack):
                return self.choice(value, stmt.targets[0].id, stack)  # y = f(x) if c else x
        if isinstance(stmt, (gast.Expr, gast.Assign)) or \
                isinstance(stmt, gast.Return) and value is not None and not stack or \
                isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name) and \
                stmt.target.id not in self.closure_written or \
                isinstance(stmt, gast.AugAssign) and self.calls_write_nothing(value, stack):
            # (`s += bump(x)`, bump rebinding s: Python reads s before the call;
            # `a[i] += f(x)`: Python reads a[i] before the call, which must then not
            # write anything a[i] could be)
            before, stmt.value = self.hoist(value, stack)
        elif isinstance(stmt, gast.If):
            before, stmt.test = self.hoist(stmt.test, stack)
        elif isinstance(stmt, gast.For):
            return self.generator_loop(stmt, stack)
        elif isinstance(stmt, gast.While) and not stmt.orelse and \
                self.refused_in_condition(stmt.test, stack):
            return self.while_test(stmt, stack)
        else:
            return None
        return before + [stmt] if before else None

    # --- calls inside expressions -----------------------------------------------------
    def hoist(self, node, stack):
        """``(statements, node')``: the inlinable calls in ``node`` inlined before it,
        into fresh names, with every part Python evaluates before such a call
        evaluated before it too (``value = a[0]`` before ``f_result = f(a)``);
        what ``node'`` still computes comes after them all, as in Python.  A
        conditional expression or ``and``/``or`` holding such a call is written as
        the ``if`` statements that run its parts (:meth:`choice`,
        :meth:`short_circuit`)."""
        if not self.calls_in(node, stack):
            return [], node
        if isinstance(node, gast.Call) and self.inlinable(node, stack):
            before, node = self.hoist_children(node, stack)
            result = fresh_name(f"{self.prepare(node, stack).name}_result", self.taken)
            self.locals.add(result)
            return before + self.inline(node, result, stack), \
                gast.copy_location(name_node(result), node)
        if isinstance(node, (gast.IfExp, gast.BoolOp)):
            result = fresh_name("choice" if isinstance(node, gast.IfExp) else "either",
                                self.taken)
            self.locals.add(result)
            written = self.choice(node, result, stack) if isinstance(node, gast.IfExp) \
                else self.short_circuit(node, result, stack)
            return written, gast.copy_location(name_node(result), node)
        return self.hoist_children(node, stack)

    def value_into(self, node, target, stack):
        """The statements binding ``target`` to ``node``'s value, its calls inlined
        (a call the whole value: its body's result goes to ``target`` itself)."""
        if isinstance(node, gast.Call) and self.inlinable(node, stack):
            before, node = self.hoist_children(node, stack)
            return before + self.inline(node, target, stack)
        if isinstance(node, gast.IfExp) and self.calls_in(node, stack):
            return self.choice(node, target, stack)  # (each branch binds target last)
        before, node = self.hoist(node, stack)
        if isinstance(node, gast.Name) and node.id == target:
            return before
        return before + [gast.copy_location(gast.Assign(
            targets=[gast.copy_location(store_node(target), node)], value=node,
            type_comment=None), node)]

    def choice(self, node, target, stack):
        """``target = a if c else b`` as ``if c: target = a`` / ``else: target = b``,
        the calls of each branch inlined in it (only the branch Python runs runs).
        The test is evaluated first, once: its calls stay where they are but for a
        call of a local function, which the lowering refuses in a condition
        (:meth:`refused_in_condition`)."""
        before, test = [], node.test
        if self.refused_in_condition(test, stack):
            before, test = self.hoist(test, stack)
        branch = gast.If(test=test, body=self.value_into(node.body, target, stack),
                         orelse=self.value_into(node.orelse, target, stack))
        if not branch.body:
            branch.body = [gast.copy_location(gast.Pass(), node)]
        return before + [gast.copy_location(branch, node)]

    def short_circuit(self, node, target, stack):
        """``target = x and y`` as ``target = x`` / ``if target: target = y``
        (``or``: ``if not target``): each operand evaluated only where Python
        evaluates it, the value the operand Python stops at, its truth taken
        once per operand as Python takes it."""
        written = self.value_into(node.values[0], target, stack)
        block = written
        for operand in node.values[1:]:
            test = gast.copy_location(name_node(target), operand)
            if isinstance(node.op, gast.Or):
                test = gast.copy_location(gast.UnaryOp(op=gast.Not(), operand=test), operand)
            branch = gast.copy_location(gast.If(
                test=test, body=self.value_into(operand, target, stack), orelse=[]), operand)
            block.append(branch)
            block = branch.body
        return written

    def while_test(self, loop, stack):
        """``while test: body`` whose test calls a local function (refused by the
        lowering in a condition) as ``while True:`` / the test's statements /
        ``if not test': break`` / ``body``: the test runs before each trip, as in
        Python (a ``continue`` goes back to it); a loop with an ``else`` stays."""
        self.loops += 1  # (the test runs in each trip)
        try:
            before, test = self.hoist(loop.test, stack)
        finally:
            self.loops -= 1
        leave = gast.copy_location(gast.If(
            test=gast.copy_location(gast.UnaryOp(op=gast.Not(), operand=test), test),
            body=[gast.copy_location(gast.Break(), loop)], orelse=[]), loop)
        loop.body = before + [leave] + loop.body
        loop.test = gast.copy_location(gast.Constant(value=True, kind=None), loop.test)
        return [loop]

    def refused_in_condition(self, node, stack):
        """Does ``node`` (a test) hold, where Python evaluates it, a call this pass
        inlines of a function defined in the caller (a ``def`` it holds, one
        ``checkpoint_calls.py`` wrote)?  The lowering keeps a test's calls as
        calls, and refuses one of a local function."""
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id in self.local_functions and self.inlinable(node, stack):
            return True
        return isinstance(node, _IN_ORDER + (gast.IfExp, gast.BoolOp)) and \
            any(self.refused_in_condition(child, stack)
                for child in _evaluated_in_order(node))

    def hoist_children(self, node, stack):
        children = _evaluated_in_order(node)
        holding = [k for k, child in enumerate(children) if self.calls_in(child, stack)]
        if not holding:
            return [], node
        last = holding[-1]
        before = []
        for k, child in enumerate(children[:last + 1]):
            statements, new = self.hoist(child, stack)
            before += statements
            formatted = isinstance(new, gast.FormattedValue)
            if k < last and not self.stands_for_itself(new.value if formatted else new) and \
                    not (isinstance(node, gast.Call) and child is node.func) or \
                    k < last and formatted and not isinstance(new.value, gast.Constant):
                # (an f-string's part is formatted where it stands: before the call)
                operand = fresh_name("text" if formatted else "operand", self.taken)
                self.locals.add(operand)
                before.append(gast.copy_location(gast.Assign(
                    targets=[store_node(operand)], type_comment=None,
                    value=gast.JoinedStr(values=[new]) if formatted else new), new))
                new = gast.copy_location(name_node(operand), new)
                if formatted:
                    new = gast.copy_location(gast.FormattedValue(
                        value=new, conversion=-1, format_spec=None), new)
            if new is not child:
                _ReplaceChild(child, new).generic_visit(node)
        return before, node

    def calls_in(self, node, stack):
        """Does ``node`` hold a call this pass inlines, where it can hoist it or
        write the expression holding it as statements (a branch of ``a if c else
        b``; in its test or an ``and``/``or``, a local function's call only), not
        in a ``lambda`` or a comprehension?"""
        if isinstance(node, gast.Call) and self.inlinable(node, stack):
            return True
        if isinstance(node, gast.IfExp):  # a call in a branch, or a test's refused one
            return self.calls_in(node.body, stack) or self.calls_in(node.orelse, stack) or \
                self.refused_in_condition(node.test, stack)
        if isinstance(node, gast.BoolOp):  # (other calls stay, as calls of a condition)
            return self.refused_in_condition(node, stack)
        return isinstance(node, _IN_ORDER) and \
            any(self.calls_in(child, stack) for child in _evaluated_in_order(node))

    def only_called(self, name):
        """Is ``name`` bound by one statement alone and read only as ``name(...)``?
        A closure a factory makes in a loop may then be written into the loop: each
        call reads the bindings of the factory's last run, which made the closure
        ``name`` holds then."""
        stores, calls, loads = 0, set(), []
        for n in gast.walk(self.fnode):
            if isinstance(n, gast.Name) and n.id == name:
                if isinstance(n.ctx, gast.Load):
                    loads.append(id(n))
                else:
                    stores += 1
            elif isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and \
                    n.func.id == name:
                calls.add(id(n.func))
            elif isinstance(n, (gast.FunctionDef, gast.ClassDef, gast.Global,
                                gast.Nonlocal)) and n is not self.fnode and \
                    name in ([n.name] if hasattr(n, "name") else n.names):
                stores += 1
        return stores == 1 and all(k in calls for k in loads)

    def calls_write_nothing(self, node, stack):
        """Do the calls in ``node`` this pass would inline all run helpers that
        write nothing (no item, attribute or augmented assignment, only calls that
        compute a value: :func:`only_computes`)?"""
        return all(self.writes_nothing(self.prepare(n, stack))
                   for n in gast.walk(node)
                   if isinstance(n, gast.Call) and self.inlinable(n, stack))

    def writes_nothing(self, callee, seen=()):
        """:func:`_writes_nothing` for ``callee``'s body, where a call of a
        module-level function of the user's counts as computing when that
        function's body writes nothing either."""
        if callee is None or callee.identity in seen:
            return False
        resolve, local = callee.helper.resolve, local_names(callee.template)

        def static_value(node):
            return resolve_dotted(node, resolve, local)

        def computes(call):  # (its arguments are calls _writes_nothing looks at too)
            fn = static_value(call.func)
            return computing_call(call, static_value, views=True) or \
                _plain_user_function(fn) and not inspect.isgeneratorfunction(fn) and \
                not any(isinstance(a, gast.Starred) for a in call.args) and \
                all(k.arg is not None for k in call.keywords) and \
                self.writes_nothing(self.module_callee(fn), seen + (callee.identity,))
        return _writes_nothing(callee.template, static_value, computes)

    # --- one call ----------------------------------------------------------------------
    def inlinable(self, call, stack):
        try:
            self.prepare(call, stack)
        except _NotInlined:
            return False
        return True

    def prepare(self, call, stack, generator=False):
        """The :class:`_Callee` ``call`` calls, when this pass can inline the call
        (``generator``: a generator function, for a ``for`` loop over it); else
        raises ``_NotInlined``."""
        if not isinstance(call, gast.Call) or \
                not isinstance(call.func, (gast.Name, gast.Attribute)):
            raise _NotInlined
        given = {id(a) for a in call.args} | {id(k.value) for k in call.keywords}
        if any(isinstance(a, gast.Starred) for a in call.args) or \
                any(k.arg is None for k in call.keywords) or \
                any(isinstance(n, gast.NamedExpr) or isinstance(n, gast.Lambda) and
                    id(n) not in given for n in gast.walk(call)):
            raise _NotInlined  # (a lambda given as an argument is the parameter's function)
        self.spell_call_method(call)
        method = self.method_call(call)
        if method is not None:
            callee = self.module_callee(method[0])
            if callee is not None and method[1] is not None and \
                    _positional(callee.template)[:1] and \
                    _positional(callee.template)[0] in _stored_names_in_body(callee.template):
                raise _NotInlined  # `self = ...`: a local alias of the object (the lowering's)
        elif isinstance(call.func, gast.Name) and call.func.id in self.local_functions:
            callee = self.local_callee(call.func.id)
        elif self.class_method(call) is not None:
            callee = self.module_callee(self.class_method(call))
        else:
            fn = resolve_dotted(call.func, self.parsed.resolve, self.locals)
            if not _plain_user_function(fn):
                raise _NotInlined
            callee = self.module_callee(fn)
        if callee is None or callee.generator != generator or \
                any(callee.identity is f for f in stack):
            raise _NotInlined
        if not callee.nonlocals <= self.locals:
            # (a name of a scope around the caller's: Python rebinds it there)
            raise _NotInlined
        if callee.closes_over and self.loops and call not in self.called_results and \
                not (self.closure_binding and call is self.closure_binding[0] and
                     self.only_called(self.closure_binding[1])):
            # each closure keeps the bindings of its own call: written into a loop,
            # one name would stand for the bindings of every trip (the lowering's)
            raise _NotInlined
        if self.statements + callee.size > _MOST_STATEMENTS:
            raise _NotInlined
        return callee

    def spell_call_method(self, call):
        """``c(h)`` where ``c`` is an object whose class defines ``__call__`` in
        Python (one this pass made, or a user's object of the module): written
        ``c.__call__(h)``, the method Python runs, which this pass inlines like
        any other method (in place: the two calls are the same)."""
        func = call.func
        if not isinstance(func, gast.Name) or func.id in self.local_functions:
            return
        classes = self.constructed.get(func.id, ())
        if len(classes) == 1:
            cls = next(iter(classes))
        elif not classes and func.id not in self.locals:
            obj = self.parsed.resolve(func.id)
            if obj is _UNRESOLVED or not user_object(obj) or not outside_receiver(obj) or \
                    "__call__" in getattr(obj, "__dict__", {}):
                return  # (c.__call__ would then be the object's own attribute)
            cls = type(obj)
        else:
            return
        found = method_function(cls, "__call__")
        if found is not None and found[1] and _plain_user_function(found[0]):
            call.func = gast.copy_location(gast.Attribute(value=func, attr="__call__",
                                                          ctx=gast.Load()), func)

    def method_call(self, call):
        """``(function, receiver class or None)`` for ``obj.name(...)`` on an object
        this pass made, or on a user's object the function reads from its module
        or closure (``CELL.forward(h)``: its class is known when compiling), or
        None for any other call (``None`` class: a static method, called without
        the object)."""
        func = call.func
        if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)):
            return None
        classes = self.constructed.get(func.value.id, ())
        if len(classes) == 1:
            cls = next(iter(classes))
        elif not classes and func.value.id not in self.locals:
            obj = self.parsed.resolve(func.value.id)
            cls = type(obj)
            if obj is _UNRESOLVED or not user_object(obj) or not outside_receiver(obj) or \
                    func.attr in getattr(obj, "__dict__", {}):
                return None  # (an attribute of the object's own may hold a function)
        else:
            return None
        found = method_function(cls, func.attr)
        if found is None or not _plain_user_function(found[0]):
            raise _NotInlined
        return found[0], cls if found[1] else None

    def class_method(self, call):
        """The function of ``Cls.name(...)``, a ``classmethod`` of a class the
        function reads by its plain name ``Cls`` from its module or closure, where
        the function neither reads ``super`` nor rebinds ``cls`` (it is then
        ``Cls`` wherever the body reads it); else None."""
        func = call.func
        if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)) or \
                func.value.id in self.locals:
            return None
        cls = self.parsed.resolve(func.value.id)
        if not inspect.isclass(cls):
            return None
        raw = next((vars(k)[func.attr] for k in cls.__mro__ if func.attr in vars(k)), None)
        if not isinstance(raw, classmethod) or not _plain_user_function(raw.__func__):
            return None
        callee = self.module_callee(raw.__func__)
        if callee is None or not _positional(callee.template) or \
                _positional(callee.template)[0] in _stored_names_in_body(callee.template) or \
                any(isinstance(n, gast.Name) and n.id == "super"
                    for n in gast.walk(callee.template)):
            return None
        return raw.__func__

    def with_receiver(self, call):
        """``call``, with the object as the first argument where it calls a method
        of an object this pass made (the class, where it calls a ``classmethod``
        of a class, :meth:`class_method`); and the object's class (None for a
        plain call)."""
        if isinstance(call.func, gast.Name) and call.func.id in self.super_methods:
            return call, self.super_methods[call.func.id]  # super().f(...): self is first
        if self.class_method(call) is not None:
            return gast.copy_location(gast.Call(
                func=call.func, args=[gast.copy_location(name_node(call.func.value.id),
                                                         call.func.value)] + list(call.args),
                keywords=list(call.keywords)), call), None
        method = self.method_call(call)
        if method is None or method[1] is None:
            return call, None
        return gast.copy_location(gast.Call(
            func=call.func, args=[gast.copy_location(name_node(call.func.value.id),
                                                     call.func.value)] + list(call.args),
            keywords=list(call.keywords)), call), method[1]

    # --- objects made here -------------------------------------------------------------
    def construction(self, stmt):
        """The class of ``name = Cls(...)`` where this pass makes the object (its
        ``__init__`` inlined, its attributes names), else None."""
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call)):
            return None
        name, call = stmt.targets[0].id, stmt.value
        if name not in self.locals or name in self.excluded or \
                any(isinstance(a, gast.Starred) for a in call.args) or \
                any(k.arg is None for k in call.keywords):
            return None
        cls = resolve_dotted(call.func, self.parsed.resolve, self.locals)
        return cls if _made_class(cls) else None

    def construct(self, stmt, cls, stack):
        """``name = cls(...)``: the statements of ``cls.__init__`` with ``self`` the
        name, after a marker where the object is made (``scalar_objects.py``)."""
        name, call = stmt.targets[0].id, stmt.value
        marker = gast.copy_location(gast.Expr(value=gast.Constant(
            value=Constructed(name, cls), kind=None)), stmt)
        if records.record_class(cls):
            return self.construct_record(stmt, cls, marker, stack)
        init = inspect.getattr_static(cls, "__init__")
        if init is object.__init__:
            if call.args or call.keywords:
                raise _NotInlined  # TypeError: the lowering's to tell
            self.constructed.setdefault(name, set()).add(cls)
            return [marker]
        if not _plain_user_function(init):
            raise _NotInlined
        callee = self.module_callee(init)
        if callee is None or callee.generator or any(callee.identity is f for f in stack) or \
                self.statements + callee.size > _MOST_STATEMENTS:
            raise _NotInlined
        bound = gast.copy_location(gast.Call(
            func=call.func, args=[gast.copy_location(name_node(name), stmt.targets[0])] +
            list(call.args), keywords=list(call.keywords)), call)
        prelude, fnode = self.instantiate(callee, bound, receiver=cls)
        body = _single_exit(fnode.body, None, self.effects)
        self.note_origin(callee, body, call)
        self.statements += _count(body)
        self.constructed.setdefault(name, set()).add(cls)
        self.block(prelude, stack)
        self.block(body, stack + (callee.identity,))
        return self.without_given_lambdas(prelude, body) + [marker] + body

    def construct_record(self, stmt, cls, marker, stack):
        """``name = cls(...)`` of a named tuple or dataclass class: the statements of
        the constructor Python runs (``records.constructor``), with ``self`` the
        name, after the marker where the object is made."""
        name, call = stmt.targets[0].id, stmt.value
        made = records.constructor(cls, call, self.denote)
        if made is None or cls in stack:
            raise _NotInlined  # (a TypeError: the lowering's to tell)
        template, defaults = made
        callee = _Callee(cls, cls.__name__, self.parsed, template, defaults, closure=True,
                         generator=False)
        if self.statements + callee.size > _MOST_STATEMENTS:
            raise _NotInlined
        bound = gast.copy_location(gast.Call(
            func=call.func, args=[gast.copy_location(name_node(name), stmt.targets[0])] +
            list(call.args), keywords=list(call.keywords)), call)
        prelude, fnode = self.instantiate(callee, bound)
        body = fnode.body
        self.constructor_stores.update(id(s.targets[0]) for s in body
                                       if isinstance(s, gast.Assign))
        self.note_origin(callee, body, call)
        self.statements += _count(body)
        self.constructed.setdefault(name, set()).add(cls)
        self.block(prelude, stack)
        self.block(body, stack + (cls,))
        return self.without_given_lambdas(prelude, body) + [marker] + body

    def property_reads(self, node):
        """``node`` with each ``m.ratio`` where ``m`` is an object this pass made
        (a named tuple, a dataclass, a plain class's) and ``ratio`` a property of
        its class whose getter is the user's written as the getter's call ``ratio_of_Mixture(m)`` (inlined then
        like a method; where it is not, ``m`` is handed on and stays the lowering's)."""
        inliner = self

        class Reads(gast.NodeTransformer):
            def visit_Attribute(self, attr):
                self.generic_visit(attr)
                classes = inliner.constructed.get(getattr(attr.value, "id", None), ())
                if not (isinstance(attr.value, gast.Name) and isinstance(attr.ctx, gast.Load)
                        and len(classes) == 1 and _made_class(next(iter(classes)))):
                    return attr
                cls = next(iter(classes))
                raw = inspect.getattr_static(cls, attr.attr, None)
                if records.record_class(cls) and attr.attr in records.fields(cls) or \
                        not (isinstance(raw, property) and _plain_user_function(raw.fget)):
                    return attr
                name = inliner.denote(raw.fget, f"{attr.attr}_of_{cls.__name__}")
                inliner.super_methods[name] = cls
                return gast.copy_location(gast.Call(
                    func=gast.copy_location(name_node(name), attr),
                    args=[attr.value], keywords=[]), attr)

        return Reads().visit(node)

    def denote(self, obj, stem):
        """A fresh name the function reads ``obj`` by (a record's default factory)."""
        name = fresh_name(stem, self.taken)
        self.taken.add(name)
        self.parsed.inlined_names[name] = (DenotedObject(obj), name)
        return name

    def module_callee(self, fn):
        if fn not in self.callees:
            try:
                helper = parse_function(fn)
            except Exception:  # noqa: BLE001 - the lowering reports it where it inlines
                self.callees[fn] = None
            else:
                defaults = dict(zip(_positional(helper.node)[
                    len(_positional(helper.node)) - len(fn.__defaults__ or ()):],
                    fn.__defaults__ or ()))
                defaults.update(fn.__kwdefaults__ or {})
                name = fn.__name__ if fn.__name__.isidentifier() else "lambda"
                self.callees[fn] = _writable(_Callee(
                    fn, name, helper, _prepared(helper.node, helper), defaults, closure=False,
                    generator=inspect.isgeneratorfunction(fn)))
        return self.callees[fn]

    def local_callee(self, name):
        """A ``def`` (or ``name = lambda ...``) of the caller's own body: its names
        other than its own are the caller's (a closure), read where it is called."""
        node = self.local_functions[name]
        if node not in self.callees:
            if isinstance(node, gast.Assign):  # sq = lambda v: ...
                lam = node.value
                fnode = gast.FunctionDef(**{f: None for f in gast.FunctionDef._fields})
                fnode.name, fnode.args = name, copy.deepcopy(lam.args)
                fnode.body = [gast.copy_location(
                    gast.Return(value=copy.deepcopy(lam.body)), lam)]
                fnode.decorator_list = []
                if "type_params" in gast.FunctionDef._fields:
                    fnode.type_params = []
                gast.copy_location(fnode, node)
                fnode.end_lineno = getattr(node, "end_lineno", node.lineno)
            else:
                fnode = copy.deepcopy(node)
            args = fnode.args
            positional = _positional(fnode)
            defaults = dict(zip(positional[len(positional) - len(args.defaults):],
                                args.defaults))
            defaults.update({a.id: d for a, d in zip(args.kwonlyargs, args.kw_defaults)
                             if d is not None})
            # a name read by a default is never rebound after the def (def_defaults.py
            # bound the function's own names where the def runs): read at the call
            if any(not isinstance(d, (gast.Constant, gast.Name)) for d in defaults.values()):
                self.callees[node] = None  # evaluated where the def ran, not here
            else:
                self.callees[node] = _writable(_Callee(
                    node, name, self.parsed, _prepared(fnode),
                    {p: d.value if isinstance(d, gast.Constant) else d
                     for p, d in defaults.items()}, closure=True,
                    generator=_has(fnode.body, (gast.Yield,))))
        return self.callees[node]

    def inline(self, call, target, stack):
        """The statements of the called function's body, for ``target = call``
        (``target`` None: its value is not used)."""
        callee = self.prepare(call, stack)
        if target is not None and not _always_returns(callee.template.body):
            raise _NotInlined  # the lowering says it can end without returning a value
        call, receiver = self.with_receiver(call)
        prelude, fnode = self.instantiate(callee, call, receiver=receiver)
        self.made_as_target(fnode, target)
        body = _single_exit(fnode.body, target, self.effects)
        self.note_origin(callee, body, call)
        self.statements += _count(body)
        # the helper's own defs, renamed apart: called in its body, inlined there
        self.local_functions.update(_local_functions(fnode, body))
        self.block(prelude, stack)
        self.block(body, stack + (callee.identity,))
        return self.without_given_lambdas(prelude, body) + body

    def made_as_target(self, fnode, target):
        """``other = make(W)`` where ``make`` makes ``made = Cls(...)``, changes it
        and ends ``return made``: the helper's ``made`` (its own local, bound once,
        by that construction) is named ``target`` in ``fnode``, the copy inlined,
        where ``target`` is no name of it -- the object is then made under the
        caller's name, not handed on to it (``other = made``, an object the lowering
        kept)."""
        if target is None:
            return
        returns = [n for n in _own_nodes(fnode) if isinstance(n, gast.Return)]
        if not returns or not all(isinstance(r.value, gast.Name) for r in returns) or \
                len({r.value.id for r in returns}) != 1:
            return
        local = returns[0].value.id
        named = [n for n in gast.walk(fnode) if isinstance(n, gast.Name)]
        bound = [n for n in named if n.id == local and not isinstance(n.ctx, gast.Load)]
        if local == target or any(n.id == target for n in named) or len(bound) != 1 or \
                _nested_scopes(fnode) or any(isinstance(n, (gast.Global, gast.Nonlocal))
                                             for n in gast.walk(fnode)):
            return
        made = next((st for st in fnode.body if isinstance(st, gast.Assign) and
                     len(st.targets) == 1 and st.targets[0] is bound[0]), None)
        if made is None or not isinstance(made.value, gast.Call) or not _made_class(
                resolve_dotted(made.value.func, self.parsed.resolve, self.locals)):
            return
        for n in named:
            if n.id == local:
                n.id = target

    def without_given_lambdas(self, prelude, body):
        """``prelude`` without its ``f_2 = lambda ...`` bindings of lambdas given as
        arguments, once every call of them is inlined; where one is not (a call the
        lowering inlines), the whole call stays the lowering's, which keeps the
        lambda as the parameter's value (a lambda bound in a loop it refuses)."""
        read = {n.id for s in prelude + body for n in gast.walk(s)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
        given = [s for s in prelude if isinstance(s, gast.Assign) and
                 isinstance(s.value, gast.Lambda) and
                 self.local_functions.get(s.targets[0].id) is s]
        if any(s.targets[0].id in read for s in given):
            raise _NotInlined
        return [s for s in prelude if s not in given]

    def generator_loop(self, loop, stack):
        """``for target in gen(...): body`` over a user generator: the generator's
        statements, each ``yield value`` written ``target = value`` and the body."""
        continues = _own_exits(loop.body, gast.Continue)
        breaks = _own_exits(loop.body, gast.Break)
        # a return in the body returns from the caller (the generator's body has none,
        # _writable); the breaks and continues are written as returns of the body
        if loop.orelse or not isinstance(loop.iter, gast.Call) or \
                (breaks or continues) and _has(loop.body, (gast.Return,)) or \
                continues and _continues_as_paths(copy.deepcopy(loop.body)) is None:
            raise _NotInlined
        callee = self.prepare(loop.iter, stack, generator=True)
        if any(isinstance(n, gast.Yield) and (n.value is None or id(n) not in _statement_yields(
                callee.template)) for s in callee.template.body for n in _own_nodes(s)):
            raise _NotInlined  # a yield used as a value, or a bare yield
        # the body rebinds the caller's names while the generator runs: an argument
        # naming one is the object it named when the loop began
        # (an object the body makes anew, its __init__ already inlined, is its marker)
        rebound = {n.id for s in loop.body + [loop.target] for n in gast.walk(s)
                   if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del))}
        rebound |= {n.value.name for s in loop.body for n in gast.walk(s)
                    if isinstance(n, gast.Constant) and isinstance(n.value, Constructed)}
        iterated, receiver = self.with_receiver(loop.iter)
        prelude, fnode = self.instantiate(callee, iterated, rebound, receiver)
        self.note_origin(callee, fnode.body, loop.iter)

        def at_yields(stmts):
            out = []
            for s in stmts:
                if isinstance(s, gast.Expr) and isinstance(s.value, gast.Yield):
                    out.append(gast.copy_location(gast.Assign(
                        targets=[self.copy(loop.target)], value=s.value.value,
                        type_comment=None), s))
                    at_yield = [self.copy(b) for b in loop.body]
                    if continues:  # the rest of the body skipped, the generator goes on
                        at_yield = _continues_as_paths(at_yield)
                    out.extend(_breaks_as_returns(b) for b in at_yield)
                    continue
                for block in statement_blocks(s):
                    block[:] = at_yields(block)
                out.append(s)
            return out
        body = at_yields(fnode.body)
        if breaks:
            # a break ends the generator where it stands: a return of the generator's
            # body, written as flags and breaks out of its loops, then the rest of
            # its body in the other path of each return
            fnode.body = body
            desugar_loop_exits(fnode, self.taken)
            body = _single_exit(fnode.body, None)
        self.statements += _count(body)
        # the generator's own defs, renamed apart: called in its body, inlined there
        self.local_functions.update(_local_functions(fnode, body))
        self.block(prelude, stack)
        self.block(body, stack + (callee.identity,))
        return self.without_given_lambdas(prelude, body) + body

    def instantiate(self, callee, call, rebound=frozenset(), receiver=None):
        """``(prelude, fnode)``: the statements binding the parameters that need a
        name of their own, and a copy of the callee with its names renamed and its
        parameters replaced by the caller's names that stand for them
        (``receiver``: the class of the object a method is called on)."""
        fnode = copy.deepcopy(callee.template)
        resolved = self.resolve_super(callee, fnode, receiver) if receiver is not None \
            else set()
        prelude, substituted, rename, spread = self.parameters(callee, fnode, call, rebound)
        # `nonlocal s` of a closure: s is the caller's name, kept (prepare checked it)
        fnode.body = _without_nonlocals(fnode.body)
        rename.update(self.locals_of(fnode, set(rename) | set(substituted) | callee.nonlocals))
        if not callee.closure:
            rename.update(self.free_names(callee.helper, fnode,
                                          set(rename) | set(substituted) | resolved))
        self.parsed.spellings.update((new, old) for old, new in rename.items() if new != old)
        for n in _names_of_the_scope([fnode.args] + fnode.body):
            if n.id in rename:
                n.id = rename[n.id]
        for n, hidden in _names_of_the_scope([fnode.args] + fnode.body, gast.Nonlocal):
            n.names = [name if name in hidden else rename.get(name, name)
                       for name in n.names]  # a nested def's
        self.closure_written.update(name for n in gast.walk(fnode)
                                    if isinstance(n, gast.Nonlocal) for name in n.names)
        for n in gast.walk(fnode):
            if isinstance(n, (gast.FunctionDef, gast.ClassDef)) and n is not fnode and \
                    n.name in rename:
                n.name = rename[n.name]
        fnode.body = [_substitute(s, substituted) for s in fnode.body]
        prelude = self.spread_in_place(fnode, prelude, spread)
        origin = self.parsed.origins.get(call)
        if origin is not None:
            for s in prelude:
                for n in gast.walk(s):
                    if self.parsed.origins.get(n) is None:
                        self.parsed.origins[n] = origin
        return prelude, fnode

    def resolve_super(self, callee, fnode, receiver):
        """Write each ``super().name(...)`` of the method ``fnode`` (a copy of
        ``callee``'s) as a call of the function it runs for an object of class
        ``receiver``, with ``self`` first; ``super().__init__()`` reaching
        ``object`` is dropped.  Returns the names given those functions."""
        args = _positional(fnode)
        if not args or not isinstance(callee.identity, types.FunctionType):
            raise _NotInlined
        me, names = args[0], set()
        rebound = any(isinstance(n, gast.Name) and n.id == me and
                      not isinstance(n.ctx, (gast.Load, gast.Param)) for n in gast.walk(fnode))
        for block in reversed(list(statement_lists(fnode))):  # inner blocks first
            for stmt in list(block):
                for node in gast.walk(stmt):
                    if not _super_call(node, None if rebound else me):
                        continue
                    if node.func.value.args:  # super(Cls, self): after Cls in self's order
                        fn = _after(receiver, resolve_dotted(
                            node.func.value.args[0], callee.helper.resolve,
                            local_names(fnode)), node.func.attr)
                    else:
                        fn = next_method(receiver, callee.identity, node.func.attr)
                    if fn is object.__init__ and not node.args and not node.keywords and \
                            isinstance(stmt, gast.Expr) and stmt.value is node:
                        block.remove(stmt)  # object.__init__(self) does nothing
                        if not block:
                            block.append(gast.copy_location(gast.Pass(), stmt))
                        break
                    if not _plain_user_function(fn):
                        raise _NotInlined  # the lowering's SuperValue reads it
                    name = fresh_name(f"{fn.__name__}_of_{fn.__qualname__.split('.')[0]}",
                                      self.taken)
                    self.taken.add(name)
                    self.parsed.inlined_names[name] = (DenotedObject(fn), name)
                    names.add(name)
                    self.super_methods[name] = receiver
                    node.func = gast.copy_location(name_node(name), node.func)
                    node.args = [gast.copy_location(name_node(me), node)] + node.args
        if any(isinstance(n, gast.Name) and n.id == "super" for n in gast.walk(fnode)):
            raise _NotInlined  # a super object kept, super(Cls, other)
        return names

    def copy(self, node):
        """A deep copy of ``node`` whose nodes keep the origins and call sites of
        the originals."""
        return copied(self.parsed, node)

    def spread_in_place(self, fnode, prelude, spread):
        """``prelude`` after writing, in ``fnode`` (a copy being inlined), each
        spread of a gathered parameter ``spread`` names ({its new name: the
        display of the call's items}) as that display: ``g(*args)`` as ``g(*(a,
        b))``, ``g(**kwargs)`` as ``g(**{"k": v})`` -- the same objects, each item
        standing for itself (a computed one is bound first, :meth:`parameters`),
        which ``spread_arguments.py``
        writes as ``g(a, b, k=v)`` after the round.  A spread in a nested
        ``def`` or ``lambda`` keeps the name (the closure keeps the call's tuple);
        the binding goes where nothing reads the name any more."""
        if not spread:
            return prelude
        kinds = {name: gast.Dict if isinstance(display, gast.Dict) else gast.Tuple
                 for name, display in spread.items()}
        # (not in a comprehension either: its variable may be a name an item reads)
        for node in own_scope_nodes(fnode, comprehensions=False):
            if isinstance(node, gast.Starred):
                kind = gast.Tuple
            elif isinstance(node, gast.keyword) and node.arg is None:
                kind = gast.Dict
            else:
                continue
            value = node.value
            if isinstance(value, gast.Name) and isinstance(value.ctx, gast.Load) and \
                    kinds.get(value.id) is kind:
                node.value = gast.copy_location(self.copy(spread[value.id]), value)
        read = {n.id for n in gast.walk(fnode)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
        return [s for s in prelude if not (
            isinstance(s, gast.Assign) and s.targets[0].id in spread and
            s.targets[0].id not in read)]

    def parameters(self, callee, fnode, call, rebound):
        """The statements binding the parameters that need a name of their own,
        {parameter: the caller's node standing for it}, {parameter: its new
        name} and {new name: display} of the gathered parameters (``*args``,
        ``**kwargs``) whose spreads may be written as their items
        (:meth:`spread_in_place`)."""
        args = fnode.args
        positional = _positional(fnode)
        keyword_only = [a.id for a in args.kwonlyargs]
        if len(call.args) > len(positional) and args.vararg is None:
            raise _NotInlined
        given = dict(zip(positional, call.args))
        extra = list(call.args[len(positional):])  # def f(*args): a tuple of them
        if args.vararg is not None:
            given[args.vararg.id] = gast.copy_location(
                gast.Tuple(elts=extra, ctx=gast.Load()), extra[0] if extra else call)
        keywords = []  # def f(**kwargs): a dict of the other keywords
        for k in call.keywords:
            if k.arg in given or k.arg in positional[:len(args.posonlyargs)]:
                raise _NotInlined
            if k.arg not in positional + keyword_only:
                if args.kwarg is None:
                    raise _NotInlined
                keywords.append(k)
                continue
            given[k.arg] = k.value
        if args.kwarg is not None:
            given[args.kwarg.id] = gast.copy_location(gast.Dict(
                keys=[gast.Constant(value=k.arg, kind=None) for k in keywords],
                values=[k.value for k in keywords]), keywords[0].value if keywords else call)
        gathered = {a.id for a in (args.vararg, args.kwarg) if a is not None}
        defaults = callee.defaults
        stored = _stored_names_in_body(fnode)
        added_into = _added_into(fnode)  # p += v: in place when p is an array
        nested = _nested_scopes(fnode)  # a caller's name read there may be captured
        prelude, substituted, rename, spread = [], {}, {}, {}
        # the arguments are evaluated in the order the call writes them, then the defaults
        order = {id(node): k for k, node in enumerate(list(call.args) +
                                                      [k.value for k in call.keywords])}

        def first_evaluated(p):
            node = given.get(p)
            if isinstance(node, gast.Tuple) and p in gathered:
                node = node.elts[0] if node.elts else None
            elif isinstance(node, gast.Dict) and p in gathered:
                node = node.values[0] if node.values else None
            return order.get(id(node), len(order))
        params = sorted(positional + keyword_only + sorted(gathered), key=first_evaluated)
        # **kwargs given f(x, scale=s(), b=g(), shift=k()): Python evaluates s(), g(),
        # k() in that order, so an item of the dict evaluated after a named keyword
        # is bound where it stands (shift = k()), the dict after its last item; so is
        # each computed item of a display the body spreads (g(*args): its items then
        # stand for themselves, spread_in_place)
        keys = {p: first_evaluated(p) for p in params}
        spread_in_body = {n.value.id for n in own_scope_nodes(fnode, comprehensions=False)
                          if (isinstance(n, gast.Starred) or
                              isinstance(n, gast.keyword) and n.arg is None) and
                          isinstance(n.value, gast.Name)}
        for p in gathered & set(given):
            items = given[p].values if isinstance(given[p], gast.Dict) else given[p].elts
            at = [order[id(item)] for item in items]
            if not items or not any(at[0] < order.get(id(given[q]), -1) < at[-1]
                       for q in given if q not in gathered) and \
                    not (p in spread_in_body and p not in stored and
                         not _captured(nested, p, given[p])):
                continue
            for k, (item, where) in enumerate(zip(items, at)):
                if self.stands_for_itself(item):
                    continue
                stem = given[p].keys[k].value if isinstance(given[p], gast.Dict) else \
                    f"{p}_{k}"
                name = fresh_name(stem, self.taken)
                self.locals.add(name)
                prelude.append((where, gast.copy_location(
                    gast.Assign(targets=[store_node(name)], value=item, type_comment=None),
                    call)))
                items[k] = gast.copy_location(name_node(name), item)
            keys[p] = at[-1] + 0.5
        for p in params:
            if p in given:
                value = given[p]
            elif p in defaults and isinstance(defaults[p], gast.Name):  # def g(v, k=g_k)
                value = gast.copy_location(name_node(defaults[p].id), call)
            elif p in defaults and isinstance(defaults[p], _SIMPLE_CONSTANTS):
                value = gast.copy_location(gast.Constant(value=defaults[p], kind=None), call)
            elif p in defaults and _kept_default(defaults[p]):  # act=np.tanh, w=np.ones(3)
                name = fresh_name(f"{p}_default", self.taken)
                self.parsed.inlined_names[name] = (DenotedObject(
                    defaults[p], default_of=(callee.name, p)
                    if _default_numbers(defaults[p]) else None), name)
                value = gast.copy_location(name_node(name), call)
            else:
                raise _NotInlined  # a missing argument, or a default the helper may change
            if p in added_into and isinstance(value, gast.Name) and \
                    self.surely_an_array(value.id) and value.id not in rebound and \
                    value.id not in self.closure_written and not _captured(nested, p, value):
                substituted[p] = value  # p += v writes into the caller's array
                continue
            # else `p_2 = value` as Python binds a parameter: `p_2 += v` then writes
            # into the caller's array when it is one (the view pass follows it), and
            # rebinds p_2 when not
            if p not in stored and (self.stands_for_itself(value) or
                                    self.made_objects_method(value)) and \
                    not any(isinstance(n, gast.Name) and n.id in rebound
                            for n in gast.walk(value)) and not _captured(nested, p, value):
                substituted[p] = value  # (model.rhs: f(u, t) is model.rhs(u, t))
                continue
            name = fresh_name(p, self.taken)
            self.locals.add(name)
            prelude.append((keys[p], gast.copy_location(
                gast.Assign(targets=[store_node(name)], value=value, type_comment=None),
                call)))
            if isinstance(value, gast.Lambda) and p not in stored:
                self.local_functions[name] = prelude[-1][1]  # f_2 = lambda y: ...: inlined too
            if p in gathered and p not in stored and self.spreads_itself(value, rebound):
                spread[name] = value  # g(*args): g(*(a, b)), the same objects
            rename[p] = name
        prelude = [stmt for _, stmt in sorted(prelude, key=lambda entry: entry[0])]
        return prelude, substituted, rename, spread

    def spreads_itself(self, display, rebound):
        """Is ``display`` (the tuple of a call's extra arguments, or the dict of
        its extra keywords) one whose items each stand for themselves
        (:meth:`stands_for_itself`), none a name the caller rebinds while the
        body runs (``rebound``: a generator loop's body), so that spreading the
        display where the body spreads the parameter passes the objects the call
        gave?"""
        items = display.elts if isinstance(display, gast.Tuple) else display.values
        return all(self.stands_for_itself(item) and
                   not (isinstance(item, gast.Name) and item.id in rebound)
                   for item in items)

    def effects(self, value):
        """May evaluating ``value`` (a returned value nobody reads) change anything?"""
        return _calls(value) and not only_computes(
            value, lambda n: resolve_dotted(n, self.parsed.resolve, self.locals))

    def surely_an_array(self, name):
        """Is the caller's local ``name`` an array on every binding (so ``p += v``
        on a parameter bound to it writes into it)?"""
        return name in self.locals and \
            LocalBindings(self.fnode, self.parsed.resolve).facts().array(name) is not None

    def stands_for_itself(self, node):
        """May ``node`` be read anew wherever the parameter is read?  A name of
        the caller (the parameter is never rebound: the same object), a constant,
        or a dotted name of a module (``np.tanh``); not a name a closure rebinds
        (``nonlocal``)."""
        if isinstance(node, gast.Name):
            return node.id not in self.closure_written
        if isinstance(node, gast.Constant):
            return True
        if isinstance(node, gast.Attribute):
            root = node
            while isinstance(root, gast.Attribute):
                root = root.value
            return isinstance(root, gast.Name) and root.id not in self.locals and \
                isinstance(self.parsed.resolve(root.id), types.ModuleType)
        return False

    def made_objects_method(self, node):
        """Is ``node`` ``obj.name``, a method (a plain function of the user's) of
        an object this pass made, handed to a helper (``rk4(model.rhs, u, dt)``)?
        The parameter may then stand for ``obj.name`` wherever the helper reads
        it: reading it again makes the same bound method (the object is the
        caller's name, which the helper cannot rebind; ``scalar_objects.py``
        keeps an object whose class attribute ``name`` is stored over, and the
        round checks the function stores no class's ``name``, ``bound_methods``).
        A call ``f(u, t)`` is then ``model.rhs(u, t)``, inlined like any other."""
        if not (isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name)):
            return False
        classes = self.constructed.get(node.value.id, ())
        if len(classes) != 1 or node.value.id in self.closure_written:
            return False
        found = method_function(next(iter(classes)), node.attr)
        if found is None or not found[1] or not _plain_user_function(found[0]):
            return False
        self.bound_methods.add((node.value.id, node.attr))
        return True

    def locals_of(self, fnode, done):
        """The helper's own names, each a name the caller does not use."""
        found = {}
        for name in sorted(local_names(fnode) - done):
            found[name] = fresh_name(name, self.taken)
            self.locals.add(found[name])
        return found

    def free_names(self, helper, fnode, done):
        """The names the helper reads from outside it: kept where the caller's
        function sees the same object under that name, else a fresh name the
        caller's function resolves in the helper's namespace."""
        bound = _stored_names(fnode) | done
        found = {}
        for n in gast.walk(fnode):
            if not isinstance(n, gast.Name) or n.id in bound or n.id in found:
                continue
            obj = helper.resolve(n.id)
            if obj is _UNRESOLVED:
                raise _NotInlined  # the lowering names it where it inlines the helper
            if n.id not in self.locals and self.parsed.resolve(n.id) is obj:
                self.taken.add(n.id)  # no local of a later helper may take it
                continue
            name = n.id if n.id not in self.taken and n.id not in self.locals else \
                fresh_name(n.id, self.taken)
            if self.parsed.resolve(name) is not _UNRESOLVED and name not in \
                    self.parsed.inlined_names:
                name = fresh_name(n.id, self.taken | {name})
            self.taken.add(name)
            self.parsed.inlined_names[name] = (helper, n.id)
            found[n.id] = name
        return found

    def note_origin(self, callee, body, call):
        """Note, for each node of the inlined ``body``, the helper it comes from and
        the line of the ``call`` it was inlined for (refusals name both)."""
        helper = callee.helper
        if helper is not self.parsed and helper.filename == self.parsed.filename:
            self.parsed.inlined_lines.update(helper.annotated_lines(helper.node))
        # the helper, the line calling it, and where that line was inlined from
        site = (callee.name, getattr(call, "lineno", None), self.parsed.call_sites.get(call))
        places = self.parsed.inlined_places
        for stmt in body:
            for n in gast.walk(stmt):
                if self.parsed.call_sites.get(n) is None:
                    self.parsed.call_sites[n] = site
                if helper is not self.parsed and self.parsed.origins.get(n) is None:
                    self.parsed.origins[n] = helper
                where = place_of(n)
                if where[0] is None:
                    continue
                fact = (helper if helper is not self.parsed else None,
                        self.parsed.call_sites.get(n))
                known = places.get(where, fact)
                if where in self.own_places or known is None or known[0] is not fact[0]:
                    places[where] = None  # two files' nodes at one place: not told apart
                elif known != fact:
                    places[where] = (fact[0], None)  # one helper called at two places
                else:
                    places[where] = fact



#: the expressions whose parts Python evaluates in the order of their fields
_IN_ORDER = (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Call, gast.Subscript,
             gast.Attribute, gast.Tuple, gast.List, gast.Slice, gast.keyword,
             gast.JoinedStr, gast.FormattedValue)


def _evaluated_in_order(node):
    """The expressions ``node`` evaluates, in order (its fields' order)."""
    children = []
    for _, value in gast.iter_fields(node):
        if isinstance(value, (gast.expr, gast.keyword)):
            children.append(value)
        elif isinstance(value, list):
            children.extend(item for item in value if isinstance(item, (gast.expr, gast.keyword)))
    return children


class _ReplaceChild(gast.NodeTransformer):
    """``.generic_visit(parent)``: ``old``, a child of ``parent``, replaced by ``new``."""

    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit(self, node):
        return self.new if node is self.old else node


def _added_into(fnode):
    """The parameters of ``fnode`` its body binds only by ``p += v`` (not ``@=``)."""
    params = set(_positional(fnode)) | {a.id for a in fnode.args.kwonlyargs}
    added, other = set(), set()
    for stmt in fnode.body:
        for n in gast.walk(stmt):
            if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
                (other if isinstance(n.op, gast.MatMult) else added).add(n.target.id)
    for stmt in fnode.body:
        for n in gast.walk(stmt):
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)) and \
                    not _is_aug_target(n, stmt):
                other.add(n.id)
    return (added - other) & params


def _is_aug_target(name, stmt):
    return any(isinstance(n, gast.AugAssign) and n.target is name for n in gast.walk(stmt))



def _stored_names_in_body(fnode):
    names = set()
    for stmt in fnode.body:
        for n in gast.walk(stmt):
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
                names.add(n.id)
    return names


def _substitute(node, values):
    """``node`` with each Name (read) of ``values`` replaced by a copy of its node
    (not where a nested ``def`` or ``lambda`` binds that name itself)."""
    if not values:
        return node
    # p += v on a parameter given the caller's array: into that array, by its name
    added = {id(n.target) for n in gast.walk(node) if isinstance(n, gast.AugAssign)}
    replaced = {id(n) for n in _names_of_the_scope([node])
                if n.id in values and (isinstance(n.ctx, gast.Load) or id(n) in added and
                                       isinstance(values[n.id], gast.Name))}

    class Substitute(gast.NodeTransformer):
        def visit_Name(self, name):
            if id(name) not in replaced:
                return name
            if isinstance(name.ctx, gast.Store):
                return gast.copy_location(store_node(values[name.id].id), name)
            return gast.copy_location(copy.deepcopy(values[name.id]), name)
    return Substitute().visit(node)


def _names_of_the_scope(nodes, kind=gast.Name):
    """The Name nodes in ``nodes`` that name a binding of the scope they are in,
    not those of a nested ``def`` or ``lambda`` that binds the same name itself
    (its parameter ``a`` is not the helper's ``a``).  Its defaults and decorators
    are the enclosing scope's.  ``kind`` ``gast.Nonlocal``: ``(statement, names
    hidden)`` for the ``nonlocal`` statements of nested ``def`` statements, whose
    names not hidden (bound by a ``def`` between) are of the scope."""
    stack = [(n, frozenset()) for n in nodes]
    while stack:
        n, hidden = stack.pop()
        if isinstance(n, gast.Name):
            if kind is gast.Name and n.id not in hidden:
                yield n
            continue
        if isinstance(n, gast.Nonlocal):
            if kind is gast.Nonlocal:
                yield n, hidden  # (the def declaring it does not hide its names)
            continue
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
            args = n.args
            stack.extend((d, hidden) for d in args.defaults + [
                d for d in args.kw_defaults if d is not None] + getattr(n, "decorator_list", []))
            inner = hidden | _bound_in_scope(n)
            body = n.body if isinstance(n.body, list) else [n.body]
            stack.extend((c, inner) for c in [args] + body)
            continue
        stack.extend((c, hidden) for c in gast.iter_child_nodes(n))


def _bound_in_scope(scope):
    """The names a nested ``def`` or ``lambda`` binds itself: its parameters and
    its locals, less those it declares ``nonlocal`` or ``global``."""
    if isinstance(scope, gast.Lambda):
        return set(parameter_names(scope))
    declared = {name for n in own_scope_nodes(scope)
                if isinstance(n, (gast.Nonlocal, gast.Global)) for name in n.names}
    return local_names(scope) - declared


def _declared_nonlocal(fnode):
    """The names ``fnode`` declares ``nonlocal`` in its own scope."""
    return {name for n in own_scope_nodes(fnode) if isinstance(n, gast.Nonlocal)
            for name in n.names}


def _without_nonlocals(stmts):
    """``stmts`` (a closure's body, inlined) without the ``nonlocal`` statements of
    its own scope: the names they declare are the caller's, where the body now runs."""
    out = []
    for s in stmts:
        if isinstance(s, gast.Nonlocal):
            continue
        for block in statement_blocks(s):
            if block:
                block[:] = _without_nonlocals(block) or [gast.copy_location(gast.Pass(), s)]
        out.append(s)
    return out


def _returns_in(stmt):
    return any(isinstance(n, gast.Return) for n in _own_nodes(stmt))


def _single_exit(stmts, target, effects=None):
    """``stmts`` with each ``return value`` written ``target = value`` as the last
    statement of its path (``target`` None: the value is evaluated for its effects
    when ``effects(value)`` says it may have some, else dropped)."""
    effects = effects or _calls
    for i, s in enumerate(stmts):
        if isinstance(s, gast.Return):
            return stmts[:i] + _result(s, target, effects)
        if isinstance(s, gast.If) and _returns_in(s):
            rest = stmts[i + 1:]
            s.body = _single_exit(s.body + copy.deepcopy(rest), target, effects)
            s.orelse = _single_exit(s.orelse + copy.deepcopy(rest), target, effects)
            if not s.body and not s.orelse:
                return stmts[:i] + ([gast.copy_location(gast.Expr(value=s.test), s)]
                                    if effects(s.test) else [])
            if not s.body:  # if returned: (nothing) else: rest -> if not returned: rest
                s.test = gast.copy_location(gast.UnaryOp(op=gast.Not(), operand=s.test), s.test)
                s.body, s.orelse = s.orelse, []
            return stmts[:i] + [s]
    return stmts


def _calls(node):
    return any(isinstance(n, gast.Call) for n in gast.walk(node))


def _result(ret, target, effects):
    value = ret.value
    if target is None:
        if value is not None and effects(value):
            return [gast.copy_location(gast.Expr(value=value), ret)]
        return []
    if value is None:
        value = gast.Constant(value=None, kind=None)
    if isinstance(value, gast.Name) and value.id == target:
        return []  # `return u` of the caller's u into u: nothing to do
    return [gast.copy_location(gast.Assign(targets=[store_node(target)], value=value,
                                           type_comment=None), ret)]
