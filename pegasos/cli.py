"""Command line: ``pegasos train | predict | eval | objective``.

A thin layer over the Python API: it parses options, shows progress on a
terminal, prints results, and turns :class:`pegasos.errors.PegasosError` into
a one-line ``Error: ...`` with exit status 1.  Heavy modules (NumPy, SciPy,
the compiled core) are imported inside the commands so that ``--help`` is fast.
"""

import functools
import math
import json
import os
import sys
import time

import click

from .defaults import BIAS_MODES, DEFAULT_EPOCHS, DEFAULT_LAMBDA, DEFAULT_SEED, DEFAULT_SHUFFLE_BUFFER, SAMPLINGS


def _errors_to_click(fn):
    """Report library errors as ``Error: message`` (exit 1), never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from .errors import ExampleError, PegasosError

        try:
            return fn(*args, **kwargs)
        except ExampleError as e:
            # the API names an example by position: name DATA's file and line instead
            data = kwargs.get("data")
            if data is not None:
                from .io import example_line

                e = e.in_file(data, example_line(data, e.example))
            raise click.ClickException(str(e)) from None
        except PegasosError as e:
            raise click.ClickException(str(e)) from None
        except MemoryError:
            raise click.ClickException("out of memory") from None
        except BrokenPipeError:
            # output piped into e.g. `head`: stop quietly, with the status a shell gives a
            # process that SIGPIPE ended (128 + 13), as `yes | head -1` reports
            try:
                sys.stdout = open(os.devnull, "w")
            except OSError:
                pass
            sys.exit(141)
        except OSError as e:
            # e.g. standard output on a full disk
            raise click.ClickException(f"cannot write output: {e.strerror or e}") from None

    return wrapper


class _Progress:
    """tqdm bars on stderr, only when stderr is a terminal and not --quiet."""

    def __init__(self, quiet):
        self.enabled = not quiet and sys.stderr.isatty()

    def bar(self, total, desc, unit, scale=False):
        if not self.enabled:
            return None
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, unit=unit, unit_scale=scale, file=sys.stderr,
                    leave=False, dynamic_ncols=True, mininterval=0.25)

    def reading(self, path):
        size = None
        from .io import is_plain_text_file

        if self.enabled and is_plain_text_file(path):     # compressed: the bytes read are not the file's
            try:
                size = os.path.getsize(path)
            except OSError:
                size = None
        return self.bar(size, f"reading {os.path.basename(path)}", "B", scale=True)


def _update(bar):
    return None if bar is None else bar.update


def _close(bar):
    if bar is not None:
        bar.close()


def _terminate(signum, frame):
    raise SystemExit(128 + signum)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="pegasos")
def main():
    """Train and use SVMs (linear or kernel, binary, multiclass, regression,
    ranking) with Pegasos, on SVMlight/LIBSVM files.

    \b
      pegasos train -l 1e-4 data.svm                    # writes data.svm.model
      pegasos predict test.svm data.svm.model out.txt
      pegasos eval test.svm data.svm.model
      pegasos objective data.svm data.svm.model
    """
    # SIGTERM unwinds like Ctrl-C, so temporary files are removed
    import signal

    signal.signal(signal.SIGTERM, _terminate)


class _SectionOption(click.Option):
    """An option listed under a heading of ``--help`` (``section=``)."""

    def __init__(self, *args, section=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.section = section


class _SectionedCommand(click.Command):
    """A command whose ``--help`` lists its options in sections, and that reads
    LIBLINEAR's ``-wLABEL WEIGHT`` (``-w1 5``) as ``-w LABEL:WEIGHT``."""

    def format_options(self, ctx, formatter):
        sections = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
            if record is not None:
                sections.setdefault(getattr(param, "section", None) or "Other options", []).append(record)
        sections["Other options"] = sections.pop("Other options", [])
        for name, records in sections.items():
            with formatter.section(name):
                formatter.write_dl(records)

    def parse_args(self, ctx, args):
        out, i = [], 0
        while i < len(args):
            a = args[i]
            if (len(a) > 2 and a.startswith("-w") and ":" not in a and i + 1 < len(args)
                    and _is_number(a[2:]) and _is_number(args[i + 1])):
                out += ["-w", f"{a[2:]}:{args[i + 1]}"]
                i += 2
                continue
            out.append(a)
            i += 1
        return super().parse_args(ctx, out)


def _options(section, *specs):
    """A decorator adding the options ``specs`` ((param_decls, attrs) pairs) under ``section``."""

    def decorate(fn):
        for decls, attrs in reversed(specs):
            fn = click.option(*decls, cls=_SectionOption, section=section, **attrs)(fn)
        return fn

    return decorate


