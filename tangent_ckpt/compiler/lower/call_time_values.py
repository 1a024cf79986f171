"""Lower: a module-level float, read by the generated code when it runs.

``SCALE = 0.5`` at module level and ``y = x * SCALE`` in the function: the
generated code reads ``SCALE`` from its globals (``y = y_sin * SCALE``) rather
than having ``0.5`` written into it, so that a new float there (a learning
rate, a time stepped between calls) is copied in before the next call
(``parse.Dependencies.changed``) instead of compiling the gradient again.
The shape analyses know these names hold scalars (pipeline.py).
"""

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.frontend.parse import note_call_time_value
from tangent_ckpt.compiler.lower.scopes import local_names


def call_time_value(lo, obj, user_name, globals_dict):
    """The global under which the generated code reads the float ``obj``, the
    value of ``user_name`` in ``globals_dict``: the user's own name where it is
    free, one binding per (module, name) -- never shared by two names whose
    floats happen to be one object."""
    key = ("value", id(globals_dict), user_name)
    if key in lo.binding_names:
        return ir.Name(lo.binding_names[key])
    if user_name not in lo.bindings and lo.parsed.globals is globals_dict and \
            user_name not in local_names(lo.parsed.node):
        name = user_name  # the user's own global name (no generated name uses it)
    else:
        name = lo.namer.fresh(user_name)
    lo.bindings[name] = obj
    lo.binding_names[key] = name
    note_call_time_value(globals_dict, user_name, name)
    return ir.Name(name)
