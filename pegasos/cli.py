"""Command line: ``pegasos train | predict | eval | objective | plot``.

A thin layer over the Python API: it parses options, shows progress on a
terminal, prints results, and turns :class:`pegasos.errors.PegasosError` into
a one-line ``Error: ...`` with exit status 1.  Heavy modules (NumPy, SciPy,
the compiled core) are imported inside the commands so that ``--help`` is fast.
"""

import functools
import json
import math
import os
import sys
import time
import warnings

# NumPy's BLAS would start a pool of threads at import, which pegasos never uses (its loops are its own)
# and which spin after a call on the processor --jobs gave the run; a user's own setting is kept
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# and NumPy's advice of transparent huge pages on its large arrays: where the system's THP defrag is
# "madvise", a fault in them may compact memory first; on the 1M x 50k set, with the file's page cache
# cold, it cost 0.4 s of a 3.1 s run and gained nothing warm (benchmarks/bench_cold_cache.py)
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")

import click

from .defaults import (SOLVERS, BIAS_MODES, DEFAULT_CACHE_MB, DEFAULT_EPOCHS, DEFAULT_LAMBDA, DEFAULT_SEED,
                       DEFAULT_SHUFFLE_BUFFER, DEFAULT_TOL, SAMPLINGS, SCHEDULES)


DEFAULT_PATIENCE = 5        # checks of --early-stop given without a number


def _is_shard_spec(data):
    """engine_dask.is_shard_spec, imported only for a DATA that is not a regular file
    (the shard engine's module is not needed, nor its import time paid, for one file)."""
    from .engine_dask import is_shard_spec

    return is_shard_spec(data)


def _strict_json(value):
    """``value`` with every non-finite float as None: JSON has no NaN or Infinity (strict parsers and jq
    refuse them), and an undefined number is null in every record of the commands."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict_json(v) for v in value]
    return value


def _echo_json(record):
    """Print ``record`` as indented, strict JSON (see :func:`_strict_json`)."""
    click.echo(json.dumps(_strict_json(record), indent=2, allow_nan=False))


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
        except KeyboardInterrupt:
            # Ctrl-C: one line and the shell's status for SIGINT (128 + 2); temporary files are gone
            _stop_line("interrupted (SIGINT)")
            sys.exit(130)
        except _Terminated as e:
            _stop_line(f"terminated ({e.name})")
            raise
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


class _Terminated(SystemExit):
    """Raised by the SIGTERM handler: unwinds like Ctrl-C (temporary files are removed)
    and exits with 128 + the signal number, as a process the signal ended."""

    def __init__(self, signum):
        import signal

        super().__init__(128 + signum)
        self.name = signal.Signals(signum).name


def _terminate(signum, frame):
    raise _Terminated(signum)


def _stop_line(what):
    """The one line written when a signal stops a command."""
    try:
        sys.stderr.write(f"pegasos: {what}; stopped, nothing half-written was left\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


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
      pegasos plot run.trace.csv -o run.png       # after train --trace run.trace.csv
    """
    # SIGTERM and SIGHUP (the terminal or ssh session closed) unwind like Ctrl-C, so temporary files are
    # removed; a SIGHUP ignored by the caller (nohup) stays ignored
    import signal

    from .errors import ConvergenceWarning

    # pegasos.fit's warnings are the commands' notes, said from the same outcome (train) or per fold
    warnings.filterwarnings("ignore", category=ConvergenceWarning)

    signal.signal(signal.SIGTERM, _terminate)
    if signal.getsignal(signal.SIGHUP) == signal.SIG_DFL:
        signal.signal(signal.SIGHUP, _terminate)


