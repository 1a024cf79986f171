"""The shape of the package, pinned: the import graph has no circles, the
runtime never loads the compiler, the compiler never loads the public API, no
function imports the package's own modules, no two modules share a file name,
modules live in the folder of their stage, only the frontend parses text, the
fence and the lowering never import each other, no pass hands a fact to
another as an undeclared attribute of a node, and no compiler module keeps a
table of NumPy functions beside the rule registry's rows.

The facts are measured from the source by ``tests/architecture_facts.py``
(``python tests/architecture_facts.py`` prints them all).  Each allow-list
below names its entries' reasons; an entry that is no longer needed fails the
test too, so the lists only shrink.
"""

import ast
import os
import subprocess
import sys

import pytest

import architecture_facts as facts

PACKAGE = facts.PACKAGE

# function-level imports of the package's own modules: (module, imported) -> reason
LAZY_IMPORTS = {
    ("tangent_ckpt.runtime.jit.numba_backend", "tangent_ckpt.runtime.jit.numba_twins"):
        "optional dependency: the twins import Numba, which only backend='numba' needs",
}

# what sits at the root of compiler/ and runtime/: the shared modules, each with its
# reason; every other module lives in the folder of its stage or its job (#30)
COMPILER_ROOT = {
    "pipeline": "the list of stage calls",
    "ir": "the lowered program every stage after lowering reads",
    "syntax": "builders of generated statements, for every stage that generates code",
    "code": "generated code as data (lines, blocks, saves) until emit",
    "naming": "fresh names and how generated code spells NumPy functions",
    "memory_sharing": "which calls return views of or write into their arguments (from the "
                      "registry's rows): read by desugar, the fence, the lowering and the "
                      "analysis",
    "node_facts": "the declared tables one pass hands another about syntax-tree nodes",
}
COMPILER_STAGES = {"frontend", "desugar", "fence", "lower", "analyze", "transform",
                   "package", "emit", "backend"}
RUNTIME_ROOT = {
    "backends": "array libraries beyond NumPy, for every runtime part",
    "memory": "memory budgets, read by the options and the schedules",
    "random_state": "random draws under recomputation, for generated code and the driver",
    "assertions": "the user's assert statements as generated code runs them",
    "keyed": "dicts written at run-time keys, as generated code builds them",
    "rows": "lists built at run time, as generated code builds them",
    "custom_rules": "users' own adjoint rules at run time",
    "alias_guards": "the aliasing fence's run-time checks, as generated code runs them",
}
RUNTIME_FOLDERS = {"scheduling", "stores", "primitive_adjoints", "jit", "loops"}
# every call that parses text or matches it with a regular expression, outside
# the frontend (compiler/frontend/parse.py and its lambda_source.py): module -> (how many, reason)
TEXT_READERS = {
    "tangent_ckpt.adjoints.rule_text": (
        2, "a rule's declaration: its signature and its expressions, parsed once (stdlib "
           "ast, as generated code is) when the rule is declared"),
    "tangent_ckpt.compiler.frontend.deep": (
        1, "the frontend's error path: the depth of the user's deepest expression, read "
           "with CPython's parser because gast's conversion recurses and is what overflowed"),
    "tangent_ckpt.compiler.lower.container_values": (
        1, "a variable name made from a dict key (a user value, not generated code)"),
    "tangent_ckpt.compiler.transform.segment_bodies": (
        1, "a variable name made from a segment's label (a user value)"),
    "tangent_ckpt.runtime.memory": (
        1, "memory_budget='64MB': a number and a unit, from the user"),
}
FRONTEND = {"tangent_ckpt.compiler.frontend.parse",
            "tangent_ckpt.compiler.frontend.lambda_source"}

# the fence (views, aliases) runs once, before lowering, and hands the lowering data
# (view_facts.py is a leaf of facts about expressions that method_writes.py shares)
FENCE = {f"{PACKAGE}.compiler.{name}" for name in (
    "fence.aliasing", "fence.alias_values", "desugar.views", "desugar.view_groups",
    "desugar.view_shape", "fence.fence_once")}
LOWER = (f"{PACKAGE}.compiler.lower.",)