_solver_options = _options(
    "Solver (paper Fig. 1 and 2)",
    (("-l", "--lambda", "lam"), dict(type=float, default=DEFAULT_LAMBDA, show_default=True,
                                     help="Regularisation parameter lambda > 0 (LIBLINEAR's C = 1/(lambda m)).")),
    (("-T", "--iterations"), dict(type=int, help="Number of iterations T (each uses k examples).")),
    (("--epochs",), dict(type=float, help="Passes over the data instead of T: T = epochs*m/k [default: until "
                                          "doubling the epochs improves the objective by less than --tol "
                                          f"(linear binary and regression), else {DEFAULT_EPOCHS}].")),
    (("--tol",), dict(type=float, default=0.002, show_default=True,
                      help="Stopping rule of the default epochs: relative objective improvement per doubling.")),
    (("-k", "--batch-size"), dict(type=int, default=1, show_default=True, help="Mini-batch size k.")),
    (("--sampling",), dict(type=click.Choice(SAMPLINGS),
                           help="uniform: i.i.d. draws (as analysed); permutation: new random order each epoch; "
                                "sequential: file order [default: permutation; uniform for --loss rank].")),
    (("--projection",), dict(is_flag=True, help="Project onto a ball that holds the optimum after each step "
                                                "(radius 1/sqrt(lambda) for the hinge, sqrt(2 f(0)/lambda) for "
                                                "other losses).")),
    (("--average/--no-average",), dict(default=None, help="Output the mean of all iterates w_1..w_T (Theorem 1) / "
                                                           "the last iterate w_{T+1} [default: the mean of the "
                                                           "last half, as --average-from 0.5].")),
    (("--average-from",), dict(type=float, metavar="F",
                               help="Output the mean of the iterates from iteration ceil(F*T) on (e.g. 0.5).")),
    (("--t0", "step_offset"), dict(type=float, metavar="T0", help="Step offset: eta_t = 1/(lambda (t + T0)); 0 is "
                                                                  "the paper's 1/(lambda t) [default: calibrated on "
                                                                  "a sample of DATA for linear binary and "
                                                                  "regression models, else 0].")),
    (("--eta0",), dict(type=float, metavar="ETA0", help="First step size; sets T0 = 1/(lambda ETA0).")),
    (("--paper",), dict(is_flag=True, help="The paper's Fig. 1 as run in its Sec. 7 for every setting not given: "
                                           "--sampling uniform --no-average --t0 0 --epochs 10.")),
    (("--seed",), dict(type=int, default=DEFAULT_SEED, show_default=True, help="Random seed.")),
    (("--jobs",), dict(type=click.IntRange(min=1), default=2, show_default=True,
                       help="Threads: one-vs-rest trains classes in parallel; the binary linear trainer splits the "
                            "margins and the update of each large mini-batch (k >= 16 and >= 1600 stored values) "
                            "among them, falling back to one thread while that is faster (same model for any "
                            "number).")),
)
_problem_options = _options(
    "Problem (loss, bias, classes)",
    (("--loss",), dict(type=click.Choice(["hinge", "log", "squared-hinge", "eps-insensitive", "rank"]),
                       default="hinge", show_default=True,
                       help="hinge (SVM), log (logistic regression), squared-hinge, eps-insensitive (regression on "
                            "real-valued labels), rank (pairs with the same qid, SVMlight -z p).")),
    (("-p", "--epsilon"), dict(type=float, default=0.1, show_default=True,
                               help="Width of the insensitive zone of --loss eps-insensitive.")),
    (("--bias",), dict(type=click.Choice(BIAS_MODES), default="none", show_default=True,
                       help="none; feature: constant feature 1, regularised (LIBLINEAR -B 1); "
                            "unregularized: b by sub-gradient steps (heuristic).")),
    (("--multiclass",), dict(type=click.Choice(["ovr", "crammer-singer"]),
                             help="More than two labels: one-vs-rest (the default then) or Crammer-Singer.")),
    (("--cost-matrix",), dict(metavar="FILE",
                              help="Crammer-Singer costs: K lines of K numbers, row = true class, column = "
                                   "predicted class, classes in increasing label order, zero diagonal.")),
    (("-j", "cost_factor"), dict(type=float, metavar="FACTOR", help="Weight of the positive class's errors "
                                                                    "(SVMlight -j).")),
    (("-w", "class_weights"), dict(multiple=True, metavar="LABEL:WEIGHT",
                                   help="Weight of the errors on class LABEL (LIBLINEAR -wi: -w1 5 or -w 1:5); "
                                        "repeatable.")),
    (("--allow-one-class",), dict(is_flag=True, help="Accept data whose labels are all -1, all 0 or all +1 (the "
                                                     "other class is the usual partner).")),
    (("--max-classes",), dict(type=int, default=1000, show_default=True,
                              help="Most classes a multiclass run accepts (labels must be integers).")),
)
_kernel_options = _options(
    "Kernels (paper Fig. 3)",
    (("--kernel",), dict(type=click.Choice(["linear", "poly", "rbf", "sigmoid"]), default="linear",
                         show_default=True, help="linear: explicit w (Fig. 1/2); poly, rbf, sigmoid: kernel "
                                                 "Pegasos (Fig. 3).")),
    (("--gamma",), dict(type=float, help="Kernel gamma > 0 (poly, rbf, sigmoid) [default: 1/n_features].")),
    (("--degree",), dict(type=int, help="Degree >= 1 of the poly kernel [default: 3].")),
    (("--coef0",), dict(type=float, help="coef0 of the poly and sigmoid kernels [default: 0].")),
    (("--budget",), dict(type=int, metavar="B", help="Keep at most B support vectors (drop the one whose "
                                                     "removal changes w least).")),
    (("--cache-mb",), dict(type=float, default=100.0, show_default=True,
                           help="Memory bound of the kernel-row cache in MiB (kernels only).")),
)
_streaming_options = _options(
    "Data larger than memory",
    (("--stream",), dict(is_flag=True, help="Do not load DATA into memory: read it in passes through a shuffle "
                                            "buffer (--shuffle-buffer), or through a binary cache file (--cache).")),
    (("--shuffle-buffer",), dict(type=int, metavar="N",
                                 help=f"Streaming: hold N examples in memory and visit them in random order, one "
                                      f"pass over DATA per epoch [default with --stream: {DEFAULT_SHUFFLE_BUFFER}].")),
    (("--cache", "cache_file"), dict(metavar="FILE",
                                     help="Streaming: parse DATA once into the binary FILE (reused while DATA is "
                                          "unchanged) and train from it memory-mapped; any sampling, several "
                                          "epochs, stdin.")),
)
_data_options = _options(
    "Input and output",
    (("--zero-based",), dict(is_flag=True, help="Feature indices in DATA start at 0 (default 1).")),
    (("--dtype",), dict(type=click.Choice(["float64", "float32"]), default="float64", show_default=True,
                        help="Type of the feature values held in memory.")),
    (("-q", "--quiet"), dict(is_flag=True, help="No progress bar and no summary.")),
    (("--no-objective",), dict(is_flag=True, help="Do not compute the training objective for the summary.")),
    (("--report-gap",), dict(is_flag=True, help="Add to the summary a certified bound on the model's distance to "
                                                "the optimum (duality gap after 20 passes of dual coordinate "
                                                "ascent; linear hinge and squared-hinge models).")),
)