class _SectionOption(click.Option):
    """An option listed under a heading of ``--help-all`` (``section=``)."""

    def __init__(self, *args, section=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.section = section


#: The options that ``--help`` of train, cv and search lists (parameter names; COMMAND:name for one
#: command's only); ``--help-all`` lists every option, in sections.  A name a command does not have is
#: skipped, so one set serves the three commands, and an option not yet declared may be named here.
SHORT_HELP_OPTIONS = frozenset({
    "lam", "cost_c", "iterations", "epochs", "tol", "solver", "loss", "bias", "multiclass", "class_weights",
    "cost_factor", "kernel", "gamma", "batch_size", "seed", "jobs", "quiet", "report_gap", "train:stream",
    "init_model", "cv_folds", "as_json", "explain",
    # cv and search
    "folds", "fold_jobs", "lambda_grid", "gamma_grid", "validation", "metric",
    "help_all",     # and -h/--help
})

#: The longest help text the ``--help`` listing shows with its bracketed part (two lines of its column
#: at 80 columns)
_SHORT_TEXT_CHARS = 88

_EVERY_OPTION = "pegasos.every_option"        # ctx.meta key: --help-all asked for the full listing


def _short_text(name, text):
    """The help text ``text`` of option ``name`` as the ``--help`` listing shows it: up to its first "; "
    outside brackets (the rest is for ``--help-all``), and without a long text's bracketed remark."""
    text = _cut_at(text, "; ")
    return text if len(text) <= _SHORT_TEXT_CHARS else _cut_at(text, " [")


def _cut_at(text, mark):
    """``text`` up to the first ``mark`` outside parentheses and brackets, ended by a full stop."""
    depth = 0
    for i, ch in enumerate(text):
        if depth == 0 and i > 0 and text.startswith(mark, i):
            return text[:i].rstrip(".:,") + "."
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
    return text


def _show_every_option(ctx, param, value):
    """--help-all: the help with every option, in sections."""
    if not value or ctx.resilient_parsing:
        return
    ctx.meta[_EVERY_OPTION] = True
    click.echo(ctx.get_help(), color=ctx.color)
    ctx.exit()


class _UsageLine(click.ClickException):
    """A usage error in one line, without click's usage text: exit status 2, as click's usage errors."""

    exit_code = 2


class _SectionedCommand(click.Command):
    """A command whose ``--help`` lists the options of :data:`SHORT_HELP_OPTIONS` and ``--help-all`` every
    option in sections; that reads LIBLINEAR's ``-wLABEL WEIGHT`` (``-w1 5``) as ``-w LABEL:WEIGHT``,
    ``--early-stop`` without a number as ``--early-stop 5``, and answers LIBLINEAR's and SVMlight's
    options that pegasos spells otherwise (``-B 1``: ``--bias feature``) with pegasos' spelling."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.params.append(click.Option(["--help-all"], is_flag=True, expose_value=False, is_eager=True,
                                        callback=_show_every_option,
                                        help="Show every option, in sections, and exit."))

    def format_options(self, ctx, formatter):
        if ctx.meta.get(_EVERY_OPTION):
            self._format_every_option(ctx, formatter)
            return
        records, left = [], 0
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
            if record is None:
                continue
            if not (param.name in SHORT_HELP_OPTIONS or f"{self.name}:{param.name}" in SHORT_HELP_OPTIONS
                    or param is self.get_help_option(ctx)):
                left += 1
                continue
            text = param.help or ""
            extra = record[1][len(text):] if record[1].startswith(text) else ""
            records.append((record[0], _short_text(param.name, text) + extra))
        with formatter.section("Options"):
            formatter.write_dl(records)
        formatter.write_paragraph()
        formatter.write_text(f"{ctx.command_path} --help-all lists every option ({left} more), in sections.")

    def _format_every_option(self, ctx, formatter):
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
            if a == "--early-stop" and (i + 1 == len(args) or not args[i + 1].isdigit()):
                if i + 1 < len(args) and _is_number(args[i + 1]):
                    out += [a, args[i + 1]]                  # a negative or fractional PATIENCE: its range error
                    i += 2
                    continue
                out += [a, str(DEFAULT_PATIENCE)]            # PATIENCE left out
                i += 1
                continue
            out.append(a)
            i += 1
        try:
            rest = super().parse_args(ctx, out)
        except click.NoSuchOption as e:
            answer = _foreign_spelling(e.option_name, args, {p.name for p in self.params})
            if answer is None:
                raise
            raise _UsageLine(answer) from None
        if not ctx.resilient_parsing:
            _check_cost(ctx)
        return rest


#: LIBLINEAR's solver types (-s) as pegasos spells them; None: pegasos has no such model
_LIBLINEAR_SOLVERS = {
    "0": ("L2-regularised logistic regression", "--loss log"),
    "1": ("L2-loss SVC, dual", "--loss squared-hinge"),
    "2": ("L2-loss SVC, primal", "--loss squared-hinge"),
    "3": ("L1-loss SVC, dual", "--loss hinge"),
    "4": ("Crammer-Singer multiclass SVC", "--multiclass crammer-singer"),
    "5": ("L1-regularised L2-loss SVC", None),
    "6": ("L1-regularised logistic regression", None),
    "7": ("L2-regularised logistic regression, dual", "--loss log"),
    "11": ("L2-loss SVR", None),
    "12": ("L2-loss SVR, dual", None),
    "13": ("L1-loss SVR, dual", "--loss eps-insensitive"),
    "21": ("one-class SVM", None),
}

#: SVMlight's and LIBSVM's kernel types (-t)
_KERNEL_TYPES = {"0": "linear", "1": "poly", "2": "rbf", "3": "sigmoid"}


def _value_after(option, args):
    """The value given to the short option ``option`` in ``args`` (``-B 1`` or ``-B1``), or None."""
    for i, a in enumerate(args):
        if a == option:
            return args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("--") else None
        if a.startswith(option) and not a.startswith("--"):
            return a[len(option):]
    return None


def _foreign_spelling(option, args, params):
    """The one-line answer to LIBLINEAR's or SVMlight's ``option`` (in ``args``) that pegasos spells
    otherwise: its spelling here, or None for an option no other tool has either.  ``params``: the
    parameter names of the command (--solver is named where the command has it)."""
    value = _value_after(option, args)
    shown = option if value is None else f"{option} {value}"
    if option == "-B":
        try:
            b = float(value)
        except (TypeError, ValueError):
            return "pegasos spells LIBLINEAR's -B as --bias feature (a constant feature 1) or --bias none"
        if b <= 0:
            return f"pegasos spells LIBLINEAR's {shown} (no bias) as --bias none, the default"
        return (f"pegasos spells LIBLINEAR's {shown} as --bias feature"
                + ("" if b == 1 else " (its constant feature is 1)"))
    if option == "-e":
        return (f"pegasos spells LIBLINEAR's {shown} as --tol (the relative duality gap to certify: "
                "LIBLINEAR's values do not carry over)")
    if option == "-s":
        algorithm = " (the algorithm: --solver)" if "solver" in params else ""
        if value not in _LIBLINEAR_SOLVERS:
            return f"pegasos spells LIBLINEAR's -s (solver type) as --loss and --multiclass{algorithm}"
        what, spelling = _LIBLINEAR_SOLVERS[value]
        if spelling is None:
            return f"pegasos trains no model of LIBLINEAR's {shown} ({what})"
        return f"pegasos spells LIBLINEAR's {shown} ({what}) as {spelling}{algorithm}"
    if option == "-t":
        if value in _KERNEL_TYPES:
            return f"pegasos spells SVMlight's {shown} as --kernel {_KERNEL_TYPES[value]}"
        return "pegasos spells SVMlight's -t (kernel type) as --kernel linear, poly, rbf or sigmoid"
    if option == "-C":
        return "pegasos spells LIBLINEAR's -C (search for C) as pegasos search"
    if option == "-c":
        return "pegasos search chooses lambda: its -l LO:HI is the grid (lambda = 1/(C m), m the examples)"
    return None


def _check_cost(ctx):
    """-c C (LIBLINEAR's C, lambda = 1/(C m)): a positive number, without -l, not with --loss rank."""
    from click.core import ParameterSource

    cost = ctx.params.get("cost_c")
    if cost is None:
        return
    if ctx.get_parameter_source("lam") == ParameterSource.COMMANDLINE:
        raise _UsageLine("-c C sets lambda = 1/(C m): give either -c or -l/--lambda, not both")
    if not (cost > 0 and math.isfinite(cost)):
        raise _UsageLine(f"-c: C must be a positive number, got {cost!r}")
    if ctx.params.get("loss") == "rank":
        raise _UsageLine("-c does not apply to --loss rank: its loss is a mean over pairs, not examples "
                         "(SVMlight's -z p -c C is lambda = 1/(C P), P the pairs): give -l/--lambda")


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
                                     help="Regularisation parameter lambda > 0.")),
    (("-c", "cost_c"), dict(type=float, metavar="C", help="LIBLINEAR's C: lambda = 1/(C m); m: the examples of "
                                                          "DATA, counted as it is read.")),
    (("--solver",), dict(type=click.Choice(SOLVERS), default="auto", show_default=True,
                         help="auto (the dual where it can run, else Pegasos), pegasos or dual; dual: dual "
                              "coordinate ascent from w = 0 until certified within --tol; pegasos: the paper's "
                              "loop; auto takes Pegasos where -T/--epochs or another Pegasos setting is given, "
                              "or for --stream, --init, --loss log or eps-insensitive, --bias unregularized, "
                              "--kernel sigmoid.")),
    (("--explain",), dict(is_flag=True, help="Print which solver would run and why, and train nothing.")),
    (("-T", "--iterations"), dict(type=int, help="Pegasos: number of iterations T (each uses k examples); the "
                                                 "model written is that run.")),
    (("--epochs",), dict(type=float, help="Pegasos: passes over the data instead of T (T = epochs*m/k) [default: "
                                          "doubled until the objective improves by less than --tol]; "
                                          "the model written is that run.")),
    (("--tol",), dict(type=float, default=DEFAULT_TOL, show_default=True,
                      help="A fraction in (0, 1): the relative duality gap the dual certifies; the relative "
                           "objective improvement per doubling at which Pegasos' default epochs stop.")),
    (("--finish",), dict(type=click.Choice(["dual", "none"]), default=None,
                         help="dual: after the Pegasos run, dual passes from its margins until certified within "
                              "--tol (the better model is kept); none: never.")),
    (("--finish-passes",), dict(metavar="N[,N...]",
                                help="Exactly N dual passes (one per class for one-vs-rest): what a model's header "
                                     "records, so that its settings retrain it.")),
    (("-k", "--batch-size"), dict(type=int, default=1, show_default=True,
                                  help="Mini-batch size k; on shards without -k: ceil(m/128).")),
    (("--sampling",), dict(type=click.Choice(SAMPLINGS),
                           help="uniform: i.i.d. draws (as analysed); permutation: new random order each epoch; "
                                "shuffle-once: one random order (from --seed) for every epoch; "
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
                                                                  "a sample of DATA for linear binary, "
                                                                  "regression and multiclass models, else 0].")),
    (("--eta0",), dict(type=float, metavar="ETA0", help="First step size; sets T0 = 1/(lambda ETA0).")),
    (("--schedule",), dict(type=click.Choice(SCHEDULES), default="pegasos", show_default=True,
                           help="Step rule: pegasos 1/(lambda (t + T0)); norma p/(lambda sqrt(t)) with "
                                "--projection (p from --eta); constant --eta E.")),
    (("--eta",), dict(type=float, metavar="E", help="p of --schedule norma, or the step of --schedule constant.")),
    (("--paper",), dict(is_flag=True, help="The paper's Fig. 1 as run in its Sec. 7 for every setting not given: "
                                           "--sampling uniform --no-average --t0 0 --epochs 10.")),
    (("--seed",), dict(type=int, default=DEFAULT_SEED, show_default=True, help="Random seed.")),
    (("--jobs",), dict(type=click.IntRange(min=1), default=2, show_default=True,
                       help="Threads (the same model for any number); one-vs-rest trains classes in parallel, "
                            "the linear binary trainer shares out large mini-batches.")),
)
_problem_options = _options(
    "Problem (loss, bias, classes)",
    (("--loss",), dict(type=click.Choice(["hinge", "log", "squared-hinge", "eps-insensitive", "rank"]),
                       default="hinge", show_default=True,
                       help="log: logistic, eps-insensitive: regression, rank: qid pairs; hinge is the "
                            "SVM's loss, squared-hinge LIBLINEAR's default (L2-loss SVM), log logistic "
                            "regression's, eps-insensitive that of regression on real-valued labels, rank SVMlight's "
                            "-z p (pairs of examples with the same qid).")),
    (("-p", "--epsilon"), dict(type=float, default=0.1, show_default=True,
                               help="Width of the insensitive zone of --loss eps-insensitive.")),
    (("--bias",), dict(type=click.Choice(BIAS_MODES), default="none", show_default=True,
                       help="feature: a constant feature 1, regularised (LIBLINEAR -B 1); unregularized: b by "
                            "sub-gradient steps (a heuristic).")),
    (("--multiclass",), dict(type=click.Choice(["ovr", "crammer-singer"]),
                             help="One-vs-rest (the default) or Crammer-Singer.")),
    (("--cost-matrix",), dict(metavar="FILE",
                              help="Crammer-Singer costs: K lines of K numbers, row = true class, column = "
                                   "predicted class, classes in increasing label order, zero diagonal.")),
    (("-j", "cost_factor"), dict(type=float, metavar="FACTOR", help="Weight of the positive class's errors "
                                                                    "(SVMlight -j).")),
    (("-w", "class_weights"), dict(multiple=True, metavar="LABEL:WEIGHT",
                                   help="Weight of the errors of class LABEL, repeatable; LIBLINEAR's "
                                        "-w1 5 is -w 1:5.")),
    (("--allow-one-class",), dict(is_flag=True, help="Accept data whose labels are all -1, all 0 or all +1 (the "
                                                     "other class is the usual partner).")),
    (("--max-classes",), dict(type=int, default=1000, show_default=True,
                              help="Most classes a multiclass run accepts (labels must be integers).")),
)
_kernel_options = _options(
    "Kernels (paper Fig. 3)",
    (("--kernel",), dict(type=click.Choice(["linear", "poly", "rbf", "sigmoid"]), default="linear",
                         show_default=True, help="linear (explicit w), or a kernel model: poly, rbf, sigmoid.")),
    (("--gamma",), dict(type=float, help="Kernel gamma > 0 (poly, rbf, sigmoid) [default: 1/n_features].")),
    (("--degree",), dict(type=int, help="Degree >= 1 of the poly kernel [default: 3].")),
    (("--coef0",), dict(type=float, help="coef0 of the poly and sigmoid kernels [default: 0].")),
    (("--budget",), dict(type=int, metavar="B", help="Keep at most B support vectors (drop the one whose "
                                                     "removal changes w least).")),
    (("--cache-mb",), dict(type=float, default=DEFAULT_CACHE_MB, show_default=True,
                           help="Memory bound of the kernel-row cache in MiB (kernels only).")),
)
_streaming_options = _options(
    "Data larger than memory",
    (("--stream",), dict(is_flag=True, help="Read DATA in passes, not into memory; through a shuffle buffer "
                                            "(--shuffle-buffer) or a binary cache file (--cache).")),
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
    (("-q", "--quiet"), dict(is_flag=True, help="No progress bar and no summary; the notes stay on stderr.")),
    (("--verbose",), dict(is_flag=True, help="Report progress also when stderr is not a terminal: a line every "
                                             "--progress-every seconds.")),
    (("--progress-every",), dict(type=float, default=10.0, show_default=True, metavar="SECONDS",
                                 help="With --verbose, seconds between two progress lines.")),
    (("--no-objective",), dict(is_flag=True, help="Do not compute the training objective for the summary.")),
    (("--init", "init_model"), dict(metavar="MODEL",
                                    help="Resume the Pegasos run of the linear MODEL on DATA; -T/--epochs are the "
                                         "iterations to add (default: 1 epoch), options not given are MODEL's; "
                                         "--finish dual finishes the run in the dual.")),
    (("--restart-schedule",), dict(is_flag=True, help="With --init: start from MODEL's weights with t = 1 again "
                                                      "(lambda, k, averaging, t0 may then change).")),
    (("--resume-state/--no-resume-state", "resume_state"), dict(
        default=None, help="Write / omit the resume section (solver state) in MODEL, which --init continues "
                           "exactly [default: written when --init resumes a run, else omitted].")),
    (("--report-gap",), dict(is_flag=True, help="Certify the model's distance to the optimum; the duality gap goes "
                                                "in the summary, its relative gap in MODEL's header (certified_gap), "
                                                "linear hinge and squared-hinge models.")),
)

