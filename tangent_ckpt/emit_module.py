"""Turn a compiled gradient into the source of an importable Python module.

``tc.grad(f).source`` is the text that runs, but it runs in a namespace that
also holds ``np``, ``rt`` and the objects the user's code refers to (global
constants, helper functions with a registered adjoint, array defaults, ...).
:func:`module_source` writes that namespace out as import statements, so the
result can be saved as a ``.py`` file and imported on its own::

    from tangent_ckpt.emit_module import module_source
    text = module_source(tc.grad_with_checkpointing(loss, wrt=(1, 2), snapshots=10))

How each bound object is written (first rule that applies):

1. a module: ``import <module> as <name>``;
2. an attribute of the user's module (found by identity): ``from <user module>
   import <attr> as <name>``;
3. a function or class importable by ``__module__`` and ``__qualname__``:
   ``from <module> import <qualname> as <name>``; a library function without
   them (a ufunc such as ``scipy.special.erf``) is found by identity in
   ``LIBRARY_MODULES``;
4. a default value of the user's function: ``<name> =
   inspect.signature(<func>).parameters['<param>'].default`` (the function is
   imported from the user's module);
5. a NumPy array of at most ``max_inline`` entries, or a plain scalar/tuple:
   written inline (``np.array([...], dtype=...)``; floats are exact, ``repr``
   round-trips);
6. anything else: :class:`ModuleEmitError` naming the object and the way out
   (make it a module-level name of an importable module).

Only ``numpy``, ``tangent_ckpt.runtime`` and the user's own importable modules
are imported by the result: the compiler is not needed to run it.
"""

import importlib
import inspect
import sys
import types

import numpy as np

from tangent_ckpt import runtime
from tangent_ckpt.errors import TangentCkptError

__all__ = ["module_source", "ModuleEmitError"]


class ModuleEmitError(TangentCkptError):
    """A bound object of the generated gradient cannot be written as an import."""


def _resolve(module_name, qualname):
    try:
        obj = importlib.import_module(module_name)
    except Exception:
        return None
    for part in qualname.split("."):
        if part == "<locals>":
            return None
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _module_attr(module, obj):
    """A public-first attribute name of ``module`` bound to exactly ``obj``, or None."""
    if module is None:
        return None
    found = [k for k, v in vars(module).items() if v is obj and k.isidentifier()]
    if not found:
        return None
    found.sort(key=lambda k: (k.startswith("_"), len(k), k))
    return found[0]


#: libraries whose functions (ufuncs among them, which have no ``__module__``)
#: generated code may call: searched by identity, only if already imported
LIBRARY_MODULES = ("numpy", "numpy.linalg", "numpy.fft", "scipy.special")


def _library_attr(obj):
    """(module name, attribute) of a library function found by identity, or None."""
    for library in LIBRARY_MODULES:
        attr = _module_attr(sys.modules.get(library), obj)
        if attr is not None:
            return library, attr
    return None


def _import_line(module_name, attr, name):
    return f"from {module_name} import {attr}" + ("" if attr == name else f" as {name}")


def _inline(value, max_inline):
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, np.generic) and np.ndim(value) == 0:
        return f"np.{value.dtype.name}({value.item()!r})"
    if isinstance(value, tuple) and all(isinstance(v, (bool, int, float)) for v in value):
        return repr(value)
    if isinstance(value, np.ndarray) and value.size <= max_inline and \
            value.dtype.kind in "biuf" and value.dtype.isnative:
        return f"np.array({value.tolist()!r}, dtype=np.{value.dtype.name})"
    return None


def _describe(obj):
    if isinstance(obj, np.ndarray):
        return f"a NumPy array of shape {obj.shape}"
    return f"{type(obj).__name__} {obj!r}"[:80]


