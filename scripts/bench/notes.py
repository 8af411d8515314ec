"""The report's prose: the notes that always apply, and those of the systems and kinds of
combo that ran (how each peer is run, what the subword combos write)."""

from .commands import W2V_MODEL_FILES
from .corpus import GENSIM_LINE_TOKENS
from .records import Results
from .scoring import SYNTACTIC_PREFIX
from .systems import COMBOS

SUBWORD_COMMAND = (  # for the notes; cli.py's docstring says the same
    "python scripts/bench.py --corpus text8 --systems w2v,fasttext,gensim-ft --combos sg-sub,cbow-sub --repeat 3 "
    "--name subword-benchmarks"
)
PWORD2VEC_COMMAND = (  # likewise
    "python scripts/bench.py --corpus text8 --systems w2v,pword2vec --combos sg-ns,cbow-ns,sg-hs,cbow-hs --repeat 3 "
    "--pword2vec PATH --name pword2vec-benchmarks"
)


def standing_notes(results: Results) -> list[str]:
    """Notes that always apply, and those of the systems and kinds of combo that ran."""
    notes = [
        "The systems run one after another, taking turns in each round, so drift in the machine's speed "
        "falls on all of them; ratios are taken per pair of runs of the same round. Round r (from 0) trains "
        "with seed r + 1 in every system that takes one (word2vec.c and pWord2Vec take none).",
        "Before the timed runs w2v trains once per model on a tiny corpus, untimed, so its Numba cache is warm.",
    ]
    systems, combos = results.systems, results.combos
    if {"gensim", "gensim-ft"} & set(systems):
        notes.append(
            f"gensim's fastest mode (`corpus_file`) trains only the first {GENSIM_LINE_TOKENS:,} tokens of each "
            "line and drops the rest without a word, so it trains on a copy of the corpus cut into lines of at most "
            f"{GENSIM_LINE_TOKENS:,} tokens (made once, not timed); the other systems read the original file."
        )
    if any(not COMBOS[c].subwords for c in combos):
        notes += word_notes(systems)
    if any(COMBOS[c].subwords for c in combos):
        notes += subword_notes(results)
    else:
        notes.append(
            f"Subword vectors (fastText's model) are measured apart ([subword-benchmarks.md](subword-benchmarks.md)): "
            f"`{SUBWORD_COMMAND}`."
        )
    if "pword2vec" not in systems and "sg-ns" in combos:
        notes.append(
            f"Against Intel's pWord2Vec, with each w2v run set against the machine's roofs "
            f"([pword2vec-benchmarks.md](pword2vec-benchmarks.md)): `{PWORD2VEC_COMMAND}`."
        )
    return notes


def word_notes(systems: list[str]) -> list[str]:
    """Notes on the peers among ``systems`` in the word combos."""
    notes = []
    if "gensim" in systems:
        notes.append(
            "gensim's Word2Vec is given word2vec.c's learning rates (0.025 skip-gram, 0.05 CBOW, decaying to "
            "alpha * 1e-4), not its own default 0.025 for both, so that every system trains with the same settings."
        )
    if "word2vec" in systems:
        notes.append(
            "word2vec.c (`pip install word2vec`, command `word2vec`) holds a 10^8-entry negative-sampling "
            "table (400 MB) with NS: most of its peak memory."
        )
    if "pword2vec" in systems:
        notes.append(
            "pWord2Vec (Intel Labs' HogBatch word2vec: the contexts of a window share their noise words, so each "
            "window's update is a small matrix product) trains skip-gram NS alone, reads the whole corpus into "
            "memory first, and takes word2vec.c's settings with `-batch-size 2 window + 1` and no seed. It is "
            "built from its source (`git clone https://github.com/IntelLabs/pWord2Vec`) with "
            "`apt-get install g++ libopenblas-dev` and `sh scripts/build_pword2vec.sh pWord2Vec bin`: "
            "OpenBLAS's `cblas.h` for `mkl.h`, `openblas_set_num_threads(1)` for `mkl_set_num_threads(1)`, "
            "`<mm_malloc.h>`, `<cstdio>` and `<cstdlib>` included, `g++ -std=c++11 -O3 -march=native -fopenmp`, "
            "then `-D USE_MKL ... -lopenblas` for `bin/pWord2Vec` and the plain loops without it for "
            "`bin/pWord2Vec-loops`. The OpenBLAS build is the one measured, the faster of the two on this "
            "machine (docs/performance.md)."
        )
    if "fasttext" in systems:
        notes.append(
            "In the word combos fastText runs with subwords off (minn = maxn = 0, wordNgrams 1, bucket 0) and "
            "word2vec.c's learning rates (its own default is 0.05 for both models); its runner writes word2vec "
            "binary vectors like the others."
        )
    return notes


def subword_notes(results: Results) -> list[str]:
    """Notes on the subword combos: what each system writes, how fastText is run."""
    flag = model_flag(results)
    suffix = W2V_MODEL_FILES[flag]
    notes = [
        "In the subword combos every system trains fastText's model with fastText's unsupervised settings (the "
        "header's), writes the composed vectors of its words (the mean of a word's rows) as a `.vec`, the file "
        f"scored, and its whole model: fastText and gensim's FastText a fastText `.bin`, w2v `{flag}` "
        f"(`{suffix}`)" + ("" if suffix == ".bin" else ", as this w2v has no `--save-fasttext`") + ". "
        f"The syntactic column is the accuracy on questions-words' `{SYNTACTIC_PREFIX}*` sections alone."
    ]
    if "fasttext" in results.systems:
        notes.append(
            "fastText trains through its Python module (`fasttext-wheel`: the C++ library the `fasttext` command "
            "runs); its runner saves the `.bin` with `save_model` and writes the `.vec` from `get_word_vector`, as "
            "`saveVectors` does, in Python."
        )
    if "gensim-ft" in results.systems:
        notes.append(
            "gensim's FastText learning rate decays to alpha * 1e-4, as w2v's does (fastText's decays to 0); it "
            "writes the `.vec` with `save_word2vec_format` and the `.bin` with `save_facebook_model`."
        )
    return notes


def model_flag(results: Results) -> str:
    """The option w2v's subword runs wrote their whole model with (``W2V_MODEL_FILES``, as
    their commands show), ``--save-model`` where none ran."""
    flags = (word for run in results.runs if run.system == "w2v" for word in run.command if word in W2V_MODEL_FILES)
    return next(flags, "--save-model")
