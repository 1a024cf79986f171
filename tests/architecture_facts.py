"""The package's structure, measured from its source text (nothing of the package is
imported; NumPy is, to tell its functions from its types).

``python tests/architecture_facts.py [ROOT]`` prints the report (ROOT is a
checkout, by default this one): the import graph (module -> the package's
modules it imports when it is loaded), its circles, the imports of the
package's own modules made inside functions, the largest modules and classes,
modules sharing a file name, the places that parse text or match it with
regular expressions, and the literal tables of NumPy functions in the compiler.
``tests/test_architecture.py`` pins the same facts.

Terms:

* a *top-level* import runs when the module is loaded (module body, class
  bodies, ``if``/``try`` blocks); imports under ``if TYPE_CHECKING:`` are for
  type checkers only and never run;
* a *function-level* import runs when a function is called; calls of
  ``importlib.import_module("tangent_ckpt....")`` count as imports too;
* ``from P import n`` is an import of module ``P.n`` when that is a module of
  the package, else of ``P``;
* what a module *loads* also counts the parent packages Python initialises
  first (``import tangent_ckpt.runtime`` runs ``tangent_ckpt/__init__.py``);
* an *undeclared attribute* is one set or read by name on an object whose class
  does not declare it (the fields of gast's nodes count as declared: gast is
  imported for their names, the package never is).
"""

import ast
import collections
import os
import sys

PACKAGE = "tangent_ckpt"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGEX_FUNCTIONS = {"compile", "sub", "subn", "match", "search", "findall", "finditer",
                   "fullmatch", "split"}


class Module:
    """One module of the package: its dotted name, file, lines and syntax tree."""

    def __init__(self, name, path, root):
        self.name = name
        self.path = path
        self.relpath = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as f:
            self.text = f.read()
        self.lines = self.text.count("\n") + (0 if self.text.endswith("\n") or not self.text
                                              else 1)
        self.tree = ast.parse(self.text, filename=path)
        self.is_package = os.path.basename(path) == "__init__.py"

    @property
    def package(self):
        """The package a relative import in this module starts from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def modules(root=ROOT):
    """{dotted name: Module} for every ``.py`` file of the package under ``root``."""
    found = {}
    base = os.path.join(root, PACKAGE)
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__pycache__")))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            parts = os.path.relpath(path, root)[:-3].split(os.sep)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            module = Module(".".join(parts), path, root)
            found[module.name] = module
    return found


Import = collections.namedtuple("Import", "source target line where")
"""``source`` imports ``target`` at ``line``; ``where``: 'top', 'function' or 'typing'."""


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _absolute(module, node):
    """The absolute module name of an ``ImportFrom``'s ``from`` part."""
    if not node.level:
        return node.module or ""
    base = module.package.split(".")
    if node.level > 1:
        base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(module, node, known):
    """The package modules one import statement (or import_module call) names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        origin = _absolute(module, node)
        out = []
        for alias in node.names:
            sub = f"{origin}.{alias.name}"
            out.append(sub if sub in known else origin)
        return out
    return [node.args[0].value]   # importlib.import_module("...")


def _is_import_module_call(node):
    return (isinstance(node, ast.Call) and node.args and
            isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) and
            ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module") or
             (isinstance(node.func, ast.Name) and node.func.id in ("import_module",
                                                                   "__import__"))))


def imports(module, known):
    """Every import of a package module that ``module`` makes, with where it runs."""
    found = []

    def visit(node, where):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            where = "function" if where == "top" else where
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, "typing")
            for child in node.orelse:
                visit(child, where)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_import_module_call(node):
            for target in _targets(module, node, known):
                if target == PACKAGE or target.startswith(PACKAGE + "."):
                    found.append(Import(module.name, target, node.lineno, where))
        for child in ast.iter_child_nodes(node):
            visit(child, where)

    visit(module.tree, "top")
    return found


def all_imports(mods):
    """Every import of a package module in the package, once per (source, target, line)."""
    return sorted({imp for module in mods.values() for imp in imports(module, mods)})


def graph(mods, where=("top",)):
    """{module: sorted package modules it imports} for imports that run at ``where``."""
    edges = {name: set() for name in mods}
    for imp in all_imports(mods):
        if imp.where in where and imp.target != imp.source:
            edges[imp.source].add(imp.target)
    return {name: sorted(targets) for name, targets in edges.items()}


def cycles(edges):
    """The strongly connected components of more than one module (or a self loop),
    each as a sorted list: every import circle lies inside one of them."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def connect(v):
        # iterative Tarjan: the graph is small but recursion limits are not ours
        work = [(v, iter(edges.get(v, ())))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            advanced = False
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(edges.get(w, ()))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return sorted(out)


def _parents(name):
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def loads(edges, start):
    """Every package module that importing ``start`` runs: its parents, what they
    import, recursively (top-level imports only)."""
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        for dep in _parents(name) + [name] + list(edges.get(name, ())):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def function_level_imports(mods):
    return [imp for imp in all_imports(mods) if imp.where == "function"]


def classes(mods):
    """(lines, module, class name) of every class, largest first."""
    out = []
    for module in mods.values():
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ClassDef):
                out.append((node.end_lineno - node.lineno + 1, module.name, node.name))
    return sorted(out, key=lambda item: (-item[0], item[1], item[2]))


