"""Adjoint helpers of linear algebra (``np.linalg``, ``einsum``, ``tensordot`` ...).

Matrices may be stacked: the last two axes are the matrix, the others batch
axes broadcast as NumPy does (summed back with ``unbroadcast``).  Like every
helper, they accept the symbolic zero ``0.0`` for ``g`` and return it; for the
tuple results of ``eigh``, ``svd``, ``qr`` and ``slogdet``, ``g`` is a
:class:`~tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints.Parts` whose entries may be zero.
"""

import numpy as np

from tangent_ckpt.runtime.backends import as_array, in_library_of, like_of
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import _keep, _weak_like, is_zero, unbroadcast

__all__ = [
    "solve_adjoint_a", "solve_adjoint_b", "inv_adjoint", "det_adjoint", "slogdet_adjoint",
    "cholesky_adjoint", "eigh_adjoint", "svd_adjoint", "pinv_adjoint", "qr_adjoint",
    "norm_adjoint", "trace_adjoint", "diagonal_adjoint", "diag_adjoint", "kron_adjoint",
    "inner_adjoint_a", "inner_adjoint_b", "einsum_adjoint", "tensordot_adjoint",
    "matrix_power_adjoint", "vecdot_adjoint", "vector_norm_adjoint",
]


def _T(x):
    return np.swapaxes(x, -1, -2)


def _parts(g, n):
    """The ``n`` entries of a tuple adjoint (a zero where no contribution came)."""
    if is_zero(g):
        return (0.0,) * n
    return tuple(g)


def _solve_vector(b):
    """True when NumPy's ``solve(a, b)`` treats ``b`` as a vector (NumPy 2: 1-D only)."""
    return np.ndim(b) == 1


def solve_adjoint_b(g, a, b):
    """Adjoint of ``b`` in ``x = solve(a, b)``: ``solve(a.T, g)``."""
    if is_zero(g):
        return g
    if _solve_vector(b):
        return unbroadcast(np.linalg.solve(_T(a), g[..., None])[..., 0], b)
    return unbroadcast(np.linalg.solve(_T(a), g), b)


def solve_adjoint_a(g, a, b, ans):
    """Adjoint of ``a`` in ``x = solve(a, b)``: ``-solve(a.T, g) @ x.T``."""
    if is_zero(g):
        return g
    if _solve_vector(b):
        gb = np.linalg.solve(_T(a), g[..., None])
        return unbroadcast(-gb * ans[..., None, :], a)
    gb = np.linalg.solve(_T(a), g)
    return unbroadcast(-gb @ _T(ans), a)


def inv_adjoint(g, ans):
    """Adjoint of ``np.linalg.inv``: ``-inv(a).T @ g @ inv(a).T``."""
    if is_zero(g):
        return g
    return -_T(ans) @ g @ _T(ans)


def det_adjoint(g, a, ans):
    """Adjoint of ``np.linalg.det``: ``g * det(a) * inv(a).T`` (inf for a singular ``a``)."""
    if is_zero(g):
        return g
    factor = as_array(g * ans)[..., None, None]
    return factor * _T(np.linalg.inv(a))


def slogdet_adjoint(g, a):
    """Adjoint of ``np.linalg.slogdet``: the log-determinant's ``g * inv(a).T``
    (the sign carries no derivative)."""
    _, glog = _parts(g, 2)
    if is_zero(glog):
        return 0.0
    return in_library_of(glog, a)[..., None, None] * _T(np.linalg.inv(a))


def _from_symmetric(G, uplo):
    """The adjoint of the matrix a function reads one triangle of, given the
    adjoint ``G`` with respect to the symmetric matrix it stands for."""
    G = 0.5 * (G + _T(G))
    if uplo.upper() == "L":
        return np.tril(2 * G, -1) + G * np.identity(G.shape[-1], like=like_of(G))
    return np.triu(2 * G, 1) + G * np.identity(G.shape[-1], like=like_of(G))


def cholesky_adjoint(g, ans, upper=False):
    """Adjoint of ``np.linalg.cholesky`` (which reads the lower triangle of ``a``;
    the upper one with ``upper=True``): ``S = L^-T phi(L^T g) L^-1``, with
    ``phi`` the lower triangle with its diagonal halved."""
    if is_zero(g):
        return g
    L = _T(ans) if upper else ans
    if upper:
        g = _T(g)
    n = L.shape[-1]
    phi = np.tril(_T(L) @ g) * (1 - 0.5 * np.identity(n, like=like_of(L, g)))
    Linv = np.linalg.inv(L)
    S = _T(Linv) @ phi @ Linv
    return _from_symmetric(S, "U" if upper else "L")


