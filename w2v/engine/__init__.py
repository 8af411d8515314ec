"""The training engine: the Numba kernels, the weights, the worker threads, model files, scoring."""
