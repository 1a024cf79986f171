"""The shape of the package, pinned: the import graph has no circles, the
runtime never loads the compiler, the compiler never loads the public API, no
function imports the package's own modules, no two modules share a file name,
modules live in the folder of their stage, and only the frontend parses text.

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
    "memory_sharing": "which calls return views of or write into their arguments: read by "
                      "desugar, the fence, the lowering and the analysis",
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
    "tangent_ckpt.compiler.package.checkpointed_segments": (
        1, "a variable name made from a segment's label (a user value)"),
    "tangent_ckpt.runtime.memory": (
        1, "memory_budget='64MB': a number and a unit, from the user"),
}
FRONTEND = {"tangent_ckpt.compiler.frontend.parse",
            "tangent_ckpt.compiler.frontend.lambda_source"}


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


def test_only_the_frontend_parses_text(modules):
    """Generated code is a tree from the stage that makes it until emit renders
    it; what parses text or matches on it outside the frontend is listed here."""
    counts = {}
    for p in facts.text_parsing(modules):
        if p.module not in FRONTEND:
            counts[p.module] = counts.get(p.module, 0) + 1
    assert counts == {name: n for name, (n, _) in TEXT_READERS.items()}
