#!/usr/bin/env python3
"""Write a synthetic sparse binary-classification data set in SVMlight/LIBSVM format.

Every line is ``LABEL INDEX:VALUE INDEX:VALUE ...`` with labels ``+1``/``-1``,
exactly ``--nnz-per-row`` features per line, indices strictly increasing
within a line (so sorted and unique), 1-based unless ``--zero-based``.

Labels come from a hidden weight vector ``w*`` with i.i.d. N(0, 1) entries:
``y = sign(<w*, x>)`` (``+1`` when the product is exactly 0), after which each
label is flipped independently with probability ``--label-noise``.

Values are decimal numbers with at most ``--decimals`` digits after the
point, written compactly (``0.5``, ``1``, ``-0.0123``): ``uniform`` draws from
(0, 1], ``normal`` from N(0, 1) and ``binary`` writes every value as ``1``.
Labels are computed from the values exactly as written, so a reader
recovers the same data that produced the labels.

Speed: rows are generated in blocks and the text of a whole block is built
with numpy (digit arithmetic into a byte matrix plus a mask of the bytes that
are kept), with no Python loop over tokens: about 75 MB/s on one core, so
1 GB takes about 15 s.

Determinism: the output depends only on the arguments (block sizes are a
function of ``--nnz-per-row`` alone), and a run stopped early by ``--rows`` or
``--target-bytes`` writes a prefix of the longer file made with the same seed.

Examples::

    python data_scripts/make_synthetic.py --rows 100000 --features 50000 out.svm
    python data_scripts/make_synthetic.py --target-bytes 1e9 big.svm     # about 1 GB
    python data_scripts/make_synthetic.py --rows 1000 --seed 3 - | head
    python data_scripts/make_synthetic.py --rows 100000 small.svm.gz
"""

import argparse
import gzip
import sys
import time

import numpy as np

ASCII_0 = ord("0")
SPACE, COLON, MINUS, DOT, NEWLINE, PLUS = (ord(c) for c in " :-.\n+")

#: Aim for about this many tokens per generated block (bounds memory use).
TOKENS_PER_BLOCK = 1_000_000
MAX_ROWS_PER_BLOCK = 10_000


