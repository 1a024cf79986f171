"""compiler/fence/object_facts.py: which attributes of an object made in the
differentiated code are surely arrays or numbers -- proved from every store into
an attribute of that name in the code the fence reads, never assumed."""

import numpy as np

from tangent_ckpt.compiler.fence.object_facts import (
    Code, numeric_attributes, object_parameter, receiver_classes,
)
from tangent_ckpt.compiler.frontend.parse import parse_function


def _code(fn, method=False):
    parsed = parse_function(fn)
    return Code(parsed.node, parsed.resolve, object_parameter(parsed.node) if method else None)


class Body:
    def __init__(self, x, k):
        self.x = x * 1.0
        self.v = np.zeros(3)
        self.k = k
        self.items = [x]
        self.y = np.zeros(3)

    def step(self, dt):
        rate = 0.5 * self.v
        self.v += rate * dt
        self.x = self.x + dt * self.v
        self.y = self.v * dt


def made_here(x):
    b = Body(x, 2)
    b.step(0.1)
    return b.x


def made_here_then_replaced(x):
    b = Body(x, 2)
    b.v = [x]
    b.step(0.1)
    return b.x


def _facts(fn, cls=Body):
    codes = [_code(fn)] + [_code(m, method=True) for m in (cls.__init__, cls.step)]
    return numeric_attributes(cls, codes)


def test_attributes_bound_only_to_arrays_and_numbers_are_numeric():
    # k is a parameter (any value), items a list: no fact for either
    assert _facts(made_here) == {"x", "v", "y"}


def test_a_store_of_a_list_anywhere_removes_the_fact_and_what_relied_on_it():
    # y = v * dt relied on v (dt is a parameter); x = x + dt * v holds by x alone
    assert _facts(made_here_then_replaced) == {"x"}


def test_the_classes_the_code_constructs_are_found_by_what_names_resolve_to():
    assert receiver_classes([_code(made_here)]) == [Body]


class WithDefault:
    v = None  # a class attribute: reading self.v before a store gives it

    def __init__(self):
        self.v = np.zeros(2)
        self.w = np.ones(2)

    def step(self):
        self.w = self.w * 2.0


def made_with_default():
    o = WithDefault()
    o.step()
    return o.w


def test_an_attribute_the_class_names_gets_no_fact():
    assert _facts(made_with_default, WithDefault) == {"w"}


class Reflective(WithDefault):
    def step(self):
        setattr(self, "w", [1.0])


def test_reflection_anywhere_gives_no_facts():
    assert _facts(made_with_default, Reflective) == frozenset()


class Copier:
    def __init__(self):
        self.w = np.ones(2)

    def step(self, other):
        other.w = self.w  # other is made here, self may not be: proves nothing


def copy_from_elsewhere(given):
    o = Copier()
    given.step(o)
    return o.w


def test_a_store_into_another_object_does_not_read_self_facts():
    assert _facts(copy_from_elsewhere, Copier) == frozenset()


class Split:
    def __init__(self, x):
        self.whole = np.cos(x) ** 4
        self.pair = np.divmod(x, 2.0)  # a tuple of two arrays
        self.picked = np.where(x > 0.0)  # one argument: a tuple of index arrays

    def step(self):
        self.whole = np.where(self.whole > 0.5, self.whole, 0.0)


def made_split(x):
    s = Split(x)
    s.step()
    return s.whole


def test_a_numpy_function_returning_a_tuple_proves_no_array():
    assert _facts(made_split, Split) == {"whole"}


def test_an_attribute_named_like_a_method_shadows_it():
    from tangent_ckpt.compiler.fence.object_facts import shadows_a_method

    def replaces_step(x):
        b = Body(x, 2)
        b.step = print
        return b.x

    assert shadows_a_method(Body, [_code(replaces_step)])
    assert not shadows_a_method(Body, [_code(made_here)])


# --- attributes that surely hold a number (self.t += 1 rebinds them) -------------------
class Counted:
    def __init__(self, lr, state):
        self.lr = lr
        self.state = state  # a constructor argument: maybe the caller's array
        self.t = 0
        self.scale = 1.0

    def step(self, g):
        self.t += 1
        self.scale = self.scale * 0.5 + self.t
        self.state += g  # in place: no number
        return self.lr * g / self.t


def counts(g, lr, s):
    opt = Counted(lr, s)
    return opt.step(g)


def counts_then_replaces(g, lr, s):
    opt = Counted(lr, s)
    opt.t = s  # an array from here on: t is no number
    return opt.step(g)


def hands_the_object_on(g, lr, s):
    opt = Counted(lr, s)
    keep = [opt]  # whatever holds keep may store into it
    return opt.step(g) + len(keep)


def test_attributes_every_store_binds_a_number_to_are_numbers():
    from tangent_ckpt.compiler.fence.object_facts import number_attributes
    assert number_attributes(Counted, parse_function(counts).node, "opt") == {"t", "scale"}
    # a store of an array anywhere (and scale, computed from t), or the object
    # handed on: no fact
    assert number_attributes(Counted, parse_function(counts_then_replaces).node,
                             "opt") == frozenset()
    assert number_attributes(Counted, parse_function(hands_the_object_on).node,
                             "opt") == frozenset()


class Ratings:
    def __init__(self, R, k):
        self.R = R
        self.P = np.zeros((2, k)) + 0.1
        self.samples = [(i, j, R[i, j]) for i in range(2) for j in range(3)]
        self.pairs = [(i, 0, R[i]) for i in range(2)]
        self.kept = [(i, 1.5) for i in range(2)]

    def sweep(self):
        for i, j, r in self.samples:
            self.P[i] += r
        return len(self.kept)

    def regrow(self):
        self.pairs = [(i, self.P) for i in range(2)]  # another size
        self.kept.append((3, 0.5))  # read as a value: no fact


def rates(R):
    m = Ratings(R, 2)
    m.sweep()
    return m.P


def _numbered(*fns, cls=Ratings):
    from tangent_ckpt.compiler.fence.object_facts import numbered_items
    from tangent_ckpt.compiler.pipeline import desugar
    codes = []
    for fn in fns:
        parsed = parse_function(fn)
        desugar(parsed, helper=True)  # (its comprehensions written as loops, as fenced)
        codes.append(Code(parsed.node, parsed.resolve, object_parameter(parsed.node)
                          if fn.__qualname__.startswith(cls.__name__) else None))
    return numbered_items(cls, codes)


def test_a_list_of_tuples_of_range_counters_and_constants_is_numbered_at_those_places():
    # samples: i and j are range counters (R[i, j] may be anything); pairs: i and 0
    assert _numbered(rates, Ratings.__init__, Ratings.sweep) == {
        "samples": {0, 1}, "pairs": {0, 1}, "kept": {0, 1}}


def test_a_store_of_another_list_or_a_read_as_a_value_gives_no_fact():
    assert _numbered(rates, Ratings.__init__, Ratings.sweep, Ratings.regrow) == {
        "samples": {0, 1}}
