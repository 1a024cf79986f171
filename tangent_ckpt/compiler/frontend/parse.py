"""Frontend: a Python function -> its gast tree, its file and line, and a resolver
that maps every free name to the object it denotes (globals, closures, builtins).

Names are resolved to objects, never matched as strings: ``import numpy as onp``
then ``onp.tanh`` is ``np.tanh``.
"""

import builtins
import contextlib
import inspect
import linecache
import os
import re
import textwrap
import threading
import types
import weakref

import gast

from tangent_ckpt.compiler.frontend.lambda_source import lambda_as_function
from tangent_ckpt.compiler.frontend.reached_functions import _installed, user_class
from tangent_ckpt.compiler.node_facts import NodeFacts
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
        # what desugar's inlining of the user's helpers adds (desugar/inline_functions.py):
        # a name it gave a name a helper reads from its own module -> (that helper's
        # ParsedFunction, the name there); each node it copied from a helper -> the
        # helper (a refusal names the helper's file); the helpers' lines from this
        # file, for the comments of the generated code
        self.inlined_names = {}
        self.origins = NodeFacts()
        # each such node -> (the helper's name, its call's line, that line's own site)
        self.call_sites = NodeFacts()
        # (line, column, end line, end column) of each such node -> (helper, call
        # site), None where a node of this function's own has that place too: a node
        # a later pass makes at an inlined node's place comes from the helper as well
        self.inlined_places = {}
        self.inlined_lines = {}
        self.spellings = {}  # a name it gave a helper's local -> the local's own name
        # a parameter desugar wrote as one parameter per leaf attribute of the object
        # it is given (desugar/scalar_objects.py) -> those parameters, in order
        self.flattened_parameters = {}
        # the parameters given objects (or lists of them) outside ``wrt``, compiled
        # for their structure (``container_args.outside_objects``): their attributes
        # are parameters read when called, so the code may store no attribute on an
        # object it did not make (desugar/scalar_objects.py, outside_attributes.py,
        # lower/outside_objects.py refuse it)
        self.outside_given = frozenset()
        # whether the code stores an attribute on an object the call gives, which
        # desugar or the lowering follows as a variable (desugar/scalar_objects.py,
        # lower/outside_objects.py): one object given twice would then be two
        self.stores_on_given = False
        # desugar/object_lists.py: the variables of loops over lists of objects it
        # left to the lowering whose reads outside the loop's block assert a flag
        # the block binds after the loop (the lowering refuses any other such read)
        self.checked_loop_variables = set()
        # desugar/outside_attributes.py: each ``CELL.h`` it binds at the top
        # (``CELL_h = CELL.h``), read when the gradient runs, not when compiling; and
        # the objects whose stored attributes it wrote as names: id(obj) -> (obj,
        # {attribute: name})
        self.read_when_called = NodeFacts()
        self.outside_written = {}
        # desugar/comprehension_loops.py: each ``for`` it wrote for a comprehension's
        # generator (-> True), each ``if`` for its condition (-> that ``for``), and
        # each ``items.append(...)`` (-> the stem the items are named after)
        self.comprehension_loops = NodeFacts()
        self.comprehension_conditions = NodeFacts()
        self.comprehension_appends = NodeFacts()

    @property
    def name(self):
        return self.node.name

    def origin(self, node):
        """The function whose file ``node`` comes from: a helper inlined into this
        one, or this one."""
        return self._inlined(node)[0] or self

    def _inlined(self, node):
        """(helper or None, call site or None) of ``node``."""
        if node is None:
            return None, None
        helper, site = self.origins.get(node), self.call_sites.get(node)
        if helper is None and site is None:
            return self.inlined_places.get(place_of(node)) or (None, None)
        return helper, site

    def located(self, cls, message, node, construct=None, hint=None):
        """An error of class ``cls`` at ``node``: in the file it comes from, and,
        for a node of a helper desugar inlined, saying where the helper is called."""
        for given, own in self.spellings.items():  # a helper's names as its code spells them
            word = re.compile(rf"\b{re.escape(given)}\b")
            message = word.sub(own, message)
            hint = word.sub(own, hint) if hint else hint
        site = self._inlined(node)[1]
        if site is not None:
            chain = []
            while site is not None:
                chain.append(f"in {site[0]}(), called at line {site[1]}")
                site = site[2]
            message = f"{message} ({', '.join(chain)})"
        lineno = getattr(node, "lineno", None) if node is not None else self.node.lineno
        return cls(message, filename=self.origin(node).filename, lineno=lineno,
                   construct=construct, hint=hint)

    def annotated_lines(self, fnode):
        """The source lines of ``fnode`` (this function's tree, or a ``def`` in it)
        for the comments of code inlined from it, each naming the function (or
        method) it belongs to and the line of its ``def``: ``return np.tanh(self.W @
        x)  (in Model.forward, line 12)``; a line of a ``def`` nested in it names
        that one."""
        qualname = getattr(self.fn, "__qualname__", fnode.name) \
            if self.node is fnode else fnode.name
        if fnode.name == "lambda_fn":
            qualname = "lambda"
        found = {}
        defs = [(fnode, qualname)] + [(n, n.name) for n in gast.walk(fnode)
                                      if isinstance(n, gast.FunctionDef) and n is not fnode]
        for node, name in defs:  # outer ones first: a nested def's lines name it
            last = getattr(node, "end_lineno", None) or max(self.source_lines,
                                                             default=node.lineno)
            for line, text in self.source_lines.items():
                if node.lineno < line <= last and text.strip():
                    found[line] = f"{text.strip()}  (in {name}, line {node.lineno})"
        return found

    def line_text(self, lineno):
        return self.source_lines.get(lineno, "").strip()

    def resolve(self, name):
        """The object that free name ``name`` denotes, or ``_UNRESOLVED``.

        Every resolution is noted in the active :class:`Dependencies` (see
        :func:`recording`): the compiled gradient is valid while each name still
        denotes the same object."""
        if name in self.inlined_names:
            helper, original = self.inlined_names[name]
            return helper.resolve(original)
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
        return self.located(cls, message, node, construct, hint)

    def outside_store_refusal(self, target):
        """(message, hint) refusing a store on ``target`` (``CELL.h``), an
        attribute of an object made outside the function and not given by the
        call, where objects passed outside ``wrt`` are compiled for their
        attributes (:attr:`outside_given`): one of them may be that object, and
        its attribute, a parameter, would be read as it was when called."""
        given = ", ".join(sorted(self.outside_given))
        return (f"an attribute stored on an object made outside the function ({target}), "
                f"where '{given}', passed outside wrt, is compiled for its attributes (it "
                "may be that object, read there with the value it had when called)",
                "keep the new value in a variable (return it), or pass the object in wrt")


