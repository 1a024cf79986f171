"""tc.check_grad: derivatives against central finite differences, and a report
that names what disagrees."""

import numpy as np
import pytest

import tangent_ckpt as tc


def rnn(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def _rnn_args(dtype=np.float64):
    rng = np.random.default_rng(1)
    return (rng.standard_normal((2, 3)).astype(dtype),
            (0.5 * rng.standard_normal((3, 3))).astype(dtype),
            rng.standard_normal(3).astype(dtype), 6)


def test_check_grad_accepts_every_mode_of_a_correct_loop_gradient():
    report = tc.check_grad(rnn, _rnn_args(), wrt=(0, 1, 2),
                           modes=("grad", "checkpoint", "jvp", "hvp"), snapshots=2)
    assert report.ok and not report.failures
    assert {row.mode for row in report.rows} == {"grad", "checkpoint", "jvp", "hvp"}
    assert {row.argument for row in report.rows} == {"h", "W", "b"}
    assert len(report.rows) == 4 * 3 * 2  # modes x arguments x directions
    assert "all agree" in str(report)


def test_check_grad_float32_uses_float32_tolerances():
    report = tc.check_grad(rnn, _rnn_args(np.float32), wrt=(1,), modes=("grad", "jvp"))
    assert report.ok and report.dtype == np.float32
    # looser than float64, but far tighter than a wrong gradient
    assert all(row.tolerance < 0.05 * abs(row.expected) + 1e-2 for row in report.rows)


def vector_output(x):
    return np.sin(x) * x[::-1]


def test_check_grad_weights_a_vector_output_with_a_random_adjoint():
    x = np.linspace(0.1, 1.0, 5)
    assert tc.check_grad(vector_output, (x,), modes=("grad", "checkpoint", "jvp")).ok


def container_loss(params, x):
    W, b = params
    return np.sum(np.tanh(x @ W + b))


def test_check_grad_checks_container_arguments():
    rng = np.random.default_rng(2)
    params = [rng.standard_normal((3, 2)), rng.standard_normal(2)]
    assert tc.check_grad(container_loss, (params, rng.standard_normal((4, 3)))).ok


def wrong_square(x):
    return x * x


tc.register_adjoint(wrong_square, lambda g, ans, x: (g * x,))  # should be 2 * g * x


def uses_wrong_rule(x, y):
    return np.sum(wrong_square(x) * y)


def test_check_grad_raises_with_a_table_naming_the_wrong_argument():
    x, y = np.linspace(0.5, 1.5, 4), np.linspace(1.0, 2.0, 4)
    with pytest.raises(tc.GradCheckError) as info:
        tc.check_grad(uses_wrong_rule, (x, y), wrt=(0, 1))
    assert isinstance(info.value, AssertionError)  # pytest shows it as a failed check
    text = str(info.value)
    assert "disagree with finite differences" in text
    bad = info.value.report.failures
    assert bad and {row.argument for row in bad} == {"x"}  # y's gradient is right
    assert all(row.mode in ("grad", "checkpoint") for row in bad)
    assert any("DISAGREES" in line and " x " in line for line in text.splitlines())


def test_check_grad_returns_the_failing_report_when_asked_not_to_raise():
    x, y = np.linspace(0.5, 1.5, 4), np.linspace(1.0, 2.0, 4)
    report = tc.check_grad(uses_wrong_rule, (x, y), raise_error=False)
    assert not report.ok and not bool(report)
    for row in report.failures:  # off by a factor of two
        assert row.computed == pytest.approx(row.expected / 2, rel=1e-6)


def test_check_grad_reports_a_derivative_that_raises_as_a_failed_row():
    x = np.linspace(0.1, 1.0, 5)
    report = tc.check_grad(vector_output, (x,), modes=("grad", "hvp"), raise_error=False)
    failed = [row for row in report.rows if row.error is not None]
    assert [row.mode for row in failed] == ["hvp"] and "scalar output" in failed[0].error
    assert "FAILED" in str(report)


def test_check_grad_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="unknown mode 'gradient'"):
        tc.check_grad(rnn, _rnn_args(), modes=("gradient",))


def test_check_grad_leaves_the_arguments_unchanged():
    args = _rnn_args()
    copies = [np.copy(a) for a in args[:3]]
    tc.check_grad(rnn, args, wrt=(0, 1, 2), modes=("grad", "jvp", "hvp"))
    for before, after in zip(copies, args[:3]):
        assert np.array_equal(before, after)
