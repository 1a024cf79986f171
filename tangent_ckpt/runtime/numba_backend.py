"""``backend="numba"``: the generated step functions compiled with ``numba.njit``.

A checkpointed loop's primal step, adjoint step and taped segment are plain
NumPy over arrays; this backend rewrites the generated module so that each
such function is decorated with :func:`njit` (``numba.njit(cache=True)`` that
falls back to NumPy) and reads basic indices as ``slice(...)`` instead of
``np.s_[...]``; its ``rt`` helpers compile to their Numba twins
(:mod:`tangent_ckpt.runtime.numba_twins`).  For every loop step it
adds a compiled ``loopN_advance(first, stride, count, state, *args)`` that runs
``count`` plain steps in one call; the schedule driver uses it for the
schedule's ADVANCE actions (``step.advance``).

Functions that drive loops (they make an ``rt.CheckpointedLoop``) stay Python.
A function Numba cannot compile runs with NumPy instead, with one
:class:`NumbaFallbackWarning` naming it and Numba's reason.

The module is written to a file under :func:`cache_dir` (named by a hash of its
text and of the values it is compiled against) so that ``cache=True`` works: a
second process loads the machine code instead of compiling.  Compile time is
measured per function and summed in :class:`JitReport`.

Numba is imported on first use only; without it, nothing here is loaded.
"""

import ast
import dataclasses
import hashlib
import importlib
import os
import sys
import time
import types as pytypes
import warnings

import numpy as np

from tangent_ckpt.runtime.numba_fusion import fusion_plan

__all__ = ["njit", "JitFunction", "JitReport", "NumbaFallbackWarning", "numba_source",
           "compile_with_numba", "cache_dir", "available"]

#: runtime objects whose calls keep a function in Python: they drive loops
DRIVERS = frozenset({"CheckpointedLoop", "Segment", "MemoryPlan", "run_schedule"})

_STATE = {}


class NumbaFallbackWarning(RuntimeWarning):
    """A generated function that Numba could not compile runs with NumPy."""


def available():
    """True when Numba can be imported."""
    return importlib.util.find_spec("numba") is not None


def _numba():
    """(numba, the twins module, NumbaError), imported once; registers how Numba
    types a :class:`JitFunction` (as the Numba dispatcher inside it)."""
    if not _STATE:
        numba = importlib.import_module("numba")
        # imported here, not at the top: importing the twins imports Numba, which
        # only users of this backend need
        twins = importlib.import_module("tangent_ckpt.runtime.numba_twins")
        errors = importlib.import_module("numba.core.errors")
        extending = importlib.import_module("numba.extending")

        @extending.typeof_impl.register(JitFunction)
        def _typeof_jit(value, context):
            return numba.types.Dispatcher(value.dispatcher)

        _STATE.update(numba=numba, twins=twins, error=errors.NumbaError)
    return _STATE["numba"], _STATE["twins"], _STATE["error"]


def cache_dir():
    """Where compiled modules (and Numba's cache beside them) are kept:
    ``$TANGENT_CKPT_NUMBA_CACHE``, else ``~/.cache/tangent_ckpt/numba``."""
    return os.environ.get("TANGENT_CKPT_NUMBA_CACHE") or \
        os.path.join(os.path.expanduser("~"), ".cache", "tangent_ckpt", "numba")


