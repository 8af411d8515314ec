"""w2v: word2vec in Python and Numba, faithful to word2vec.c and faster."""

from w2v.config import TrainConfig
from w2v.errors import W2VError
from w2v.train import train
from w2v.vectors import Vectors

__all__ = ["TrainConfig", "Vectors", "W2VError", "train"]
__version__ = "0.1.0"
