"""Convergence traces, validation and early stopping of linear Pegasos runs.

A run of T iterations (paper Fig. 1 for k = 1, Fig. 2 for k > 1) is checked
at log-spaced iterations (``points_per_decade`` per decade of t) and at the
end of every epoch (:func:`check_points`).  At each check the model that the
run would output if it ended there (the mean of the averaged iterates so far
when averaging, otherwise the current iterate w_{t+1}) is evaluated:

- on the training examples (or a fixed random sample of them): the primal
  objective of Eq. (1), f(w) = lambda/2 ||w||^2 + (1/m) sum_i loss_i, its
  mean-loss part, ||w|| and the training error (classification: the fraction
  misclassified; regression: the mean squared error);
- on validation examples: accuracy and error (classification) or mse
  (regression), and the objective and mean loss with the same lambda.

:func:`pegasos.fit` drives this through :class:`Monitor` (given a
:class:`Trace` to keep the rows, validation examples, and/or
``TrainOptions.early_stop``); the compiled loop runs unchanged between checks,
so the model is bit-identical with and without a trace.  :func:`write_trace`
and :func:`read_trace` store traces as CSV or JSON lines.
"""

import json
import math
import os
import time

import numpy as np

from .data import take_rows
from .errors import DataError, ParameterError
from .linear import example_losses
from .model import atomic_write

TRACE_VERSION = 1
CSV_MAGIC = "# pegasos-trace"
MAX_EPOCH_POINTS = 1000      # epoch ends checked at most (evenly spread beyond that)
DEFAULT_BUDGET = 0.1         # a trace spends at most this fraction of the training time on its checks ...
BUDGET_FLOOR_SECONDS = 0.5   # ... once they have taken this long: a short run's trace has every point
TRAIN_COLUMNS = ("t", "epoch", "seconds", "objective", "loss", "norm_w", "train_error")
#: the trace header's certified lower bound on f* (the dual bound of the run's model on its training data,
#: pegasos.certificate.duality_gap), written by ``pegasos train --trace`` where the model has one
TRACE_BOUND_KEY = "dual_bound"
LOWER_IS_BETTER = {"accuracy": False, "error": True, "objective": True, "loss": True, "mse": True}


def check_points(T, m, k, sampling, per_decade):
    """The iterations at which a run is checked.

    Parameters
    ----------
    T : int >= 1
        Iterations of the run.
    m : int >= 1
        Training examples.
    k : int >= 1
        Batch size.
    sampling : str
        "uniform" (epoch e ends at iteration ceil(e m / k)) or "permutation" /
        "sequential" (each epoch is ceil(m / k) iterations).
    per_decade : int >= 0
        Log-spaced points per decade of t: t = round(10^(j / per_decade)),
        j = 0, 1, ... (0: none).

    Returns
    -------
    list of int
        Sorted distinct iterations in 1..T: the log-spaced ones, every epoch
        end (at most ``MAX_EPOCH_POINTS`` of them, evenly spread), and T.
    """
    points = {int(T)}
    if per_decade > 0:
        n = int(math.floor(per_decade * math.log10(T) + 1e-9)) + 1
        points.update(int(round(10.0 ** (j / per_decade))) for j in range(n))
    per_epoch = math.ceil(m / k)
    epochs = T * k / m if sampling == "uniform" else T / per_epoch
    n_epochs = int(math.floor(epochs + 1e-9))
    stride = max(1, math.ceil(n_epochs / MAX_EPOCH_POINTS))
    for e in range(stride, n_epochs + 1, stride):
        points.add(math.ceil(e * m / k - 1e-9) if sampling == "uniform" else e * per_epoch)
    return sorted(p for p in points if 1 <= p <= T)


