"""desugar/first_iterations.py: a ``range`` loop whose first iteration binds a name
that was None (an optimiser's lazy ``if self.m is None: self.m = {...}``) is its
first iteration with the branch taken, then the loop over the rest without it."""

import numpy as np

import tangent_ckpt as tc
from gradcheck import check_grad, check_value_and_grad
from tangent_ckpt.compiler.pipeline import desugared


class _Adam:
    def __init__(self, lr=0.05, beta1=0.9, beta2=0.999):
        self.lr, self.beta1, self.beta2 = lr, beta1, beta2
        self.m, self.v = None, None
        self.t = 0

    def update(self, params, grads):
        if self.m is None:                # made in the first call only
            self.m, self.v = {}, {}
            for key, val in params.items():
                self.m[key] = np.zeros_like(val)
                self.v[key] = np.zeros_like(val)
        self.t += 1
        for key in ("W", "b"):
            self.m[key] += (1 - self.beta1) * (grads[key] - self.m[key])
            self.v[key] += (1 - self.beta2) * (grads[key] ** 2 - self.v[key])
            m_hat = self.m[key] / (1 - self.beta1 ** self.t)
            v_hat = self.v[key] / (1 - self.beta2 ** self.t)
            params[key] -= self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)


def fitted_with_adam(W0, b0, X):
    params = {"W": W0.copy(), "b": b0.copy()}
    opt = _Adam()
    for i in range(3):
        err = X @ params["W"] + params["b"] - 1.0
        grads = {"W": X.T @ err, "b": np.sum(err, axis=0)}
        opt.update(params, grads)
    return np.sum((X @ params["W"] + params["b"]) ** 2)


_R = np.random.RandomState(9)
ARGS = (_R.randn(3, 2), _R.randn(2), _R.randn(4, 3))


def test_a_lazily_made_dict_of_moments_is_made_in_the_first_iteration():
    """Refused before: "the list or dict opt.m changes its length or keys inside a
    loop" (None in the first iteration, a dict after)."""
    text = desugared(fitted_with_adam)
    assert "is None" not in text and "i = 0" in text and "range(1, 3, 1)" in text, text
    check_value_and_grad(fitted_with_adam, ARGS, wrt=(0, 1, 2))
    check_grad(fitted_with_adam, ARGS, wrt=(0, 1, 2),
               df=tc.grad(fitted_with_adam, wrt=(0, 1, 2), checkpoint=True, snapshots=2))


def skipped_before_the_test(x):
    m = None
    total = 0.0
    for i in range(4):
        if i % 2 == 0:
            continue                      # the first iteration never reaches the test
        if m is None:
            m = x * 2.0
        total = total + np.sum(m * x)
    return total


def test_a_loop_that_may_skip_the_test_is_not_peeled():
    assert "if m is None" in desugared(skipped_before_the_test)
    check_grad(skipped_before_the_test, (np.array([0.3, -0.4]),))


def loop_variable_checked(x):
    m = None
    total = 0.0
    for m in range(3):                    # m is 0, 1, 2: never None
        if m is None:
            m = 7
        total = total + np.sum(x * m)
    return total


def test_a_test_of_the_loop_variable_is_not_peeled():
    """Peeling it would take the branch in the first iteration (8.0 for 2.4)."""
    assert "if m is None" in desugared(loop_variable_checked)
    check_value_and_grad(loop_variable_checked, (np.array([0.3, 0.5]),))


# --- a loop whose end is known at run time: `for epoch in range(n_epochs)` -------------
# (the Adam of kang9kang/DL-learning cnn/my_optimizer.py, `params[key] -= ...` over
# `params.keys()`, trained for a number of epochs given as an argument)

class _DictAdam(_Adam):
    def update(self, params, grads):
        if self.m is None:
            self.m, self.v = {}, {}
            for key, val in params.items():
                self.m[key] = np.zeros_like(val)
                self.v[key] = np.zeros_like(val)
        self.t += 1
        for key in params.keys():
            self.m[key] += (1 - self.beta1) * (grads[key] - self.m[key])
            self.v[key] += (1 - self.beta2) * (grads[key] ** 2 - self.v[key])
            m_hat = self.m[key] / (1 - self.beta1 ** self.t)
            v_hat = self.v[key] / (1 - self.beta2 ** self.t)
            params[key] -= self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)


def fitted_for_epochs(W0, b0, X, n_epochs):
    params = {"W": W0.copy(), "b": b0.copy()}
    opt = _DictAdam()
    for epoch in range(n_epochs):
        err = X @ params["W"] + params["b"] - 1.0
        opt.update(params, {"W": X.T @ err, "b": np.sum(err, axis=0)})
    return np.sum((X @ params["W"] + params["b"]) ** 2)


def test_a_loop_of_run_time_length_is_peeled_under_the_test_that_it_runs():
    """Refused before: "unsupported method .items()" (the branch left in the loop)."""
    text = desugared(fitted_for_epochs)
    assert "is None" not in text and "if range(n_epochs):" in text and \
        "for epoch in range(1, n_epochs):" in text, text
    for n in (0, 1, 3):
        args = ARGS + (n,)
        check_value_and_grad(fitted_for_epochs, args, wrt=(0, 1, 2))
        check_grad(fitted_for_epochs, args, wrt=(0, 1, 2),
                   df=tc.grad(fitted_for_epochs, wrt=(0, 1, 2), checkpoint=True, snapshots=2))


def end_rebound_in_the_loop(x, n):
    m = None
    total = 0.0
    for i in range(n):
        if m is None:
            m = x * 2.0
        n = n - 1                         # the end read again would be another number
        total = total + np.sum(m * x)
    return total


def test_a_loop_whose_end_it_rebinds_is_not_peeled():
    assert "if m is None" in desugared(end_rebound_in_the_loop)
