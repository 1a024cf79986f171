"""Gradient objects pickle as what makes them (the function by reference, wrt,
options), not as their compiled code: the standard pickle (multiprocessing's)
works for module-level functions, and cloudpickle of a gradient of a __main__
function stays small."""

import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tangent_ckpt as tc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rnn(h, W, n):
    for t in range(n):
        h = np.tanh(h @ W)
    return np.sum(h ** 2)


@tc.grad_with_checkpointing(wrt=1, snapshots=2)
def decorated(h, W, n):
    for t in range(n):
        h = np.tanh(h @ W)
    return np.sum(h)


ARGS = (np.array([0.1, -0.2, 0.3]), np.eye(3) * 0.5 + 0.1, 6)


@pytest.mark.parametrize("make", [
    lambda: tc.grad(rnn, wrt=(0, 1)),
    lambda: tc.grad(rnn, wrt=1, checkpoint=True, snapshots=2),
    lambda: tc.value_and_grad(rnn, wrt=1, flat=True),
], ids=["grad", "checkpointed", "value_and_grad-flat"])
def test_a_gradient_of_a_module_function_pickles_by_reference(make):
    df = make()
    want = df(*ARGS)  # compiled: the compiled code must not travel
    data = pickle.dumps(df)
    assert len(data) < 2000, len(data)
    loaded = pickle.loads(data)
    assert loaded.fn is rnn and loaded.wrt == df.wrt and \
        loaded.options.key() == df.options.key()
    got = loaded(*ARGS)
    for w, g in zip(want if isinstance(want, tuple) else (want,),
                    got if isinstance(got, tuple) else (got,)):
        np.testing.assert_array_equal(np.asarray(w), np.asarray(g))


def test_a_decorated_module_gradient_pickles_by_its_name():
    decorated(*ARGS)
    assert pickle.loads(pickle.dumps(decorated)) is decorated


def test_jvp_and_hvp_pickle_by_reference():
    jvp, hvp = tc.jvp(rnn, wrt=0), tc.hvp(rnn, wrt=0, checkpoint=True, snapshots=2)
    v = np.ones(3)
    for product in (jvp, hvp):
        want = product(*ARGS, v)
        loaded = pickle.loads(pickle.dumps(product))
        got = loaded(*ARGS, v)
        np.testing.assert_array_equal(np.asarray(want, dtype=object).tolist() if
                                      isinstance(want, tuple) else want,
                                      np.asarray(got, dtype=object).tolist() if
                                      isinstance(got, tuple) else got)


def test_a_gradient_of_a_lambda_is_refused_by_pickle_as_the_lambda_is():
    df = tc.grad(lambda x: np.sum(x ** 2))
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(df)


MAIN_SCRIPT = textwrap.dedent("""
    import sys
    import cloudpickle, numpy as np, tangent_ckpt as tc
    UNRELATED = np.ones(4_000_000)          # 32 MB that the gradient never reads
    SCALE = 0.5
    def loss(x, n):
        for t in range(n):
            x = np.sin(x) * SCALE
        return np.sum(x)
    df = tc.grad(loss, checkpoint=True, snapshots=2)
    x = np.linspace(0.1, 1.0, 4)
    want = df(x, 5)
    data = cloudpickle.dumps(df)
    loaded = cloudpickle.loads(data)
    assert np.array_equal(loaded(x, 5), want)
    print(len(data))
""")


def test_cloudpickle_of_a_main_gradient_does_not_drag_main(tmp_path):
    pytest.importorskip("cloudpickle")
    script = tmp_path / "main_script.py"
    script.write_text(MAIN_SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.split()[-1]) < 50_000  # the function and SCALE, not UNRELATED
