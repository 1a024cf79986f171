"""Frontend: a Python function -> its gast tree, its file and line, and a resolver
that maps every free name to the object it denotes (globals, closures, builtins).

Names are resolved to objects, never matched as strings: ``import numpy as onp``
then ``onp.tanh`` is ``np.tanh``.
"""

import builtins
import contextlib
import copy
import functools
import inspect
import linecache
import os
import textwrap
import threading
import types
import weakref

import gast

from tangent_ckpt.errors import SourceUnavailableError, UnsupportedSyntaxError

_UNRESOLVED = object()


class ParsedFunction:
    """A user function ready for the compiler.

    ``node`` is the ``gast.FunctionDef`` whose line numbers are the user's file
    lines; ``filename`` is the file it came from.
    """

    def __init__(self, fn, node, filename, source_lines):
        self.fn = fn
        self.node = node
        self.filename = filename
        self.source_lines = source_lines  # {lineno: text} of the user's file
        self.globals = getattr(fn, "__globals__", {})
        self.closure = _closure_values(fn)
        self.cells = _closure_cells(fn)

    @property
    def name(self):
        return self.node.name

    def line_text(self, lineno):
        return self.source_lines.get(lineno, "").strip()

    def resolve(self, name):
        """The object that free name ``name`` denotes, or ``_UNRESOLVED``.

        Every resolution is noted in the active :class:`Dependencies` (see
        :func:`recording`): the compiled gradient is valid while each name still
        denotes the same object."""
        if name in self.closure:
            obj = self.closure[name]
            _note(("closure", id(self.cells[name]), name), self.cells[name], name, obj)
            return obj
        if name in self.globals:
            obj = self.globals[name]
            _note(("global", id(self.globals), name), self.globals, name, obj)
            return obj
        _note(("global", id(self.globals), name), self.globals, name, _UNRESOLVED)
        if hasattr(builtins, name):
            return getattr(builtins, name)
        return _UNRESOLVED

    def error(self, cls, message, node=None, construct=None, hint=None):
        lineno = getattr(node, "lineno", None) if node is not None else self.node.lineno
        return cls(message, filename=self.filename, lineno=lineno,
                   construct=construct, hint=hint)


class Dependencies:
    """The free names one compilation resolved, and the object each denoted.

    Generated code is compiled against those objects: numbers are written into
    it and helpers are inlined. :meth:`changed` names what no longer denotes the
    same object (a global rebound in a notebook cell, a helper redefined, a
    closure variable reassigned). The caller then compiles again. The check is
    one dictionary lookup and one identity test per name.
    """

    def __init__(self):
        self._entries = {}  # key -> (namespace dict or closure cell, name, object)
        # key -> the generated code's global that holds a module-level float the
        # code reads when it runs (not written into it): a new float there is
        # copied into the generated namespace instead of compiling again
        self._values = {}

    def note(self, key, where, name, obj):
        self._entries.setdefault(key, (where, name, obj))

    def note_value(self, key, generated):
        self._values[key] = generated

    def changed(self, namespace=None):
        """The names that now denote another object (empty while all hold).  With
        the generated code's ``namespace``, a module-level float the code reads
        at call time that now is another float is copied there instead (a
        float stepped in a loop, a learning rate, used to recompile the gradient
        on every call: 3 ms against 0.03 ms)."""
        out = []
        for key, (where, name, obj) in self._entries.items():
            if isinstance(where, dict):
                now = where.get(name, _UNRESOLVED)
            else:
                try:
                    now = where.cell_contents
                except ValueError:  # the closure variable was deleted
                    now = _UNRESOLVED
            if now is not obj:
                generated = self._values.get(key)
                if generated is not None and namespace is not None and type(now) is float:
                    namespace[generated] = now
                    continue
                out.append(name)
        return out

    def __len__(self):
        return len(self._entries)


_recording = threading.local()


@contextlib.contextmanager
def recording():
    """Note every name resolved inside this block in the :class:`Dependencies` it yields."""
    deps = Dependencies()
    stack = _recording.__dict__.setdefault("stack", [])
    stack.append(deps)
    try:
        yield deps
    finally:
        stack.pop()


def note_attribute(owner, attr, value):
    """Note that compiled code took ``owner.attr`` to be ``value`` (``model.W``
    of a module-level object, read when compiling): the gradient compiles again
    once the attribute is rebound (``model.W = W_new``).  Attributes an object
    keeps in its ``__dict__`` are noted; a module's are not (``np.tanh``)."""
    where = getattr(owner, "__dict__", None)
    if isinstance(owner, types.ModuleType) or not isinstance(where, dict) or attr not in where:
        return
    _note(("attribute", id(where), attr), where, attr, value)


def _note(key, where, name, obj):
    stack = getattr(_recording, "stack", None)
    if stack:
        stack[-1].note(key, where, name, obj)


def note_call_time_value(globals_dict, name, generated):
    """The module-level float ``name`` of ``globals_dict`` is read by the
    generated code as its global ``generated`` (Dependencies.changed)."""
    stack = getattr(_recording, "stack", None)
    if stack:
        stack[-1].note_value(("global", id(globals_dict), name), generated)


