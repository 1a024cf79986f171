"""Fused passes: a run of elementwise statements of a compiled step computed in a
few explicit loops over the elements, for ``backend="numba"``.

The compiler (``compiler/backend/numba_runs.py``) puts a run of elementwise statements
of a compiled function -- arithmetic and ufuncs over arrays and numbers,
``np.roll`` by a constant, constant slices, ``np.copy``, stores and ``+=``
into slices, ``rt.accumulate_at`` and the other adjoint helpers whose value is
elementwise -- into a function of its own, and hands this module a
*description* of those statements (nested tuples, built from the same syntax
trees).  When a compiled caller is typed, :func:`fused_source` writes, for the
types of that call, the source of one function that computes them:

* every array operand 1-D float64, every number a real number (else: None, and
  the statements run as Numba compiles them, unfused);
* statements go into *passes* (one ``for i in range(n)`` loop each), in program
  order; a statement starts a new pass when it reads a value of the current
  pass shifted (a roll or a slice of it), when its length differs, when it
  would reach an element of memory the pass writes before NumPy's order
  would (slices of one array at offsets: a later access at a smaller offset
  is safe), when it reads a sum the pass is still adding up, or when it
  stores through a second view (LLVM vectorizes a loop with one);
* inside a pass a value is a local number; it is kept in an array only when a
  shifted read or a write needs it, when it leaves the statements, or when a
  later pass reads it and cannot compute it again (a small expression whose
  operands no pass in between writes is computed again: the same bits); a
  store or ``+=`` writes straight into its target, no temporary; a copy of
  an argument made before anything is written is ``np.copy`` at entry;
* at entry the function checks what the types cannot say -- every operand of a
  pass has the pass's length (no broadcasting of length-1 arrays), rolled
  arrays are not empty, and an array written in a pass does not share memory
  with another array that pass reads -- and runs the unfused statements when
  any check fails.

Each element sees the same operations in the same order as NumPy's whole-array
statements, so the values are NumPy's (sums, added in element order, agree to
rounding).  Pure Python: the Numba side is ``numba_twins.fused_loops``.
"""

__all__ = ["fused_source", "UFUNCS"]

#: NumPy functions a pass computes element by element (real in, real out)
UFUNCS = frozenset({
    "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "square", "abs", "absolute",
    "fabs", "negative", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
    "tanh", "arcsinh", "arctanh", "maximum", "minimum", "arctan2", "hypot", "power",
    "cbrt", "reciprocal", "sign"})
_BINARY = {"+", "-", "*", "/", "**"}


class Unfused(Exception):
    """The statements cannot be fused for these types (they run unfused)."""


class _Value:
    """One value the statements compute or read.

    ``kind``: "array", "scalar" or "shape".  An array has ``obj`` (its memory: a
    parameter's name, or a buffer made here), ``chain`` (the slices from that
    memory to this view), ``key`` (its length as text: keys joined by a length
    check stand for one length), ``var`` (the variable holding it) and, when
    computed here, ``op``; a view has ``base`` and ``slc``.  A shape has
    ``ndim`` 0 or 1 and, for 1, its length ``var``.  A scalar computed here has
    ``deps`` (the scalars it reads) or ``sum`` (the pass adding it up)."""

    def __init__(self, kind, **fields):
        self.kind = kind
        self.obj = self.key = self.var = self.op = self.base = self.slc = None
        self.length = self.sum = None
        self.chain = ()
        self.ndim = 0
        self.deps = ()
        self.__dict__.update(fields)


class _Op:
    """One array statement: ``let`` (defines ``value`` from ``expr``), ``write``
    (``target assign expr``) or ``sum`` (``value`` is the sum of ``expr``)."""

    def __init__(self, kind, expr, value=None, target=None, assign="="):
        self.kind, self.expr, self.value, self.target, self.assign = \
            kind, expr, value, target, assign
        self.phase = self.key = self.length = None


def fused_source(description, kinds):
    """The source of ``impl(*args)`` (``args``: the parameters) computing ``description`` in passes for
    argument ``kinds`` (per parameter: "array" for a 1-D float64 array,
    "scalar" for a real number, ("shape", ndim) for a shape tuple, None for
    anything else), calling ``unfused(*args)`` when a run-time check fails;
    None when these kinds cannot be fused."""
    try:
        return _Writer(description, kinds).source()
    except Unfused:
        return None


