"""The one registry of adjoint rules, keyed by the primitive's function object.

A NumPy rule is a table row, in the manner of autograd's ``defvjp``::

    defadjoint(np.multiply, "x1, x2",
               x1="unbroadcast(g * x2, x1)",
               x2="unbroadcast(g * x1, x2)")

Each keyword maps one parameter of the primitive to a Python *expression* for
the contribution to that parameter's adjoint.  The compiler inlines the
expression into the generated gradient, so the generated code reads like the
math.  Inside an expression:

- ``g`` is the adjoint of the primitive's output, ``ans`` the output itself;
- every parameter name of the signature stands for the argument the user passed
  (or the default, when the user passed none);
- ``np`` is NumPy, and any other free name is a helper from
  :mod:`tangent_ckpt.runtime` (``unbroadcast``, ...).  Generated code writes it
  as ``rt.unbroadcast``;
- for a *sequence* parameter (``np.concatenate``'s ``arrays``), the expression is
  the contribution to element ``i`` of that sequence, and ``i`` is bound.

A parameter without an expression receives no adjoint; the compiler refuses a
call that passes it a differentiated value (``np.sum(x, initial=y)``), unless
the row names it in ``piecewise=`` (the output is locally constant in it:
``np.where``'s condition).  ``defconstant(fn)`` marks a function whose output
carries no derivative at all (``np.zeros_like``, ``np.shape``, ``np.argmax``).

The same row says what else the compiler and the tests need to know:

- ``methods="sum"``: array methods that mean this function (``x.sum(axis=0)``
  is ``np.sum(x, axis=0)``); ``varargs_methods="reshape"`` also take their
  tuple argument spread out (``x.reshape(2, 3)``).  Every method of a rule
  returns a new value (in-place methods are never rules).
  ``attributes="real"``: array attributes that mean this function of the
  array (``x.real`` is ``np.real(x)``).
- ``domain="positive"``: where the tests draw inputs from (see ``DOMAINS``).
- ``singular=True``: the derivative is infinite or NaN somewhere (``sqrt``
  and ``log`` at 0, ``arcsin`` at 1, a division by 0): each elementwise
  expression ``e`` becomes ``where_nonzero(g, e)`` (inside ``unbroadcast``;
  ``where_nonzero(t, e)`` for a tangent), so that an adjoint that is exactly 0
  (a mask, ``np.where`` or ``np.triu`` discarded the value) stays 0 instead of
  ``0 * inf = nan``; where ``g`` is not 0 the singularity stays.  A callable
  receives the call's constant arguments by name and says whether this call
  needs it (``x / 2.0`` does not).  Helpers called by an expression guard
  themselves.
- ``only={"mode": ("reduced",)}``: the values a parameter may take for the
  expressions to be right; the compiler refuses a call with any other value
  (or one it cannot see at compile time).
- a sequence parameter's expression may be a pair ``(item, whole)``: ``whole``
  is the adjoint when the user passes one array instead of a list
  (``np.vstack(x)``); without it the compiler stacks the items' adjoints.

The row also carries what the compiler must know about the primitive besides
its derivative; every other table of per-function facts is derived from it
(``compiler/memory_sharing.py``, ``package/dead_primal.py``,
``known_shapes.py``, ``scalar_output.py``, ``numba_runs.py``, ``view_facts.py``,
``owned_adjoints.py``, ``object_facts.py``, ``complex_values.py``; the
architecture tests fail on a literal table of NumPy functions in the compiler):

- ``view=``: whether the result may share memory with an argument.  ``False``:
  a new array (or number) every time; a parameter name (or several, separated
  by spaces): the result may be a view of that argument, or the argument
  itself (``np.reshape``: ``view="a"``); ``True``: of some argument.  A NumPy
  function that is not a ufunc must say it (a missing ``view=`` raises: an
  unsaid view is a wrong gradient, not a refusal); a ufunc returns a new array.
  Elsewhere an unsaid ``view=`` is treated as a possible view.
  ``new_unless="copy"``: the result is new while that parameter is left at
  its default (``np.array(x)``; ``np.array(x, copy=False)`` may be ``x``;
  ``np.diff(a, 0)`` is ``a``: ``new_unless="n"``).
  ``method_views={"flatten": False}``: a method of ``methods=`` whose result
  differs from the function's (``x.flatten()`` copies, ``np.ravel`` may not).
- ``pure=``: the call only computes its result (no writes, no random state,
  no output), so generated code may drop it when nothing reads it (default
  ``True`` for a rule).
- ``keeps_shape=True``: the result has the shape of the first argument,
  whatever the other arguments (``np.roll``, ``np.copy``);
  ``reduces=True``: a reduction of its first argument over ``axis=`` with
  ``keepdims=`` (``np.sum``); with neither the analyses know the shape of a
  ufunc's result (the broadcast of its operands) and nothing else.
- ``fusable=True``: a ufunc that the Numba passes compile into their fused
  loops (``runtime/jit/numba_passes.py``).
- ``returns="array"``: the result is always one NumPy array, whatever the
  arguments the call accepts (``np.zeros``, ``np.concatenate``; private
  adjoints are added to in place: ``transform/owned_adjoints.py``);
  ``returns="array or scalar"``: one array or one number, never a list or a
  tuple (``np.sum``; the fence's facts about objects' attributes,
  ``fence/object_facts.py``).  Unsaid: the result may be anything.  A ufunc
  with one output needs neither.
- ``ndim=``: the result's number of dimensions, for the view lowering
  (``desugar/view_facts.py``: ``S[1]`` of a 2-d ``S`` is a view): an int
  (``np.arange``: 1, ``np.eye``: 2), ``"shape"`` (the first argument is the
  result's shape: ``np.zeros((n, m))``) or ``"like"`` (the first argument's,
  when that is an array: ``np.zeros_like``, ``np.copy``).  Needs
  ``returns="array"``.
- ``advanced_index=True``: the result is a boolean mask or integer index
  arrays (``np.isnan``, ``np.nonzero``, ``np.arange``), so a subscript by it
  is advanced indexing, a copy and never a view (``fence/alias_values.py``).
  Needs ``view=False``.
- ``result_dtype=`` (constructors without a derivative): ``"float64"``, the
  result is float64 unless a ``dtype`` is given (``np.zeros``); ``"like"``, it
  has its first argument's dtype unless one is given (``np.zeros_like``).
  Unsaid: unknown, except for a row with a derivative, whose result holds
  floats when a differentiated argument does (``analyze/inexact_arrays.py``).
- ``complex_result=True``: the result is complex whatever the arguments
  (``np.fft.fft``); ``False``: real whatever the arguments (``np.real``,
  ``abs``, ``np.fft.irfft``); unsaid: complex when an argument is
  (``analyze/complex_values.py``).

Each of these four defaults to what the analyses may always assume: a row
that leaves one out loses a fact (a run-time test, a guard, a copy, an
adjoint added out of place), never a gradient.

``complex_input=True`` says the row's expressions (adjoint and tangent) hold for
complex arguments under the convention of
``runtime/primitive_adjoints/complex_adjoints.py`` (the adjoint of ``u + iv`` is
``dL/du - i dL/dv``): holomorphic functions (their real rules unchanged), linear
maps with real coefficients, the Fourier transforms and the rules written for
complex values (``np.real``, ``np.conjugate``, ``abs``).  A differentiated
complex value reaching any other rule is refused (``analyze/complex_values.py``),
never differentiated as if it were real; so a row that leaves it out is refused
for complex input, which is safe.

Functions and methods without a rule have facts-only rows:
:func:`defprimitive` (``np.meshgrid``: a view unless it copies; ``np.copyto``
writes into its first argument) and :func:`defmethod` (``x.view()``, ``x.fill(0)``).
A call of a function without a row is refused when differentiated ("no adjoint
rule"); the aliasing fence treats its result as a possible view.

Users add rules for their own functions and black boxes with
:func:`register_adjoint`, giving a callable ``rule(g, ans, *args, **kwargs)`` that
returns one adjoint per positional argument (``None`` where there is none).

Forward mode (tangents, ``tc.jvp``) reads the same row.  ``tangent=`` gives, for
each differentiable parameter, the contribution of its tangent ``t`` to the
tangent of the output, as an expression of ``t``, ``ans`` and the parameters
(a plain string when the row has one differentiable parameter)::

    defadjoint(np.tanh, UNARY, x="g * (1.0 - ans * ans)", tangent="t * (1.0 - ans * ans)")

``linear=True`` says the function is linear in each differentiable parameter
on its own (``np.matmul``, ``np.reshape``, ``x[i]``): the contribution of a
parameter is the function applied with its tangent in its place.
``linear="joint"`` says it is linear in all of them together (``np.add``,
``np.concatenate``): the output's tangent is one call with every
differentiable argument replaced by its tangent (a zero where it has none);
a tuple of parameter names is "joint" over those (``np.diff`` is linear in
``a``, ``prepend`` and ``append`` together, and the last two are constants).
Where the formula depends on a constant argument (``np.linalg.norm``'s ``ord``
and ``axis``), the tangent is a callable: it receives the call's constant
arguments by name and returns the expression, or None where none is written
(forward mode refuses that call, naming its arguments).
Tangent expressions use only functions that have adjoint rules themselves, so
that a tangent-linear program can be differentiated again (``tc.hvp``).
Users give tangents of their functions with :func:`register_tangent`.
"""