class Trace:
    """Records the convergence trace of a :func:`pegasos.fit` run.

    Parameters
    ----------
    sample : int >= 1 or None
        Compute the training terms (objective, loss, train_error) on a fixed
        random sample of this many training examples (all of them when m is
        smaller or None).  ``norm_w`` is exact either way.
    seed : int >= 0
        Seeds the draw of the sample (its own generator: the training order
        does not change).
    budget : float >= 0
        Largest fraction of the training time (``seconds``) the checks may
        take: a check point is skipped while the checks so far took more
        than ``budget`` times the training time so far and more than
        :data:`BUDGET_FLOOR_SECONDS` (the last point, T, is always checked;
        so are all points with early stopping, whose result must not depend
        on timing).  A check costs one pass over the examples it evaluates,
        as much as an epoch of k = 1 training, so on long fast runs this
        thins the points to what the budget allows, while a run whose checks
        all take less than the floor keeps every point.  0: check every
        point.  Default 0.1.

    Attributes (after ``fit``)
    ----------
    rows : list of dict
        One dict per check point: ``t`` (iterations done, int), ``epoch``
        (t k / m), ``seconds`` (training wall time so far, without the time
        spent on the checks), ``objective``, ``loss``, ``norm_w``,
        ``train_error`` and, with validation examples, ``validation_accuracy``,
        ``validation_error`` (classification) or ``validation_mse``
        (regression), ``validation_objective``, ``validation_loss``.  With the
        automatic number of epochs (several runs from scratch), the rows of
        the run whose model is returned.
    header : dict str -> str
        The returned model's header (``model.info``).
    skipped : int
        Check points of the returned run left out by the budget.
    """

    def __init__(self, sample=None, seed=1, budget=DEFAULT_BUDGET):
        if sample is not None and (isinstance(sample, bool) or not isinstance(sample, (int, np.integer))
                                   or sample < 1):
            raise ParameterError(f"the trace sample must be a positive number of examples, got {sample!r}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ParameterError(f"the trace seed must be a non-negative integer, got {seed!r}")
        if isinstance(budget, bool) or not isinstance(budget, (int, float, np.integer, np.floating)) \
                or not math.isfinite(budget) or budget < 0:
            raise ParameterError(f"the trace budget must be a fraction >= 0 of the training time, got {budget!r}")
        self.sample = None if sample is None else int(sample)
        self.seed = int(seed)
        self.budget = float(budget)
        self.skipped = 0
        self.rows = []
        self.header = {}
        self.runs = []            # (T, rows, skipped) of every run recorded, in order

    def select_run(self, iterations):
        """Keep the rows of the last recorded run of ``iterations`` iterations."""
        for T, rows, skipped in reversed(self.runs):
            if T == iterations:
                self.rows, self.skipped = rows, skipped
                return
        self.rows, self.skipped = (self.runs[-1][1], self.runs[-1][2]) if self.runs else ([], 0)

    def write(self, path):
        """Write the trace to ``path`` (see :func:`write_trace`)."""
        write_trace(path, self.header, self.rows)


class Monitor:
    """Evaluates a linear run at its check points (used by :func:`pegasos.fit`).

    Parameters
    ----------
    options : TrainOptions
        lambda, loss, epsilon, bias, class weights, ``trace_points``,
        ``early_stop`` (patience in checks) and ``early_stop_metric``.
    trace : Trace or None
        Where to record the rows (None: validation only, for early stopping).
    validation : (indptr, indices, data, y, weight) or None
        Validation CSR arrays (int64, int32, float64/float32; any number of
        columns: those beyond the model's contribute 0), targets y (float64;
        +-1 for classification) and per-example class weights of the loss
        (float64 or None).

    The training arrays are given by :meth:`begin`, once per run.
    """

    def __init__(self, options, trace=None, validation=None):
        self.options = options
        self.trace = trace
        self.validation = validation
        self.patience = options.early_stop
        self.metric = options.early_stop_metric or ("mse" if options.task == "regression" else "accuracy")
        self.points = []
        self.stopped = False
        self.best = None

    def begin(self, indptr, indices, data, y, sample_weight, plan):
        """Start a run: the training arrays (CSR, y as the loop sees it, the
        per-example weights or None) and its :class:`pegasos.options.RunPlan`."""
        opts = self.options
        self.plan = plan
        self.points = check_points(plan.T, plan.m, plan.k, opts.sampling, opts.trace_points)
        self.first_epoch = math.ceil(plan.m / plan.k)
        self.rows = []
        self.best = None
        self.stopped = False
        self.bad = 0
        self.train = None
        if self.trace is not None:
            m = indptr.shape[0] - 1
            if self.trace.sample is not None and self.trace.sample < m:
                rng = np.random.Generator(np.random.PCG64(self.trace.seed))
                idx = np.sort(rng.choice(m, size=self.trace.sample, replace=False)).astype(np.int64)
                sub = take_rows(indptr, indices, data, idx)
                self.train = (*sub, y[idx], None if sample_weight is None else sample_weight[idx])
            else:
                self.train = (indptr, indices, data, y, sample_weight)
        self.excluded = 0.0
        self.skipped = 0
        self.start = time.perf_counter()

    def _terms(self, arrays, w, b, weight):
        from . import _core

        indptr, indices, data, y = arrays[:4]
        f = np.empty(indptr.shape[0] - 1, dtype=np.float64)
        _core.decision_values(indptr, indices, data, w, float(b), f)
        opts = self.options
        per = example_losses(opts.loss, f, y, opts.epsilon)
        if weight is not None:
            per = per * weight
        loss = float(per.mean()) if per.size else math.nan
        if opts.task == "regression":
            err = float(np.mean((f - y) ** 2)) if f.size else math.nan
        else:
            err = float(np.mean((f > 0) != (y > 0))) if f.size else math.nan
        return loss, err

    def check(self, t, output):
        """Evaluate the run after iteration ``t``; ``output()`` gives the
        model (w, b) the run would output now.  Returns True to stop (early
        stopping)."""
        now = time.perf_counter()
        seconds = now - self.start - self.excluded
        budget = 0.0 if self.trace is None else self.trace.budget
        if budget and self.patience is None and t != self.plan.T and \
                self.excluded > max(budget * seconds, BUDGET_FLOOR_SECONDS):
            self.skipped += 1          # the checks so far are over budget: leave this point out
            self.excluded += time.perf_counter() - now
            return False
        w, b = output()
        opts, plan = self.options, self.plan
        sq = float(np.einsum("i,i->", w, w))      # not BLAS: its threads cost ms a call on a busy machine
        reg = 0.5 * opts.lam * (sq + (b * b if opts.bias == "feature" else 0.0))
        row = None
        if self.trace is not None:
            loss, err = self._terms(self.train, w, b, self.train[4])
            row = {"t": int(t), "epoch": t * plan.k / plan.m, "seconds": seconds, "objective": reg + loss,
                   "loss": loss, "norm_w": math.sqrt(sq), "train_error": err}
        stop = False
        if self.validation is not None:
            loss, err = self._terms(self.validation, w, b, self.validation[4])
            if opts.task == "regression":
                values = {"mse": err}
            else:
                values = {"accuracy": 1.0 - err, "error": err}
            values.update(objective=reg + loss, loss=loss)
            if row is not None:
                row.update({f"validation_{k}": v for k, v in values.items()})
            if self.patience is not None and t >= min(self.first_epoch, plan.T):
                stop = self._early_stop(t, values[self.metric], w, b)
        if row is not None:
            self.rows.append(row)
        self.excluded += time.perf_counter() - now
        return stop

    def _early_stop(self, t, value, w, b):
        lower = LOWER_IS_BETTER[self.metric]
        if self.best is None or not math.isfinite(self.best[0]) or (value < self.best[0] if lower
                                                                     else value > self.best[0]):
            self.best = (value, int(t), np.array(w, dtype=np.float64), float(b))
            self.bad = 0
            return False
        if t < self.plan.avg_start:
            return False        # the output is still the noisy last iterate: the patience counts from the average
        self.bad += 1
        if self.bad >= self.patience:
            self.stopped = True
            return True
        return False

    def end(self):
        """Finish the run: archive its rows in the trace; return the best
        (w, b) seen with early stopping, else None."""
        if self.trace is not None:
            self.trace.runs.append((self.plan.T, self.rows, self.skipped))
            self.trace.rows, self.trace.skipped = self.rows, self.skipped
        if self.patience is None or self.best is None:
            return None
        return self.best[2], self.best[3]

    def header(self):
        """Model-header entries of early stopping (str -> str; empty without it)."""
        if self.patience is None:
            return {}
        info = {"early_stop": str(self.patience), "early_stop_metric": self.metric,
                "stopping": "early-stop" if self.stopped else "iterations",
                "stop": "early stop" if self.stopped else "length"}
        if self.best is not None:
            info["best_iteration"] = str(self.best[1])
            info["best_validation"] = repr(float(self.best[0]))
        return info


# ------------------------------------------------------------------ files --

def trace_format(path):
    """"csv" or "jsonl" from the file name's suffix (.csv; .jsonl or .json).

    Raises
    ------
    ParameterError
        Another suffix.
    """
    name = os.fspath(path).lower()
    if name.endswith(".csv"):
        return "csv"
    if name.endswith(".jsonl") or name.endswith(".json"):
        return "jsonl"
    raise ParameterError(f"the trace file {os.fspath(path)!r} must end in .csv, .jsonl or .json")


def _plain(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_trace(path, options, rows):
    """Write a trace atomically (see :func:`pegasos.model.atomic_write`).

    ``.csv``: first line ``# pegasos-trace 1 `` and the JSON object
    ``options`` (the model header), second line the column names, then one
    line per point (empty field: not available).  ``.jsonl``/``.json``: first
    line ``{"pegasos_trace": 1, "options": {...}}``, then one JSON object per
    point.

    Raises
    ------
    ParameterError
        A suffix other than .csv, .jsonl, .json.
    PegasosError
        The file cannot be written.
    """
    kind = trace_format(path)
    columns = list(rows[0]) if rows else list(TRAIN_COLUMNS)
    head = json.dumps(dict(options), sort_keys=False)

    def write(f):
        if kind == "csv":
            f.write(f"{CSV_MAGIC} {TRACE_VERSION} {head}\n")
            f.write(",".join(columns) + "\n")
            for row in rows:
                f.write(",".join("" if _plain(row.get(c)) is None else repr(row[c]) for c in columns) + "\n")
        else:
            f.write(json.dumps({"pegasos_trace": TRACE_VERSION, "options": dict(options)}) + "\n")
            for row in rows:
                f.write(json.dumps({k: _plain(v) for k, v in row.items()}) + "\n")

    atomic_write(path, write)


def _number(text, path, line, name):
    if text == "":
        return None
    try:
        return int(text) if name == "t" else float(text)
    except ValueError:
        raise DataError(path, f"column {name}: {text[:40]!r} is not a number", line) from None


def read_trace(path):
    """Read a trace written by :func:`write_trace` (either format, told by its first line).

    Returns
    -------
    (dict, list of dict)
        The options (model header) and the rows (``t`` int, the other
        columns float or None).

    Raises
    ------
    DataError
        The file cannot be read or is not a pegasos trace (naming the file and line).
    """
    shown = os.fspath(path)
    try:
        with open(shown, "r", encoding="utf-8", newline=None) as f:
            first = f.readline(1 << 20)
            if first.startswith(CSV_MAGIC):
                return _read_csv(shown, first, f)
            if first.lstrip().startswith("{"):
                return _read_jsonl(shown, first, f)
    except UnicodeDecodeError:
        raise DataError(shown, "not a pegasos trace (not UTF-8 text)") from None
    except OSError as e:
        raise DataError(shown, f"cannot read: {e.strerror or e}") from None
    raise DataError(shown, "not a pegasos trace (the first line is neither '# pegasos-trace 1 {...}' nor "
                           "'{\"pegasos_trace\": 1, ...}')", 1)


def _options_of(path, obj, line):
    if not isinstance(obj, dict):
        raise DataError(path, "the trace's options are not a JSON object", line)
    return {str(k): v for k, v in obj.items()}


def _read_csv(path, first, f):
    rest = first[len(CSV_MAGIC):].strip()
    version, _, head = rest.partition(" ")
    if version != str(TRACE_VERSION):
        raise DataError(path, f"trace version {version[:20]!r} is not {TRACE_VERSION}", 1)
    try:
        options = _options_of(path, json.loads(head), 1)
    except json.JSONDecodeError as e:
        raise DataError(path, f"the options are not valid JSON ({e.msg})", 1) from None
    names = f.readline(1 << 20).rstrip("\n").split(",")
    if not names or names[0] != "t":
        raise DataError(path, "the second line must name the columns, starting with t", 2)
    rows = []
    for n, text in enumerate(f, start=3):
        text = text.rstrip("\n")
        if not text.strip():
            continue
        fields = text.split(",")
        if len(fields) != len(names):
            raise DataError(path, f"{len(fields)} fields where the header names {len(names)} columns", n)
        rows.append({name: _number(v.strip(), path, n, name) for name, v in zip(names, fields)})
    return options, rows


def _read_jsonl(path, first, f):
    try:
        head = json.loads(first)
    except json.JSONDecodeError as e:
        raise DataError(path, f"not valid JSON ({e.msg})", 1) from None
    if not isinstance(head, dict) or head.get("pegasos_trace") != TRACE_VERSION:
        raise DataError(path, f"not a pegasos trace (the first object needs \"pegasos_trace\": {TRACE_VERSION})", 1)
    options = _options_of(path, head.get("options", {}), 1)
    rows = []
    for n, text in enumerate(f, start=2):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as e:
            raise DataError(path, f"not valid JSON ({e.msg})", n) from None
        if not isinstance(row, dict) or not isinstance(row.get("t"), int):
            raise DataError(path, "a trace point must be a JSON object with an integer t", n)
        for key, value in row.items():
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise DataError(path, f"{key}: {str(value)[:40]!r} is not a number", n)
        rows.append(row)
    return options, rows