def eigh_adjoint(g, ans, UPLO="L"):
    """Adjoint of ``np.linalg.eigh`` (eigenvalues ``w`` and vectors ``v``):
    ``v (diag(gw) + F * (v.T gv)) v.T`` with ``F[i, j] = 1 / (w[j] - w[i])``;
    distinct eigenvalues are assumed (the vectors are not unique otherwise)."""
    gw, gv = _parts(g, 2)
    w, v = ans
    n = w.shape[-1]
    inner = np.zeros(v.shape, dtype=v.dtype, like=like_of(v))
    if not is_zero(gw):
        inner = inner + in_library_of(gw, v)[..., None] * np.identity(n, like=like_of(v))
    if not is_zero(gv):
        gap = w[..., None, :] - w[..., :, None] + np.identity(n, like=like_of(w))
        F = (1 - np.identity(n, like=like_of(w))) / gap
        inner = inner + F * (_T(v) @ gv)
    return _from_symmetric(v @ inner @ _T(v), UPLO)


def svd_adjoint(g, a, ans, full_matrices=True, compute_uv=True):
    """Adjoint of ``np.linalg.svd`` for real ``a`` (m, n), k = min(m, n), distinct
    non-zero singular values (Townsend, "Differentiating the SVD").  With
    ``full_matrices`` the columns past k of U or V are not unique: an adjoint
    that reaches them raises."""
    if is_zero(g):
        return g
    if not compute_uv:
        U, _, Vh = np.linalg.svd(a, full_matrices=False)
        return U @ (in_library_of(g, Vh)[..., None] * Vh)
    gU, gs, gVh = _parts(g, 3)
    U, s, Vh = ans
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    if full_matrices:
        for part, keep in ((gU, (..., slice(None), slice(k, None))),
                           (gVh, (..., slice(k, None), slice(None)))):
            if not is_zero(part) and np.any(part[keep]):
                raise ValueError("svd(full_matrices=True): the adjoint reaches the singular "
                                 "vectors past min(m, n), which are not unique; use "
                                 "full_matrices=False")
        U, Vh = U[..., :, :k], Vh[..., :k, :]
        gU = gU if is_zero(gU) else gU[..., :, :k]
        gVh = gVh if is_zero(gVh) else gVh[..., :k, :]
    V = _T(Vh)
    eye = np.identity(k, like=like_of(a))
    s2 = s[..., None, :] ** 2 - s[..., :, None] ** 2      # s_j^2 - s_i^2
    F = (1 - eye) / (s2 + eye)
    S = s[..., None, :] * eye
    Sinv = (1 / s)[..., None, :] * eye
    inner = np.zeros(s.shape + (k,), dtype=np.result_type(a, float), like=like_of(a))
    if not is_zero(gs):
        inner = inner + in_library_of(gs, a)[..., None, :] * eye
    out = 0.0
    if not is_zero(gU):
        J = F * (_T(U) @ gU - _T(gU) @ U)
        inner = inner + J @ S
        out = out + (np.identity(m, like=like_of(a)) - U @ _T(U)) @ gU @ Sinv @ Vh
    if not is_zero(gVh):
        gV = _T(gVh)
        K = F * (_T(V) @ gV - _T(gV) @ V)
        inner = inner + S @ K
        out = out + U @ Sinv @ _T(gV) @ (np.identity(n, like=like_of(a)) - V @ Vh)
    return U @ inner @ Vh + out


def pinv_adjoint(g, a, ans):
    """Adjoint of ``np.linalg.pinv`` where the rank is locally constant
    (Golub and Pereyra): ``-X.T g X.T + (I - a X) g.T X X.T + X.T X g.T (I - X a)``."""
    if is_zero(g):
        return g
    X = ans
    m, n = a.shape[-2], a.shape[-1]
    return (-_T(X) @ g @ _T(X)
            + (np.identity(m, like=like_of(a)) - a @ X) @ _T(g) @ X @ _T(X)
            + _T(X) @ X @ _T(g) @ (np.identity(n, like=like_of(a)) - X @ a))


