"""Support for users' own adjoint rules (``tangent_ckpt.register_adjoint``)."""

__all__ = ["adjoint_parts"]


def adjoint_parts(result, count):
    """A user rule's result as a tuple of ``count`` adjoints (``None`` becomes zero)."""
    if not isinstance(result, (tuple, list)):
        result = (result,)
    if len(result) != count:
        raise ValueError(f"an adjoint rule returned {len(result)} adjoints for "
                         f"{count} positional arguments")
    return tuple(0.0 if part is None else part for part in result)
