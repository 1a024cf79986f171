"""The user's `assert` statements, as generated code runs them (`rt.check`)."""


def check(condition, message=None):
    """The user's ``assert condition, message``, run where the user ran it
    (also under ``python -O``: it is part of the program the gradient follows)."""
    if not condition:
        raise AssertionError(message) if message is not None else AssertionError()
