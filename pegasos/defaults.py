"""Default settings and the names of the choices (no heavy imports here, so
that ``pegasos --help`` starts fast)."""

DEFAULT_LAMBDA = 1e-4     # regularisation parameter lambda
MIN_LAMBDA = 1e-300       # below it 1/lambda, the bound on ||w||^2 (Sec. 2), and the steps 1/(lambda t) leave float64
DEFAULT_EPOCHS = 10       # passes over the data when neither T nor epochs is given
DEFAULT_SEED = 1          # runs are reproducible unless a seed is chosen
DEFAULT_SHUFFLE_BUFFER = 100_000   # examples held by `train --stream` without --cache
MAX_WEIGHT = 1e150        # class and example weights above it overflow the weighted losses and the dual's box
DEFAULT_TOL = 0.002       # the automatic runs' tolerance: a certified relative gap, or a doubling's relative gain
DEFAULT_CACHE_MB = 100.0  # MiB of kernel rows cached (pegasos train --cache-mb)
MAX_POINTS = 1000         # most points of one grid of pegasos search (each is a cross-validation)
MAX_SPLIT = 100_000       # byte ranges of one file (each a shard the driver lists; train-shards --split)
MAX_LOCAL_WORKERS = 256   # worker processes of a local Dask cluster (--local-workers)
MAX_DEGREE = 2**31 - 1    # of the poly kernel: the compiled kernels take a C int
MAX_TRACE_POINTS = 1000   # check points per decade of t (--trace-points)
MAX_GAP_PASSES = 1_000_000        # dual passes of a certificate (objective --gap-passes)
MAX_COST = 1e150          # Crammer-Singer costs above it overflow the losses, as class weights above MAX_WEIGHT do
#: exact rounds of one epoch on shards when the batch size is automatic (fit_shards(auto_batch=True), train-shards
#: without -k): a round costs a round trip to every worker (10-60 ms on Dask), so k = ceil(n / ROUNDS_PER_EPOCH)
#: bounds an epoch's rounds (benchmarks/RESULTS_shard_defaults.md)
ROUNDS_PER_EPOCH = 128
DEFAULT_SAMPLE_SIZE = 1000         # examples of the step calibration's sample (and of the stream's first pass)
#: Training on shards keeps dense weight vectors in every column on each worker and exchanges them every
#: round, so it refuses data whose largest feature index n is beyond both DENSE_COLUMNS_FLOOR and
#: DENSE_COLUMNS_PER_VALUE times the values stored: a stray huge index set its memory (index 1e8 in two
#: lines: 1.6 GB), not the data.  The other trainers run on the used columns renumbered instead.
DENSE_COLUMNS_FLOOR = 1 << 24
DENSE_COLUMNS_PER_VALUE = 4

SAMPLINGS = ("uniform", "permutation", "shuffle-once", "sequential")
SCHEDULES = ("pegasos", "norma", "constant")
BIAS_MODES = ("none", "feature", "unregularized")
SOLVERS = ("auto", "pegasos", "dual")    # pegasos train --solver (pegasos.solver.plan)
AUTO_AVERAGE_FROM = 0.5   # Pegasos' output by default: the mean of the last half of the iterates (RESULTS_defaults.md)


def lambda_problem(lam):
    """Why ``lam`` cannot be lambda (a phrase, "lambda must be ..."), or None when it can: a real
    number (not a bool) in [MIN_LAMBDA, inf)."""
    import math
    import numbers

    if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not (math.isfinite(lam) and lam > 0):
        return f"lambda must be a positive number, got {lam!r}"
    if lam < MIN_LAMBDA:
        return (f"lambda must be at least {MIN_LAMBDA:g}, got {lam!r}: below it 1/lambda, the bound on "
                "||w||^2, and the steps 1/(lambda t) overflow float64")
    return None


def max_cache_mb():
    """The largest kernel-row cache (``--cache-mb``, ``cache_mb=``) in MiB: the machine's physical memory
    (``os.sysconf``), or 2^20 MiB (1 TiB) where it is not known.  A larger bound is not a bound at all:
    ``--cache-mb 1e12`` let the cache of a9a's rbf run grow to 3.4 GB (155 MB with the default)."""
    import os

    try:
        return float(os.sysconf("SC_PAGE_SIZE")) * os.sysconf("SC_PHYS_PAGES") / (1 << 20)
    except (AttributeError, ValueError, OSError):
        return float(1 << 20)

#: the bound of the dual's coordinate-ascent work, a visit of example i costing 1 + nnz(x_i): the passes of
#: the dual solver and finish (pegasos.finish), and of the streamed dual (pegasos.stream); 2000 noisy rows at
#: lambda = 1e-6 stopped at 2^28 with a gap of 57% and were certified within 0.17% at 2^32
DUAL_WORK = 1 << 32