import inspect

import numpy as np

from tangent_ckpt.adjoints.rule_text import (REQUIRED, check_expression, parse_signature,
                                             positional_only)

#: input domains the tests draw a rule's arguments from: (low, high, sign)
#: where sign "both" mirrors the interval to negative values too
DOMAINS = {
    "real": (-2.0, 2.0, "plus"),
    "positive": (0.5, 2.0, "plus"),
    "unit": (-0.9, 0.9, "plus"),         # |x| < 1 (arcsin, arctanh)
    "above_one": (1.2, 3.0, "plus"),     # x > 1 (arccosh)
    "nonzero": (0.5, 2.0, "both"),       # away from a pole or a kink at 0
}


class _Unsaid:
    """The value of a fact a row leaves out (``view=``)."""

    def __repr__(self):
        return "UNSAID"


UNSAID = _Unsaid()

#: the values of ``returns=`` (None: unsaid, the result may be anything)
RETURNS = (None, "array", "array or scalar")
#: the values of ``result_dtype=`` (None: unsaid; see the module docstring)
RESULT_DTYPES = (None, "float64", "like")


class PrimitiveFacts:
    """What the compiler knows about one primitive (a function, or an array
    method by name) besides its derivative; see the module docstring.

    ``view``: ``False`` (a new value), ``True`` (may share memory with an
    argument), a tuple of the parameter names it may share memory with, or
    ``None`` when the row does not say (treated as a possible view).
    ``writes``: the parameter it writes into (``"self"`` for a method), or None.
    ``pure``: True, False, or None when not said."""

    __slots__ = ("fn", "name", "view", "new_unless", "writes", "pure", "keeps_shape",
                 "reduces", "fusable", "returns", "ndim", "advanced_index", "complex_result",
                 "result_dtype")

    def __init__(self, fn, name, view=None, new_unless=None, writes=None, pure=None,
                 keeps_shape=False, reduces=False, fusable=False, returns=None, ndim=None,
                 advanced_index=False, complex_result=None, result_dtype=None):
        self.fn, self.name, self.view, self.new_unless = fn, name, view, new_unless
        self.writes, self.pure = writes, pure
        self.keeps_shape, self.reduces, self.fusable = keeps_shape, reduces, fusable
        self.returns, self.ndim = returns, ndim
        self.advanced_index, self.complex_result = advanced_index, complex_result
        self.result_dtype = result_dtype

    def __repr__(self):
        return f"<PrimitiveFacts {self.name} view={self.view!r}>"


