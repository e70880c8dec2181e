"""The option groups of train, cv and search, the sectioned ``--help``/``--help-all`` command class,
and the answers to LIBLINEAR's and SVMlight's spellings; the options into TrainOptions settings."""

import math

import click

from ..defaults import (SOLVERS, BIAS_MODES, DEFAULT_CACHE_MB, DEFAULT_LAMBDA, DEFAULT_SEED, DEFAULT_SHUFFLE_BUFFER,
                        DEFAULT_TOL, MAX_DEGREE, MAX_LOCAL_WORKERS, MAX_SPLIT, MAX_TRACE_POINTS, SAMPLINGS, SCHEDULES)
from .common import Command, Finite, UsageLine, is_number


DEFAULT_PATIENCE = 5        # checks of --early-stop given without a number


class SectionOption(click.Option):
    """An option listed under a heading of ``--help-all`` (``section=``)."""

    def __init__(self, *args, section=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.section = section


#: The options that ``--help`` of train, cv and search lists (parameter names; COMMAND:name for one
#: command's only); ``--help-all`` lists every option, in sections.  A name a command does not have is
#: skipped, so one set serves the three commands, and an option not yet declared may be named here.
SHORT_HELP_OPTIONS = frozenset({
    "lam", "cost_c", "iterations", "epochs", "tol", "solver", "loss", "bias", "multiclass", "class_weights",
    "kernel", "gamma", "batch_size", "seed", "jobs", "quiet", "train:stream", "init_model", "as_json", "explain",
    # cv and search
    "folds", "fold_jobs", "lambda_grid", "gamma_grid", "validation", "metric",
    # train-shards
    "train-shards:engine", "train-shards:scheduler", "train-shards:local_workers", "train-shards:split",
    "train-shards:checkpoint_every", "train-shards:resume",
    "help_all",     # and -h/--help
})


#: The longest help text the ``--help`` listing shows with its bracketed part (two lines of its column
#: at 80 columns)
_SHORT_TEXT_CHARS = 88


_EVERY_OPTION = "pegasos.every_option"        # ctx.meta key: --help-all asked for the full listing


def short_text(name, text):
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


class SectionedCommand(Command):
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
            records.append((record[0], short_text(param.name, text) + extra))
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
        shrinking = _value_after("-h", args)
        if shrinking in ("0", "1"):      # LIBSVM's -h 0/1, which click's -h (help) would answer with exit 0
            raise UsageLine(f"pegasos has no LIBSVM -h {shrinking} (shrinking): its dual solver shrinks by itself; "
                             "-h alone prints this command's help")
        out, i = [], 0
        while i < len(args):
            a = args[i]
            if (len(a) > 2 and a.startswith("-w") and ":" not in a and i + 1 < len(args)
                    and is_number(a[2:]) and is_number(args[i + 1])):
                out += ["-w", f"{a[2:]}:{args[i + 1]}"]
                i += 2
                continue
            if a == "--early-stop" and (i + 1 == len(args) or not args[i + 1].isdigit()):
                if i + 1 < len(args) and is_number(args[i + 1]):
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
            raise UsageLine(answer) from None
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


#: SVMlight's and LIBSVM's kernel types (-t) and parameters
_KERNEL_TYPES = {"0": "linear", "1": "poly", "2": "rbf", "3": "sigmoid"}
_KERNEL_PARAMETERS = {"-g": "--gamma", "-d": "--degree", "-r": "--coef0"}


def _value_after(option, args):
    """The value given to ``option`` in ``args`` (``-B 1``, ``-B1``, ``--eta0 2`` or ``--eta0=2``), or None."""
    for i, a in enumerate(args):
        if a == option:
            return args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("--") else None
        if a.startswith(option + "=") and option.startswith("--"):
            return a[len(option) + 1:]
        if a.startswith(option) and not a.startswith("--"):
            return a[len(option):]
    return None


def _foreign_spelling(option, args, params):
    """The one-line answer to ``option`` (in ``args``), a spelling of LIBLINEAR's, SVMlight's or
    scikit-learn's of a feature that pegasos spells otherwise: its spelling here, or None for an option
    no tool has.  ``params``: the parameter names of the command (--solver is named where the command
    has it)."""
    value = _value_after(option, args)
    shown = option if value is None else f"{option} {value}"
    if option in _SHARD_OPTIONS and "split" not in params:
        also = "; --init MODEL continues a model file's run on any DATA" if option == "--resume" else ""
        return f"{option} is an option of pegasos train-shards (training on shards or a Dask cluster){also}"
    if option == "-c" and "split" in params:
        return ("-c C sets lambda = 1/(C m), and training on shards starts before the examples are counted: "
                "give -l/--lambda")
    if option == "-v":
        folds = "K" if value is None else value
        return (f"pegasos spells LIBLINEAR's train -v {folds} (cross-validation) as pegasos cv -v {folds} DATA; "
                "train writes a model")
    if option == "-j":
        return (f"pegasos spells SVMlight's -j {value or 'FACTOR'} (the positive class's cost factor) as "
                f"-w 1:{value or 'FACTOR'} (-w LABEL:WEIGHT, LABEL the positive label)")
    if option == "--eta0":
        return _eta0_answer(value, args)
    if option == "--tol-gap":
        eps = value or "EPS"
        return (f"pegasos spells --tol-gap {eps} as --tol {eps}: the dual solver (--solver dual; auto's choice "
                "where it can run) trains until certified within it; pegasos objective --gap DATA MODEL "
                "certifies any model")
    if option == "--report-gap":
        return ("pegasos certifies a model with pegasos objective --gap DATA MODEL (any linear model, left "
                "unchanged); train's summary gives the certified gap of a model the dual solver trained")
    if option == "-B":
        try:
            b = float(value)
        except (TypeError, ValueError):
            return "pegasos spells LIBLINEAR's -B as --bias feature (a constant feature 1) or --bias none"
        if b <= 0:
            return f"pegasos spells LIBLINEAR's {shown} (no bias) as --bias none, the default of classification"
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
    if option in _KERNEL_PARAMETERS:
        spelled = _KERNEL_PARAMETERS[option] + ("" if value is None else f" {value}")
        return f"pegasos spells SVMlight's and LIBSVM's {shown} as {spelled} (with --kernel)"
    if option == "-z":
        tasks = {"c": "the default (classification)", "r": "--loss eps-insensitive", "p": "--loss rank"}
        return (f"pegasos spells SVMlight's {shown} as {tasks[value]}" if value in tasks else
                "pegasos spells SVMlight's -z c, r and p as the default (classification), --loss eps-insensitive "
                "and --loss rank")
    if option == "-b":
        return ("pegasos spells LIBSVM's and LIBLINEAR's -b 1 (probability estimates) as --loss log at training "
                "and pegasos predict --proba (-b 0 is the default)")
    if option == "--explain" and "explain" not in params:
        return "--explain is train's: pegasos train --explain DATA says which solver a run on DATA takes, and why"
    if option == "-C":
        return "pegasos spells LIBLINEAR's -C (search for C) as pegasos search"
    if option == "-c":
        return "pegasos search chooses lambda: its -l LO:HI is the grid (lambda = 1/(C m), m the examples)"
    return None


#: the options of pegasos train-shards, answered by train with that command
_SHARD_OPTIONS = ("--engine", "--scheduler", "--local-workers", "--split", "--sync-every", "--checkpoint-every",
                  "--checkpoint", "--resume")


def _eta0_answer(value, args):
    """The answer to --eta0 (scikit-learn's first step size): --t0 T0 = 1/(lambda ETA0), T0 worked out
    where lambda is known (-l given, or the default without -c)."""
    t0 = "1/(lambda ETA0)"
    lam = _value_after("-l", args) or _value_after("--lambda", args)
    if lam is None and _value_after("-c", args) is None:
        lam = repr(DEFAULT_LAMBDA)
    try:
        t0 = f"{1.0 / (float(lam) * float(value)):.10g}"
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        pass
    return (f"pegasos spells --eta0 {value or 'ETA0'} (the first step size) as --t0 {t0} (eta_t = "
            "1/(lambda (t + T0)), so T0 = 1/(lambda ETA0))")


def _check_cost(ctx):
    """-c C (LIBLINEAR's C, lambda = 1/(C m)): a positive number, without -l, not with --loss rank."""
    from click.core import ParameterSource

    cost = ctx.params.get("cost_c")
    if cost is None:
        return
    if ctx.get_parameter_source("lam") == ParameterSource.COMMANDLINE:
        raise UsageLine("-c C sets lambda = 1/(C m): give either -c or -l/--lambda, not both")
    if not (cost > 0 and math.isfinite(cost)):
        raise UsageLine(f"-c: C must be a positive number, got {cost!r}")
    if ctx.params.get("loss") == "rank":
        raise UsageLine("-c does not apply to --loss rank: its loss is a mean over pairs, not examples "
                        "(SVMlight's -z p -c C is lambda = 1/(C P), P the pairs): give -l/--lambda")


def _options(section, *specs):
    """A decorator adding the options ``specs`` ((param_decls, attrs) pairs) under ``section``."""

    def decorate(fn):
        for decls, attrs in reversed(specs):
            fn = click.option(*decls, cls=SectionOption, section=section, **attrs)(fn)
        return fn

    return decorate


solver_options = _options(
    "Solver (paper Fig. 1 and 2)",
    (("-l", "--lambda", "lam"), dict(type=float, default=DEFAULT_LAMBDA, show_default=True,
                                     help="Regularisation parameter lambda > 0.")),
    (("-c", "cost_c"), dict(type=float, metavar="C", help="LIBLINEAR's C: lambda = 1/(C m); m: the examples of "
                                                          "DATA, counted as it is read.")),
    (("--solver",), dict(type=click.Choice(SOLVERS), default="auto", show_default=True,
                         help="auto (the dual where it can run, else Pegasos), pegasos or dual; dual: dual "
                              "coordinate ascent from w = 0 until certified within --tol; pegasos: the paper's "
                              "loop; auto takes Pegasos where -T/--epochs or another Pegasos setting is given, "
                              "or for --init, --loss log or eps-insensitive, --bias unregularized, "
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
    (("-k", "--batch-size"), dict(type=click.IntRange(min=1), default=1, show_default=True,
                                  help="Mini-batch size k.")),
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


problem_options = _options(
    "Problem (loss, bias, classes)",
    (("--loss",), dict(type=click.Choice(["hinge", "log", "squared-hinge", "eps-insensitive", "rank"]),
                       default="hinge", show_default=True,
                       help="log: logistic, eps-insensitive: regression, rank: qid pairs; hinge is the "
                            "SVM's loss, squared-hinge LIBLINEAR's default (L2-loss SVM), log logistic "
                            "regression's, eps-insensitive that of regression on real-valued labels, rank SVMlight's "
                            "-z p (pairs of examples with the same qid).")),
    (("-p", "--epsilon"), dict(type=float, default=0.1, show_default=True,
                               help="Width of the insensitive zone of --loss eps-insensitive.")),
    (("--bias",), dict(type=click.Choice(BIAS_MODES),
                       help="The intercept b [default: none; feature for --loss eps-insensitive]; feature: a "
                            "constant feature 1, regularised (LIBLINEAR -B 1); unregularized: b by sub-gradient "
                            "steps (a heuristic).")),
    (("--multiclass",), dict(type=click.Choice(["ovr", "crammer-singer"]),
                             help="One-vs-rest (the default) or Crammer-Singer.")),
    (("--cost-matrix",), dict(metavar="FILE",
                              help="Crammer-Singer costs: K lines of K numbers, row = true class, column = "
                                   "predicted class, classes in increasing label order, zero diagonal.")),
    (("-w", "class_weights"), dict(multiple=True, metavar="LABEL:WEIGHT",
                                   help="Weight of the errors of class LABEL, repeatable; LIBLINEAR's "
                                        "-w1 5 is -w 1:5, SVMlight's -j 5 is -w 1:5.")),
    (("--allow-one-class",), dict(is_flag=True, help="Accept data whose labels are all -1, all 0 or all +1 (the "
                                                     "other class is the usual partner).")),
    (("--max-classes",), dict(type=click.IntRange(min=2), default=1000, show_default=True,
                              help="Most classes a multiclass run accepts (labels must be integers).")),
)


kernel_options = _options(
    "Kernels (paper Fig. 3)",
    (("--kernel",), dict(type=click.Choice(["linear", "poly", "rbf", "sigmoid"]), default="linear",
                         show_default=True, help="linear (explicit w), or a kernel model: poly, rbf, sigmoid.")),
    (("--gamma",), dict(type=float, help="Kernel gamma > 0 (poly, rbf, sigmoid) [default: 1/n_features].")),
    (("--degree",), dict(type=click.IntRange(1, MAX_DEGREE), help="Degree of the poly kernel [default: 3].")),
    (("--coef0",), dict(type=float, help="coef0 of the poly and sigmoid kernels [default: 0].")),
    (("--budget",), dict(type=click.IntRange(min=1), metavar="B",
                         help="Keep at most B support vectors (drop the one whose removal changes w least).")),
    (("--cache-mb",), dict(type=Finite(min=0), default=DEFAULT_CACHE_MB, show_default=True,
                           help="Memory bound of the kernel-row cache in MiB (kernels only; 0: no cache, every "
                                "row computed again; the model is the same).")),
)


streaming_options = _options(
    "Data larger than memory",
    (("--stream",), dict(is_flag=True, help="Read DATA once, spilled to a temporary file read in passes "
                                            "(as a too large file is).")),
    (("--shuffle-buffer",), dict(type=click.IntRange(min=1), metavar="N",
                                 help=f"Streaming: hold N examples in memory and visit them in random order (Pegasos) "
                                      f"[default with --stream: {DEFAULT_SHUFFLE_BUFFER}].")),
    (("--cache", "cache_file"), dict(metavar="FILE",
                                     help="Streaming: parse DATA once into the binary FILE (reused while DATA is "
                                          "unchanged) and train from it memory-mapped; any sampling, several "
                                          "epochs, stdin.")),
)


data_options = _options(
    "Input and output",
    (("--zero-based",), dict(is_flag=True, help="Feature indices in DATA start at 0 (default 1).")),
    (("--dtype",), dict(type=click.Choice(["float64", "float32"]), default="float64", show_default=True,
                        help="Type of the feature values held in memory.")),
    (("-q", "--quiet"), dict(is_flag=True, help="No progress bar and no summary; the notes stay on stderr.")),
    (("--verbose",), dict(is_flag=True, help="Report progress also when stderr is not a terminal: a line every "
                                             "--progress-every seconds.")),
    (("--progress-every",), dict(type=Finite(min=0, min_open=True), default=10.0, show_default=True,
                                 metavar="SECONDS",
                                 help="With --verbose, seconds between two progress lines.")),
    (("--no-objective",), dict(is_flag=True, help="Do not compute the training objective for the summary.")),
    (("--init", "init_model"), dict(metavar="MODEL",
                                    help="Continue the Pegasos run of the model file MODEL (linear) on any DATA; "
                                         "-T/--epochs are the iterations to add "
                                         "(default: 1 epoch), options not given are MODEL's; --finish dual "
                                         "finishes the run in the dual.")),
    (("--restart-schedule",), dict(is_flag=True, help="With --init: start from MODEL's weights with t = 1 again "
                                                      "(lambda, k, averaging, t0 may then change).")),
    (("--resume-state/--no-resume-state", "resume_state"), dict(
        default=None, help="Write / omit the resume section (solver state) in MODEL, which --init continues "
                           "exactly [default: written when --init resumes a run, else omitted].")),
)


check_options = _options(
    "Trace, validation, early stopping (linear binary and regression)",
    (("--trace", "trace_file"), dict(metavar="FILE",
                                     help="Write the convergence trace to FILE (.csv, .jsonl or .json): t, epoch, "
                                          "seconds, objective, loss, norm_w, train_error (and validation_*) at "
                                          "log-spaced iterations and every epoch end.")),
    (("--trace-points",), dict(type=click.IntRange(0, MAX_TRACE_POINTS), default=10, show_default=True, metavar="N",
                               help="Check points per decade of t, besides every epoch end (0: the epoch ends "
                                    "only).")),
    (("--trace-sample",), dict(type=click.IntRange(min=1), metavar="N",
                               help="Compute the trace's training terms on a fixed random sample of N examples.")),
    (("--trace-budget",), dict(type=Finite(min=0), default=0.1, show_default=True, metavar="F",
                               help="Most time the trace's checks may take, as a multiple F of the training time, "
                                    "once they have taken half a second: points are skipped while over it (the "
                                    "last is always checked; 0: no bound, every point).")),
    (("--validation", "validation_file"), dict(metavar="FILE",
                                               help="Validation examples (index base of DATA; extra features are "
                                                    "ignored), evaluated at each check point.")),
    (("--early-stop",), dict(type=click.IntRange(min=1), default=None, metavar="[PATIENCE]",
                             help=f"Stop when the validation metric has not improved for PATIENCE checks "
                                  f"({DEFAULT_PATIENCE} if omitted; with suffix averaging counted from the "
                                  "average's start) and write the best model seen; needs --validation and -T "
                                  "or --epochs.")),
    (("--early-stop-metric",), dict(type=click.Choice(["accuracy", "error", "objective", "loss", "mse"]),
                                    help="Validation metric of --early-stop [default: accuracy; mse for "
                                         "regression].")),
)


shard_options = _options(
    "Shards and clusters (linear binary and regression)",
    (("--engine",), dict(type=click.Choice(["local", "dask"]), default="local", show_default=True,
                         help="local: this process; dask: a Dask cluster (pip install 'pegasos[dask]'). With shards "
                              "(DATA a quoted glob, a directory or @list.txt, or --split) both draw the same "
                              "batches and give the same model.")),
    (("--scheduler",), dict(metavar="ADDRESS", help="Dask scheduler to use (tcp://HOST:PORT).")),
    (("--local-workers",), dict(type=click.IntRange(1, MAX_LOCAL_WORKERS), metavar="N",
                                help="Start a local Dask cluster of N worker processes.")),
    (("--split",), dict(type=click.IntRange(1, MAX_SPLIT), metavar="N",
                        help="Cut each DATA file into N newline-aligned byte ranges, one shard each.")),
    (("--sync-every",), dict(default="1", show_default=True, metavar="S|epoch",
                             help="1: exact mini-batch Pegasos (k drawn from all shards each step); S > 1 or "
                                  "epoch: S local steps per shard between model averages (faster, no Pegasos "
                                  "bound).")),
    (("--checkpoint-every",), dict(type=click.IntRange(min=1), metavar="R",
                                   help="Save the run's state every R rounds to --checkpoint (and a model file).")),
    (("--checkpoint",), dict(metavar="FILE", help="Checkpoint file [default: MODEL.ckpt].")),
    (("--resume",), dict(metavar="CHECKPOINT", help="Finish the interrupted shard run saved in CHECKPOINT "
                                                     "(same DATA and options); the model an uninterrupted run "
                                                     "writes (--checkpoint-every saves the runs).")),
)


cluster_options = _options(
    "Cluster",
    (("--engine",), dict(type=click.Choice(["local", "dask"]), default="local", show_default=True,
                         help="local: this machine (--jobs processes); dask: every fold a task on a Dask cluster, "
                              "DATA read by the workers (pip install 'pegasos[dask]'); the same numbers.")),
    (("--scheduler",), dict(metavar="ADDRESS", help="Dask scheduler to use (tcp://HOST:PORT).")),
    (("--local-workers",), dict(type=click.IntRange(1, MAX_LOCAL_WORKERS), metavar="N",
                                help="Start a local Dask cluster of N worker processes.")),
)


#: train's command-line parameters that are TrainOptions fields of the same name
_OPTION_PARAMS = ("lam", "solver", "iterations", "epochs", "batch_size", "projection", "average", "average_from", "seed",
                  "loss", "epsilon", "bias", "multiclass", "allow_one_class", "kernel", "gamma", "degree", "coef0",
                  "budget", "cache_mb", "schedule", "eta", "tol", "sampling", "step_offset", "max_classes",
                  "trace_points",
                  "early_stop", "early_stop_metric", "finish", "finish_passes")


def given_on_command_line():
    """The TrainOptions fields that train's command line gives (not click's defaults)."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    given = {name for name in _OPTION_PARAMS if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE}
    if ctx.get_parameter_source("jobs") == ParameterSource.COMMANDLINE:
        given.add("n_threads")
    if ctx.params.get("class_weights"):
        given.add("class_weight")
    if ctx.params.get("cost_c") is not None:
        given.add("lam")
    return frozenset(given)


def refuse_model_options_that_do_not_apply(options, resumed=False):
    """One-line errors for train's, cv's and search's model options given on the command line that the
    model of ``options`` (validated TrainOptions) has no use for: -p without the eps-insensitive loss
    (unless ``resumed``: --init's model gives the loss), --cache-mb without a kernel (their siblings,
    --gamma with a linear model say, are refused alike)."""
    from ..errors import ParameterError

    given = given_on_command_line()
    if "epsilon" in given and options.loss != "eps-insensitive" and not resumed:
        raise ParameterError(f"-p/--epsilon is the width of the eps-insensitive loss: it applies to --loss "
                             f"eps-insensitive, not {options.loss}")
    if "cache_mb" in given and options.kernel == "linear":
        raise ParameterError("--cache-mb sizes the cache of kernel rows: it applies with --kernel poly, rbf or "
                             "sigmoid (the file cache of --stream is --cache FILE)")


def option_settings(settings):
    """The TrainOptions fields among a command's parameters (--finish-passes parsed)."""
    out = {k: settings[k] for k in _OPTION_PARAMS if k in settings}
    if "finish_passes" in out:
        out["finish_passes"] = _finish_passes(out["finish_passes"])
    return out


def _finish_passes(text):
    """--finish-passes N or N,N,...: an int, a tuple of ints, or None."""
    from ..errors import ParameterError

    if text is None:
        return None
    try:
        items = tuple(int(p) for p in text.split(","))
    except ValueError:
        raise ParameterError(f"--finish-passes takes whole numbers separated by commas, got {text!r}") from None
    return items[0] if len(items) == 1 else items


def parse_class_weights(items):
    """{label value: weight} from -w LABEL:WEIGHT options, or None for none."""
    from ..errors import ParameterError

    out = {}
    for item in items:
        label, sep, weight = item.rpartition(":")
        try:
            out[float(label)] = float(weight)
        except ValueError:
            raise ParameterError(f"-w expects LABEL:WEIGHT, got {item!r}") from None
        if not sep:
            raise ParameterError(f"-w expects LABEL:WEIGHT, got {item!r}")
    return out or None


def model_options(fn):
    """The option groups of train that say what model to train (cv and search train many)."""
    for group in (data_options, streaming_options, kernel_options, problem_options, solver_options):
        fn = group(fn)
    return fn


# train's options that describe one run's output, not the model cv and search train many times
# (--explain says what one run would do; train --explain DATA says it for a fold's data too)
ONE_RUN_ONLY = ("verbose", "progress_every", "init_model", "restart_schedule", "resume_state", "explain")


def default_shown(name, text):
    """Say ``text`` as the default of the option ``name`` (parameter name, added by the decorators below this
    one), in its help as the options whose default is worked out do: a command whose default of a shared
    option is not click's value."""

    def decorate(fn):
        for p in getattr(fn, "__click_params__", []):
            if p.name == name:
                p.show_default = False
                p.help = f"{p.help.rstrip('.')} [default: {text}]."
        return fn

    return decorate


def without_options(*names):
    """Drop the options ``names`` (parameter names) added by the decorators below this one."""

    def decorate(fn):
        fn.__click_params__ = [p for p in getattr(fn, "__click_params__", []) if p.name not in names]
        return fn

    return decorate