_shard_options = _options(
    "Shards and clusters (linear binary and regression)",
    (("--engine",), dict(type=click.Choice(["local", "dask"]), default="local", show_default=True,
                         help="local: this process; dask: a Dask cluster (pip install 'pegasos[dask]'). With shards "
                              "(DATA a quoted glob, a directory or @list.txt, or --split) both draw the same "
                              "batches and give the same model.")),
    (("--scheduler",), dict(metavar="ADDRESS", help="Dask scheduler to use (tcp://HOST:PORT).")),
    (("--local-workers",), dict(type=int, metavar="N", help="Start a local Dask cluster of N worker processes.")),
    (("--split",), dict(type=int, metavar="N", help="Cut each DATA file into N newline-aligned byte ranges, "
                                                    "one shard each.")),
    (("--sync-every",), dict(default="1", show_default=True, metavar="S|epoch",
                             help="1: exact mini-batch Pegasos (k drawn from all shards each step); S > 1 or "
                                  "epoch: S local steps per shard between model averages (faster, no Pegasos "
                                  "bound).")),
    (("--checkpoint-every",), dict(type=int, metavar="R", help="Write the run's state every R rounds to "
                                                               "--checkpoint (and a model file next to it).")),
    (("--checkpoint",), dict(metavar="FILE", help="Checkpoint file [default: MODEL.ckpt].")),
    (("--resume",), dict(metavar="CHECKPOINT", help="Continue the run saved in CHECKPOINT (same DATA and "
                                                     "options): the same final model as an uninterrupted run.")),
)

#: train's command-line parameters that are TrainOptions fields of the same name
_OPTION_PARAMS = ("lam", "iterations", "epochs", "batch_size", "projection", "average", "average_from", "seed",
                  "loss", "epsilon", "bias", "multiclass", "allow_one_class", "kernel", "gamma", "degree", "coef0",
                  "budget", "cache_mb", "eta0", "tol", "sampling", "step_offset", "max_classes")


