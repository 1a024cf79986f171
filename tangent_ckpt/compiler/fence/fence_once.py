"""Fence: the aliasing fence, run once before lowering on the differentiated
function (desugared by the pipeline) and on every user function it may inline.

For the differentiated function, desugar (``desugar/passes.py``; its last pass,
``views.py``, makes the writes through views it can follow explicit) has run, and
``aliasing.py`` refuses the writes it could not follow.  The helpers,
methods and lambdas the lowering may inline are found from what the code names
(``reached_functions.py``) and prepared the way the lowering inlines them, a
helper and a method alike: its writes through views of its parameters followed
back to them (the inliner hands them to the caller), then fenced.  What
preparing one raises is kept, and the lowering raises it where it inlines that
function (``fenced.py``): a helper that is named but never inlined refuses
nothing, as before.

A method the fence refuses when read alone is fenced again for each user class
the code constructs that runs it, knowing what every store into such an
object's attributes binds (``object_facts.py``); the lowering uses that version
only on an object its class makes in the code (``Fenced.receiver_methods``).
"""

import collections

import gast

from tangent_ckpt.compiler.fence.aliasing import check_writes, returns_new_objects
from tangent_ckpt.compiler.fence.fenced import Fenced, FencedFunction
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.compiler.fence.object_facts import (
    Code, numbered_items, numeric_attributes, object_parameter, receiver_classes, runs_method,
    shadows_a_method,
)
from tangent_ckpt.compiler.frontend.reached_functions import (
    FUNCTION, METHOD, functions_named, functions_of_arguments,
)
from tangent_ckpt.compiler.desugar.passes import desugar
from tangent_ckpt.errors import TangentCkptError


def fence_once(parsed, followed, containers=None, numbers=None):
    """Fence the writes of ``parsed`` (desugared: ``followed`` is what its view pass
    followed, ``desugar/passes.py``), then prepare every function it may inline
    (desugared and fenced the same way); returns the :class:`~.fenced.Fenced` the
    lowering reads.  ``containers``: the structures of the arguments given as
    containers or objects (their classes' methods); ``numbers``: {parameter:
    kind} of the parameters the call gives numbers or lists of numbers
    (``number_arguments.py``)."""
    fenced = Fenced()
    receivers, fenced.findings = check_writes(parsed, followed=followed, numbers=numbers)
    fenced.checked_receivers.update(receivers)
    fenced.index.add(fenced.findings)
    fenced.marks.update(followed.marks)
    pending = collections.deque(functions_named(parsed))
    pending.extend(functions_of_arguments(containers))
    while pending:
        role, fn = pending.popleft()
        if (role, fn) in fenced.functions:
            continue
        prepared = fenced.functions[(role, fn)] = _prepared(role, fn, fenced)
        if prepared.parsed is not None:  # (a refused method may be fenced again for
            pending.extend(functions_named(prepared.parsed))  # its object: its helpers too)
    _fence_for_receivers(parsed, fenced)
    _note_functions_returning_new(fenced, [parsed] + [
        p.parsed for p in fenced.functions.values() if p.parsed is not None])
    return fenced


def _fence_for_receivers(parsed, fenced):
    """Fence again, for each class the code constructs, the methods of it that
    the fence refused when read alone, knowing which attributes of an object
    that class makes hold only arrays or numbers (``object_facts.py``)."""
    refused = [fn for (role, fn), prepared in fenced.functions.items()
               if role == METHOD and prepared.parsed is not None and
               (prepared.error is not None or prepared.unless is not None)]
    if not refused:
        return
    trees = [(None, None, parsed)] + [(role, fn, prepared.parsed) for (role, fn), prepared
                                      in fenced.functions.items()
                                      if prepared.parsed is not None]
    for cls in receiver_classes([Code(tree.node, tree.resolve) for _, _, tree in trees]):
        methods = [fn for fn in refused if runs_method(cls, fn)]
        if not methods:
            continue
        codes = []
        for role, fn, tree in trees:
            # self.x proves something only in a method called on the object
            # (Cls.m(other) reaches m as a plain function too)
            own = role == METHOD and runs_method(cls, fn) and \
                (FUNCTION, fn) not in fenced.functions
            codes.append(Code(tree.node, tree.resolve,
                              object_parameter(tree.node) if own else None))
        if shadows_a_method(cls, codes):
            continue  # self.step = f: self.step() may not run the class's step
        receiver = (cls, numeric_attributes(cls, codes), numbered_items(cls, codes))
        for fn in methods:
            fenced.receiver_methods[(fn, cls)] = _prepared(METHOD, fn, fenced, receiver)


def _prepared(role, fn, fenced, receiver=None):
    try:
        parsed = parse_function(fn)
    except Exception as error:  # raised again where the lowering inlines fn
        return FencedFunction(None, error)
    try:
        # a helper's, and a method's, writes through views of its parameters are
        # followed back to the parameters (the inliner hands them to the caller)
        followed = desugar(parsed, helper=True)
    except Exception as error:
        return FencedFunction(parsed, error)
    refusal = None
    try:
        receivers, findings = check_writes(parsed, followed=followed, receiver=receiver,
                                           helper=True)
    except TangentCkptError as error:
        # s = step(x); x -= s with step a parameter: fenced again taking what its
        # parameters return to be new objects, which each call then checks
        # (lower/guards.py check_callable_arguments); refused as before otherwise
        try:
            receivers, findings = check_writes(parsed, followed=followed, receiver=receiver,
                                               callables_new=True, helper=True)
        except Exception:
            return FencedFunction(parsed, error)
        if not findings.assumed_new:
            return FencedFunction(parsed, error)
        refusal = error
    except Exception as error:
        return FencedFunction(parsed, error)
    fenced.marks.update(followed.marks)
    fenced.checked_receivers.update(receivers)
    fenced.index.add(findings)
    return FencedFunction(parsed, findings=findings, unless=refusal)


def _note_functions_returning_new(fenced, trees):
    """Whether each function the code defines or reaches returns new objects only
    (``Fenced.returns_new``), where a fenced helper takes what a parameter of its
    returns to be new: the lowering checks what each call gives for it."""
    if not any(p.unless is not None for p in fenced.functions.values()):
        return
    for (role, fn), prepared in fenced.functions.items():
        if role == FUNCTION and prepared.parsed is not None and prepared.error is None:
            fenced.returns_new[fn] = returns_new_objects(prepared.parsed, prepared.parsed.node)
    for tree in trees:
        for node in gast.walk(tree.node):
            if isinstance(node, gast.FunctionDef) and node is not tree.node:
                fenced.returns_new[id(node)] = (node, returns_new_objects(tree, node))
