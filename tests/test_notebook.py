"""A notebook executed by a real Jupyter kernel (nbclient): gradients display as
highlighted code, errors name the cell and show the user's line.

Needs the optional extra ``[notebook]`` (nbclient, nbformat, ipykernel); skipped
cleanly without it.
"""

import os
import re

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANSI = re.compile(r"\x1b\[[0-9;]*m")

CELLS = [
    # 1
    "import numpy as np\nimport tangent_ckpt as tc",
    # 2
    "def loss(h, W, b, n):\n"
    "    for t in range(n):\n"
    "        h = np.tanh(h @ W + b)\n"
    "    return np.sum(h)",
    # 3: the gradient object as the last expression
    "df = tc.grad_with_checkpointing(loss, wrt=(1, 2), snapshots=3)\ndf",
    # 4: its source as the last expression
    "df.source",
    # 5: print(df.source) is the plain text
    "print(df.source)",
    # 6: a function the compiler refuses, at its line 2
    "def bad(x):\n    y = np.linalg.eig(x)\n    return np.sum(y[0])",
    # 7
    "tc.grad(bad)(np.eye(2))",
    # 8: a lambda written in the call, in a cell
    "print(tc.grad(lambda x: np.sum(x ** 2))(np.arange(3.0)))",
]


@pytest.fixture(scope="module")
def executed():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "TANGENT_CKPT_DEBUG")}
    os.environ["PYTHONPATH"] = os.pathsep.join([ROOT] + ([saved["PYTHONPATH"]]
                                                         if saved["PYTHONPATH"] else []))
    os.environ.pop("TANGENT_CKPT_DEBUG", None)
    try:
        client = nbclient.NotebookClient(notebook, timeout=300, allow_errors=True,
                                         kernel_name="python3")
        client.execute()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return notebook.cells


def outputs(cells, number):
    return cells[number - 1].outputs


def test_gradient_object_displays_as_highlighted_code_with_a_header(executed):
    (result,) = outputs(executed, 3)
    html = result["data"]["text/html"]
    assert "gradient of loss wrt W, b; loop line 2: Revolve schedule, 3 snapshots" in html
    assert "<span style=" in html            # highlighted by Pygments
    assert "text/markdown" in result["data"]


def test_source_displays_as_highlighted_code(executed):
    (result,) = outputs(executed, 4)
    html = result["data"]["text/html"]
    assert "loop2_step" in html and "<span style=" in html
    assert "\\n" not in html


def test_print_of_source_is_the_plain_text(executed):
    (stream,) = outputs(executed, 5)
    assert stream["name"] == "stdout" and stream["text"].startswith("def loop2_step(t, h, W, b):")
    assert "<" not in stream["text"].split("\n", 1)[0]


def test_error_names_the_cell_and_shows_the_users_line(executed):
    (error,) = outputs(executed, 7)
    assert error["ename"] == "UnsupportedFunctionError"
    assert error["evalue"].startswith("Cell In[6], line 2: no adjoint rule for np.linalg.eig")
    traceback = ANSI.sub("", "\n".join(error["traceback"]))
    assert "Cell In[6], line 2" in traceback  # IPython 8 adds ", in bad()"; 9 does not
    assert "y = np.linalg.eig(x)" in traceback
    assert "tangent_ckpt/compiler" not in traceback and "ipykernel_" not in traceback


def test_inline_lambda_in_a_cell(executed):
    # stdout only, however the kernel split it: a slow machine may add a progress
    # line on stderr (docs/reliability.md, "Progress bars")
    printed = "".join(out["text"] for out in outputs(executed, 8)
                      if out.get("output_type") == "stream" and out["name"] == "stdout")
    assert printed.strip() == "[0. 2. 4.]"