class _Writer:
    def __init__(self, description, kinds):
        params, statements, outs = description
        self.params, self.outs = tuple(params), tuple(outs)
        self.entry, self.guards = [], []
        self.ops, self.scalars = [], []  # scalars: (value, line)
        self.counter = 0
        self.parent = {}  # union-find of length keys
        self.shifts = {}
        self.copies = 0
        self.env = {}
        for name, kind in zip(self.params, kinds):
            if kind == "array":
                self.env[name] = _Value("array", obj=name, key=name, var=name,
                                        length=f"{name}.shape[0]")
            elif kind == "scalar":
                self.env[name] = _Value("scalar", var=name)
            elif isinstance(kind, tuple) and kind[0] == "shape" and kind[1] in (0, 1):
                self.env[name] = _Value("shape", ndim=kind[1], key=f"shape:{name}",
                                        var=f"{name}[0]" if kind[1] else None)
            else:
                raise Unfused(name)
        for statement in statements:
            self.statement(statement)
        if not self.ops:
            raise Unfused("no array statement")
        self.phases = self.schedule()

    def fresh(self, stem):
        self.counter += 1
        return f"{stem}{self.counter}"

    def find(self, key):
        while self.parent.get(key, key) != key:
            key = self.parent[key]
        return key

    def equal(self, a, b):
        """A run-time check that the arrays/shapes ``a`` and ``b`` have one length."""
        self.guards.append(f"{self.length_var(a)} == {self.length_var(b)}")
        ka, kb = self.find(a.key), self.find(b.key)
        if ka != kb:
            self.parent[ka] = kb

    # ------------------------------------------------------------- statements

    def lookup(self, name):
        if name not in self.env:
            raise Unfused(name)
        return self.env[name]

    def array(self, name):
        value = self.lookup(name)
        if value.kind != "array":
            raise Unfused(name)
        return value

    def statement(self, st):
        kind = st[0]
        if kind == "let":
            self.env[st[1]] = self.value_of(st[2])
        elif kind == "aug":  # name op= expr
            _, name, op, expr = st
            target = self.lookup(name)
            if target.kind == "array":
                self.write(target, self.expr(expr), op + "=")
            else:
                self.env[name] = self.value_of(("bin", op, name, expr))
        elif kind == "store":  # name[index] = expr
            _, name, index, expr = st
            self.write(self.view(self.array(name), index), self.expr(expr), "=")
        elif kind == "augstore":  # name[index] op= expr
            _, name, index, op, expr = st
            self.write(self.view(self.array(name), index), self.expr(expr), op + "=")
        elif kind == "acc":  # out = rt.accumulate_at(acc, x, index, expr)
            _, out, acc, index, expr = st
            target = self.array(acc)
            self.write(self.view(target, index), self.expr(expr), "+=")
            self.env[out] = target
        elif kind == "zeroed":  # out = rt.setitem_adjoint_array(src, index)
            _, out, src, index = st
            copy = self.let(("leaf", self.array(src), ()))
            self.write(self.view(copy, index), ("const", 0.0), "=")
            self.env[out] = copy
        else:
            raise Unfused(kind)

    def view(self, value, index):
        if value.kind != "array":
            raise Unfused("a slice of a number")
        lo, hi = index
        if lo is None and hi is None:
            return value
        return _Value("array", obj=value.obj, chain=value.chain + ((lo, hi),),
                      key=f"{value.key}[{lo}:{hi}]", base=value, slc=(lo, hi))

    def value_of(self, node):
        """The value of the right-hand side ``node``: an alias, a view, a shape, a
        sum, or a new array or number."""
        if isinstance(node, str):
            return self.lookup(node)
        head = node[0] if isinstance(node, tuple) else None
        if head == "slice":
            return self.view(self.array(node[1]), node[2:])
        if head == "shape_of":
            return self.shape(self.lookup(node[1]))
        if head == "broadcast_shape":
            return self.broadcast(*[self.shape(self.operand(a)) for a in node[1:]])
        if head == "unbroadcast":
            return self.unbroadcast(self.value_of(node[1]), self.lookup(node[2]))
        if head == "setitem_value":  # rt.setitem_adjoint_value(g, index, value): a copy
            copied = self.let(("leaf", self.view(self.array(node[1]), node[2]), ()))
            return self.unbroadcast(copied, self.lookup(node[3]))
        if head == "copy":   # of an array, or of a slice of one (a tuple)
            source = node[1]
            value = self.array(source) if isinstance(source, str) else \
                self.view(self.array(source[1]), source[2:])
            return self.let(("leaf", value, ()))
        tree = self.expr(node)
        if tree[0] == "leaf" and tree[2] == ():
            return tree[1]
        return self.let(tree)

    def operand(self, node):
        if isinstance(node, (int, float)) and not isinstance(node, bool):
            return _Value("scalar", var=repr(node))
        return self.lookup(node)

    def shape(self, value):
        if value.kind == "shape":
            return value
        if value.kind == "scalar":
            return _Value("shape", ndim=0)
        return _Value("shape", ndim=1, var=self.length_var(value), key=value.key)

    def broadcast(self, *shapes):
        out = _Value("shape", ndim=0)
        for s in shapes:
            if s.ndim and out.ndim:
                self.equal(out, s)
            elif s.ndim:
                out = s
        return out

    def unbroadcast(self, g, x):
        if g.kind == "scalar":
            return g
        if g.kind != "array":
            raise Unfused("unbroadcast of a shape")
        shape = self.shape(x)
        if shape.ndim == 0:
            total = _Value("scalar", var=self.fresh("total"))
            op = _Op("sum", ("leaf", g, ()), value=total)
            total.sum = op
            self.add(op)
            return total
        self.equal(g, shape)
        return g

    def let(self, tree):
        leaves = list(_leaves(tree))
        if not any(v.kind == "array" for v, _ in leaves):
            value = _Value("scalar", var=self.fresh("s"),
                           deps=tuple(v for v, _ in leaves))
            self.scalars.append((value, f"{value.var} = {self.code(tree, None, {})}"))
            return value
        value = _Value("array", chain=())
        value.obj = value.var = self.fresh("buf")
        op = _Op("let", tree, value=value)
        value.op = op
        self.add(op)
        if tree[0] == "leaf" and not tree[2] and _root(tree[1]).op is None and \
                not any(o.kind == "write" and _root(o.target).op is None for o in self.ops):
            # a copy of an argument, before anything writes into one: made first,
            # so that it does not split the passes of the statements around it
            self.ops.remove(op)
            self.ops.insert(self.copies, op)
            self.copies += 1
        value.key = op.key
        value.length = op.length
        return value

    def write(self, target, tree, assign):
        reads = [(v.obj, v.chain + ((a,) if a else ())) for v, a in _leaves(tree)
                 if v.kind == "array"]
        # the value is read before the store, in the same element's turn: a read
        # at another element must not come later than the store to it
        if any(_conflict([(o, c)], [(target.obj, target.chain)]) for o, c in reads):
            # NumPy computes the whole value before it writes: so does a buffer
            tree = ("leaf", self.let(tree), ())
        self.add(_Op("write", tree, target=target, assign=assign))

    def add(self, op):
        arrays = [v for v, _ in _leaves(op.expr) if v.kind == "array"]
        if op.kind == "write":
            arrays = [op.target] + arrays
        if not arrays:
            raise Unfused("no array")
        op.key, op.length = arrays[0].key, self.length_var(arrays[0])
        for v in arrays[1:]:
            self.equal(v, arrays[0])
        for v, access in _leaves(op.expr):
            if access:
                self.guards.append(f"{self.length_var(v)} > 0")
        self.ops.append(op)

    def expr(self, node):
        """``node`` as a tree of ("leaf", value, access), ("const", x), ("bin", op,
        a, b), ("unary", op, a), ("call", f, args)."""
        if isinstance(node, bool):
            raise Unfused("bool")
        if isinstance(node, (int, float)):
            return ("const", node)
        if isinstance(node, str):
            value = self.lookup(node)
            if value.kind == "shape":
                raise Unfused("a shape in arithmetic")
            return ("leaf", value, ())
        head = node[0]
        if head == "bin" and node[1] in _BINARY:
            return ("bin", node[1], self.expr(node[2]), self.expr(node[3]))
        if head in ("neg", "pos"):
            return ("unary", "-" if head == "neg" else "+", self.expr(node[1]))
        if head == "ufunc" and node[1] in UFUNCS:
            return ("call", node[1], tuple(self.expr(a) for a in node[2:]))
        if head == "roll":
            shift = node[2]
            if not isinstance(shift, int) or isinstance(shift, bool):
                raise Unfused("a roll by a variable")
            source = node[1]   # a name, or an expression: its value is made first
            value = self.array(source) if isinstance(source, str) else self.value_of(source)
            if value.kind != "array":
                raise Unfused("a roll of a number")
            return ("leaf", value, ("roll", shift))
        value = self.value_of(node)
        if value.kind == "shape":
            raise Unfused("a shape in arithmetic")
        return ("leaf", value, ())

    # ------------------------------------------------------------- lengths

    def length_var(self, value):
        """The entry variable (or expression) holding the length of ``value``
        (an array, or a shape of one dimension)."""
        if value.kind == "shape":
            return value.var
        if value.length is None:  # a view
            n = self.length_var(value.base)
            lo, hi = value.slc
            value.length = self.fresh("n")
            self.entry.append(f"{value.length} = {_slice_length(n, lo, hi)}")
        return value.length

    # ------------------------------------------------------------- passes

    def ready(self, value):
        """The pass after which the scalar ``value`` is known (-1: at entry)."""
        if value.sum is not None:
            return value.sum.phase
        return max([self.ready(d) for d in value.deps if d.kind == "scalar"] + [-1])

    def schedule(self):
        phases = []
        for op in self.ops:
            reads, writes = _accesses(op)
            if not phases or not self.joins(op, len(phases) - 1, phases[-1], reads, writes):
                phases.append({"ops": [], "reads": [], "writes": [], "key": op.key,
                               "defined": set(), "targets": set()})
            phase = phases[-1]
            op.phase = len(phases) - 1
            phase["ops"].append(op)
            phase["reads"] += reads
            phase["writes"] += writes
            if op.kind == "let":
                phase["defined"].add(op.value.obj)
            if op.kind == "write":
                phase["targets"].add((op.target.obj, op.target.chain))
        return phases

    def joins(self, op, k, phase, reads, writes):
        if self.find(op.key) != self.find(phase["key"]):
            return False
        if op.kind == "write" and phase["targets"] - {(op.target.obj, op.target.chain)}:
            # one view written through per pass: LLVM does not vectorize a loop
            # storing through two views that may overlap
            return False
        for value, access in _leaves(op.expr):
            if value.kind == "scalar" and self.ready(value) >= k:
                return False
            if value.kind == "array" and value.obj in phase["defined"] and access:
                return False
        return not (_conflict(phase["reads"], writes) or _conflict(phase["writes"], reads) or
                    _conflict(phase["writes"], writes))

    # ------------------------------------------------------------- source

    def source(self):
        params = ", ".join(self.params)
        keep = self.materialized()
        body = [f"{params}{',' if len(self.params) == 1 else ''} = args"] + list(self.entry)
        checks = list(dict.fromkeys(self.guards)) + self.overlap_checks()
        if checks:
            body.append("if not (" + " and ".join(f"({c})" for c in checks) + "):")
            body.append("    return unfused(*args)")
        copied = {op for op in self.ops[:self.copies] if op.value in keep and
                  op.expr[1].base is None}
        returned = {_root(self.env[n]) for n in self.outs if self.env[n].kind == "array"}
        inside = [v for v in keep if v not in returned and
                  not any(op.value is v for op in copied)]
        for value in keep:
            made = [op for op in copied if op.value is value]
            if made:
                body.append(f"{value.var} = np.copy({made[0].expr[1].var})")
            elif value not in inside or len(inside) == 1:
                body.append(f"{value.var} = np.empty({value.length})")
        if len(inside) > 1:
            # the arrays that do not leave share one allocation (on short arrays
            # the allocations are the cost)
            work, at = self.fresh("work"), self.fresh("at")
            body += [f"{work} = np.empty({' + '.join(v.length for v in inside)})", f"{at} = 0"]
            for value in inside:
                body += [f"{value.var} = {work}[{at}:{at} + {value.length}]",
                         f"{at} += {value.length}"]
        body += self.offsets()
        for op in self.ops:
            for value, access in _leaves(op.expr):
                if access:
                    body.append(f"{self.shift(value, access[1])} = "
                                f"{access[1]} % {self.length_var(value)}")
        body += [line for value, line in self.scalars if self.ready(value) < 0]
        for k, phase in enumerate(self.phases):
            ops = [op for op in phase["ops"] if op not in copied]
            body += [f"{op.value.var} = 0.0" for op in ops if op.kind == "sum"]
            if ops:
                body.append(f"for i in range({ops[0].length}):")
            locals_ = {}
            for op in ops:
                code = self.code(op.expr, k, locals_)
                if op.kind == "sum":
                    body.append(f"    {op.value.var} += {code}")
                elif op.kind == "let" and op.value in keep:
                    body.append(f"    {op.value.var}[i] = {code}")
                    locals_[op.value] = f"{op.value.var}[i]"
                elif op.kind == "let":
                    local = self.fresh("e")
                    body.append(f"    {local} = {code}")
                    locals_[op.value] = local
                else:
                    body.append(f"    {self.element(op.target, 'i')} {op.assign} {code}")
            body += [line for value, line in self.scalars if self.ready(value) == k]
        returned = self.outputs(body)
        body.append("return " + returned)
        return "\n".join(["def impl(*args):"] + ["    " + line for line in body]) + "\n"

    def materialized(self):
        """The values computed here that need an array: read after the
        statements, shifted or through a view, or written; or read by a later
        pass that cannot compute them again (:meth:`recomputed`)."""
        keep = {}
        for name in self.outs:
            value = self.env.get(name)
            if value is not None and value.kind == "array" and _root(value).op is not None:
                keep[_root(value)] = True
        later = {}
        for op in self.ops:
            if op.kind == "write" and _root(op.target).op is not None:
                keep[_root(op.target)] = True
            for value, access in _leaves(op.expr):
                root = _root(value) if value.kind == "array" else None
                if root is None or root.op is None:
                    continue
                if access or value.base is not None:
                    keep[root] = True
                elif root.op.phase != op.phase:
                    later.setdefault(root, []).append(op.phase)
        self.recompute = set()
        for value in [op.value for op in self.ops if op.value in later]:  # program order
            if value not in keep and all(self.recomputable(value, k, keep) for k in later[value]):
                self.recompute.add(value)
            else:
                keep[value] = True
        return list(keep)

    def recomputable(self, value, phase, keep, budget=None):
        """True when pass ``phase`` can compute ``value`` (a small expression,
        made in an earlier pass) again from what it reads -- none of which is
        written from ``value``'s pass to ``phase`` -- instead of keeping it in
        an array: the same operations on the same numbers, the same bits."""
        budget = [12] if budget is None else budget
        for v, access in _leaves(value.op.expr):
            budget[0] -= 1
            if budget[0] < 0:
                return False
            if v.kind == "scalar":
                continue
            root = _root(v)
            if root.op is not None and root not in keep:
                if access or v.base is not None or not self.recomputable(root, phase, keep,
                                                                         budget):
                    return False
                self.recompute.add(root)
            for op in self.ops:
                if not (value.op.phase <= op.phase <= phase and op.kind == "write"):
                    continue
                if op.target.obj == v.obj:
                    return False
                if op.target.obj in self.params and v.obj in self.params:
                    # read again after that write: only if the two do not overlap
                    self.guards.append(f"disjoint({op.target.obj}, {v.obj})")
        return True

    def shift(self, value, shift):
        key = (id(value), shift)
        if key not in self.shifts:
            self.shifts[key] = self.fresh("sh")
        return self.shifts[key]

    def overlap_checks(self):
        """Run-time checks: no parameter written in a pass shares memory with
        another parameter that pass reads or writes."""
        checks = []
        for phase in self.phases:
            written = sorted({o for o, _ in phase["writes"] if o in self.params})
            touched = sorted({o for o, _ in phase["reads"] + phase["writes"] if o in self.params})
            checks += [f"disjoint({w}, {o})" for w in written for o in touched if o != w]
        return list(dict.fromkeys(checks))

    def code(self, tree, phase, locals_):
        head = tree[0]
        if head == "const":
            return repr(tree[1])
        if head == "bin":
            return f"({self.code(tree[2], phase, locals_)} {tree[1]} " \
                   f"{self.code(tree[3], phase, locals_)})"
        if head == "unary":
            return f"({tree[1]}{self.code(tree[2], phase, locals_)})"
        if head == "call":
            return f"np.{tree[1]}({', '.join(self.code(a, phase, locals_) for a in tree[2])})"
        value, access = tree[1], tree[2]
        if value.kind == "scalar":
            return value.var
        if not access and value in locals_:
            return locals_[value]
        if not access and value in self.recompute:
            return self.code(value.op.expr, phase, locals_)
        if not access:
            return self.element(value, "i")
        shift, n = self.shift(value, access[1]), self.length_var(value)
        return self.element(value, f"(i - {shift} if i >= {shift} else i - {shift} + {n})")

    def element(self, value, index):
        """``value[index]`` (a view: through the view, made once at entry)."""
        if value.base is None:
            return f"{value.var}[{index}]"
        return f"{self.view_var(value, self.view_lines)}[{index}]"

    def offsets(self):
        """Lines making the views the passes index: one per memory and slices
        (Numba's loop over a view of a contiguous array is vectorized; over
        the array with an offset it is not)."""
        self.view_lines, self.view_names = [], {}
        for op in self.ops:
            for value in [op.target] + [v for v, _ in _leaves(op.expr)]:
                if value is not None and value.kind == "array" and value.base is not None:
                    self.view_var(value, self.view_lines)
        return self.view_lines

    def view_var(self, value, lines):
        if value.var is None:
            key = (value.obj, value.chain)
            if key in self.view_names:
                value.var = self.view_names[key]
                return value.var
            base = value.base.var if value.base.base is None else \
                self.view_var(value.base, lines)
            lo, hi = value.slc
            value.var = self.view_names[key] = self.fresh("v")
            lines.append(f"{value.var} = {base}[{_bound(lo)}:{_bound(hi)}]")
        return value.var

    def outputs(self, lines):
        """What the statements give back (views made by ``lines``)."""
        parts = []
        for name in self.outs:
            value = self.env[name]
            if value.kind == "shape":
                parts.append(f"({value.var},)" if value.ndim else "()")
            elif value.kind == "array" and value.base is not None:
                parts.append(self.view_var(value, lines))
            else:
                parts.append(value.var)
        if not parts:   # only writes into arguments: None, as the statements return
            return "None"
        return f"({', '.join(parts)},)" if len(parts) != 1 else parts[0]


