"""What a call of the user's own code returns and stores, for the aliasing fence
(``aliasing.py``): a module-level function, a method of an object made in the
function, or a class's constructor is read once (:func:`helper_summary`), and
its answer is put in the caller's terms at each call -- each array the helper
makes is a new array made at the call, each parameter the argument bound to it.
A helper the fence cannot read counts as maybe returning its arguments."""

import inspect
import types
import weakref

import gast

from tangent_ckpt.compiler.fence.alias_values import _Info, _base_name
from tangent_ckpt.compiler.desugar.method_writes import method_of
from tangent_ckpt.compiler.frontend.reached_functions import user_class, user_object
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.errors import TangentCkptError

_LIBRARIES = ("numpy", "scipy", "tangent_ckpt", "builtins")


class HelperCalls:
    """Calls of the user's helpers, mixed into the fence (which provides
    ``info``, ``set``, ``free_info``, ``resolve``, ``_union``, ``objects``,
    ``analysing`` and the site sets; ``Origins._call_info`` asks
    ``known_methods``, ``helper_result`` and ``constructed``)."""

    def returned_info(self, fdef, args, env):
        """What a call of the local function ``fdef`` may return, or None when not
        known: new objects only (its returns hold nothing of its parameters or of
        names outside it, it is no generator) -> a new object at the call."""
        known = self.returns_new.get(id(fdef))
        if known is None:
            known = id(fdef) not in self.analysing and \
                not any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in gast.walk(fdef))
            if known:
                inner = type(self)(self.parsed, fdef, (), checking=False,
                                   analysing=self.analysing)
                inner.run()
                known = all(o[0] == "site" for o in inner.returned.everything())
            self.returns_new[id(fdef)] = known
        return _Info() if known else None

    def known_methods(self, node):
        """The functions ``obj.m(...)`` runs for ``obj`` a name bound only to
        objects of user classes made in the function, or None."""
        func = node.func
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and \
                func.value.id in self.objects:
            return method_of(self.objects[func.value.id], func.attr)
        return None

    def constructed(self, cls, node, env):
        """``Adam(lr=lr)``: a new object (a user's class without its own
        ``__new__``), holding what its ``__init__`` stores into it (or, when that
        is not known, anything the arguments are or hold); None for anything
        else."""
        if not (user_class(cls) and cls.__new__ is object.__new__):
            return None
        made = ("site", id(node), 0)
        init = inspect.getattr_static(cls, "__init__", None)
        if init is object.__init__:
            return _Info({made})
        call = self.helper_call(init, node, env, made) if \
            isinstance(init, types.FunctionType) else None
        if call is None:
            return _Info({made}, self._union(list(node.args) +
                                              [k.value for k in node.keywords], env).everything())
        summary, at_call, _ = call
        me = init.__code__.co_varnames[0]
        return _Info({made}, _substituted(_Info((), summary.stored.get(me, ())), at_call).holds)

    def helper_result(self, fn, node, env, receiver=None):
        """What a call of the user's module-level function ``fn`` returns, judged
        from its body (:func:`helper_summary`): its new objects are new objects
        made at this call (one per allocation site of the helper, so that
        ``a, b = pair(x)`` are two arrays), its parameters are the arguments they
        are bound to; None when not known (no source, a generator, recursion,
        arguments spread with ``*``/``**``)."""
        if receiver is None:
            fn, receiver = _unbound(fn, node)
        call = self.helper_call(fn, node, env, receiver)
        return None if call is None else _substituted(call[0].returned, call[1])

    def helper_effects(self, node, env):
        """After a call of a user's module-level function: each argument's object
        may hold what the helper stored into its parameter (``lst.append(a)``,
        ``p.x = a``), in the caller's origins."""
        fn = self.resolve(node.func)
        methods = self.known_methods(node) if fn is None else None
        if methods is not None:
            for m in methods:
                self._effects(self.helper_call(m, node, env, node.func.value), env)
        elif fn is not None and user_class(fn) and fn.__new__ is object.__new__ and \
                isinstance(inspect.getattr_static(fn, "__init__", None), types.FunctionType):
            made = ("site", id(node), 0)
            self._effects(self.helper_call(fn.__init__, node, env, made), env)
        elif fn is not None:
            fn, receiver = _unbound(fn, node)  # CELL.forward(h): stores into CELL
            self._effects(self.helper_call(fn, node, env, receiver), env)

    def _effects(self, call, env):
        if call is None:
            return
        summary, at_call, bound = call
        for param, added in summary.stored.items():
            value = bound.get(param)
            nodes = value if isinstance(value, list) else \
                list(value.values()) if isinstance(value, dict) else [value]
            held = _substituted(_Info((), added), at_call).holds
            for n in nodes:
                base = n.id if isinstance(n, gast.Name) else _base_name(n) \
                    if isinstance(n, (gast.Subscript, gast.Attribute)) else None
                if base is not None and held:
                    current = env.get(base, self.free_info(base))
                    self.set(env, base, _Info(current.is_, current.holds | held))

    def helper_call(self, fn, node, env, receiver=None):
        """(summary, the map from the helper's origins to the caller's, the
        arguments bound to its parameters) for a call of ``fn``, or None;
        ``receiver``: the node (or, for a constructor, the origin of the new
        object) bound to a method's first parameter."""
        # self.m() in a method fenced for an object made in the code: m reads the
        # same object, with the same facts (object_facts.py)
        same_object = isinstance(receiver, gast.Name) and receiver.id == self.me and \
            self.me is not None
        summary = helper_summary(fn, type(self), self.analysing,
                                 self.receiver if same_object else None)
        if summary is None:
            return None
        bound = _bound_arguments(fn, node, receiver is not None)
        if bound is None:
            return None
        params = {}
        for name, value in bound.items():
            if value is _RECEIVER:
                if isinstance(receiver, tuple):  # the object a constructor makes
                    params[name] = (frozenset({receiver}), frozenset())
                    bound[name] = None
                    continue
                value = bound[name] = receiver
            if isinstance(value, list):  # *args: a new tuple holding them
                held = self._union(value, env).everything()
                params[name] = (frozenset({("site", (id(node), "*" + name), 0)}), held)
            elif isinstance(value, dict):  # **kwargs: a new dict holding them
                held = self._union(list(value.values()), env).everything()
                params[name] = (frozenset({("site", (id(node), "**" + name), 0)}), held)
            elif value is _DEFAULT:
                params[name] = (frozenset(), frozenset())  # a number, str or None
            else:
                info = self.info(value, env)
                params[name] = (info.is_, info.holds)

        def at_call(origin):
            kind = origin[0]
            if kind == "site":
                key = (id(node), origin[1], origin[2])
                if origin[1] in summary.containers:
                    self.container_sites.add(key)
                if origin[1] in summary.builtin:
                    self.builtin_sites.add(key)
                if origin[1] in summary.index:
                    self.index_sites.add(key)
                return {("site", key, 0)}
            if kind in ("param", "param*"):
                is_, holds = params.get(origin[1], (frozenset(), frozenset()))
                return is_ if kind == "param" else holds
            return {origin}  # a global of the helper's module

        return summary, at_call, bound


