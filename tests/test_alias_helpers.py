"""The fence's summaries of the user's helpers and methods (compiler/fence/alias_helpers.py).

A method called on ``self`` in a method fenced for an object the code makes is
summarised for that object (the facts fence_once knows of its class); the summary
is kept per object facts -- which hold a dict (object_facts.numbered_items) -- so
the key is made of them: a fit that returns ``self``, chained on the constructor,
crashed with "unhashable type: 'dict'" (no file, no line) from session 24's
numbered items until session 25."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.errors import TangentCkptError

RUNS = [dict(), dict(checkpoint=True, snapshots=2)]
RUN_IDS = ["taped", "snapshots2"]


class LogisticRegressionGD:
    """Gradient descent as textbooks write it: ``fit`` returns ``self``."""

    def __init__(self, eta=0.05, n_iter=100, random_state=1):
        self.eta = eta
        self.n_iter = n_iter
        self.random_state = random_state

    def fit(self, X, y):
        rgen = np.random.RandomState(self.random_state)
        self.w_ = rgen.normal(loc=0.0, scale=0.01, size=1 + X.shape[1])
        self.cost_ = []
        for i in range(self.n_iter):
            output = self.activation(self.net_input(X))
            errors = y - output
            self.w_[1:] += self.eta * X.T.dot(errors)
            self.w_[0] += self.eta * errors.sum()
            cost = -y.dot(np.log(output)) - ((1 - y).dot(np.log(1 - output)))
            self.cost_.append(cost)
        return self

    def net_input(self, X):
        return np.dot(X, self.w_[1:]) + self.w_[0]

    def activation(self, z):
        return 1. / (1. + np.exp(-np.clip(z, -250, 250)))


def chained_fit(X, y):
    lr = LogisticRegressionGD(eta=0.05, n_iter=4).fit(X, y)
    return lr.cost_[-1] + np.sum(lr.w_ ** 2)


def _data():
    rng = np.random.default_rng(4)
    return rng.normal(size=(6, 2)), (rng.uniform(size=6) > 0.5).astype(float)


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_a_fit_returning_self_chained_on_the_constructor_is_differentiated(run):
    X, y = _data()
    value, _ = tc.value_and_grad(chained_fit, **run)(X, y)
    np.testing.assert_allclose(value, chained_fit(X, y), rtol=1e-12)
    check_grad(chained_fit, (X, y), df=tc.grad(chained_fit, **run))


class Factorised:
    """Matrix factorisation by SGD over (i, j, r) samples: a list of tuples of
    range counters (numbered items) beside methods called on self."""

    def __init__(self, R, k, alpha, steps):
        self.R = R
        self.num_users, self.num_items = R.shape
        self.k = k
        self.alpha = alpha
        self.steps = steps

    def train(self):
        self.P = np.full((self.num_users, self.k), 0.3)
        self.Q = np.full((self.num_items, self.k), 0.2)
        self.samples = [(i, j, self.R[i, j]) for i in range(self.num_users)
                        for j in range(self.num_items)]
        for step in range(self.steps):
            self.sgd()

    def sgd(self):
        for i, j, r in self.samples:
            e = r - self.get_rating(i, j)
            self.P[i, :] += self.alpha * (e * self.Q[j, :])
            self.Q[j, :] += self.alpha * (e * self.P[i, :])

    def get_rating(self, i, j):
        return self.P[i, :].dot(self.Q[j, :].T)


def factorised(R):
    mf = Factorised(R, 2, 0.05, 2)
    mf.train()
    return np.sum(mf.P @ mf.Q.T)


def test_methods_of_an_object_holding_numbered_items_get_an_answer_not_a_crash():
    """Compiled or refused with the user's file and line (the fence's imprecision
    about ``e`` refuses it today) -- never a TypeError with neither."""
    R = np.random.default_rng(5).uniform(1, 5, size=(3, 3))
    try:
        tc.grad(factorised)(R)
    except TangentCkptError as exc:
        assert "test_alias_helpers.py:" in str(exc), exc
