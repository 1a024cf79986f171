"""Random draws under recomputation.

A checkpointed loop runs some of its steps more than once: after a snapshot
is restored, and again when each step is reversed. A step that draws random
numbers must draw the same numbers every time, or the reverse sweep
differentiates a different trajectory from the one the forward sweep computed.

:class:`RandomStates` captures and restores the states of the random number
generators a loop's steps use:

- NumPy's legacy global state (``np.random.randn`` and friends) and the
  standard library's (``random.gauss``, ``random.random``: the module's functions
  draw from one hidden ``random.Random``), when the compiler saw such a call in
  the loop;
- every ``np.random.Generator``, ``np.random.RandomState`` or ``random.Random``
  passed to the steps,
  or reached by them through a module global, a closure or an object attribute
  (the compiler names those: ``CheckpointedLoop(..., generators=[RS])``).

A generator of another array library (``cupy.random.Generator``,
``dask.array.random.default_rng()``) has no public way to save and restore its
state: a checkpointed loop given one is refused (its replayed steps would draw
other numbers); a taped loop runs each step once and takes it.

The driver captures those states with every snapshot, restores them with it,
and puts them back as they were once the reverse sweep is over. So
checkpointed = taped = the user's own function, with the same seed.

The draw functions below (``standard_normal(rng, 3)`` for ``rng.standard_normal(3)``)
are how generated code spells a draw from a generator object. Each one is
an ordinary call, with no derivative.
"""

import random
import sys

import numpy as np

from tangent_ckpt.runtime.backends import BackendError, is_array

#: methods of np.random.Generator / RandomState that draw numbers
DRAW_METHODS = (
    "standard_normal", "normal", "uniform", "integers", "random", "choice", "permutation",
    "exponential", "standard_exponential", "poisson", "binomial", "negative_binomial",
    "beta", "gamma", "standard_gamma", "lognormal", "laplace", "logistic", "rayleigh",
    "standard_t", "standard_cauchy", "chisquare", "triangular", "weibull", "vonmises",
    "geometric", "hypergeometric", "multinomial", "dirichlet", "multivariate_normal",
    "pareto", "power", "gumbel", "wald", "zipf", "logseries", "f", "noncentral_chisquare",
    "noncentral_f", "bytes",
    # the legacy RandomState spellings
    "randn", "rand", "randint", "random_sample", "ranf", "sample", "random_integers",
    "tomaxint",
)

_GLOBAL = np.random.mtrand._rand
# the random.Random whose bound methods the standard library's random module
# exports as its functions (random.gauss is _STDLIB.gauss)
_STDLIB = random.random.__self__
_RANDOM = random.Random  # (the name ``random`` is the draw function below, in this module)


def _draw_function(method):
    def draw(generator, *args, **kwargs):
        return getattr(generator, method)(*args, **kwargs)
    draw.__name__ = draw.__qualname__ = method
    draw.__module__ = __name__
    draw.__doc__ = f"``generator.{method}(*args, **kwargs)``: a random draw, no derivative."
    return draw


DRAWS = {method: _draw_function(method) for method in DRAW_METHODS}
_module = sys.modules[__name__]
for _method, _fn in DRAWS.items():
    setattr(_module, _method, _fn)


# NumPy's functions that set its legacy global state (module functions, not methods
# of the global RandomState, in NumPy 2)
_GLOBAL_SETTERS = tuple(f for f in (getattr(np.random, "seed", None),
                                    getattr(np.random, "set_state", None)) if f is not None)


def uses_global_state(fn):
    """Whether calling ``fn`` draws from (or reseeds) a global random state: NumPy's
    legacy one (``np.random.randn``, ``np.random.seed``) or the standard library's
    (``random.gauss``, ``random.seed``)."""
    owner = getattr(fn, "__self__", None)
    return owner is _GLOBAL or owner is _STDLIB or any(fn is f for f in _GLOBAL_SETTERS)


def is_generator(value):
    """A generator whose state a snapshot can save and restore: NumPy's
    ``Generator`` and ``RandomState``, and the standard library's ``random.Random``
    (a module-level ``R = random.Random(4)`` drawn from by ``R.gauss(0, 1)``) but the
    one behind the ``random`` module's functions, a global state (``uses_global_state``)."""
    return isinstance(value, (np.random.Generator, np.random.RandomState, _RANDOM)) and \
        value is not _STDLIB


