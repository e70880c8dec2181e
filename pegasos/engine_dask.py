"""Training on shard files: in one process, or on a Dask cluster.

The examples live in shard files (a glob, a directory, ``@list.txt``, or one
file cut into newline-aligned byte ranges).  Each shard is read where it is
used, with pegasos' reader; the driver never holds the data.

Exact mode (``sync_every=1``, the default) runs mini-batch Pegasos (paper
Fig. 2) unchanged: for iteration t the k examples of A_t are k i.i.d.
uniform draws from the union of the shards
(:class:`pegasos.sampling.ShardDraws`: multinomial allocation over the
shards, then rows drawn from a generator keyed by seed, t and shard), their
margins at w_t are computed where the shard is
(``_core.LinearState.collect``), and the violators' rows and sub-gradient
factors are gathered in shard order and applied with
``_core.LinearState.apply_step``, the same compiled arithmetic as the local
loop.  Every replica (the driver's and one per worker) applies the same
update, so nothing of size n or d crosses the wire per round (O(non-zeros of
the violators)), and the model is bit-identical for any number of workers
and to ``engine="local"`` (the same draws in one process).  The Pegasos
bound holds as for Fig. 2.

Averaging mode (``sync_every=S > 1`` or ``"epoch"``) is parallel SGD with
periodic model averaging (Zinkevich, Weimer, Smola and Li, NIPS 2010): from
the common w every shard j takes S local steps of batch
b_j = max(1, round(k n_j / n)) on its own rows, with the global step counter,
and the driver averages the shards' models weighted by n_j / n.  The Pegasos
bound does not cover it (the model header says so).

One-vs-rest (more than two labels over the shards, or ``multiclass="ovr"``)
runs the K problems "class c against the rest" in the same exact rounds:
one call per worker and round carries all K updates and all classes use the
same draws A_t, so the data stay sharded and a run costs T rounds, not K T.

An unset t0 is calibrated as :func:`pegasos.fit` does, on a sample of the
shards (:func:`_calibrated`).  When the caller's user gave no batch size
(``auto_batch``), k = ceil(n / ROUNDS_PER_EPOCH), so that an epoch is a bounded
number of rounds (:func:`automatic_batch_size`).  :class:`DaskEngine` wraps a cluster for
:func:`pegasos.fit`, :func:`pegasos.cross_validate`, :func:`pegasos.search`
and the estimators.

Dask itself is imported only when a cluster is used (``engine="dask"``, a
:class:`DaskEngine`'s first call).
"""

import glob
import json
import math
import os
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np

from .defaults import DENSE_COLUMNS_FLOOR, DENSE_COLUMNS_PER_VALUE, MAX_LOCAL_WORKERS, MAX_SPLIT, ROUNDS_PER_EPOCH
from .errors import DataError, DivergenceError, ParameterError, PegasosError, counted
from .io import example_line, line_ranges, read_svmlight, read_svmlight_range
from .labels import BinaryLabels
from .linear import LinearModel, new_state, projection_radius2
from .model import atomic_write
from .multiclass import MulticlassModel
from .options import fmt_label
from .sampling import ShardDraws
from .outcome import record_outcome
from .solver import Problem, plan

ENGINES = ("local", "dask")
CHECKPOINT_FORMAT = "pegasos-shard-checkpoint 1"
GLOB_CHARS = "*?["
MAX_REPORTED_CLASSES = 100_001   # label values a shard reports (more than any --max-classes)


class ClusterError(PegasosError):
    """The Dask cluster failed (a worker lost, unreachable, or running another pegasos)."""


@dataclass(frozen=True)
class Shard:
    """One shard: a whole file, or its bytes [start, end) (cut at line starts)."""

    path: str
    start: int | None = None
    end: int | None = None

    @property
    def name(self):
        return self.path if self.start is None else f"{self.path}[{self.start}:{self.end}]"


@dataclass(frozen=True, eq=False)
class ArrayShard:
    """A shard held in memory (rows of a CSR matrix, zero-based columns, float labels): sent to its worker."""

    name: str
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    y: np.ndarray


def array_shards(X, y, n_shards, name="X"):
    """``X`` (scipy CSR, shape (m, n)) and ``y`` (m,) cut into ``n_shards`` contiguous row blocks
    of sizes differing by at most one (ArrayShard, named ``X[a:b]``)."""
    m = X.shape[0]
    bounds = np.linspace(0, m, int(n_shards) + 1).round().astype(np.int64)
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        block = X[int(a):int(b)]
        out.append(ArrayShard(f"{name}[{a}:{b}]", np.asarray(block.indptr, dtype=np.int64),
                              np.asarray(block.indices, dtype=np.int32),
                              np.ascontiguousarray(block.data, dtype=np.float64),
                              np.asarray(y[int(a):int(b)], dtype=np.float64)))
    return out


def is_shard_spec(spec):
    """Whether DATA names several shards (a glob, a directory or ``@list.txt``) rather than one file."""
    spec = os.fspath(spec)
    if os.path.isfile(spec):          # a file whose name holds * ? [ or @ is that file
        return False
    return spec.startswith("@") or any(c in spec for c in GLOB_CHARS) or os.path.isdir(spec)


def expand_shards(spec, split=None, name="DATA"):
    """The shards ``spec`` names, in order.

    Parameters
    ----------
    spec : str
        A file; a glob (``'data/train-*.svm'``, matches sorted by name); a
        directory (its regular files not starting with ``.``, sorted); or
        ``@FILE``, a list of paths one per line (blank lines and ``#``
        comments skipped; relative paths are relative to FILE's directory).
        Paths are made absolute so that workers started elsewhere find them.
    split : int >= 1 or None
        Cut every file into ``split`` byte ranges that start at line starts
        (plain files only).

    Raises
    ------
    ParameterError
        Nothing matches, a listed file is missing, or ``split`` is not in 1..MAX_SPLIT.
    """
    spec = os.fspath(spec)
    if os.path.isfile(spec):
        paths = [spec]
    elif spec.startswith("@"):
        listing = spec[1:]
        try:
            with open(listing, encoding="utf-8") as f:
                lines = [ln.strip() for ln in f]
        except (OSError, UnicodeDecodeError) as e:
            raise ParameterError(f"{name}: cannot read the shard list {listing} ({e})") from None
        here = os.path.dirname(os.path.abspath(listing))
        paths = [os.path.join(here, ln) for ln in lines if ln and not ln.startswith("#")]
        for p in paths:
            if not os.path.isfile(p):
                raise ParameterError(f"{name}: {listing} lists {p}, which is not a file")
    elif os.path.isdir(spec):
        paths = sorted(os.path.join(spec, f) for f in os.listdir(spec)
                       if not f.startswith(".") and os.path.isfile(os.path.join(spec, f)))
    elif any(c in spec for c in GLOB_CHARS):
        paths = sorted(p for p in glob.glob(spec) if os.path.isfile(p))
    else:
        if not os.path.isfile(spec):
            raise ParameterError(f"{name}: {spec} is not a file")
        paths = [spec]
    if not paths:
        raise ParameterError(f"{name}: no shard file matches {spec}")
    paths = [os.path.abspath(p) for p in paths]
    if split is None:
        return [Shard(p) for p in paths]
    if not 1 <= int(split) <= MAX_SPLIT:
        raise ParameterError(f"--split: the number of byte ranges must be in 1..{MAX_SPLIT}, got {split}")
    from .io import is_plain_text_file

    shards = []
    for p in paths:
        if not is_plain_text_file(p):
            raise ParameterError(f"--split cuts plain text files; {p} is compressed or not a regular file")
        shards += [Shard(p, a, b) for a, b in line_ranges(p, int(split))]
    return shards


