"""Lower: the desugared user function -> the A-normal-form IR of ``compiler/ir.py``
(``normalize.py`` is the entry; its docstring names the part that lowers each construct)."""
