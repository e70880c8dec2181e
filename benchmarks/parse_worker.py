"""Parse one SVMlight file with one reader, in a fresh process, and print JSON.

Used by bench_parse.py so that every timed parse starts from a clean process
(no memory left over from a previous reader) and its peak RSS can be read.

    python benchmarks/parse_worker.py {pegasos|pegasos-2threads|sklearn|liblinear} PATH

Prints ``{"seconds": ..., "rows": ..., "nnz": ..., "rss_before_mb": ...}``;
only the reader call itself is timed (imports are done before).
"""

import json
import sys
import time


def rss_mb():
    """Current resident set size of this process in MiB (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return None


def main():
    """Entry point."""
    tool, path = sys.argv[1], sys.argv[2]
    if tool == "pegasos":
        import scipy.sparse  # noqa: F401  (pegasos imports it lazily; keep it out of the timing)

        import pegasos
        import pegasos.io  # noqa: F401

        def load():
            return pegasos.load_svmlight(path)
    elif tool == "pegasos-2threads":
        import scipy.sparse  # noqa: F401

        import pegasos.io

        def load():
            d = pegasos.io.read_svmlight(path, threads=2)
            return d.X, d.y
    elif tool == "sklearn":
        from sklearn.datasets import load_svmlight_file

        def load():
            return load_svmlight_file(path)
    elif tool == "liblinear":
        from liblinear.liblinearutil import svm_read_problem

        def load():
            y, X = svm_read_problem(path, return_scipy=True)
            return X, y
    else:
        raise SystemExit(f"unknown reader {tool!r}")

    before = rss_mb()
    start = time.perf_counter()
    X, y = load()
    seconds = time.perf_counter() - start
    print(json.dumps(dict(seconds=seconds, rows=int(X.shape[0]), cols=int(X.shape[1]),
                          nnz=int(X.nnz), rss_before_mb=before)))


if __name__ == "__main__":
    main()