@dataclass(frozen=True)
class EngineSettings:
    """Where and how a run on shards trains (the solver's settings are the TrainOptions).

    engine : {"local", "dask"}
        "local": every shard in this process; "dask": one actor per Dask worker.
    scheduler : str or None
        Address of a running Dask scheduler (``tcp://HOST:PORT``).
    local_workers : int >= 1 or None
        Start a ``distributed.LocalCluster`` of this many worker processes instead.
    sync_every : int >= 1 or "epoch"
        1: exact mini-batch Pegasos; S > 1: S local steps per shard between
        model averages; "epoch": about one pass over the data between averages.
    checkpoint_every : int >= 1 or None
        Rounds between checkpoints (written to ``checkpoint``).
    checkpoint : str or None
        Checkpoint file (a model file is written next to it, ``.model`` added).
    resume : str or None
        Continue the run saved in this checkpoint.
    zero_based : bool or None
        Feature indices start at 0; None: at 1 unless a shard holds index 0.
    n_features : int or None
        Dimension at least this (default: the largest index of any shard).
    dtype : "float64"
        Values held by the workers (the compiled step reads float64).
    processes : bool
        ``local_workers`` as processes (True) or threads of this process.
    """

    engine: str = "local"
    scheduler: str | None = None
    local_workers: int | None = None
    sync_every: object = 1
    checkpoint_every: int | None = None
    checkpoint: str | None = None
    resume: str | None = None
    zero_based: bool | None = None
    n_features: int | None = None
    dtype: str = "float64"
    processes: bool = True

    def validate(self, cluster=False):
        """Check the settings (``cluster``: a cluster is given, the settings need not name one);
        raises ParameterError naming the command-line option."""
        if self.engine not in ENGINES:
            raise ParameterError(f"--engine: one of {', '.join(ENGINES)}, got {self.engine!r}")
        if self.engine == "dask" and not cluster:
            if (self.scheduler is None) == (self.local_workers is None):
                raise ParameterError("--engine dask needs --scheduler tcp://HOST:PORT or --local-workers N (one)")
            if self.local_workers is not None and not (isinstance(self.local_workers, int)
                                                       and 1 <= self.local_workers <= MAX_LOCAL_WORKERS):
                raise ParameterError(f"--local-workers: a number of workers in 1..{MAX_LOCAL_WORKERS}, "
                                     f"got {self.local_workers!r}")
        elif self.scheduler is not None or self.local_workers is not None:
            raise ParameterError("--scheduler and --local-workers need --engine dask")
        s = self.sync_every
        if s != "epoch" and not (isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= 10**9):
            raise ParameterError(f"--sync-every: a number of steps >= 1 or 'epoch', got {s!r}")
        if self.checkpoint_every is not None and not (isinstance(self.checkpoint_every, int)
                                                      and self.checkpoint_every >= 1):
            raise ParameterError(f"--checkpoint-every: a number of rounds >= 1, got {self.checkpoint_every!r}")
        if self.checkpoint_every is not None and not self.checkpoint:
            raise ParameterError("--checkpoint-every needs a checkpoint file")
        if self.dtype != "float64":
            raise ParameterError("--dtype float32 is not supported on shards (the step reads float64 values)")
        return self

    @property
    def exact(self):
        return self.sync_every == 1


# ------------------------------------------------------------- the worker --

def _version():
    from . import __version__

    return __version__


