"""desugar/fixed_structures.py: which containers of a function keep the
structure they are given or made with -- a given container only read, its nested
containers kept, a local of displays of one structure whose items are only read
and stored -- the facts static_loops.py unrolls loops over."""

import textwrap

import gast

from tangent_ckpt.container_args import structure_of
from tangent_ckpt.compiler.desugar.fixed_structures import (
    changes_its_variables, fixed_structures, known_structures, nested_kept, only_read,
)

MEANT = {"enumerate", "zip", "range", "len", "reversed"}


def _function(source):
    return gast.parse(textwrap.dedent(source)).body[0]


def test_a_given_container_read_by_items_len_and_loops_is_only_read():
    f = _function("""
        def f(params, x):
            for W, b in params:
                x = W @ x + b
            return x * len(params) + params[0][1]
    """)
    assert only_read(f, "params", MEANT)


def test_a_given_container_written_into_bound_or_handed_on_is_not_only_read():
    for body in ("params[0] = x", "params = [x]", "g(params)", "params[0].append(x)",
                 "del params[0]"):
        f = _function(f"""
            def f(params, x):
                {body}
                return x
        """)
        assert not only_read(f, "params", MEANT), body


def test_an_optimisers_local_list_and_dict_keep_their_structure():
    f = _function("""
        def f(a, b, g):
            ws = [a, b]
            m = {"W": a * 0.0, "b": b * 0.0}
            for i in range(len(ws)):
                ws[i] -= 0.1 * g
            for k in m:
                m[k] = 0.9 * m[k]
            return ws[0], m["b"]
    """)
    assert fixed_structures(f, MEANT) == {
        "ws": ("list", ("leaf", "leaf")), "m": ("dict", ("W", "b"), ("leaf", "leaf"))}


def test_a_local_whose_structure_may_change_or_that_holds_objects_is_not_fixed():
    for body in ("ws.append(a)", "ws[0:1] = [a]", "ws = [a]", "ws[0].step()",
                 "h(ws)"):
        f = _function(f"""
            def f(a, b):
                ws = [a, b]
                {body}
                for w in ws:
                    a = a + w
                return a
        """)
        assert "ws" not in fixed_structures(f, MEANT), body


def test_a_loop_changing_its_variable_in_place_changes_its_variables():
    changing, plain = _function("""
        def f(ws, g):
            for w in ws:
                w -= g
            for w in ws:
                g = g + w
    """).body[:2]
    assert changes_its_variables(changing)
    assert not changes_its_variables(plain)


def test_nested_containers_are_kept_where_every_name_of_one_is_only_read():
    structure = structure_of([(1, 2), (3, 4)])
    read = _function("""
        def f(params, x):
            for layer in params:
                x = layer[0] @ x + layer[1]
            return x
    """)
    grown = _function("""
        def f(params, x):
            enc, dec = params
            enc.append(x)
            return x
    """)
    assert nested_kept(read, "params", structure, MEANT)
    assert not nested_kept(grown, "params", structure, MEANT)


def test_known_structures_joins_given_containers_only_read_and_fixed_locals():
    f = _function("""
        def f(params, ps, x):
            ws = [x, x]
            ws[0] = ws[0] * 2.0
            enc, dec = params
            ps.append(x)
            return enc, ws[0]
    """)
    given = {"params": structure_of([1, 2]), "ps": structure_of([1])}
    known = known_structures(f, MEANT, given)
    assert known.shapes == {"ws": ("list", ("leaf", "leaf")), "params": given["params"]}
    assert known.fixed == {"ws"}
    assert known.nested == {"params"}
