"""Vectors files: recognising a file, word2vec text/binary/npy, fastText, GloVe, model files."""