def place_of(node):
    """Where ``node`` is written: (line, column, end line, end column)."""
    return tuple(getattr(node, f, None) for f in ("lineno", "col_offset", "end_lineno",
                                                   "end_col_offset"))


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
            elif isinstance(where, type):  # a class's attribute, maybe inherited
                now = inspect.getattr_static(where, name, _UNRESOLVED)
            elif isinstance(where, (list, tuple)):  # its items, all of them (note_items)
                same = len(where) == len(obj) and all(a is b for a, b in zip(where, obj))
                now = obj if same else _UNRESOLVED
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

    def values(self):
        """Every object a resolved name denoted, and each object an attribute
        was read from (a module-level ``CELL`` of ``CELL.W``)."""
        for where, _, obj in self._entries.values():
            yield obj
            if not isinstance(where, (dict, type, list, tuple, types.CellType)):
                yield where


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
    of a module-level object, ``Config.dt`` of a class, ``cfg.DT`` of a module of
    the user's, read when compiling): the gradient compiles again once the
    attribute is rebound (``model.W = W_new``, ``Config.dt = 0.5``).  A
    library's modules and classes are not noted (``np.tanh``)."""
    if isinstance(owner, type):
        class_attribute(owner, attr)
        return
    if isinstance(owner, types.ModuleType) and _library_module(owner):
        return
    where = getattr(owner, "__dict__", None)
    if not isinstance(where, dict) or attr not in where:
        return
    _note(("attribute", id(where), attr), where, attr, value)


def class_attribute(cls, attr, default=_UNRESOLVED):
    """``inspect.getattr_static(cls, attr, default)`` (the attribute as the class
    or a base holds it: a function, a property, a number), noted for a class of
    the user's like :func:`note_attribute`: the gradient compiles again once a
    class attribute the compile read is rebound (``Config.dt = 0.5``, a method
    replaced)."""
    raw = inspect.getattr_static(cls, attr, _UNRESOLVED)
    if user_class(cls):
        _note(("class attribute", id(cls), attr), cls, attr, raw)
    return default if raw is _UNRESOLVED else raw


def _library_module(module):
    """NumPy's, the standard library's, an installed package's, or ours."""
    name = module.__name__.split(".")[0]
    return name in ("numpy", "scipy", "tangent_ckpt") or _installed(module.__name__)


def note_item(table, key, value):
    """Note that compiled code took ``table[key]`` to be ``value`` (a function a
    module-level dict holds, ``LIMITERS["minmod"]``, read when compiling): the
    gradient compiles again once the item is stored over or deleted."""
    _note(("item", id(table), key), table, key, value)


def note_items(sequence, label):
    """Note that compiled code took the module-level list or tuple ``sequence``
    (named ``label``) to hold the functions it holds now, in their order (a loop
    over it written out, ``function_loops.py``): the gradient compiles again once
    an item is stored over, added or removed."""
    _note(("items", id(sequence)), sequence, label, tuple(sequence))


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
        node, lines, first = lambda_as_function(fn, filename, lines, first,
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
