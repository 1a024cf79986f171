"""What an expression computes without changing anything: the value of an inlined
function's ``return`` nobody reads is then dropped, not evaluated for its effects
(desugar's inlining, and the lowering's)."""

import builtins

import gast

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler.memory_sharing import WRITING_FUNCTIONS, returns_new, unbuffered_write

# builtins that compute a value from their arguments and change nothing
_COMPUTING_BUILTINS = frozenset({"abs", "bool", "float", "format", "int", "len", "max", "min",
                                 "repr", "round", "str", "sum"})


def only_computes(node, static_value):
    """Whether evaluating ``node`` changes nothing the code could see: numbers,
    names, attributes that are no properties, operators, f-strings, a string's
    ``.format``, the builtins above and NumPy functions with an adjoint rule that return a new
    value and write no argument (no ``out=``).  The
    value of a method called as a statement (``h.forward()`` returning a
    report string) then needs no lowering at all.  ``static_value``: the object a
    name or dotted name denotes where it is known when compiling."""
    for sub in gast.walk(node):
        if isinstance(sub, (gast.Lambda, gast.NamedExpr, gast.Yield, gast.YieldFrom,
                            gast.Await, gast.ListComp, gast.GeneratorExp, gast.DictComp,
                            gast.SetComp)):
            return False
        if isinstance(sub, gast.Attribute) and \
                _property(static_value(sub)):
            return False  # a property's getter is the user's code
        if not isinstance(sub, gast.Call):
            continue
        if any(k.arg == "out" or k.arg is None for k in sub.keywords) or \
                any(isinstance(a, gast.Starred) for a in sub.args):
            return False
        func = sub.func
        if isinstance(func, gast.Attribute) and func.attr == "format" and \
                isinstance(func.value, gast.Constant) and isinstance(func.value.value, str):
            continue
        fn = static_value(func)
        if fn is not None and getattr(builtins, getattr(fn, "__name__", ""), None) is fn and \
                fn.__name__ in _COMPUTING_BUILTINS:
            continue
        if callable(fn) and registry.lookup(fn) is not None and returns_new(fn) and \
                not any(fn is w for w in WRITING_FUNCTIONS) and not unbuffered_write(fn):
            continue  # np.sum(x), np.tanh(x): a new value, no argument written
        return False
    return True


def _property(value):
    """A property of the user's class (or the lowering's value standing for one)."""
    return isinstance(value, property) or getattr(value, "is_property", False)