class ShardWorker:
    """The shards of one worker and its replica of the model (a Dask actor, or a plain object).

    Created with the shards it holds; it reads them at once (feature
    indices as written: the base is decided later by the driver).
    """

    def __init__(self, shards, ids):
        self.version = _version()
        self.ids = list(ids)
        self.parts = []
        for shard in shards:
            if isinstance(shard, ArrayShard):
                values = np.unique(shard.y)
                self.parts.append({"name": shard.name, "indptr": shard.indptr, "indices": shard.indices,
                                   "data": shard.data, "y": shard.y,
                                   "labels": [(float(v), f"{v:g}") for v in values[:3]], "overflow": values.size > 3})
                continue
            if shard.start is None:
                d = read_svmlight(shard.path, zero_based=True)
            else:
                d = read_svmlight_range(shard.path, shard.start, shard.end, zero_based=True)
            self.parts.append({"name": shard.name, "indptr": d.chunk.indptr, "indices": d.chunk.indices,
                               "data": np.ascontiguousarray(d.chunk.data, dtype=np.float64), "y": d.chunk.labels,
                               "labels": [(lab.value, lab.text) for lab in d.distinct_labels],
                               "overflow": d.labels_overflow or len(d.distinct_labels) > 3})
        for p in self.parts:
            p["classes"] = self._classes(p, MAX_REPORTED_CLASSES)
        self.state = None
        self.states = None
        self.shared = False

    def _classes(self, p, cap):
        values = np.unique(p["y"])
        return values[:cap].tolist()

    def report(self):
        """Per shard: rows, non-zeros, smallest and largest index (-1: none), up to 3 labels, the version."""
        out = []
        for p in self.parts:
            ind = p["indices"]
            out.append({"name": p["name"], "rows": int(p["y"].shape[0]), "nnz": int(ind.shape[0]),
                        "min_index": int(ind.min()) if ind.size else -1,
                        "max_index": int(ind.max()) if ind.size else -1,
                        "max_index_row": _first_row_of_max(p["indptr"], ind),
                        "labels": p["labels"], "overflow": p["overflow"],
                        "classes": p["classes"],
                        "finite": bool(np.all(np.isfinite(p["y"]))), "version": self.version})
        return out

    def setup(self, base, n_features, labels, options, plan, sizes, classes=None):
        """Shift the indices to zero-based columns, encode the labels (``classes``: one
        +1/-1 vector per one-vs-rest class), weigh the examples.

        Returns per shard (sum of weights, sum of the loss at w = 0) for f(0)."""
        self.options, self.plan, self.n_features = options, plan, int(n_features)
        self.classes = classes
        self.draws = ShardDraws(sizes, plan.k, options.seed)
        sums = []
        for p in self.parts:
            if base and not p.get("shifted"):
                p["indices"] = p["indices"] - np.int32(base)
                p["shifted"] = True
            if classes is not None:
                p["y_cls"] = [np.where(p["y"] == c, 1.0, -1.0) for c in classes]
                p["y_run"] = p["y_cls"][0]
            elif labels is not None:
                neg, pos = labels
                p["y_run"] = np.where(p["y"] == pos, 1.0, -1.0)
            else:
                p["y_run"] = np.asarray(p["y"], dtype=np.float64)
            sw = None
            if options.class_weight:
                sw = np.ones(p["y"].shape[0])
                for label, weight in options.class_weight.items():
                    sw[p["y"] == float(label)] = float(weight)
            p["sw"] = sw
            w = 1.0 if sw is None else sw
            loss0 = (np.maximum(0.0, np.abs(p["y_run"]) - options.epsilon) if options.loss == "eps-insensitive"
                     else np.ones_like(p["y_run"]))
            sums.append((float(np.sum(w * np.ones_like(p["y_run"]))), float(np.sum(w * loss0))))
        return sums

    def start(self, radius2, state=None):
        """Create the replica (w_1 = 0, or ``state``: a ``get_state()`` dict)."""
        plan = self.plan
        self.radius2 = radius2
        if self.classes is not None:
            self.states = [new_state(self.n_features, self.options, plan, radius2) for _ in self.classes]
            return 0
        self.state = new_state(self.n_features, self.options, plan, radius2)
        if state is not None:
            self.state.set_state(state)
        return int(self.state.t)

    def round(self, update, t, counts):
        """Exact mode, iteration t: apply the previous update to the replica,
        then the margins of this worker's part of A_t at w_t.

        Returns a list of (shard id, indptr, indices, data, g): the violators'
        rows (CSR, zero-based columns) and g_r times the weight, batch order."""
        if update is not None:
            self.state.apply_step(*update)
        if self.state.t != t - 1:
            raise ClusterError(f"a worker's replica is at iteration {self.state.t}, not {t - 1}")
        out = []
        for j, p in zip(self.ids, self.parts):
            c = int(counts[j])
            if c == 0:
                continue
            rows = self.draws.rows(t, j, c)
            viol, g = self.state.collect(p["indptr"], p["indices"], p["data"], p["y_run"], rows, p["sw"])
            out.append((j,) + _rows_csr(p, viol) + (g,))
        return out

    def sample(self, rows, cls=None):
        """Rows of this worker's shards for the step calibration: ``rows`` {shard id: row numbers}.
        Returns a list of (shard id, indptr, indices, data, y, sample weight or None): y the +-1
        labels (of class number ``cls`` against the rest in one-vs-rest), the targets, or
        (``cls="labels"``) the label values as read."""
        out = []
        for j, p in zip(self.ids, self.parts):
            if j not in rows:
                continue
            r = np.asarray(rows[j], dtype=np.int64)
            y = p["y_run"] if cls is None else (p["y"] if cls == "labels" else p["y_cls"][cls])
            out.append((j,) + _rows_csr(p, r) + (y[r], None if p["sw"] is None else p["sw"][r]))
        return out

    def round_ovr(self, updates, t, counts):
        """One-vs-rest, iteration t: as :meth:`round` for every class's replica, all on the
        same rows of A_t.  Returns per class the list :meth:`round` returns."""
        if updates is not None:
            for state, update in zip(self.states, updates):
                state.apply_step(*update)
        rows = {}
        for j, p in zip(self.ids, self.parts):
            c = int(counts[j])
            if c:
                rows[j] = self.draws.rows(t, j, c)
        out = []
        for c, state in enumerate(self.states):
            if state.t != t - 1:
                raise ClusterError(f"a worker's replica of class {c + 1} is at iteration {state.t}, not {t - 1}")
            mine = []
            for j, p in zip(self.ids, self.parts):
                if j in rows:
                    viol, g = state.collect(p["indptr"], p["indices"], p["data"], p["y_cls"][c], rows[j], p["sw"])
                    mine.append((j,) + _rows_csr(p, viol) + (g,))
            out.append(mine)
        return out

    def flush(self, update):
        """Apply the last update; return the replica's (w, b) (for checks)."""
        if update is not None:
            self.state.apply_step(*update)
        return self.state.weights()

    def local_round(self, r, sync, steps, batches):
        """Averaging mode, round r: each shard j of this worker takes ``steps``
        local steps of ``batches[j]`` examples from the common state ``sync``.

        Returns a list of (shard id, w_j, b_j) with w_j = a v of each shard's model."""
        out = []
        for j, p in zip(self.ids, self.parts):
            b = int(batches[j])
            if b == 0:
                continue
            state = new_state(self.n_features, self.options, replace(self.plan, avg_start=0), self.radius2)
            state.set_state(sync)
            order = self.draws.local_rows(r, j, steps, b)
            state.run(p["indptr"], p["indices"], p["data"], p["y_run"], order, steps, b, p["sw"], 1, None)
            w, bias = state.weights()
            out.append((j, w, float(bias)))
        return out


def _rows_csr(p, rows):
    """The rows ``rows`` of a shard as CSR arrays (indptr int64, indices int32, data float64)."""
    indptr = p["indptr"]
    starts = indptr[rows]
    lens = indptr[rows + 1] - starts
    out_ptr = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=out_ptr[1:])
    take = np.repeat(starts - out_ptr[:-1], lens) + np.arange(out_ptr[-1], dtype=np.int64)
    return out_ptr, np.ascontiguousarray(p["indices"][take]), np.ascontiguousarray(p["data"][take])


def _concat(parts):
    """One CSR of the violators of all shards, in shard order; and their g."""
    parts = sorted(parts, key=lambda q: q[0])
    if not parts:
        return (np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float64), np.zeros(0, np.float64))
    ptrs, offset = [np.zeros(1, np.int64)], 0
    for q in parts:
        ptrs.append(q[1][1:] + offset)
        offset += int(q[1][-1])
    return (np.concatenate(ptrs), np.concatenate([q[2] for q in parts]).astype(np.int32, copy=False),
            np.concatenate([q[3] for q in parts]), np.concatenate([q[4] for q in parts]))


# -------------------------------------------------------- worker handles --

class _LocalGroup:
    """A ShardWorker in this process (``engine="local"``)."""

    def __init__(self, worker):
        self.worker, self.ids = worker, worker.ids

    def call(self, name, *args):
        return _Done(getattr(self.worker, name)(*args))


class _Done:
    def __init__(self, value):
        self.value = value

    def result(self, timeout=None):
        return self.value


class _ActorGroup:
    """A ShardWorker actor on one Dask worker."""

    def __init__(self, actor, address, ids):
        self.actor, self.address, self.ids = actor, address, ids

    def call(self, name, *args):
        return getattr(self.actor, name)(*args)


def _gather(groups, name, *args, what="a call", hint="", timeout=None):
    """Call ``name`` on every group at once; the results in group order.

    A PegasosError raised on a worker is raised as is; anything else (a
    lost worker, a closed connection) becomes one ClusterError."""
    futures = []
    try:
        futures = [g.call(name, *args) for g in groups]
        return [f.result(timeout=timeout) if timeout else f.result() for f in futures]
    except PegasosError:
        raise
    except Exception as e:            # noqa: BLE001 - any failure of the cluster ends the run with one message
        text = str(e).splitlines()[0][:200] if str(e) else ""
        raise ClusterError(f"{what} failed ({type(e).__name__}{': ' + text if text else ''}){hint}") from None


# ------------------------------------------------------------- the driver --

