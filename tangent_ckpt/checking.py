"""``tc.check_grad``: compare derivatives with central finite differences.

Each check projects a derivative on a random direction ``v`` and compares it
with the central difference of the function along ``v``:

- ``"grad"`` (taped) and ``"checkpoint"`` (``checkpoint=True``):
  ``<grad, v>`` against ``(F(x + h v) - F(x - h v)) / 2h``, where ``F`` is the
  output weighted by a random output adjoint ``w`` (``sum(w * f)``; ``w`` is
  1 for a scalar output);
- ``"jvp"``: ``<w, J v>`` against the same difference quotient;
- ``"hvp"``: ``<u, H v>`` against the second central difference of ``f``
  along ``u`` and ``v`` (a scalar output).

One direction at a time perturbs one ``wrt`` argument, so a disagreement
names the argument.  Arguments in ``float32`` get a larger step and looser
tolerances than ``float64``.  The gradient must also leave the arguments
unchanged.
"""

import copy
import inspect
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Union


import numpy as np

from tangent_ckpt.api import _normalize_wrt, grad
from tangent_ckpt.container_args import leaves_of, rebuild_from, structure_of
from tangent_ckpt.second_order import hvp, jvp

MODES = ("grad", "checkpoint", "jvp", "hvp")

# precision -> (finite-difference step, rtol, atol) for a first derivative; the second
# derivative (hvp) uses the square root of the step and ten times the tolerances
_PRECISION = {
    np.dtype(np.float64): (1e-6, 1e-5, 1e-7),
    np.dtype(np.float32): (3e-3, 5e-3, 1e-4),
    np.dtype(np.float16): (3e-2, 1e-1, 1e-2),
}


class Comparison(NamedTuple):
    """One row of a :class:`GradCheckReport`."""
    mode: str           # "grad", "checkpoint", "jvp", "hvp"
    argument: str       # the wrt argument the direction perturbs
    direction: int      # which random direction (0, 1, ...)
    computed: float     # the derivative projected on the direction
    expected: float     # the finite difference along the direction
    tolerance: float    # the largest difference accepted
    error: Optional[str] = None  # an exception the derivative raised, or a mutated argument

    @property
    def difference(self) -> float:
        return abs(self.computed - self.expected)

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.difference <= self.tolerance)


class GradCheckError(AssertionError):
    """A derivative disagrees with finite differences; ``report`` holds every row."""

    def __init__(self, report: "GradCheckReport"):
        self.report = report
        super().__init__(str(report))


class GradCheckReport:
    """What :func:`check_grad` compared: ``rows`` (one :class:`Comparison` per mode,
    argument and direction), ``ok``, ``failures``; ``str()`` is a table."""

    def __init__(self, function: str, rows: List[Comparison], dtype: np.dtype):
        self.function = function
        self.rows = rows
        self.dtype = dtype

    @property
    def failures(self) -> List[Comparison]:
        return [row for row in self.rows if not row.ok]

    @property
    def ok(self) -> bool:
        return not self.failures

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        bad = len(self.failures)
        title = (f"check_grad({self.function}): {len(self.rows)} comparisons in {self.dtype}, "
                 + ("all agree with finite differences" if not bad else
                    f"{bad} disagree with finite differences"))
        header = ("mode", "argument", "dir", "derivative", "finite diff.", "|difference|",
                  "tolerance", "")
        lines = [header]
        for row in self.rows:
            if row.error is not None:
                lines.append((row.mode, row.argument, str(row.direction), "-", "-", "-", "-",
                              "FAILED: " + row.error))
                continue
            lines.append((row.mode, row.argument, str(row.direction), f"{row.computed:.6g}",
                          f"{row.expected:.6g}", f"{row.difference:.2g}",
                          f"{row.tolerance:.2g}", "ok" if row.ok else "DISAGREES"))
        widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
        table = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)) + "  " + line[-1]
                 for line in lines]
        return "\n".join([title] + [text.rstrip() for text in table])

    def __repr__(self) -> str:
        return f"<GradCheckReport {self.function}: {len(self.rows) - len(self.failures)}" \
               f"/{len(self.rows)} agree>"


