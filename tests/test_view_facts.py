"""compiler/desugar/view_facts.py: which names surely hold arrays, of which number
of dimensions, with what a NumPy call makes read from its row in the rule registry
(``ndim=``); a call without a row is not known to make an array."""

import gast
import numpy as np
import pytest

from gradcheck import check_grad
from tangent_ckpt.compiler.desugar.view_facts import Array, ArrayFacts


def _fact(source, bindings=None):
    """The fact of ``source``'s expression, ``bindings``: {local name: its source}."""
    bound = {name: [gast.parse(text).body[0].value] for name, text in (bindings or {}).items()}
    facts = ArrayFacts(bound, {"np": np}.get, set(bound) | {"n"})
    return facts.of(gast.parse(source).body[0].value)


@pytest.mark.parametrize("source, fact", [
    ("np.zeros((2, 3))", Array(2, True)),
    ("np.full((2, 3, 4), 1.0)", Array(3, True)),
    ("np.ones(5)", Array(1, True)),
    ("np.empty(n)", Array(None, True)),
    ("np.zeros((2, 3), order='F')", Array(2, False)),
    ("np.arange(n)", Array(1, True)),
    ("np.logspace(0.0, 1.0, n)", Array(1, True)),
    ("np.eye(n)", Array(2, True)),
    ("np.identity(n, order='F')", Array(2, False)),
    ("np.zeros_like(S)", Array(2)),
    ("np.zeros_like(v)", Array(1)),
    ("np.copy(S)", Array(2)),
    ("np.zeros_like(S, shape=(4,))", Array()),      # not the shape of S
    ("np.array(S, ndmin=3)", Array()),
])
def test_a_call_makes_the_array_its_row_says(source, fact):
    assert _fact(source, {"S": "np.zeros((2, 3))", "v": "np.arange(4)"}) == fact


@pytest.mark.parametrize("source, fact", [
    ("np.zeros(len(u))", Array(1, True)),
    ("np.ones(len(u) + 2)", Array(1, True)),
    ("np.empty(S.shape[0] * 2)", Array(1, True)),
    ("np.zeros(u.shape[0])", Array(None, True)),    # u may be any object with a .shape
    ("np.zeros(len(u) * n)", Array(None, True)),    # n may be a tuple
])
def test_a_shape_that_is_surely_an_integer_makes_a_1d_array(source, fact):
    bound = {"S": [gast.parse("np.zeros((2, 3))").body[0].value]}
    resolve = {"np": np, "len": len}.get
    facts = ArrayFacts(bound, resolve, set(bound) | {"n", "u"})
    assert facts.of(gast.parse(source).body[0].value) == fact


def periodic_ghost_cells(u0, n):
    u = np.zeros(len(u0)) + u0           # 1-d: u[0] is a number, no view
    for t in range(n):
        u[0], u[-1] = u[-2], u[1]
        u[1:-1] = u[1:-1] - 0.3 * (u[1:-1] - u[:-2])
    return np.sum(u ** 2)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}], ids=["taped", "checkpointed"])
def test_elements_swapped_in_an_array_shaped_by_a_length_are_differentiated(options):
    import tangent_ckpt as tc
    u0 = np.sin(np.linspace(0.0, 3.0, 8))
    check_grad(periodic_ghost_cells, (u0, 3), df=tc.grad(periodic_ghost_cells, **options))
    value, _ = tc.value_and_grad(periodic_ghost_cells, **options)(u0, 3)
    assert value == pytest.approx(periodic_ghost_cells(u0, 3), rel=1e-12)


@pytest.mark.parametrize("source", ["np.unique(S)", "np.frombuffer(S)", "np.zeros()"])
def test_a_call_without_a_row_or_its_arguments_is_not_known_to_make_an_array(source):
    assert _fact(source, {"S": "np.zeros((2, 3))"}) is None


def _row_of_a_reshaped_like(x):
    v = np.zeros(3)
    S = np.zeros_like(v, shape=(3, 3))    # 2-d, whatever v's shape
    row = S[1]                            # a view of S
    row[0] = x[0] * 2.0
    return np.sum(S * S) + np.sum(x * v)


def _row_of_an_array_with_ndmin(x):
    S = np.array(np.zeros(3), ndmin=2)    # 2-d
    row = S[0]
    row[1] = x[1] * 3.0
    return np.sum(S * S)