def sizes(mods):
    """(lines, module) of every module, largest first."""
    return sorted(((m.lines, m.name) for m in mods.values()), key=lambda t: (-t[0], t[1]))


def shared_names(mods):
    """{file name: modules} for file names (other than __init__.py) used more than once."""
    by_name = collections.defaultdict(list)
    for module in mods.values():
        if not module.is_package:
            by_name[os.path.basename(module.path)].append(module.name)
    return {name: sorted(found) for name, found in sorted(by_name.items()) if len(found) > 1}


Parse = collections.namedtuple("Parse", "module line kind text")
"""A call that parses text into a syntax tree (``kind`` 'ast.parse', 'gast.parse')
or matches text with a regular expression ('re.sub', ...)."""


def text_parsing(mods):
    """Every ast/gast parse and regular-expression call in the package."""
    out = []
    for module in mods.values():
        lines = module.text.splitlines()
        for node in ast.walk(module.tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and
                    isinstance(node.func.value, ast.Name)):
                continue
            owner, attr = node.func.value.id, node.func.attr
            if (owner in ("ast", "gast") and attr == "parse") or \
                    (owner == "re" and attr in REGEX_FUNCTIONS):
                out.append(Parse(module.name, node.lineno, f"{owner}.{attr}",
                                 lines[node.lineno - 1].strip()))
    return sorted(out)


Attribute = collections.namedtuple("Attribute", "module line how name")
"""An attribute ``name`` set or read by name at ``line`` of ``module`` (``how``: 'set',
'setattr', 'getattr' with a default, 'hasattr') that no class declares."""


def _gast_fields():
    """The fields and position attributes of every gast node class."""
    import gast  # the syntax-tree library the compiler works on (not the package)
    names = set()
    for value in vars(gast).values():
        if isinstance(value, type) and issubclass(value, gast.AST):
            names |= set(value._fields) | set(getattr(value, "_attributes", ()))
    return names


def declared_attributes(mods):
    """Attribute names some class of the package declares: assigned to ``self.name``,
    bound in a class body, named in ``__slots__``, or a method's name."""
    names = set()
    for module in mods.values():
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                    isinstance(node.value, ast.Name) and node.value.id == "self":
                names.add(node.attr)
            if not isinstance(node, ast.ClassDef):
                continue
            for stmt in node.body:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else \
                    [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
                names |= {t.id for t in targets if isinstance(t, ast.Name)}
                if any(isinstance(t, ast.Name) and t.id == "__slots__" for t in targets):
                    names |= {c.value for c in ast.walk(stmt.value)
                              if isinstance(c, ast.Constant) and isinstance(c.value, str)}
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(stmt.name)
    return names


def _loop_constants(tree):
    """{loop variable: the strings it takes} for ``for attr in ("a", "b"):`` loops."""
    found = collections.defaultdict(set)
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and \
                isinstance(node.iter, (ast.Tuple, ast.List)) and \
                all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                    for e in node.iter.elts):
            found[node.target.id] |= {e.value for e in node.iter.elts}
    return found