class _Cluster:
    """The Dask client (and the LocalCluster it started), closed on exit."""

    def __init__(self, settings):
        try:
            import distributed
        except ImportError:
            raise ParameterError("--engine dask needs Dask: pip install 'pegasos[dask]' "
                                 "(dask[distributed] >= 2024.1)") from None
        self.distributed = distributed
        self.cluster = None
        try:
            if settings.local_workers is not None:
                kwargs = dict(n_workers=settings.local_workers, threads_per_worker=1, processes=settings.processes,
                              dashboard_address=None)
                if settings.processes:
                    kwargs["host"] = "127.0.0.1"
                with warnings.catch_warnings():
                    # the scheduler's HTTP port (8787) taken by another cluster: it picks another; no line to print
                    warnings.filterwarnings("ignore", message="Port .* is already in use")
                    self.cluster = distributed.LocalCluster(**kwargs)
                self.client = distributed.Client(self.cluster, direct_to_workers=True)
            else:
                self.client = distributed.Client(settings.scheduler, direct_to_workers=True, timeout="20s")
        except Exception as e:        # noqa: BLE001
            self.close()
            where = settings.scheduler or f"a LocalCluster of {settings.local_workers} workers"
            raise ClusterError(f"cannot connect to {where}: {type(e).__name__}: {str(e)[:200]}") from None

    def workers(self):
        """Addresses of the workers, sorted; checks each runs this pegasos version."""
        try:
            versions = self.client.run(_version)
        except Exception as e:        # noqa: BLE001
            raise ClusterError(f"the workers cannot import pegasos ({type(e).__name__}: {str(e)[:200]}); "
                               "install the same pegasos on every worker") from None
        check_versions(versions, _version())
        return sorted(versions)

    def actors(self, shards):
        """One ShardWorker actor per worker (shard j on worker j mod W); their groups."""
        addresses = self.workers()
        n = min(len(addresses), len(shards))
        groups, futures = [], []
        for w in range(n):
            ids = list(range(w, len(shards), n))
            fut = self.client.submit(ShardWorker, [shards[j] for j in ids], ids, actor=True,
                                     workers=[addresses[w]], allow_other_workers=False, pure=False)
            futures.append((fut, addresses[w], ids))
        for fut, address, ids in futures:
            try:
                groups.append(_ActorGroup(fut.result(), address, ids))
            except PegasosError:
                raise
            except Exception as e:    # noqa: BLE001
                raise ClusterError(f"worker {address} could not start ({type(e).__name__}: {str(e)[:200]})") from None
        return groups

    def close(self):
        for obj in (getattr(self, "client", None), self.cluster):
            if obj is not None:
                try:
                    obj.close()
                except Exception:     # noqa: BLE001 - closing a broken cluster is best effort
                    pass


class DaskEngine:
    """A Dask cluster to run on: ``pegasos.fit(..., engine=)`` (training on
    shard files), :func:`pegasos.cross_validate` and :func:`pegasos.search`
    (``engine=``: folds and lambda paths as Dask tasks), and the estimators'
    ``engine`` parameter.

    ``DaskEngine(client)`` uses a ``distributed.Client`` (the caller closes
    it); ``DaskEngine(scheduler="tcp://HOST:PORT")`` connects and
    ``DaskEngine(local_workers=N)`` starts a ``LocalCluster`` of N worker
    processes, both on first use and closed by :meth:`close` (or at the end
    of a ``with`` block).  Importing this class does not import Dask.

    Raises
    ------
    ParameterError
        Not exactly one of client, scheduler, local_workers; Dask not installed (on first use).
    ClusterError
        The cluster cannot be reached, or a worker runs another pegasos version (on first use).
    """

    def __init__(self, client=None, *, scheduler=None, local_workers=None, processes=True):
        if sum(x is not None for x in (client, scheduler, local_workers)) != 1:
            raise ParameterError("DaskEngine needs one of a distributed.Client, scheduler= or local_workers=")
        self._client, self._own = client, None
        self.settings = EngineSettings(engine="dask", scheduler=scheduler, local_workers=local_workers,
                                       processes=processes)
        if client is None:
            self.settings.validate()
        self._checked = False

    @property
    def client(self):
        """The ``distributed.Client`` (connected, and the workers' pegasos version checked, on first use)."""
        if self._client is None:
            self._own = _Cluster(self.settings)
            self._client = self._own.client
        if not self._checked:
            wrapper = _Cluster.__new__(_Cluster)
            wrapper.client, wrapper.cluster = self._client, None
            wrapper.workers()
            self._checked = True
        return self._client

    def map(self, fn, calls, what="a task"):
        """``[fn(*args) for args in calls]``, each call a Dask task (any worker), results in order.

        A PegasosError raised in a task is raised as is; any other failure
        (a lost worker, a closed connection) is one ClusterError."""
        client = self.client
        try:
            futures = [client.submit(fn, *args, pure=False) for args in calls]
            return client.gather(futures)
        except PegasosError:
            raise
        except Exception as e:            # noqa: BLE001 - any failure of the cluster ends the run with one message
            text = str(e).splitlines()[0][:200] if str(e) else ""
            raise ClusterError(f"{what} failed on the cluster ({type(e).__name__}{': ' + text if text else ''})") \
                from None

    def close(self):
        """Close the client and the cluster this engine started (not a client it was given)."""
        if self._own is not None:
            self._own.close()
            self._own, self._client, self._checked = None, None, False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __deepcopy__(self, memo):
        return self                       # estimators are cloned with their parameters: share the cluster

    def __reduce__(self):
        # pickled (with a fitted estimator): where the cluster is, connected again on first use
        settings = self.settings
        if settings.local_workers is None and settings.scheduler is None:
            settings = replace(settings, scheduler=self._client.scheduler.address)
        return (_engine_from, (settings,))

    def __repr__(self):
        where = self.settings.scheduler or (f"local_workers={self.settings.local_workers}"
                                            if self.settings.local_workers else "client")
        return f"DaskEngine({where})"


def _engine_from(settings):
    """A DaskEngine for ``settings`` (scheduler or local_workers), not yet connected."""
    if settings.local_workers is not None:
        return DaskEngine(local_workers=settings.local_workers, processes=settings.processes)
    return DaskEngine(scheduler=settings.scheduler)


def as_client(engine):
    """The distributed.Client of a DaskEngine or of a Client itself."""
    return engine.client if isinstance(engine, DaskEngine) else engine


def check_versions(versions, mine):
    """Raise ClusterError unless every worker (``{address: version}``) runs pegasos ``mine``."""
    if not versions:
        raise ClusterError("the Dask cluster has no workers")
    other = {a: v for a, v in versions.items() if v != mine}
    if other:
        a, v = sorted(other.items())[0]
        raise ClusterError(f"worker {a} runs pegasos {v}, the driver {mine}: install the same version everywhere")


def automatic_batch_size(n):
    """The batch size k of a shard run whose k is not given: ceil(n / ROUNDS_PER_EPOCH) for n examples,
    so that an epoch is at most ROUNDS_PER_EPOCH exact rounds (paper Sec. 7.4, Fig. 7: at a fixed
    number k T of examples the accuracy hardly depends on k up to large k)."""
    return max(1, math.ceil(int(n) / ROUNDS_PER_EPOCH))