class AdjointRule:
    """How to differentiate one primitive.

    Exactly one of ``templates`` (NumPy rules, inlined) or ``vjp`` (a user's
    callable, called from the generated code) is used.
    """

    def __init__(self, fn, name, params, templates=None, sequence_params=(),
                 vjp=None, constant=False, positional_only=(), piecewise=(),
                 domain="real", whole=None, only=None, tangents=None, linear=False,
                 singular=False, complex_input=False):
        self.fn = fn
        self.name = name
        self.params = params  # list of (name, default or REQUIRED, kind)
        self.templates = dict(templates or {})
        self.sequence_params = frozenset(sequence_params)
        self.whole = dict(whole or {})  # sequence param -> expression for one array
        self.vjp = vjp
        self.constant = constant
        self.positional_only = frozenset(positional_only)  # names not passable by keyword
        self.piecewise = frozenset(piecewise)  # no adjoint, and none is lost
        self.domain = domain
        self.only = dict(only or {})  # param -> the values the rule is right for
        self.tangents = dict(tangents or {})  # param -> its tangent's contribution (forward)
        self.linear = linear  # False, True (in each parameter) or "joint" (in all together)
        self.jvp = None  # a user's tangent callable (register_tangent)
        self.singular = singular  # False, True or a callable: see singular_for
        self.facts = None  # PrimitiveFacts: set by defadjoint and defconstant
        self.complex_input = complex_input  # its expressions hold for complex arguments

    def singular_for(self, known):
        """True when the call needs its adjoints and tangents kept 0 where ``g``
        (``t``) is 0 (``rt.where_nonzero``): the row's derivative is infinite or
        NaN somewhere (``sqrt`` at 0).  ``known``: the call's constant arguments
        by name; a callable ``singular=`` decides from them (``x / 2.0`` is regular)."""
        if callable(self.singular):
            return bool(self.singular(**known))
        return bool(self.singular)

    def linear_params(self):
        """The parameters a linear rule replaces by their tangents."""
        return self.linear if isinstance(self.linear, tuple) else tuple(self.templates)

    def is_joint(self):
        return self.linear == "joint" or isinstance(self.linear, tuple)

    def has_tangent(self):
        """True when forward mode can differentiate the primitive."""
        if self.vjp is not None:  # a user's rule: needs the user's tangent too
            return self.jvp is not None
        return self.constant or self.jvp is not None or bool(self.linear) or \
            set(self.tangents) >= set(self.templates)

    @property
    def param_names(self):
        return [p[0] for p in self.params]

    def static_params(self):
        """Parameters that must not receive a differentiated value: the rule
        has no adjoint for them, and the output is not locally constant in them."""
        if self.vjp is not None or self.constant:
            return []
        return [name for name in self.param_names
                if name not in self.templates and name not in self.piecewise]

    def differentiable_params(self):
        """Parameter names that receive an adjoint."""
        if self.vjp is not None:
            return [name for name, _, kind in self.params
                    if kind in ("positional", "varargs")]
        return [name for name in self.param_names if name in self.templates]

    def bind(self, args, kwargs=None):
        """Map the call's arguments (any objects: AST nodes or values) to parameters.

        Returns ``{param_name: argument}`` with defaults filled in; raises
        ``TypeError`` when the call does not fit the signature.  A ``*name``
        parameter collects the remaining positional arguments into a tuple.
        """
        bound = {}
        args = list(args)
        kwargs = dict(kwargs or {})
        names = self.param_names
        for name, default, kind in self.params:
            if kind == "varargs":
                bound[name] = tuple(args)
                args = []
            elif kind == "varkeywords":
                bound[name] = {k: kwargs.pop(k) for k in list(kwargs) if k not in names}
            elif args and kind == "positional":
                if name in kwargs and name not in self.positional_only:
                    raise TypeError(f"{self.name}() got multiple values for argument '{name}'")
                bound[name] = args.pop(0)
            elif name in kwargs and name not in self.positional_only:
                bound[name] = kwargs.pop(name)
            elif default is not REQUIRED:
                bound[name] = default
            else:
                raise TypeError(f"{self.name}() missing argument '{name}'")
        if args:
            npos = sum(kind == "positional" for _, _, kind in self.params)
            raise TypeError(f"{self.name}() takes at most {npos} positional arguments, "
                            f"got {npos + len(args)}")
        if kwargs:
            raise TypeError(f"{self.name}() got unexpected keyword(s) "
                            f"{', '.join(sorted(kwargs))}")
        return bound

    def __repr__(self):
        return f"<AdjointRule {self.name}>"


