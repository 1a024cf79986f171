"""Which of the user's functions the lowering may inline, found before lowering,
so that the aliasing fence checks each of them once, before any is inlined.

The lowering resolves a call when it reaches it, as a partial evaluator: a name
bound to a function, an attribute of a module, of a class or of an object, a
function passed down as an argument, a method of an object made in the code, a
``functools.partial``, a ``@property``.  Every such function is a value the
user's code *names* somewhere -- in the differentiated function, in a helper it
reaches, in the default arguments of one, in the attributes of a module-level
object, or in the class of an argument -- so the set found here, from those
names and values, holds every function the lowering can inline, and usually a
few more (a function named but never called is checked too, and its refusal,
if any, is kept until the lowering inlines it: see ``fence_once.py``).

Each function comes with its *role*, how the lowering inlines it:

- ``FUNCTION``: called by its name or as a value (``step(H)``, ``f(x)`` for a
  ``f`` passed in, ``Model.forward(m, x)``): its writes through views are made
  explicit (``views.py``, as a helper) and then fenced;
- ``METHOD``: a method of an object (``model.forward(x)``, ``__init__``,
  ``__call__``, a ``@property``'s getter) or a generator a ``for`` loop runs:
  fenced as written.
"""

import functools
import inspect
import os
import sys
import sysconfig
import types
import weakref

import gast

from tangent_ckpt.adjoints import registry

FUNCTION = "function"
METHOD = "method"

_LIBRARIES = ("numpy", "scipy", "tangent_ckpt")
_NOT_USER_MODULES = ("builtins", "numpy")
_MISSING = object()
_LARGEST_CONTAINER = 10_000  # items of a module-level list or dict looked through
_MOST_EXPANDED = 20_000  # objects looked through for one compilation


def is_library(fn):
    """A function of NumPy, SciPy, this package, the standard library or an
    installed package (never inlined: ``random.gauss`` is a draw, not code of
    the user's to differentiate)."""
    module = getattr(fn, "__module__", "") or ""
    return module.split(".")[0] in _LIBRARIES or _installed(module)


def user_function(fn):
    """A Python function of the user's (not NumPy's, SciPy's or ours)."""
    return isinstance(fn, types.FunctionType) and not is_library(fn)


def user_object(obj):
    """An object of a class written by the user (not a library's, the standard
    library's or an installed package's), whose methods the fence reaches."""
    return user_class(type(obj)) and _reachable_class(type(obj))


def _reachable_class(cls):
    """A class whose members may be the user's functions: any but builtins', NumPy's
    and those of installed libraries (the standard library, site-packages), whose
    objects can hold large graphs of their own (a test runner's, a plotting
    library's) and no function of the user's the code could name."""
    if not isinstance(cls, type):
        return False
    if cls is types.SimpleNamespace:  # CFG = SimpleNamespace(act=my_act): the user's
        return True
    module = getattr(cls, "__module__", "") or ""
    return module.split(".")[0] not in _NOT_USER_MODULES and not _installed(module)


@functools.lru_cache(maxsize=None)
def _installed(module_name):
    """True when the module was loaded from the interpreter's standard library or
    site-packages (not from the user's own files)."""
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None)
    if module is None or path is None:
        return module_name.split(".")[0] in sys.builtin_module_names
    path = os.path.realpath(path)
    return any(path.startswith(root + os.sep) for root in _LIBRARY_ROOTS)


_LIBRARY_ROOTS = tuple(sorted({os.path.realpath(p) for key, p in sysconfig.get_paths().items()
                               if key in ("stdlib", "platstdlib", "purelib", "platlib")}))


def user_class(obj):
    """A class written by the user (not a NumPy, SciPy, builtin or our class)."""
    module = (getattr(obj, "__module__", "") or "").split(".")[0]
    return inspect.isclass(obj) and module not in _LIBRARIES + ("builtins",)


def functions_named(parsed):
    """(role, function) for every user function that ``parsed``'s code names,
    directly or through the values it names, in the order first met."""
    names, chains = {}, {}  # each name and attribute chain looked up once
    for node in gast.walk(parsed.node):
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Store):
            names.setdefault(node.id, None)
        elif isinstance(node, gast.Attribute):
            path = _dotted(node)
            if path is not None:
                chains.setdefault(path, None)
    finder = _Finder()
    for name in names:
        finder.value(peek(parsed, name))
    for path in chains:
        finder.chain(parsed, path)
    return finder.found


def _dotted(node):
    """``("mod", "sub", "helper")`` for ``mod.sub.helper``; None for other bases."""
    names = []
    while isinstance(node, gast.Attribute):
        names.append(node.attr)
        node = node.value
    return (node.id, *reversed(names)) if isinstance(node, gast.Name) else None


def functions_of_arguments(containers):
    """(role, function) for the methods of the classes of the arguments given as
    objects (``containers``: position -> ``tangent_ckpt.flatten.structure_of``)."""
    finder = _Finder()
    for structure in (containers or {}).values():
        finder.structure(structure)
    return finder.found