@main.command(cls=_SectionedCommand)
@click.argument("data")
@click.argument("model", required=False)
@_solver_options
@_problem_options
@_kernel_options
@_streaming_options
@_shard_options
@_data_options
@_errors_to_click
def train(data, model, paper, jobs, cost_matrix, cost_factor, class_weights, stream,
          shuffle_buffer, cache_file, zero_based, dtype, quiet, no_objective, report_gap, engine, scheduler,
          local_workers, split, sync_every, checkpoint_every, checkpoint, resume, **settings):
    """Train an SVM on DATA (linear, or kernel with --kernel); write MODEL (default: DATA's file name +
    .model, in the current directory; - for standard output, the summary then goes to stderr).

    With --stream, DATA may be larger than memory (see --shuffle-buffer and --cache).
    """
    from .errors import ParameterError, PegasosError
    from .model import check_distinct_files, check_writable
    from .options import TrainOptions

    if shuffle_buffer is not None and cache_file is not None:
        raise ParameterError("give either --shuffle-buffer or --cache, not both")
    if stream and cache_file is None and shuffle_buffer is None:
        shuffle_buffer = DEFAULT_SHUFFLE_BUFFER
    if report_gap and (shuffle_buffer is not None or quiet):
        raise ParameterError("--report-gap needs the data in memory (not --shuffle-buffer) and a summary (not -q)")
    if shuffle_buffer is not None and settings["sampling"] is not None:
        raise ParameterError("--shuffle-buffer sets the order itself (random within the buffer); "
                             "drop --sampling, or use --cache")
    if cache_file is not None and _is_number(cache_file) and not os.path.exists(cache_file):
        raise ParameterError(f"--cache takes a file name, got {cache_file!r}; the kernel-row cache size in "
                             "MiB is --cache-mb (write ./NAME for a file named so)")
    options = TrainOptions(n_threads=jobs, shuffle_buffer=shuffle_buffer, preset="paper" if paper else "auto",
                           class_weight=_class_weights(class_weights, None, None), spelling="cli",
                           **{k: settings[k] for k in _OPTION_PARAMS}).validate()
    if cost_matrix is not None and options.multiclass != "crammer-singer":
        raise ParameterError("--cost-matrix needs --multiclass crammer-singer")
    if model is None:
        if data == "-":
            raise PegasosError("give a MODEL file name when DATA is read from standard input")
        model = os.path.basename(data) + ".model"
    to_stdout = _is_stdout(model)
    if model == "-":
        model = "/dev/stdout"
    check_writable(model)
    check_distinct_files(model, "MODEL", (("DATA", data), ("--cost-matrix", cost_matrix)))
    if cache_file is not None:
        check_distinct_files(cache_file, "--cache", (("DATA", data), ("MODEL", model)))
    shard_run = (engine != "local" or split is not None or scheduler is not None or local_workers is not None
                 or resume is not None or checkpoint_every is not None or sync_every != "1")
    from .engine_dask import is_shard_spec

    if shard_run or (data != "-" and is_shard_spec(data)):
        if stream or cache_file is not None or report_gap or cost_matrix is not None or cost_factor is not None:
            raise ParameterError("training on shards takes none of --stream, --cache, --report-gap, "
                                 "--cost-matrix, -j")
        if settings["sampling"] not in (None, "uniform"):
            raise ParameterError(f"--sampling {settings['sampling']}: training on shards draws i.i.d. batches "
                                 "(uniform) from all shards")
        _train_shards(data, model, options, quiet, to_stdout, dtype, zero_based, engine, scheduler, local_workers,
                      split, sync_every, checkpoint_every, checkpoint, resume)
        return
    if shuffle_buffer is not None:
        from .stream import check_rereadable

        check_rereadable(data)

    import numpy as np

    from .api import fit

    progress = _Progress(quiet)
    t0 = time.perf_counter()
    d, cache_note = _read_training_data(data, options, progress, cache_file, zero_based, np.dtype(dtype))
    if cost_factor is not None:
        options = options.replace(class_weight=_class_weights(class_weights, cost_factor, _positive_label(d)))
    if cost_matrix is not None:
        from .multiclass import read_cost_matrix

        options = options.replace(cost=tuple(read_cost_matrix(cost_matrix, _n_classes(d)).tolist()))
    t_read = time.perf_counter() - t0
    bar = _TrainingBar(progress)
    t1 = time.perf_counter()
    try:
        result = fit(d, options, progress=bar.update, on_plan=bar.start)
    finally:
        bar.close()
    t_train = time.perf_counter() - t1
    result.save(model)
    if not quiet:
        summary = _train_summary(result, d, options, t_read, t_train, cache_note, no_objective, progress, model)
        if report_gap:
            summary += " | " + _gap_summary(result, d)
        click.echo(summary, err=to_stdout)