def qr_adjoint(g, a, ans):
    """Adjoint of ``np.linalg.qr`` (reduced, m >= n): ``(gQ + Q copyltu(M)) R^-T``
    with ``M = R gR.T - gQ.T Q`` and ``copyltu`` mirroring the lower triangle."""
    gQ, gR = _parts(g, 2)
    Q, R = ans
    if a.shape[-2] < a.shape[-1]:
        raise ValueError("adjoint of np.linalg.qr needs m >= n (more rows than columns)")
    gQ = np.zeros_like(Q) if is_zero(gQ) else gQ
    gR = np.zeros_like(R) if is_zero(gR) else gR
    M = R @ _T(gR) - _T(gQ) @ Q
    M = np.tril(M) + _T(np.tril(M, -1))
    return _T(np.linalg.solve(R, _T(gQ + Q @ M)))


def matrix_power_adjoint(g, a, n):
    """Adjoint of ``np.linalg.matrix_power(a, n)`` for an integer ``n`` >= 0:
    ``sum_k (a^k).T g (a^(n-1-k)).T``."""
    if is_zero(g) or n == 0:
        return 0.0 * a if not is_zero(g) else g
    if n < 0:
        raise ValueError("adjoint of matrix_power with a negative power: write inv() first")
    powers = [np.broadcast_to(np.identity(a.shape[-1], like=like_of(a)), a.shape)]
    for _ in range(n - 1):
        powers.append(powers[-1] @ a)
    return sum(_T(powers[k]) @ g @ _T(powers[n - 1 - k]) for k in range(n))


# --- norms -------------------------------------------------------------------------

def _norm_axes(x, ord, axis):
    if axis is None:
        if ord is None:
            return None
        return tuple(range(x.ndim))
    if np.ndim(axis) == 0:
        return (int(axis) % x.ndim,)
    return tuple(int(a) % x.ndim for a in axis)


def _share(g, x, hit, axes):
    """``g`` spread over the entries of ``hit`` (ties share it equally)."""
    count = np.sum(hit, axis=axes, keepdims=True)
    return g * hit / count


def norm_adjoint(g, x, ans, ord=None, axis=None, keepdims=False):
    """Adjoint of ``np.linalg.norm`` for every ``ord`` NumPy accepts.

    Vectors: 2 (``x / norm``), inf/-inf (the largest/smallest ``|x_i|``, ties
    share), 0 (no derivative), any other p (``sign(x) |x|^(p-1) / norm^(p-1)``).
    Matrices: 'fro', 'nuc' (``U V^T``), 2/-2 (the outer product of the
    largest/smallest singular vectors), 1/-1 and inf/-inf (the largest/smallest
    column/row sum of ``|x|``).  0 where the norm is 0 (a subgradient).
    """
    if is_zero(g):
        return g
    x = as_array(x)
    axes = _norm_axes(x, ord, axis)
    g = _keep(_weak_like(g, x), x, axes, keepdims)
    ans = _keep(ans, x, axes, keepdims)
    safe = np.where(ans == 0, 1, ans)
    if axes is None or ord in (None, "fro") or (ord == 2 and len(axes) == 1):
        return x * (g / safe)
    if len(axes) == 1:
        ax = axes
        if ord == np.inf or ord == -np.inf:
            return _share(g, x, np.abs(x) == ans, ax) * np.sign(x)
        if ord == 0:
            return np.zeros_like(x, dtype=np.result_type(x, float))
        p = float(ord)
        return g * np.sign(x) * (np.abs(x) / safe) ** (p - 1) * (ans != 0)
    r, c = axes
    xm = np.moveaxis(x, (r, c), (-2, -1))
    gm = np.moveaxis(g, (r, c), (-2, -1))
    am = np.moveaxis(ans, (r, c), (-2, -1))
    if ord == "nuc" or ord in (2, -2):
        U, s, Vh = np.linalg.svd(xm, full_matrices=False)
        if ord == "nuc":
            out = gm * (U @ Vh)
        else:
            k = 0 if ord == 2 else -1
            out = gm * (U[..., :, k:k + 1 or None] @ Vh[..., k:k + 1 or None, :])
    elif ord in (1, -1, np.inf, -np.inf):
        summed = -2 if ord in (1, -1) else -1       # column sums or row sums
        sums = np.sum(np.abs(xm), axis=summed, keepdims=True)
        hit = sums == am
        out = np.sign(xm) * _share(gm, sums, hit, (-2, -1))
    else:
        raise ValueError(f"np.linalg.norm: invalid norm order {ord!r} for matrices")
    return np.moveaxis(out, (-2, -1), (r, c))