_RULES = {}
_FACTS = {}             # function -> PrimitiveFacts (every row: rules and facts-only rows)
_METHOD_FACTS = {}      # array method name -> PrimitiveFacts
_METHODS = {}           # array method name -> the function it means
_VARARGS_METHODS = set()  # methods whose tuple argument may be spread: x.reshape(2, 3)
_ATTRIBUTES = {}        # array attribute name -> the function of the array it means
_PURE_METHODS = set()   # methods known to return a new value and change nothing


def defadjoint(fn, signature, *, name=None, sequence=(), piecewise=(), methods=(),
               varargs_methods=(), domain="real", only=None, tangent=None, linear=False,
               singular=False, view=UNSAID, new_unless=None, method_views=None, pure=True,
               keeps_shape=False, reduces=False, fusable=False, returns=None, ndim=None,
               advanced_index=False, complex_result=None, complex_input=False, attributes=(),
               **templates):
    """Register the inlined adjoint expressions of a NumPy primitive, and its
    tangent (``tangent=`` or ``linear=``), and its facts (``view=``, ``pure=``,
    ``keeps_shape=``, ``reduces=``, ``fusable=``, ``returns=``, ``ndim=``,
    ``advanced_index=``, ``complex_result=``; see the module docstring), and
    whether its expressions hold for complex arguments (``complex_input=``).
    ``fn`` None (a function the running NumPy lacks, ``numpy_versions``)
    registers nothing."""
    if fn is None:
        return None
    name = name or _default_name(fn)
    params = parse_signature(signature)
    names = {p[0] for p in params}
    facts = _facts(fn, name, names, view=view, new_unless=new_unless, pure=pure,
                   keeps_shape=keeps_shape, reduces=reduces, fusable=fusable, returns=returns,
                   ndim=ndim, advanced_index=advanced_index, complex_result=complex_result)
    for param in (*sequence, *piecewise, *(only or {})):
        if param not in names:
            raise ValueError(f"{name}: parameter '{param}' is not in signature '{signature}'")
    if not (singular in (False, True) or callable(singular)):
        raise ValueError(f"{name}: singular= is True, False or a callable")
    if domain not in DOMAINS:
        raise ValueError(f"{name}: unknown domain {domain!r}; one of {sorted(DOMAINS)}")
    whole = {}
    for param, expression in list(templates.items()):
        if param not in names:
            raise ValueError(f"{name}: '{param}' is not in signature '{signature}'")
        if isinstance(expression, tuple):
            if param not in sequence:
                raise ValueError(f"{name}: only a sequence parameter takes (item, whole)")
            templates[param], whole[param] = expression
            check_expression(name, params, param, whole[param], False)
        check_expression(name, params, param, templates[param], param in sequence)
    tangents = _tangent_templates(name, params, templates, tangent)
    _RULES[_key(fn)] = AdjointRule(fn, name, params, templates, sequence,
                                   positional_only=positional_only(signature),
                                   piecewise=piecewise, domain=domain, whole=whole,
                                   only=only, tangents=tangents, linear=linear,
                                   singular=singular, complex_input=bool(complex_input))
    _set_facts(fn, facts)
    _declare_methods(fn, methods, varargs_methods, facts, method_views)
    for attribute in _names(attributes):
        _ATTRIBUTES[attribute] = fn
    return fn


