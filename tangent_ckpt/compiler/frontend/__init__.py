"""Frontend: a Python function -> its syntax tree, its file and lines."""
