"""Every place in the compiler that refuses the user's code passes the user's
line and the construct: a walk over the source of tangent_ckpt/compiler finds
each ``lo.error(SomeError, ...)`` / ``raise SomeError(...)`` and checks its
arguments.  The sites written before this rule that still name their construct
only by the message (``lo.error`` then uses the message as the construct) are
listed below by module and function: the list may only shrink."""

import ast
import collections
import pathlib

import tangent_ckpt

COMPILER = pathlib.Path(tangent_ckpt.__file__).parent / "compiler"
REFUSALS = {"TransformError", "UnsupportedSyntaxError", "UnsupportedFunctionError",
            "SourceUnavailableError"}

# (module, function): refusals there without construct= (the message stands for it)
CONSTRUCT_BY_MESSAGE = collections.Counter({
    ("emit/rendering.py", "emit"): 1,
    ("lower/expressions.py", "_branch_value"): 1, ("lower/expressions.py", "nondiff"): 1,
    ("lower/expressions.py", "subscript"): 1,
    ("lower/loop_statements.py", "for_"): 5, ("lower/loop_statements.py", "while_"): 1,
    ("lower/assignments.py", "assign"): 2, ("lower/assignments.py", "assign_operand"): 1,
    ("lower/statements.py", "block"): 2,
    ("lower/statements.py", "return_"): 2, ("lower/statements.py", "run"): 1,
})
# refusals with no user line: the generated code failing to compile (a compiler
# bug, reported with the generated text) and a callable that is not a Python function
NO_USER_LINE = {("emit/rendering.py", "emit"), ("frontend/parse.py", "parse_function")}


def refusal_sites():
    for path in sorted(COMPILER.rglob("*.py")):
        module = path.relative_to(COMPILER).as_posix()
        for fn in ast.walk(ast.parse(path.read_text())):
            if not isinstance(fn, ast.FunctionDef):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, ast.Call):
                    continue
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                through_error = name == "error" and node.args and \
                    isinstance(node.args[0], ast.Name) and node.args[0].id in REFUSALS
                if through_error or name in REFUSALS:
                    yield module, fn.name, node, through_error


def test_the_walk_finds_the_refusals():
    assert sum(1 for _ in refusal_sites()) > 90


def test_every_refusal_names_the_users_line():
    missing = []
    for module, function, node, through_error in refusal_sites():
        keywords = {k.arg for k in node.keywords}
        located = (through_error and len(node.args) >= 3) or "lineno" in keywords
        if not located and (module, function) not in NO_USER_LINE:
            missing.append(f"{module}:{node.lineno} in {function}")
    assert not missing, missing


def test_every_refusal_names_the_construct():
    found = collections.Counter()
    for module, function, node, _ in refusal_sites():
        if "construct" not in {k.arg for k in node.keywords}:
            found[(module, function)] += 1
    new = found - CONSTRUCT_BY_MESSAGE
    assert not new, f"refusals without construct=: {dict(new)}"