def _facts(fn, name, names, *, view=UNSAID, new_unless=None, writes=None, pure=None,
           keeps_shape=False, reduces=False, fusable=False, returns=None, ndim=None,
           advanced_index=False, complex_result=None, result_dtype=None):
    """The checked :class:`PrimitiveFacts` of a row (``names``: its parameters,
    None when its signature says nothing about them)."""
    if view is UNSAID:
        if isinstance(fn, np.ufunc):
            view = False   # a ufunc allocates its result (``out=`` is refused)
        elif is_numpy_function(fn):
            raise ValueError(
                f"{name}: say view= in its row: False when the result is always a new "
                "array, else the parameter whose memory the result may share (view=\"a\"); "
                "an unsaid view would give a wrong gradient after a write through it")
        else:
            view = None
    elif isinstance(view, str):
        view = tuple(view.split())
    elif view not in (False, True):
        view = tuple(view)
    for param in (view if isinstance(view, tuple) else ()) + \
            tuple(p for p in (new_unless, writes) if p is not None):
        if names is not None and param not in names:
            raise ValueError(f"{name}: '{param}' (view=, new_unless= or writes=) is not a "
                             "parameter of its signature")
    if new_unless is not None and view in (False, None):
        raise ValueError(f"{name}: new_unless= needs view= (what the result may share otherwise)")
    if keeps_shape and reduces:
        raise ValueError(f"{name}: keeps_shape= and reduces= exclude each other")
    if fusable and not isinstance(fn, np.ufunc):
        raise ValueError(f"{name}: fusable= is for ufuncs (the Numba passes fuse elementwise "
                         "calls only)")
    if returns not in RETURNS:
        raise ValueError(f"{name}: returns= is one of {RETURNS}")
    if ndim is not None and (returns != "array" or not (
            ndim in ("shape", "like") or (type(ndim) is int and ndim >= 0))):
        raise ValueError(f"{name}: ndim= (an int, \"shape\" or \"like\") needs returns=\"array\"")
    if advanced_index and view is not False:
        raise ValueError(f"{name}: advanced_index= needs view=False (a mask or index arrays "
                         "are new)")
    if complex_result not in (None, True, False):
        raise ValueError(f"{name}: complex_result= is True, False or unsaid")
    if result_dtype not in RESULT_DTYPES:
        raise ValueError(f"{name}: result_dtype= is one of {RESULT_DTYPES}")
    return PrimitiveFacts(fn, name, view=view, new_unless=new_unless, writes=writes, pure=pure,
                          keeps_shape=bool(keeps_shape), reduces=bool(reduces),
                          fusable=bool(fusable), returns=returns, ndim=ndim,
                          advanced_index=bool(advanced_index), complex_result=complex_result,
                          result_dtype=result_dtype)