@pytest.mark.parametrize("f", [_row_of_a_reshaped_like, _row_of_an_array_with_ndmin])
def test_a_write_through_a_row_of_an_array_shaped_by_a_keyword_is_differentiated(f):
    """``shape=`` and ``ndmin=`` make an array whose dimensions are not its first
    argument's: its row is a view, followed like any other."""
    check_grad(f, (np.array([1.0, 2.0, 3.0]),))


@pytest.mark.parametrize("source, fact", [
    ("np.array([x, 0.0])", Array(1, True)),          # 1-d, or NumPy raises (ragged)
    ("np.array((-1, x, y), np.float64)", Array(1, True)),
    ("np.array([x, 0.0], dtype='f8')", Array(1, True)),
    ("np.array([v, v])", Array(2, True)),            # items of one known ndim
    ("np.array([v, S])", Array()),                   # ragged: not known
    ("np.array([x, y])", Array()),                   # items not known
    ("np.array([x, 0.0], dtype=object)", Array()),   # an array holding the items as they are
    ("np.array([x, 0.0], ndmin=2)", Array()),
])
def test_an_array_made_from_a_display_has_the_ndim_its_items_give(source, fact):
    assert _fact(source, {"S": "np.zeros((2, 3))", "v": "np.arange(4)", "x": "g(1)",
                          "y": "g(2)"}) == fact


def test_an_augmented_assignment_keeps_an_arrays_ndim():
    """``r += f(r)`` writes into ``r`` in place: whatever ``f`` returns (unknown
    here), ``r`` stays the 1-d array it was; ``r = r + f(r)`` may broadcast."""
    made = gast.parse("np.zeros(2)").body[0].value
    in_place = gast.parse("r += f(r)").body[0]
    rebound = gast.parse("r = r + f(r)").body[0].value
    at_matmul = gast.parse("r @= f(r)").body[0]  # NumPy before 1.25: r = r @ f(r)
    local = {"r", "f"}
    assert ArrayFacts({"r": [made, in_place]}, {"np": np}.get, local).array("r") == \
        Array(1, True)
    for other, fact in ((rebound, Array(None, least=1)), (at_matmul, Array())):
        assert ArrayFacts({"r": [made, other]}, {"np": np}.get, local).array("r") in \
            (None, fact)


def test_read_names_denote_finds_a_function_through_any_spelling():
    """The quick test the call-rewriting passes start with: a name bound to the
    function, a module of its package, or an attribute spelled as it; nothing else."""
    import builtins

    import tangent_ckpt
    from tangent_ckpt.compiler.desugar.view_facts import read_names_denote
    from tangent_ckpt.markers import checkpoint

    names = {"np": np, "tc": tangent_ckpt, "ck": checkpoint, "mp": builtins.map}

    def denote(text, wanted):
        fnode = gast.parse(text).body[0]
        return read_names_denote(fnode, lambda name: names.get(name), wanted)

    assert denote("def f(x):\n    return tc.checkpoint(g, x)", (checkpoint,))
    assert denote("def f(x):\n    return ck(g, x)", (checkpoint,))
    assert denote("def f(x):\n    return lib.checkpoint(g, x)", (checkpoint,))
    assert not denote("def f(x):\n    return np.sin(x)", (checkpoint,))
    assert denote("def f(x):\n    return sum(mp(np.sin, x))", (builtins.map,))
    assert not denote("def f(x):\n    return sum(np.sin(x))", (builtins.map,))


def test_an_array_op_an_unknown_value_keeps_its_least_ndim_round_a_loop():
    # x = np.ones((4, 3)); for ...: x_new = x + g; x = x_new -- with g a parameter
    # the sum's ndim is not known, but it is 2 or more: an array (it was lost on the
    # second round, x_new then taken for something that may be a list)
    parse = lambda text: gast.parse(text).body[0].value
    bound = {"x": [parse("np.ones((4, 3))"), parse("x_new")], "x_new": [parse("x + g")]}
    facts = ArrayFacts(bound, {"np": np}.get, {"x", "x_new", "g"})
    assert facts.array("x_new") == Array(None, least=2)
    assert facts.array("x") == Array(None, least=2)
    assert _fact("S + g", {"S": "np.zeros((2, 3))"}) == Array(None, least=2)
    assert _fact("S + 1.0", {"S": "np.zeros((2, 3))"}) == Array(2)
    assert _fact("z + g", {"z": "np.float64(1.0)"}) is None