def rows_per_block(nnz_per_row):
    """Rows generated at once; depends only on nnz per row, for determinism."""
    return int(max(1, min(MAX_ROWS_PER_BLOCK, TOKENS_PER_BLOCK // max(1, nnz_per_row))))


def digit_matrix(values, width):
    """Decimal digits of non-negative integers as an ASCII matrix.

    Returns ``(chars, mask)`` of shape ``values.shape + (width,)``: most
    significant digit first; ``mask`` keeps all digits but leading zeros
    (a value of 0 keeps its single ``0``).
    """
    rest = np.array(values, dtype=np.int64)
    digits = np.empty(rest.shape + (width,), np.uint8)
    for col in range(width - 1, -1, -1):  # least significant digit first
        quotient = rest // 10  # division by a scalar is fast in numpy
        digits[..., col] = rest - 10 * quotient
        rest = quotient
    nonzero = digits != 0
    # Position of the first significant digit (the last one for a value of 0).
    first = np.where(nonzero.any(-1), np.argmax(nonzero, axis=-1), width - 1)
    mask = np.arange(width) >= first[..., None]
    return digits + np.uint8(ASCII_0), mask


def decimal_matrix(q, decimals):
    """Text of the numbers ``q / 10**decimals`` (``q`` integers), trimmed.

    Returns ``(chars, mask)``: optional minus sign, integer part without
    leading zeros, and a fractional part without trailing zeros (no point at
    all for whole numbers), e.g. 5000 -> ``0.5``, 10000 -> ``1`` for 4 decimals.
    """
    q = np.asarray(q, dtype=np.int64)
    scale = 10 ** decimals
    mag = np.abs(q)
    whole = mag // scale
    frac = mag % scale
    int_width = len(str(int(whole.max()))) if whole.size else 1
    sign_c = np.full(q.shape + (1,), MINUS, np.uint8)
    sign_m = (q < 0)[..., None]
    int_c, int_m = digit_matrix(whole, int_width)
    parts_c, parts_m = [sign_c, int_c], [sign_m, int_m]
    if decimals > 0:
        frac_c, _ = digit_matrix(frac, decimals)
        # Keep fractional digits up to the last non-zero one.
        nonzero = frac_c != ASCII_0
        last = np.where(nonzero.any(-1), decimals - np.argmax(nonzero[..., ::-1], axis=-1), 0)
        frac_m = np.arange(decimals) < last[..., None]
        dot_c = np.full(q.shape + (1,), DOT, np.uint8)
        dot_m = (frac > 0)[..., None]
        parts_c += [dot_c, frac_c]
        parts_m += [dot_m, frac_m]
    return np.concatenate(parts_c, axis=-1), np.concatenate(parts_m, axis=-1)


def sample_sorted_indices(rng, rows, nnz, n_features):
    """``rows`` x ``nnz`` matrix of strictly increasing feature indices in [0, n).

    Draws ``nnz`` values with replacement from ``[0, n - nnz]``, sorts them and
    adds ``0, 1, ..., nnz-1``: the result is always strictly increasing.  (The
    subsets are not exactly uniformly distributed, which does not matter for
    synthetic scaling data.)
    """
    base = rng.integers(0, n_features - nnz + 1, size=(rows, nnz), dtype=np.int64)
    base.sort(axis=1)
    return base + np.arange(nnz, dtype=np.int64)


def sample_values(rng, shape, kind, decimals):
    """Integer numerators ``q`` of the values ``q / 10**decimals``."""
    scale = 10 ** decimals
    if kind == "uniform":
        return rng.integers(1, scale + 1, size=shape, dtype=np.int64)
    if kind == "normal":
        # rounding to the decimals may give 0; those become the smallest value of the draw's sign, so that
        # every row keeps its --nnz-per-row stored (non-zero) values
        q = np.rint(rng.standard_normal(shape) * scale).astype(np.int64)
        zero = q == 0
        q[zero] = rng.choice(np.array([-1, 1], dtype=np.int64), size=int(zero.sum()))
        return q
    if kind == "binary":
        return np.full(shape, scale, dtype=np.int64)
    raise ValueError(f"unknown value distribution {kind!r}")


def make_block(rng, w_star, rows, args):
    """Generate ``rows`` examples and return their text as bytes (one line each).

    Also returns the byte length of every line, and the labels (+1/-1).
    """
    n = w_star.shape[0]
    nnz = args.nnz_per_row
    idx = sample_sorted_indices(rng, rows, nnz, n)
    q = sample_values(rng, (rows, nnz), args.values, args.decimals)
    margin = (w_star[idx] * (q / 10.0 ** args.decimals)).sum(axis=1)
    labels = np.where(margin >= 0, 1, -1)
    flip = rng.random(rows) < args.label_noise
    labels[flip] = -labels[flip]

    # Label column: "+1" or "-1".
    lab_c = np.empty((rows, 2), np.uint8)
    lab_c[:, 0] = np.where(labels > 0, PLUS, MINUS)
    lab_c[:, 1] = ord("1")
    lab_m = np.ones((rows, 2), bool)

    # Tokens " INDEX:VALUE", shape (rows, nnz, width), flattened per row.
    shown = idx + (0 if args.zero_based else 1)
    idx_width = len(str(n if not args.zero_based else n - 1))
    idx_c, idx_m = digit_matrix(shown, idx_width)
    val_c, val_m = decimal_matrix(q, args.decimals)
    space_c = np.full((rows, nnz, 1), SPACE, np.uint8)
    colon_c = np.full((rows, nnz, 1), COLON, np.uint8)
    one_m = np.ones((rows, nnz, 1), bool)
    tok_c = np.concatenate([space_c, idx_c, colon_c, val_c], axis=2).reshape(rows, -1)
    tok_m = np.concatenate([one_m, idx_m, one_m, val_m], axis=2).reshape(rows, -1)

    nl_c = np.full((rows, 1), NEWLINE, np.uint8)
    nl_m = np.ones((rows, 1), bool)
    chars = np.concatenate([lab_c, tok_c, nl_c], axis=1)
    mask = np.concatenate([lab_m, tok_m, nl_m], axis=1)
    # Boolean indexing walks the matrix row by row: exactly the file text.
    return chars[mask].tobytes(), mask.sum(axis=1), labels


def open_output(path, compresslevel):
    """Binary stream for ``path``: stdout for ``-``, gzip for ``*.gz``."""
    if path == "-":
        return sys.stdout.buffer
    if path.endswith(".gz"):
        return gzip.open(path, "wb", compresslevel=compresslevel)
    return open(path, "wb")


def generate(args, out):
    """Write the data set to the binary stream ``out``; return (rows, bytes, positives)."""
    w_star = np.random.default_rng([args.seed, 0]).standard_normal(args.features)
    block_rows = rows_per_block(args.nnz_per_row)
    max_rows = args.rows if args.rows is not None else float("inf")
    target = args.target_bytes if args.target_bytes is not None else float("inf")
    rows_done = bytes_done = positives = 0
    block_no = 0
    while rows_done < max_rows and bytes_done < target:
        rng = np.random.default_rng([args.seed, 1, block_no])
        # Always generate a whole block, then cut it: the random streams, and so
        # the rows kept, do not depend on where the file stops.
        text, line_bytes, labels = make_block(rng, w_star, block_rows, args)
        rows = int(min(block_rows, max_rows - rows_done))
        if bytes_done + len(text) >= target:
            # Stop after the first line that brings the file to the target size.
            ends = bytes_done + np.cumsum(line_bytes)
            rows = min(rows, int(np.searchsorted(ends, target)) + 1)
        if rows < block_rows:
            text = text[: int(line_bytes[:rows].sum())]
            labels = labels[:rows]
        out.write(text)
        rows_done += rows
        bytes_done += len(text)
        positives += int((labels > 0).sum())
        block_no += 1
    return rows_done, bytes_done, positives


def parse_size(text):
    """Byte count from text such as ``1e9``, ``1000000``, ``500M`` or ``10G`` (powers of 10)."""
    units = {"K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    text = text.strip().upper().rstrip("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(float(text))


def build_parser():
    """Command-line interface."""
    p = argparse.ArgumentParser(
        description="Write a synthetic sparse binary classification data set "
        "in SVMlight/LIBSVM text format.",
        epilog="Without --rows, --target-bytes is required.",
    )
    p.add_argument("output", help="output file; '-' for stdout; a .gz name is gzip-compressed")
    p.add_argument("--rows", "-m", type=int, default=None, help="number of examples")
    p.add_argument("--features", "-n", type=int, default=100_000,
                   help="number of features (default 100000)")
    p.add_argument("--nnz-per-row", type=int, default=40,
                   help="non-zero features in every example (default 40)")
    p.add_argument("--label-noise", type=float, default=0.05,
                   help="probability of flipping each label (default 0.05)")
    p.add_argument("--values", choices=["uniform", "normal", "binary"], default="uniform",
                   help="value distribution: uniform (0,1], N(0,1) or all 1 (default uniform)")
    p.add_argument("--decimals", type=int, default=4,
                   help="digits after the decimal point (default 4)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--zero-based", action="store_true",
                   help="write 0-based feature indices (default 1-based)")
    p.add_argument("--target-bytes", type=parse_size, default=None,
                   help="stop once the (uncompressed) text reaches about this size, "
                   "e.g. 1e9, 1G, 500M")
    p.add_argument("--compresslevel", type=int, default=6, help="gzip level for .gz output")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary on stderr")
    return p


def main(argv=None):
    """Entry point."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.rows is None and args.target_bytes is None:
        parser.error("give --rows, --target-bytes or both")
    if args.rows is not None and args.rows < 0:
        parser.error("--rows must be >= 0")
    if args.features < 1 or not 0 <= args.nnz_per_row <= args.features:
        parser.error("need --features >= 1 and 0 <= --nnz-per-row <= --features")
    if not 0.0 <= args.label_noise <= 1.0:
        parser.error("--label-noise must be a probability")
    if not 0 <= args.decimals <= 15:
        parser.error("--decimals must be between 0 and 15")

    start = time.perf_counter()
    out = open_output(args.output, args.compresslevel)
    try:
        rows, nbytes, positives = generate(args, out)
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
    finally:
        if out is not sys.stdout.buffer:
            out.close()
        else:
            try:
                out.flush()
            except BrokenPipeError:
                pass
    seconds = time.perf_counter() - start
    if not args.quiet:
        print(f"wrote {rows} rows x {args.features} features, {args.nnz_per_row} nnz/row, "
              f"{nbytes / 1e6:.1f} MB of text ({positives / max(rows, 1):.1%} positive) "
              f"in {seconds:.1f} s ({nbytes / 1e6 / max(seconds, 1e-9):.0f} MB/s)",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