def _set_facts(fn, facts):
    _FACTS[_key(fn)] = facts
    rule = _RULES.get(_key(fn))
    if rule is not None:
        rule.facts = facts


def is_numpy_function(fn):
    """True for a function of NumPy itself (``np.reshape``, ``np.linalg.solve``)."""
    module = getattr(fn, "__module__", None) or ""
    return isinstance(fn, np.ufunc) or module == "numpy" or module.startswith("numpy.")


def _tangent_templates(name, params, templates, tangent):
    """``tangent=`` as ``{param: expression}``; a string is the one differentiable
    parameter's.  Its free names are checked like an adjoint's (``t`` for ``g``)."""
    if tangent is None:
        return {}
    if isinstance(tangent, str) or callable(tangent):
        if len(templates) != 1:
            raise ValueError(f"{name}: tangent= as one expression needs exactly one "
                             "differentiable parameter; give a dict")
        tangent = {next(iter(templates)): tangent}
    for param, expression in tangent.items():
        if param not in templates:
            raise ValueError(f"{name}: tangent for '{param}', which has no adjoint")
        if callable(expression):
            continue  # the expression it chooses is checked when forward mode reads it
        check_expression(name, params + [("t", REQUIRED, "positional")], param, expression,
                        False)
    return dict(tangent)


def defconstant(fn, signature="*args", name=None, methods=(), *, view=UNSAID, pure=True,
                keeps_shape=False, reduces=False, fusable=False, returns=None, ndim=None,
                advanced_index=False, complex_result=None, result_dtype=None):
    """Register a function whose output has no derivative (shapes, constructors,
    indices), with its facts (as :func:`defadjoint`)."""
    name = name or _default_name(fn)
    params = parse_signature(signature)
    facts = _facts(fn, name, _named_params(params), view=view, pure=pure,
                   keeps_shape=keeps_shape, reduces=reduces, fusable=fusable, returns=returns,
                   ndim=ndim, advanced_index=advanced_index, complex_result=complex_result,
                   result_dtype=result_dtype)
    _RULES[_key(fn)] = AdjointRule(fn, name, params, constant=True,
                                   positional_only=positional_only(signature))
    _set_facts(fn, facts)
    _declare_methods(fn, methods, (), facts, None)
    return fn


