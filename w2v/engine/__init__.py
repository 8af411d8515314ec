"""The training engine: the Numba kernels, the weights, the worker threads and their run loop, model files, scoring."""