_check_options = _options(
    "Trace, validation, early stopping (linear binary and regression)",
    (("--trace", "trace_file"), dict(metavar="FILE",
                                     help="Write the convergence trace to FILE (.csv, .jsonl or .json): t, epoch, "
                                          "seconds, objective, loss, norm_w, train_error (and validation_*) at "
                                          "log-spaced iterations and every epoch end.")),
    (("--trace-points",), dict(type=int, default=10, show_default=True, metavar="N",
                               help="Check points per decade of t (besides every epoch end).")),
    (("--trace-sample",), dict(type=int, metavar="N",
                               help="Compute the trace's training terms on a fixed random sample of N examples.")),
    (("--trace-budget",), dict(type=float, default=0.1, show_default=True, metavar="F",
                               help="Largest fraction of the training time the trace's checks may take: points "
                                    "are skipped while over it (the last is always checked; 0: every point).")),
    (("--validation", "validation_file"), dict(metavar="FILE",
                                               help="Validation examples (index base of DATA; extra features are "
                                                    "ignored), evaluated at each check point.")),
    (("--early-stop",), dict(type=int, default=None, metavar="[PATIENCE]",
                             help=f"Stop when the validation metric has not improved for PATIENCE checks "
                                  f"({DEFAULT_PATIENCE} if omitted; with suffix averaging counted from the "
                                  "average's start) and write the best model seen; needs --validation and -T "
                                  "or --epochs.")),
    (("--early-stop-metric",), dict(type=click.Choice(["accuracy", "error", "objective", "loss", "mse"]),
                                    help="Validation metric of --early-stop [default: accuracy; mse for "
                                         "regression].")),
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

_cluster_options = _options(
    "Cluster",
    (("--engine",), dict(type=click.Choice(["local", "dask"]), default="local", show_default=True,
                         help="local: this machine (--jobs processes); dask: every fold a task on a Dask cluster, "
                              "DATA read by the workers (pip install 'pegasos[dask]'); the same numbers.")),
    (("--scheduler",), dict(metavar="ADDRESS", help="Dask scheduler to use (tcp://HOST:PORT).")),
    (("--local-workers",), dict(type=int, metavar="N", help="Start a local Dask cluster of N worker processes.")),
)


#: train's command-line parameters that are TrainOptions fields of the same name
_OPTION_PARAMS = ("lam", "solver", "iterations", "epochs", "batch_size", "projection", "average", "average_from", "seed",
                  "loss", "epsilon", "bias", "multiclass", "allow_one_class", "kernel", "gamma", "degree", "coef0",
                  "budget", "cache_mb", "eta0", "schedule", "eta", "tol", "sampling", "step_offset", "max_classes",
                  "trace_points",
                  "early_stop", "early_stop_metric", "finish", "finish_passes")


@main.command(cls=_SectionedCommand)
@click.argument("data")
@click.argument("model", required=False)
@_solver_options
@_problem_options
@_kernel_options
@_streaming_options
@_check_options
@_shard_options
@_data_options
@click.option("-v", "cv_folds", type=click.IntRange(min=2), metavar="K", cls=_SectionOption,
              section="Input and output", help="K-fold cross-validation instead (LIBLINEAR -v); as pegasos cv "
                                               "-v K, no model is written.")
@click.option("--json", "as_json", is_flag=True, cls=_SectionOption, section="Input and output",
              help="Print the summary and options as JSON; on stdout, so not with MODEL -.")
@click.option("--tol-gap", "tol_gap", type=float, metavar="EPS", cls=_SectionOption,
              section="Solver (paper Fig. 1 and 2)",
              help="Instead of --tol: train until the certified relative duality gap (P - D)/P of the model "
                   "is <= EPS: the dual passes from w = 0, and where they do not certify, Pegasos epochs "
                   "doubled and finished in the dual (hinge, squared hinge or rank loss, binary, one-vs-rest "
                   "or Crammer-Singer).")
@_errors_to_click
def train(data, model, paper, jobs, cost_matrix, cost_factor, class_weights, stream,
          shuffle_buffer, cache_file, zero_based, dtype, quiet, verbose, progress_every, no_objective, report_gap,
          trace_file, trace_sample, trace_budget, validation_file, engine, scheduler, local_workers, split, sync_every,
          checkpoint_every, checkpoint, resume, init_model=None, restart_schedule=False, resume_state=None,
          cv_folds=None, as_json=False, tol_gap=None, **settings):
    """Train an SVM on DATA and write MODEL (default: DATA's file name + .model, in the current
    directory; MODEL - writes standard output).
    """
    from .errors import ParameterError, PegasosError
    from .model import check_distinct_files, check_writable
    from .options import TrainOptions

    explain = settings.pop("explain", False)
    if cv_folds is not None:
        if model is not None:
            raise ParameterError("-v cross-validates and writes no model: drop MODEL")
        for given, name in ((trace_file, "--trace"), (validation_file, "--validation"), (init_model, "--init"),
                            (tol_gap, "--tol-gap"), (report_gap or None, "--report-gap")):
            if given is not None:
                raise ParameterError(f"-v cross-validates: {name} does not apply (train without -v)")
        return _cv_command(data, cv_folds, 1, as_json, paper, jobs, cost_matrix, cost_factor, class_weights,
                           stream, shuffle_buffer, cache_file, zero_based, dtype, quiet, settings)

    if shuffle_buffer is not None and cache_file is not None:
        raise ParameterError("give either --shuffle-buffer or --cache, not both")
    if stream and cache_file is None and shuffle_buffer is None:
        shuffle_buffer = DEFAULT_SHUFFLE_BUFFER
    if verbose and quiet:
        raise ParameterError("give either -q/--quiet or --verbose, not both")
    if not (progress_every > 0 and math.isfinite(progress_every)):
        raise ParameterError(f"--progress-every: the interval must be a positive number of seconds, "
                             f"got {progress_every!r}")
    if report_gap and shuffle_buffer is not None:
        raise ParameterError("--report-gap needs the data in memory (not --shuffle-buffer)")
    if shuffle_buffer is not None and settings["sampling"] is not None:
        raise ParameterError("--shuffle-buffer sets the order itself (random within the buffer); "
                             "drop --sampling, or use --cache")
    if cache_file is not None and _is_number(cache_file) and not os.path.exists(cache_file):
        raise ParameterError(f"--cache takes a file name, got {cache_file!r}; the kernel-row cache size in "
                             "MiB is --cache-mb (write ./NAME for a file named so)")
    if restart_schedule and init_model is None:
        raise ParameterError("--restart-schedule needs --init MODEL")
    if paper and init_model is not None:
        raise ParameterError("--paper chooses the settings of a first run; a run resumed with --init keeps MODEL's "
                             "(drop --paper)")
    options = TrainOptions(n_threads=jobs, shuffle_buffer=shuffle_buffer, preset="paper" if paper else "auto",
                           class_weight=_class_weights(class_weights, None, None), spelling="cli",
                           restart_schedule=restart_schedule, resume_state=resume_state, tol_gap=tol_gap,
                           given=_given_on_command_line() if init_model is not None else None,
                           **_option_settings(settings)).validate()
    if cost_matrix is not None and options.multiclass != "crammer-singer":
        raise ParameterError("--cost-matrix needs --multiclass crammer-singer")
    if model is None:
        if data == "-":
            raise PegasosError("give a MODEL file name when DATA is read from standard input")
        model = os.path.basename(data) + ".model"
    to_stdout = _is_stdout(model)
    if as_json and to_stdout:
        raise ParameterError("--json prints to standard output, where MODEL - writes the model: give MODEL a "
                             "file name")
    if model == "-":
        model = "/dev/stdout"
    check_writable(model)
    check_distinct_files(model, "MODEL", (("DATA", data), ("--cost-matrix", cost_matrix)))
    if cache_file is not None:
        check_distinct_files(cache_file, "--cache", (("DATA", data), ("MODEL", model)))
    if trace_file is not None:
        from .trace import trace_format

        trace_format(trace_file)
        check_writable(trace_file)
        check_distinct_files(trace_file, "--trace", (("DATA", data), ("MODEL", model)))
    if not (trace_budget >= 0 and math.isfinite(trace_budget)):
        raise ParameterError(f"--trace-budget: the budget must be a fraction >= 0 of the training time, "
                             f"got {trace_budget!r}")
    if trace_sample is not None and (trace_file is None or trace_sample < 1):
        raise ParameterError("--trace-sample needs --trace FILE and a positive number of examples")
    _refuse_options_that_do_not_apply(options, trace_file, validation_file, init_model)
    if (checkpoint_every is not None or sync_every != "1") and not (
            engine != "local" or split is not None or scheduler is not None or local_workers is not None
            or resume is not None or (data != "-" and _is_shard_spec(data))):
        raise ParameterError(f"{'--checkpoint-every' if checkpoint_every is not None else '--sync-every'} is an "
                             "option of training on shards: give DATA as a glob, a directory or @list.txt, "
                             "--split N, or --engine dask")
    shard_run = (engine != "local" or split is not None or scheduler is not None or local_workers is not None
                 or resume is not None or checkpoint_every is not None or sync_every != "1")
    if shard_run or (data != "-" and not os.path.isfile(data) and _is_shard_spec(data)):
        if (stream or cache_file is not None or report_gap or cost_matrix is not None or cost_factor is not None
                or trace_file is not None or validation_file is not None or init_model is not None or as_json
                or resume_state):
            raise ParameterError("training on shards takes none of --stream, --cache, --report-gap, "
                                 "--cost-matrix, -j, --trace, --validation, --init, --resume-state, --json "
                                 "(its checkpoints are --checkpoint-every and --resume)")
        if settings["sampling"] not in (None, "uniform"):
            raise ParameterError(f"--sampling {settings['sampling']}: training on shards draws i.i.d. batches "
                                 "(uniform) from all shards")
        if explain:
            return _explain(options, m=None, in_memory=False)
        _train_shards(data, model, options, quiet, to_stdout, dtype, zero_based, engine, scheduler, local_workers,
                      split, sync_every, checkpoint_every, checkpoint, resume)
        return
    if explain and (shuffle_buffer is not None or init_model is not None):
        return _explain(options, m=None, in_memory=shuffle_buffer is None, resumed=init_model is not None)
    if shuffle_buffer is not None:
        from .stream import check_rereadable

        check_rereadable(data)

    import numpy as np

    from .api import fit

    if init_model is not None and not zero_based and not _given("zero_based"):
        zero_based = _index_base_of(init_model) == "0"     # options not given are MODEL's, the index base too
    progress = _Progress(quiet)
    t0 = time.perf_counter()
    d, cache_note = _read_training_data(data, options, progress, cache_file, zero_based, np.dtype(dtype))
    options = _options_of_data(options, d, class_weights, cost_factor, cost_matrix, settings["cost_c"])
    if explain:
        return _explain(options, m=d.n_examples)
    checks = {}
    if trace_file is not None:
        from .trace import Trace

        checks["trace"] = Trace(sample=trace_sample, seed=options.seed, budget=trace_budget)
    if validation_file is not None:
        from .io import read_svmlight

        checks["validation"] = read_svmlight(validation_file, zero_based=zero_based, dtype=np.dtype(dtype))
    t_read = time.perf_counter() - t0
    bar = _TrainingBar(progress, progress_every if verbose else None)
    t1 = time.perf_counter()
    try:
        result = fit(d, options, progress=bar.update, on_plan=bar.start, init=init_model, **checks)
    finally:
        bar.close()
    t_train = time.perf_counter() - t1
    from .outcome import Outcome
    from .solver import Solver

    outcome = Outcome.from_header(result.info)
    finish_gap = result.info.get("certified_gap")    # the solver's, before --report-gap's
    seen = {}
    certificate = _record_gap(result, d, options.n_threads) if report_gap else None
    result.save(model)
    if trace_file is not None:
        checks["trace"].write(trace_file)
        if outcome.solver is Solver.DUAL:
            click.echo("pegasos: note: --trace traces Pegasos' iterations, and the dual solver made the model, "
                       "so the trace has no rows; --solver pegasos traces a Pegasos run", err=True)
    if as_json:
        record = _train_record(result, d, options, t_read, t_train, cache_note, no_objective, model)
        if certificate is not None:
            record["certificate"] = certificate
        _echo_json(record)
    elif not quiet:
        summary = _train_summary(result, d, options, t_read, t_train, cache_note, no_objective, progress, model,
                                 finish_gap, seen)
        if report_gap:
            summary += " | " + _gap_summary(certificate)
        click.echo(summary, err=to_stdout)
    elif report_gap and "error" in certificate:
        click.echo(f"pegasos: note: {_gap_summary(certificate)}", err=True)
    _note_worse_than_zero(result, d, options, seen.get("objective"))
    _note_worse_than_start(result, options)
    if not quiet and options.shuffle_buffer is not None and options.length_is_automatic:
        _note_stream_fits(d, options)
    _note_outcome(outcome, result, d, options, quiet, report_gap, certificate)


def _note_outcome(outcome, result, d, options, quiet, report_gap, certificate):
    """train's notes on how the run ended (:attr:`pegasos.outcome.Outcome.diagnostics`, the ones
    :func:`pegasos.fit` warns with).  A model the dual solver did not certify is said with -q too (a cron
    job's mail), with what may help: scaling the features, more passes."""
    from .outcome import DUAL_STOPS
    from .solver import Solver

    uncertified_dual = outcome.certified_gap is not None and not outcome.certified
    for line in outcome.diagnostics:
        if uncertified_dual:
            finding = _scale_finding(d)
            more = "" if _uneven(finding) else _more_passes(outcome)
            click.echo(f"pegasos: note: {line}{_classes_not_finished(result)}{more}", err=True)
            _note_scale(d, finding)
        elif not quiet:
            click.echo(f"pegasos: note: {line}{_gap_hint(result, report_gap)}", err=True)
    if (report_gap and outcome.solver is Solver.PEGASOS and outcome.stop not in DUAL_STOPS
            and outcome.certified_gap is None
            and not _within(certificate, options.tol) and "error" not in certificate):
        # a Pegasos model proven above --tol by --report-gap: said with -q too
        click.echo(f"pegasos: note: the model is not certified within --tol {100 * options.tol:.3g}%: "
                   f"{_written_gap(certificate)}; --solver dual trains until it is", err=True)


def _more_passes(outcome):
    """How to give the dual solver more work, for a note: four times its passes, exactly."""
    if not outcome.passes:
        return ""
    after = "-T 0 " if outcome.iterations == 0 else ""          # else after the same Pegasos run
    return f"; {after}--finish-passes {4 * outcome.passes} runs four times its passes"


def _explain(options, m, in_memory=True, resumed=False):
    """train --explain: the solver plan (:func:`pegasos.solver.plan`) on one line of stdout, no training."""
    from .solver import Problem, plan

    chosen = plan(Problem(m=0 if m is None else int(m), in_memory=in_memory, resumed=resumed), options)
    click.echo(("" if m is None else f"m={m} lambda={options.lam!r} | ") + chosen.describe())


def _gap_hint(model, report_gap):
    """", --report-gap to see ..." where --report-gap was not given and can certify ``model`` (not for the log
    or eps-insensitive loss, nor an unregularized bias: the hint sent users to a "no certified gap")."""
    from .certificate import check_gap_model
    from .errors import PegasosError

    if report_gap:
        return ""
    try:
        check_gap_model(model)
    except PegasosError:
        return ""
    return ", --report-gap to see how far from the optimum the model is"


def _scale_finding(d):
    """What the training data's column scales say (:func:`pegasos.data.scale_finding`), or None: asked
    after a finish that did not certify."""
    chunk = getattr(d, "chunk", None)
    if chunk is None:
        return None
    from .data import scale_finding

    return scale_finding(chunk.indices, chunk.data, d.n_features, chunk.indptr.shape[0] - 1)


def _uneven(finding):
    """Whether the finding is of columns of very different scales (more passes do not help there)."""
    return finding is not None and finding[0] == "uneven"


def _note_scale(d, finding):
    """The note of that finding, the likely cause of the uncertified finish, and what to do about it:
    columns of very different scales, named; or features that are all large (scaled data lie in
    [-1, 1], where the dual passes converge much faster)."""
    if finding is None:
        return
    base = 0 if d.zero_based else 1
    kind, found = finding
    if kind == "uneven":
        large, s_large, small, s_small = found
        click.echo(f"pegasos: note: the features' scales differ {s_large / s_small:.3g}-fold (feature {large + base} "
                   f"reaches |x| = {s_large:.3g}, feature {small + base} at most {s_small:.3g}), likely what keeps "
                   "Pegasos and the dual finish from converging: scale each feature to [-1, 1] (divide it by its "
                   "largest |x|) and train again", err=True)
        return
    column, scale = found
    click.echo(f"pegasos: note: the features are not scaled (feature {column + base} reaches |x| = {scale:.3g}; "
               "scaled data lie in [-1, 1]), which slows the dual finish at this lambda: scale each feature to "
               "[-1, 1] (divide it by its largest |x|) and choose lambda for the scaled data", err=True)


def _note_no_examples(count, data, sample=None):
    """A note on stderr (with -q too) when DATA gave no example to score: every metric is then n/a and the
    exit status 0, which a script without a guard (--fail-under) would take for a result."""
    if count == 0:
        what = "the random sample of DATA holds" if sample is not None else f"{data} holds"
        click.echo(f"note: {what} no examples (an empty file, or only comments and blank lines): there is "
                   "nothing to score", err=True)


def _apart(a, b, digits=4):
    """``a`` and ``b`` (floats, a != b) written with ``digits`` significant digits, or as many more as
    tell them apart ("0.1011 is above 0.1011" said nothing)."""
    while digits < 17 and f"{a:.{digits}g}" == f"{b:.{digits}g}":
        digits += 1
    return f"{a:.{digits}g}", f"{b:.{digits}g}"


def _note_worse_than_start(result, options):
    """A note (with -q too) when a resumed run that was not finished in the dual ended above its starting
    model's objective on DATA (``resume_objectives``, from :func:`pegasos.fit`): the early steps of a new
    Pegasos run can undo a near-optimal model."""
    pair = getattr(result, "resume_objectives", None)
    if pair is None or not pair[1] > pair[0]:
        return
    how = "--finish dual finishes it in the dual from the lower of the two"
    above, below = _apart(pair[1], pair[0])
    click.echo(f"pegasos: note: the resumed model's objective {above} on DATA is above {below}, that of "
               f"the model it started from: its Pegasos steps were too large for how near that one was; {how}",
               err=True)


def _note_worse_than_zero(result, d, options, value=None):
    """A note (with -q too) when a linear binary classifier's objective is above that of w = 0, the run's
    start: its steps were too large for these features (unscaled columns at a small lambda with
    --finish none, or a large --t0).  w = 0's objective is at most
    the largest class weight (the hinge losses 1; log loss: times ln 2), so the note is never wrong;
    the objective is the summary's, or one pass over the data with -q, for a model without a
    certificate only (a certified one is within its gap of the optimum, below w = 0's)."""
    if getattr(result, "task", None) != "binary" or getattr(result, "kind", "linear") != "linear" \
            or getattr(result, "w", None) is None:
        return
    if value is None:
        if "certified_gap" in result.info or options.shuffle_buffer is not None:
            return
        from .scoring import objective

        value = float(objective(result, d.chunk, d.y)["objective"])
    zero = _zero_objective(options)
    if not value > zero:
        return
    resumed = "warm_start" in result.info or getattr(result, "resume_objectives", None) is not None
    started = "" if resumed else " where the run started"
    above, below = _apart(value, zero)
    click.echo(f"pegasos: note: the model's objective {above} is above {below}, that of w = 0{started}: its "
               "steps were too large for these features", err=True)
    if options.shuffle_buffer is None:              # (the rows of a stream are not in memory to look at)
        _note_scale(d, _scale_finding(d))


def _zero_objective(options):
    """An upper bound on the objective of w = 0 for a binary classifier trained with ``options``: its hinge
    losses are 1 (log loss: ln 2), times the largest class weight."""
    weights = options.class_weight if isinstance(options.class_weight, dict) and options.class_weight else {}
    return max([1.0] + [float(v) for v in weights.values()]) * (math.log(2.0) if options.loss == "log" else 1.0)


def _note_worse_than_zero_runs(entries, key, task, options, what, shown):
    """cv's and search's note (with -q too) naming the folds or grid points of a binary classifier whose
    training objective (``objective`` of each entry) is above that of w = 0 (:func:`_zero_objective`),
    as train's note says it of one model: steps too large for these features, where `pegasos train`
    says more."""
    if task != "binary" or options.loss not in ("hinge", "log", "squared-hinge"):
        return
    zero = _zero_objective(options)
    above = [e for e in entries if e.get("objective") is not None and e["objective"] > zero]
    if not above:
        return
    which = ", ".join(f"{shown.format(e[key])} ({e['objective']:.4g})" for e in above)
    click.echo(f"pegasos: note: the training objective of {len(above)} of {len(entries)} {what} is above "
               f"{zero:.4g}, that of w = 0 ({which}): the steps were too large for these features; `pegasos "
               "train` on the data says more", err=True)


def _note_stream_fits(d, options):
    """--stream on a file a quarter of the available memory holds: a note that in memory the default
    trains until certified, where the shuffle buffer trains its fixed epochs and proves nothing (they may
    end far above the optimum)."""
    try:
        size = os.path.getsize(d.path)
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return
    if size * 4 > free or options.replace(shuffle_buffer=None).finish_unavailable() is not None:
        return          # (no dual finish in memory either: regression, say)
    epochs = options.epochs if options.epochs is not None else DEFAULT_EPOCHS
    click.echo(f"pegasos: note: --stream trains {epochs:g} epochs and certifies nothing; {d.path} "
               f"({size / 2 ** 20:.3g} MiB) fits in memory, where the default trains until the dual finish "
               "certifies the model: drop --stream (or give --cache FILE)", err=True)


def _classes_not_finished(result):
    """For a note on a one-vs-rest finish above --tol: the classes it did not finish (0 passes: once the
    largest class's passes neither certify nor beat its Pegasos model, the others are not tried), whose
    part of the gap is the one of their Pegasos weights' scaled dual start, far looser than the model
    (``pegasos objective --gap`` proves a smaller one)."""
    passes = [int(p) for p in str(result.info.get("finish_passes", "")).split(",") if p.strip().isdigit()]
    idle = sum(1 for p in passes if p == 0)
    if len(passes) < 2 or not idle:
        return ""
    return (f" ({idle} of {len(passes)} classes were not finished, after the largest class's passes neither "
            "certified nor beat its Pegasos model: the gap of their Pegasos weights counts from the dual "
            "passes' start and says little about the model)")


def _not_below_zero(gap):
    """A gap for the text: a negative one (rounding: the dual a few ulps above the primal) is 0."""
    return 0.0 if gap < 0 else gap


def _within(certificate, tol):
    """Whether a certificate of :func:`_record_gap` proves the model within ``tol``."""
    return certificate is not None and "error" not in certificate and float(certificate["rel_gap"]) <= tol


def _written_gap(certificate):
    """The written model's certified gap, for a note."""
    if certificate is None or "error" in certificate:
        return "it has no certificate" + (f" ({certificate['error']})" if certificate else "")
    return f"its certified gap is {100 * _not_below_zero(float(certificate['rel_gap'])):.3g}% of its objective"


def _refuse_options_that_do_not_apply(options, trace_file, validation_file, init_model):
    """One-line errors for options given on the command line that the run would ignore
    (their siblings, --gamma with a linear model say, are refused the same way)."""
    from click.core import ParameterSource

    from .errors import ParameterError

    ctx = click.get_current_context()

    def given(name):
        return ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE

    if given("epsilon") and options.loss != "eps-insensitive" and init_model is None:   # --init: the model's loss
        raise ParameterError(f"-p/--epsilon is the width of the eps-insensitive loss: it applies to --loss "
                             f"eps-insensitive, not {options.loss}")
    if given("cache_mb") and options.kernel == "linear":
        raise ParameterError("--cache-mb sizes the cache of kernel rows: it applies with --kernel poly, rbf or "
                             "sigmoid (the file cache of --stream is --cache FILE)")
    if given("trace_points") and trace_file is None and validation_file is None:
        raise ParameterError("--trace-points sets the checks of --trace FILE or --validation FILE: give one")
    if given("trace_budget") and trace_file is None:
        raise ParameterError("--trace-budget bounds the checks of --trace FILE: give it")


def _given(name):
    """Whether the command's option ``name`` (its parameter name) is on the command line, not click's default."""
    from click.core import ParameterSource

    return click.get_current_context().get_parameter_source(name) == ParameterSource.COMMANDLINE


def _index_base_of(model_path):
    """MODEL's ``index_base`` header value ("0" or "1"), or None when it cannot be read here (the run's
    own load of MODEL then says why)."""
    from .errors import PegasosError
    from .modelfile import load_model

    try:
        return load_model(model_path).info.get("index_base")
    except PegasosError:
        return None


def _given_on_command_line():
    """The TrainOptions fields that train's command line gives (not click's defaults)."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    given = {name for name in _OPTION_PARAMS if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE}
    if ctx.get_parameter_source("jobs") == ParameterSource.COMMANDLINE:
        given.add("n_threads")
    if ctx.params.get("class_weights") or ctx.params.get("cost_factor") is not None:
        given.add("class_weight")
    if ctx.params.get("cost_c") is not None:
        given.add("lam")
    return frozenset(given)


def _note_unused_qid(d, options):
    """A note on stderr, with the summary of a run that trained, when DATA holds qid: tokens and the loss is
    not rank: the run then silently trained one-vs-rest or binary classifiers on the relevance grades."""
    if options.loss == "rank":
        return
    qid = getattr(getattr(d, "chunk", None), "qid", None)
    found = getattr(d, "has_qid", False) or (qid is not None and bool((qid != -1).any()))
    if found:
        click.echo(f"pegasos: note: {d.path} holds qid: tokens, which only --loss rank uses (pairs within each "
                   "query); this run ignores them and learns its labels as classes or targets", err=True)


def _options_of_data(options, d, class_weights, cost_factor, cost_matrix, cost=None):
    """The options with -j (which needs the positive label of DATA), --cost-matrix (its classes) and
    -c C (its examples m: lambda = 1/(C m))."""
    if cost is not None:
        from .errors import ParameterError

        if options.task == "ranking":
            raise ParameterError("-c does not apply to a ranking model: its loss is a mean over pairs, not "
                                 "examples (SVMlight's -z p -c C is lambda = 1/(C P), P the pairs): give "
                                 "-l/--lambda")
        if d.n_examples == 0:
            raise ParameterError("-c C sets lambda = 1/(C m), and DATA holds no examples: give -l/--lambda")
        options = options.replace(lam=1.0 / (cost * d.n_examples)).validate()
    if cost_factor is not None:
        options = options.replace(class_weight=_class_weights(class_weights, cost_factor, _positive_label(d)))
    if cost_matrix is not None:
        from .multiclass import read_cost_matrix

        options = options.replace(cost=tuple(read_cost_matrix(cost_matrix, _n_classes(d)).tolist()))
    return options


def _train_shards(data, model, options, quiet, to_stdout, dtype, zero_based, engine, scheduler, local_workers,
                  split, sync_every, checkpoint_every, checkpoint, resume):
    """train on shard files (pegasos.engine_dask.fit_shards), here or on a Dask cluster."""
    from .engine_dask import EngineSettings, fit_shards
    from .errors import ParameterError

    if _given("cost_c"):
        raise ParameterError("-c C sets lambda = 1/(C m), and training on shards starts before the examples "
                             "are counted: give -l/--lambda")
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
    if engine == "dask":
        _quiet_dask()
    progress = _Progress(quiet)
    bar = _TrainingBar(progress)
    t1 = time.perf_counter()
    try:
        result = fit_shards(data, options, settings, split=split, progress=bar.update, on_plan=bar.start,
                            auto_batch=options.preset == "auto" and not _given("batch_size"))
    finally:
        bar.close()
    seconds = time.perf_counter() - t1
    result.save(model)
    if not quiet:
        info = result.info
        from .errors import counted

        click.echo(f"{counted(info['train_examples'], 'example')} in {counted(info['shards'], 'shard')}, "
                   f"{counted(result.n_features, 'feature')} | "
                   f"engine {engine}, sync every {info['sync_every']} | T = {info['iterations']}, k = "
                   f"{info['batch_size']}, lambda = {result.lam:g} | {seconds:.2f} s | model: "
                   f"{'standard output' if to_stdout else model}", err=to_stdout)


def _gap_summary(g):
    """The summary's certified-gap part from :func:`_record_gap`'s dict, or why there is none."""
    if "error" in g:
        return f"no certified gap ({g['error']})"
    if "gap" not in g:
        return f"certified within {100 * _not_below_zero(g['rel_gap']):.3g}% of the optimum (the written model's certificate)"
    return (f"certified: f - f* <= {g['gap']:.3g} ({100 * g['rel_gap']:.3g}% of f; dual bound {g['dual']:.6g}, "
            f"{g['passes']} passes{_still_shrinking(g, 'pegasos objective --gap-passes')}, {g['seconds']:.2f} s)")


def _still_shrinking(r, command="--gap-passes"):
    """A hint when the passes run until the gap stops shrinking ended at their bound."""
    if r.get("stalled", True):
        return ""
    return f"; the gap was still shrinking: more passes with {command} N"


class _TrainingBar:
    """The training progress bar, sized when the run knows its T (``fit``'s on_plan).

    With ``every`` (seconds; ``--verbose``) and stderr not a terminal, a line
    ``training: DONE/T iterations (P%), S s`` goes to stderr at most every
    ``every`` seconds and once at the end of each run (``training: DONE
    iterations, S s`` when T is not known in advance: the stopping rule) (a run whose T is
    announced again, such as one step of the automatic stopping rule or one
    class of one-vs-rest, starts its count again; the seconds count from the
    first).  Updates may come from several threads.
    """

    def __init__(self, progress, every=None):
        import threading

        self.progress, self.bar = progress, None
        self.lines = every is not None and not progress.enabled
        self.every, self.lock = every, threading.Lock()
        self.total = self.done = 0
        self.shown = None                # the count of the last line
        self.started = self.last = None

    def start(self, total):
        if self.lines:
            with self.lock:
                if self.started is not None and self.done and self.shown != self.done:
                    self._line()
                now = time.monotonic()
                self.started = self.started if self.started is not None else now
                self.last, self.total, self.done = now, None if total is None else int(total), 0
                self.shown = None
            return
        self.bar = self.progress.bar(total, "training", "it", scale=True)

    def update(self, n):
        if self.lines:
            with self.lock:
                self.done += int(n)
                if time.monotonic() - self.last >= self.every:
                    self._line()
        elif self.bar is not None:
            self.bar.update(n)

    def _line(self):
        self.last, self.shown = time.monotonic(), self.done
        seconds = self.last - self.started
        if self.total is None:          # the stopping rule: T is not known in advance
            click.echo(f"training: {self.done} iterations, {seconds:.1f} s", err=True)
            return
        pct = 100.0 * self.done / self.total if self.total else 100.0
        click.echo(f"training: {self.done}/{self.total} iterations ({pct:.1f}%), {seconds:.1f} s", err=True)

    def close(self):
        if self.lines:
            with self.lock:
                if self.started is not None and self.done and self.shown != self.done:
                    self._line()
        _close(self.bar)


def _read_training_data(data, options, progress, cache_file, zero_based, dtype):
    """DATA in memory, from its cache, or its first pass for the shuffle buffer; and a note on the cache."""
    bar = progress.reading(data)
    try:
        if cache_file is not None:
            from .stream import CACHE_VERSION, load_cached

            rebuilt = []

            def on_damaged(what):       # with -q too: a cache damaged on disk may be the first sign of a failing disk
                rebuilt.append("rebuilt, it was damaged")
                click.echo(f"pegasos: note: {cache_file}: damaged cache file ({what}); rebuilding it from {data}",
                           err=True)

            def on_newer(version):      # with -q too: two versions sharing one cache rebuild it in turn
                rebuilt.append(f"rebuilt, it was of version {version}")
                click.echo(f"pegasos: note: {cache_file}: cache version {version} was written by a newer pegasos; "
                           f"this one reads version {CACHE_VERSION} and rebuilds it from {data}", err=True)

            d, reused = load_cached(data, cache_file, zero_based=zero_based, dtype=dtype, progress=_update(bar),
                                    on_damaged=on_damaged, on_newer=on_newer)
            return d, f"cache {cache_file} ({'reused' if reused else rebuilt[0] if rebuilt else 'built'})"
        if options.shuffle_buffer is not None:
            from .stream import scan

            d = scan(data, zero_based=zero_based, dtype=dtype,
                     epsilon=options.epsilon if options.task == "regression" else None, progress=_update(bar),
                     seed=options.seed)
            n_labels = 65 if d.labels_overflow else len(d.distinct_labels)
            if options.task == "binary" and n_labels > 2:
                from .errors import ParameterError

                raise ParameterError(f"{data} has {n_labels if n_labels <= 64 else 'more than 64'} labels: "
                                     "--shuffle-buffer trains binary classifiers; use --cache FILE for multiclass")
            return d, ""
        from .io import is_plain_text_file, read_svmlight
        from .linear import second_processor

        # two threads parse a large plain file 1.6-2.2 times as fast as one (0.5 GB, idle 2-core machine);
        # below a few tens of MB the threads' start and the join copy cost more than they gain; --jobs 1
        # keeps the run to one thread, reading included
        threads = 1
        if data != "-" and second_processor(options.n_threads) and is_plain_text_file(data) and \
                os.path.getsize(data) >= PARALLEL_READ_BYTES:
            threads = 2
        return read_svmlight(data, zero_based=zero_based, dtype=dtype, progress=_update(bar), threads=threads), ""
    finally:
        _close(bar)


def _positive_label(d):
    """The positive label value of binary training data (for -j); None when the data are not binary."""
    values = sorted(label.value for label in d.distinct_labels)
    return values[-1] if len(values) == 2 and not d.labels_overflow else None


def _n_classes(d):
    import numpy as np

    return int(np.unique(d.y).size)


def _no_iteration(info):
    """The summary's words after T=0: where the dual passes started (w = 0, or a resumed model's weights)."""
    if info.get("iterations") != "0":
        return ""
    if "dual_updates" in info:
        return " (no Pegasos iteration: the kernel dual solver from alpha = 0)"
    start = "the model's weights" if "warm_start" in info else "w = 0"
    return f" (no Pegasos iteration: the dual passes from {start})"


def _train_summary(result, d, options, t_read, t_train, cache_note, no_objective, progress, model, finish_gap=None,
                   seen=None):
    """train's one-line summary: data, run, timings, objective, cache, model file; the dual finish's part
    with its own certified gap (``finish_gap``: --report-gap may have written a tighter one since).  The
    objective computed is left in ``seen`` (a dict), for the notes."""
    _note_unused_qid(d, options)
    parts = [f"trained on {d.path}: m={d.n_examples} n={d.n_features} nnz={d.nnz}",
             f"solver {result.info['solver']} ({result.info['solver_reason']})" if "solver" in result.info else "",
             f"T={result.info['iterations']}{_no_iteration(result.info)} "
             f"k={int(result.info['batch_size'])} lambda={float(result.info['lambda'])!r}"]
    if options.shuffle_buffer is not None:
        parts.append(f"shuffle buffer {options.shuffle_buffer}")
        parts.append(f"scan {t_read:.2f} s, train {t_train:.2f} s")
    else:
        if getattr(result, "kind", "linear") == "kernel":
            from .errors import counted

            parts.append(f"kernel {result.kernel} gamma={result.gamma!r}: "
                         f"{counted(result.n_support, 'support vector')}")
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
        else:       # the kernel dual solver's model has it from the solver's margins
            obj = getattr(result, "train_objective", None) or objective(result, d.chunk, d.y, qid=d.chunk.qid)
        parts.append(_objective_summary(obj))
        if seen is not None:
            seen["objective"] = float(obj["objective"])
    if "dual_updates" in result.info:           # the kernel dual solver (pegasos.kernel.fit_kernel_dual)
        gap = max(0.0, float(result.info["certified_gap"]))
        updates = int(result.info["dual_updates"])
        proof = (f"certified within {100 * gap:.3g}% of the optimum" if gap <= options.tol
                 else f"not certified within {100 * options.tol:.3g}% (its gap: {100 * gap:.3g}%)")
        parts.append(f"dual solver: {updates} update{'' if updates == 1 else 's'}, {proof}")
    elif result.info.get("finish") == "dual":
        passes = [int(p) for p in result.info["finish_passes"].split(",")]
        most = max(passes)
        gap = max(0.0, float(result.info["certified_gap"] if finish_gap is None else finish_gap))
        within = options.tol if options.tol_gap is None else options.tol_gap
        if gap <= within:
            proof = f"certified within {100 * gap:.3g}% of the optimum"
        elif options.finish_passes:         # the passes asked for: a proof, though not within --tol
            proof = f"not certified within {100 * within:.3g}% (its gap after the passes asked for: {100 * gap:.3g}%)"
        else:
            proof = f"not certified within {100 * within:.3g}% (its gap: {100 * gap:.3g}%)"
        parts.append(f"dual finish: {most} pass{'' if most == 1 else 'es'}"
                     f"{' (the most of any class)' if len(passes) > 1 else ''}, {proof}")
    if "best_iteration" in result.info:
        parts.append(f"{'stopped early' if result.info.get('stop') == 'early stop' else 'ran all T'}: best "
                     f"validation {result.info['early_stop_metric']} {float(result.info['best_validation']):.6g} "
                     f"at iteration {result.info['best_iteration']}")
    if cache_note:
        parts.append(cache_note)
    parts.append(f"model {model}")
    return " | ".join(p for p in parts if p)


def _option_settings(settings):
    """The TrainOptions fields among a command's parameters (--finish-passes parsed)."""
    out = {k: settings[k] for k in _OPTION_PARAMS if k in settings}
    if "finish_passes" in out:
        out["finish_passes"] = _finish_passes(out["finish_passes"])
    return out


def _finish_passes(text):
    """--finish-passes N or N,N,...: an int, a tuple of ints, or None."""
    from .errors import ParameterError

    if text is None:
        return None
    try:
        items = tuple(int(p) for p in text.split(","))
    except ValueError:
        raise ParameterError(f"--finish-passes takes whole numbers separated by commas, got {text!r}") from None
    return items[0] if len(items) == 1 else items


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

    written = [0]

    def write(f):
        bar = progress.reading(data)
        try:
            for chunk in iter_svmlight(data, zero_based=zero_based, progress=_update(bar)):
                if chunk.n_rows == 0:
                    continue
                written[0] += chunk.n_rows
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
    _note_no_examples(written[0], data)


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
@click.option("--fail-under", multiple=True, metavar="METRIC=VALUE",
              help="Exit with status 3 when METRIC (a key of --json, e.g. accuracy=0.84) is below VALUE or "
                   "undefined; repeatable.")
@click.option("--fail-over", multiple=True, metavar="METRIC=VALUE",
              help="Exit with status 3 when METRIC (a loss or error, e.g. hinge_loss=0.4) is above VALUE or "
                   "undefined; repeatable.")
@click.option("--compare", "old_model", metavar="OLD_MODEL",
              help="Also evaluate OLD_MODEL on DATA and show both side by side.")
@click.option("--fail-if-worse", multiple=True, metavar="METRIC",
              help="With --compare: exit with status 3 when MODEL is worse than OLD_MODEL on METRIC (lower, or "
                   "higher for losses); repeatable.")
@_errors_to_click
def eval_(data, model, as_json, no_auc, quiet, fail_under=(), fail_over=(), old_model=None, fail_if_worse=()):
    """Evaluate MODEL on DATA.

    Binary: accuracy, precision, recall, F1, ROC AUC, hinge (and log) loss,
    confusion matrix.  Multiclass: accuracy, per-class precision/recall/F1,
    macro-F1, confusion matrix.  Regression: MSE, MAE, R^2.  Ranking:
    pairwise accuracy and NDCG@10 (gain 2^label - 1) averaged over queries.

    Guards for scripts: --fail-under, --fail-over and --fail-if-worse make
    the command exit with status 3 (after printing the metrics) and name the
    metric, its value and the threshold on stderr when they are missed.
    """
    from .errors import ParameterError
    from .scoring import evaluate_file
    from .selection import eval_metric_names

    mdl = _load(model, data)
    known = eval_metric_names(mdl)
    guards = [(">=", n, v, "--fail-under") for n, v in _parse_guards(fail_under, "--fail-under", known)]
    guards += [("<=", n, v, "--fail-over") for n, v in _parse_guards(fail_over, "--fail-over", known)]
    if no_auc and "roc_auc" in [n for _, n, _, _ in guards] + list(fail_if_worse):
        raise ParameterError("a guard on roc_auc needs the AUC, which --no-auc leaves out: drop one of them")
    if fail_if_worse and old_model is None:
        raise click.UsageError("--fail-if-worse needs --compare OLD_MODEL")
    for name in fail_if_worse:
        if name not in known:
            raise click.UsageError(f"--fail-if-worse: unknown metric {name!r}; the metrics of this model: "
                                   f"{', '.join(known)}")
    old = None
    if old_model is not None:
        if data == "-":
            raise ParameterError("--compare reads DATA twice: give DATA as a file, not standard input")
        old = _load(old_model, data)
        if getattr(old, "task", "binary") != getattr(mdl, "task", "binary"):
            raise ParameterError(f"--compare: {old_model} is a {getattr(old, 'task', 'binary')} model, {model} a "
                                 f"{getattr(mdl, 'task', 'binary')} one")
    progress = _Progress(quiet)
    results = []
    for m in (mdl, old) if old is not None else (mdl,):
        bar = progress.reading(data)
        try:
            results.append(evaluate_file(m, data, auc=not no_auc, progress=_update(bar)))
        finally:
            _close(bar)
    r = results[0]
    _note_no_examples(r.get("examples"), data)
    if old is not None:
        _compare_output(results[0], results[1], model, old_model, as_json, known)
    elif as_json:
        _echo_json(r)
    elif r.get("task") in ("multiclass", "regression", "ranking"):
        click.echo(_other_eval_text(r))
    else:
        _binary_eval_text(r)
    _check_guards(r, guards, [] if old is None else [(n, results[1].get(n)) for n in fail_if_worse], model,
                  old_model)


def _compare_output(new, old, model, old_model, as_json, metric_names):
    """eval --compare: the metrics of both models, as JSON or a table with their difference."""
    from .selection import LOWER_IS_BETTER

    if as_json:
        _echo_json({"model": model, "old_model": old_model, "new": new, "old": old})
        return
    names = [k for k in metric_names if k in new or k in old]
    width = max(len(n) for n in names + ["examples"])
    lines = [f"{'':<{width}} {'MODEL':>12} {'OLD_MODEL':>12} {'difference':>12}",
             f"{'examples':<{width}} {new['examples']:>12} {old['examples']:>12}"]
    for n in names:
        a, b = new.get(n), old.get(n)
        diff = "" if a is None or b is None else f"{a - b:+.4f}"
        if diff in ("+0.0000", "-0.0000") and a != b:
            diff = f"{a - b:+.2g}"        # a difference below the table's 4 decimals, not a zero one
        better = "" if not diff or a == b else (" (better)" if (a < b) == (n in LOWER_IS_BETTER) else " (worse)")
        lines.append(f"{n:<{width}} {_fmt(a):>12} {_fmt(b):>12} {diff:>12}{better}")
    lines.append(f"MODEL {model}, OLD_MODEL {old_model}")
    click.echo("\n".join(lines))


def _check_guards(r, guards, worse, model, old_model):
    """Exit with GUARD_FAILED (3) after naming every guard missed on stderr."""
    from .selection import LOWER_IS_BETTER

    failed = []
    for op, name, threshold, option in guards:
        value = r.get(name)
        if value is None:
            failed.append(f"{name} is undefined on DATA ({option} {name}={threshold!r})")
        elif (value < threshold) if op == ">=" else (value > threshold):
            failed.append(f"{name} {value:.6g} is {'below' if op == '>=' else 'above'} {threshold!r} "
                          f"({option} {name}={threshold!r})")
    for name, old_value in worse:
        value = r.get(name)
        if value is None or old_value is None:
            failed.append(f"{name} is undefined for {model if value is None else old_model} (--fail-if-worse)")
        elif (value > old_value) if name in LOWER_IS_BETTER else (value < old_value):
            failed.append(f"{name} {value:.6g} of {model} is worse than {old_value:.6g} of {old_model} "
                          f"(--fail-if-worse {name})")
    if failed:
        for line in failed:
            click.echo(f"guard failed: {line}", err=True)
        click.get_current_context().exit(GUARD_FAILED)


def _binary_eval_text(r):
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
        over = "" if r["ndcg_queries"] == r["queries"] else \
            f"   (over the {r['ndcg_queries']} of {r['queries']} queries with a relevant example)"
        return (f"examples     {r['examples']}\nqueries      {r['queries']}\npairs        {r['pairs']}\n"
                f"pairwise accuracy {_fmt(r['pairwise_accuracy'])}\nNDCG@10      {_fmt(r['ndcg_at_10'])}{over}")
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
                   "(hinge, squared hinge and rank-loss models; kernel models of a positive semi-definite kernel "
                   "trained on DATA; DATA is loaded into memory).")