def defprimitive(fn, *, name=None, view=UNSAID, new_unless=None, writes=None, pure=None,
                 keeps_shape=False, reduces=False, returns=None, ndim=None,
                 advanced_index=False, complex_result=None):
    """A facts-only row: a function with no derivative rule (differentiating
    through it is refused) whose memory behaviour the compiler must know
    (``np.meshgrid``: ``view=True, new_unless="copy"``; ``np.copyto``:
    ``writes=``, the parameter it writes into).  ``fn`` None registers nothing."""
    if fn is None or facts(fn) is not None:
        return fn   # missing from this NumPy, or another name of a function with a row
    name = name or _default_name(fn)
    try:
        names = set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = None
    if writes is not None and pure:
        raise ValueError(f"{name}: a function that writes into an argument is not pure")
    _set_facts(fn, _facts(fn, name, names, view=view, new_unless=new_unless, writes=writes,
                          pure=False if writes is not None else pure,
                          keeps_shape=keeps_shape, reduces=reduces, returns=returns, ndim=ndim,
                          advanced_index=advanced_index, complex_result=complex_result))
    return fn


def defmethod(*methods, view=UNSAID, writes=False, pure=None, returns=None):
    """Facts-only rows of array methods that are not rules: ``view=`` False (a
    new value: ``x.take(i)``), True (may share memory with the array or the
    arguments: ``x.view()``); ``writes=True``: writes into the array (the
    lowering refuses them: ``x.fill(0)``); ``pure=True``: returns a new value
    and changes nothing (generated code may drop it when unread); ``returns=``
    as a function's row (``x.astype(float)``: ``"array or scalar"``)."""
    if returns not in RETURNS:
        raise ValueError(f"{', '.join(methods)}: returns= is one of {RETURNS}")
    if view is UNSAID and not writes:
        raise ValueError(f"{', '.join(methods)}: say view= (False: a new value; True: may "
                         "share memory with the array)")
    for method in methods:
        _METHOD_FACTS[method] = PrimitiveFacts(
            None, method, view=None if view is UNSAID else view,
            writes="self" if writes else None, pure=False if writes else pure,
            returns=returns)
        if pure and not writes:
            _PURE_METHODS.add(method)


def _named_params(params):
    """The parameter names of a signature, None when it takes ``*args, **kwargs``."""
    if any(kind in ("varargs", "varkeywords") for _, _, kind in params):
        return None
    return {p[0] for p in params}


def _names(spec):
    return spec.split() if isinstance(spec, str) else list(spec)


def _declare_methods(fn, methods, varargs_methods, facts, method_views):
    """The array methods that mean ``fn``: their facts (``view=``, ``pure=``,
    ``returns=``) are ``fn``'s, but where ``method_views`` says otherwise (``x.flatten()`` copies; ``x.conj()`` of a
    real ``x`` is ``x``)."""
    method_views = dict(method_views or {})
    every = _names(methods) + _names(varargs_methods)
    for method in method_views:
        if method not in every:
            raise ValueError(f"{facts.name}: method_views names '{method}', not in methods=")
    for method in every:
        _METHODS[method] = fn
        _PURE_METHODS.add(method)
        view = method_views.get(method, facts.view)
        view = tuple(view.split()) if isinstance(view, str) else view
        _METHOD_FACTS[method] = PrimitiveFacts(fn, method, view=view, pure=facts.pure,
                                               returns=facts.returns)
    _VARARGS_METHODS.update(_names(varargs_methods))


def defpure(*methods):
    """Declare array methods that return a new value without being rules
    (``x.astype(float)``): generated code may drop them when unread."""
    defmethod(*methods, view=False, pure=True)


def facts(fn):
    """The :class:`PrimitiveFacts` of ``fn`` (a rule's or a facts-only row's),
    or None for a function without a row."""
    try:
        return _FACTS.get(_key(fn))
    except TypeError:  # unhashable
        return None


def method_facts(method):
    """The :class:`PrimitiveFacts` of the array method called ``method``, or None."""
    return _METHOD_FACTS.get(method)


def all_facts():
    """Every function's facts (rules and facts-only rows)."""
    return list(_FACTS.values())


