"""Using vectors: the ``Vectors`` class, nearest neighbours, evaluation, word classes, plots."""