def check_grad(f: Callable[..., Any], args: Sequence[Any], wrt: Union[int, Sequence[int]] = 0,
               *, modes: Sequence[str] = ("grad", "checkpoint"), directions: int = 2,
               kwargs: Optional[Dict[str, Any]] = None, rtol: Optional[float] = None,
               atol: Optional[float] = None, step: Optional[float] = None, seed: int = 0,
               raise_error: bool = True, **options: Any) -> GradCheckReport:
    """Check ``f``'s derivatives at ``args`` against central finite differences.

    ``wrt`` are the positions of the arguments to differentiate (float arrays,
    floats, or lists/tuples/dicts of them): an int or a tuple, as in
    :func:`tangent_ckpt.grad`.  ``modes``: any of ``"grad"`` (the
    taped gradient), ``"checkpoint"`` (the gradient with ``checkpoint=True``),
    ``"jvp"`` and ``"hvp"`` (a scalar ``f``).  Each mode is projected on
    ``directions`` random directions per ``wrt`` argument (drawn with
    ``seed``) and compared with the central difference of ``f`` along them.
    ``rtol``/``atol``/``step`` default by precision (float64: 1e-5, 1e-7,
    1e-6; float32: 5e-3, 1e-4, 3e-3); a difference is accepted below
    ``atol + rtol * max(|derivative|, |finite difference|)`` plus the rounding
    error of the difference quotient.  ``options`` go to :func:`tangent_ckpt.grad`
    (``snapshots=``, ``schedule=``, ...; checkpoint-only options apply to the
    ``"checkpoint"`` mode).

    Returns a :class:`GradCheckReport`; when a row disagrees (or a derivative
    raises, or changes an argument) raises :class:`GradCheckError`, an
    ``AssertionError`` whose message is the report's table, unless
    ``raise_error=False``.
    """
    unknown = set(modes) - set(MODES)
    if unknown:
        raise ValueError(f"check_grad: unknown mode {sorted(unknown)[0]!r}; "
                         f"modes are {', '.join(MODES)}")
    given, positions = _normalize_wrt(wrt)
    single = isinstance(given, int)
    kwargs = dict(kwargs or {})
    args = list(args)
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    labels = _argument_names(f, positions)
    dtype = _working_dtype([args[k] for k in positions])
    default_step, default_rtol, default_atol = _PRECISION[dtype]
    h = default_step if step is None else step
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    rng = np.random.default_rng(seed)
    checkpoint_options = {k: v for k, v in options.items()}
    taped_options = {k: v for k, v in options.items() if k not in _CHECKPOINT_ONLY}

    def call(values):
        return f(*copy.deepcopy(values), **copy.deepcopy(kwargs))

    value = np.asarray(call(args))
    weight = 1.0 if value.ndim == 0 else rng.standard_normal(value.shape)
    scale = float(np.max(np.abs(value))) if value.size else 0.0

    def weighted(values):
        return float(np.sum(weight * np.asarray(call(values), dtype=np.float64)))

    def moved(k, direction, t):
        out = list(args)
        out[k] = _add(args[k], direction, t)
        return out

    # the derivatives, computed once per mode
    derivatives: Dict[str, Callable[[int, Any], Any]] = {}
    rows: List[Comparison] = []
    before = copy.deepcopy(args)
    for mode in modes:
        try:
            if mode in ("grad", "checkpoint"):
                gopts = taped_options if mode == "grad" else {**checkpoint_options,
                                                               "checkpoint": True}
                df = grad(f, given, **gopts)
                call_args = [*args] + ([] if value.ndim == 0 else [weight])
                grads = df(*call_args, **kwargs)
                grads = (grads,) if single else tuple(grads)
                changed = _changed(before, args)
                if changed is not None:
                    raise _Mutated(f"the gradient changed argument {changed}")
                derivatives[mode] = _projector(dict(zip(positions, grads)))
            elif mode == "jvp":
                derivatives[mode] = _jvp(jvp(f, given), args, kwargs, positions,
                                         weight, single)
            elif mode == "hvp":
                if value.ndim != 0:
                    raise ValueError(f"hvp needs a scalar output; {name} returns shape "
                                     f"{value.shape}")
                derivatives[mode] = _hvp(hvp(f, given, **taped_options), args, kwargs,
                                         positions, single)
        except Exception as exc:  # reported as a failed row, named by its type
            for k in positions:
                rows.append(Comparison(mode, labels[k], 0, np.nan, np.nan, 0.0,
                                       f"{type(exc).__name__}: {exc}".splitlines()[0]))
            derivatives.pop(mode, None)

    for d in range(directions):
        for k in positions:
            v = _random_like(args[k], rng)
            first_difference = None
            for mode in modes:
                if mode not in derivatives:
                    continue
                if mode == "hvp":
                    u = _random_like(args[k], rng)
                    computed = float(derivatives[mode](k, (u, v)))
                    hh = h ** (2 / 3)
                    expected = (weighted(moved(k, _sum(u, v), hh)) -
                                weighted(moved(k, _sum(u, _neg(v)), hh)) -
                                weighted(moved(k, _sum(_neg(u), v), hh)) +
                                weighted(moved(k, _sum(_neg(u), _neg(v)), hh))) / (4 * hh * hh)
                    noise = 10 * np.finfo(dtype).eps * (scale + 1) / (hh * hh)
                    tol = 10 * (atol + rtol * max(abs(computed), abs(expected))) + noise
                else:
                    computed = float(derivatives[mode](k, v))
                    if first_difference is None:
                        first_difference = (weighted(moved(k, v, h)) -
                                            weighted(moved(k, _neg(v), h))) / (2 * h)
                    expected = first_difference
                    noise = 10 * np.finfo(dtype).eps * (scale + 1) * \
                        float(np.sum(np.abs(weight))) / h
                    tol = atol + rtol * max(abs(computed), abs(expected)) + noise
                rows.append(Comparison(mode, labels[k], d, computed, expected, float(tol)))
    rows.sort(key=lambda row: MODES.index(row.mode))
    report = GradCheckReport(name, rows, dtype)
    if raise_error and not report.ok:
        raise GradCheckError(report)
    return report