class JitFunction:
    """A generated function compiled by Numba on its first call, or run with
    NumPy when Numba cannot compile it (one warning, then NumPy for good).

    ``compile_seconds``: time spent in calls that compiled (or loaded from
    Numba's cache) a new signature; ``fallback``: Numba's reason, or None.
    ``advance``: for a loop step, the compiled many-steps function (None after
    a fallback, so that the driver steps in Python).
    """

    def __init__(self, py_func, cache=True):
        numba, _, _ = _numba()
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        try:
            self.dispatcher = numba.njit(cache=cache)(py_func)
        except RuntimeError:  # cache=True needs a source file (not exec'd text)
            self.dispatcher = numba.njit(py_func)
        self.compile_seconds = 0.0
        self.fallback = None
        self._advance = None

    @property
    def advance(self):
        return None if self.fallback is not None else self._advance

    @advance.setter
    def advance(self, value):
        self._advance = value

    @property
    def cache_hits(self):
        return sum(self.dispatcher.stats.cache_hits.values())

    def __call__(self, *args):
        if self.fallback is not None:
            return self.py_func(*args)
        dispatcher = self.dispatcher
        known = len(dispatcher.overloads)
        if not known and _random_argument(args):
            self._fall_back("it is given a NumPy random generator, whose draws Numba does not "
                            "reproduce exactly", stacklevel=4)
            return self.py_func(*args)
        start = time.perf_counter()
        try:
            out = dispatcher(*args)
        except _numba()[2] as exc:
            self.compile_seconds += time.perf_counter() - start
            self._fall_back(exc)
            return self.py_func(*args)
        if len(dispatcher.overloads) != known:
            self.compile_seconds += time.perf_counter() - start
        return out

    def _fall_back(self, exc, stacklevel=3):
        reason = exc if isinstance(exc, str) else _first_line(exc)
        self.fallback = reason
        warnings.warn(f"backend='numba': {self.__name__}() runs with NumPy, Numba cannot "
                      f"compile it: {reason}", NumbaFallbackWarning, stacklevel=stacklevel)

    def __repr__(self):
        state = f"NumPy fallback: {self.fallback}" if self.fallback else "numba.njit"
        return f"<{self.__name__} ({state})>"


def _first_line(exc):
    """The informative line of a Numba error (its first non-blank, non-banner line)."""
    for line in str(exc).splitlines():
        line = line.strip()
        if line and not line.startswith(("-", "No implementation of function", "During:")):
            return line[:300]
    return type(exc).__name__


def njit(cache=True):
    """Decorator of the generated functions: ``numba.njit(cache=cache)`` with the
    NumPy fallback of :class:`JitFunction`."""
    return lambda func: JitFunction(func, cache=cache)


@dataclasses.dataclass
class JitReport:
    """What the numba backend did for one compiled gradient."""
    functions: dict  # name -> JitFunction
    path: str        # the module file Numba caches next to

    @property
    def compile_seconds(self):
        """Seconds spent compiling (or loading compiled code from the cache) so far."""
        return sum(f.compile_seconds for f in self.functions.values())

    @property
    def cache_hits(self):
        """Functions (signatures) loaded from Numba's on-disk cache, not compiled."""
        return sum(f.cache_hits for f in self.functions.values())

    @property
    def fallbacks(self):
        """name -> Numba's reason, for the functions that run with NumPy."""
        return {n: f.fallback for n, f in self.functions.items() if f.fallback is not None}

    def __str__(self):
        compiled = [n for n, f in self.functions.items() if f.fallback is None]
        text = f"numba: {len(compiled)} compiled ({', '.join(compiled) or '-'}), " \
               f"compile {self.compile_seconds:.2f} s, cache hits {self.cache_hits}"
        for name, reason in self.fallbacks.items():
            text += f"\n  {name}: NumPy fallback ({reason})"
        return text


# ----------------------------------------------------------------- the source


def _is_rt(node, attr=None):
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
        node.value.id == "rt" and (attr is None or node.attr in attr)


def _drives_loops(func):
    return any(_is_rt(node, DRIVERS) for node in ast.walk(func))


def _python_only(func, python_names):
    """True for a function that stays Python: it drives loops or reads one of
    ``python_names``."""
    return _drives_loops(func) or any(isinstance(n, ast.Name) and n.id in python_names
                                      for n in ast.walk(func))


def legacy_random_names(namespace):
    """The names bound to NumPy's global random functions (``np.random.normal``):
    compiled, they would draw from Numba's own generator, which the driver
    cannot keep with the snapshots, so a recomputed step would draw other numbers."""
    legacy = {id(v) for v in vars(np.random).values() if callable(v)}
    return {k for k, v in namespace.items()
            if id(v) in legacy or isinstance(getattr(v, "__self__", None), np.random.RandomState)}


def _random_argument(args):
    """True when a NumPy random generator is among ``args`` (nested in tuples too)."""
    for a in args:
        if isinstance(a, (np.random.Generator, np.random.RandomState, np.random.BitGenerator)):
            return True
        if isinstance(a, (tuple, list)) and _random_argument(a):
            return True
    return False


