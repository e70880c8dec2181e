"""Training options: every setting of ``pegasos train``, validated once.

:class:`TrainOptions` describes a training run; the command line, the Python
API (:func:`pegasos.fit`, :func:`pegasos.train`) and the model-file header
all go through it:

- :meth:`TrainOptions.validate` checks every setting that does not depend on
  the data and raises :class:`~pegasos.errors.ParameterError` naming the
  option as the user spelled it (``--t0`` on the command line, ``step_offset=``
  in Python);
- :meth:`TrainOptions.plan` derives, once, what a run of m examples needs:
  T from the epochs, the first averaged iteration, the step offset t0, and the projection (forced for the squared hinge, Sec. 5);
- :meth:`TrainOptions.header` writes the training settings of a model file
  from the options and the plan, and :meth:`TrainOptions.from_header` reads
  them back, through one table (:data:`HEADER_FIELDS`).

Only the standard library is imported here, so the command line can build
and check options before NumPy is loaded.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .defaults import (AUTO_AVERAGE_FROM, BIAS_MODES, DEFAULT_CACHE_MB, DEFAULT_EPOCHS, DEFAULT_LAMBDA, DEFAULT_SEED, DEFAULT_TOL,  # noqa: F401
                       MAX_DEGREE, MAX_TRACE_POINTS, MAX_WEIGHT, SAMPLINGS, SCHEDULES, lambda_problem)
from .errors import ParameterError
from .outcome import dual_only
from .solver import Problem, Solver, check_solver, plan, psd_kernel

#: the losses and the task each one trains (paper Sec. 5)
LOSSES = ("hinge", "log", "squared-hinge", "eps-insensitive", "rank")
TASK_OF_LOSS = {"hinge": "binary", "log": "binary", "squared-hinge": "binary",
                "eps-insensitive": "regression", "rank": "ranking"}
MULTICLASS_METHODS = ("ovr", "crammer-singer")
#: the bias of a run that gives none, by task: an intercept for regression, whose targets seldom have mean 0
#: (SVMlight's -z r learns b too, unregularised; this one is regularised: pegasos.outcome.held_intercept says
#: when that holds it back); none for classification (the paper's problem, LIBLINEAR's -B -1, what the
#: certificates and the dual solver are written for) and ranking (a bias cancels in the pairs)
DEFAULT_BIAS = {"binary": "none", "regression": "feature", "ranking": "none"}
KERNELS = ("linear", "poly", "rbf", "sigmoid")

#: how each option is spelled on the command line (the API spells it ``field=``); the shuffle buffer is what
#: --stream trains through, whether or not --shuffle-buffer sized it
CLI_NAMES = {
    "lam": "--lambda", "iterations": "-T/--iterations", "epochs": "--epochs", "batch_size": "-k/--batch-size",
    "sampling": "--sampling", "projection": "--projection", "average": "--average",
    "average_from": "--average-from", "bias": "--bias", "seed": "--seed", "loss": "--loss",
    "epsilon": "-p/--epsilon", "class_weight": "-w", "step_offset": "--t0",
    "schedule": "--schedule", "eta": "--eta",
    "multiclass": "--multiclass", "cost": "--cost-matrix", "kernel": "--kernel", "gamma": "--gamma",
    "degree": "--degree", "coef0": "--coef0", "budget": "--budget", "cache_mb": "--cache-mb",
    "n_threads": "--jobs", "shuffle_buffer": "--stream / --shuffle-buffer", "allow_one_class": "--allow-one-class",
    "tol": "--tol", "tol_gap": "--tol-gap", "preset": "--paper", "max_classes": "--max-classes",
    "early_stop": "--early-stop", "early_stop_metric": "--early-stop-metric", "trace_points": "--trace-points",
    "trace": "--trace", "validation": "--validation", "trace_sample": "--trace-sample",
    "restart_schedule": "--restart-schedule", "resume_state": "--resume-state",
    "finish": "--finish", "finish_passes": "--finish-passes", "solver": "--solver", "init": "--init",
}
EARLY_STOP_METRICS = ("accuracy", "error", "objective", "loss", "mse")
PRESETS = ("auto", "paper")
MAX_ITERATIONS = 10**12     # T beyond this runs for weeks (and beyond 2^63 overflows the loop's counter)
DEFAULT_MAX_CLASSES = 1000  # more labels than this in a classification run is refused (sector has 105)
FINISHES = ("dual", "none")
MAX_FINISH_PASSES = 1_000_000
ON_SHARDS = "on shards the run is plain mini-batch Pegasos over the blocks"


def fmt_label(value, text=None):
    """A label value as written in files: ``text`` if given, else 3 for 3.0, repr otherwise."""
    if text:
        return text
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def iterations_for(m, k, epochs, sampling):
    """Number of iterations T for ``epochs`` passes over m examples with batch k.

    Permutation, sequential and shuffle-buffer sampling cut each epoch into
    ceil(m/k) batches (the last one may be short), so T = epochs * ceil(m/k),
    rounded up; uniform sampling draws T = ceil(epochs * m / k) batches of k.
    """
    if sampling == "uniform":
        return max(1, math.ceil(epochs * m / k - 1e-9))
    return max(1, math.ceil(epochs * math.ceil(m / k) - 1e-9))


def norma_p(T):
    """Norma's step factor p = 0.5 (2 + 0.5 T^(-1/2))^(1/2) for a run of T
    iterations (Kivinen et al.'s Thm 4, as used in the paper's Sec. 7.6):
    0.7159 at T = 100, 0.7071 as T grows."""
    return 0.5 * math.sqrt(2.0 + 0.5 / math.sqrt(T))


def _is_int(value):
    return not isinstance(value, bool) and isinstance(value, numbers.Integral)


def _is_real(value):
    return not isinstance(value, bool) and isinstance(value, numbers.Real)


@dataclass(frozen=True)
class RunPlan:
    """What a run derives from its options and its number of examples.

    Attributes
    ----------
    m : int
        Examples (pairs for the rank loss) the sampler draws from.
    T : int
        Iterations (each on a batch of k).
    k : int
        Batch size.
    avg_start : int
        First averaged iteration (0: the output is the last iterate w_{T+1}).
    average_from : float or None
        F of suffix averaging (0 for Theorem 1's mean of all iterates).
    t0 : float
        Step offset: eta_t = 1/(lambda (t + t0)).
    projection : bool
        Whether each step is projected onto the ball of Eq. (6).
    schedule : str
        The step rule ("pegasos", "norma" or "constant").
    eta : float
        Norma's p or the constant step (0.0 for "pegasos").
    """

    m: int
    T: int
    k: int
    avg_start: int
    average_from: float | None
    t0: float
    projection: bool
    schedule: str = "pegasos"
    eta: float = 0.0


@dataclass(frozen=True)
class TrainOptions:
    """Every setting of a Pegasos training run, with its default.

    Solver (paper Fig. 1 and 2):

    lam : float > 0
        Regularisation parameter lambda of Eq. (1) (LIBLINEAR's C = 1/(lambda m),
        scikit-learn's ``alpha``).
    iterations : int >= 0 or None
        T, the number of iterations (each uses k examples).  T = 0 only
        with the dual finish (``finish="dual"`` or ``finish_passes``): its
        passes then start from w = 0, which is what the automatic length
        does first where the finish applies (:mod:`pegasos.autotune`).
    epochs : float > 0 or None
        Passes over the data instead of T (:func:`iterations_for`); when
        neither is given, ``DEFAULT_EPOCHS``.
    batch_size : int >= 1
        k, the mini-batch size of Fig. 2 (the sub-gradient averages Eq. (8)).
    sampling : {"uniform", "permutation", "shuffle-once", "sequential"} or None
        i.i.d. draws (the analysed case), a new random order each epoch
        (Sec. 7.5), one random order drawn from the seed at the start and
        reused every epoch (Sec. 7.5's third variant), or file order; None:
        the preset's.
    projection : bool
        Project onto the ball of radius 1/sqrt(lambda) after each step (Eq. (6)).
    average : bool or None
        True: output the mean of w_1..w_T (Theorem 1); False: the last
        iterate w_{T+1} (or the suffix mean of ``average_from``); None: the
        preset's (auto: the mean of the last half).
    average_from : float in [0, 1) or None
        Output the mean of w_t for t >= ceil(F T) (suffix averaging).
    step_offset : float >= 0 or None
        t0 of eta_t = 1/(lambda (t + t0)); 0 is the paper's step; None: chosen
        from the data (preset "auto", see :mod:`pegasos.autotune`).  A first
        step size eta0 (scikit-learn's SGD) is t0 = 1/(lambda eta0).
    schedule : {"pegasos", "norma", "constant"}
        The step rule (every rule shrinks by 1 - eta_t lambda, then adds
        eta_t/k times the sub-gradient sum): "pegasos", eta_t = 1/(lambda (t +
        t0)) (Fig. 1); "norma", eta_t = p/(lambda sqrt(t)) with the projection
        of Eq. (6) always on (Sec. 7.6); "constant", eta_t = eta (Zhang 2004,
        Sec. 7.6).  When eta_t lambda >= 1 the shrink factor is taken as 0:
        the step sets w to eta_t/k times the sub-gradient sum of the batch.
        t0, and the automatic step offset and number of epochs of
        the "auto" preset, are for "pegasos" only.
    eta : float > 0 or None
        Norma's p (default :func:`norma_p` of T) or the constant step
        (required for "constant"); not for "pegasos".
    seed : int >= 0
        Seed of the PCG64 generator that draws the examples.
    tol : float in (0, 1)
        Stopping rule of the automatic number of epochs: stop when doubling
        the epochs improves the training objective by less than this
        fraction (:func:`pegasos.autotune.train_until_converged`).
    tol_gap : float in (0, 1) or None
        Instead of ``tol``: lengthen the run (doubling the epochs) until the
        certified relative duality gap (:func:`pegasos.duality_gap`) of the
        model is at most this (:func:`pegasos.autotune.train_until_certified`);
        the hinge or squared hinge, no bias or ``bias="feature"``, binary or
        one-vs-rest, neither T nor epochs given.
    solver : {"auto", "pegasos", "dual"}
        Which solver trains the run (:func:`pegasos.solver.plan`): Pegasos, dual coordinate ascent
        from w = 0 until certified within ``tol``, or the rule of "auto" between them.
    finish : {None, "dual", "none"}
        Dual passes after a Pegasos run (:mod:`pegasos.finish`): "dual" after a run of a given T or
        epochs, from the model's margins until the better of the two models is certified within
        ``tol`` (an error where the dual cannot run, or without T or epochs); "none" or None: the
        Pegasos run as it ended.  (The dual solver alone, :func:`pegasos.solver.run_options`, is
        T = 0 with ``finish="dual"``.)
    finish_passes : int, tuple of int or None
        Run exactly this many finishing passes (per class for one-vs-rest:
        one int for all or one per class) after the run of the given T or
        epochs: what a finished model's header records, so that its
        settings retrain it.
    preset : {"auto", "paper"}
        What unset settings become: "auto" (permutation sampling, suffix
        averaging, t0 and epochs from the data) or "paper" (Fig. 1 as run
        in Sec. 7: i.i.d. sampling, last iterate, eta_t = 1/(lambda t),
        10 epochs).
    n_threads : int >= 1
        Threads; the model is bit-identical for any number.  One-vs-rest
        trains classes in parallel.  For a batch of k >= 16 examples holding
        on average at least 1600 stored values (k times the mean row length;
        ``pegasos._core.PARALLEL_MIN_BATCH`` and ``PARALLEL_MIN_VALUES``, from
        the break-even points measured on 2 cores: k = 128 on a9a, k = 16 on a
        50000-feature set; 1.5x and 1.7x at k = 4096, benchmarks/RESULTS.md)
        the margins of the batch are split among the threads and the step of
        Eq. (8) is added by feature ranges, one range per thread, with the
        same floating-point operations in the same order as one thread.  The
        iterations run in timed chunks on the threads or on one thread,
        whichever is faster at the time.  Smaller batches, the rank loss,
        Crammer-Singer and a build without OpenMP run serially; there, on
        rows holding 64 MB or more, a second thread reads the rows of the
        random order ahead of the loop and of the dual finish's passes, in
        the chunks where timing shows that faster
        (:func:`pegasos._core.prefetch_thread`).

    Problem (Sec. 5, 6):

    loss : {"hinge", "log", "squared-hinge", "eps-insensitive", "rank"}
    epsilon : float >= 0
        Width of the insensitive zone of the eps-insensitive loss.
    bias : {"none", "feature", "unregularized"} or None
        No bias; a constant feature 1 (regularised, LIBLINEAR -B 1); or b
        updated by its sub-gradient (Sec. 6, no guarantee).  None (the
        default) is the task's, :data:`DEFAULT_BIAS`: "feature" for the
        eps-insensitive loss, "none" otherwise; the options hold the
        resolved value (``bias_defaulted`` says it was not given), and
        :meth:`replace` of the loss resolves it again.
    class_weight : dict {label value: weight > 0} or None
        Multiplies the loss of each class's examples (LIBLINEAR -wi).
    multiclass : {"ovr", "crammer-singer"} or None
        Method for more than two labels (None: one-vs-rest when the data
        have more than two labels).
    cost : tuple of K*K floats or None
        Crammer-Singer costs delta(true, predicted), row-major.
    allow_one_class : bool
        Accept data of one class (-1, 0 or +1) for binary training.
    max_classes : int >= 2
        Most classes a multiclass run accepts (each costs a weight vector of
        n_features); more, or labels that are not integers, is an error that
        points to the eps-insensitive loss.

    Kernels (Fig. 3):

    kernel : {"linear", "poly", "rbf", "sigmoid"}
    gamma : float > 0 or None (1/n_features); degree : int >= 1 or None (3);
    coef0 : float or None (0); budget : int >= 1 or None; cache_mb : float >= 0

    Streaming:

    shuffle_buffer : int >= 1 or None
        Train in passes over a file through a buffer of this many examples.

    Checks during the run (:mod:`pegasos.trace`; linear binary and regression):

    trace_points : int >= 0
        Check points per decade of t (log-spaced), besides every epoch end.
    early_stop : int >= 1 or None
        Patience: stop when the validation metric has not improved for this
        many checks (from the end of the first epoch on; with suffix
        averaging, only the checks from the average's start count) and output
        the best model seen; needs validation examples and T or epochs.
    early_stop_metric : {"accuracy", "error", "objective", "loss", "mse"} or None
        The validation metric of early stopping (None: accuracy for
        classification, mse for regression).
    Resuming (``pegasos.fit(..., init=MODEL)``, ``pegasos train --init``):

    restart_schedule : bool
        Start from the model's weights with a new step schedule (t from 1)
        instead of continuing its run.
    resume_state : bool or None
        Write the resume section (the solver state) into the model file;
        None: only for a run that resumed one (linear binary and regression).
    given : frozenset of field names or None
        The settings given by the user; when resuming, the others come from
        the model's header.  None: those that differ from the defaults.
    """

    lam: float = DEFAULT_LAMBDA
    iterations: int | None = None
    epochs: float | None = None
    batch_size: int = 1
    sampling: str | None = None
    projection: bool = False
    average: bool | None = None
    average_from: float | None = None
    step_offset: float | None = None
    schedule: str = "pegasos"
    eta: float | None = None
    tol: float = DEFAULT_TOL
    tol_gap: float | None = None
    solver: str = "auto"
    finish: str | None = None
    finish_passes: object = None
    preset: str = "auto"
    max_classes: int = DEFAULT_MAX_CLASSES
    seed: int = DEFAULT_SEED
    n_threads: int = 1
    loss: str = "hinge"
    epsilon: float = 0.1
    bias: str | None = None     # None: DEFAULT_BIAS of the task, resolved at construction
    class_weight: dict | None = None
    multiclass: str | None = None
    cost: tuple | None = None
    allow_one_class: bool = False
    kernel: str = "linear"
    gamma: float | None = None
    degree: int | None = None
    coef0: float | None = None
    budget: int | None = None
    cache_mb: float = DEFAULT_CACHE_MB
    shuffle_buffer: int | None = None
    trace_points: int = 10
    early_stop: int | None = None
    early_stop_metric: str | None = None
    restart_schedule: bool = False
    resume_state: bool | None = None
    spelling: str = "api"       # "cli": messages name --options; not a training setting
    given: frozenset | None = None     # the settings the user gave (resuming takes the others from the model)
    bias_defaulted: bool = field(default=False, init=False, repr=False, compare=False)   # bias was None

    def __post_init__(self):
        self._settle_preset()
        if self.class_weight is not None and not isinstance(self.class_weight, dict):
            try:
                object.__setattr__(self, "class_weight", dict(self.class_weight))
            except (TypeError, ValueError):
                raise ParameterError(f"{self.subject('class_weight')}: expected a mapping "
                                     f"{{label: weight}}, got {self.class_weight!r}") from None
        if self.class_weight is not None and not self.class_weight:
            object.__setattr__(self, "class_weight", None)
        if self.cost is not None and not isinstance(self.cost, tuple):
            try:
                flat = [float(v) for v in _flatten(self.cost)]
            except (TypeError, ValueError):
                raise ParameterError(f"{self.subject('cost')}: the cost matrix must hold numbers") from None
            object.__setattr__(self, "cost", tuple(flat))

    def _settle_preset(self):
        """Fill the settings left unset (None) from the task (the bias, :data:`DEFAULT_BIAS`) and the preset.

        "auto": permutation sampling (i.i.d. pairs for the rank loss) and the
        mean of the last half of the iterates (average_from 0.5; not with a
        kernel budget); the step offset t0 and, when neither T nor epochs is
        given, the number of epochs are chosen from the data by
        :func:`pegasos.fit` (:mod:`pegasos.autotune`) for linear binary,
        regression and multiclass models, and are t0 = 0 and DEFAULT_EPOCHS
        otherwise (ranking, kernels, streaming).
        "paper": Fig. 1 as in Sec. 7: i.i.d. sampling, the last iterate w_{T+1},
        eta_t = 1/(lambda t), DEFAULT_EPOCHS epochs.
        """
        if self.bias is None:
            object.__setattr__(self, "bias", DEFAULT_BIAS[self.task])
            object.__setattr__(self, "bias_defaulted", True)
        auto = self.preset == "auto"
        if self.sampling is None:
            object.__setattr__(self, "sampling", "permutation" if auto and self.loss != "rank" else "uniform")
        if self.average is None:
            if auto and self.average_from is None and self.budget is None:
                object.__setattr__(self, "average_from", AUTO_AVERAGE_FROM)
            object.__setattr__(self, "average", False)
        if self.step_offset is None and not auto:
            object.__setattr__(self, "step_offset", 0.0)
        if self.finish is None and not auto and self.finish_passes is None:
            object.__setattr__(self, "finish", "none")

    @property
    def step_is_automatic(self) -> bool:
        """Whether :func:`pegasos.fit` chooses t0 from the data (no t0 given, preset "auto",
        the Pegasos step rule)."""
        return self.step_offset is None and self.schedule == "pegasos"

    @property
    def length_is_automatic(self) -> bool:
        """Whether :func:`pegasos.fit` chooses the number of epochs (neither T nor epochs given, preset "auto",
        the Pegasos step rule)."""
        return (self.preset == "auto" and self.iterations is None and self.epochs is None
                and self.schedule == "pegasos")

    @property
    def kernel_dual(self) -> bool:
        """Whether a kernel model is trained by the dual solver (:func:`pegasos.kernel.fit_kernel_dual`)
        instead of Pegasos' Fig. 3: where :func:`pegasos.solver.plan` chooses the dual, and with T = 0
        and ``finish="dual"`` where no Pegasos setting asks for Fig. 3 (no budget, no projection, k = 1)
        and the kernel is positive semi-definite (rbf, poly with coef0 >= 0; sigmoid is not)."""
        if self.kernel == "linear" or self.finish_passes is not None:
            return False
        if self.iterations == 0:
            return self.finish == "dual" and psd_kernel(self.kernel, self.coef0) and self.budget is None \
                and not self.projection and self.batch_size == 1
        try:
            return plan(Problem(m=0), self).solver is Solver.DUAL
        except ParameterError:
            return False

    @property
    def finishes_given_length(self) -> bool:
        """Whether a run of a given T or epochs (T = 0: the dual solver alone) is finished in the dual
        after its T iterations: with ``finish_passes`` or ``finish="dual"``, for linear models, never
        with ``tol_gap`` (:func:`pegasos.solver.run_options` sets them)."""
        if self.length_is_automatic or self.tol_gap is not None or self.kernel != "linear":
            return False
        return self.finish_passes is not None or self.finish == "dual"

    # ------------------------------------------------------------ naming --
    def name(self, field: str) -> str:
        """The option as the user spelled it: ``--t0`` (command line) or ``step_offset=`` (Python)."""
        if self.spelling == "cli":
            return CLI_NAMES.get(field, field)
        return f"{field}="

    def _finish_dual(self):
        """``--finish dual`` or ``finish="dual"``, as the user spells it."""
        return "--finish dual" if self.spelling == "cli" else 'finish="dual"'

    def subject(self, field: str) -> str:
        """The option as the subject of a message, ``--t0: ...`` or ``step_offset: ...`` (no ``step_offset=:``)."""
        name = self.name(field)
        return name[:-1] if name.endswith("=") else name

    def _fail(self, field, message):
        raise ParameterError(f"{self.subject(field)}: {message}")

    def replace(self, **changes: Any) -> TrainOptions:
        """A copy with some settings changed (the options are immutable); a bias not given follows a
        changed loss (:data:`DEFAULT_BIAS`)."""
        if self.bias_defaulted and "bias" not in changes:
            changes["bias"] = None
        return replace(self, **changes)

    @property
    def task(self) -> str:
        """"binary", "regression" or "ranking": what the loss trains (multiclass is decided by the data)."""
        return TASK_OF_LOSS.get(self.loss, "binary")

    # -------------------------------------------------------- validation --
    def validate(self) -> TrainOptions:
        """Check every setting that does not depend on the data.

        Returns
        -------
        TrainOptions
            ``self``, so that ``TrainOptions(...).validate()`` chains.

        Raises
        ------
        ParameterError
            The first setting out of range or two settings that exclude each
            other, named as the user spelled them.
        """
        problem = lambda_problem(self.lam)
        if problem is not None:
            self._fail("lam", problem)
        if self.iterations is not None and self.epochs is not None:
            raise ParameterError(f"give either the number of iterations T ({self.name('iterations')}) or the "
                                 f"number of epochs ({self.name('epochs')}), not both")
        if self.iterations is not None:
            if not _is_int(self.iterations):
                self._fail("iterations", f"the number of iterations T must be an integer, got {self.iterations!r}")
            dual = self.finish == "dual" or self.finish_passes is not None
            if self.iterations < 0 or (self.iterations == 0 and not dual):
                self._fail("iterations", f"the number of iterations T must be positive, got {self.iterations}"
                                         + (" (T = 0, no Pegasos iteration, goes with the dual finish: "
                                            f"{self._finish_dual()} or {self.name('finish_passes')})"
                                            if self.iterations == 0 else ""))
            if self.iterations > MAX_ITERATIONS:
                self._fail("iterations", f"T = {self.iterations} iterations is more than {MAX_ITERATIONS:.0e} (weeks of "
                                         "training); give fewer")
        if self.epochs is not None and not (_is_real(self.epochs) and math.isfinite(self.epochs)
                                            and self.epochs > 0):
            zero = _is_real(self.epochs) and self.epochs == 0
            self._fail("epochs", f"the number of epochs must be a positive finite number, got {self.epochs!r}"
                                 + (f" (no Pegasos iteration is {'-T 0' if self.spelling == 'cli' else 'iterations=0'}, with "
                                    f"{self._finish_dual()} or {self.name('finish_passes')})" if zero else ""))
        if not _is_int(self.batch_size):
            self._fail("batch_size", f"the batch size k must be an integer, got {self.batch_size!r}")
        if self.batch_size <= 0:
            self._fail("batch_size", f"the batch size k must be positive, got {self.batch_size}")
        if self.sampling not in SAMPLINGS:
            self._fail("sampling", f"sampling must be one of {', '.join(SAMPLINGS)}, got {self.sampling!r}")
        if self.average and self.average_from is not None:
            raise ParameterError(f"give either {self.name('average')} or {self.name('average_from')}, not both")
        if self.average_from is not None and not (_is_real(self.average_from)
                                                  and 0.0 <= self.average_from < 1.0):
            self._fail("average_from", f"average-from must be in [0, 1), got {self.average_from!r}")
        if self.bias not in BIAS_MODES:
            self._fail("bias", f"bias must be one of {', '.join(BIAS_MODES)}, got {self.bias!r}")
        if not _is_int(self.seed) or not 0 <= self.seed < 2 ** 64:
            # (the generators of the dual passes keep it in 64 bits; 2^64 crashed them with an OverflowError)
            self._fail("seed", f"the seed must be a whole number from 0 to 2^64 - 1, got {self.seed!r}")
        if not _is_int(self.n_threads) or self.n_threads < 1:
            self._fail("n_threads", f"the number of threads must be a positive integer, got {self.n_threads!r}")
        if self.loss not in LOSSES:
            self._fail("loss", f"loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        if not (_is_real(self.epsilon) and math.isfinite(self.epsilon) and self.epsilon >= 0):
            self._fail("epsilon", f"epsilon must be >= 0, got {self.epsilon!r}")
        if self.preset not in PRESETS:
            self._fail("preset", f"preset must be one of {', '.join(PRESETS)}, got {self.preset!r}")
        if self.step_offset is not None and not (_is_real(self.step_offset) and math.isfinite(self.step_offset)
                                                 and self.step_offset >= 0):
            self._fail("step_offset", f"the step offset t0 must be >= 0, got {self.step_offset!r}")
        if not _is_int(self.max_classes) or self.max_classes < 2:
            self._fail("max_classes", f"the class bound must be an integer >= 2, got {self.max_classes!r}")
        if not (_is_real(self.tol) and 0 < self.tol < 1):
            # a fraction of the objective: at 1 or more every rule it drives holds at once (w = 0 has a
            # certified gap of at most 1), and the empty model was written as "certified"
            self._fail("tol", f"the stopping tolerance is a fraction of the objective, a number in (0, 1), "
                              f"got {self.tol!r}")
        if self.tol_gap is not None:
            self._validate_tol_gap()
        check_solver(self.solver, self)
        self._validate_finish()
        self._validate_schedule()
        self._validate_classes()
        self._validate_kernel()
        self._validate_streaming()
        self._validate_checks()
        if not isinstance(self.restart_schedule, bool):
            self._fail("restart_schedule", f"expected True or False, got {self.restart_schedule!r}")
        if self.resume_state is not None and not isinstance(self.resume_state, bool):
            self._fail("resume_state", f"expected True, False or None, got {self.resume_state!r}")
        if self.resume_state and self.early_stop is not None:
            raise ParameterError(f"{self.subject('resume_state')}: with {self.name('early_stop')} the model is the "
                                 "best one seen, not where the run ended, so it cannot be resumed")
        if self.resume_state and (self.kernel != "linear" or self.task == "ranking" or self.multiclass is not None
                                  or self.shuffle_buffer is not None):
            raise ParameterError(f"{self.subject('resume_state')}: the resume section is written for linear binary "
                                 "classifiers and regression trained in memory or from a cache")
        return self

    def _validate_tol_gap(self):
        if not (_is_real(self.tol_gap) and 0 < self.tol_gap < 1):
            self._fail("tol_gap", f"the certified relative gap must be a number in (0, 1), got {self.tol_gap!r}")
        if self.schedule != "pegasos":
            raise ParameterError(f"{self.name('tol_gap')} lengthens a run of the Pegasos step: it does not apply "
                                 f"to {self.name('schedule')} {self.schedule}")
        if not self.length_is_automatic:
            given = self.name("iterations") if self.iterations is not None else self.name("epochs")
            raise ParameterError(f"{self.name('tol_gap')} chooses the length itself: drop {given}"
                                 + (f" and {self.name('preset')}" if self.preset != "auto" else ""))
        if self.loss not in ("hinge", "squared-hinge", "rank") or self.bias == "unregularized" \
                or self.kernel != "linear" or self.shuffle_buffer is not None:
            raise ParameterError(f"{self.name('tol_gap')} needs the certificate of the duality gap: linear models "
                                 "trained in memory with the hinge, squared hinge or rank loss, no bias or a "
                                 "feature bias, binary, one-vs-rest or Crammer-Singer")
        if self.loss == "rank" and self.finish == "none":
            raise ParameterError(f"{self.name('tol_gap')} with the rank loss runs the dual passes on its pairs: "
                                 f"drop {self.name('finish')} none")
        if self.multiclass == "crammer-singer" and self.finish == "none":
            raise ParameterError(f"{self.name('tol_gap')} with Crammer-Singer runs its dual passes from W = 0: "
                                 f"drop {self.name('finish')} none")
        if self.early_stop is not None:
            raise ParameterError(f"give either {self.name('tol_gap')} or {self.name('early_stop')}, not both")

    def finish_unavailable(self, on_shards: bool = False) -> str | None:
        """Why the dual finish (:mod:`pegasos.finish`) cannot run with these options (a phrase), or None.

        It needs a linear model with the hinge, the squared hinge or the rank loss (the hinge of the
        pair differences, :func:`pegasos.examples.pair_differences`), bias "none" or "feature",
        binary or one-vs-rest, the Pegasos step rule, the data in memory (not streamed, nor on shards:
        ``on_shards``, a run of :func:`pegasos.engine_dask.fit_shards`), and no early stopping (which
        returns the best model seen) or resume section (the state of a Pegasos run).
        """
        if self.kernel != "linear":
            if self.kernel_dual:
                return None
            return ("with a kernel it is the dual solver alone, from alpha = 0 (T = 0 or no T nor epochs), "
                    "without a budget, projection or k > 1, and a positive semi-definite kernel (not sigmoid, "
                    "nor poly with coef0 < 0)")
        if self.loss not in ("hinge", "squared-hinge", "rank"):
            return f"the dual is known for the hinge, the squared hinge and the rank loss, not the {self.loss} loss"
        if self.bias == "unregularized":
            return "an unregularized bias adds an equality constraint to the dual"
        if self.multiclass == "crammer-singer" and not (self.iterations == 0 or self.length_is_automatic):
            return (f"Crammer-Singer's dual passes start from W = 0: give {self.name('iterations')} 0, or no "
                    "length (the default)")
        if self.schedule != "pegasos":
            return "it finishes a run of the Pegasos step"
        if self.shuffle_buffer is not None:
            return "it needs the data in memory (not streamed)"
        if on_shards:
            return f"it needs the data in memory ({ON_SHARDS})"
        if self.early_stop is not None:
            return f"{self.name('early_stop')} returns the best model seen during the run"
        if self.resume_state:
            return f"{self.name('resume_state')} keeps the state of the Pegasos run, which w(alpha) is not"
        return None

    def check_finish(self, on_shards: bool = False) -> None:
        """Refuse a dual finish asked for (``finish="dual"``, ``finish_passes``, or ``tol_gap``, which runs
        through it, on shards) where it does not apply
        (:meth:`finish_unavailable`, with ``on_shards`` for a run on shards); the one check behind
        :meth:`validate`, :func:`pegasos.engine_dask.fit_shards` and the estimators.

        Raises
        ------
        ParameterError
            A finish value other than None, "dual" and "none", or a finish asked for where it does not
            apply; one line naming the option as the user spelled it.
        """
        if on_shards and self.tol_gap is not None:
            self._fail("tol_gap", f"the certified gap needs the data in memory ({ON_SHARDS}); use pegasos "
                                  "objective --gap on the model")
        if self.finish is not None and self.finish not in FINISHES:
            self._fail("finish", f"the finish must be one of {', '.join(FINISHES)}, got {self.finish!r}")
        if self.finish == "dual" or self.finish_passes is not None:
            why = self.finish_unavailable(on_shards)
            if why is not None:
                dual = " dual" if self.spelling == "cli" else "'dual'"
                given = self.name("finish") + dual if self.finish == "dual" else self.name("finish_passes")
                raise ParameterError(f"{given}: the dual finish does not apply here: {why}")

    def _validate_finish(self):
        self.check_finish()
        if self.finish_passes is None:
            return
        items = self.finish_passes if isinstance(self.finish_passes, (tuple, list)) else (self.finish_passes,)
        if not items or not all(_is_int(p) and 0 <= p <= MAX_FINISH_PASSES for p in items):
            self._fail("finish_passes", f"the finishing passes must be whole numbers between 0 and "
                                        f"{MAX_FINISH_PASSES}, got {self.finish_passes!r}")
        if self.finish == "none":
            raise ParameterError(f"{self.name('finish_passes')} runs the dual finish: drop "
                                 f"{self.name('finish')} none")
        if self.length_is_automatic:
            raise ParameterError(f"{self.name('finish_passes')} finishes a run of a given length: give "
                                 f"{self.name('iterations')} or {self.name('epochs')} too (the automatic length "
                                 "chooses its passes itself)")
        if self.tol_gap is not None or self.early_stop is not None:
            raise ParameterError(f"{self.name('finish_passes')} does not go with {self.name('tol_gap')} or "
                                 f"{self.name('early_stop')}")

    def _validate_schedule(self):
        if self.schedule not in SCHEDULES:
            self._fail("schedule", f"the step rule must be one of {', '.join(SCHEDULES)}, got {self.schedule!r}")
        if self.eta is not None and not (_is_real(self.eta) and math.isfinite(self.eta) and self.eta > 0):
            self._fail("eta", f"the step must be a positive number, got {self.eta!r}")
        if self.schedule == "pegasos":
            if self.eta is not None:
                raise ParameterError(f"{self.name('eta')} sets the step of {self.name('schedule')} norma or "
                                     f"constant; the Pegasos step 1/(lambda (t + t0)) takes "
                                     f"{self.name('step_offset')}")
            return
        if self.schedule == "constant" and self.eta is None:
            raise ParameterError(f"{self.name('schedule')} constant needs the step: give {self.name('eta')} E")
        if self.step_offset:
            raise ParameterError(f"{self.name('step_offset')} offsets the Pegasos step; {self.name('schedule')} {self.schedule} "
                                 f"takes {self.name('eta')} instead")
        if self.kernel != "linear":
            raise ParameterError(f"{self.name('schedule')} {self.schedule}: kernels use the Pegasos step of Fig. 3 "
                                 f"(drop {self.name('schedule')})")

    def _validate_checks(self):
        if not _is_int(self.trace_points) or not 0 <= self.trace_points <= MAX_TRACE_POINTS:
            self._fail("trace_points", f"the check points per decade must be an integer in 0..{MAX_TRACE_POINTS}, "
                                       f"got {self.trace_points!r}")
        if self.early_stop is not None:
            if not _is_int(self.early_stop) or self.early_stop < 1:
                self._fail("early_stop", f"the patience must be a positive number of checks, got {self.early_stop!r}")
            if self.length_is_automatic:
                raise ParameterError(f"{self.name('early_stop')} replaces the automatic number of epochs by a "
                                     f"fixed budget: give {self.name('iterations')} or {self.name('epochs')}")
        if self.early_stop_metric is not None:
            if self.early_stop is None:
                raise ParameterError(f"{self.name('early_stop_metric')} chooses what {self.name('early_stop')} "
                                     f"watches: give {self.name('early_stop')} too")
            if self.early_stop_metric not in EARLY_STOP_METRICS:
                self._fail("early_stop_metric", f"the metric must be one of {', '.join(EARLY_STOP_METRICS)}, "
                                                f"got {self.early_stop_metric!r}")
            regression = self.task == "regression"
            if (self.early_stop_metric == "mse") != regression and self.early_stop_metric in ("mse", "accuracy",
                                                                                              "error"):
                self._fail("early_stop_metric", f"{self.early_stop_metric} is not a metric of "
                                                f"{'regression' if regression else 'classification'}")

    def _validate_classes(self):
        task = self.task
        if self.class_weight:
            if task != "binary":
                raise ParameterError(f"class weights ({self.name('class_weight')}) apply to classification, "
                                     f"not to the {self.loss} loss")
            for label, weight in self.class_weight.items():
                if not _is_real(label) or not math.isfinite(float(label)):
                    self._fail("class_weight", f"class labels must be numbers, got {label!r}")
                if not (_is_real(weight) and 0 < weight <= MAX_WEIGHT):
                    # (1e300 overflowed the objective: a RuntimeWarning, then "the calibration diverged")
                    self._fail("class_weight", f"the weight of class {fmt_label(float(label))} must be a "
                                               f"finite number in (0, {MAX_WEIGHT:g}], got {weight!r}")
        if self.multiclass is not None:
            if self.multiclass not in MULTICLASS_METHODS:
                self._fail("multiclass", f"multiclass must be one of {', '.join(MULTICLASS_METHODS)}, "
                                         f"got {self.multiclass!r}")
            if task != "binary":
                raise ParameterError(f"{self.name('multiclass')} needs a classification loss (hinge, log, "
                                     f"squared-hinge), not {self.loss}")
            if self.multiclass == "crammer-singer":
                if self.loss != "hinge":
                    raise ParameterError("Crammer-Singer uses its own multiclass hinge loss: leave "
                                         f"{self.name('loss')} at hinge")
                if self.bias == "unregularized":
                    raise ParameterError(f"Crammer-Singer supports {self.name('bias')} none or feature")
        if self.cost is not None:
            if self.multiclass != "crammer-singer":
                raise ParameterError(f"{self.name('cost')} needs {self.name('multiclass')} crammer-singer")
            if not all(math.isfinite(c) for c in self.cost):
                self._fail("cost", "the costs must be finite numbers")
        if task == "ranking":
            if self.sampling != "uniform":
                raise ParameterError(f"ranking samples pairs i.i.d.: use {self.name('sampling')} uniform")
            if self.bias != "none":
                raise ParameterError(f"a bias cancels in pairwise ranking: use {self.name('bias')} none")

    def _validate_kernel(self):
        kernel = self.kernel
        if kernel not in KERNELS:
            self._fail("kernel", f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
        if kernel == "linear":
            if any(v is not None for v in (self.gamma, self.degree, self.coef0, self.budget)):
                given = [self.name(f) for f in ("gamma", "degree", "coef0", "budget")
                         if getattr(self, f) is not None]
                raise ParameterError(f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to "
                                     f"{self.name('kernel')} poly, rbf or sigmoid, not linear")
        else:
            if self.loss != "hinge" or self.multiclass is not None:
                raise ParameterError("kernels support binary classification with the hinge loss only")
            if self.bias != "none":
                raise ParameterError(f"{self.name('bias')} {self.bias} is not supported with "
                                     f"{self.name('kernel')} {kernel}")
            if self.class_weight:
                raise ParameterError(f"class weights ({self.name('class_weight')}) are not supported with kernels")
            if self.step_offset:
                raise ParameterError(f"{self.name('step_offset')} applies to linear models")
            if self.budget is not None and (self.projection or self.average or self.average_from is not None):
                self._fail("budget", "a budget cannot be combined with projection or averaging")
        if self.gamma is not None and not (_is_real(self.gamma) and math.isfinite(self.gamma) and self.gamma > 0):
            self._fail("gamma", f"gamma must be a positive number, got {self.gamma!r}")
        if self.degree is not None and (not _is_int(self.degree) or self.degree < 1):
            self._fail("degree", f"degree must be an integer >= 1, got {self.degree!r}")
        if self.degree is not None and self.degree > MAX_DEGREE:
            self._fail("degree", f"degree must be at most {MAX_DEGREE}, got {self.degree!r}")
        if self.coef0 is not None and not (_is_real(self.coef0) and math.isfinite(self.coef0)):
            self._fail("coef0", f"coef0 must be a finite number, got {self.coef0!r}")
        if self.budget is not None and (not _is_int(self.budget) or self.budget < 1):
            self._fail("budget", f"the budget must be a positive integer number of support vectors, "
                                 f"got {self.budget!r}")
        if not (_is_real(self.cache_mb) and math.isfinite(self.cache_mb) and self.cache_mb >= 0):
            self._fail("cache_mb", f"the cache size must be a number of MiB >= 0, got {self.cache_mb!r}")

    def _validate_streaming(self):
        if self.shuffle_buffer is None:
            return
        if not _is_int(self.shuffle_buffer) or self.shuffle_buffer < 1:
            self._fail("shuffle_buffer", f"the shuffle buffer must hold at least 1 example, "
                                         f"got {self.shuffle_buffer!r}")
        if self.kernel != "linear" or self.multiclass is not None or self.cost is not None \
                or self.task == "ranking":
            raise ParameterError(f"{self.name('shuffle_buffer')} trains linear binary classifiers and "
                                 "regression; use --cache FILE for kernels, multiclass and ranking")

    # ---------------------------------------------------- derived values --
    @property
    def t0(self) -> float:
        """The step offset t0."""
        return float(self.step_offset or 0.0)      # unset: 0 unless fit() calibrated it

    def plan(self, m: int, sampling: str | None = None) -> RunPlan:
        """Derive the run for m examples (pairs for the rank loss).

        Parameters
        ----------
        m : int >= 1
            Examples the sampler draws from.
        sampling : str, optional
            The epoch rule of :func:`iterations_for` (default: the option's;
            the shuffle buffer counts epochs as permutation does).

        Raises
        ------
        ParameterError
            k larger than m.
        """
        k = int(self.batch_size)
        if k > m:
            self._fail("batch_size", f"the batch size k = {k} is larger than the number of examples m = {m}")
        if self.iterations is not None:
            T = int(self.iterations)
        else:
            T = iterations_for(m, k, DEFAULT_EPOCHS if self.epochs is None else self.epochs,
                               sampling or self.sampling)
            if T > MAX_ITERATIONS:
                self._fail("epochs", f"{self.epochs!r} epochs of {m} examples make T = {T:.3g} iterations, more than "
                                     f"{MAX_ITERATIONS:.0e} (weeks of training); give fewer")
        average_from = self.average_from
        if self.average and average_from is None:
            average_from = 0.0
        avg_start = 0 if average_from is None else max(1, math.ceil(average_from * T))
        # the squared hinge's gradient grows with the margin violation; the projection
        # onto a ball that holds w* keeps it bounded (the condition of Sec. 5)
        projection = bool(self.projection) or self.loss == "squared-hinge" or self.schedule == "norma"
        eta = 0.0
        if self.schedule == "norma":
            eta = float(self.eta) if self.eta is not None else norma_p(T)
        elif self.schedule == "constant":
            eta = float(self.eta)
        return RunPlan(m=int(m), T=T, k=k, avg_start=avg_start, average_from=average_from, t0=self.t0,
                       projection=projection, schedule=self.schedule, eta=eta)

    # ------------------------------------------------------ model header --
    def header(self, plan: RunPlan, sampling: str | None = None, examples: int | None = None) -> dict[str, Any]:
        """The model-file header entries of a run (str -> str), in :data:`HEADER_FIELDS` order.

        Parameters
        ----------
        plan : RunPlan
        sampling : str, optional
            What the header calls the sampling (``shuffle-buffer`` for the buffer).
        examples : int, optional
            The number of training examples m, when the sampler drew from
            something else (pairs, for the rank loss); default ``plan.m``.
        """
        avg = plan.avg_start if plan.T else 0       # T = 0: no iterate to average
        averaging = "last" if not avg else ("all" if avg == 1 else "suffix")
        if not plan.T and plan.average_from is not None:
            averaging = "all" if plan.average_from == 0 else "suffix"
        info = {
            "lambda": repr(float(self.lam)),
            "iterations": str(plan.T),
            "batch_size": str(plan.k),
            "sampling": sampling or self.sampling,
            "projection": "on" if plan.projection else "off",
            "averaging": averaging,
            "average_from": repr(float(plan.average_from)) if averaging != "last" else "-",
            "averaged_iterates": f"{avg}..{plan.T}" if avg else "-",
            "seed": str(self.seed),
            "train_examples": str(plan.m if examples is None else examples),
        }
        if self.loss == "eps-insensitive":
            info["epsilon"] = repr(float(self.epsilon))
        if plan.t0:
            info["step_offset"] = repr(float(plan.t0))
        if plan.schedule != "pegasos":
            info["schedule"] = plan.schedule
            info["eta"] = repr(float(plan.eta))
        if self.class_weight:
            info["class_weights"] = class_weights_text(self.class_weight)
        if self.shuffle_buffer is not None:
            info["shuffle_buffer"] = str(int(self.shuffle_buffer))
        return info

    @classmethod
    def from_header(cls, header: dict[str, str]) -> TrainOptions:
        """The options a model file records (the inverse of :meth:`header`).

        Parameters
        ----------
        header : dict str -> str
            A model's ``info`` (its header lines).

        Returns
        -------
        TrainOptions
            With T as ``iterations``; settings the header does not hold keep
            their defaults.

        Raises
        ------
        ParameterError
            A value that does not parse.
        """
        values = {}
        for key, field, parse in HEADER_FIELDS:
            text = header.get(key, "-")
            if text == "-":
                continue
            try:
                value = parse(text)
            except (TypeError, ValueError):
                raise ParameterError(f"model header {key} {text!r} is not valid") from None
            if value is not None:
                values[field] = value
        # a model of the dual alone records none of Pegasos' settings: T = 0, and for a run from it (--init)
        # the settings of a first run (the automatic preset's)
        dual = dual_only(header)
        if dual:
            values["iterations"] = 0
        if values.get("sampling") == "shuffle-buffer":
            values["sampling"] = "permutation"
        if header.get("averaging") == "all":
            values.pop("average_from", None)
            values["average"] = True
        if not dual:
            values.setdefault("step_offset", 0.0)
        if header.get("finish") == "dual" and "dual_updates" in header:
            # the kernel dual solver's model (pegasos.kernel.fit_kernel_dual): T = 0, the dual to its tol
            values["finish"] = "dual"
        return cls(preset="auto" if dual else "paper", **values)


def _flatten(rows):
    for row in rows:
        if isinstance(row, (list, tuple)) or hasattr(row, "__iter__"):
            yield from row
        else:
            yield row


def _on_off(text):
    return {"on": True, "off": False}[text]


def class_weights_text(class_weight):
    """A model header's ``class_weights`` text (``LABEL:WEIGHT,...`` in increasing label order) of
    {label value: weight}; :func:`parse_class_weights` reads it back."""
    return ",".join(f"{fmt_label(float(k))}:{float(v)!r}" for k, v in sorted(class_weight.items()))


def parse_class_weights(text):
    """{label value: weight} of a model header's ``class_weights`` text (``LABEL:WEIGHT,...``, as
    :meth:`TrainOptions.header` writes it); ValueError when it does not parse."""
    out = {}
    for item in text.split(","):
        label, _, weight = item.partition(":")
        out[float(label)] = float(weight)
    return out


def _passes(text):
    items = tuple(int(p) for p in text.split(","))
    return items[0] if len(items) == 1 else items


#: model-header key <-> TrainOptions field, with the parser of the header text
HEADER_FIELDS = (
    ("lambda", "lam", float),
    ("iterations", "iterations", int),
    ("batch_size", "batch_size", int),
    ("sampling", "sampling", str),
    ("projection", "projection", _on_off),
    ("average_from", "average_from", float),
    ("seed", "seed", int),
    ("step_offset", "step_offset", float),
    ("schedule", "schedule", str),
    ("eta", "eta", float),
    ("class_weights", "class_weight", parse_class_weights),
    ("shuffle_buffer", "shuffle_buffer", int),
    ("loss", "loss", str),
    ("epsilon", "epsilon", float),
    ("bias_mode", "bias", str),
    ("multiclass", "multiclass", str),
    ("kernel", "kernel", str),
    ("gamma", "gamma", float),
    ("degree", "degree", int),
    ("coef0", "coef0", float),
    ("budget", "budget", int),
    ("finish_passes", "finish_passes", _passes),
    ("tol", "tol", float),                  # a run's tolerance (pegasos.outcome.Outcome.header)
)

OPTION_FIELDS = tuple(f.name for f in fields(TrainOptions) if f.init and f.name not in ("spelling", "given"))
