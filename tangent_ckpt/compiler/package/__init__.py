"""Package: the transformed code -> the generated functions: checkpointed loops' steps,
adjoint steps and driver calls, settled saves, the gradient function last."""
