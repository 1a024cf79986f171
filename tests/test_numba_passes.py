"""compiler/numba_passes.py and runtime/jit/numba_passes.py: runs of elementwise
statements compiled as a few loops over the elements.  Each case runs the
statements with NumPy and through the fused loops (called from compiled code,
as a step calls them) and compares every result and every argument written
in place: a wrong pass split, a missed overlap or a wrong roll index fails."""

import ast
import textwrap

import numpy as np
import pytest

from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Line
from tangent_ckpt.compiler.emit.rendering import render
from tangent_ckpt.compiler.naming import NUMPY, RUNTIME, builtin
from tangent_ckpt.compiler.backend.numba_runs import fused_runs
from tangent_ckpt.runtime.jit.numba_passes import fused_source
from tests.gradcheck import numeric_grad
from tests.numba_problems import private_cache  # noqa: F401  (fixture)

numba = pytest.importorskip("numba")

import tangent_ckpt as tc  # noqa: E402
from tangent_ckpt import runtime as rt  # noqa: E402
from tangent_ckpt.runtime.jit.numba_backend import njit  # noqa: E402


def _passes(body, returned, may_decline=False):
    """The function the compiler makes of the statements ``body`` (then
    ``return returned``): (its name, its description, the module namespace);
    None when ``may_decline`` and the compiler keeps the statements as they are."""
    tree = ast.parse(textwrap.dedent(body))
    renames = {"np": NUMPY, "rt": RUNTIME, "slice": builtin("slice")}
    items = [Line(sx.renamed(s, renames)) for s in tree.body]
    items.append(Line(ast.parse(f"return {returned}").body[0]))
    emitted = {}
    out = fused_runs(items, "case", set(), emitted)
    if may_decline and not emitted:
        return None
    assert len(emitted) == 1, "the statements were not put into one function"
    name, block = next(iter(emitted.values()))
    namespace = {"np": np, "rt": rt, "njit": njit}
    exec(render([block]), namespace)
    call = [i.stmt for i in out if isinstance(i, Line) and i.stmt is not None][0]
    description = ast.literal_eval(block.head.decorator_list[0].keywords[1].value)
    return name, description, namespace, call


def _compiled_caller(name, namespace, params):
    text = f"def caller({', '.join(params)}):\n    return {name}({', '.join(params)})\n"
    exec(text, namespace)
    return numba.njit(namespace["caller"])


def _check(body, returned, args, fused=None, may_decline=False):
    """Run ``body`` with NumPy and compiled, on copies of ``args`` (a dict):
    equal results and equal arguments afterwards (within 1e-13)."""
    made = _passes(body, returned, may_decline)
    if made is None:
        return None   # not fused: the statements run as NumPy wrote them
    name, description, namespace, _ = made
    params = description[0]
    kinds = tuple(_kind(args[p]) for p in params)
    if fused is not None:
        assert (fused_source(description, kinds) is not None) == fused
    numpy_args = {k: np.copy(v) if isinstance(v, np.ndarray) else v for k, v in args.items()}
    want = namespace[name].__wrapped__(*[numpy_args[p] for p in params])
    compiled_args = {k: np.copy(v) if isinstance(v, np.ndarray) else v for k, v in args.items()}
    got = _compiled_caller(name, namespace, params)(*[compiled_args[p] for p in params])
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, want):
        if w is None:   # the statements only write into their arguments
            assert g is None
            continue
        assert np.shape(g) == np.shape(w)
        assert np.allclose(g, w, rtol=1e-13, atol=1e-13), (g, w)
    for k in params:
        assert np.allclose(compiled_args[k], numpy_args[k], rtol=1e-13, atol=1e-13), k
    return description


def _kind(value):
    if isinstance(value, np.ndarray):
        return "array" if value.ndim == 1 and value.dtype == np.float64 else None
    return "scalar"


RNG = np.random.default_rng(7)
X40 = RNG.standard_normal(40)
U = RNG.standard_normal(24)
V = RNG.standard_normal(24)


# ----------------------------------------------------------------- shifted reads and writes

@pytest.mark.parametrize("store", [
    "u[1:-1] = u[:-2] + u[2:]",        # reads an element before its store
    "u[1:-1] = u[2:] - 2.0 * u[1:-1]",  # reads ahead only
    "u[1:-1] += u[:-2]",
    "u[2:] += u[:-2] * 0.5",
    "u[:-2] -= u[2:]",
    "u[1:] = u[:-1] * 3.0",
])
def test_a_store_reading_its_own_array_at_other_elements_sees_the_old_values(store):
    _check(f"""\
        w = u * 2.0
        {store}
        z = w + u
        """, "z", {"u": U})


