"""desugar/constant_arguments.py (with the API's retry, function_names.py's module
dict items and constant choices): a function chosen by a string the caller
gives -- a flux limiter, an activation -- was refused ("cannot resolve the
function lm"); the gradient is now compiled for the strings given, one gradient
per value, and a program that compiles with the string as a value of the run is
left as it was."""

import gast
import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.desugar.constant_arguments import read_constant_arguments
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.errors import TangentCkptError


def minmod(r):
    return np.maximum(0.0, np.minimum(1.0, r))


def vanleer(r):
    return (r + np.abs(r)) / (1.0 + np.abs(r))


LIMITERS = {"minmod": minmod, "vanleer": vanleer, "tanh": np.tanh}


def _limited_step(u, lm):
    r = (u - np.roll(u, 1)) / (np.roll(u, -1) - u + 1e-8)
    return u - 0.1 * lm(r) * (u - np.roll(u, 1))


def by_a_table(u, n, limiter="vanleer"):
    lm = LIMITERS[limiter]
    for t in range(n):
        u = _limited_step(u, lm)
    return np.sum(u ** 2)


def by_a_choice(u, n, limiter="vanleer"):
    lm = minmod if limiter == "minmod" else vanleer
    for t in range(n):
        r = (u - np.roll(u, 1)) / (np.roll(u, -1) - u + 1e-8)
        u = u - 0.1 * lm(r) * (u - np.roll(u, 1))
    return np.sum(u ** 2)


def by_a_branch_and_a_table(u, n, limiter="vanleer", scheme="limited"):
    for t in range(n):
        if scheme == "upwind":
            u = u - 0.1 * (u - np.roll(u, 1))
        else:
            u = _limited_step(u, LIMITERS[limiter])
    return np.sum(u ** 2)


U = np.sin(np.linspace(0.0, 6.0, 10)) + 1.5


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}], ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f", [by_a_table, by_a_choice, by_a_branch_and_a_table],
                         ids=lambda f: f.__name__)
def test_a_function_chosen_by_a_string_argument_is_compiled_per_value(f, options):
    df = tc.grad(f, **options)
    # one gradient object, the values alternating: each call's own gradient
    for rest in [(3, "minmod"), (3,), (3, "vanleer"), (3, "minmod"), (3, "tanh")]:
        check_grad(f, (U, *rest), wrt=(0,), df=df)
        value, _ = tc.value_and_grad(f, **options)(U, *rest)
        assert value == pytest.approx(f(U, *rest), rel=1e-12)


def test_the_generated_code_reads_no_string_and_no_table():
    df = tc.grad(by_a_table)
    df(U, 2, "minmod")
    assert "LIMITERS" not in df.source and "limiter" not in df.source.split("\n", 1)[1], \
        df.source
    assert "np.minimum(1.0, r)" in df.source, df.source


def test_a_table_item_stored_over_compiles_again():
    df = tc.grad(by_a_table)
    before = df(U, 2, "minmod")
    LIMITERS["minmod"] = vanleer
    try:
        after = df(U, 2, "minmod")
    finally:
        LIMITERS["minmod"] = minmod
    np.testing.assert_allclose(after, tc.grad(by_a_table)(U, 2, "vanleer"), rtol=1e-12)
    assert not np.allclose(before, after)


def a_key_missing(u, limiter="superbee"):
    lm = LIMITERS[limiter]  # KEY
    return np.sum(lm(u))


def rebound_before_the_choice(u, limiter="vanleer"):
    if u[0] > 2.0:
        limiter = "minmod"
    lm = LIMITERS[limiter]  # KEY
    return np.sum(lm(u))


@pytest.mark.parametrize("f", [a_key_missing, rebound_before_the_choice],
                         ids=lambda f: f.__name__)
def test_a_choice_not_known_when_compiling_is_still_refused_at_its_line(f):
    from source_lines import line_of
    with pytest.raises(TangentCkptError) as info:
        tc.grad(f)(U)
    text = str(info.value)
    assert "cannot resolve the function lm" in text, text
    assert f"test_constant_arguments.py:{line_of(f, '# KEY') + 1}:" in text, text


def by_a_run_time_branch(x, mode="train"):
    if mode == "train":
        y = np.tanh(x)
    else:
        y = np.sin(x)
    return np.sum(y)


def test_a_string_the_gradient_compiles_with_stays_a_value_of_the_run():
    df = tc.grad(by_a_run_time_branch)
    check_grad(by_a_run_time_branch, (U, "eval"), wrt=(0,), df=df)
    assert "cond = mode == 'train'" in df.source, df.source  # not specialised


def _rewritten(fn, constants):
    parsed = parse_function(fn)
    names = read_constant_arguments(parsed, constants)
    return names, gast.unparse(parsed.node) if hasattr(gast, "unparse") else \
        __import__("ast").unparse(gast.gast_to_ast(parsed.node))