def undeclared_attributes(mods, prefix=PACKAGE + ".compiler"):
    """Attributes set or read by name in the modules under ``prefix`` on objects
    whose class does not declare them: ``x.name = v`` (``x`` not ``self`` or
    ``cls``), ``setattr(x, name, v)``, ``getattr(x, "name", default)`` and
    ``hasattr(x, "name")``, for a name that is no field of a gast node, no
    attribute a class of the package declares, and no dunder.  This is how one
    pass would hand a fact to another on the syntax tree's nodes (a ``setattr``
    whose name is computed counts as ``<computed>`` unless a loop over constant
    names binds it)."""
    known = _gast_fields() | declared_attributes(mods)
    out = []
    for module in mods.values():
        if not module.name.startswith(prefix):
            continue
        loops = _loop_constants(module.tree)
        for node in ast.walk(module.tree):
            found = []
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                    not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found = [("set", node.attr)]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("getattr", "setattr", "hasattr") and len(node.args) >= 2 \
                    and not (node.func.id == "getattr" and len(node.args) < 3):
                name = node.args[1]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    found = [(node.func.id, name.value)]
                elif node.func.id == "setattr":
                    bound = loops.get(name.id) if isinstance(name, ast.Name) else None
                    found = [("setattr", n) for n in sorted(bound or ["<computed>"])]
            for how, name in found:
                if name not in known and not (name.startswith("__") and name.endswith("__")):
                    out.append(Attribute(module.name, node.lineno, how, name))
    return sorted(out)


NumpyTable = collections.namedtuple("NumpyTable", "module line owner members")
"""A literal collection at ``line`` of ``module``, in the function or assignment
``owner``, that lists NumPy functions (``members``: ``np.add`` for an attribute,
``'reshape'`` for a name)."""


def _numpy_function(name):
    """The NumPy function (or ufunc) ``name`` (``"fft.fft"``) names, or None; a type
    (``np.ndarray``, ``np.random.Generator``) is no function."""
    import warnings

    import numpy  # the array library the package works on (not the package)
    obj = numpy
    for part in name.split("."):
        try:
            with warnings.catch_warnings():   # np.object, np.bytes: deprecated aliases
                warnings.simplefilter("ignore")
                obj = getattr(obj, part, None)
        except Exception:   # noqa: BLE001 - an alias that raises is no function either
            return None
    return obj if callable(obj) and not isinstance(obj, type) else None


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in ("np", "numpy"):
        return ".".join(reversed(parts))
    return None


def _owners(tree):
    """{id(node): the name of the function or assigned variable it sits in}."""
    owner = {}

    def visit(node, name):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = node.name
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and name == "<module>":
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            name = ",".join(ast.unparse(t) for t in targets)
        owner[id(node)] = name
        for child in ast.iter_child_nodes(node):
            visit(child, name)
    visit(tree, "<module>")
    return owner


def numpy_tables(mods, prefix=PACKAGE + ".compiler"):
    """Literal tables of NumPy functions in the modules under ``prefix``: a set,
    tuple, list or dict (keys and values), or the positional arguments of one call,
    holding two NumPy functions as attributes (``(np.add, np.subtract)``), or at
    least three names of NumPy functions that are most (4 in 5) of its strings
    (``{"sum", "mean", "prod"}``).  Facts about a primitive belong in its row of
    the rule registry (``adjoints/``), from which such tables are derived."""
    out = []
    for module in mods.values():
        if not module.name.startswith(prefix):
            continue
        owners = _owners(module.tree)
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
                items = node.elts
            elif isinstance(node, ast.Dict):
                items = [k for k in node.keys if k is not None] + node.values
            elif isinstance(node, ast.Call):
                items = node.args
            else:
                continue
            attributes = [d for d in map(_dotted, items) if d and _numpy_function(d)]
            strings = [i.value for i in items
                       if isinstance(i, ast.Constant) and isinstance(i.value, str)]
            names = [n for n in strings if not n.startswith("__")
                     and _numpy_function(n) is not None]
            if len(attributes) >= 2 or (len(names) >= 3 and 5 * len(names) >= 4 * len(strings)):
                members = tuple(sorted([f"np.{d}" for d in attributes] +
                                       [repr(n) for n in names]))
                out.append(NumpyTable(module.name, node.lineno, owners[id(node)], members))
    return sorted(out)