def test_a_run_that_only_writes_into_its_arguments_returns_nothing():
    # its fused loops returned "(,)" (a syntax error) before: found by the long random runs
    _check("""\
        u[:-2] -= v[2:]
        v[:-2] -= u[1:-1]
        u[1:-1] = v[:-2] - v[:-2]
        """, "u, v", {"u": U, "v": V}, fused=True)


def test_the_value_adjoint_of_a_write_is_a_copy_that_zeroing_the_slice_keeps():
    # rt.setitem_adjoint_value is a copy of g[index]; fused as a view of bu, the
    # in-place zeroing of an owned bu[1:-1] wiped it (a wrong gradient)
    _check("""\
        bv = rt.setitem_adjoint_value(bu, slice(1, -1), w)
        bu[1:-1] = 0.0
        bu[2:] += bv * v[1:-1]
        bu[:-2] += bv
        """, "bv", {"bu": RNG.standard_normal(24), "w": RNG.standard_normal(22), "v": V},
           fused=True)


def test_adds_into_overlapping_slices_in_program_order():
    # the adjoint of a stencil with owned buffers: zero, then three shifted adds
    _check("""\
        g = u[1:-1] * v[1:-1]
        bu[1:-1] = 0.0
        bu[:-2] += g
        bu[1:-1] -= 2.0 * g
        bu[2:] += g
        bu[1:-1] += v[1:-1]
        """, "g", {"u": U, "v": V, "bu": RNG.standard_normal(24)})


def test_a_copy_of_a_slice_keeps_the_values_from_before_the_shifted_adds():
    # the owned adjoint of a stencil (transform/owned_adjoints.py): the slice's
    # adjoint is copied, then the slice is zeroed and shifted adds go into it;
    # the copy must hold every element as it was before bu[2:] += g changed it
    _check("""\
        g = bu[1:-1].copy()
        bu[1:-1] = 0.0
        h = g * k[1:-1]
        bu[:-2] += h
        bu[1:-1] -= h * 2.0
        bu[2:] += h
        bk[1:-1] += g * u[1:-1]
        """, "g", {"u": U, "k": V, "bu": RNG.standard_normal(24),
                   "bk": RNG.standard_normal(24)}, fused=True)


def test_accumulate_at_and_setitem_adjoints_as_the_numpy_backend_writes_them():
    _check("""\
        u_add = u[2:] - 2.0 * u[1:-1] + u[:-2]
        k_item = k[1:-1]
        u_shape = rt.broadcast_shape(k_item, u_add)
        bu_value = rt.setitem_adjoint_value(bu, slice(1, -1), u_shape)
        bu = rt.setitem_adjoint_array(bu, slice(1, -1))
        bk_item = rt.unbroadcast(bu_value * u_add, k)
        bu_add = bu_value * k[1:-1]
        bu = rt.accumulate_at(bu, u, slice(None, -2), bu_add)
        bu = rt.accumulate_at(bu, u, slice(1, -1), -bu_add * 2.0)
        bu = rt.accumulate_at(bu, u, slice(2, None), bu_add)
        bk = rt.accumulate_at(bk, k, slice(1, -1), bk_item)
        bu = rt.accumulate_at(bu, u, slice(1, -1), bu_value)
        """, "bu, bk", {"u": U, "k": V, "bu": RNG.standard_normal(24),
                        "bk": RNG.standard_normal(24)}, fused=True)


# ----------------------------------------------------------------- rolls

@pytest.mark.parametrize("shift", [-1, 1, 2, -2, 39, 40, 41, -83, 123])
def test_rolls_by_any_shift_of_arguments_and_of_computed_values(shift):
    _check(f"""\
        a = np.roll(x, {shift}) * 2.0 - x
        b = (np.roll(a, -1) - np.roll(a, {shift})) * np.roll(x, 1) + a
        """, "a, b", {"x": X40})


@pytest.mark.parametrize("shift", [-2, 1, 41])
def test_a_roll_of_an_expression_rolls_its_whole_value(shift):
    # the adjoint of np.roll(x, 2) with its negation folded in:
    # np.roll(rt.unbroadcast(-g, x), -2), the argument computed in the same run
    _check(f"""\
        g = x * 3.0
        b = b + np.roll(rt.unbroadcast(-g, x), {shift})
        c = np.roll(g * x + 1.0, {shift}) - g
        """, "b, c", {"x": X40, "b": X40 * 0.5}, fused=True)


