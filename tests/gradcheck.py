"""Shared test helper: compare a gradient with central finite differences.

    from gradcheck import check_grad, numeric_grad
    check_grad(f, (x, W), wrt=(0, 1))          # compiles tc.grad(f, wrt) and checks it

- ``numeric_grad(f, args, wrt, seed=None)``: central differences in float64 of
  ``sum(seed * f(*args))`` (``seed`` defaults to ones) for each ``wrt`` position;
  floats and arrays are both fine.  Returns a tuple in ``wrt`` order.
- ``check_grad(f, args, wrt=(0,), seed=None, df=None, rtol=1e-6, atol=1e-8)``:
  calls the gradient (``df``, or ``tc.grad(f, wrt)``), checks that no argument
  was mutated, and compares each gradient (shape and values) with
  ``numeric_grad``.  Returns the gradients as a tuple in ``wrt`` order.
- ``check_structured_leaves(f, args, wrt, got)``: for ``wrt`` arguments that are
  containers or objects, each gradient in ``got`` has its argument's structure
  and its leaves match ``numeric_grad``.
"""

import copy

import numpy as np

import tangent_ckpt as tc
from autograd_oracle import autograd_gradient
from tangent_ckpt.container_args import leaves_of, rebuild_from, structure_of

EPS = 1e-6


def _as64(value):
    if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating):
        return value.astype(np.float64)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return value


def _objective(f, args, seed):
    # each evaluation sees the arguments as given: a program may write into a dict
    # argument (cs231n's bn_param['running_mean'] = ...) and read it back next time
    out = np.asarray(f(*copy.deepcopy(args)), dtype=np.float64)
    weight = np.ones_like(out) if seed is None else np.asarray(seed, dtype=np.float64)
    return float(np.sum(weight * out))


def numeric_grad(f, args, wrt=(0,), seed=None, eps=EPS):
    """Central finite differences of ``sum(seed * f(*args))`` in float64."""
    args = [_as64(copy.deepcopy(a)) for a in args]
    grads = []
    for k in wrt:
        x = args[k]
        if isinstance(x, float):
            hi = _objective(f, args[:k] + [x + eps] + args[k + 1:], seed)
            lo = _objective(f, args[:k] + [x - eps] + args[k + 1:], seed)
            grads.append((hi - lo) / (2 * eps))
            continue
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            xp, xm = x.copy(), x.copy()
            xp[i] += eps
            xm[i] -= eps
            g[i] = (_objective(f, args[:k] + [xp] + args[k + 1:], seed)
                    - _objective(f, args[:k] + [xm] + args[k + 1:], seed)) / (2 * eps)
        grads.append(g)
    return tuple(grads)


def assert_unchanged(before, after):
    """The gradient must never mutate the user's arguments."""
    for k, (b, a) in enumerate(zip(before, after)):
        assert _same(b, a), f"argument {k} was mutated"


def _same(b, a):
    if isinstance(b, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if isinstance(b, dict):
        return isinstance(a, dict) and list(a) == list(b) and all(_same(b[k], a[k]) for k in b)
    if isinstance(b, (list, tuple)) and any(isinstance(v, (np.ndarray, dict, list, tuple))
                                            for v in b):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, b, a))
    return a == b or (a != a and b != b)


def check_value_and_grad(f, args, rel=1e-6, wrt=(0,)):
    """The compiled value of ``f`` (``tc.value_and_grad``) is what ``f`` computes
    when run as written, to ``rel``, and its gradient with respect to ``wrt``
    matches central differences (``check_grad``): a program the compiler rewrote
    still computes the same."""
    value, _ = tc.value_and_grad(f, wrt=tuple(wrt))(*args)
    assert abs(value - f(*copy.deepcopy(list(args)))) <= rel * abs(value) + 1e-12, value
    check_grad(f, args, wrt=wrt)


def check_grad(f, args, wrt=(0,), seed=None, df=None, rtol=1e-6, atol=1e-8):
    """Check ``tc.grad(f, wrt)`` (or ``df``) against central differences."""
    wrt = tuple(wrt)
    df = df or tc.grad(f, wrt=wrt)
    before = copy.deepcopy(list(args))
    extra = () if seed is None else (seed,)
    got = df(*args, *extra)
    assert_unchanged(before, list(args))
    got = (got,) if isinstance(df.wrt, int) else tuple(got)  # wrt=(0,): a 1-tuple
    assert len(got) == len(wrt)
    expected = numeric_grad(f, before, wrt, seed)
    for k, g, e in zip(wrt, got, expected):
        assert np.shape(g) == np.shape(e), \
            f"gradient for argument {k} has shape {np.shape(g)}, expected {np.shape(e)}"
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), e, rtol=rtol, atol=atol,
                                   err_msg=f"gradient for argument {k}\n{df.source}")
    return got


def check_grad_and_autograd(f, args, wrt=(0,), **options):
    """``check_grad`` of ``tc.grad(f, wrt, **options)``, then autograd's gradient to
    1e-10 where autograd runs ``f`` (tests/autograd_oracle.py).  Returns the
    gradient function (to look at its source)."""
    df = tc.grad(f, wrt=tuple(wrt), **options)
    got = check_grad(f, args, wrt=wrt, df=df)
    oracle = autograd_gradient(f, args, tuple(wrt))
    if oracle is not None:
        for g, o in zip(got, oracle):
            np.testing.assert_allclose(g, o, rtol=1e-10, atol=1e-12)
    return df


def check_structured_leaves(f, args, wrt, got):
    """Each gradient in ``got`` (one per ``wrt`` position) has its argument's
    structure (a container's or an object's), and its leaves match central
    differences of ``f`` taken leaf by leaf."""
    structures = [structure_of(args[k]) for k in wrt]
    counts = [len(leaves_of(args[k])) for k in wrt]
    flat_args = [leaf for k in wrt for leaf in leaves_of(args[k])]

    def flat_f(*leaves):
        rebuilt, it = list(args), iter(leaves)
        for k, s in zip(wrt, structures):
            rebuilt[k] = rebuild_from(s, it, args[k])
        return f(*rebuilt)

    expected = numeric_grad(flat_f, flat_args, wrt=range(len(flat_args)))
    at = 0
    for k, g, s, n in zip(wrt, got, structures, counts):
        assert structure_of(g) == s, f"gradient {k} has structure {structure_of(g)}"
        for leaf, e, x in zip(leaves_of(g), expected[at:at + n], flat_args[at:at + n]):
            assert np.shape(leaf) == np.shape(x)
            np.testing.assert_allclose(leaf, e, rtol=1e-6, atol=1e-8)
        at += n