def fit_shards(spec, options, settings=None, *, split=None, progress=None, on_plan=None, cluster=None,
               auto_batch=False):
    """Train a linear binary classifier or regression model on shard files.

    Parameters
    ----------
    spec : str or list of Shard
        DATA as :func:`expand_shards` reads it, or the shards themselves.
    options : pegasos.options.TrainOptions
        The solver's settings, as for :func:`pegasos.fit`: lambda, T or
        epochs (of all n examples), k, seed, loss (hinge, log, squared-hinge,
        eps-insensitive), epsilon, bias, class weights, projection,
        averaging, t0.  Sampling is always the i.i.d. multinomial
        allocation over shards (``--sampling uniform``; the per-epoch
        permutations of the local default would need a cursor per shard in
        the plan and checkpoints, and are not the sampling of the analysis).
        An unset t0 is calibrated as :func:`pegasos.fit` does, on a sample
        of 1000 examples drawn from the shards (:func:`_calibrated`); unset
        epochs are 10 (the local doubling rule evaluates the objective on all
        the data after every run: not done on shards).
    settings : EngineSettings
        Engine, cluster, averaging rounds, checkpoints.
    split : int or None
        Cut each file into this many byte ranges.
    progress, on_plan : as for :func:`pegasos.fit`.
    cluster : DaskEngine, distributed.Client or None
        Use this cluster (its workers) instead of the settings' one.
    auto_batch : bool
        Ignore ``options.batch_size`` and take k = :func:`automatic_batch_size`
        of the n examples of the shards (an epoch is then at most
        ROUNDS_PER_EPOCH rounds); an unset t0 is then calibrated on the
        sample with the batch of the same share of it, k s / n (rounded, at
        least 1), so that a pass over the sample has as many steps as an
        epoch.  For callers whose user gave no batch size (``pegasos train``
        on shards without -k, the estimators' ``batch_size=None``).

    Returns
    -------
    LinearModel or MulticlassModel
        Its header records ``engine``, ``shards``, ``sync_every``, for
        averaging ``guarantee``, for a calibrated t0 ``step_offset_rule``
        and ``eta0``, and for an automatic k ``batch_size_rule``.

    Raises
    ------
    ParameterError
        Options the shard engines do not support, an index base or dimension
        that does not fit the shards, a checkpoint of another run.
    DataError
        A shard that cannot be read (file and line named).
    ClusterError
        Dask missing or failing: a worker lost (the message names the last
        checkpoint), another pegasos version on a worker.
    """
    if cluster is not None and settings is None:
        settings = EngineSettings(engine="dask")
    settings = (settings or EngineSettings()).validate(cluster=cluster is not None)
    shard = _shard_options(options)                 # (the shards' own refusals first)
    # Pegasos (solver="dual" is refused), decided on the options as given: the engine's own uniform
    # sampling is not a setting of the user's
    chosen = plan(Problem(m=0, in_memory=False), options)
    options = shard
    shards = spec if isinstance(spec, list) else expand_shards(spec, split)
    own = None
    try:
        if settings.engine == "dask":
            if cluster is None:
                own = _Cluster(settings)
                groups = own.actors(shards)
            else:
                wrapper = _Cluster.__new__(_Cluster)
                wrapper.client, wrapper.cluster = as_client(cluster), None
                groups = wrapper.actors(shards)
        else:
            groups = [_LocalGroup(ShardWorker(shards, list(range(len(shards)))))]
        return record_outcome(_train(groups, shards, spec, options, settings, progress, on_plan, auto_batch),
                              chosen, options)
    finally:
        if own is not None:
            own.close()


def _shard_options(options):
    options.validate()
    options.check_finish(on_shards=True)
    if options.task not in ("binary", "regression") or options.multiclass not in (None, "ovr"):
        raise ParameterError("training on shards supports linear binary classification, one-vs-rest and "
                             f"regression (not {options.name('loss')} rank or {options.name('multiclass')} "
                             "crammer-singer)")
    if options.kernel != "linear" or options.shuffle_buffer is not None:
        raise ParameterError("training on shards is linear and in memory (no --kernel, no --stream)")
    if options.sampling not in ("uniform", "permutation"):
        raise ParameterError(f"{options.subject('sampling')}: training on shards draws i.i.d. (uniform) batches; "
                             f"got {options.sampling}")
    if options.schedule != "pegasos":
        raise ParameterError(f"{options.name('schedule')} {options.schedule}: training on shards uses the Pegasos "
                             f"step (drop {options.name('schedule')} or use --engine local without shards)")
    return options.replace(sampling="uniform")


def _train(groups, shards, spec, options, settings, progress, on_plan, auto_batch=False):
    by_id = {}
    for g, reply in zip(groups, _gather(groups, "report", what="reading the shards")):
        by_id.update(zip(g.ids, reply))
    reports = [by_id[j] for j in range(len(shards))]
    mine = _version()
    for r in reports:
        if r["version"] != mine:
            raise ClusterError(f"the worker holding {r['name']} runs pegasos {r['version']}, the driver {mine}")
    sizes = [r["rows"] for r in reports]
    n = sum(sizes)
    if n == 0:
        raise DataError(spec if isinstance(spec, str) else shards[0].path, "no training examples in the shards")
    base, n_features = _dimension(reports, settings)
    check_dense_width(reports, shards, n_features)
    if auto_batch:
        options = options.replace(batch_size=automatic_batch_size(n))
    classes = _ovr_classes(reports, options) if options.task == "binary" else None
    if classes is not None:
        return _train_ovr(groups, shards, spec, options, settings, progress, on_plan, reports, sizes, n, base,
                          n_features, classes, auto_batch)
    labels = _labels(reports, options) if options.task == "binary" else None
    pair = None if labels is None else (labels.negative, labels.positive)
    calibrate = options.step_is_automatic
    if calibrate:
        _gather(groups, "setup", base, n_features, pair, options.replace(step_offset=0.0),
                options.replace(step_offset=0.0).plan(n), sizes, what="preparing the shards")
        options = _calibrated(groups, options, sizes, n_features, share=auto_batch)
    plan = options.plan(n)
    if on_plan is not None:
        on_plan(plan.T)
    sums = [s for reply in _gather(groups, "setup", base, n_features, pair, options, plan, sizes,
                                   what="preparing the shards") for s in reply]
    weights = sum(s[0] for s in sums)
    if options.loss == "log":
        f0 = math.log(2.0) * weights / n
    else:
        f0 = sum(s[1] for s in sums) / n
    radius2 = projection_radius2(options.loss, options.lam, f0, None if not options.class_weight else True)
    fingerprint = _fingerprint(options, plan, settings, shards, sizes, n_features, base, labels)
    start_state, done, extra = None, 0, None
    if settings.resume:
        start_state, done, extra = _read_checkpoint(settings.resume, fingerprint)
    driver = new_state(n_features, options, plan, radius2)
    if start_state is not None and settings.exact:
        try:
            driver.set_state(start_state)
        except ValueError as e:
            raise ParameterError(f"--resume: {settings.resume}: {e}") from None
    shared = len(groups) == 1 and isinstance(groups[0], _LocalGroup)
    if shared:
        worker = groups[0].worker
        worker.radius2, worker.state = radius2, driver
    elif settings.exact:
        _gather(groups, "start", radius2, start_state, what="starting the replicas")
    else:
        _gather(groups, "start", radius2, None, what="starting the replicas")
    checkpoint = _Checkpointer(settings, fingerprint, options, plan, labels, base, n, len(shards), spec)
    checkpoint.calibrated = calibrate
    checkpoint.auto_batch = auto_batch
    if settings.exact:
        w, b = _run_exact(groups, driver, plan, done, shared, progress, checkpoint)
    else:
        sync = start_state if start_state is not None else _averaging_state(driver)
        w, b = _run_averaging(groups, sync, plan, sizes, done, extra, settings, progress, checkpoint)
    if not np.all(np.isfinite(w)) or not math.isfinite(b):
        raise DivergenceError("training diverged to non-finite weights (check the scale of the data and lambda)")
    return checkpoint.model(w, b)