# options of tc.grad that only mean something with checkpoint=True
_CHECKPOINT_ONLY = ("snapshots", "memory_budget", "schedule", "min_steps", "disk_snapshots",
                    "verify", "nested", "costs", "snapshot_store", "backend")


class _Mutated(Exception):
    pass


def _argument_names(f, positions):
    try:
        names = [p.name for p in inspect.signature(f).parameters.values()
                 if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    return {k: names[k] if -len(names) <= k < len(names) else f"args[{k}]" for k in positions}


def _working_dtype(values):
    """The least precise float dtype among the leaves of the wrt arguments."""
    found = np.dtype(np.float64)
    for value in values:
        for leaf in leaves_of(value):
            dtype = getattr(leaf, "dtype", None)
            if dtype is not None and np.issubdtype(dtype, np.floating) and \
                    np.finfo(dtype).eps > np.finfo(found).eps:
                found = np.dtype(dtype)
    return found if found in _PRECISION else np.dtype(np.float64)


def _map(fn, *values):
    """``fn`` leaf by leaf over values of one structure."""
    structure = structure_of(values[0])
    leaves = [fn(*parts) for parts in zip(*map(leaves_of, values))]
    return rebuild_from(structure, iter(leaves), values[0])


def _random_like(value, rng):
    def draw(leaf):
        if isinstance(leaf, np.ndarray):
            return rng.standard_normal(leaf.shape).astype(leaf.dtype)
        return float(rng.standard_normal())
    return _map(draw, value)


def _add(x, v, t):
    def add(a, b):
        if isinstance(a, np.ndarray):
            return (a + t * b).astype(a.dtype)
        return a + t * b
    return _map(add, x, v)


def _neg(v):
    return _map(lambda a: -a, v)


def _sum(u, v):
    return _map(lambda a, b: a + b, u, v)


def _dot(a, b):
    return float(sum(np.sum(np.asarray(x, dtype=np.float64) * np.asarray(y, dtype=np.float64))
                     for x, y in zip(leaves_of(a), leaves_of(b))))


def _projector(grads):
    return lambda k, v: _dot(grads[k], v)


def _jvp(tangent, args, kwargs, positions, weight, single):
    def project(k, v):
        tangents = [v if j == k else _map(lambda a: np.zeros_like(a) if isinstance(
            a, np.ndarray) else 0.0, args[j]) for j in positions]
        _, jv = tangent(*copy.deepcopy(args), tangents[0] if single else tuple(tangents),
                        **kwargs)
        return float(np.sum(weight * np.asarray(jv, dtype=np.float64)))
    return project


def _hvp(product, args, kwargs, positions, single):
    def project(k, uv):
        u, v = uv
        vs = [v if j == k else _map(lambda a: np.zeros_like(a) if isinstance(
            a, np.ndarray) else 0.0, args[j]) for j in positions]
        hv = product(*copy.deepcopy(args), vs[0] if single else tuple(vs), **kwargs)
        hv = (hv,) if single else tuple(hv)
        return _dot(hv[positions.index(k)], u)
    return project


def _changed(before, after):
    """The position of the first argument that differs from its copy, or None."""
    for k, (b, a) in enumerate(zip(before, after)):
        for x, y in zip(leaves_of(b), leaves_of(a)):
            if isinstance(x, np.ndarray) and not np.array_equal(x, y, equal_nan=True):
                return k
    return None