def closure_reads_it(u, limiter="minmod"):
    pick = lambda: LIMITERS[limiter]  # noqa: E731
    return np.sum(pick()(u))


def test_a_parameter_rebound_or_read_by_a_nested_scope_is_left_as_written():
    names, text = _rewritten(rebound_before_the_choice, {"limiter": "minmod"})
    assert not names and "LIMITERS[limiter]" in text, text
    names, text = _rewritten(closure_reads_it, {"limiter": "minmod"})
    assert not names and "LIMITERS[limiter]" in text, text
    names, text = _rewritten(by_a_choice, {"limiter": "minmod"})
    assert names == {"limiter"} and "'minmod' == 'minmod'" in text, text


def normalised_name(u, n, name="MinMod"):
    name = name.lower()  # the public flux-limiter module's first line
    lm = LIMITERS[name]
    for t in range(n):
        u = _limited_step(u, lm)
    if "vanleer" == name:
        u = u * 1.5
    return np.sum(u ** 2)


def joined_name(u, n, family=" VanLeer ", part="x"):
    family = family.strip().casefold()
    key = family + "_" + part
    for t in range(n):
        if key == "vanleer_x":
            u = _limited_step(u, vanleer)
        else:
            u = _limited_step(u, minmod)
    return np.sum(u ** 2)


def read_before_and_after(u, name="MINMOD"):
    first = LIMITERS.get(name.lower())
    name = name.lower()
    return np.sum(first(u)) + np.sum(LIMITERS[name](u) ** 2)


def defaulted_by_none(u, n, limiter=None, bias=None):
    if limiter is None:
        limiter = "vanleer"
    elif limiter not in LIMITERS:
        raise ValueError(f"unknown limiter {limiter}")
    for t in range(n):
        u = _limited_step(u, LIMITERS[limiter])
        if bias is not None:
            u = u + bias
    return np.sum(u ** 2)


def defaulted_by_or(u, n, limiter=None):
    limiter = limiter or "minmod"
    if limiter == "none":
        return np.sum(u ** 2)  # (the rest never runs for this value)
    lm = LIMITERS[limiter]
    for t in range(n):
        u = _limited_step(u, lm)
    return np.sum(u ** 2)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}], ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f, calls", [
    (normalised_name, [(3, "MINMOD"), (3,), (3, "VanLeer"), (3, "tanh")]),
    (joined_name, [(3,), (3, "minmod "), (3, "VANLEER", "x"), (3, "vanleer", "y")]),
    (defaulted_by_none, [(3,), (3, "minmod"), (3, None, 0.01 * U)]),
    (defaulted_by_or, [(3,), (3, "vanleer"), (3, "none"), (3, "")]),
], ids=["lower", "strip_casefold_concatenated", "none_then_default", "or_default"])
def test_a_string_parameter_folded_again_in_straight_code_is_compiled_per_value(f, calls, options):
    df = tc.grad(f, **options)
    for rest in calls:
        check_grad(f, (U, *rest), wrt=(0,), df=df)
        value, _ = tc.value_and_grad(f, **options)(U, *rest)
        assert value == pytest.approx(f(U, *rest), rel=1e-12)


def test_a_refolded_parameter_is_read_as_each_statement_left_it():
    names, text = _rewritten(read_before_and_after, {"name": "MINMOD"})
    assert names == {"name"}, text
    assert "LIMITERS.get('MINMOD'.lower())" in text and "LIMITERS['minmod']" in text, text
    assert "name =" not in text, text  # (the binding goes: nothing reads it)


def rebound_from_the_run(u, name="minmod"):
    name = name.lower() if u[0] > 2.0 else "vanleer"
    return np.sum(LIMITERS[name](u))


def rebound_in_a_loop(u, name="minmod"):
    for t in range(2):
        name = name.lower()
    return np.sum(LIMITERS[name](u))


def rebound_by_a_method_not_folded(u, name="minmod"):
    name = name.format(1)
    return np.sum(LIMITERS[name](u))


@pytest.mark.parametrize("f", [rebound_from_the_run, rebound_in_a_loop, rebound_by_a_method_not_folded],
                         ids=lambda f: f.__name__)
def test_a_parameter_rebound_other_than_by_folding_in_straight_code_keeps_its_reads(f):
    names, text = _rewritten(f, {"name": "minmod"})
    assert not names and "LIMITERS[name]" in text, text


def test_the_straight_code_after_a_decided_return_goes():
    names, text = _rewritten(defaulted_by_or, {"limiter": "none"})
    assert names == {"limiter"}, text
    assert "LIMITERS" not in text and text.count("return") == 1, text
