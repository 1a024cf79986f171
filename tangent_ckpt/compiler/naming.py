"""Names in generated code: fresh names that collide with nothing, how
generated code spells a NumPy function (``np.tanh``, ``np.linalg.norm``), and
the names under which it reads NumPy and the runtime.

Generated code refers to what it reads from outside -- the two modules it
runs with and the builtins it calls (``reversed``, ``range``, ``len``) --
through ids in angle brackets (:data:`NUMPY` is ``"<np>"``), which are not
Python identifiers: no user variable, parameter or global can ever be taken for
them.  Emit chooses their printed names last (:func:`outside_aliases`): ``np``,
``rt``, ``reversed`` unless the code already uses that name for something else.
"""

import keyword
import builtins
import sys

import numpy as np

from tangent_ckpt import runtime

NUMPY = "<np>"
RUNTIME = "<rt>"
MODULES = {NUMPY: ("np", np), RUNTIME: ("rt", runtime)}


def builtin(name):
    """The id under which generated code calls the builtin ``name``."""
    if not hasattr(builtins, name):
        raise ValueError(f"not a builtin: {name!r}")
    return f"<{name}>"


def is_outside(identifier):
    """True for the id of a module or builtin (``"<np>"``, ``"<reversed>"``)."""
    return identifier.startswith("<")


def outside_object(identifier):
    """(preferred name, object) of a module or builtin id."""
    if identifier in MODULES:
        return MODULES[identifier]
    name = identifier[1:-1]
    return name, getattr(builtins, name)


def _numpy_paths():
    paths = {}
    for modname, module in (("np.linalg", np.linalg), ("np.fft", np.fft), ("np", np)):
        for attr in dir(module):
            try:
                obj = getattr(module, attr)
            except Exception:  # pragma: no cover - deprecated attributes
                continue
            if callable(obj) and not isinstance(obj, type):
                try:
                    paths[id(obj)] = f"{modname}.{attr}"
                except TypeError:
                    pass
    return paths


_NUMPY_PATHS = None


_UFUNC_METHODS = ("accumulate", "reduce", "reduceat", "outer", "at")


def numpy_path(obj):
    """``'np.tanh'`` for ``np.tanh``, ``'np.maximum.accumulate'`` for a method of a
    NumPy ufunc (a new bound method at each access); ``None`` for objects outside
    NumPy."""
    global _NUMPY_PATHS
    ufunc = getattr(obj, "__self__", None)
    if isinstance(ufunc, np.ufunc) and getattr(obj, "__name__", None) in _UFUNC_METHODS:
        path = numpy_path(ufunc)
        return f"{path}.{obj.__name__}" if path is not None else None
    if _NUMPY_PATHS is None:
        _NUMPY_PATHS = _numpy_paths()
    path = _NUMPY_PATHS.get(id(obj))
    if path is not None:
        head, _, attr = path.rpartition(".")
        module = {"np": np, "np.linalg": np.linalg, "np.fft": np.fft}[head]
        if getattr(module, attr, None) is obj:
            return path
    return None


def _identifier_part(base):
    """``base`` made a Python identifier: a hint built from a user's dict key
    (``hs[-1]`` gives ``hs_-1``) keeps only word characters."""
    base = "".join(c if c.isalnum() or c == "_" else "_" for c in base).strip("_") or "v"
    if keyword.iskeyword(base):  # a helper's `lambda_` or `as_` stripped to a keyword
        return base + "_"
    return "v_" + base if base[0].isdigit() else base


class Namer:
    """Hands out names no user variable and no other generated name uses.

    ``fresh("h_add")`` gives ``h_add``, then ``h_add_2``, ``h_add_3``...: the
    next suffix of each base is remembered, so handing out n names of one base
    takes time linear in n."""

    def __init__(self, reserved=()):
        self.used = set(reserved)
        self._next = {}  # base -> the first suffix not yet tried

    def reserve(self, names):
        self.used.update(names)

    def fresh(self, base):
        base = _identifier_part(base)
        if base not in self.used:
            self.used.add(base)
            return base
        k = self._next.get(base, 2)
        while f"{base}_{k}" in self.used:
            k += 1
        name = f"{base}_{k}"
        self.used.add(name)
        self._next[base] = k + 1
        return name

    def fresh_family(self, base, suffixes):
        """A fresh name whose derived names (``name + suffix`` for each suffix:
        ``loop4``, ``loop4_step``, ``loop4_adjoint``) are all fresh too."""
        base = _identifier_part(base)
        candidates = (base if k == 1 else f"{base}_{k}" for k in range(1, 1 << 30))
        for name in candidates:
            family = [name] + [name + suffix for suffix in suffixes]
            if not any(n in self.used for n in family):
                self.used.update(family)
                return name


def outside_aliases(identifiers, taken):
    """{id: printed name} for the modules and builtins ``identifiers``, each its
    usual name unless that is in ``taken``."""
    namer = Namer(taken)
    return {ref: namer.fresh(outside_object(ref)[0]) for ref in sorted(identifiers)}


def public_name(fn):
    """``scipy.integrate.solve_ivp`` for a library function (the shortest module
    path that exports it), ``module.name`` for others; None without a name."""
    name = getattr(fn, "__name__", None)
    module = getattr(fn, "__module__", None)
    if not name or not module:
        return name
    parts = module.split(".")
    for k in range(1, len(parts) + 1):
        prefix = ".".join(parts[:k])
        if getattr(sys.modules.get(prefix), name, None) is fn:
            return f"{prefix}.{name}"
    return f"{module}.{name}"