def _unbound(fn, node):
    """``CELL.forward(h)``, a user's method bound to an object made outside the
    code: its function and the node of the object it is bound to (its first
    parameter); ``fn`` itself and None for anything else."""
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType) and \
            user_object(fn.__self__) and isinstance(node.func, gast.Attribute):
        return fn.__func__, node.func.value
    return fn, None


_DEFAULT = object()  # a parameter left at an immutable default value
# function -> {_receiver_key(receiver): helper_summary's answer} (None: read alone)
_SUMMARIES = weakref.WeakKeyDictionary()
_TREES = weakref.WeakKeyDictionary()
_ANALYSING = set()  # code objects whose summary is being computed (recursion)


def helper_summary(fn, fence_class, analysing, receiver=None):
    """What the user's module-level function ``fn`` may return, in its own terms
    (``("site", ...)`` new objects, ``("param", p)`` / ``("param*", p)`` its
    parameter ``p`` and what it holds, globals), with the keys of its sites that
    make containers, builtin objects and masks or index arrays; None when not
    known.  ``receiver``: for a method called on an object made in the code,
    what the fence knows of it (``AliasFence``'s ``receiver``)."""
    if not isinstance(fn, types.FunctionType) or \
            (getattr(fn, "__module__", "") or "").split(".")[0] in _LIBRARIES:
        return None
    key = _receiver_key(receiver)
    known = _SUMMARIES.get(fn)
    if known is not None and key in known:
        return known[key]  # None: not known
    code = fn.__code__
    if code in _ANALYSING or code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE |
                                               inspect.CO_ASYNC_GENERATOR):
        return None
    try:
        parsed = parse_function(fn)
    except TangentCkptError:
        parsed = None
    answers = _SUMMARIES.setdefault(fn, {})
    if parsed is None or not isinstance(parsed.node, gast.FunctionDef) or \
            _parameters(parsed.node) != list(code.co_varnames[:_parameter_count(code)]):
        answers[key] = None  # (a def that is not the code that runs: not read)
        return None
    _ANALYSING.add(code)
    try:
        inner = fence_class(parsed, parsed.node, (), checking=False, analysing=analysing,
                            receiver=receiver)
        inner.run()
    except TangentCkptError:
        answers[key] = None
        return None
    finally:
        _ANALYSING.discard(code)
    summary = HelperSummary(inner)
    answers[key] = summary
    # alive as long as the answers: the node ids of the trees name the sites
    _TREES.setdefault(fn, []).append(parsed)
    return summary


def _receiver_key(receiver):
    """``receiver`` as a key of :data:`_SUMMARIES`: its dict of numbered items
    (object_facts.numbered_items, {attribute: positions}) as the sorted pairs.
    (The dict itself made every method's summary for an object made in the code
    crash with "unhashable type: 'dict'", with no file or line.)"""
    if receiver is None:
        return None
    return tuple(tuple(sorted(part.items())) if isinstance(part, dict) else part
                 for part in receiver)