def module_source(df, module=None, function_ref=None, max_inline=10_000, header=None):
    """The source of an importable module defining ``df``'s generated gradient.

    ``df`` is a gradient function (``tc.grad``/``value_and_grad``/
    ``grad_with_checkpointing``).  ``module`` is the user's module (defaults to
    the one ``df.fn`` was defined in) and ``function_ref`` the name under which
    that module exposes the user's function (defaults to ``df.fn.__name__``).
    """
    compiled = df.compile()
    fn = df.fn
    if module is None:
        module = sys.modules.get(getattr(fn, "__module__", None) or "")
    module_name = getattr(module, "__name__", None)
    if function_ref is None:
        function_ref = fn.__name__
    generated = set()
    for line in compiled.source.splitlines():
        if line.startswith("def "):
            generated.add(line[4:].split("(", 1)[0])

    imports, assigns, need_inspect = [], [], False
    user_fn_name = None
    defaults = {}
    try:
        for pname, p in inspect.signature(fn).parameters.items():
            if p.default is not inspect.Parameter.empty:
                defaults[id(p.default)] = pname
    except (TypeError, ValueError):  # pragma: no cover - builtins have no signature
        pass

    for name, obj in compiled.namespace.items():
        if name.startswith("__") or name in generated or \
                (name == "np" and obj is np) or (name == "rt" and obj is runtime):
            continue  # the header imports these
        if isinstance(obj, types.ModuleType):
            imports.append(f"import {obj.__name__}" +
                           ("" if obj.__name__ == name else f" as {name}"))
            continue
        attr = _module_attr(module, obj) if module_name and module_name != "__main__" else None
        if attr is not None:
            imports.append(_import_line(module_name, attr, name))
            continue
        mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        if isinstance(mod, str) and isinstance(qual, str) and mod != "__main__" and \
                "<" not in qual and _resolve(mod, qual) is obj:
            head = qual.split(".")[0]
            if head == qual:
                imports.append(_import_line(mod, qual, name))
            else:
                imports.append(f"import {mod} as _{name}_module")
                assigns.append(f"{name} = _{name}_module.{qual}")
            continue
        library = _library_attr(obj)  # a ufunc has no __module__: scipy.special.erf
        if library is not None:
            imports.append(_import_line(*library, name))
            continue
        if id(obj) in defaults and module_name and module_name != "__main__" and \
                _module_attr(module, getattr(module, function_ref, None)) is not None:
            if user_fn_name is None:
                user_fn_name = "_user_function"
                imports.append(_import_line(module_name, function_ref, user_fn_name))
            need_inspect = True
            assigns.append(f"{name} = inspect.signature({user_fn_name})"
                           f".parameters[{defaults[id(obj)]!r}].default")
            continue
        text = _inline(obj, max_inline)
        if text is not None:
            assigns.append(f"{name} = {text}")
            continue
        where = f"module {module_name!r}" if module_name else "an importable module"
        raise ModuleEmitError(
            f"the gradient of {fn.__name__}() uses {_describe(obj)} (as '{name}') that "
            f"cannot be imported by name: make it a module-level name of {where}")

    if header is None:
        header = (f"Gradient of {fn.__qualname__}() with respect to "
                  f"{', '.join(compiled.wrt_names)}, generated by tangent_ckpt.")
    wrt = ", ".join(compiled.wrt_names)
    lines = ["# " + h if h else "#" for h in header.splitlines()]
    if compiled.seed_name is None:  # forward mode (tc.jvp): no output adjoint
        returns = (f"# {compiled.name}({', '.join(compiled.params)}) returns the value and its "
                   f"tangent in the direction of {wrt}.")
    else:
        returns = (f"# {compiled.name}({', '.join(compiled.params)}, {compiled.seed_name}=1.0) "
                   f"returns the gradient with respect to {wrt}.")
    lines += [
        "#",
        returns,
        "# Needs NumPy and tangent_ckpt.runtime only (plus the user's module for the",
        "# names imported below); edit at your own risk, regenerate instead.",
    ]
    if module_name and any(f"from {module_name} import" in i for i in imports):
        lines.append(f"# It imports from module {module_name!r}: keep that module's folder "
                     "on sys.path.")
    lines.append("")
    if need_inspect:
        lines.append("import inspect")
        lines.append("")
    lines += ["import numpy as np", "", "import tangent_ckpt.runtime as rt"]
    if imports:
        lines.append("")
        lines += sorted(set(imports), key=imports.index)
    if assigns:
        lines.append("")
        lines += assigns
    lines += ["", f"__all__ = [{compiled.name!r}]", "", "", ""]
    return "\n".join(lines) + compiled.source