def test_lorenz96_rk4_step_as_one_fusion():
    _check("""\
        k1 = (np.roll(x, -1) - np.roll(x, 2)) * np.roll(x, 1) - x + F
        x2 = x + 0.5 * h * k1
        k2 = (np.roll(x2, -1) - np.roll(x2, 2)) * np.roll(x2, 1) - x2 + F
        x3 = x + 0.5 * h * k2
        k3 = (np.roll(x3, -1) - np.roll(x3, 2)) * np.roll(x3, 1) - x3 + F
        x4 = x + h * k3
        k4 = (np.roll(x4, -1) - np.roll(x4, 2)) * np.roll(x4, 1) - x4 + F
        x = x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        """, "x", {"x": X40, "F": 8.0, "h": 0.01})


def test_a_roll_of_an_empty_array_runs_unfused():
    _check("""\
        a = np.roll(x, 1) + 1.0
        b = a * 2.0
        """, "b", {"x": np.zeros(0)})


# ----------------------------------------------------------------- aliasing

def test_an_argument_written_while_a_view_of_it_is_read_runs_unfused():
    # v is u[1:]: u[2:] += v[:-1] reads u[i + 1] after a fused loop would have
    # written it; the compiler cannot see that two arguments share memory
    name, description, namespace, _ = _passes("""\
        w = v * 2.0
        u[2:] += v[:-1] * w[:-1]
        """, "w")
    params = description[0]
    assert fused_source(description, ("array",) * len(params)) is not None

    def run(f):
        u = U.copy()
        args = {"u": u, "v": u[1:]}
        return f(*[args[p] for p in params]), u
    want, u_numpy = run(namespace[name].__wrapped__)
    got, u_numba = run(_compiled_caller(name, namespace, params))
    assert np.allclose(got, want, rtol=1e-13, atol=0) and \
        np.allclose(u_numba, u_numpy, rtol=1e-13, atol=0)


# ----------------------------------------------------------------- shapes and numbers

def test_broadcasting_a_length_one_array_runs_unfused_with_numpys_result():
    _check("""\
        a = u * s + 1.0
        b = a * u
        """, "a, b", {"u": U, "s": np.array([3.0])})


def test_numbers_int_and_float_and_sums_of_adjoints():
    _check("""\
        c = 0.5 * h
        g = u * c + n
        bF = 0.0
        bF += rt.unbroadcast(g, F)
        g2 = g * bF
        bF += rt.unbroadcast(g2, F)
        """, "g2, bF, c", {"u": U, "h": 0.1, "n": 3, "F": 2.0})


def test_two_dimensional_arrays_run_unfused():
    _check("""\
        a = u * 2.0 + v
        b = np.tanh(a) * v
        """, "a, b", {"u": RNG.standard_normal((3, 4)), "v": RNG.standard_normal((3, 4))},
        fused=False)


def test_ufuncs_and_division_by_zero_follow_numpy():
    with np.errstate(divide="ignore", invalid="ignore"):
        _check("""\
            a = np.exp(u) / (v - v)
            b = np.maximum(a, u) + np.tanh(v) ** 2
            """, "a, b", {"u": U, "v": V})


# ----------------------------------------------------------------- runs inside loops

def _items(statements):
    """Code items of parsed statements: a loop or an ``if`` a block of its own."""
    renames = {"np": NUMPY, "rt": RUNTIME, "slice": builtin("slice")}
    items = []
    for stmt in statements:
        if isinstance(stmt, (ast.For, ast.While, ast.If)):
            head = sx.renamed(stmt, renames)
            head.body, head.orelse = [ast.Pass()], []   # a block's head holds no body
            items.append(Block(head, _items(stmt.body)))
            if getattr(stmt, "orelse", None):
                items.append(Block(None, _items(stmt.orelse)))
        else:
            items.append(Line(sx.renamed(stmt, renames)))
    return items