def _train_shards(data, model, options, quiet, to_stdout, dtype, zero_based, engine, scheduler, local_workers,
                  split, sync_every, checkpoint_every, checkpoint, resume):
    """train on shard files (pegasos.engine_dask.fit_shards), here or on a Dask cluster."""
    from .engine_dask import EngineSettings, fit_shards
    from .errors import ParameterError

    if sync_every != "epoch":
        try:
            sync_every = int(sync_every)
        except ValueError:
            raise ParameterError(f"--sync-every: a number of steps >= 1 or 'epoch', got {sync_every!r}") from None
    if checkpoint_every is not None and checkpoint is None:
        if to_stdout:
            raise ParameterError("--checkpoint-every with MODEL on standard output needs --checkpoint FILE")
        checkpoint = model + ".ckpt"
    settings = EngineSettings(engine=engine, scheduler=scheduler, local_workers=local_workers, sync_every=sync_every,
                              checkpoint_every=checkpoint_every, checkpoint=checkpoint, resume=resume,
                              zero_based=True if zero_based else None, dtype=dtype).validate()
    progress = _Progress(quiet)
    bar = _TrainingBar(progress)
    t1 = time.perf_counter()
    try:
        result = fit_shards(data, options, settings, split=split, progress=bar.update, on_plan=bar.start)
    finally:
        bar.close()
    seconds = time.perf_counter() - t1
    result.save(model)
    if not quiet:
        info = result.info
        click.echo(f"{info['train_examples']} examples in {info['shards']} shards, {result.n_features} features | "
                   f"engine {engine}, sync every {info['sync_every']} | T = {info['iterations']}, k = "
                   f"{info['batch_size']}, lambda = {result.lam:g} | {seconds:.2f} s | model: "
                   f"{'standard output' if to_stdout else model}", err=to_stdout)


def _gap_summary(result, d):
    """The summary's certified-gap part (pegasos.certificate), or why there is none."""
    from .certificate import duality_gap
    from .errors import ParameterError

    try:
        g = duality_gap(result, d.chunk, d.y, passes=20)
    except ParameterError as e:
        return f"no certified gap ({e})"
    return (f"certified: f - f* <= {g['gap']:.3g} ({100 * g['rel_gap']:.3g}% of f; dual bound {g['dual']:.6g}, "
            f"{g['seconds']:.2f} s)")


class _TrainingBar:
    """The training progress bar, sized when the run knows its T (``fit``'s on_plan)."""

    def __init__(self, progress):
        self.progress, self.bar = progress, None

    def start(self, total):
        self.bar = self.progress.bar(total, "training", "it", scale=True)

    def update(self, n):
        if self.bar is not None:
            self.bar.update(n)

    def close(self):
        _close(self.bar)


def _read_training_data(data, options, progress, cache_file, zero_based, dtype):
    """DATA in memory, from its cache, or its first pass for the shuffle buffer; and a note on the cache."""
    bar = progress.reading(data)
    try:
        if cache_file is not None:
            from .stream import load_cached

            d, reused = load_cached(data, cache_file, zero_based=zero_based, dtype=dtype, progress=_update(bar))
            return d, f"cache {cache_file} ({'reused' if reused else 'built'})"
        if options.shuffle_buffer is not None:
            from .stream import scan

            d = scan(data, zero_based=zero_based, dtype=dtype,
                     epsilon=options.epsilon if options.task == "regression" else None, progress=_update(bar))
            n_labels = 65 if d.labels_overflow else len(d.distinct_labels)
            if options.task == "binary" and n_labels > 2:
                from .errors import ParameterError

                raise ParameterError(f"{data} has {n_labels if n_labels <= 64 else 'more than 64'} labels: "
                                     "--shuffle-buffer trains binary classifiers; use --cache FILE for multiclass")
            return d, ""
        from .io import read_svmlight

        return read_svmlight(data, zero_based=zero_based, dtype=dtype, progress=_update(bar)), ""
    finally:
        _close(bar)


def _positive_label(d):
    """The positive label value of binary training data (for -j); None when the data are not binary."""
    values = sorted(label.value for label in d.distinct_labels)
    return values[-1] if len(values) == 2 and not d.labels_overflow else None


def _n_classes(d):
    import numpy as np

    return int(np.unique(d.y).size)


def _train_summary(result, d, options, t_read, t_train, cache_note, no_objective, progress, model):
    """train's one-line summary: data, run, timings, objective, cache, model file."""
    parts = [f"trained on {d.path}: m={d.n_examples} n={d.n_features} nnz={d.nnz}",
             f"T={result.info['iterations']} k={options.batch_size} lambda={options.lam!r}"]
    if options.shuffle_buffer is not None:
        parts.append(f"shuffle buffer {options.shuffle_buffer}")
        parts.append(f"scan {t_read:.2f} s, train {t_train:.2f} s")
    else:
        if getattr(result, "kind", "linear") == "kernel":
            parts.append(f"kernel {result.kernel} gamma={result.gamma!r}: {result.n_support} support vectors")
        if getattr(result, "task", None) == "multiclass":
            parts.append(f"{result.method}, {result.n_classes} classes")
        parts.append(f"read {t_read:.2f} s, train {t_train:.2f} s")
    if not no_objective:
        from .scoring import objective, objective_file

        if options.shuffle_buffer is not None:
            bar = progress.reading(d.path)
            try:
                obj = objective_file(result, d.path, progress=_update(bar))
            finally:
                _close(bar)
        else:
            obj = objective(result, d.chunk, d.y, qid=d.chunk.qid)
        parts.append(_objective_summary(obj))
    if cache_note:
        parts.append(cache_note)
    parts.append(f"model {model}")
    return " | ".join(parts)


