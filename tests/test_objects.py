"""lower/objects.py: an object of a user's class the lowering keeps (desugar writes
an object as one name per attribute only where it is nothing but its attributes:
here, the loop's variable read after the loop outside the loop's block, its method
called there).  What
such an object does beyond plain attributes and methods -- ``super()``, a function
stored on an attribute, a class default stored over in a branch or loop -- no
test or real program reached any more, and is refused naming the line (it was
lowered by paths of their own before; session 23: the lists of layers built by
appends in a loop that reached them, tests/test_object_lists.py, are desugar's)."""

import re

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.errors import UnsupportedSyntaxError

W = np.array([[0.5, -0.2, 0.1], [0.3, 0.4, -0.6], [0.0, 0.2, 0.7]])
B = np.array([0.1, -0.2, 0.3])
X = np.array([0.3, 0.1, -0.4])


class _Plain:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def forward(self, x):
        return np.tanh(self.W @ x + self.b)


class _Base:
    def __init__(self, W):
        self.W = W


class _WithSuper(_Base):
    def __init__(self, W, b):
        super().__init__(W)
        self.b = b

    def forward(self, x):
        return np.tanh(self.W @ x + self.b)


class _WithFunction(_Plain):
    def __init__(self, W, b):
        self.W = W
        self.b = b
        self.act = np.tanh

    def forward(self, x):
        return self.act(self.W @ x + self.b)


class _Counted(_Plain):
    count = 0

    def forward(self, x):
        self.count = self.count + 1
        return np.tanh(self.W @ x + self.b) * self.count


def _read_after_the_loop(cls):
    def f(W, b, x):
        layers = [cls(W, b), cls(W.T, b)]
        if np.sum(x) > -100.0:
            for layer in layers:
                x = layer.forward(x)
        return np.sum(layer.forward(x))   # (unbound had the branch not run)
    return f


def test_a_kept_object_of_plain_attributes_and_methods_is_lowered():
    f = _read_after_the_loop(_Plain)
    check_grad(f, (W, B, X), wrt=(0, 1, 2))
    check_grad(f, (W, B, X), wrt=(0, 1, 2),
               df=tc.grad(f, wrt=(0, 1, 2), checkpoint=True, snapshots=2))


@pytest.mark.parametrize("cls, message, line", [
    (_WithSuper, "super() in a method that desugar did not inline", "super().__init__(W)"),
    (_WithFunction, "a function stored on 'act', on an object of _WithFunction that the "
                    "compiler keeps as an object", "self.act = np.tanh"),
    (_Counted, "a store over the class default '_Counted.count' (in a loop that read it "
               "first, or in a branch or loop the object was not made in), on an object of "
               "_Counted that the compiler keeps", "self.count = self.count + 1"),
], ids=["super", "function_attribute", "class_default"])
def test_what_a_kept_object_does_beyond_its_attributes_is_refused_naming_the_line(
        cls, message, line):
    f = _read_after_the_loop(cls)
    with pytest.raises(UnsupportedSyntaxError, match=re.escape(message)) as error:
        tc.grad(f, wrt=(0, 1, 2))(W, B, X)
    lines = open(__file__).read().splitlines()
    where = next(k + 1 for k, text in enumerate(lines) if text.strip() == line)
    assert f"test_objects.py:{where}:" in str(error.value), str(error.value)