def _closure_cells(fn):
    code = getattr(fn, "__code__", None)
    if code is None:
        return {}
    return dict(zip(code.co_freevars, getattr(fn, "__closure__", None) or ()))


def _closure_values(fn):
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    values = {}
    if code is None:
        return values
    for name, cell in zip(code.co_freevars, cells):
        try:
            values[name] = cell.cell_contents
        except ValueError:  # an empty cell: a name bound later in the outer scope
            continue
    return values


def parse_function(fn):
    """Parse ``fn``'s source into a :class:`ParsedFunction`.

    The source comes from :func:`register_source` (``tc.grad(f, source=...)``),
    else from ``linecache``: a file, an IPython/Jupyter cell, or text that code
    built with ``exec`` registered there.  Without any, a
    :class:`SourceUnavailableError` says why (the plain prompt, ``exec``, a
    ``.pyc`` without its ``.py``) and what to do.
    """
    label = getattr(fn, "__qualname__", repr(fn))
    if isinstance(fn, (types.BuiltinFunctionType, types.BuiltinMethodType)) or \
            not isinstance(fn, types.FunctionType):
        raise SourceUnavailableError(
            f"cannot differentiate {label}: it is not a Python function with source",
            construct="function without source",
            hint="tc.grad takes a def, a lambda, a bound method, a functools.partial or a "
                 "callable object; give C functions an adjoint with "
                 "tangent_ckpt.register_adjoint")
    given = _REGISTERED.get(fn.__code__)
    filename, lines, first = function_source(fn)
    if fn.__name__ == "<lambda>":
        node, lines, first = _lambda_as_function(fn, filename, lines, first,
                                                 by_position=given is None)
    else:
        node = _first_def("".join(lines))
        if node is None:
            raise SourceUnavailableError(
                f"cannot find the definition of {label} in its source",
                filename=filename, lineno=first, construct="function without source",
                hint="write the function as a plain def")
        if isinstance(node, gast.AsyncFunctionDef):
            raise UnsupportedSyntaxError("async functions cannot be differentiated",
                                         filename=filename, lineno=first,
                                         construct="async def")
        _shift_lines(node, first - 1)
    node.decorator_list = []
    source_lines = {first + i: text.rstrip("\n") for i, text in enumerate(lines)}
    return ParsedFunction(fn, node, filename, source_lines)


def function_source(fn):
    """(file name, source lines, first line number) of the Python function ``fn``:
    the text :func:`register_source` gave, else what ``inspect`` reads."""
    given = _REGISTERED.get(fn.__code__)
    if given is not None:
        return given
    return _file_source(fn, getattr(fn, "__qualname__", repr(fn)))


# code object -> (filename, lines, first line): source given with tc.grad(f, source=...)
_REGISTERED = weakref.WeakKeyDictionary()


def register_source(fn, text):
    """Use ``text`` as the source of ``fn`` (a def or a lambda): for functions
    whose source Python did not keep.  Its lines are numbered from 1 under the
    name ``<source of NAME>``, which ``linecache`` also holds for tracebacks."""
    if not isinstance(fn, types.FunctionType):  # a builtin: parse_function refuses it
        return
    filename = f"<source of {fn.__qualname__}>"
    lines = textwrap.dedent(text).splitlines(True)
    linecache.cache[filename] = (len(text), None, lines, filename)
    _REGISTERED[fn.__code__] = (filename, lines, 1)


def forget_source(fn):
    """Stop using the text :func:`register_source` gave for ``fn``."""
    if isinstance(fn, types.FunctionType):
        _REGISTERED.pop(fn.__code__, None)


def _file_source(fn, label):
    code = fn.__code__
    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except (OSError, TypeError):
        raise SourceUnavailableError(
            f"cannot read the source of {label}: {_why_no_source(code.co_filename)}",
            filename=code.co_filename, lineno=code.co_firstlineno,
            construct="function without source", hint=NO_SOURCE_HINT) from None
    return filename, lines, max(first, 1)


NO_SOURCE_HINT = (
    "ways out: define it in a .py file; or work in IPython or Jupyter, which keep each "
    "cell's source; or give the source yourself, tc.grad(f, source='def f(x): ...'); or, for "
    "code built with exec, compile it under a file name whose text linecache holds: "
    "linecache.cache[name] = (len(text), None, text.splitlines(True), name)")


def _why_no_source(filename):
    if filename == "<stdin>":
        return "it was typed at the plain Python prompt, which keeps no source"
    if filename == "<string>":
        return ("it was made by exec(), compile() or python -c from a string, "
                "whose text Python does not keep")
    if filename.endswith((".pyc", ".pyo")) or (not filename.startswith("<") and
                                               not os.path.exists(filename)):
        return f"its source file {filename} is not there (only compiled bytecode)"
    return f"{filename} is not a file and linecache holds no text for it"


def _first_def(text):
    try:
        tree = gast.parse(textwrap.dedent(text))
    except SyntaxError:
        return None
    for candidate in tree.body:
        if isinstance(candidate, (gast.FunctionDef, gast.AsyncFunctionDef)):
            return candidate
    return None