def _is_stdout(path):
    """Whether writing ``path`` writes this process's standard output."""
    if path in ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        return True
    try:
        a, b = os.stat(path), os.fstat(1)
    except (OSError, ValueError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino) and not os.path.isfile(path) or \
        (os.path.realpath(path) == os.path.realpath("/proc/self/fd/1"))


def _objective_summary(obj):
    """The summary's "objective F (loss L, train error E)" part from a scoring dict."""
    details = []
    if obj.get("mean_loss") is not None:
        details.append(f"{obj.get('loss', 'hinge')} {obj['mean_loss']:.6g}")
    if obj.get("error_rate") is not None:
        details.append(f"train error {obj['error_rate']:.4f}")
    return f"objective {obj['objective']:.6g} ({', '.join(details)})"


def _class_weights(items, cost_factor, positive):
    """{label value: weight} from -w LABEL:WEIGHT options and -j FACTOR (the positive class's)."""
    from .errors import ParameterError

    out = {}
    if cost_factor is not None:
        if positive is None:
            raise ParameterError("-j applies to binary classification")
        out[positive] = cost_factor
        if any(_is_number(item.rpartition(":")[0]) and float(item.rpartition(":")[0]) == positive
               for item in items):
            raise ParameterError("give the positive class's weight with either -j or -w, not both")
    for item in items:
        label, sep, weight = item.rpartition(":")
        try:
            out[float(label)] = float(weight)
        except ValueError:
            raise ParameterError(f"-w expects LABEL:WEIGHT, got {item!r}") from None
        if not sep:
            raise ParameterError(f"-w expects LABEL:WEIGHT, got {item!r}")
    return out or None


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def _load(model_path, data):
    """The model of MODEL (``-``: standard input, when DATA is not read from there)."""
    from .errors import ParameterError
    from .modelfile import load_model

    if model_path == "-" and data == "-":
        raise ParameterError("DATA and MODEL cannot both be standard input: give one of them as a file")
    return load_model(model_path)


@main.command()
@click.argument("data")
@click.argument("model")
@click.argument("output", required=False)
@click.option("--labels", "as_labels", is_flag=True,
              help="Write predicted labels (as spelled in the training data) instead of decision values.")
@click.option("--proba", is_flag=True, help="Write P(positive label) (models trained with --loss log).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@_errors_to_click
def predict(data, model, output, as_labels, quiet, proba=False):
    """Write one decision value per example of DATA (to OUTPUT or stdout).

    Binary models: f(x) = <w,x> + b (kernel models: sum of c_i K(sv_i, x));
    f > 0 predicts the positive label.  Multiclass models: K values per line,
    one per class in increasing label order.  Regression and ranking: the
    prediction or the score.
    """
    import numpy as np

    from .io import iter_svmlight
    from .model import atomic_write, check_distinct_files

    from .errors import ParameterError

    check_distinct_files(output, "OUTPUT", (("DATA", data), ("MODEL", model)))
    mdl = _load(model, data)
    zero_based = mdl.info.get("index_base", "1") == "0"
    progress = _Progress(quiet)
    task = getattr(mdl, "task", "binary")
    if proba and getattr(mdl, "loss", "hinge") != "log":
        raise ParameterError(f"--proba needs a model trained with --loss log "
                             f"({model} uses {getattr(mdl, 'loss', 'hinge')})")
    if proba and as_labels:
        raise ParameterError("give either --proba or --labels, not both")
    if as_labels and task in ("regression", "ranking"):
        raise ParameterError(f"--labels applies to classification models, not to {task}")

    def write(f):
        bar = progress.reading(data)
        try:
            for chunk in iter_svmlight(data, zero_based=zero_based, progress=_update(bar)):
                values = mdl.decision_function(chunk)
                if task == "multiclass":
                    if as_labels:
                        lines = [mdl.class_texts[c] for c in np.argmax(values, axis=1).tolist()]
                    elif proba:
                        p = _sigmoid(values)     # each one-vs-rest problem's P(class)
                        lines = [" ".join(map(repr, row)) for row in p.tolist()]
                    else:
                        lines = [" ".join(map(repr, row)) for row in values.tolist()]
                elif as_labels:
                    lines = mdl.labels.decode(values > 0).tolist()
                elif proba:
                    lines = [repr(v) for v in _sigmoid(values).tolist()]
                else:
                    lines = [repr(v) for v in values.tolist()]
                f.write("\n".join(lines))
                f.write("\n")
        finally:
            _close(bar)

    if output is None or output == "-":
        write(sys.stdout)
        sys.stdout.flush()
    else:
        atomic_write(output, write)


def _sigmoid(f):
    """1 / (1 + e^-f) without cancellation (as LinearModel.predict_proba): 0.5 (1 + tanh(f/2))
    loses the relative precision of small probabilities and gives 0 below about 1e-17."""
    import numpy as np

    e = np.exp(-np.abs(f))
    return np.where(f >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))