def _calibrated(groups, options, sizes, n_features, classes=None, share=False):
    """``options`` with the step offset t0 chosen as :func:`pegasos.fit` chooses it when none is given
    (:func:`pegasos.autotune.calibrate_step_offset`), on a sample of the shards: min(n, 1000)
    distinct examples drawn uniformly from their union (keyed by the seed), gathered on the driver
    (a few hundred kB).  One-vs-rest calibrates once, on the sample's largest class against the rest
    (as the in-memory one-vs-rest does on the data's).  The sample runs with the run's k, or with
    ``share`` with k_s = max(1, round(k s / n)) (the same share of the sample as k of the data: a
    large k would leave a sample pass a step or two); the t0 found on the s sampled examples is
    carried to the shards as the calibration carries it from s to m steps an epoch:
    eta0 = eta0_s sqrt((s / k_s) / (n / k))."""
    import scipy.sparse as sp

    from .autotune import DEFAULT_SAMPLE_SIZE, calibrate_step_offset

    n = int(sum(sizes))
    s = min(DEFAULT_SAMPLE_SIZE, n)
    rng = np.random.Generator(np.random.PCG64([int(options.seed), 3]))
    picked = np.sort(rng.choice(n, size=s, replace=False))
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    shard_of = np.searchsorted(offsets, picked, side="right") - 1
    rows = {int(j): picked[shard_of == j] - offsets[j] for j in np.unique(shard_of)}
    cls = None
    if classes is not None:             # the largest class of the sample (the first of equal ones)
        labels = np.concatenate([q[4] for q in _sample_parts(groups, rows, "labels")])
        cls = int(np.argmax([np.sum(labels == c) for c in classes[0]]))
    parts = _sample_parts(groups, rows, cls)
    indptr, indices, data, _ = _concat([q[:4] + (q[4],) for q in parts])
    y = np.concatenate([q[4] for q in parts])
    sw = None if parts[0][5] is None else np.concatenate([q[5] for q in parts])
    X = sp.csr_matrix((data, indices, indptr), shape=(s, int(n_features)))
    k = int(options.batch_size)
    k_s = max(1, min(s, round(k * s / n))) if share else k
    settings = dict(batch_size=k_s, projection=options.projection, bias=options.bias,
                    n_features=int(n_features), sample_weight=sw)
    if options.loss == "eps-insensitive":
        settings["epsilon"] = options.epsilon
    else:
        from .labels import BinaryLabels

        settings["labels"] = BinaryLabels(-1.0, 1.0)
    _, eta0_s, _ = calibrate_step_offset(X, y, options.lam, loss=options.loss, seed=options.seed,
                                         average_from=options.average_from, sampling="uniform", details=True,
                                         **settings)
    return options.replace(step_offset=1.0 / (options.lam * eta0_s * math.sqrt((s / k_s) / (n / k))))


def _sample_parts(groups, rows, cls):
    return sorted((q for reply in _gather(groups, "sample", rows, cls, what="drawing the calibration sample")
                   for q in reply), key=lambda q: q[0])


def _ovr_classes(reports, options):
    """The classes (values, texts) of a one-vs-rest run: more than two labels over all shards or
    ``multiclass="ovr"``; None for a binary run."""
    values = sorted({v for r in reports for v in r["classes"]})
    if options.multiclass is None and len(values) <= 2:
        return None
    if len(values) < 2:
        raise ParameterError(f"multiclass training needs at least two classes over all shards, got {len(values)}")
    bad = [v for v in values if v != round(v)]
    if bad:
        raise ParameterError(f"label {bad[0]!r} is not an integer: classification needs class labels; for "
                             f"real-valued targets use {options.name('loss')} eps-insensitive")
    if len(values) > options.max_classes:
        raise ParameterError(f"the shards hold {len(values)} classes, more than {options.name('max_classes')} "
                             f"{options.max_classes}")
    texts = {}
    for r in reports:
        for value, text in r["labels"]:
            texts.setdefault(value, text)
    return values, [texts.get(v) or fmt_label(v) for v in values]


def _train_ovr(groups, shards, spec, options, settings, progress, on_plan, reports, sizes, n, base, n_features,
               classes, auto_batch=False):
    """One-vs-rest on shards: K exact mini-batch Pegasos runs (class c against the rest) in the same
    rounds, each round one call per worker for all K (the same A_t for every class)."""
    if not settings.exact or settings.resume or settings.checkpoint_every:
        raise ParameterError("one-vs-rest on shards runs exact mini-batch Pegasos (--sync-every 1), without "
                             "--checkpoint-every and --resume")
    if options.loss not in ("hinge", "log", "squared-hinge"):
        raise ParameterError(f"one-vs-rest needs a classification loss (hinge, log, squared-hinge), not {options.loss}")
    values, texts = classes
    if options.class_weight:
        for label in options.class_weight:
            if float(label) not in values:
                raise ParameterError(f"class weight given for label {label}, which is not in the shards")
    calibrate = options.step_is_automatic
    if calibrate:
        plain = options.replace(step_offset=0.0)
        _gather(groups, "setup", base, n_features, None, plain, plain.plan(n), sizes, values,
                what="preparing the shards")
        options = _calibrated(groups, options, sizes, n_features, classes, share=auto_batch)
    plan = options.plan(n)
    if on_plan is not None:
        on_plan(plan.T)
    sums = [s for reply in _gather(groups, "setup", base, n_features, None, options, plan, sizes, values,
                                   what="preparing the shards") for s in reply]
    weights = sum(s[0] for s in sums)
    f0 = math.log(2.0) * weights / n if options.loss == "log" else sum(s[1] for s in sums) / n
    radius2 = projection_radius2(options.loss, options.lam, f0, None if not options.class_weight else True)
    states = [new_state(n_features, options, plan, radius2) for _ in values]
    shared = len(groups) == 1 and isinstance(groups[0], _LocalGroup)
    if shared:
        worker = groups[0].worker
        worker.radius2, worker.states = radius2, states
    else:
        _gather(groups, "start", radius2, None, what="starting the replicas")
    draws = ShardDraws(sizes, plan.k, options.seed)
    updates = None
    for t in range(1, plan.T + 1):
        counts = draws.counts(t)
        replies = _gather(groups, "round_ovr", None if shared else updates, t, counts,
                          what=f"round {t} on the workers")
        updates = []
        for c, state in enumerate(states):
            indptr, indices, data, g = _concat([q for reply in replies for q in reply[c]])
            state.apply_step(indptr, indices, data, g, plan.k)
            updates.append((indptr, indices, data, g, plan.k))
        if progress is not None:
            progress(1)
    fits = [_output(state, plan, options.bias) for state in states]
    W = np.vstack([w for w, _ in fits])
    biases = np.array([b for _, b in fits], dtype=np.float64)
    if not np.all(np.isfinite(W)) or not np.all(np.isfinite(biases)):
        raise DivergenceError("training diverged to non-finite weights (check the scale of the data and lambda)")
    info = options.header(plan, examples=n)
    info["index_base"] = str(base)
    info["train_file"] = spec if isinstance(spec, str) else shards[0].name
    info.update(engine=settings.engine, shards=str(len(shards)), sync_every="1")
    _record_automatic(info, options, plan, calibrate, auto_batch)
    return MulticlassModel(W=np.ascontiguousarray(W), biases=biases, classes=np.asarray(values, dtype=np.float64),
                           class_texts=list(texts), lam=float(options.lam), method="ovr", loss=options.loss,
                           bias_mode=options.bias, info=info)


