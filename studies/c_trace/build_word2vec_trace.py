"""Build word2vec.c with a trace: the source of the ``word2vec`` package (0.11.1,
``includes/word2vec.c``, the one studies/cbow_parity ran), patched to write what it
computes, its arithmetic untouched.

    python studies/c_trace/build_word2vec_trace.py OUT_FOLDER    # writes OUT_FOLDER/word2vec-trace

The patched program takes two more options: ``-trace FOLDER`` (one thread only)
and ``-trace-every K``. Into FOLDER it writes, once the net is initialised:

- ``exp_table.f32``: its sigmoid table, ``expTable`` (1,000 float32);
- ``vocab.txt``: ``word count`` in its order (``</s>`` first);
- ``tree.txt``: each word's Huffman path, ``codelen``, the codes, the nodes;
- ``keep.f32``: each word's subsampling threshold ``ran`` (float32, -sample > 0);
- ``noise_starts.i64``: the first entry of each word in its unigram table (-negative > 0);

and, as it trains, ``dumps.bin``: before every K-th centre word of a non-empty
sentence, and after the last, the step (int64: centre words trained) then
``syn0``, ``syn1`` (with -hs) and ``syn1neg`` (with -negative), each
vocab_size x size float32; ``draws.txt``: its random draws, a line each:
``s WORD BITS`` (subsampling: the word and its draw's low 16 bits),
``w STEP WORD B`` (the window of centre word STEP: window - B words each side),
``n STEP WORD`` (a noise word drawn for centre word STEP).

Built with ``gcc -O2 -ffp-contract=off -lm -pthread``: no -march=native or
-ffast-math, so that every float operation is the plain IEEE float the source
writes, summed in the source's order; -ffp-contract=off keeps GCC from fusing a
multiplication and an addition on targets with FMA (x86-64 without -march has
none, so there it changes nothing). The edits are text replacements, each of
which must match exactly once: a changed source stops the build.
"""

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

FLAGS = ["-O2", "-ffp-contract=off"]
LIBS = ["-lm", "-pthread"]

TRACE_CODE = r"""
// c_trace: what the trace writes (studies/c_trace/build_word2vec_trace.py)
char trace_dir[4096];
long long trace_every = 1, trace_steps = 0;
FILE *trace_draws = NULL, *trace_dumps = NULL;

FILE *TraceFile(const char *name) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/%s", trace_dir, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL) {printf("c_trace: cannot write %s\n", path); exit(1);}
  return f;
}

void TraceDump(long long step) {
  fwrite(&step, sizeof(long long), 1, trace_dumps);
  fwrite(syn0, sizeof(real), vocab_size * layer1_size, trace_dumps);
  if (hs) fwrite(syn1, sizeof(real), vocab_size * layer1_size, trace_dumps);
  if (negative > 0) fwrite(syn1neg, sizeof(real), vocab_size * layer1_size, trace_dumps);
}

void TraceStart() {
  long long a, b;
  FILE *f;
  if (num_threads != 1) {printf("c_trace: -trace needs -threads 1\n"); exit(1);}
  f = TraceFile("exp_table.f32");
  fwrite(expTable, sizeof(real), EXP_TABLE_SIZE, f);
  fclose(f);
  f = TraceFile("vocab.txt");
  for (a = 0; a < vocab_size; a++) fprintf(f, "%s %lld\n", vocab[a].word, vocab[a].cn);
  fclose(f);
  f = TraceFile("tree.txt");
  for (a = 0; a < vocab_size; a++) {
    fprintf(f, "%d", vocab[a].codelen);
    for (b = 0; b < vocab[a].codelen; b++) fprintf(f, " %d", vocab[a].code[b]);
    for (b = 0; b < vocab[a].codelen; b++) fprintf(f, " %d", vocab[a].point[b]);
    fprintf(f, "\n");
  }
  fclose(f);
  if (sample > 0) {
    f = TraceFile("keep.f32");
    for (a = 0; a < vocab_size; a++) {
      real ran = (sqrt(vocab[a].cn / (sample * train_words)) + 1) * (sample * train_words) / vocab[a].cn;
      fwrite(&ran, sizeof(real), 1, f);
    }
    fclose(f);
  }
  if (negative > 0) {
    f = TraceFile("noise_starts.i64");
    for (a = 0; a < table_size; a++) if (a == 0 || table[a] != table[a - 1]) {
      b = a;
      fwrite(&b, sizeof(long long), 1, f);
    }
    fclose(f);
  }
  trace_draws = TraceFile("draws.txt");
  trace_dumps = TraceFile("dumps.bin");
}

void TraceStep(long long word, long long b) {
  if (trace_steps % trace_every == 0) TraceDump(trace_steps);
  fprintf(trace_draws, "w %lld %lld %lld\n", trace_steps, word, b);
  trace_steps++;
}

void TraceEnd() {
  TraceDump(trace_steps);
  fclose(trace_draws);
  fclose(trace_dumps);
}
"""

