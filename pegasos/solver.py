"""Which solver trains a run, decided once.

Every entry point (``pegasos train``, :func:`pegasos.fit`, the estimators, cross-validation and the
lambda search) calls :func:`plan` with the :class:`Problem` (what the data are) and the
:class:`~pegasos.options.TrainOptions` (what the user asked), and runs the :class:`Plan` it returns.
There are two solvers:

``pegasos``
    The paper's stochastic sub-gradient loop (Fig. 1/2; Fig. 3 for kernels) with a calibrated step
    offset, permutation sampling and suffix averaging; its epochs double until the objective stops
    improving by more than ``tol``, unless T or epochs are given.
``dual``
    Dual coordinate ascent from w = 0 (Hsieh et al. 2008; the sequential dual of Keerthi et al. 2008
    for Crammer-Singer; the kernel dual solver for kernels), until the duality gap certifies the model
    within ``tol`` of the optimum.

``auto`` (the default) is the rule of :func:`plan`: the dual wherever it can run, else Pegasos.  Only
the standard library is imported here, so the command line can print a plan (``--explain``) cheaply.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .defaults import AUTO_AVERAGE_FROM, DEFAULT_EPOCHS, SOLVERS
from .errors import ParameterError


#: below this lambda the dual's weights w = sum alpha_i y_i x_i, |w| up to max |x| / lambda, and their squares
#: come near float64's range (at 1e-150 the passes ended far from the optimum Pegasos reached)
DUAL_MIN_LAMBDA = 1e-100


class Solver(str, enum.Enum):
    """The solver a run uses (the ``solver`` line of a model header)."""

    PEGASOS = "pegasos"
    DUAL = "dual"


@dataclass(frozen=True)
class Problem:
    """What :func:`plan` needs to know of the data.

    Attributes
    ----------
    m : int
        Training examples (rows; for the rank loss too).
    in_memory : bool
        False when the examples are streamed or read on shards.
    streamed : bool
        The examples are streamed from one file: its rows spilled to disk by the first pass and read in
        sequential passes (:mod:`pegasos.stream`), where the dual runs block by block.
    resumed : bool
        True when the run continues a model (``init=``, ``--init``).
    pairs_fit : bool
        For the rank loss: whether the pair differences its dual runs on fit in memory
        (:func:`pegasos.examples.pairs_fit_in_memory`).
    """

    m: int
    in_memory: bool = True
    streamed: bool = False
    resumed: bool = False
    pairs_fit: bool = True


@dataclass(frozen=True)
class Plan:
    """The solver a run will use, and why.

    Attributes
    ----------
    solver : Solver
    reason : str
        Why, in a phrase a user reads (the header's ``solver_reason``): one of a few, so that two
        spellings of the same settings write the same model file.
    asked : str
        The ``solver`` option as given: "auto", "pegasos" or "dual".
    detail : str
        The settings behind the reason, as the user spelled them ("" where there are none), for
        ``--explain`` and the summary.
    on_shards : bool
        The data are read on shards (:mod:`pegasos.engine_dask`), where a length not given is the
        default epochs, not the doubling.
    """

    solver: Solver
    reason: str
    asked: str = "auto"
    detail: str = ""
    on_shards: bool = False

    @property
    def why(self) -> str:
        """The reason with its detail and, under "auto", that prefix: what the summary prints."""
        return f"{'auto: ' if self.asked == 'auto' else ''}{self.reason}{': ' + self.detail if self.detail else ''}"

    def how(self, options=None) -> str:
        """What the solver will run for the run's ``options`` (None: in general), in words: how long it runs."""
        return _how(self.solver, options, self.on_shards)

    def describe(self, options=None) -> str:
        """The plan in one line (``pegasos train --explain``); with the run's ``options``, how long it runs."""
        return f"solver {self.solver.value} ({self.why}): {self.how(options)}"


def _how(solver: Solver, options, on_shards: bool = False) -> str:
    """What ``solver`` will run for ``options`` (None: in general), in words."""
    if solver is Solver.DUAL:
        start = "w = 0" if options is None or options.kernel == "linear" else "alpha = 0 (the kernel dual solver)"
        if options is not None and options.finish_passes is not None:
            return f"dual coordinate ascent from {start}, exactly {options.finish_passes} passes"
        tol = "tol" if options is None else f"tol = {options.tol:g}"
        return f"dual coordinate ascent from {start} until the duality gap certifies the model within {tol}"
    how = "Pegasos, the paper's stochastic sub-gradient loop"
    if options is None:
        return how
    if options.iterations:
        how += f", T = {options.iterations} iterations"
    elif options.epochs is not None:
        how += f", {options.epochs:g} epochs"
    elif options.length_is_automatic and options.kernel == "linear" and not on_shards:
        how += f", its epochs doubled until a doubling gains less than tol = {options.tol:g}"
    else:
        how += f", {DEFAULT_EPOCHS} epochs"
    if options.finish == "dual" or options.finish_passes is not None:
        how += ", then dual passes from its margins"
    return how


def psd_kernel(kernel: str, coef0: float | None) -> bool:
    """Whether the kernel is positive semi-definite (then the dual bounds the optimum): linear, rbf,
    and poly with coef0 >= 0 (None: the default 0); not sigmoid."""
    return kernel in ("linear", "rbf") or (kernel == "poly" and (coef0 or 0.0) >= 0.0)


def _pegasos_only(options) -> str | None:
    """The settings of ``options`` that only Pegasos uses, as the user spells them (a phrase), or None."""
    given = []
    if options.preset == "paper" and options.iterations != 0:
        given.append(options.name("preset"))
    if options.iterations is not None and options.iterations > 0:
        given.append(options.name("iterations"))
    if options.epochs is not None:
        given.append(options.name("epochs"))
    if options.step_offset is not None and options.preset != "paper":
        given.append(options.name("step_offset"))
    if options.schedule != "pegasos":
        given.append(options.name("schedule"))
    if options.budget is not None:
        given.append(options.name("budget"))
    if options.projection:
        given.append(options.name("projection"))
    if options.batch_size != 1:
        given.append(options.name("batch_size"))
    if options.early_stop is not None:
        given.append(options.name("early_stop"))
    if options.preset != "paper":     # the auto preset's sampling and averaging, unless the user chose others
        if options.sampling != ("uniform" if options.loss == "rank" else "permutation"):
            given.append(options.name("sampling"))
        if options.average or (options.budget is None and options.average_from != AUTO_AVERAGE_FROM):
            given.append(options.name("average_from" if options.average_from is not None else "average"))
    if options.finish == "none" and options.preset != "paper":
        given.append("--finish none" if options.spelling == "cli" else 'finish="none"')
    return ", ".join(given) or None


def _no_dual(problem: Problem, options) -> str | None:
    """Why the dual solver cannot train this run (a phrase), or None."""
    if not problem.in_memory and not problem.streamed:
        return "the data are not in memory (on shards)"
    if problem.resumed:
        return "a resumed run goes on with Pegasos"
    if options.kernel != "linear":
        if not psd_kernel(options.kernel, options.coef0):
            return "the kernel is not positive semi-definite (sigmoid, or poly with coef0 < 0)"
        return None
    if float(options.lam) < DUAL_MIN_LAMBDA:
        return f"below lambda = {DUAL_MIN_LAMBDA:g} the dual's weights (up to |x|/lambda) overflow"
    if options.loss == "rank" and not problem.pairs_fit:
        return "the pairs of the rank loss do not fit in memory"
    if options.loss not in ("hinge", "squared-hinge", "rank"):
        return f"the {options.loss} loss has no dual solver here"
    if options.bias == "unregularized":
        return "an unregularized bias has no dual solver here"
    if options.resume_state:
        return f"{options.name('resume_state')} keeps the state of a Pegasos run"
    return None


def plan(problem: Problem, options) -> Plan:
    """Choose the solver of a run: the one place where it is decided.

    The rule of ``solver="auto"``: the dual wherever it can run, Pegasos otherwise, that is when a
    Pegasos-only setting is given (T, epochs, t0, a step rule, a budget, projection, k > 1, a
    sampling or an averaging other than the preset's, early stopping, ``finish="none"``, the paper
    preset) or when the dual cannot run (data on
    shards, a resumed run, the log or eps-insensitive loss, an unregularized bias, a kernel that is not
    positive semi-definite, rank pairs too many for memory).  Measured (benchmarks/RESULTS_solver_choice.md), the dual reached the
    default tol first on every shared set and on generated data from lambda*m = 0.03 to 400, where the
    lengthened Pegasos run must train twice its length to see that it has converged.

    Parameters
    ----------
    problem : Problem
    options : pegasos.options.TrainOptions
        Validated; ``options.solver`` is "auto", "pegasos" or "dual".

    Returns
    -------
    Plan

    Raises
    ------
    ParameterError
        ``solver="dual"`` where the dual cannot run, or with a Pegasos-only setting.
    """
    asked = options.solver
    shards = not problem.in_memory and not problem.streamed
    if (options.finish == "dual" and options.length_is_automatic and options.kernel == "linear"
            and not problem.resumed):
        dual = "--solver dual" if options.spelling == "cli" else 'solver="dual"'
        raise ParameterError(f"{options.subject('finish')} dual runs dual passes after a Pegasos run of a given "
                             f"length: give {options.name('iterations')} or {options.name('epochs')}, or for the "
                             f"dual alone {dual}")
    if asked == "pegasos":
        return Plan(Solver.PEGASOS, "asked for", asked, on_shards=shards)
    no_dual = _no_dual(problem, options)
    pegasos_only = _pegasos_only(options)
    if asked == "dual":
        if no_dual is not None:
            raise ParameterError(f"{options.subject('solver')} dual: {no_dual}")
        if pegasos_only is not None:
            raise ParameterError(f"{options.subject('solver')} dual runs from w = 0 until certified: drop "
                                 f"{pegasos_only} (settings of Pegasos)")
        return Plan(Solver.DUAL, "asked for", asked, on_shards=shards)
    if pegasos_only is not None:
        return Plan(Solver.PEGASOS, "a setting of Pegasos is given", asked, pegasos_only, on_shards=shards)
    if options.iterations == 0:                  # (validated: with finish="dual" or finish_passes)
        return Plan(Solver.DUAL, "the dual can run", asked, f"{options.subject('iterations')} 0", on_shards=shards)
    if no_dual is not None:
        return Plan(Solver.PEGASOS, no_dual, asked, on_shards=shards)
    return Plan(Solver.DUAL, "the dual can run", asked, on_shards=shards)


def check_solver(value, options) -> None:
    """Refuse a ``solver`` value that is not one of :data:`SOLVERS` (ParameterError naming the option)."""
    if value not in SOLVERS:
        raise ParameterError(f"{options.subject('solver')}: the solver must be one of {', '.join(SOLVERS)}, "
                             f"got {value!r}")


def run_options(chosen: Plan, options):
    """The options that make the trainers of :mod:`pegasos.api` run ``chosen``.

    Pegasos: no dual passes after it unless they are asked for (``finish="dual"`` or
    ``finish_passes``), so a given T or number of epochs writes that Pegasos run.  The dual: T = 0 and
    the passes from w = 0 until certified within ``tol`` (``tol_gap`` when given), up to their full
    bound of work.
    """
    if chosen.solver is Solver.PEGASOS:
        if options.finish is None and options.finish_passes is None:
            return options.replace(finish="none")
        return options
    tol = options.tol if options.tol_gap is None else options.tol_gap
    return options.replace(iterations=0, epochs=None, finish="dual", tol=tol, tol_gap=None)