def _with_runs(source):
    """(the function ``source`` defines, the same with its runs moved into
    functions as the compiler does, run by NumPy: ``njit`` leaves them as they are)."""
    tree = ast.parse(textwrap.dedent(source)).body[0]
    emitted = {}
    body = fused_runs(_items(tree.body), "case", set(), emitted)
    assert emitted, "no run was put into a function"
    head = sx.def_(tree.name, [a.arg for a in tree.args.args])
    blocks = [block for _, block in emitted.values()] + [Block(head, body)]
    namespace = {"np": np, "rt": rt, "njit": lambda **options: (lambda f: f)}
    text = render(blocks)
    exec(text, namespace)
    namespace[tree.name].source = text
    plain = {"np": np, "rt": rt}
    exec(textwrap.dedent(source), plain)
    return plain[tree.name], namespace[tree.name]


@pytest.mark.parametrize("source", [
    # v is read only by the run, before the run rebinds it: the next iteration reads it
    """\
    def f(u, a, n):
        v = u * 0.0
        for t in range(n):
            v = v * 0.9 + u * a
            u = u + 0.1 * v
        return u
    """,
    """\
    def f(u, a, n):
        v = u * 0.0
        t = 0
        while t < n:
            v = v * 0.9 + np.tanh(u) * a
            u = u + 0.1 * v
            t = t + 1
        return u
    """,
    """\
    def f(u, a, n):
        v = u * 0.0
        for t in range(n):
            if t % 2 == 0:
                v = v * 0.9 + u * a
                u = u + 0.1 * v
        return u
    """,
    # a taped reverse loop: bv is the loop-carried adjoint
    """\
    def f(bu, a, n):
        bv = bu * 0.0
        for t in range(n):
            bv = bv + bu * 0.05
            bv_add = bv
            bv = rt.unbroadcast(bv_add, bu)
            bu = bu + bv * a
        return bu
    """,
], ids=["for", "while", "if_in_for", "taped_reverse_loop"])
def test_a_run_inside_a_loop_returns_what_it_reads_before_rebinding(source):
    # such a value stayed at its value before the loop: a silent wrong gradient with
    # backend="numba", taped and checkpointed (a step's inner loop)
    plain, with_runs = _with_runs(source)
    u = RNG.standard_normal(6)
    want = plain(u.copy(), 0.7, 4)
    got = with_runs(u.copy(), 0.7, 4)
    assert np.array_equal(got, want)


def leapfrog_loss(x, a, n):
    v = np.zeros_like(x)
    for _ in range(n):
        v = v + 0.1 * np.sin(x) * a
        x = x + 0.1 * v
    return np.sum(x ** 2)


def damped_while_loss(x, a, n):
    v = np.zeros_like(x)
    t = 0
    while t < n:
        v = v * 0.9 + 0.1 * np.tanh(x) * a
        x = x + 0.1 * v
        t = t + 1
    return np.sum(x ** 2)


def inner_loop_loss(x, a, n):
    for _ in range(n):
        v = np.zeros_like(x)
        for j in range(3):
            v = v * 0.9 + np.sin(x) * a
            x = x + 0.1 * v
    return np.sum(x ** 2)


def springs_cumsum_loss(pos, k, n):
    # the report's chain_e: 2-D state, a cumsum between two runs
    ci, cj = np.array([0, 0, 1, 2]), np.array([1, 2, 2, 3])
    vel = np.zeros_like(pos)
    for _ in range(n):
        f = -k * (pos[ci] - pos[cj])
        acc = np.cumsum(f, axis=0)
        vel = vel + 0.05 * acc
        pos = pos + 0.05 * vel
    return np.sum(pos ** 2)


CARRIED = [
    (leapfrog_loss, (RNG.random(8), 0.7, 3)),
    (damped_while_loss, (RNG.random(8), 0.7, 3)),
    (inner_loop_loss, (RNG.random(8), 0.7, 3)),
    (springs_cumsum_loss, (np.random.RandomState(0).rand(4, 2), 1.3, 3)),
]