# (what the source holds, what it becomes): each must occur exactly once
EDITS = [
    ("int *table;\n", "int *table;\n" + TRACE_CODE),
    (
        "          next_random = next_random * (unsigned long long)25214903917 + 11;\n"
        "          if (ran < (next_random & 0xFFFF) / (real)65536) continue;\n",
        "          next_random = next_random * (unsigned long long)25214903917 + 11;\n"
        '          if (trace_draws) fprintf(trace_draws, "s %lld %llu\\n", word, next_random & 0xFFFF);\n'
        "          if (ran < (next_random & 0xFFFF) / (real)65536) continue;\n",
    ),
    (
        "    b = next_random % window;\n",
        "    b = next_random % window;\n    if (trace_draws && sentence_length > 0) TraceStep(word, b);\n",
    ),
    (
        "  if (negative > 0) InitUnigramTable();\n",
        "  if (negative > 0) InitUnigramTable();\n  if (trace_dir[0]) TraceStart();\n",
    ),
    (
        "  for (a = 0; a < num_threads; a++) pthread_join(pt[a], NULL);\n",
        "  for (a = 0; a < num_threads; a++) pthread_join(pt[a], NULL);\n  if (trace_dir[0]) TraceEnd();\n",
    ),
    (
        '  if ((i = ArgPos((char *)"-classes", argc, argv)) > 0) classes = atoi(argv[i + 1]);\n',
        '  if ((i = ArgPos((char *)"-classes", argc, argv)) > 0) classes = atoi(argv[i + 1]);\n'
        '  if ((i = ArgPos((char *)"-trace", argc, argv)) > 0) strcpy(trace_dir, argv[i + 1]);\n'
        '  if ((i = ArgPos((char *)"-trace-every", argc, argv)) > 0) trace_every = atoll(argv[i + 1]);\n'
        '  if (trace_every < 1) {printf("c_trace: -trace-every must be at least 1\\n"); exit(1);}\n',
    ),
]
NOISE_DRAW = "            if (target == 0) target = next_random % (vocab_size - 1) + 1;\n"
NOISE_LOG = '            if (trace_draws) fprintf(trace_draws, "n %lld %lld\\n", trace_steps - 1, target);\n'


class BuildError(Exception):
    """The source is not the one the edits were written for, or the compiler failed."""


def upstream_source() -> Path:
    """word2vec.c as the ``word2vec`` package ships it; BuildError where it is not installed."""
    try:
        import word2vec
    except ImportError:
        raise BuildError("the word2vec package (word2vec.c's source) is not installed") from None
    path = Path(word2vec.__file__).parent / "includes" / "word2vec.c"
    if not path.is_file():
        raise BuildError(f"{path} not found in the word2vec package")
    return path


def patched(source: str) -> str:
    """``source`` with the trace's edits; BuildError where one does not match exactly once."""
    for old, new in [*EDITS, (NOISE_DRAW, NOISE_DRAW + NOISE_LOG)]:
        expected = 2 if old == NOISE_DRAW else 1  # CBOW's negative sampling, then skip-gram's
        if source.count(old) != expected:
            raise BuildError(f"word2vec.c has {source.count(old)} of {old.strip()!r}, not {expected}: has it changed?")
        source = source.replace(old, new)
    return source


def build(out: Path) -> Path:
    """Write the patched source and its program ``word2vec-trace`` into ``out``; the program's path."""
    compiler = shutil.which("gcc")
    if compiler is None:
        raise BuildError("gcc not found")
    out.mkdir(parents=True, exist_ok=True)
    source = out / "word2vec-trace.c"
    source.write_text(patched(upstream_source().read_text()))
    program = out / "word2vec-trace"
    done = subprocess.run([compiler, *FLAGS, str(source), "-o", str(program), *LIBS], capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"gcc failed on {source}:\n{done.stderr}")
    return program


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the folder to write word2vec-trace into")
    try:
        program = build(parser.parse_args().out)
    except BuildError as err:
        sys.exit(f"build_word2vec_trace: {err}")
    print(f"build_word2vec_trace: wrote {program} (gcc {' '.join(FLAGS + LIBS)})")


if __name__ == "__main__":
    main()