# attributes set or read by name in compiler/ that no class declares: (module, name) ->
# reason.  None is on a node of the syntax tree: facts between passes are declared
# fields (node_facts.py's tables, the IR's fields), never attributes added to nodes
UNDECLARED_ATTRIBUTES = {
    ("tangent_ckpt.compiler.code", "_reads"): "a line's cache of the names it reads",
    ("tangent_ckpt.compiler.frontend.deep", "co_filename"): "a code object's, read defensively",
    ("tangent_ckpt.compiler.frontend.deep", "co_firstlineno"): "a code object's, read defensively",
    ("tangent_ckpt.compiler.emit.rendering", "_Unparser"): "the ast module's, where Python has it",
    ("tangent_ckpt.compiler.frontend.lambda_source", "co_positions"): "a code object's (Python 3.11+)",
    ("tangent_ckpt.compiler.lower.assignments", "aliases"): "a lowering scope's",
    ("tangent_ckpt.compiler.lower.inlining", "aliases"): "a lowering scope's",
    ("tangent_ckpt.compiler.lower.container_statements", "loops_open"): "an ObjectValue's",
    ("tangent_ckpt.compiler.lower.objects", "loops_open"): "an ObjectValue's",
    ("tangent_ckpt.compiler.lower.run_time_containers", "loops_open"): "an ObjectValue's",
    ("tangent_ckpt.compiler.frontend.parse", "stack"): "a threading.local's",
    ("tangent_ckpt.compiler.desugar.views", "stack"): "a threading.local's",
}

# literal tables of NumPy functions in compiler/ (architecture_facts.numpy_tables):
# (module, where) -> (its members, reason).  What a primitive does is one row of the
# rule registry (adjoints/numpy_rules.py), and every table of such facts is derived
# from the rows (#30); what is listed here recognises one construct, not a fact
NUMPY_TABLES = {
    ("tangent_ckpt.compiler.desugar.view_facts", "view_link"): (
        ("np.ravel", "np.reshape"),
        "the views the view lowering knows how to derive again (a reshape of its "
        "parent); which calls are views at all is their rows' view="),
    ("tangent_ckpt.compiler.lower.calls", "primitive"): (
        ("np.array", "np.asarray"),
        "np.array([x, y]) of a list literal is lowered as np.stack (a rewrite of syntax)"),
    ("tangent_ckpt.compiler.package.written_rows", "_counter_names"): (
        ("np.add", "np.subtract"),
        "a loop counter moved by a constant: i + 1, i - 1 (arithmetic, not a table)"),
    ("tangent_ckpt.compiler.transform.linear_tangents", "joint_tangent"): (
        ("np.add", "np.subtract"),
        "the tangent of a + b written as ta + tb (the operators themselves)"),
    ("tangent_ckpt.compiler.lower.effect_calls", "_AT_PRIMITIVES"): (
        ("np.add", "np.divide", "np.multiply", "np.subtract"),
        "np.add.at(a, i, v) spelled as the primitive rt.add_at: a lowering of syntax "
        "(ufunc.at), whose facts are the primitive's own row"),
    ("tangent_ckpt.compiler.desugar.masked_ufuncs", "MASKED_UFUNCS"): (
        ("np.divide", "np.true_divide"),
        "the safe-division idiom np.divide(a, b, out=np.zeros_like(a), where=b != 0) "
        "written as a masked division (a rewrite of syntax; the out array's newness "
        "is its row's view=)"),
}


@pytest.fixture(scope="module")
def modules():
    return facts.modules()


@pytest.fixture(scope="module")
def edges(modules):
    return facts.graph(modules)


def test_the_measurements_see_the_whole_package(modules, edges):
    assert "tangent_ckpt.compiler.pipeline" in modules
    assert "tangent_ckpt.compiler.lower.normalize" in edges["tangent_ckpt.compiler.pipeline"]
    assert facts.cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]


def test_the_import_graph_has_no_circles(modules):
    """Counting imports made inside functions too, so none hides a circle."""
    assert facts.cycles(facts.graph(modules, where=("top", "function"))) == []


def test_the_runtime_never_imports_the_compiler(modules, edges):
    """What importing any runtime module runs -- its parent packages included --
    holds no compiler module and no entry point that loads it."""
    for name in modules:
        if name == f"{PACKAGE}.runtime" or name.startswith(f"{PACKAGE}.runtime."):
            loaded = facts.loads(edges, name)
            bad = sorted(n for n in loaded if n.startswith(f"{PACKAGE}.compiler")
                         or n in (f"{PACKAGE}.api", f"{PACKAGE}.second_order"))
            assert bad == [], (name, bad)


