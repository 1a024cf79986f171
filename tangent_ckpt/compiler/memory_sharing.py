"""Which calls share memory with their arguments, and which write into them.

The tables the aliasing fence (``aliasing.py``) reads: NumPy functions and array
methods whose result may be a view of (or the same object as) an argument, the
ones that return new objects, and the ones that write into an argument.  What
is not listed as a view is a new array: keep the view lists complete when a
rule for a view-making function is added.
"""

import numpy as np


# NumPy functions whose result may share memory with an argument (views, or the
# argument itself); every other NumPy function returns a new array
_VIEW_FUNCTION_PATHS = (
    "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "asarray_chkfinite",
    "require", "asmatrix", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to",
    "broadcast_arrays", "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "rollaxis",
    "squeeze", "expand_dims", "diagonal", "diag", "real", "imag", "real_if_close", "flip",
    "fliplr", "flipud", "rot90", "split", "array_split", "hsplit", "vsplit", "dsplit",
    "unstack", "matrix_transpose", "permute_dims", "trim_zeros", "meshgrid", "nan_to_num",
    "lib.stride_tricks.as_strided", "lib.stride_tricks.sliding_window_view",
    "linalg.matrix_transpose", "array",
    "einsum",   # with one operand: np.einsum('ij->ji', a) is a view of a
)
# functions that return a new array unless told not to copy
_COPY_FLAG_FUNCTIONS = ("array", "nan_to_num", "meshgrid")


def _numpy_objects(paths):
    found = []
    for path in paths:
        obj = np
        for part in path.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if obj is not None:
            found.append(obj)
    return found


VIEW_FUNCTIONS = _numpy_objects(_VIEW_FUNCTION_PATHS)
COPY_FLAG_FUNCTIONS = _numpy_objects(_COPY_FLAG_FUNCTIONS)

# array methods whose result may share memory with the array (or dict/list
# methods that hand out its elements); other methods return new objects
VIEW_METHODS = {"reshape", "ravel", "view", "transpose", "swapaxes", "squeeze", "diagonal",
                "conj", "conjugate",   # x itself when x is real
                "get", "values", "items", "keys", "__array__", "setdefault", "pop",
                "newbyteorder"}
FRESH_METHODS = {"standard_normal", "normal", "uniform", "integers", "random", "randn",
                 "rand", "randint", "choice", "permutation", "exponential", "poisson",
                 "binomial", "beta", "gamma", "lognormal", "multivariate_normal",
                 "sum", "mean", "prod", "max", "min", "dot", "copy", "cumsum", "cumprod",
                 "clip", "flatten", "argmax", "argmin", "any", "all", "std", "var",
                 "trace", "round", "tolist", "item", "nonzero",
                 "argsort", "searchsorted", "repeat", "take", "compress", "ptp", "count",
                 "index", "astype"}
# array methods that write into the array (the lowering refuses them: lower/calls.py)
ARRAY_WRITING_METHODS = {"sort", "fill", "resize", "put", "itemset", "partition", "setfield",
                         "byteswap", "setflags", "__iadd__"}
# methods that write into the object they are called on
WRITING_METHODS = ARRAY_WRITING_METHODS | {
    "append", "extend", "insert", "remove", "clear", "reverse", "update", "popitem",
    "__isub__", "__imul__", "__itruediv__", "add", "discard"}
# functions that write into their first argument
_WRITING_FUNCTION_PATHS = ("copyto", "put", "place", "putmask", "fill_diagonal",
                           "put_along_axis", "random.shuffle")
WRITING_FUNCTIONS = _numpy_objects(_WRITING_FUNCTION_PATHS)
# NumPy functions whose result, used as an index, is a mask or index arrays (advanced
# indexing: the subscript makes a copy); np.where only with one argument
_INDEX_FUNCTION_PATHS = ("isnan", "isinf", "isfinite", "isneginf", "isposinf", "isclose",
                         "logical_and", "logical_or", "logical_not", "logical_xor",
                         "nonzero", "flatnonzero", "argwhere", "where", "arange", "ix_",
                         "greater", "greater_equal", "less", "less_equal", "equal",
                         "not_equal", "signbit", "isin")
INDEX_FUNCTIONS = _numpy_objects(_INDEX_FUNCTION_PATHS)
# builtins whose result is a new object holding no references to the arguments
FRESH_BUILTINS = {len, float, int, bool, abs, round, range, isinstance, str, print, sum,
                  type, complex, repr, hash, id, divmod, pow}
