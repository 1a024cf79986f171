"""compiler/naming.py: every name generated code introduces -- the modules'
aliases (``np``, ``rt``), loop objects, step and adjoint functions, seeds,
saved values, transposed copies, plan names -- stays clear of the user's
locals, parameters, globals and function name.

The names are not listed by hand: they are every name the generated code of
reference programs (taped, checkpointed, ``checkpoint="auto"``) uses that the
user's code does not, plus the modules' aliases.  Each one then becomes, in
turn, a user local, a differentiated parameter, a global the function reads
and the function's own name, and the gradient is checked against finite
differences, taped and checkpointed.
"""

import ast

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import numeric_grad
from tangent_ckpt.emit_module import module_source

# numpy is `xp` in these programs, so that `np` is free to be a user's name; the
# loop starts on line 4 in all of them, so that its generated names are the same
REFERENCE = '''
def loss(h, W, b, n):
    cost = 0.0
    for t in range(n):
        h = xp.tanh(h @ W + b)
        cost = cost + xp.sum(h * h)
    return cost + xp.sum(h)
'''

ROLES = {
    # a local variable, assigned in the loop and read after it
    "local": ('''
def loss(h, W, b, n):
    c = 0.9
    for t in range(n):
        NAME = xp.tanh(h @ W + b)
        h = NAME * c
    NAME = xp.sum(h * h)
    return NAME
''', (1, 2)),
    # a parameter the gradient is taken with respect to
    "parameter": ('''
def loss(h, W, NAME, n):
    h = h * 0.9
    for t in range(n):
        h = xp.tanh(h @ W + NAME)
    return xp.sum(h * h) + xp.sum(NAME * NAME)
''', (1, 2)),
    # a global the function reads
    "global": ('''
def loss(h, W, b, n):
    h = h * NAME
    for t in range(n):
        h = xp.tanh(h @ W + b) * NAME
    return xp.sum(h * h)
''', (1, 2)),
    # the function's own name
    "function": ('''
def NAME(h, W, b, n):
    h = h * 0.9
    for t in range(n):
        h = xp.tanh(h @ W + b)
    return xp.sum(h * h)
''', (1, 2)),
}

MODES = {
    "taped": {},
    "checkpointed": {"checkpoint": True, "snapshots": 2},
    "auto": {"checkpoint": "auto", "memory_budget": 64000},
}


def _function(text, name="loss", extra=None):
    namespace = {"xp": np, **(extra or {})}
    exec(compile(text, "<naming test>", "exec"), namespace)
    return namespace[name]


def _names(text):
    names = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return names


def generated_names():
    """Every name the reference gradients introduce, and the modules' aliases."""
    fn = _function(REFERENCE)
    user = _names(REFERENCE)
    found = {"np", "rt"}
    for options in MODES.values():
        df = tc.grad(fn, wrt=(1, 2), source=REFERENCE, **options)
        found |= _names(df.source) - user
    return sorted(found)


GENERATED = generated_names()


def args(n=4):
    rng = np.random.default_rng(3)
    return [rng.normal(size=(2, 3)), 0.4 * rng.normal(size=(3, 3)),
            0.2 * rng.normal(size=3), n]


def test_the_family_covers_every_kind_of_generated_name():
    expected = {"np", "rt", "reversed", "tape", "bloss", "dloss", "loop4", "loop4_step",
                "loop4_adjoint", "W_T", "plan", "state", "bstate", "next_state", "h_next"}
    assert expected <= set(GENERATED), sorted(expected - set(GENERATED))


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("role", sorted(ROLES))
@pytest.mark.parametrize("name", GENERATED)
def test_a_user_name_equal_to_a_generated_name_gets_the_right_gradient(name, role, mode):
    template, wrt = ROLES[role]
    text = template.replace("NAME", name)
    fn = _function(text, name if role == "function" else "loss",
                   {name: 0.9} if role == "global" else None)
    values = args()
    df = tc.grad(fn, wrt=wrt, source=text, **MODES[mode])
    got = df(*values)
    expected = numeric_grad(fn, values, wrt)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


def test_a_local_named_rt_does_not_shadow_the_runtime():
    text = '''
def f(x, bx):
    rt = x * 2.0
    y = rt + bx * x
    return xp.sum(y * y)
'''
    fn = _function(text, "f")
    x, bx = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.5])
    df = tc.grad(fn, wrt=(0, 1), source=text)
    for g, e in zip(df(x, bx), numeric_grad(fn, [x, bx], (0, 1))):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)
    # compiled for any shapes (before a call) the adjoint reads rt for its shape
    general = tc.grad(fn, wrt=(0, 1), source=text).source
    assert "rt = x * 2.0" in general and "rt_2.unbroadcast" in general


def test_a_dumped_gradient_keeps_a_global_named_rt(tmp_path, monkeypatch):
    (tmp_path / "uses_rt.py").write_text(
        "import numpy as np\nrt = np.array([0.9, 0.5, 0.1])\n\n\n"
        "def f(x):\n    return np.sum(np.sin(x) * rt)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import uses_rt
    df = tc.grad(uses_rt.f)
    namespace = {}
    exec(compile(module_source(df), "<dumped>", "exec"), namespace)
    x = np.array([0.2, -0.4, 1.0])
    np.testing.assert_allclose(namespace[df.compile().name](x), np.cos(x) * uses_rt.rt)


def _regularised_step(h, lambda_, as_):
    in_ = h * lambda_ + as_
    is_ = np.tanh(in_)
    return is_ * (1.0 - lambda_)


def keyword_named_locals_in_a_helper(x, n):
    """Locals of an inlined helper spelled like a keyword with a trailing underscore
    (``lambda_``, ``as_`` in npbench's vadv, ``in_``, ``is_``): their generated names
    came from hints with the underscore stripped, ``as = gav * 0.5``, and the
    gradient failed with an internal SyntaxError."""
    h = x
    for t in range(n):
        h = _regularised_step(h, 0.3, 0.1 * t)
    return np.sum(h ** 2)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}],
                         ids=["taped", "checkpointed"])
def test_a_helpers_local_named_like_a_keyword_gets_a_valid_name(options):
    x = np.array([0.2, -0.4, 0.7])
    got = tc.grad(keyword_named_locals_in_a_helper, **options)(x, 3)
    np.testing.assert_allclose(got, numeric_grad(keyword_named_locals_in_a_helper, (x, 3))[0],
                               rtol=1e-6, atol=1e-8)