def _root(value):
    while value.base is not None:
        value = value.base
    return value


def _leaves(tree):
    if tree[0] == "leaf":
        yield tree[1], tree[2]
    elif tree[0] == "bin":
        yield from _leaves(tree[2])
        yield from _leaves(tree[3])
    elif tree[0] == "unary":
        yield from _leaves(tree[2])
    elif tree[0] == "call":
        for a in tree[2]:
            yield from _leaves(a)


def _accesses(op):
    """(reads, writes) of ``op``: (memory, how it is indexed) pairs."""
    reads = [(v.obj, v.chain + ((access,) if access else ()))
             for v, access in _leaves(op.expr) if v.kind == "array"]
    writes = []
    if op.kind == "write":
        writes.append((op.target.obj, op.target.chain))
        if op.assign != "=":
            reads.append((op.target.obj, op.target.chain))
    elif op.kind == "let":
        writes.append((op.value.obj, ()))
    return reads, writes


def _conflict(earlier, later):
    """True when an access of ``later`` (memory, index chain) to memory that
    ``earlier`` accesses would, in one loop, reach an element before the earlier
    access does: equal chains meet in one turn (in program order); plain slices
    with offsets x (earlier) and y (later) do when y <= x; anything else (rolls,
    negative starts) is a conflict."""
    for obj, chain in later:
        for o, c in earlier:
            if o != obj or c == chain:
                continue
            x, y = _offset(c), _offset(chain)
            if x is None or y is None or y > x:
                return True
    return False


def _offset(chain):
    """The first element of the view ``chain`` from its memory's (None: not a
    plain slice with a non-negative start)."""
    total = 0
    for part in chain:
        if part[0] == "roll" or len(part) != 2:
            return None
        lo = part[0] or 0
        if lo < 0:
            return None
        total += lo
    return total


def _bound(b):
    return "" if b is None else str(b)


def _slice_length(n, lo, hi):
    """Text computing ``len(range(n)[lo:hi])`` for constant ``lo``, ``hi``."""
    def clip(b, default):
        if b is None:
            return default
        if b < 0:
            return f"max({n} + ({b}), 0)"
        return f"min({b}, {n})"
    return f"max({clip(hi, n)} - {clip(lo, '0')}, 0)"
