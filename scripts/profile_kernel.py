"""Where the training kernel spends its time: perf samples attributed to its loops.

    python scripts/profile_kernel.py --hs --negative 0 --threads 1
    python scripts/profile_kernel.py --model cbow --annotate /tmp/cbow-ns.txt

``perf`` cannot name the instructions of code that Numba compiles at run time:
they lie in anonymous memory. This script trains a corpus (one epoch of
wiki-en-100m by default) under ``perf record -e cpu-clock`` in a child process
that first loads the batch kernel for the settings, then writes the kernel's
machine code, as it lies in memory, and its address. The samples that fall in it
are attributed to its innermost loops (the ranges of its backward jumps), and each
of the hottest loops is listed with its share of the kernel's samples, its size and
what it is made of: FMAs, vector loads and stores, horizontal reductions (lane
extracts and shuffles), scalar float instructions, gathers, divisions. That is
usually enough to tell which part of ``w2v/engine/kernels.py`` a loop is (the three passes
of ``logistic_units``: dot products ending in horizontal reductions, the vectorised
logistic steps with their gathers and divisions, the row updates of FMAs and
stores). ``--annotate`` writes the whole disassembly with each instruction's samples.

Needs Linux's ``perf`` (allowed to sample this user's processes) and binutils'
``objdump``. Not a test and not run in CI; docs/performance.md says what it found.
"""

import argparse
import collections
import ctypes
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTION = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
JUMP = re.compile(r"^j\w+$")
KINDS = {  # what a loop is made of: a kind, and the pattern of the mnemonic (and operands) it counts
    "fma": re.compile(r"^vf(n?)m(add|sub)"),
    "vector loads/stores": re.compile(r"^vmov(u|a)p[sd] .*[xyz]mm"),
    "horizontal": re.compile(r"^(vextract|vshuf|vmovshdup|vpermil|vhadd)"),
    "scalar float": re.compile(r"^v\w+ss "),
    "gathers": re.compile(r"^vgather"),
    "divisions": re.compile(r"^vdiv"),
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "../shared/data/wiki-en-100m.txt")
    parser.add_argument("--model", choices=["skipgram", "cbow"], default="skipgram")
    parser.add_argument("--hs", action="store_true", help="hierarchical softmax")
    parser.add_argument("--negative", type=int, default=5, help="noise words (0: none)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--frequency", type=int, default=4000, help="samples a second")
    parser.add_argument("--top", type=int, default=10, help="loops listed")
    parser.add_argument("--annotate", type=Path, help="write the annotated disassembly here")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)  # the traced run: its output folder
    args = parser.parse_args(argv)
    if not args.corpus.is_file():
        parser.error(f"corpus not found: {args.corpus}")
    if not (args.hs or args.negative > 0):
        parser.error("nothing to train: give --hs or --negative > 0")
    return args


def settings(args: argparse.Namespace) -> dict:
    """The ``w2v.train`` settings of the profiled run."""
    return {"model": args.model, "hs": args.hs, "negative": args.negative, "threads": args.threads}


def traced_run(args: argparse.Namespace) -> None:
    """The child under ``perf``: load the kernel, dump its code and address into
    ``args.child``, then train the corpus. It imports the ``w2v`` of this script's
    checkout, whatever is installed."""
    sys.path.insert(0, str(ROOT))
    import w2v
    from w2v.engine import kernels

    sentences = [["the", "quick", "brown", "fox", "jumps"]] * 20
    w2v.train(sentences, min_count=1, epochs=1, **settings(args))  # loads (or compiles) the batch kernel
    dispatcher = kernels.train_batch
    if len(dispatcher.overloads) != 1:
        sys.exit(f"profile_kernel: {len(dispatcher.overloads)} compiled versions of the kernel, expected one")
    (compiled,) = dispatcher.overloads.values()
    address = compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name)
    size = code_size(address)
    (args.child / "code.bin").write_bytes(ctypes.string_at(address, size))
    (args.child / "address").write_text(f"{address}\n")
    w2v.train(str(args.corpus), epochs=args.epochs, **settings(args))