def _fmt(v, digits=4):
    return "n/a" if v is None else f"{v:.{digits}f}"


@main.command(name="eval")
@click.argument("data")
@click.argument("model")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON.")
@click.option("--no-auc", is_flag=True, help="Skip ROC AUC (keeps memory flat for huge files).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@_errors_to_click
def eval_(data, model, as_json, no_auc, quiet):
    """Evaluate MODEL on DATA.

    Binary: accuracy, precision, recall, F1, ROC AUC, hinge (and log) loss,
    confusion matrix.  Multiclass: accuracy, per-class precision/recall/F1,
    macro-F1, confusion matrix.  Regression: MSE, MAE, R^2.  Ranking:
    pairwise accuracy and NDCG@10 (gain 2^label - 1) averaged over queries.
    """
    from .scoring import evaluate_file

    mdl = _load(model, data)
    progress = _Progress(quiet)
    bar = progress.reading(data)
    try:
        r = evaluate_file(mdl, data, auc=not no_auc, progress=_update(bar))
    finally:
        _close(bar)
    if as_json:
        click.echo(json.dumps(r, indent=2))
        return
    if r.get("task") in ("multiclass", "regression", "ranking"):
        click.echo(_other_eval_text(r))
        return
    c = r["confusion"]
    pos, neg = r["positive_label"], r["negative_label"]
    acc = _fmt(r["accuracy"])
    if r["examples"]:
        acc += f" ({r['correct']}/{r['examples']})"
    width = max(len(pos), len(neg)) + 5
    rows = [
        f"examples     {r['examples']}",
        f"accuracy     {acc}",
        f"precision    {_fmt(r['precision'])}   (positive label {pos})",
        f"recall       {_fmt(r['recall'])}",
        f"F1           {_fmt(r['f1'])}",
        f"ROC AUC      {_fmt(r['roc_auc'])}",
        f"hinge loss   {_fmt(r['hinge_loss'], 6)}",
        "confusion matrix (rows: true label, columns: predicted label)",
        f"  {'':>{width}} {'pred ' + neg:>{width + 3}} {'pred ' + pos:>{width + 3}}",
        f"  {'true ' + neg:>{width}} {c['tn']:>{width + 3}} {c['fp']:>{width + 3}}",
        f"  {'true ' + pos:>{width}} {c['fn']:>{width + 3}} {c['tp']:>{width + 3}}",
        f"TP={c['tp']} FP={c['fp']} TN={c['tn']} FN={c['fn']}",
    ]
    if "log_loss" in r:
        rows.insert(7, f"log loss     {_fmt(r['log_loss'], 6)}")
    click.echo("\n".join(rows))


def _other_eval_text(r):
    """eval's text for multiclass, regression and ranking models."""
    if r["task"] == "regression":
        return (f"examples     {r['examples']}\nMSE          {_fmt(r['mse'], 6)}\nMAE          {_fmt(r['mae'], 6)}\n"
                f"R^2          {_fmt(r['r2'], 6)}\neps-insensitive loss {_fmt(r['eps_insensitive_loss'], 6)}")
    if r["task"] == "ranking":
        return (f"examples     {r['examples']}\nqueries      {r['queries']}\npairs        {r['pairs']}\n"
                f"pairwise accuracy {_fmt(r['pairwise_accuracy'])}\nNDCG@10      {_fmt(r['ndcg_at_10'])}")
    acc = _fmt(r["accuracy"]) + (f" ({r['correct']}/{r['examples']})" if r["examples"] else "")
    rows = [f"examples     {r['examples']}", f"classes      {r['classes']}", f"accuracy     {acc}",
            f"macro F1     {_fmt(r['macro_f1'])}", "per class:   label  support  precision  recall  F1"]
    for p in r["per_class"]:
        rows.append(f"  {p['label']:>12} {p['support']:>8} {_fmt(p['precision']):>10} {_fmt(p['recall']):>7} "
                    f"{_fmt(p['f1']):>7}")
    if r["classes"] <= 20:
        width = max(6, max(len(t) for t in r["labels"]) + 1)
        rows.append("confusion matrix (rows: true label, columns: predicted label)")
        rows.append(" " * (width + 2) + "".join(f"{t:>{width}}" for t in r["labels"]))
        for t, row in zip(r["labels"], r["confusion"]):
            rows.append(f"  {t:>{width}}" + "".join(f"{v:>{width}}" for v in row))
    else:
        rows.append("(confusion matrix: use --json)")
    return "\n".join(rows)


@main.command()
@click.argument("data")
@click.argument("model")
@click.option("-l", "--lambda", "lam", type=float, help="lambda to evaluate with (default: the model's).")
@click.option("--sample", type=float, metavar="P",
              help="Estimate the hinge loss on a random fraction P of DATA (for big files and kernel models).")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the --sample draw.")
@click.option("--gap", is_flag=True,
              help="Also prove how far MODEL is from the optimum: a dual lower bound on f* and the duality gap "
                   "(linear hinge / squared hinge models, binary or one-vs-rest; DATA is loaded into memory).")
@click.option("--gap-passes", type=int, metavar="N", default=None,
              help="Passes of dual coordinate ascent for --gap (default 20; each costs one pass over DATA).")
@click.option("--json", "as_json", is_flag=True, help="Print the values as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@_errors_to_click
def objective(data, model, lam, as_json, quiet, sample=None, seed=1, gap=False, gap_passes=None):
    """Primal objective lambda/2 ||w||^2 + mean loss of MODEL on DATA (the loss it was trained with).

    With --gap, also a certified lower bound on the optimum f* (weak duality),
    so that objective - f* <= gap.
    """
    import math

    from .errors import ParameterError
    from .scoring import objective_file

    if lam is not None and not (math.isfinite(lam) and lam > 0):
        raise ParameterError(f"-l/--lambda: lambda must be a positive number, got {lam}")
    if sample is not None and not (0.0 < sample <= 1.0):
        raise ParameterError(f"--sample must be a fraction in (0, 1], got {sample}")
    if gap_passes is not None and not gap:
        raise ParameterError("--gap-passes applies only with --gap")
    if gap and sample is not None:
        raise ParameterError("--gap needs the whole of DATA: it cannot be combined with --sample")
    if gap:
        from .certificate import DEFAULT_GAP_PASSES, check_passes

        gap_passes = check_passes(DEFAULT_GAP_PASSES if gap_passes is None else gap_passes, "--gap-passes")
        return _objective_gap(data, model, lam, as_json, quiet, gap_passes)
    mdl = _load(model, data)
    if sample is not None and getattr(mdl, "task", "binary") != "binary":
        raise ParameterError(f"--sample applies to binary models, not to {mdl.task} ones")
    progress = _Progress(quiet)
    bar = progress.reading(data)
    try:
        r = objective_file(mdl, data, lam=lam, progress=_update(bar), sample=sample, seed=seed)
    finally:
        _close(bar)
    if as_json:
        click.echo(json.dumps(r, indent=2))
        return
    if r.get("task") in ("multiclass", "regression", "ranking"):
        rows = [f"examples     {r['examples']}", f"task         {r['task']} (loss {r['loss']})",
                f"lambda       {r['lambda']!r}", f"objective    {_fmt(r['objective'], 8)}"]
        if r.get("mean_loss") is not None:
            rows.append(f"mean loss    {_fmt(r['mean_loss'], 8)}")
        rows.append(f"regularizer  {r['regularizer']:.8f}")
        if r.get("error_rate") is not None:
            rows.append(f"error rate   {_fmt(r['error_rate'])}")
        click.echo("\n".join(rows))
        return
    bias = "" if r["bias_mode"] == "none" else f"bias         {r['bias']!r} ({r['bias_mode']})\n"
    click.echo(
        f"examples     {r['examples']}{'' if sample is None else f' (random fraction {sample!r} of the file)'}\n"
        f"lambda       {r['lambda']!r}\n"
        f"objective    {_fmt(r['objective'], 8)}\n"
        f"{(r.get('loss') or 'hinge') + ' loss':<12} {_fmt(r.get('mean_loss', r['hinge_loss']), 8)}\n"
        f"regularizer  {r['regularizer']:.8f}\n"
        f"norm of w    {r['norm_w']:.6f}\n"
        f"{bias}"
        f"error rate   {_fmt(r['error_rate'])}"
    )


def _objective_gap(data, model, lam, as_json, quiet, passes):
    """``objective --gap``: the primal, the dual bound and the gap, as text or JSON."""
    from .certificate import check_gap_model, duality_gap
    from .io import read_svmlight

    mdl = _load(model, data)
    check_gap_model(mdl)           # before reading DATA
    progress = _Progress(quiet)
    bar = progress.reading(data)
    try:
        d = read_svmlight(data, zero_based=mdl.info.get("index_base", "1") == "0", progress=_update(bar))
    finally:
        _close(bar)
    r = duality_gap(mdl, d.X, d.y, passes=passes, lam=lam)
    if as_json:
        click.echo(json.dumps(r, indent=2))
        return
    click.echo(
        f"examples     {r['examples']}\n"
        f"lambda       {r['lambda']!r}\n"
        f"loss         {r['loss']} (bias {r['bias_mode']})\n"
        f"objective    {r['primal']:.10g}   (primal, the model's)\n"
        f"dual bound   {r['dual']:.10g}   (f* >= this, after {r['passes']} passes)\n"
        f"gap          {r['gap']:.4g}   (objective - f* <= gap)\n"
        f"relative gap {r['rel_gap']:.4g}\n"
        f"seconds      {r['seconds']:.3f}"
    )


if __name__ == "__main__":  # pragma: no cover
    main()