def is_foreign_generator(value):
    """A random generator of another library (CuPy's, Dask's): it draws like
    NumPy's (``standard_normal``) but is not one of NumPy's."""
    cls = type(value)
    return not is_generator(value) and not is_array(value) and not isinstance(value, type) \
        and cls.__module__.split(".")[0] not in ("numpy", "builtins") \
        and hasattr(cls, "standard_normal") and hasattr(cls, "normal")


def generator_of(fn):
    """The generator object ``fn`` is a method of (``RS.randn``, ``rng.normal``),
    or None; NumPy's legacy global state is not one (see ``uses_global_state``)."""
    owner = getattr(fn, "__self__", None)
    return owner if is_generator(owner) and owner is not _GLOBAL else None


def generators_in(values):
    """Every generator among ``values``, inside tuples, lists and dicts too,
    each once (by identity), in order."""
    found, seen, stack = [], set(), list(values)[::-1]
    while stack:
        v = stack.pop()
        if is_generator(v):
            if id(v) not in seen:
                seen.add(id(v))
                found.append(v)
        elif isinstance(v, (tuple, list)):
            stack.extend(reversed(v))
        elif isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
    return found


class RandomStates:
    """The generators one loop's steps draw from, to capture and restore together."""

    def __init__(self, args, global_state, generators=()):
        for a in args:
            if is_foreign_generator(a):
                raise BackendError(
                    f"a checkpointed loop is given a {type(a).__module__}.{type(a).__name__}, "
                    "whose state cannot be saved and restored: its replayed steps would draw "
                    "other numbers than the first time; draw the numbers before the loop, "
                    "or tape the loop (checkpoint=False)")
        # passed to the steps (also inside containers), or reached by them as a
        # module global, a closure's variable or an object's attribute (``generators``)
        self.generators = generators_in([*args, *generators])
        self.global_state = bool(global_state)

    def __bool__(self):
        return self.global_state or bool(self.generators)

    def capture(self):
        states = [np.random.get_state() if self.global_state else None,
                  _STDLIB.getstate() if self.global_state else None]
        for g in self.generators:
            states.append(g.bit_generator.state if isinstance(g, np.random.Generator)
                          else g.getstate() if isinstance(g, _RANDOM)
                          else g.get_state())
        return states

    def restore(self, states):
        if self.global_state:
            np.random.set_state(states[0])
            _STDLIB.setstate(states[1])
        for g, state in zip(self.generators, states[2:]):
            if isinstance(g, np.random.Generator):
                g.bit_generator.state = state
            elif isinstance(g, _RANDOM):
                g.setstate(state)
            else:
                g.set_state(state)

    @staticmethod
    def nbytes(states):
        """Bytes of one capture (the arrays in it plus a small fixed cost per state)."""
        total = 0
        for s in states:
            if s is None:
                continue
            parts = s.values() if isinstance(s, dict) else s
            for p in parts:
                if isinstance(p, dict):
                    total += sum(np.asarray(v).nbytes for v in p.values())
                else:
                    total += np.asarray(p).nbytes
        return total


class SlotRandomStates:
    """The generator states kept with each snapshot slot of a checkpointed loop
    (captured from `random`, a :class:`RandomStates`), and the bytes they take."""

    def __init__(self, random):
        self.random, self.at, self.nbytes = random, {}, 0

    def keep(self, slot, states=None):
        """Keep `states` with the snapshot in `slot` (default: as they are now,
        which is right for the state being worked on)."""
        states = self.random.capture() if states is None else states
        old = self.at.get(slot)
        if old is not None:
            self.nbytes -= RandomStates.nbytes(old)
        self.at[slot] = states
        self.nbytes += RandomStates.nbytes(states)

    def restore(self, slot):
        """Put the generators back as they were when `slot` was stored."""
        self.random.restore(self.at[slot])

    def free(self, slot):
        self.nbytes -= RandomStates.nbytes(self.at.pop(slot))