def _shift_lines(node, offset):
    for child in gast.walk(node):
        if hasattr(child, "lineno") and child.lineno is not None:
            child.lineno += offset
        if hasattr(child, "end_lineno") and getattr(child, "end_lineno", None) is not None:
            child.end_lineno += offset


def _lambda_as_function(fn, filename, lines, first, by_position=True):
    """The lambda ``fn`` as ``def lambda_fn(args): return body``.

    The lambda is identified by its code object, never as "the first lambda on
    its line": among the lambdas of its first line, the one whose body holds
    the source positions of its bytecode (Python >= 3.11), else the only one
    with its argument names.  In a source given by hand (``by_position``
    false) every lambda of the text is a candidate.  Returns the node and the
    lines it spans."""
    code = fn.__code__
    found = _lambdas_at(filename, lines, first, code.co_firstlineno if by_position else None)
    if found is None:
        raise SourceUnavailableError(
            "cannot parse the source around the lambda", filename=filename,
            lineno=code.co_firstlineno, construct="lambda", hint="write the function as a def")
    lam = _the_lambda(found, code, by_position)
    if lam is None:
        raise SourceUnavailableError(
            "cannot tell which lambda of this line it is", filename=filename,
            lineno=code.co_firstlineno, construct="lambda",
            hint="give each lambda its own line, or write it as a def")
    node = gast.FunctionDef(name="lambda_fn", args=lam.args, body=[gast.Return(value=lam.body)],
                            decorator_list=[], returns=None, type_comment=None,
                            type_params=[])
    node.lineno = lam.lineno
    node.body[0].lineno = lam.lineno
    all_lines = linecache.getlines(filename) or []
    start, end = lam.lineno, getattr(lam, "end_lineno", None) or lam.lineno
    span = all_lines[start - 1:end] or lines[:1]
    return node, span, start


def _lambdas_at(filename, lines, first, lineno):
    """The lambdas that start on file line ``lineno``, with file positions: from
    the whole file when it parses, else from the block inspect found.  Each is
    a private copy (later stages may change the tree)."""
    whole = "".join(linecache.getlines(filename))
    for text, line_shift, col_shift in ((whole, 0, 0), _block(lines, first)):
        if not text:
            continue
        by_line = _lambdas_by_line(text)
        if by_line is None:
            continue
        candidates = [lam for lam in by_line.get(None, ())] if lineno is None else \
            list(by_line.get(lineno - line_shift, ()))
        found = []
        for node in candidates:
            node = copy.deepcopy(node)
            _shift_positions(node, line_shift, col_shift)
            found.append(node)
        if found:
            return found
    return None


@functools.lru_cache(maxsize=16)
def _lambdas_by_line(text):
    """{first line: the lambdas that start there, None: every lambda} of ``text``,
    parsed once per text: a file of many lambdas, each differentiated, parsed
    the whole file per lambda (quadratic, benchmarks/compile_time.py
    --lambdas); None when it does not parse."""
    try:
        tree = gast.parse(text)
    except SyntaxError:
        return None
    by_line = {None: []}
    for node in gast.walk(tree):
        if isinstance(node, gast.Lambda):
            by_line.setdefault(node.lineno, []).append(node)
            by_line[None].append(node)
    return by_line


def _block(lines, first):
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip()) if dedented != text and lines else 0
    return dedented, first - 1, indent


def _shift_positions(lam, line_shift, col_shift):
    for child in gast.walk(lam):
        for attr in ("lineno", "end_lineno"):
            if getattr(child, attr, None) is not None:
                setattr(child, attr, getattr(child, attr) + line_shift)
        for attr in ("col_offset", "end_col_offset"):
            if getattr(child, attr, None) is not None:
                setattr(child, attr, getattr(child, attr) + col_shift)


def _the_lambda(candidates, code, by_position):
    if len(candidates) == 1 and not by_position:
        return candidates[0]
    spans = _code_span(code) if by_position else None
    if spans is not None:
        (lo, hi) = spans
        holding = [lam for lam in candidates
                   if (lam.body.lineno, lam.body.col_offset) <= lo and
                   hi <= (lam.body.end_lineno, lam.body.end_col_offset)]
        if holding:  # the innermost lambda whose body holds all of the code
            return min(holding, key=lambda lam: (lam.body.end_lineno - lam.body.lineno,
                                                 lam.body.end_col_offset - lam.body.col_offset))
        return None
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    same = [lam for lam in candidates if tuple(_arg_names(lam.args)) == tuple(names)]
    return same[0] if len(same) == 1 else None


def _code_span(code):
    """(first, last) source position of ``code``'s instructions, or None before 3.11."""
    positions = getattr(code, "co_positions", None)
    if positions is None:
        return None
    starts, ends = [], []
    for line, end_line, col, end_col in positions():
        if None in (line, end_line, col, end_col) or (line, col) == (end_line, end_col):
            continue  # no position, or the empty one of the RESUME instruction
        starts.append((line, col))
        ends.append((end_line, end_col))
    if not starts:
        return None
    return min(starts), max(ends)


def _arg_names(args):
    every = list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)
    return [a.id for a in every]
