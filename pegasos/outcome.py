"""What a training run ended with, as a typed value.

:class:`Outcome` is written into a model's header by :func:`record_outcome` (the entries ``solver``,
``solver_reason``, ``stop`` and ``tol``) and read back by :meth:`Outcome.from_header`, through one table
(:data:`OUTCOME_FIELDS`).  Its :attr:`Outcome.diagnostics` are what :func:`pegasos.fit` raises as
:class:`pegasos.errors.ConvergenceWarning` and what ``pegasos train`` prints as its notes.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any

from .defaults import DEFAULT_EPOCHS
from .errors import ParameterError
from .solver import Plan, Solver


class Stop(str, enum.Enum):
    """Why a run stopped (the ``stop`` line of a model header)."""

    CERTIFIED = "certified"        # the duality gap certifies the model within tol
    BOUND = "bound"                # the dual stopped at its bound of work (or a stall) above tol
    STUCK = "stuck"                # the kernel dual: no update raised the dual
    PASSES = "passes"              # the dual ran the passes asked for (finish_passes)
    CONVERGED = "converged"        # Pegasos: doubling the epochs gained less than tol
    EPOCH_CAP = "epoch cap"        # Pegasos: the automatic length reached its cap of epochs
    WORK_CAP = "work cap"          # Pegasos: the next doubling would train too long for what it gains
    LENGTH = "length"              # Pegasos ran the T or epochs given
    DEFAULT_LENGTH = "default length"   # Pegasos ran the default epochs: no length given, none automatic
    EARLY_STOP = "early stop"      # the validation metric stopped improving
    STREAM = "stream passes"       # a streamed run's passes, its certified gap above tol (pegasos.stream)


#: the stops of the dual solvers, whose certified gap the model header holds
DUAL_STOPS = (Stop.CERTIFIED, Stop.BOUND, Stop.STUCK, Stop.PASSES)


#: the model-header entries of Pegasos' loop (Fig. 1/2) and of its automatic length: a model that no Pegasos
#: iteration trained (:func:`dual_only`: the dual from w = 0, the kernel dual solver) is written without
#: them (:func:`pegasos.model.header_keys`); the seed stays, it orders the dual's passes
PEGASOS_KEYS = ("iterations", "batch_size", "sampling", "projection", "averaging", "average_from",
                "averaged_iterates", "epochs", "epochs_trained")


def dual_only(info: dict[str, str]) -> bool:
    """Whether the header ``info`` is that of a model no Pegasos iteration trained: ``solver dual``
    and T = 0 (or no T, as such a model file is written)."""
    return info.get("solver") == "dual" and str(info.get("iterations", "0")) == "0"


def _passes(text: str) -> int:
    return max(int(p) for p in text.split(","))


#: model-header key <-> Outcome field, with the parser of the header text
OUTCOME_FIELDS = (
    ("solver", "solver", Solver),
    ("solver_reason", "reason", str),
    ("stop", "stop", Stop),
    ("tol", "tol", float),
    ("iterations", "iterations", int),
    ("finish_passes", "passes", _passes),
    ("certified_gap", "certified_gap", float),
    ("epochs", "epochs", float),
)


@dataclass(frozen=True)
class Outcome:
    """How a run ended.

    Attributes
    ----------
    solver : Solver
        The solver whose weights the model holds.
    reason : str
        Why that solver (the plan's reason).
    stop : Stop
    tol : float
        The relative tolerance of the run (a fraction of the objective).
    iterations : int
        Pegasos iterations T (0 for the dual from w = 0).
    passes : int or None
        Dual passes (the most of any class), where dual passes ran.
    certified_gap : float or None
        The relative duality gap (P - D) / P the model is certified within, where one is known.
    epochs : float or None
        The epochs the automatic length chose (Pegasos).
    """

    solver: Solver
    reason: str
    stop: Stop
    tol: float
    iterations: int = 0
    passes: int | None = None
    certified_gap: float | None = None
    epochs: float | None = None

    @property
    def certified(self) -> bool:
        """Whether the model is certified within ``tol`` of the optimum."""
        return self.certified_gap is not None and self.certified_gap <= self.tol

    @property
    def diagnostics(self) -> tuple[str, ...]:
        """What a user should know of the run: one sentence each (empty when all went as asked)."""
        gap = self.certified_gap
        if self.stop in (Stop.BOUND, Stop.STUCK) and not self.certified:
            why = ("no update raised the dual (the kernel values may overflow)" if self.stop is Stop.STUCK
                   else "at its bound of work")
            return (f"the dual solver stopped {why} with a certified relative gap of {gap:.3g}, above tol "
                    f"{self.tol!r}: the model is not certified",)
        if self.stop is Stop.PASSES and gap is not None and gap > self.tol:
            return (f"the {self.passes} dual pass{'' if self.passes == 1 else 'es'} asked for left a certified "
                    f"relative gap of {gap:.3g}, above tol {self.tol!r}",)
        if self.stop is Stop.EPOCH_CAP:
            return (f"Pegasos' automatic length reached its cap of epochs before the objective settled within tol "
                    f"(the model: {self.epochs:g} epochs); give epochs (or T) to train longer",)
        if gap is not None and gap > self.tol:          # (a Pegasos model with the dual's bound)
            return (f"the model's certified relative gap is {gap:.3g}, above tol {self.tol!r}: it is not "
                    "certified",)
        if self.stop is Stop.DEFAULT_LENGTH:
            return (f"no length was given and this run has no automatic one (a kernel, the paper's settings or "
                    f"another step schedule): it ran the default {DEFAULT_EPOCHS} epochs, not checked against tol; "
                    "give epochs (or T) for another length, or the default settings (pegasos.fit, the dual solver) "
                    "for a model certified within tol",)
        if self.stop is Stop.WORK_CAP:
            return (f"Pegasos' automatic length stopped at {self.epochs:g} epochs, where the last doubling gained "
                    "at most 1% and the next would train more than 2^24 iterations over all classes (tol not "
                    "reached); give "
                    "epochs (or T) to train longer",)
        return ()

    def header(self) -> dict[str, str]:
        """The header entries this outcome writes (``solver``, ``solver_reason``, ``stop``, ``tol``)."""
        out = {"solver": self.solver.value, "solver_reason": self.reason, "stop": self.stop.value}
        if self.stop not in (Stop.LENGTH, Stop.DEFAULT_LENGTH, Stop.EARLY_STOP):     # a length has no tolerance
            out["tol"] = repr(float(self.tol))
        return out

    @classmethod
    def from_header(cls, info: dict[str, str]) -> Outcome | None:
        """The outcome a model header records, or None for a header without one (older models).

        Raises
        ------
        ValueError
            An entry that does not parse.
        """
        if "stop" not in info or "solver" not in info:
            return None
        values: dict[str, Any] = {}
        for key, field, parse in OUTCOME_FIELDS:
            if info.get(key, "-") != "-":
                values[field] = parse(info[key])
        values.setdefault("reason", "")
        values.setdefault("tol", math.nan)
        return cls(**values)


#: what the reason of a Pegasos plan adds where the dual passes after it made the model (finish="dual")
KEPT_DUAL = "; dual passes after the Pegasos run were asked for, and their model was kept"


def _stop_of(info: dict[str, str], tol: float, passes_given: bool) -> Stop:
    """The stop of a run whose trainer left its entries in ``info``."""
    if "certified_gap" in info and ("finish_passes" in info or "dual_updates" in info):     # dual passes ran
        if float(info["certified_gap"]) <= tol:
            return Stop.CERTIFIED
        if passes_given:
            return Stop.PASSES
        return Stop(info.get("stop", Stop.BOUND.value))     # the kernel dual says when it is stuck
    if "stop" in info:                         # the trainer said it (Pegasos' automatic length, early stop)
        return Stop(info["stop"])
    return Stop.LENGTH


def _ran_the_default_length(info, options):
    """Whether a run of given length ran the default one because none was given (no T, no epochs) and it
    has no automatic one: its T is that of ``options``' plan for its examples (a resumed run, whose length
    is one epoch, is not)."""
    if options.iterations is not None or options.epochs is not None:
        return False
    try:
        return int(info["iterations"]) == options.plan(int(info["train_examples"])).T
    except (KeyError, ValueError, ParameterError):
        return False


def record_outcome(model, chosen: Plan, options):
    """Write the outcome of ``model`` (trained by ``chosen`` with ``options``) into its header.

    The solver whose weights it holds (the dual where no Pegasos iteration ran, or where dual passes
    after Pegasos were kept for every class), why, the stop and the tolerance; where no Pegasos
    iteration ran (:func:`dual_only`) the entries of :data:`PEGASOS_KEYS` are removed.  The plan itself is left
    on the model as ``model.plan`` (its ``detail`` names the settings behind the reason as the user spelled
    them, which the header does not, so that two spellings write one file: ``pegasos train``'s summary
    says it).  Returns ``model``.
    """
    info = getattr(model, "info", None)
    if info is None:
        return model
    used = Solver.DUAL if dual_only(info) or info.get("iterations") == "0" else Solver.PEGASOS
    if info.get("finish_kept") == "dual":         # the finish's w(alpha) replaced the weights (of every class)
        used = Solver.DUAL
    reason = chosen.reason
    if used is not chosen.solver:
        reason += KEPT_DUAL
    tol = float(options.tol if options.tol_gap is None else options.tol_gap)
    stop = _stop_of(info, tol, options.finish_passes is not None)
    if stop is Stop.LENGTH and _ran_the_default_length(info, options):
        stop = Stop.DEFAULT_LENGTH
    outcome = Outcome(solver=used, reason=f"auto: {reason}" if chosen.asked == "auto" else reason, stop=stop, tol=tol)
    info.update(outcome.header())
    if dual_only(info):             # no Pegasos iteration ran: the header lists the dual's settings only
        for key in PEGASOS_KEYS:
            info.pop(key, None)
    model.plan = chosen
    return model


#: lambda |b| from which a regression's regularised intercept is said to be held back: at the optimum of the
#: eps-insensitive loss, lambda b = (1/m) sum_i s_i with s_i in [-1, 1] the residuals' side (outside the
#: tube), so lambda |b| near 1 means most residuals lie on one side: b could not follow the targets' offset
HELD_INTERCEPT = 0.5


def held_intercept(model) -> str | None:
    """The diagnostic of a regression model whose intercept (``bias_mode`` "feature", regularised as a
    weight) is held back by lambda (lambda |b| >= :data:`HELD_INTERCEPT`), or None."""
    if getattr(model, "task", None) != "regression" or getattr(model, "bias_mode", None) != "feature":
        return None
    held = float(model.lam) * abs(float(model.bias))
    if not held >= HELD_INTERCEPT:
        return None
    return (f"the intercept b = {float(model.bias):.6g} is held back by its regularisation (lambda |b| = {held:.2f}, "
            "where 1 means every residual lies on one side): the targets' offset is large against 1/lambda; "
            "subtract their mean from the targets, or give a smaller lambda")


def warn_diagnostics(model):
    """Raise each diagnostic of ``model``'s outcome, and :func:`held_intercept`'s, as a
    :class:`pegasos.errors.ConvergenceWarning`; returns ``model``."""
    import warnings

    from .errors import ConvergenceWarning

    outcome = Outcome.from_header(getattr(model, "info", {}))
    held = held_intercept(model)
    for line in (() if outcome is None else outcome.diagnostics) + (() if held is None else (held,)):
        warnings.warn(line, ConvergenceWarning, stacklevel=3)
    return model