def peek(parsed, name):
    """What the free name ``name`` denotes, as ``parsed.resolve`` says, without
    noting it as a dependency of the gradient (the lowering notes what it uses).
    A name desugar gave code it inlined from a helper is the helper's name
    (``ParsedFunction.inlined_names``)."""
    if name in getattr(parsed, "inlined_names", {}):
        helper, original = parsed.inlined_names[name]
        return peek(helper, original) if hasattr(helper, "globals") else \
            helper.resolve(original)
    if name in parsed.closure:
        return parsed.closure[name]
    return parsed.globals.get(name, _MISSING)


_PROXIES = (weakref.ProxyType, weakref.CallableProxyType)


class _Finder:
    def __init__(self):
        self.found = []
        self.seen = set()  # (role, function) found
        self.expanded = {}  # id(value) -> value: looked through already

    def add(self, role, fn):
        if (role, fn) not in self.seen:
            self.seen.add((role, fn))
            self.found.append((role, fn))

    def chain(self, parsed, path):
        """``mod.helper``, ``Model.forward``: attribute chains of modules and
        classes (an object's attributes are all looked through by :meth:`value`)."""
        base = peek(parsed, path[0])
        for attr in path[1:]:
            if not isinstance(base, types.ModuleType) and not _reachable_class(base):
                return
            try:
                base = getattr(base, attr, _MISSING)
            except Exception:  # an attribute that fails to compute: the lowering says so
                return
            if base is _MISSING:
                return
            self.value(base)

    def value(self, value):
        if type(value) in _PROXIES:  # a weak proxy (maybe dead): what it points to is
            return                   # never a function the code names through it
        if value is _MISSING or value is None or \
                isinstance(value, (bool, int, float, complex, str, bytes, types.ModuleType)):
            return
        if isinstance(value, types.FunctionType):
            if user_function(value) and registry.lookup(value) is None:
                self.add(FUNCTION, value)
                if inspect.isgeneratorfunction(value):  # for x in gen(...)
                    self.add(METHOD, value)
                self.expand(value, lambda: [*(value.__defaults__ or ()),
                                            *(value.__kwdefaults__ or {}).values()])
            return
        if isinstance(value, types.MethodType):
            if user_function(value.__func__):
                self.add(METHOD, value.__func__)
            self.value(value.__self__)
            return
        if isinstance(value, functools.partial):
            self.expand(value, lambda: [value.func, *value.args, *value.keywords.values()])
            return
        if isinstance(value, type):
            if _reachable_class(value):
                self.expand(value, lambda: self.class_members(value))
            return
        if isinstance(value, (list, tuple, set, frozenset)):
            if len(value) <= _LARGEST_CONTAINER:
                self.expand(value, lambda: list(value))
            return
        if isinstance(value, dict):
            if len(value) <= _LARGEST_CONTAINER:
                self.expand(value, lambda: list(value.values()))
            return
        if _reachable_class(type(value)):  # an object: its class, and what it holds
            self.expand(value, lambda: [type(value), *_attributes(value)])

    def expand(self, value, members):
        if id(value) in self.expanded or len(self.expanded) >= _MOST_EXPANDED:
            return  # past the budget a function reached only further is refused
        self.expanded[id(value)] = value  # where the lowering meets it, never inlined unchecked
        for member in members():
            self.value(member)

    def class_members(self, cls):
        """The methods, static methods, property getters and class attributes of
        ``cls`` and of its user base classes."""
        members = []
        for klass in cls.__mro__:
            if not _reachable_class(klass):
                continue
            for name, raw in list(vars(klass).items()):
                if isinstance(raw, types.FunctionType):
                    if user_function(raw):
                        self.add(METHOD, raw)
                elif isinstance(raw, staticmethod):
                    members.append(raw.__func__)
                elif isinstance(raw, property):
                    if user_function(raw.fget):
                        self.add(METHOD, raw.fget)
                elif not (name.startswith("__") and name.endswith("__")):
                    members.append(raw)
        return members

    def structure(self, structure):
        if not isinstance(structure, tuple):
            return
        kind = structure[0]
        if kind == "object":
            self.value(structure[1])
            for item in structure[3]:
                self.structure(item)
        elif kind == "dict":
            for item in structure[2]:
                self.structure(item)
        elif kind != "const":
            if isinstance(kind, type):  # a namedtuple's class
                self.value(kind)
            for item in structure[-1]:
                self.structure(item)


def _attributes(obj):
    """The values an object holds in its ``__dict__`` and ``__slots__`` (read
    without running the object's own ``__getattr__`` or properties)."""
    try:
        held = list(object.__getattribute__(obj, "__dict__").values())
    except (AttributeError, TypeError):
        held = []
    for klass in type(obj).__mro__:
        slots = vars(klass).get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            try:
                held.append(object.__getattribute__(obj, slot))
            except (AttributeError, TypeError):
                continue
    return held
