"""The corpus: reading sources, counting words, the vocabulary, encoding to ids, parts, phrases."""