def all_method_facts():
    return dict(_METHOD_FACTS)


def methods():
    """``{method name: function}``: ``x.sum(...)`` means ``np.sum(x, ...)``."""
    return _METHODS


def attribute_functions():
    """``{attribute name: function}``: ``x.real`` means ``np.real(x)``."""
    return _ATTRIBUTES


def varargs_methods():
    """Methods whose one tuple argument may be spread: ``x.reshape(2, 3)``."""
    return _VARARGS_METHODS


def pure_methods():
    """Names of array methods that return a new value and change nothing."""
    return _PURE_METHODS


def register_adjoint(fn, rule=None):
    """Register ``rule`` as the adjoint of ``fn`` (a user function or a black box).

    ``rule(g, ans, *args, **kwargs)`` receives the adjoint of ``fn``'s output,
    the output, and the arguments ``fn`` was called with; it returns a tuple with
    one adjoint per positional argument (``None`` for no gradient; a single
    value is accepted when ``fn`` has one positional argument).  The generated
    gradient calls ``rule`` instead of differentiating ``fn``'s body.

    May be used as a decorator factory: ``@register_adjoint(fn)`` above ``rule``.
    """
    if rule is None:
        return lambda r: register_adjoint(fn, r)
    if not callable(rule):
        raise TypeError("register_adjoint(fn, rule): rule must be callable")
    params = []
    positional_only = []
    try:
        for p in inspect.signature(fn).parameters.values():
            default = REQUIRED if p.default is inspect.Parameter.empty else p.default
            if p.kind == p.VAR_POSITIONAL:
                params.append((p.name, REQUIRED, "varargs"))
            elif p.kind == p.KEYWORD_ONLY:
                params.append((p.name, default, "keyword"))
            elif p.kind == p.VAR_KEYWORD:
                params.append((p.name, REQUIRED, "varkeywords"))
            else:
                params.append((p.name, default, "positional"))
                if p.kind == p.POSITIONAL_ONLY:
                    positional_only.append(p.name)
    except (TypeError, ValueError):
        params = [("args", REQUIRED, "varargs"), ("kwargs", REQUIRED, "varkeywords")]
    _RULES[_key(fn)] = AdjointRule(fn, _default_name(fn), params, vjp=rule,
                                   positional_only=positional_only)
    if facts(fn) is None:   # a user's function says nothing about its memory: a possible view
        _set_facts(fn, PrimitiveFacts(fn, _default_name(fn), view=None, pure=None))
    else:
        _set_facts(fn, facts(fn))
    return rule


def register_tangent(fn, rule=None):
    """Register ``rule`` as the tangent (forward-mode derivative) of ``fn``.

    ``rule(tangents, ans, *args, **kwargs)`` receives a tuple with the tangent
    of each positional argument (``None`` where the argument carries none), the
    output and the arguments; it returns the tangent of the output.  ``fn``
    needs an adjoint first (:func:`register_adjoint`): the rule is kept beside
    it, and ``tc.hvp`` differentiates the tangent code with that adjoint.

    May be used as a decorator factory: ``@register_tangent(fn)`` above ``rule``.
    """
    if rule is None:
        return lambda r: register_tangent(fn, r)
    if not callable(rule):
        raise TypeError("register_tangent(fn, rule): rule must be callable")
    existing = lookup(fn)
    if existing is None:
        raise ValueError(f"register_tangent({_default_name(fn)}): register its adjoint first "
                         "with tangent_ckpt.register_adjoint (the tangent is kept beside it)")
    existing.jvp = rule
    return rule


def lookup(fn):
    """The rule registered for ``fn``, or ``None``."""
    try:
        return _RULES.get(_key(fn))
    except TypeError:  # unhashable callables have no rule
        return None


def registered_functions():
    """Every function with a rule, for the documentation table and tests."""
    return [rule.fn for rule in _RULES.values()]


def all_rules():
    return list(_RULES.values())


def _key(fn):
    # Bound methods and ufuncs hash by identity; this keeps the key the object.
    return fn


def _default_name(fn):
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__name__", repr(fn))
    if module.startswith("numpy") or isinstance(fn, np.ufunc):
        return f"np.{name}"
    return name
