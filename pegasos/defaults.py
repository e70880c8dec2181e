"""Default settings and the names of the choices (no heavy imports here, so
that ``pegasos --help`` starts fast)."""

DEFAULT_LAMBDA = 1e-4     # regularisation parameter lambda
DEFAULT_EPOCHS = 10       # passes over the data when neither T nor epochs is given
DEFAULT_SEED = 1          # runs are reproducible unless a seed is chosen
DEFAULT_SHUFFLE_BUFFER = 100_000   # examples held by `train --stream` without --cache
DEFAULT_SAMPLE_SIZE = 1000         # examples of the step calibration's sample (and of the stream's first pass)

SAMPLINGS = ("uniform", "permutation", "shuffle-once", "sequential")
SCHEDULES = ("pegasos", "norma", "constant")
BIAS_MODES = ("none", "feature", "unregularized")