def crossings(edges, sources, targets):
    """The imports (``edges``) from a module of ``sources`` to one of ``targets``
    (each a collection of module names, or of package prefixes ending in '.')."""
    def member(name, group):
        return any(name == g or (g.endswith(".") and name.startswith(g)) for g in group)
    return [(a, b) for a, bs in sorted(edges.items()) if member(a, sources)
            for b in bs if member(b, targets)]


def report(root=ROOT):
    """The measurements, as printable text."""
    mods = modules(root)
    edges = graph(mods)
    out = [f"# architecture of {PACKAGE} at {root}", "",
           f"{len(mods)} modules, {sum(m.lines for m in mods.values())} lines", "",
           "## import graph (top-level imports of the package's own modules)"]
    for name in sorted(edges):
        short = [t[len(PACKAGE) + 1:] or PACKAGE for t in edges[name]]
        out.append(f"{name[len(PACKAGE) + 1:] or PACKAGE} -> {', '.join(short) or '-'}")
    out += ["", f"edges: {sum(len(v) for v in edges.values())}"]
    circles = cycles(edges)
    out += ["", f"## import circles (strongly connected components): {len(circles)}"]
    out += ["  " + " <-> ".join(c) for c in circles]
    hidden = [c for c in cycles(graph(mods, where=("top", "function"))) if c not in circles]
    out += ["", f"## circles closed by function-level imports: {len(hidden)}"]
    out += ["  " + " <-> ".join(c) for c in hidden]
    flevel = function_level_imports(mods)
    out += ["", f"## function-level imports of the package's own modules: {len(flevel)}"]
    out += [f"  {i.source}:{i.line} -> {i.target}" for i in flevel]
    compiler = sorted(n for n in loads(edges, PACKAGE + ".runtime")
                      if n.startswith(PACKAGE + ".compiler"))
    out += ["", f"## `import {PACKAGE}.runtime` loads {len(compiler)} compiler modules"]
    out += [f"  {n}" for n in compiler[:10]] + (["  ..."] if len(compiler) > 10 else [])
    api = sorted(n for n in mods if n.startswith(PACKAGE + ".compiler")
                 and PACKAGE + ".api" in set(edges.get(n, ())))
    out += ["", f"## compiler modules importing {PACKAGE}.api directly: {len(api)}"]
    out += [f"  {n}" for n in api]
    out += ["", "## largest modules"] + [f"  {n:5d} {m}" for n, m in sizes(mods)[:12]]
    out += ["", "## largest classes"] + [f"  {n:5d} {m}.{c}" for n, m, c in classes(mods)[:8]]
    shared = shared_names(mods)
    out += ["", f"## file names used by more than one module: {len(shared)}"]
    out += [f"  {name}: {', '.join(found)}" for name, found in shared.items()]
    parses = text_parsing(mods)
    out += ["", f"## parse / regular-expression calls: {len(parses)}"]
    out += [f"  {p.module}:{p.line} {p.kind}: {p.text}" for p in parses]
    attributes = undeclared_attributes(mods)
    out += ["", f"## attributes set or read by name that no class declares (compiler): "
                f"{len(attributes)}"]
    out += [f"  {a.module}:{a.line} {a.how} {a.name}" for a in attributes]
    tables = numpy_tables(mods)
    out += ["", f"## literal tables of NumPy functions (compiler): {len(tables)}"]
    out += [f"  {t.module}:{t.line} {t.owner}: {', '.join(t.members)}" for t in tables]
    return "\n".join(out)


if __name__ == "__main__":
    print(report(os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else ROOT))