# --- traces, diagonals and products ------------------------------------------------

def _diagonal_index(n1, n2, offset):
    k = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    i = np.arange(k) + max(-offset, 0)
    return i, i + offset


def diagonal_adjoint(g, a, offset=0, axis1=0, axis2=1):
    """Adjoint of ``np.diagonal(a, offset, axis1, axis2)``: ``g`` written onto that
    diagonal of zeros shaped like ``a``."""
    if is_zero(g):
        return g
    a = as_array(a)
    out = np.zeros(a.shape, dtype=np.result_type(g, float), like=like_of(g, a))
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    i, j = (in_library_of(k, out) for k in
            _diagonal_index(view.shape[-2], view.shape[-1], offset))
    view[..., i, j] = g
    return out


def trace_adjoint(g, a, offset=0, axis1=0, axis2=1):
    """Adjoint of ``np.trace``: ``g`` on the diagonal it sums."""
    if is_zero(g):
        return g
    a = as_array(a)
    i, _ = _diagonal_index(a.shape[axis1], a.shape[axis2], offset)
    return diagonal_adjoint(np.repeat(in_library_of(g, a)[..., None], len(i), -1), a,
                            offset, axis1, axis2)


def diag_adjoint(g, v, k=0):
    """Adjoint of ``np.diag(v, k)``: the k-th diagonal of ``g`` for a vector
    ``v``; ``g`` on that diagonal for a matrix ``v``."""
    if is_zero(g):
        return g
    if np.ndim(v) == 1:
        return np.diagonal(g, k)
    return diagonal_adjoint(g, v, k)


def kron_adjoint(g, a, b, first):
    """Adjoint of ``a`` (``first``) or ``b`` in ``np.kron(a, b)``: the blocks of
    ``g`` weighted by the other factor and summed."""
    if is_zero(g):
        return g
    a, b = as_array(a), as_array(b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    blocks = np.reshape(g, [n for pair in zip(sa, sb) for n in pair])
    if first:
        other = np.reshape(b, [n for s in sb for n in (1, s)])
        return np.reshape(np.sum(blocks * other, axis=tuple(range(1, 2 * nd, 2))), a.shape)
    other = np.reshape(a, [n for s in sa for n in (s, 1)])
    return np.reshape(np.sum(blocks * other, axis=tuple(range(0, 2 * nd, 2))), b.shape)


def inner_adjoint_a(g, a, b):
    """Adjoint of ``a`` in ``np.inner(a, b)`` (a sum over the last axes)."""
    if is_zero(g):
        return g
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a)
    na = np.ndim(a)
    return np.tensordot(g, b, axes=(list(range(na - 1, np.ndim(g))),
                                    list(range(np.ndim(b) - 1))))


def inner_adjoint_b(g, a, b):
    """Adjoint of ``b`` in ``np.inner(a, b)``."""
    if is_zero(g):
        return g
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * a, b)
    lead = list(range(np.ndim(a) - 1))
    return np.tensordot(g, a, axes=(lead, lead))


def tensordot_adjoint(g, a, b, axes, first):
    """Adjoint of ``a`` (``first``) or ``b`` in ``np.tensordot(a, b, axes)``
    (``axes`` an int or a pair of sequences)."""
    if is_zero(g):
        return g
    a, b = as_array(a), as_array(b)
    if np.ndim(axes) == 0:
        n = int(axes)
        axa, axb = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        axa, axb = axes
        axa = [int(x) % a.ndim for x in np.atleast_1d(axa)]
        axb = [int(x) % b.ndim for x in np.atleast_1d(axb)]
    free_a = [k for k in range(a.ndim) if k not in axa]
    free_b = [k for k in range(b.ndim) if k not in axb]
    nfa = len(free_a)
    if first:   # out's axes: a's free axes, then those paired with b's summed axes in order
        out = np.tensordot(g, b, axes=(list(range(nfa, np.ndim(g))), free_b))
        return np.transpose(out, np.argsort(free_a + [axa[axb.index(j)] for j in sorted(axb)]))
    out = np.tensordot(a, g, axes=(free_a, list(range(nfa))))
    return np.transpose(out, np.argsort([axb[axa.index(j)] for j in sorted(axa)] + free_b))