@click.option("--gap-passes", type=int, metavar="N", default=None,
              help="Passes of dual coordinate ascent for --gap, each at most one pass over DATA [default: "
                   "doubled until the gap stops shrinking].")
@click.option("--json", "as_json", is_flag=True, help="Print the values as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@_errors_to_click
def objective(data, model, lam, as_json, quiet, sample=None, seed=1, gap=False, gap_passes=None):
    """Primal objective lambda/2 ||w||^2 + mean loss of MODEL on DATA (the loss it was trained with).

    With --gap, also a certified lower bound on the optimum f* (weak duality),
    so that objective - f* <= gap.
    """
    from .defaults import lambda_problem
    from .errors import ParameterError
    from .scoring import objective_file

    if lam is not None and (problem := lambda_problem(lam)) is not None:
        raise ParameterError(f"-l/--lambda: {problem}")
    if sample is not None and not (0.0 < sample <= 1.0):
        raise ParameterError(f"--sample must be a fraction in (0, 1], got {sample}")
    if gap_passes is not None and not gap:
        raise ParameterError("--gap-passes applies only with --gap")
    if gap and sample is not None:
        raise ParameterError("--gap needs the whole of DATA: it cannot be combined with --sample")
    if gap:
        from .certificate import check_passes

        if gap_passes is not None:
            gap_passes = check_passes(gap_passes, "--gap-passes")
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
    _note_no_examples(r.get("examples"), data, sample)
    if as_json:
        _echo_json(r)
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
    from .linear import second_processor

    # passes None: until the gap stops shrinking; on two processors (the command's 2 threads), the
    # helper thread of the passes
    r = duality_gap(mdl, d.X, d.y, passes=passes, lam=lam, helper=second_processor(2), qid=d.chunk.qid)
    if as_json:
        _echo_json(r)
        return
    click.echo(
        f"examples     {r['examples']}\n"
        f"lambda       {r['lambda']!r}\n"
        f"loss         {r['loss']} (bias {r['bias_mode']})\n"
        f"objective    {r['primal']:.10g}   (primal, the model's)\n" +
        f"dual bound   {r['dual']:.10g}   (f* >= this, "
        + (f"from the model's coefficients scaled by {r['scale']:.6g})\n" if "scale" in r
           else f"after {r['passes']} pass{'' if r['passes'] == 1 else 'es'}{_still_shrinking(r)})\n") +
        f"gap          {_not_below_zero(r['gap']):.4g}   (objective - f* <= gap)\n"
        f"relative gap {_not_below_zero(r['rel_gap']):.4g}\n"
        f"seconds      {r['seconds']:.3f}" + _header_gap_line(mdl, r, lam)
    )


def _header_gap_line(model, r, lam):
    """A line for a header's ``certified_gap`` tighter than the gap just found (the training run's
    dual point, after more passes than these, may be far tighter); it is a proof on the training data
    at the model's lambda only, so it is shown, not used."""
    recorded = model.info.get("certified_gap")
    if recorded is None or (lam is not None and lam != float(model.lam)):
        return ""
    recorded = float(recorded)
    if not recorded < r["rel_gap"]:
        return ""
    passes = model.info.get("finish_passes")
    return (f"\nheader gap   {recorded:.4g}   (certified_gap: the training run's proof on its training data"
            + (f", after {passes} finishing passes" if passes else "")
            + ("" if getattr(model, "kind", "linear") == "kernel" else "; --gap-passes N to prove it here") + ")")


@main.command()
@click.argument("traces", nargs=-1, required=True, metavar="TRACE...")
@click.option("-o", "--output", required=True, metavar="FIG",
              help="Figure file: .png, .svg or .pdf.")
@click.option("--x", "x_axis", type=click.Choice(["seconds", "iterations", "epochs"]), default="seconds",
              show_default=True, help="Horizontal axis: training time (without the checks), iterations t, epochs.")
@click.option("--optimum", type=float, metavar="F",
              help="f*, the optimal primal objective [default: the best objective of the traces, minus a "
                   "millionth of it].")
@click.option("--title", help="Title of the figure.")
@_errors_to_click
def plot(traces, output, x_axis, optimum, title):
    """Plot TRACE files of `pegasos train --trace` as the paper's Fig. 4: primal suboptimality
    (f - f*)/f* on a log axis (left) and the validation error, or the training error without
    validation (right); one curve per trace, labelled by the settings that differ.

    Needs matplotlib (pip install 'pegasos[plot]').
    """
    from .model import check_writable
    from .plot import plot_traces, save_figure

    check_writable(output)
    fig = plot_traces(list(traces), x=x_axis, optimum=optimum, title=title)
    save_figure(fig, output)
    for why in getattr(fig, "skipped", ()):
        click.echo(f"pegasos: note: left out {why}", err=True)
# ------------------------------------------------------------------ summaries, selection, guards --

#: exit status of a guard (eval --fail-under / --fail-over / --fail-if-worse) that failed
GUARD_FAILED = 3


def _options_record(options):
    """The training options as given, JSON-ready {field: value} (class weights keyed by label text, the
    set of the settings given as a sorted list); with --init the model's header holds those it ran with."""
    import dataclasses

    out = {}
    for f in dataclasses.fields(options):
        if f.name == "spelling":
            continue
        v = getattr(options, f.name)
        if isinstance(v, dict):
            v = {repr(k): w for k, w in v.items()}
        elif isinstance(v, (set, frozenset)):
            v = sorted(v)
        elif isinstance(v, tuple):
            v = list(v)
        out[f.name] = v
    return out


def _train_record(result, d, options, t_read, t_train, cache_note, no_objective, model):
    """train --json: every number of the summary, the model header and the options."""
    record = {"data": d.path, "examples": d.n_examples, "features": d.n_features, "nnz": d.nnz,
              "iterations": int(result.info["iterations"]), "batch_size": int(result.info["batch_size"]),
              "lambda": float(result.info["lambda"]), "read_seconds": t_read, "train_seconds": t_train,
              "task": getattr(result, "task", "binary"), "model": model}
    if getattr(result, "kind", "linear") == "kernel":
        record.update(kernel=result.kernel, gamma=result.gamma, support_vectors=result.n_support)
    if getattr(result, "task", None) == "multiclass":
        record.update(multiclass=result.method, classes=result.n_classes)
    if options.shuffle_buffer is not None:
        record["shuffle_buffer"] = options.shuffle_buffer
    if cache_note:
        record["cache"] = cache_note
    if not no_objective:
        from .scoring import objective, objective_file

        record["objective"] = (objective_file(result, d.path) if options.shuffle_buffer is not None
                               else getattr(result, "train_objective", None)
                               or objective(result, d.chunk, d.y, qid=d.chunk.qid))
    record["header"] = dict(result.info)
    record["options"] = _options_record(options)
    return record


def _record_gap(result, d, jobs=1):
    """--report-gap: the certificate of pegasos.certificate.duality_gap (or {"error": why there is none}),
    its relative gap also written to the header as ``certified_gap`` (the smaller, when the run proved one:
    --tol-gap, the dual finish)."""
    from .certificate import duality_gap
    from .errors import ParameterError
    from .linear import second_processor

    try:
        # its default passes: until the gap stops shrinking; the helper thread as the run's --jobs allows
        g = duality_gap(result, d.chunk, d.y, helper=second_processor(jobs))
    except ParameterError as e:
        return {"error": str(e)}
    rel = float(g["rel_gap"])
    if math.isfinite(rel):
        result.info["certified_gap"] = repr(min(rel, float(result.info.get("certified_gap", math.inf))))
    return g


def _model_options(fn):
    """The option groups of train that say what model to train (cv and search train many)."""
    for group in (_data_options, _streaming_options, _kernel_options, _problem_options, _solver_options):
        fn = group(fn)
    return fn


#: plain files at least this large are read by two threads (see _read_training_data)
PARALLEL_READ_BYTES = 64 << 20

# train's options that describe one run's output, not the model cv and search train many times
_ONE_RUN_ONLY = ("verbose", "progress_every", "init_model", "restart_schedule", "resume_state")


def _without(*names):
    """Drop the options ``names`` (parameter names) added by the decorators below this one."""

    def decorate(fn):
        fn.__click_params__ = [p for p in getattr(fn, "__click_params__", []) if p.name not in names]
        return fn

    return decorate


def _selection_setup(data, paper, threads, cost_matrix, cost_factor, class_weights, stream, shuffle_buffer,
                     cache_file, zero_based, dtype, quiet, settings):
    """(options, data in memory) for cv and search: train's options, DATA read (or from --cache)."""
    import numpy as np

    from .errors import ParameterError
    from .options import TrainOptions

    if stream and cache_file is None or shuffle_buffer is not None:
        raise ParameterError("cross-validation holds the folds in memory: --stream and --shuffle-buffer do not "
                             "apply (--cache FILE does)")
    if cost_matrix is not None and settings.get("multiclass") != "crammer-singer":
        raise ParameterError("--cost-matrix needs --multiclass crammer-singer")
    options = TrainOptions(n_threads=threads, preset="paper" if paper else "auto",
                           class_weight=_class_weights(class_weights, None, None), spelling="cli",
                           **_option_settings(settings)).validate()
    if cache_file is not None:
        from .model import check_distinct_files

        check_distinct_files(cache_file, "--cache", (("DATA", data),))
    d, _ = _read_training_data(data, options, _Progress(quiet), cache_file, zero_based, np.dtype(dtype))
    return _options_of_data(options, d, class_weights, cost_factor, cost_matrix, settings.get("cost_c")), d


def _selection_engine(data, cache_file, cost_factor, cost_matrix, fold_jobs, zero_based, dtype, engine, scheduler,
                      local_workers, streaming):
    """The DaskEngine of cv or search --engine dask, and DATA as the file its workers read (or None, None)."""
    from .errors import ParameterError

    if engine == "local":
        if scheduler is not None or local_workers is not None:
            raise ParameterError("--scheduler and --local-workers need --engine dask")
        return None, None
    from .engine_dask import DaskEngine, EngineSettings
    from .selection import DataFile

    if streaming:
        raise ParameterError("cross-validation holds the folds in memory: --stream and --shuffle-buffer do not "
                             "apply")
    for given, name in ((cache_file, "--cache"), (cost_factor, "-j"), (cost_matrix, "--cost-matrix")):
        if given is not None:
            raise ParameterError(f"--engine dask: the workers read DATA, {name} does not apply (it needs DATA "
                                 "on this machine)")
    if fold_jobs != 1:
        raise ParameterError("--jobs runs folds in local processes; with --engine dask the workers run them")
    if data == "-" or not os.path.isfile(data):
        raise ParameterError(f"--engine dask: DATA must be a file the workers can read (shared filesystem), "
                             f"got {data}")
    EngineSettings(engine="dask", scheduler=scheduler, local_workers=local_workers).validate()
    _quiet_dask()
    return (DaskEngine(scheduler=scheduler, local_workers=local_workers),
            DataFile(os.path.abspath(data), zero_based=bool(zero_based), dtype=str(dtype)))


def _quiet_dask():
    """Keep Dask's own log lines (a worker's failed task, a lost worker: ours is the one Error line) off
    stderr: its logging configuration, read when distributed is first imported, inherited by the
    workers of --local-workers.  A DASK_LOGGING the user set wins."""
    quiet = {name: "critical" for name in ("distributed", "distributed.client", "distributed.nanny",
                                           "distributed.scheduler", "distributed.worker")}
    os.environ.setdefault("DASK_LOGGING", repr(quiet))


def _remote_options(paper, threads, class_weights, settings):
    from .errors import ParameterError
    from .options import TrainOptions

    if settings.get("cost_c") is not None:
        raise ParameterError("-c C sets lambda = 1/(C m), and with --engine dask the workers read DATA, not "
                             "this machine: give -l/--lambda")

    return TrainOptions(n_threads=threads, preset="paper" if paper else "auto",
                        class_weight=_class_weights(class_weights, None, None), spelling="cli",
                        **_option_settings(settings)).validate()


def _fold_text(task):
    return {"binary": "stratified by class", "multiclass": "stratified by class", "ranking": "whole queries",
            "regression": "shuffled"}[task]


def _cv_command(data, folds, jobs, as_json, paper, threads, cost_matrix, cost_factor, class_weights, stream,
                shuffle_buffer, cache_file, zero_based, dtype, quiet, settings, engine="local", scheduler=None,
                local_workers=None):
    from .selection import cross_validate

    cluster, source = _selection_engine(data, cache_file, cost_factor, cost_matrix, jobs, zero_based, dtype, engine,
                                        scheduler, local_workers, stream or shuffle_buffer is not None)
    if cluster is None:
        options, d = _selection_setup(data, paper, threads, cost_matrix, cost_factor, class_weights, stream,
                                      shuffle_buffer, cache_file, zero_based, dtype, quiet, settings)
        r = cross_validate(d, options, folds=folds, jobs=jobs)
        path = d.path
    else:
        options = _remote_options(paper, threads, class_weights, settings)
        with cluster:
            r = cross_validate(source, options, folds=folds, engine=cluster)
        path = data
    if as_json:
        r["data"] = path
        r["options"] = _options_record(options)
        _echo_json(r)
        _note_uncertified_folds(r["per_fold"], options.tol)        # on stderr, as train --json keeps its notes
        _note_worse_than_zero_runs(r["per_fold"], "fold", r["task"], options, "folds", "fold {}")
        return
    names = r["metrics"]
    rows = [f"{r['folds']}-fold cross-validation on {path}: m={r['examples']} ({r['task']}; folds "
            f"{_fold_text(r['task'])}, seed {r['seed']})",
            f"{'fold':>4} {'train':>8} {'test':>8} " + " ".join(f"{n:>10}" for n in names) + f" {'seconds':>8}"]
    for f in r["per_fold"]:
        rows.append(f"{f['fold']:>4} {f['train_examples']:>8} {f['test_examples']:>8} "
                    + " ".join(f"{_fmt(f[n]):>10}" for n in names) + f" {f['seconds']:>8.2f}")
    def undefined(n):     # folds where a metric is undefined (F1 without positives, say) are left out
        missing = sum(1 for f in r["per_fold"] if f.get(n) is None)
        return f" ({len(r['per_fold']) - missing} of {len(r['per_fold'])} folds)" if missing else ""

    rows.append("mean ± sd: " + " | ".join(
        f"{n} {_fmt(r['mean'][n])} ± {_fmt(r['sd'][n])}{undefined(n)}" for n in names))
    click.echo("\n".join(rows))
    _note_uncertified_folds(r["per_fold"], options.tol)
    _note_worse_than_zero_runs(r["per_fold"], "fold", r["task"], options, "folds", "fold {}")


def _above_tol(entries, key, tol, shown):
    """The entries (dicts with ``certified_gap``) whose gap is above ``tol``, and their list for a note:
    ``shown`` (a format) of each one's ``key``, with its gap in %."""
    above = [(e[key], e["certified_gap"]) for e in entries
             if e.get("certified_gap") is not None and e["certified_gap"] > tol]
    return above, ", ".join(f"{shown.format(name)} ({100 * gap:.3g}%)" for name, gap in above)


def _note_uncertified_folds(per_fold, tol):
    """A note naming the folds whose models their runs did not certify within ``tol`` (their header's
    certified_gap): their metrics are those of models that may be far from the optimum."""
    above, which = _above_tol(per_fold, "fold", tol, "{}")
    if not above:
        return
    click.echo(f"pegasos: note: the models of {len(above)} of {len(per_fold)} folds were not certified within "
               f"--tol {100 * tol:.3g}% of their optimum (certified gap of fold {which}): their metrics may be "
               "those of models far from it; `pegasos train` on the data says why and what helps", err=True)


@main.command(cls=_SectionedCommand)
@click.argument("data")
@click.option("-v", "--folds", type=click.IntRange(min=2), default=5, show_default=True,
              help="Number of folds K; stratified by class, whole queries for ranking.")
@click.option("--jobs", "fold_jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Folds trained at once, in separate processes; the results are the same for any number.")
@click.option("--json", "as_json", is_flag=True, help="Print the folds' metrics, means and sds as one JSON object.")
@_without("jobs", "no_objective", "report_gap", *_ONE_RUN_ONLY)
@_model_options
@_cluster_options
@_errors_to_click
def cv(data, folds, fold_jobs, as_json, paper, cost_matrix, cost_factor, class_weights, stream,
       shuffle_buffer, cache_file, zero_based, dtype, quiet, engine, scheduler, local_workers, **settings):
    """K-fold cross-validation of pegasos train on DATA (every train option applies): each fold's
    metrics on its held-out examples, and their mean ± sd.  The folds are drawn with --seed.
    """
    _cv_command(data, folds, fold_jobs, as_json, paper, 1 if fold_jobs > 1 else 2, cost_matrix, cost_factor,
                class_weights, stream, shuffle_buffer, cache_file, zero_based, dtype, quiet, settings, engine,
                scheduler, local_workers)


@main.command(cls=_SectionedCommand)
@click.argument("data")
@click.argument("model", required=False)
@click.option("-l", "--lambda", "lambda_grid", default="1e-7:1e-1", show_default=True, metavar="LO:HI|A,B,..",
              help="The lambdas: LO:HI or a comma list; LO:HI is --points values evenly spaced in log scale.")
@click.option("--points", type=int, help="Values of a LO:HI range [default: 13].")
@click.option("--gamma", "gamma_grid", metavar="LO:HI|A,B,..",
              help="Kernel gammas to try with every lambda (with --kernel; --gamma-points values for LO:HI).")
@click.option("--gamma-points", type=int, help="Values of a --gamma LO:HI range [default: 13].")
@click.option("-v", "--folds", type=click.IntRange(min=2), default=5, show_default=True,
              help="Folds of the cross-validation at each point.")
@click.option("--validation", metavar="FILE", help="Score on FILE instead of cross-validating (trains on DATA).")
@click.option("--metric", help="The metric that picks the best point: any key that eval --json prints "
                               "[default: accuracy; mse for regression; ndcg_at_10 for ranking].")
@click.option("--no-warm-start", is_flag=True,
              help="Train every lambda from scratch (default for linear binary and regression models: from the "
                   "previous, larger lambda's weights).")
@click.option("--jobs", "fold_jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Folds trained at once, in separate processes; the results are the same for any number.")
@click.option("--json", "as_json", is_flag=True, help="Print the table and the best point as one JSON object.")
@_without("jobs", "no_objective", "report_gap", "lam", "cost_c", "gamma", *_ONE_RUN_ONLY)
@_model_options
@_cluster_options
@_errors_to_click
def search(data, model, lambda_grid, points, gamma_grid, gamma_points, folds, validation, metric, no_warm_start,
           fold_jobs, as_json, paper, cost_matrix, cost_factor, class_weights, stream, shuffle_buffer, cache_file,
           zero_based, dtype, quiet, engine, scheduler, local_workers, **settings):
    """Choose lambda (and the kernel's gamma) by cross-validation on DATA or on a --validation FILE;
    with MODEL, write the model of pegasos train at the best point, trained on all of DATA.  Every train
    option applies.
    """
    from .errors import ParameterError
    from .model import check_distinct_files, check_writable
    from .selection import LOWER_IS_BETTER, parse_grid
    from .selection import search as run_search

    if validation is not None and _given("folds"):
        raise ParameterError("-v/--folds cross-validates and --validation scores on FILE: give one of them")
    if points is not None and ":" not in lambda_grid and gamma_grid is not None and ":" in gamma_grid:
        raise ParameterError("--points sets the values of an -l LO:HI range; those of --gamma LO:HI are "
                             "--gamma-points")
    lambdas = parse_grid(lambda_grid, points, "-l/--lambda")
    if gamma_points is not None and gamma_grid is None:
        raise ParameterError("--gamma-points applies with --gamma")
    gammas = None if gamma_grid is None else parse_grid(gamma_grid, gamma_points, "--gamma")
    if model is not None:
        if model == "-" and as_json:
            raise ParameterError("--json prints to standard output: give MODEL a file name")
        model = "/dev/stdout" if model == "-" else model
        check_writable(model)
        check_distinct_files(model, "MODEL", (("DATA", data), ("--validation", validation)))
    cluster, source = _selection_engine(data, cache_file, cost_factor, cost_matrix, fold_jobs, zero_based, dtype,
                                        engine, scheduler, local_workers, stream or shuffle_buffer is not None)
    first = dict(settings, lam=lambdas[0], gamma=None if gammas is None else gammas[0])
    if cluster is None:
        options, d = _selection_setup(data, paper, 1 if fold_jobs > 1 else 2, cost_matrix, cost_factor,
                                      class_weights, stream, shuffle_buffer, cache_file, zero_based, dtype, quiet,
                                      first)
        path = d.path
        holdout = None
        if validation is not None:
            from .io import read_svmlight

            holdout = read_svmlight(validation, zero_based=zero_based, dtype=dtype)
        r = run_search(d, options, lambdas, gammas, folds=folds, validation=holdout, metric=metric, jobs=fold_jobs,
                       warm_start=not no_warm_start)
        if model is not None:
            from .api import fit

            fit(d, options.replace(**r["best"])).save(model)
    else:
        from .selection import DataFile, fit_task

        options = _remote_options(paper, 2, class_weights, first)
        path = data
        holdout = None
        if validation is not None:
            if not os.path.isfile(validation):
                raise ParameterError(f"--validation: {validation} is not a file")
            holdout = DataFile(os.path.abspath(validation), source.zero_based, source.dtype)
        with cluster:
            r = run_search(source, options, lambdas, gammas, folds=folds, validation=holdout, metric=metric,
                           warm_start=not no_warm_start, engine=cluster)
            if model is not None:       # the best point trained on all of DATA, on a worker too
                best = cluster.map(fit_task, [(source, options.replace(**r["best"]))], what="the best point's model")
                best[0].info["train_file"] = data           # as the local command names it
                best[0].save(model)
    if model is not None:
        r["model"] = model
    if as_json:
        r["data"] = path
        r["validation"] = validation
        r["options"] = _options_record(options)
        _echo_json(r)
        _note_uncertified_points(r["rows"], options.tol)        # on stderr, as cv --json keeps its notes
        _note_worse_than_zero_runs(r["rows"], "lam", r["task"], options, "grid points (their folds' mean)",
                                   "lambda {!r}")
        return
    out = sys.stderr if model is not None and _is_stdout(model) else sys.stdout
    how = f"{r['folds']}-fold cross-validation" if validation is None else f"validation on {validation}"
    name = r["metric"]
    order = "smaller" if name in LOWER_IS_BETTER else "larger"
    start = "warm starts from the largest lambda" if r["warm_start"] else "cold starts"
    wl = max([10] + [len(repr(row["lam"])) for row in r["rows"]])             # the widest value sets the column
    wg = max([10] + [len(repr(row["gamma"])) for row in r["rows"] if gammas is not None])
    lines = [f"search on {path}: {how}, metric {name} ({order} is better), {start}",
             f"  {'lambda':>{wl}}" + (f" {'gamma':>{wg}}" if gammas is not None else "")
             + f" {name + (' (mean ± sd)' if validation is None else ''):>24} {'objective':>11} {'seconds':>8}"]
    for row in r["rows"]:
        mean, sd = row["mean"][name], row["sd"][name]
        shown = _fmt(mean) + (" ± " + _fmt(sd) if validation is None else "")    # one validation set: no sd
        lines.append(("* " if row["best"] else "  ") + f"{row['lam']!r:>{wl}}"    # as the best: line shows it
                     + (f" {row['gamma']!r:>{wg}}" if gammas is not None else "")
                     + f" {shown:>24} {row['objective']:>11.6g} {row['seconds']:>8.2f}")
    best = " ".join(f"{'lambda' if k == 'lam' else k}={v!r}" for k, v in r["best"].items())
    lines.append(f"best: {best}" + (f" | model {model} (trained on all of {path})" if model is not None else ""))
    click.echo("\n".join(lines), file=out)
    _note_uncertified_points(r["rows"], options.tol)
    _note_worse_than_zero_runs(r["rows"], "lam", r["task"], options, "grid points (their folds' mean)",
                               "lambda {!r}")


def _note_uncertified_points(rows, tol):
    """search's note naming the grid points whose models (the worst fold's) were not certified within
    ``tol``, as cv's names its folds: their metrics may be those of models far from the optimum."""
    above, which = _above_tol(rows, "lam", tol, "{!r}")
    if not above:
        return
    click.echo(f"pegasos: note: at {len(above)} of {len(rows)} points the models were not certified within --tol "
               f"{100 * tol:.3g}% of their optimum (the worst fold's certified gap at lambda {which}): their "
               "metrics may be those of models far from it; `pegasos train -l LAMBDA` on the data says why and "
               "what helps", err=True)


@main.command()
@click.argument("model")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="Show the N weights of largest |value| (per class for multiclass models).")
@click.option("--json", "as_json", is_flag=True, help="Print everything as one JSON object.")
@_errors_to_click
def info(model, top, as_json):
    """Describe MODEL: its header, the non-zero weights, ||w||, the bias and the top weights
    (feature indices in the index base of its training file); kernel models: the support vectors."""
    from .modelfile import load_model
    from .selection import describe_model

    r = describe_model(load_model(model), top)
    if as_json:
        _echo_json(r)
        return
    width = max(len(k) for k in r["header"]) if r["header"] else 0
    lines = [f"model {model}", "header:"] + [f"  {k:<{width}}  {v}" for k, v in r["header"].items()]
    parts = r["classes"] if "classes" in r else [r]
    for part in parts:
        prefix = f"class {part['label']}: " if "label" in part else ""
        if "support_vectors" in part:
            lines.append(f"{prefix}support vectors {part['support_vectors']} (kernel {part['kernel']})")
            continue
        lines.append(f"{prefix}non-zero weights {part['nonzero_weights']} of {part['features']}, "
                     f"||w|| {part['norm_w']:.6g}, bias {part['bias']!r}")
        if part["top_weights"]:
            lines.append(f"  top {len(part['top_weights'])} by |weight|: "
                         + ", ".join(f"{t['feature']}:{t['weight']:.6g}" for t in part["top_weights"]))
    click.echo("\n".join(lines))


def _parse_guards(items, option, known):
    """[(metric, threshold)] from METRIC=VALUE items; an unknown metric or a bad value is a usage error."""
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if name not in known:
            raise click.UsageError(f"{option}: unknown metric {name!r}; the metrics of this model: "
                                   f"{', '.join(known)}")
        try:
            threshold = float(value)
        except ValueError:
            threshold = None
        if not sep or threshold is None or not math.isfinite(threshold):
            raise click.UsageError(f"{option} expects METRIC=NUMBER, got {item!r}")
        out.append((name, threshold))
    return out


if __name__ == "__main__":  # pragma: no cover
    main()
