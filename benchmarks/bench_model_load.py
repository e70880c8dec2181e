"""Load time of a big model file: the whole ``load_model`` and its weight blocks.

Usage: python benchmarks/bench_model_load.py MODEL [REPEATS]

Prints JSON: seconds of ``pegasos.load_model`` (best of REPEATS, default 3), of the
weight blocks inside it (``read_weights``, summed over the blocks of the best run),
of the pure-Python parse of the same weight lines that the loader used to fall back
to (``read_index_value`` per line, the reference the compiled parse is compared with),
and the peak resident set size of a fresh process that only loads the model (MiB, from ``getrusage`` of the child).
"""

import json
import resource
import subprocess
import sys
import time

import numpy as np


def _python_parse(lines, n, base):
    """Every ``index:value`` line of the file's weight blocks, checked line by line in Python
    (``pegasos.model.read_index_value``: int(), float(), range, order, finiteness)."""
    from pegasos.model import read_index_value

    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("weights "):
            count = int(lines[i].split()[1])
            cols = np.empty(count, dtype=np.int64)
            vals = np.empty(count)
            last = -1
            for j, ln in enumerate(lines[i + 1:i + 1 + count]):
                last, vals[j] = read_index_value(ln.strip(), "model", i + 2 + j, base, n, last, "weight",
                                                 "", "weight")
                cols[j] = last
            out.append((cols, vals))
            i += count
        i += 1
    return out


def main():
    path = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    import pegasos
    import pegasos.modelfile as modelfile

    inner = modelfile.read_weights
    spent = [0.0]

    def timed(*args):
        t = time.perf_counter()
        try:
            return inner(*args)
        finally:
            spent[0] += time.perf_counter() - t

    modelfile.read_weights = timed
    best, best_weights = float("inf"), None
    for _ in range(repeats):
        spent[0] = 0.0
        t = time.perf_counter()
        pegasos.load_model(path)
        total = time.perf_counter() - t
        if total < best:
            best, best_weights = total, spent[0]
    modelfile.read_weights = inner
    model = pegasos.load_model(path)
    with open(path) as f:
        lines = f.read().split("\n")
    t = time.perf_counter()
    _python_parse(lines, model.n_features, int(model.info.get("index_base", "1")))
    python_weights = time.perf_counter() - t
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run([sys.executable, "-c", "import sys, pegasos; pegasos.load_model(sys.argv[1])", path], check=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"load_s": round(best, 3), "weights_s": round(best_weights, 3),
                      "python_weights_s": round(python_weights, 3),
                      "peak_rss_mib": round(max(peak, before) / 1024, 1)}))


if __name__ == "__main__":
    main()