def _basic_index(node):
    """``np.s_[...]``'s index as an expression Numba reads (``slice(1, -1)``), or
    None when it is not made of ints, names and slices."""
    if isinstance(node, ast.Tuple):
        parts = [_basic_index(e) for e in node.elts]
        if None in parts:
            return None
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if isinstance(node, ast.Slice):
        bounds = [node.lower, node.upper, node.step]
        while bounds and bounds[-1] is None:
            bounds.pop()
        parts = ["None" if b is None else ast.unparse(b) for b in bounds]
        if len(parts) < 2:
            parts = (parts + ["None", "None"])[:2]
        return f"slice({', '.join(parts)})"
    if isinstance(node, (ast.Name, ast.Constant, ast.UnaryOp, ast.BinOp)) and \
            not any(isinstance(n, ast.Constant) and not isinstance(n.value, int)
                    for n in ast.walk(node)):
        return ast.unparse(node)
    return None


def _is_np_s(node):
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and \
        node.value.attr == "s_" and isinstance(node.value.value, ast.Name) and \
        node.value.value.id == "np"


class _Slices(ast.NodeTransformer):
    """``np.s_[1:-1]`` -> ``slice(1, -1)`` in a tree (a basic index only)."""

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if _is_np_s(node):
            text = _basic_index(node.slice)
            if text is not None:
                return ast.parse(text, mode="eval").body
        return node


def _edits(func):
    """Position edits that make ``func`` Numba's: single-use temporaries fused into
    their reader (numba_fusion), ``np.s_[i]`` -> ``i``."""
    deleted, rewritten = fusion_plan(func)
    edits, done = [], set()
    for stmt in ast.walk(func):
        if not isinstance(stmt, ast.stmt) or stmt is func:
            continue
        if id(stmt) in deleted:
            edits.append((stmt.lineno, 0, stmt.end_lineno + 1, 0, ""))
        elif id(stmt) in rewritten:
            text = ast.unparse(_Slices().visit(rewritten[id(stmt)]))
            edits.append((stmt.lineno, stmt.col_offset, stmt.end_lineno, stmt.end_col_offset,
                           text))
        else:
            continue
        done.update(id(n) for n in ast.walk(stmt))
    for node in ast.walk(func):
        if _is_np_s(node) and id(node) not in done:
            text = _basic_index(node.slice)
            if text is not None:
                edits.append((node.lineno, node.col_offset, node.end_lineno,
                              node.end_col_offset, text))
    return edits


def _apply(lines, edits):
    """``lines`` with each edit (1-based line, column span) replaced, last first."""
    lines = list(lines)
    for line, col, end_line, end_col, text in sorted(edits, reverse=True):
        head, tail = lines[line - 1][:col], lines[end_line - 1][end_col:]
        lines[line - 1:end_line] = [head + text + tail]
    return lines


def _fresh(name, taken):
    while name in taken:
        name += "_"
    return name


def _advance_source(step):
    """A compiled function running ``count`` plain steps of the loop step ``step``."""
    params = [a.arg for a in step.args.args]
    index, state, args = params[0], params[1], params[2:]
    taken = set(params)
    first, stride, count = (_fresh(n, taken) for n in ("first", "stride", "count"))
    name = step.name[:-len("_step")] + "_advance" if step.name.endswith("_step") \
        else step.name + "_advance"
    call = ", ".join([index, state] + args)
    return name, [
        "@njit(cache=True)",
        f"def {name}({', '.join([first, stride, count, state] + args)}):",
        f"    # {count} plain steps of {step.name}() in one compiled call, from index "
        f"{first} by {stride}",
        f"    {index} = {first}",
        f"    for _ in range({count}):",
        f"        {state} = {step.name}({call})",
        f"        {index} += {stride}",
        f"    return {state}",
    ]


