"""What an expression may be, for the aliasing fence (``aliasing.py``): the
memory *origins* a value may be (``is``) and those it may hold references to
(``holds``, for containers).  An origin is an allocation site (versioned in
loops), a parameter or a global.  Calls are judged from the tables of
``memory_sharing.py``: NumPy functions return new arrays unless listed as
views; user functions may return their arguments."""

import builtins

import gast
import numpy as np

from tangent_ckpt.compiler.liveness import read_names
from tangent_ckpt.compiler.memory_sharing import (
    COPY_FLAG_FUNCTIONS, FRESH_BUILTINS, FRESH_METHODS, VIEW_FUNCTIONS, VIEW_METHODS,
)
from tangent_ckpt.compiler.view_facts import resolve_dotted

_NOTHING = frozenset()


class _Info:
    """What a value may be (``is``) and what it may hold references to (``holds``)."""

    __slots__ = ("is_", "holds")

    def __init__(self, is_=_NOTHING, holds=_NOTHING):
        self.is_ = frozenset(is_)
        self.holds = frozenset(holds)

    def everything(self):
        return self.is_ | self.holds

    def join(self, other):
        return _Info(self.is_ | other.is_, self.holds | other.holds)

    def __eq__(self, other):
        return self.is_ == other.is_ and self.holds == other.holds

    def __hash__(self):  # pragma: no cover - not used as a key
        return hash((self.is_, self.holds))


def _base_name(target):
    """The name a subscript/attribute target writes into (``a`` in ``a[0].x[1]``)."""
    while isinstance(target, (gast.Subscript, gast.Attribute)):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None


class Origins:
    """The origins of expressions in one function (mixed into the fence, which
    sets ``parsed``, ``locals`` and ``followed``: the views the view lowering
    follows, new arrays here)."""

    def free_info(self, name):
        if name in self.locals:
            return _Info()
        return _Info({("global", name)}, {("global*", name)})

    def resolve(self, func):
        """The object a (dotted) name outside the function denotes, or None."""
        obj = resolve_dotted(func, self.parsed.resolve, self.locals)
        return obj if callable(obj) else None

    def info(self, node, env):
        if node is None or isinstance(node, gast.Constant):
            return _Info()
        if id(node) in self.followed:
            return _Info({("site", id(node), 0)})
        if isinstance(node, gast.Name):
            return env.get(node.id, self.free_info(node.id))
        if isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Compare)):
            operands = [node.left, node.right] if isinstance(node, gast.BinOp) else \
                [node.operand] if isinstance(node, gast.UnaryOp) else \
                [node.left] + list(node.comparators)
            holds = set()
            for o in operands:  # list + list holds the elements of both
                holds |= self.info(o, env).holds
                if isinstance(o, (gast.List, gast.Tuple)):
                    holds |= self.info(o, env).holds
            return _Info({("site", id(node), 0)}, holds)
        if isinstance(node, (gast.Subscript, gast.Attribute)):
            base = self.info(node.value, env)
            if isinstance(node, gast.Attribute) and node.attr in ("shape", "ndim", "size",
                                                                   "dtype", "itemsize",
                                                                   "nbytes"):
                return _Info()
            return _Info(base.everything(), base.holds)
        if isinstance(node, (gast.Tuple, gast.List, gast.Set, gast.Dict)):
            elements = node.elts if not isinstance(node, gast.Dict) else \
                [k for k in node.keys if k is not None] + node.values
            holds = set()
            for e in elements:
                holds |= self.info(e, env).everything()
            return _Info({("site", id(node), 0)}, holds)
        if isinstance(node, (gast.IfExp, gast.BoolOp)):
            parts = [node.body, node.orelse] if isinstance(node, gast.IfExp) else node.values
            out = _Info()
            for p in parts:
                out = out.join(self.info(p, env))
            return out
        if isinstance(node, gast.Call):
            return self.call_info(node, env)
        if isinstance(node, gast.Starred):
            return self.info(node.value, env)
        # comprehensions, lambdas, f-strings, ...: a new object that may hold
        # anything it reads
        holds = set()
        for name in read_names(node):
            holds |= env.get(name, self.free_info(name)).everything()
        return _Info({("site", id(node), 0)}, holds)

    def call_info(self, node, env):
        fn = self.resolve(node.func)
        args = list(node.args) + [k.value for k in node.keywords]
        fresh = _Info({("site", id(node), 0)})
        if fn is not None:
            copies = not any(k.arg == "copy" and not (isinstance(k.value, gast.Constant)
                                                      and k.value.value is True)
                             for k in node.keywords)
            if _is_in(fn, COPY_FLAG_FUNCTIONS) and copies:
                return fresh
            if fn is np.einsum and _several_einsum_operands(node):
                return fresh
            if _is_in(fn, VIEW_FUNCTIONS):
                return self._union(args, env)
            if getattr(fn, "__module__", None) and \
                    str(fn.__module__).split(".")[0] == "numpy":
                return fresh
            if isinstance(fn, np.ufunc):
                return fresh
            if any(fn is b for b in FRESH_BUILTINS):
                return fresh
            if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
                return self._union(args, env)  # max, min, list, zip, sorted, ...
        elif isinstance(node.func, gast.Attribute):
            method = node.func.attr
            receiver = self.info(node.func.value, env)
            if method == "astype" and any(k.arg == "copy" for k in node.keywords):
                return _Info(receiver.everything(), receiver.holds)
            if method in FRESH_METHODS:
                return fresh
            if method in VIEW_METHODS:
                return _Info(receiver.everything(), receiver.holds)
            return self._union([node.func.value] + args, env)
        # a user function, a local function or anything unknown: it may return its
        # arguments or what they hold
        return self._union(args, env)

    def _union(self, nodes, env):
        everything = set()
        holds = set()
        for n in nodes:
            i = self.info(n, env)
            everything |= i.everything()
            holds |= i.holds
        return _Info(everything, holds)


def _several_einsum_operands(node):
    """``np.einsum('ij,jk->ik', a, b)``: with two operands or more the result is a
    new array; with one (``'ij->ji'``, ``'ii->i'``) it may be a view of it."""
    args = node.args
    return len(args) >= 3 and isinstance(args[0], gast.Constant) and \
        isinstance(args[0].value, str) and not any(isinstance(a, gast.Starred) for a in args)


def _is_in(obj, objects):
    return obj is not None and any(obj is o for o in objects)
