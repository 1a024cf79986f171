"""A module of the user's settings, read as ``stepping_settings.DT`` by the code
tests/test_dependencies.py differentiates (a gradient compiles again when one is
rebound)."""

DT = 0.1
STEPS = 3