@pytest.mark.parametrize("checkpoint", [False, True], ids=["taped", "checkpointed"])
@pytest.mark.parametrize("fn, args", CARRIED, ids=[c[0].__name__ for c in CARRIED])
def test_loop_carried_values_give_the_numpy_backends_gradient(fn, args, checkpoint):
    options = dict(wrt=(0, 1), checkpoint=checkpoint)
    if checkpoint:
        options["snapshots"] = 2
    want = tc.value_and_grad(fn, **options)(*args)
    got = tc.value_and_grad(fn, backend="numba", **options)(*args)
    assert np.isclose(got[0], want[0], rtol=1e-12, atol=0)
    for g, w, n in zip(got[1], want[1], numeric_grad(fn, args, wrt=(0, 1))):
        assert np.allclose(g, w, rtol=1e-12, atol=1e-12)
        assert np.allclose(g, n, rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------- random programs

def _program(rng, carried=False):
    """A random run of statements over arguments ``u``, ``v`` (26 elements):
    slices of length 24 at three offsets, temporaries of that length, stores
    and adds into slices, rolls and copies of whole arguments; with ``carried``
    also over ``z`` (made before the loop the statements are the body of, read
    by no statement after it) and with ``u``, ``v`` or ``z`` rebound to a new
    value computed from it, which the next iteration reads."""
    names = "uvz" if carried else "uv"
    slices = ["[:-2]", "[1:-1]", "[2:]"]
    temps, lines = [], []

    def operand():
        if temps and rng.random() < 0.4:
            return temps[rng.integers(len(temps))]
        return names[rng.integers(len(names))] + slices[rng.integers(3)]

    def target():
        return names[rng.integers(len(names))] + slices[rng.integers(3)]

    c = lambda: f"{rng.uniform(-2, 2):.3f}"  # noqa: E731
    for k in range(int(rng.integers(3, 9))):
        kind = int(rng.integers(10 if carried else 8))
        if kind == 0:
            lines.append(f"t{k} = {operand()} * {c()} + {operand()}")
            temps.append(f"t{k}")
        elif kind == 1:
            lines.append(f"t{k} = np.tanh({operand()}) - {operand()}")
            temps.append(f"t{k}")
        elif kind == 2:
            lines.append(f"{target()} += {operand()} * {c()}")
        elif kind == 3:
            lines.append(f"{target()} -= {operand()}")
        elif kind == 4:
            lines.append(f"{target()} = {operand()} - {operand()}")
        elif kind == 5:
            lines.append(f"{target()} = {c()}")
        elif kind == 6:
            lines.append(f"w{k} = np.roll({names[rng.integers(len(names))]}, "
                         f"{int(rng.integers(-60, 60))}) "
                         f"* {c()}")
        elif kind == 7:
            lines.append(f"u = u.copy()")
        else:
            x = names[rng.integers(3)]
            lines.append(f"{x} = {x} * {c()} + np.roll({names[rng.integers(3)]}, "
                         f"{int(rng.integers(-3, 4))}) * {c()}")
    return lines


@pytest.mark.parametrize("seed", range(8))
def test_random_runs_of_statements_equal_numpy(request, seed):
    # each run compiles a function (2-6 s): 8 by default (CI), 200 with --fuzz-long
    long = request.config.getoption("--fuzz-long")
    for drawn in range(seed, 200, 8) if long else [seed]:
        rng = np.random.default_rng(drawn)
        lines = _program(rng)
        assigned = [line.split(" = ")[0] for line in lines if line.split(" ")[0].isidentifier()]
        returned = ", ".join(dict.fromkeys(assigned + ["u", "v"]))
        _check("\n".join(lines) + "\n", returned,
               {"u": rng.standard_normal(26), "v": rng.standard_normal(26)},
               may_decline=long)   # a long run meets programs left unfused (u = u.copy() twice)


@pytest.mark.parametrize("seed", range(4))
def test_random_runs_inside_a_loop_equal_numpy(request, seed):
    # the run is the body of a loop: what it carries to the next iteration (u, v, z
    # rebound) must come back out of it; compiled with Numba (2-6 s a program):
    # 4 by default (draws 4 and 6 lost z before), 100 with --fuzz-long
    long = request.config.getoption("--fuzz-long")
    for drawn in range(seed, 100, 4) if long else [4 + seed]:
        rng = np.random.default_rng(1000 + drawn)
        lines = _program(rng, carried=True)
        body = "\n".join("        " + line for line in lines)
        source = (f"def f(u, v, n):\n    z = v * 0.5\n    for it in range(n):\n{body}\n"
                  "    return u, v\n")
        try:
            plain, with_runs = _with_runs(source)
        except AssertionError:
            assert long   # a long run meets programs left unfused
            continue
        u, v = rng.standard_normal(26), rng.standard_normal(26)
        want = plain(u.copy(), v.copy(), 3)
        assert all(np.array_equal(g, w) for g, w in zip(with_runs(u.copy(), v.copy(), 3), want))
        namespace = {"np": np, "rt": rt, "njit": njit}
        exec(with_runs.source, namespace)
        compiled = numba.njit(namespace["f"])
        got = compiled(u.copy(), v.copy(), 3)
        for g, w in zip(got, want):
            assert np.allclose(g, w, rtol=1e-12, atol=1e-12), source
