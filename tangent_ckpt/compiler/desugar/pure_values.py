"""What an expression computes without changing anything: the value of an inlined
function's ``return`` nobody reads is then dropped, not evaluated for its effects
(desugar's inlining, and the lowering's); an operand of ``and``/``or`` that
surely is a bool (desugar's ``boolean_values.py``, and the lowering's tests)."""

import builtins

import gast

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler.memory_sharing import WRITING_FUNCTIONS, returns_new, unbuffered_write

# builtins that compute a value from their arguments and change nothing
_COMPUTING_BUILTINS = frozenset({"abs", "bool", "enumerate", "float", "format", "int",
                                 "isinstance", "len", "max", "min", "range", "repr",
                                 "reversed", "round", "str", "sum", "zip"})


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
        if reads_a_property(sub, static_value):
            return False  # a property's getter is the user's code
        if isinstance(sub, gast.Call) and not computing_call(sub, static_value):
            return False
    return True


def computing_call(call, static_value, views=False):
    """Whether the call ``call`` itself (its arguments apart) computes a value and
    changes nothing: a string's ``.format``, a builtin above, a NumPy function
    with an adjoint rule returning a new value (or, with ``views``, any value: a
    view of an argument writes nothing either), without ``out=``."""
    if any(k.arg == "out" or k.arg is None for k in call.keywords) or \
            any(isinstance(a, gast.Starred) for a in call.args):
        return False
    func = call.func
    if isinstance(func, gast.Attribute) and func.attr == "format" and \
            isinstance(func.value, gast.Constant) and isinstance(func.value.value, str):
        return True
    fn = static_value(func)
    if fn is not None and getattr(builtins, getattr(fn, "__name__", ""), None) is fn and \
            fn.__name__ in _COMPUTING_BUILTINS:
        return True
    # np.sum(x), np.tanh(x): a new value, no argument written
    return callable(fn) and registry.lookup(fn) is not None and (views or returns_new(fn)) \
        and not any(fn is w for w in WRITING_FUNCTIONS) and not unbuffered_write(fn)


def reads_a_property(node, static_value):
    """Whether ``node`` (an attribute) reads a property: its getter is user code."""
    return isinstance(node, gast.Attribute) and _property(static_value(node))


def _property(value):
    """A property of the user's class (or the lowering's value standing for one)."""
    return isinstance(value, property) or getattr(value, "is_property", False)


def is_boolean(node):
    """An operand of ``and``/``or`` that surely is a bool (so the result is one)."""
    if isinstance(node, (gast.Compare, gast.BoolOp)):
        return all(is_boolean(v) for v in node.values) if isinstance(node, gast.BoolOp) \
            else True
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
        return True
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
            node.func.id in ("isinstance", "issubclass", "callable", "hasattr"):
        return True  # builtins that return a bool
    return isinstance(node, gast.Constant) and isinstance(node.value, bool)