# --- einsum ------------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _explicit(subscripts, shapes):
    """Input and output subscripts of an einsum with ``...`` and the implicit
    output written out in letters, as lists of strings."""
    text = subscripts.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    inputs = inputs.split(",")
    if len(inputs) != len(shapes):
        raise ValueError(f"einsum: {len(inputs)} subscripts for {len(shapes)} operands")
    used = set(text) - set(".,->")
    spare = [c for c in _LETTERS if c not in used]
    width = max([len(s) - (len(sub) - 3) for sub, s in zip(inputs, shapes) if "..." in sub],
                default=0)
    dots = "".join(spare[:width])
    explicit = []
    for sub, shape in zip(inputs, shapes):
        if "..." in sub:
            n = len(shape) - (len(sub) - 3)
            sub = sub.replace("...", dots[width - n:] if n else "")
        explicit.append(sub)
    if arrow:
        output = output.replace("...", dots)
    else:
        letters = "".join(explicit)
        output = dots + "".join(sorted(c for c in set(letters) - set(dots)
                                       if letters.count(c) == 1))
    return explicit, output, spare[width:]


def einsum_adjoint(g, subscripts, operands, i):
    """Adjoint of operand ``i`` of ``np.einsum(subscripts, *operands)``: another
    einsum, from ``g`` and the other operands to operand ``i``'s subscripts.

    Handles implicit and explicit outputs, ``...`` (broadcast dims are summed
    back), indices only operand ``i`` has (``'ij->i'``) and repeated indices
    (``'ii->i'``: the adjoint lands on the diagonal).
    """
    if is_zero(g):
        return g
    if not isinstance(subscripts, str):
        raise ValueError("einsum adjoint: give the subscripts as a string")
    operands = [as_array(op) for op in operands]
    shapes = [op.shape for op in operands]
    inputs, output, spare = _explicit(subscripts, shapes)
    sizes = {}
    for sub, shape in zip(inputs, shapes):
        for c, n in zip(sub, shape):
            if n != 1 or c not in sizes:
                sizes[c] = n
    target = inputs[i]
    shape = shapes[i]
    # a dim of operand i broadcast against a longer one gets its own letter
    letters = list(target)
    for k, (c, n) in enumerate(zip(target, shape)):
        if n == 1 and sizes[c] != 1:
            letters[k] = spare.pop(0)
            sizes[letters[k]] = 1
    # repeated letters: the adjoint lands on the diagonal (eye in the extra letters)
    terms, args = [output], [g]
    seen = set()
    for k, c in enumerate(letters):
        if c in seen:
            fresh = spare.pop(0)
            letters[k] = fresh
            terms.append(c + fresh)
            args.append(np.identity(sizes[c], like=like_of(g, *operands)))
        seen.add(c)
    for j, (sub, op) in enumerate(zip(inputs, operands)):
        if j != i:
            terms.append(sub)
            args.append(op)
    present = set("".join(terms))
    for k, c in enumerate(letters):
        if c not in present:
            terms.append(c)
            args.append(np.zeros(shape[k], like=like_of(g, *operands)) + 1.0)
            present.add(c)
    spec = ",".join(terms) + "->" + "".join(letters)
    return np.reshape(np.einsum(spec, *args), shape)


def vecdot_adjoint(g, other, axis=None):
    """Adjoint of ``np.vecdot(x1, x2, axis=axis)`` (real) for one factor, before
    unbroadcasting: ``g`` spread along the summed axis times the other factor."""
    if is_zero(g):
        return g
    return np.expand_dims(g, -1 if axis is None else axis) * other


def vector_norm_adjoint(g, x, ans, axis=None, keepdims=False):
    """Adjoint of ``np.linalg.vector_norm(x, axis=axis)`` (ord 2): ``g x / norm``,
    0 where the norm is 0 (a subgradient)."""
    if is_zero(g):
        return g
    x = as_array(x)
    norm = _keep(ans, x, axis, keepdims)
    return _keep(_weak_like(g, x), x, axis, keepdims) * x / np.where(norm == 0, 1.0, norm)