def numba_source(source, python_names=()):
    """The generated module ``source`` made for Numba: every function that does
    not drive a loop gets ``@njit(cache=True)`` and slices for ``np.s_``, and each
    loop step a compiled ``*_advance`` (see the module docstring).  A function
    reading one of ``python_names`` (NumPy's global random functions, whose
    Numba copies draw from another generator; global arrays, which Numba
    would freeze) stays Python."""
    tree = ast.parse(source)
    lines = source.splitlines()
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    edits, steps = [], []
    for func in funcs.values():
        if _python_only(func, python_names):
            for node in ast.walk(func):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                        node.func.attr == "forward" and node.args and \
                        isinstance(node.args[0], ast.Name) and node.args[0].id in funcs:
                    steps.append(funcs[node.args[0].id])
            continue
        edits += _edits(func)
        first = min([func.lineno] + [d.lineno for d in func.decorator_list])
        indent = lines[first - 1][:len(lines[first - 1]) - len(lines[first - 1].lstrip())]
        edits.append((first, 0, first, 0, indent + "@njit(cache=True)\n"))
    out = "\n".join(_apply(lines, edits))
    extra = []
    for step in dict.fromkeys(steps):
        if _python_only(step, python_names):
            continue
        name, text = _advance_source(step)
        extra += ["", ""] + text + ["", "", f"{step.name}.advance = {name}  "
                                    "# the driver advances many steps in one call"]
    return out.rstrip("\n") + "\n" + ("\n".join(extra) + "\n" if extra else "")


# ----------------------------------------------------------------- compiling


def _fingerprint(name, obj):
    """What a bound value contributes to the module's cache key (Numba freezes
    global arrays and numbers into the machine code)."""
    if isinstance(obj, np.ndarray):
        return f"{name}:array{obj.shape}{obj.dtype}:{hashlib.sha256(obj.tobytes()).hexdigest()}"
    if isinstance(obj, pytypes.ModuleType):
        return f"{name}:module {obj.__name__}"
    if isinstance(obj, (bool, int, float, complex, str, bytes, type(None), np.generic, tuple)):
        return f"{name}:{obj!r}"
    qual = getattr(obj, "__qualname__", None)
    mod = getattr(obj, "__module__", None)
    if isinstance(qual, str) and "<" not in qual:
        return f"{name}:{mod}.{qual}"
    return f"{name}:{type(obj).__qualname__}@{id(obj)}"


def _write_once(path, text):
    """Write ``text`` to ``path`` unless it is there already (its modification time
    is part of Numba's cache key: rewriting it would throw the cache away)."""
    if os.path.exists(path):
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def compile_with_numba(compiled):
    """The compiled gradient ``compiled`` (a ``CompiledGradient``) with its steps
    compiled by Numba: returns (source, function, namespace, report)."""
    numba, _, _ = _numba()
    tree = ast.parse(compiled.source)
    generated_names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    bindings = {k: v for k, v in compiled.namespace.items()
                if k not in generated_names and k != "__builtins__"}
    random = legacy_random_names(bindings)
    arrays = {k for k, v in bindings.items() if isinstance(v, np.ndarray)}
    text = numba_source(compiled.source, random | arrays)
    for func in tree.body:
        if not isinstance(func, ast.FunctionDef) or _drives_loops(func):
            continue
        read = {n.id for n in ast.walk(func) if isinstance(n, ast.Name)}
        if read & random:
            reason = "it draws from NumPy's global random state, which compiled code would " \
                     "not share"
        elif read & arrays:
            reason = f"it reads the global array {sorted(read & arrays)[0]!r}, which Numba " \
                     "would freeze at its first compile (a later change in place would not " \
                     "be seen): pass it as an argument to compile this function"
        else:
            continue
        warnings.warn(f"backend='numba': {func.name}() runs with NumPy: {reason}",
                      NumbaFallbackWarning, stacklevel=4)
    key = "\n".join([numba.__version__, np.__version__, text] +
                    sorted(_fingerprint(k, v) for k, v in bindings.items()))
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    modname = f"tangent_ckpt_numba_{compiled.name}_{digest}"
    path = os.path.join(cache_dir(), modname + ".py")
    _write_once(path, text)
    # a module in sys.modules: Numba's cache finds the globals of a cached function
    # by its module's name when it loads it in another process
    module = sys.modules.get(modname)
    if module is None:
        module = pytypes.ModuleType(modname)
        module.__file__ = path
        module.__dict__.update(bindings, njit=njit)
        exec(compile(text, path, "exec"), module.__dict__)
        sys.modules[modname] = module
    namespace = module.__dict__
    functions = {k: v for k, v in namespace.items() if isinstance(v, JitFunction)}
    return text, namespace[compiled.name], namespace, JitReport(functions, path)
