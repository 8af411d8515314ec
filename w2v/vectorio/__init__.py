"""Vectors files: recognising a file by its first bytes, word2vec text/binary/npy, fastText, GloVe."""