def test_importing_the_runtime_loads_no_compiler_module():
    code = ("import sys, tangent_ckpt.runtime, tangent_ckpt as tc; "
            "print(sorted(m for m in sys.modules if m.startswith('tangent_ckpt.compiler') "
            "or m == 'tangent_ckpt.api'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=facts.ROOT), timeout=120)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_public_names_load_on_first_use():
    code = ("import tangent_ckpt as tc; from tangent_ckpt import hvp; "
            "assert set(tc.__all__) <= set(dir(tc)); "
            "assert all(getattr(tc, n) is not None for n in tc.__all__); "
            "import tangent_ckpt.api as api; assert tc.grad is api.grad; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=facts.ROOT), timeout=120)
    assert out.stdout.strip() == "ok", out.stdout + out.stderr


#: the compiler's stages in the order the pipeline runs them (compiler/pipeline.py)
STAGE_ORDER = ("frontend", "desugar", "fence", "lower", "analyze", "transform", "package",
               "backend", "emit")


def test_no_stage_imports_a_later_one(modules, edges):
    """Data flows one way: a stage's module imports the shared modules and earlier
    stages only (a fact about user methods that desugar, the fence and the lowering
    all read lives in desugar, the first of them)."""
    assert set(STAGE_ORDER) == COMPILER_STAGES
    back = []
    for source, targets in edges.items():
        stage = _stage_of(source)
        for target in targets:
            later = _stage_of(target)
            if stage and later and STAGE_ORDER.index(later) > STAGE_ORDER.index(stage):
                back.append((source, target))
    assert back == []


def _stage_of(name):
    parts = name.split(".")
    if len(parts) > 3 and parts[1] == "compiler" and parts[2] in STAGE_ORDER:
        return parts[2]
    return None


def test_the_compiler_never_imports_the_public_api(modules, edges):
    for name in modules:
        if name.startswith(f"{PACKAGE}.compiler"):
            loaded = facts.loads(edges, name)
            assert f"{PACKAGE}.api" not in loaded, name
            assert f"{PACKAGE}.second_order" not in loaded, name


def test_no_function_imports_the_packages_own_modules(modules):
    found = {(i.source, i.target) for i in facts.function_level_imports(modules)}
    assert found == set(LAZY_IMPORTS), found ^ set(LAZY_IMPORTS)


def test_no_two_modules_share_a_file_name(modules):
    assert facts.shared_names(modules) == {}


def _children(modules, package):
    """The modules and the packages directly inside ``package``."""
    inside = [n[len(package) + 1:] for n in modules if n.startswith(package + ".")]
    flat = {n for n in inside if "." not in n and not modules[f"{package}.{n}"].is_package}
    folders = {n for n in inside if "." not in n and modules[f"{package}.{n}"].is_package}
    return flat, folders


@pytest.mark.parametrize("package, root, folders", [
    ("compiler", COMPILER_ROOT, COMPILER_STAGES),
    ("runtime", RUNTIME_ROOT, RUNTIME_FOLDERS)])
def test_folders_show_the_stages(modules, package, root, folders):
    """A module lives in the folder of its stage (compiler) or its job (runtime);
    only the shared modules named above sit at the root, and each folder says its
    job in its docstring.  Modules are split where a job ends, not at a line count."""
    flat, found = _children(modules, f"{PACKAGE}.{package}")
    assert flat == set(root), flat ^ set(root)
    assert found == folders, found ^ folders
    for folder in folders:
        assert ast.get_docstring(modules[f"{PACKAGE}.{package}.{folder}"].tree), folder


def test_the_transform_loads_nothing_of_the_packaging(modules, edges):
    """Packaging runs after the transform, on its output (``code.CheckpointedLoop``,
    ``code.CheckpointedSegment``): no transform module loads a package module,
    directly or through another, so package cannot be called back mid-walk."""
    transform = f"{PACKAGE}.compiler.transform"
    for name in modules:
        if name == transform or name.startswith(transform + "."):
            loaded = facts.loads(edges, name) | set(facts.graph(
                modules, where=("top", "function", "typing")).get(name, ()))
            assert not [n for n in loaded if n.startswith(f"{PACKAGE}.compiler.package")], name


def test_the_transform_receives_no_options_object(modules):
    """The options decide which loops are checkpointed and how before the
    transform runs (``package/loop_plans.py``: plain ``ir.LoopPlan`` data); no
    transform function takes them, and none reads a loop's own options
    (``ir.For.options``) or imports the options module."""
    transform = f"{PACKAGE}.compiler.transform"
    for name, module in modules.items():
        if not (name == transform or name.startswith(transform + ".")):
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, ast.arg):
                assert "option" not in node.arg, (name, node.lineno, node.arg)
            elif isinstance(node, ast.Attribute):
                assert "option" not in node.attr, (name, node.lineno, node.attr)
            elif isinstance(node, ast.Name):
                assert "option" not in node.id, (name, node.lineno, node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                targets = [a.name for a in node.names] + [getattr(node, "module", "") or ""]
                assert not any("options" in t for t in targets), (name, node.lineno)


def test_only_the_frontend_parses_text(modules):
    """Generated code is a tree from the stage that makes it until emit renders
    it; what parses text or matches on it outside the frontend is listed here."""
    counts = {}
    for p in facts.text_parsing(modules):
        if p.module not in FRONTEND:
            counts[p.module] = counts.get(p.module, 0) + 1
    assert counts == {name: n for name, (n, _) in TEXT_READERS.items()}


def test_the_lowering_never_loads_the_fence(modules, edges):
    """The fence runs once, before lowering (compiler/fence/fence_once.py): nothing the
    lowering loads runs the view lowering or the aliasing analysis."""
    for name in modules:
        if name.startswith(LOWER):
            assert sorted(facts.loads(edges, name) & FENCE) == [], name


def test_the_fence_never_imports_the_lowering(modules):
    every = facts.graph(modules, where=("top", "function"))
    assert facts.crossings(every, FENCE, LOWER) == []
    assert facts.crossings(every, LOWER, FENCE) == []


def test_no_pass_hands_facts_on_in_undeclared_node_attributes(modules):
    """``x.fact = v`` in one pass and ``getattr(x, "fact", default)`` in another is
    a field nobody declared; the tables of node_facts.py are declared instead."""
    found = {(a.module, a.name) for a in facts.undeclared_attributes(modules)}
    assert found == set(UNDECLARED_ATTRIBUTES), found ^ set(UNDECLARED_ATTRIBUTES)


def test_facts_about_numpy_functions_are_rows_of_the_registry(modules):
    """A literal set, tuple, list or dict of NumPy functions (``(np.isnan, np.isinf,
    ...)``, ``{"zeros", "ones", ...}``) in compiler/ is a table of facts outside the
    rows: add a keyword to the row declaration instead (``adjoints/registry.py``:
    ``view=``, ``returns=``, ``advanced_index=``, ...) and derive the table from
    ``registry.all_facts()``.  The allowed ones recognise a construct, not a fact."""
    found = {}
    for table in facts.numpy_tables(modules):
        key = (table.module, table.owner)
        found[key] = tuple(sorted(set(found.get(key, ())) | set(table.members)))
    assert found == {key: members for key, (members, _) in NUMPY_TABLES.items()}


def test_the_table_finder_sees_a_table_of_numpy_functions(tmp_path):
    """The measurement itself: what it would have found before #30."""
    package = tmp_path / PACKAGE / "compiler"
    package.mkdir(parents=True)
    (package / "tables.py").write_text(
        "import numpy as np\n"
        "MAKERS = (np.zeros, np.ones, np.copy)\n"
        "NAMES = {'isnan', 'isinf', 'nonzero', 'where'}\n"
        "TYPES = (np.ndarray, np.generic)\n"           # types, not functions
        "ATTRIBUTES = {'shape', 'ndim', 'size', 'dtype', 'itemsize', 'T'}\n"
        "def f(fn):\n"
        "    return fn is np.where\n")
    found = facts.numpy_tables(facts.modules(str(tmp_path)))
    assert [(t.owner, len(t.members)) for t in found] == [("MAKERS", 3), ("NAMES", 4)]