def _first_row_of_max(indptr, indices):
    """The 0-based row holding the largest of ``indices`` (its first), -1 when there is none."""
    if not indices.size:
        return -1
    return int(np.searchsorted(indptr, int(np.argmax(indices)), side="right")) - 1


def check_dense_width(reports, shards, n_features):
    """Refuse a dimension far beyond the data (:data:`pegasos.defaults.DENSE_COLUMNS_FLOOR`): raise
    DataError naming the shard's file and the line of its largest index, or ParameterError for shards held
    in memory."""
    nnz = sum(int(r["nnz"]) for r in reports)
    if n_features <= max(DENSE_COLUMNS_FLOOR, DENSE_COLUMNS_PER_VALUE * nnz):
        return
    j = max(range(len(reports)), key=lambda i: reports[i]["max_index"])
    detail = (f"feature index {reports[j]['max_index']} makes {n_features} columns for {counted(nnz, 'stored value')}: "
              f"training on shards keeps dense weights in every column (at most {DENSE_COLUMNS_PER_VALUE} columns per "
              f"stored value, or {DENSE_COLUMNS_FLOOR}); check the data for a stray huge index, or train without "
              "shards")
    shard = shards[j]
    if not isinstance(shard, Shard):
        raise ParameterError(f"{reports[j]['name']}: {detail}")
    row = int(reports[j]["max_index_row"])
    before = sum(int(r["rows"]) for s, r in zip(shards, reports)
                 if isinstance(s, Shard) and s.path == shard.path and s.start is not None and shard.start is not None
                 and s.start < shard.start)
    raise DataError(shard.path, detail, example_line(shard.path, before + row))


def _dimension(reports, settings):
    """The index base (0 or 1) and the number of features, from every shard's smallest and largest index."""
    lows = [r["min_index"] for r in reports if r["min_index"] >= 0]
    high = max([r["max_index"] for r in reports], default=-1)
    if settings.zero_based is None:
        base = 0 if lows and min(lows) == 0 else 1
    else:
        base = 0 if settings.zero_based else 1
        if base == 1 and lows and min(lows) == 0:
            name = next(r["name"] for r in reports if r["min_index"] == 0)
            raise ParameterError(f"{name} holds feature index 0 but the indices are one-based (drop --zero-based)")
    n_features = max(high + 1 - base, 0)
    if settings.n_features is not None:
        n_features = max(n_features, int(settings.n_features))
    if n_features >= 2**31 - 1:
        raise ParameterError(f"a feature index of {high} is too large")
    return base, n_features


def _labels(reports, options):
    """The two labels of a binary task, from the union of the shards' labels."""
    seen = {}
    for r in reports:
        if r["overflow"]:
            raise ParameterError(f"{r['name']} holds more than two labels: training on shards is binary "
                               f"(or use {options.name('loss')} eps-insensitive for real-valued targets)")
        for value, text in r["labels"]:
            seen.setdefault(value, text)
    if len(seen) != 2:
        raise ParameterError(f"binary training needs exactly two label values over all shards, got {len(seen)}: "
                           f"{sorted(seen)[:5]}")
    (neg, nt), (pos, pt) = sorted(seen.items())
    if options.class_weight:
        for label in options.class_weight:
            if float(label) not in seen:
                raise ParameterError(f"class weight given for label {label}, which is not in the shards")
    return BinaryLabels(neg, pos, nt, pt)


def _run_exact(groups, state, plan, done, shared, progress, checkpoint):
    """Rounds t = done+1..T of mini-batch Pegasos; the output (w, b) as linear.solve gives it."""
    draws = ShardDraws(checkpoint.sizes, plan.k, checkpoint.seed)
    update = None
    for t in range(done + 1, plan.T + 1):
        counts = draws.counts(t)
        replies = _gather(groups, "round", None if shared else update, t, counts,
                          what=f"round {t} on the workers", hint=checkpoint.hint())
        indptr, indices, data, g = _concat([q for reply in replies for q in reply])
        state.apply_step(indptr, indices, data, g, plan.k)
        update = (indptr, indices, data, g, plan.k)
        if progress is not None:
            progress(1)
        checkpoint.maybe(t, state, None)
    return _output(state, plan, checkpoint.bias)


def _output(state, plan, bias):
    """(w, b) of the run: the average or the last iterate, the constant feature split off (as solve())."""
    w, b = state.average()[:2] if plan.avg_start else state.weights()
    if bias == "feature":
        w, b = w[:-1].copy(), float(w[-1])
    return np.ascontiguousarray(w, dtype=np.float64), float(b)


def _averaging_state(state):
    """The common model of averaging mode: the state of ``state`` without a running average."""
    sync = state.get_state()
    sync.update(u=None, avg_start=0, n_avg=0, A=0.0, b_sum=0.0)
    return sync


def _run_averaging(groups, sync, plan, sizes, done, extra, settings, progress, checkpoint):
    """Model averaging: rounds of S local steps per shard, weighted mean of the shards' models."""
    n = sum(sizes)
    k = plan.k
    batches = [max(1, round(k * s / n)) if s else 0 for s in sizes]
    steps = math.ceil(n / k) if settings.sync_every == "epoch" else int(settings.sync_every)
    pi = np.asarray(sizes, dtype=np.float64) / n
    sync = dict(sync)
    avg_sum, n_synced = (None, 0) if extra is None else (extra["avg_sum"], int(extra["n_synced"]))
    rounds = math.ceil(plan.T / steps)
    r = done
    while r < rounds:
        r += 1
        s = min(steps, plan.T - (r - 1) * steps)
        local = dict(sync, b_sum=0.0)
        replies = _gather(groups, "local_round", r, local, s, batches,
                          what=f"round {r} on the workers", hint=checkpoint.hint())
        parts = sorted((q for reply in replies for q in reply), key=lambda q: q[0])
        w = np.zeros_like(sync["v"])
        b = 0.0
        for j, wj, bj in parts:
            w += pi[j] * wj
            b += pi[j] * bj
        sync = dict(sync, v=w, a=1.0, sqnorm=float(np.dot(w, w)), b=b, t=int(sync["t"]) + s)
        if plan.avg_start and sync["t"] >= plan.avg_start:
            avg_sum = w.copy() if avg_sum is None else avg_sum + w
            n_synced += 1
            sync["b_sum"] = float(sync.get("b_sum", 0.0)) + b
        if progress is not None:
            progress(s)
        checkpoint.maybe(r, sync, {"avg_sum": avg_sum, "n_synced": n_synced})
    if plan.avg_start and n_synced:
        w, b = avg_sum / n_synced, float(sync["b_sum"]) / n_synced
    else:
        w, b = sync["v"], float(sync["b"])
    if checkpoint.bias == "feature":
        w, b = w[:-1].copy(), float(w[-1])
    return np.ascontiguousarray(w, dtype=np.float64), float(b)


