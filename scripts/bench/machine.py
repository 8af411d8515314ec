"""The machine a benchmark ran on: CPU, cores, memory, and the versions involved."""

import importlib.metadata
import os
import platform
import shutil
import subprocess
from pathlib import Path


def machine_info() -> dict:
    """CPU model, cores, memory, and the versions of Python and the libraries involved."""
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout if shutil.which("lscpu") else ""
    model = next((line.split(":", 1)[1].strip() for line in lscpu.splitlines() if line.startswith("Model name")), "")
    meminfo = Path("/proc/meminfo").read_text().split() if Path("/proc/meminfo").exists() else []
    ram_gib = int(meminfo[meminfo.index("MemTotal:") + 1]) / 2**20 if "MemTotal:" in meminfo else None
    versions = {"python": platform.python_version()}
    for package in ("w2v", "numpy", "numba", "gensim", "word2vec", "fasttext-wheel", "matplotlib"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    return {
        "cpu": model or platform.processor(),
        "cores": os.cpu_count(),
        "ram_gib": ram_gib,
        "os": platform.platform(),
        "versions": versions,
    }
