#!/usr/bin/env python3
"""Write the small deterministic data files of tests/data/ (SVMlight/LIBSVM text).

The files are committed; this script documents how they were made and
rewrites them byte for byte (numpy's default_rng with fixed seeds, values
rounded to two decimals and written with a fixed format)::

    python tests/data/make_golden_data.py            # writes next to this script
    python tests/data/make_golden_data.py --check    # exit 1 if a file differs

Files (m examples x 30 features, about 5 stored values per row):

- ``binary.svm``: 400 rows, labels -1/+1 from a hidden weight vector, 5% flipped.
- ``binary01.svm``: 300 rows, labels 0/1 (another seed).
- ``binary01_zero.svm``: ``binary01.svm`` with 0-based indices (``--zero-based``).
- ``multiclass.svm``: 300 rows, labels 1, 2, 3 (the class of the largest of three
  hidden scores).
- ``regression.svm``: 300 rows, real targets <w*, x> + N(0, 0.1^2), two decimals.
- ``ranking.svm``: 200 rows in 20 queries (``qid:1`` .. ``qid:20``), relevance 0..3.
- ``cost3.txt``: a 3 x 3 cost matrix for ``--cost-matrix`` (zero diagonal).
"""

import argparse
import sys
from pathlib import Path

import numpy as np

N_FEATURES = 30
NNZ_MEAN = 5


def sparse_rows(rng, m):
    """m rows of sorted unique 0-based indices and values in [-1, 1] (two decimals, no zeros)."""
    rows = []
    for _ in range(m):
        nnz = int(rng.integers(1, 2 * NNZ_MEAN))
        idx = np.sort(rng.choice(N_FEATURES, size=nnz, replace=False))
        val = np.round(rng.uniform(-1.0, 1.0, size=nnz), 2)
        val[val == 0.0] = 0.01
        rows.append((idx, val))
    return rows


def dense(rows):
    X = np.zeros((len(rows), N_FEATURES))
    for i, (idx, val) in enumerate(rows):
        X[i, idx] = val
    return X


def fmt_value(v):
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def lines(labels, rows, base=1, qids=None):
    out = []
    for i, (label, (idx, val)) in enumerate(zip(labels, rows)):
        tokens = [label]
        if qids is not None:
            tokens.append(f"qid:{qids[i]}")
        tokens += [f"{j + base}:{fmt_value(v)}" for j, v in zip(idx, val)]
        out.append(" ".join(tokens))
    return "\n".join(out) + "\n"


def binary_labels(rng, X, noise=0.05):
    w = rng.normal(size=N_FEATURES)
    y = np.where(X @ w >= 0, 1, -1)
    flip = rng.random(len(y)) < noise
    return np.where(flip, -y, y)


def make_all():
    files = {}

    rng = np.random.default_rng(20261201)
    rows = sparse_rows(rng, 400)
    y = binary_labels(rng, dense(rows))
    files["binary.svm"] = lines(["+1" if v > 0 else "-1" for v in y], rows)

    rng = np.random.default_rng(20261202)
    rows = sparse_rows(rng, 300)
    y = binary_labels(rng, dense(rows))
    labels01 = ["1" if v > 0 else "0" for v in y]
    files["binary01.svm"] = lines(labels01, rows)
    files["binary01_zero.svm"] = lines(labels01, rows, base=0)

    rng = np.random.default_rng(20261203)
    rows = sparse_rows(rng, 300)
    scores = dense(rows) @ rng.normal(size=(N_FEATURES, 3))
    files["multiclass.svm"] = lines([str(c + 1) for c in np.argmax(scores, axis=1)], rows)

    rng = np.random.default_rng(20261204)
    rows = sparse_rows(rng, 300)
    target = np.round(dense(rows) @ rng.normal(size=N_FEATURES) + rng.normal(0.0, 0.1, 300), 2)
    files["regression.svm"] = lines([fmt_value(t) for t in target], rows)

    rng = np.random.default_rng(20261205)
    rows = sparse_rows(rng, 200)
    score = dense(rows) @ rng.normal(size=N_FEATURES)
    qids = np.repeat(np.arange(1, 21), 10)
    rel = np.clip(np.floor(score + 2.0 + rng.normal(0.0, 0.3, 200)), 0, 3).astype(int)
    files["ranking.svm"] = lines([str(r) for r in rel], rows, qids=qids)

    files["cost3.txt"] = "0 1 2\n1 0 1\n4 1 0\n"
    return files


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    differ = []
    for name, text in make_all().items():
        path = args.dir / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                differ.append(name)
        else:
            path.write_text(text)
    if differ:
        print("differ from the generator: " + ", ".join(differ), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
