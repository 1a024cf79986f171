"""The package on every NumPy it declares (tangent_ckpt/adjoints/numpy_versions.py):
rows of functions a NumPy lacks are not registered, and the names NumPy 2
deprecates can disappear without breaking the import, a gradient or the docs."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tangent_ckpt.adjoints import numpy_versions
from tangent_ckpt.adjoints.numpy_versions import VERSIONS, available, numpy_function
from tangent_ckpt.adjoints.registry import lookup

ROOT = Path(__file__).resolve().parents[1]

#: the names NumPy 2.x deprecates (removed in a later release, or due to be)
DEPRECATED_IN_NUMPY_2 = ("row_stack", "trapz", "in1d", "chararray", "recfromcsv", "recfromtxt",
                         "maximum_sctype", "deprecate", "deprecate_with_doc", "safe_eval")


def test_numpy_function_is_none_where_numpy_lacks_the_name(monkeypatch):
    monkeypatch.delattr(np, "vecdot", raising=False)
    monkeypatch.delattr(np.linalg, "vector_norm", raising=False)
    assert numpy_function("vecdot") is None
    assert numpy_function("linalg.vector_norm") is None
    assert available("vecdot", "row_stack", "trapezoid") == tuple(
        fn for fn in (getattr(np, "row_stack", None), getattr(np, "trapezoid", None)) if fn)


def test_numpy_function_takes_only_names_listed_with_their_releases():
    with pytest.raises(KeyError, match="VERSIONS"):
        numpy_function("tanh")


def test_each_version_dependent_function_present_here_has_its_row():
    for name in VERSIONS:
        fn = numpy_function(name)
        if fn is not None:
            assert lookup(fn).templates, name
            assert numpy_versions.versions_of(fn) == VERSIONS[name]


_REMOVED_RUN = """
import warnings
warnings.simplefilter("error", DeprecationWarning)
import numpy as np

gone = []
for name in {names!r}:
    if name in vars(np):
        delattr(np, name)
        gone.append(name)
    if name in np.__all__:
        np.__all__.remove(name)
for name in gone:
    assert not hasattr(np, name), name

import tangent_ckpt as tc
from tangent_ckpt.adjoints import ops_table
from tangent_ckpt.errors import UnsupportedFunctionError


def loss(h, W, n):
    for t in range(n):
        h = np.tanh(h @ W + 0.1)
    return np.sum(h ** 2)


rng = np.random.default_rng(0)
h, W = rng.standard_normal((2, 4)), 0.4 * rng.standard_normal((4, 4))
taped = tc.grad(loss, wrt=1)(h, W, 12)
checkpointed = tc.grad(loss, wrt=1, checkpoint=True, snapshots=2)(h, W, 12)
assert np.allclose(taped, checkpointed, rtol=1e-12, atol=0), "checkpointed != taped"
E = np.zeros_like(W)
E[1, 2] = 1e-6
fd = (loss(h, W + E, 12) - loss(h, W - E, 12)) / 2e-6
assert abs(fd - taped[1, 2]) < 1e-6 * max(1.0, abs(fd)), (fd, taped[1, 2])
assert "| `np.vstack`" in ops_table.render_table()


def stacked(x):
    return np.sum(np.row_stack((x, x)))


try:
    tc.grad(stacked)(np.ones(3))
except UnsupportedFunctionError as error:
    assert "has no attribute 'row_stack'" in str(error) and ":" in str(error), error
else:
    raise AssertionError("np.row_stack was removed, yet its call compiled")
print("ok", ",".join(gone))
"""


def test_the_package_works_with_every_name_numpy_2_deprecates_removed(tmp_path):
    """In a fresh interpreter: delete from ``numpy`` every name NumPy 2.x deprecates,
    then import, differentiate a loop (taped and checkpointed) and render the
    supported-functions table, with NumPy's deprecations as errors."""
    script = tmp_path / "numpy_without_deprecated_names.py"   # a file: its source is read
    script.write_text(textwrap.dedent(_REMOVED_RUN.format(names=DEPRECATED_IN_NUMPY_2)))
    proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("ok"), proc.stdout


def test_a_removed_numpy_function_is_named_at_the_users_line(monkeypatch):
    import tangent_ckpt as tc
    from tangent_ckpt.errors import UnsupportedFunctionError

    monkeypatch.delattr(np, "row_stack", raising=False)

    def stacked(x):
        return np.sum(np.row_stack((x, x)))

    with pytest.raises(UnsupportedFunctionError, match=r"test_numpy_versions.py:\d+: module "
                                                       r"'numpy' has no attribute 'row_stack'"):
        tc.grad(stacked)(np.ones(3))