def _record_automatic(info, options, plan, calibrated, auto_batch):
    """The automatic choices of a shard run in its header, as the in-memory run records its own:
    the calibrated t0 (``step_offset_rule``, ``eta0``) and the automatic k (``batch_size_rule``)."""
    if calibrated:
        info["step_offset_rule"] = "calibrated"
        if plan.t0:
            info["eta0"] = repr(1.0 / (options.lam * plan.t0))
    if auto_batch:
        info["batch_size_rule"] = (f"automatic: ceil(m / {ROUNDS_PER_EPOCH}), at most {ROUNDS_PER_EPOCH} rounds "
                                   "an epoch")


# ------------------------------------------------------------ checkpoints --

def _fingerprint(options, plan, settings, shards, sizes, n_features, base, labels):
    """What a resumed run must share with the saved one (JSON-able)."""
    return {"header": options.header(plan), "loss": options.loss, "bias": options.bias,
            "sync_every": settings.sync_every, "shards": [s.name for s in shards], "sizes": list(sizes),
            "n_features": int(n_features), "base": int(base),
            "labels": None if labels is None else [labels.negative, labels.positive]}


class _Checkpointer:
    """The model header of the run, and checkpoints every R rounds."""

    def __init__(self, settings, fingerprint, options, plan, labels, base, n, n_shards, spec):
        self.settings, self.fingerprint, self.options, self.plan = settings, fingerprint, options, plan
        self.labels, self.base, self.n, self.n_shards, self.spec = labels, base, n, n_shards, spec
        self.sizes, self.seed, self.bias = fingerprint["sizes"], options.seed, options.bias
        self.last = None
        self.calibrated = self.auto_batch = False

    def hint(self):
        if self.last is None:
            return "; no checkpoint was written (--checkpoint-every R)"
        return (f"; {self.settings.checkpoint} holds round {self.last}: rerun with --resume "
                f"{self.settings.checkpoint}")

    def model(self, w, b):
        info = self.options.header(self.plan, examples=self.n)
        info["index_base"] = str(self.base)
        info["train_file"] = self.spec if isinstance(self.spec, str) else self.fingerprint["shards"][0]
        info["engine"] = self.settings.engine
        info["shards"] = str(self.n_shards)
        info["sync_every"] = str(self.settings.sync_every)
        _record_automatic(info, self.options, self.plan, self.calibrated, self.auto_batch)
        if not self.settings.exact:
            info["guarantee"] = "none: model averaging (Zinkevich et al. 2010) is not covered by the Pegasos bound"
        if self.options.task != "binary":
            info["task"] = self.options.task
        return LinearModel(w=w, bias=b, labels=self.labels, lam=float(self.options.lam), bias_mode=self.options.bias,
                           info=info, loss=self.options.loss,
                           epsilon=float(self.options.epsilon) if self.options.loss == "eps-insensitive" else None)

    def maybe(self, r, state, extra):
        every = self.settings.checkpoint_every
        if not every or r % every:
            return
        st = state if isinstance(state, dict) else state.get_state()
        if isinstance(state, dict):       # averaging: the synced model
            w, b = np.asarray(st["v"]) * st["a"], st["b"]
        else:
            w, b = state.weights()
        if self.bias == "feature":
            w, b = w[:-1].copy(), float(w[-1])
        write_checkpoint(self.settings.checkpoint, r, self.fingerprint, st, extra)
        model = self.model(np.ascontiguousarray(w, dtype=np.float64), float(b))
        model.info["iterations"] = str(int(st["t"]))
        model.save(self.settings.checkpoint + ".model")
        self.last = r


def write_checkpoint(path, rounds, fingerprint, state, extra=None):
    """Write the schedule state after ``rounds`` rounds atomically (NumPy .npz:
    the solver state's arrays, and JSON of its scalars, the round and the run's fingerprint)."""
    arrays = {k: np.asarray(v) for k, v in state.items() if isinstance(v, np.ndarray)}
    scalars = {k: v for k, v in state.items() if not isinstance(v, np.ndarray)}
    meta = {"format": CHECKPOINT_FORMAT, "version": _version(), "rounds": int(rounds), "state": scalars,
            "fingerprint": fingerprint, "n_synced": None if extra is None else int(extra["n_synced"])}
    if extra is not None and extra["avg_sum"] is not None:
        arrays["avg_sum"] = extra["avg_sum"]
    arrays = {f"a_{k}": v for k, v in arrays.items()}
    try:
        atomic_write(path, lambda f: np.savez(f, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                                              **arrays), binary=True)
    except PegasosError as e:
        raise PegasosError(f"--checkpoint-every: {e}") from None


def _read_checkpoint(path, fingerprint):
    """(state dict, rounds done, extra) of a checkpoint of this run."""
    import zipfile

    if not os.path.exists(path):
        raise ParameterError(f"--resume: {path}: no such file")
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(bytes(z["meta"]).decode())
            arrays = {k[2:]: z[k] for k in z.files if k.startswith("a_")}
    except OSError as e:
        raise ParameterError(f"--resume: cannot read {path} ({e.strerror or e})") from None
    except (ValueError, KeyError, EOFError, UnicodeDecodeError, zipfile.BadZipFile, zipfile.LargeZipFile) as e:
        # json.JSONDecodeError is a ValueError; a truncated or altered file fails the zip checks (CRC)
        raise ParameterError(f"--resume: {path} is not a pegasos checkpoint or is damaged "
                             f"({type(e).__name__})") from None
    if not isinstance(meta, dict) or meta.get("format") != CHECKPOINT_FORMAT:
        raise ParameterError(f"--resume: {path} is not a pegasos checkpoint")
    try:
        return _checkpoint_contents(path, meta, arrays, fingerprint)
    except (KeyError, TypeError, AttributeError) as e:
        raise ParameterError(f"--resume: {path} is a damaged pegasos checkpoint ({type(e).__name__}: {e})") from None


def _checkpoint_contents(path, meta, arrays, fingerprint):
    saved = json.loads(json.dumps(meta["fingerprint"]))
    now = json.loads(json.dumps(fingerprint))
    if saved != now:
        diff = sorted(k for k in set(saved) | set(now) if saved.get(k) != now.get(k))
        if "header" in diff:
            h1, h2 = saved.get("header", {}), now.get("header", {})
            diff = [k for k in diff if k != "header"] + sorted(k for k in set(h1) | set(h2) if h1.get(k) != h2.get(k))
        raise ParameterError(f"--resume: {path} is a checkpoint of another run (it differs in {', '.join(diff)})")
    state = dict(meta["state"])
    avg_sum = arrays.pop("avg_sum", None)
    state.update(arrays)
    state.setdefault("u", None)
    extra = None if meta.get("n_synced") is None else {"avg_sum": avg_sum, "n_synced": meta["n_synced"]}
    return state, int(meta["rounds"]), extra