def code_size(address: int, limit: int = 1 << 20) -> int:
    """Bytes that can be read from ``address`` on: to the end of its mapping in this
    process (``/proc/self/maps``), at most ``limit``. The kernel comes first; Numba's
    wrappers of it follow, and take no time."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        first, last = (int(bound, 16) for bound in line.split()[0].split("-"))
        if first <= address < last:
            return min(last - address, limit)
    raise SystemExit("profile_kernel: the kernel's code is not in this process's memory map")


def disassemble(code: Path) -> list[tuple[int, str, str]]:
    """(offset, mnemonic, operands) of each instruction of the raw x86-64 ``code``."""
    command = ["objdump", "-D", "-b", "binary", "-m", "i386:x86-64", "--no-show-raw-insn", str(code)]
    listing = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    found = (INSTRUCTION.match(line) for line in listing.splitlines())
    return [(int(m.group(1), 16), m.group(2), m.group(3)) for m in found if m]


def loops(instructions: list[tuple[int, str, str]]) -> list[tuple[int, int]]:
    """The (first, last) offsets of each loop: a jump back to ``first`` from ``last``."""
    found = set()
    for offset, mnemonic, operands in instructions:
        target = re.match(r"^0x([0-9a-f]+)$", operands.strip())
        if JUMP.match(mnemonic) and target and int(target.group(1), 16) <= offset:
            found.add((int(target.group(1), 16), offset))
    return sorted(found)


def innermost(offset: int, ranges: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The shortest of ``ranges`` holding ``offset``, or None."""
    holding = [r for r in ranges if r[0] <= offset <= r[1]]
    return min(holding, key=lambda r: r[1] - r[0]) if holding else None


def loop_table(instructions, samples: collections.Counter, top: int) -> list[str]:
    """Markdown rows: the ``top`` loops by samples, with what they are made of."""
    ranges = loops(instructions)
    per_loop: collections.Counter = collections.Counter()
    for offset, count in samples.items():
        per_loop[innermost(offset, ranges)] += count
    total = sum(samples.values())
    rows = ["| loop (offsets) | share | instructions | " + " | ".join(KINDS) + " |", "|---" * (len(KINDS) + 3) + "|"]
    for loop, count in per_loop.most_common(top):
        if loop is None:
            rows.append(f"| outside loops | {100 * count / total:.1f}% |" + " |" * (len(KINDS) + 1))
            continue
        body = [f"{m} {o}" for offset, m, o in instructions if loop[0] <= offset <= loop[1]]
        kinds = [sum(1 for text in body if pattern.match(text)) for pattern in KINDS.values()]
        cells = " | ".join(str(k) for k in kinds)
        rows.append(f"| {loop[0]:x}-{loop[1]:x} | {100 * count / total:.1f}% | {len(body)} | {cells} |")
    return rows


def kernel_samples(perf_data: Path, address: int, size: int) -> tuple[collections.Counter, int]:
    """The samples' offsets within the kernel (counted), and all samples."""
    command = ["perf", "script", "-i", str(perf_data), "-F", "ip"]
    lines = subprocess.run(command, capture_output=True, text=True, check=True).stdout.split()
    offsets = [int(ip, 16) - address for ip in lines]
    return collections.Counter(o for o in offsets if 0 <= o < size), len(offsets)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.child is not None:
        return traced_run(args)
    for tool, package in (("perf", "linux-perf"), ("objdump", "binutils")):
        if shutil.which(tool) is None:
            sys.exit(f"profile_kernel: {tool} not found (Debian: apt install {package})")
    with tempfile.TemporaryDirectory(prefix="w2v-profile-") as folder:
        work = Path(folder)
        child = [sys.executable, __file__, *(argv if argv is not None else sys.argv[1:]), "--child", str(work)]
        perf = ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(args.frequency), "-o", str(work / "perf.data")]
        done = subprocess.run([*perf, "--", *child], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"profile_kernel: the traced run failed ({done.returncode}): {done.stderr.strip()[-500:]}")
        instructions = disassemble(work / "code.bin")
        address = int((work / "address").read_text())
        samples, all_samples = kernel_samples(work / "perf.data", address, (work / "code.bin").stat().st_size)
    kernel = sum(samples.values())
    print(f"{args.corpus.name}, {args.epochs} epoch(s), {args.threads} thread(s): {settings(args)}")
    print(f"{kernel:,} of {all_samples:,} samples in the batch kernel ({100 * kernel / max(all_samples, 1):.0f}%)\n")
    print("\n".join(loop_table(instructions, samples, args.top)))
    if args.annotate is not None:
        lines = (f"{o:6x} {samples.get(o, 0):7d}  {m} {ops}" for o, m, ops in instructions)
        args.annotate.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