class HelperSummary:
    """What a helper's body shows to its callers: ``returned`` (what it may
    return), ``stored`` (parameter -> what stores into its object, or into an
    object it holds, made it hold, through whichever name: ``lst.append(a)``,
    ``q = lst; q[0].h = a``), and the keys of its sites that make containers,
    builtin objects and masks or index arrays; ``updated_places``: the
    parameters a place of which it updates in place (``lst[0] += x``)."""

    def __init__(self, fence):
        self.returned = fence.returned
        self.updated_places = frozenset(p for p in _parameters(fence.fnode)
                                        if ("param", p) in fence.updated_places)
        self.containers = frozenset(fence.container_sites - fence.blurred)
        self.builtin = frozenset(fence.builtin_sites - fence.blurred)
        self.index = frozenset(fence.index_sites - fence.blurred)
        self.stored = {}
        for p in _parameters(fence.fnode):
            added = set()
            for origin in (("param", p), ("param*", p)):  # p's object, or one it holds
                added |= fence.stored.get(origin, set())
            if added:
                self.stored[p] = frozenset(added)


_RECEIVER = object()  # the first parameter of a method called on an object


def _parameters(fnode):
    args = fnode.args
    return [a.id for a in args.posonlyargs + args.args + args.kwonlyargs +
            [x for x in (args.vararg, args.kwarg) if x is not None]]


def _parameter_count(code):
    return code.co_argcount + code.co_kwonlyargcount + \
        bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)


def _bound_arguments(fn, node, method=False):
    """Parameter name -> the argument node passed for it (a list for ``*args``, a
    dict for ``**kwargs``, ``_DEFAULT`` for a parameter left at an immutable
    default); None for arguments spread with ``*``/``**``, a binding Python would
    refuse, or a default that is a mutable object."""
    if any(isinstance(a, gast.Starred) for a in node.args) or \
            any(k.arg is None for k in node.keywords):
        return None
    try:
        signature = inspect.signature(fn, follow_wrapped=False)  # the code that runs
        first = (_RECEIVER,) if method else ()
        bound = signature.bind(*first, *node.args, **{k.arg: k.value for k in node.keywords})
    except (TypeError, ValueError):
        return None
    out = {}
    for name, parameter in signature.parameters.items():
        if name in bound.arguments:
            value = bound.arguments[name]
            out[name] = list(value) if parameter.kind is parameter.VAR_POSITIONAL else \
                dict(value) if parameter.kind is parameter.VAR_KEYWORD else value
        elif parameter.kind is parameter.VAR_POSITIONAL:
            out[name] = []
        elif parameter.kind is parameter.VAR_KEYWORD:
            out[name] = {}
        elif isinstance(parameter.default, (int, float, complex, str, bytes, type(None))):
            out[name] = _DEFAULT
        else:
            return None  # a list or array made once at the def: shared by every call
    return out


def _substituted(info, at_call):
    """``info`` with each origin ``o`` replaced by the set ``at_call(o)``."""
    is_, holds = set(), set()
    for origin in info.is_:
        is_ |= at_call(origin)
    for origin in info.holds:
        holds |= at_call(origin)
    items = None if info.items is None else \
        tuple((k, _substituted(i, at_call)) for k, i in info.items)
    repeats = None
    if info.repeats is not None:
        repeats = set()
        for origin in info.repeats:
            repeats |= at_call(origin)
    return _Info(is_, holds, items, info.keyed, repeats)


def local_names(fnode):
    """The names a function binds: its parameters and every name it stores to."""
    names = set()
    args = fnode.args
    for a in args.posonlyargs + args.args + args.kwonlyargs:
        names.add(a.id)
    for a in (args.vararg, args.kwarg):
        if a is not None:
            names.add(a.id)
    for child in gast.walk(fnode):
        if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Store):
            names.add(child.id)
    return names

def _defined_once(fnode):
    """name -> the FunctionDef directly in ``fnode``'s body (not nested deeper) for
    the names bound nowhere else in ``fnode``."""
    defs, bound = {}, {}
    for child in gast.walk(fnode):
        if child is fnode:
            continue
        if isinstance(child, gast.FunctionDef):
            bound[child.name] = bound.get(child.name, 0) + 1
            defs[child.name] = child
        elif isinstance(child, gast.Name) and isinstance(child.ctx, gast.Store):
            bound[child.id] = bound.get(child.id, 0) + 1
        elif isinstance(child, (gast.Global, gast.Nonlocal)):
            for name in child.names:
                bound[name] = 2
    args = fnode.args
    for a in args.posonlyargs + args.args + args.kwonlyargs + \
            [x for x in (args.vararg, args.kwarg) if x is not None]:
        bound[a.id] = 2
    return {name: d for name, d in defs.items() if bound.get(name) == 1}
