"""``pegasos train``: the options checked together, then read, fit, save, summary and notes."""

import math
import os
import time
from types import SimpleNamespace

import click

from ..defaults import DEFAULT_SHUFFLE_BUFFER
from .common import is_shard_data, echo_json, errors_to_click, was_given, is_stdout, is_number, quiet_dask
from .progress import Progress, TrainingBar
from .options import (SectionOption, SectionedCommand, solver_options, problem_options, kernel_options,
                      streaming_options, data_options, check_options, shard_options, given_on_command_line,
                      option_settings, parse_class_weights)
from .notes import (gap_summary, note_outcome, note_stream_fits, note_unused_qid, note_worse_than_start,
                    note_worse_than_zero)
from .reading import index_base_of, options_of_data, read_training_data
from .summary import explain_plan, train_summary, train_record, record_gap
from .selection import cv_command


@click.command(cls=SectionedCommand)
@click.argument("data")
@click.argument("model", required=False)
@solver_options
@problem_options
@kernel_options
@streaming_options
@check_options
@shard_options
@data_options
@click.option("-v", "cv_folds", type=click.IntRange(min=2), metavar="K", cls=SectionOption,
              section="Input and output", help="K-fold cross-validation instead (LIBLINEAR -v); as pegasos cv "
                                               "-v K, no model is written.")
@click.option("--json", "as_json", is_flag=True, cls=SectionOption, section="Input and output",
              help="Print the summary and options as JSON; on stdout, so not with MODEL -.")
@click.option("--tol-gap", "tol_gap", type=float, metavar="EPS", cls=SectionOption,
              section="Solver (paper Fig. 1 and 2)",
              help="Instead of --tol: train until the certified relative duality gap (P - D)/P of the model "
                   "is <= EPS: the dual passes from w = 0, and where they do not certify, Pegasos epochs "
                   "doubled and finished in the dual (hinge, squared hinge or rank loss, binary, one-vs-rest "
                   "or Crammer-Singer).")
@errors_to_click
def train(data, model, paper, jobs, cost_matrix, cost_factor, class_weights, stream,
          shuffle_buffer, cache_file, zero_based, dtype, quiet, verbose, progress_every, no_objective, report_gap,
          trace_file, trace_sample, trace_budget, validation_file, engine, scheduler, local_workers, split, sync_every,
          checkpoint_every, checkpoint, resume, init_model=None, restart_schedule=False, resume_state=None,
          cv_folds=None, as_json=False, tol_gap=None, **settings):
    """Train an SVM on DATA and write MODEL (default: DATA's file name + .model, in the current
    directory; MODEL - writes standard output).
    """
    args = SimpleNamespace(**locals())      # the command line, as the steps below read (and complete) it
    args.explain = settings.pop("explain", False)
    if cv_folds is not None:
        _check_cross_validation(args)
        return cv_command(data, cv_folds, 1, as_json, paper, jobs, cost_matrix, cost_factor, class_weights,
                          stream, shuffle_buffer, cache_file, zero_based, dtype, quiet, settings)
    _check_run_options(args)
    options = _train_options(args)
    to_stdout = _check_outputs(args, options)
    if _is_shard_run(args):
        if args.explain:
            return explain_plan(options, m=None, in_memory=False, as_json=as_json)
        _train_shards(data, args.model, options, quiet, to_stdout, dtype, zero_based, engine, scheduler,
                      local_workers, split, sync_every, checkpoint_every, checkpoint, resume)
        return
    if args.explain and (args.shuffle_buffer is not None or init_model is not None):
        return explain_plan(options, m=None, in_memory=args.shuffle_buffer is None, resumed=init_model is not None,
                            as_json=as_json)
    if args.shuffle_buffer is not None:
        from ..stream import check_rereadable

        check_rereadable(data)
    progress = Progress(quiet)
    t0 = time.perf_counter()
    d, cache_note, options = _read_data(args, options, progress)
    if args.explain:
        return explain_plan(options, m=d.n_examples, data=d, as_json=as_json)
    checks = _checks(args, options)
    t_read = time.perf_counter() - t0
    result, t_train = _fit(args, options, d, checks, progress)
    outcome, finish_gap, certificate = _save(args, result, d, options, checks)
    seen = _summary(args, result, d, options, (t_read, t_train, cache_note), progress, to_stdout, finish_gap,
                    certificate)
    _notes(args, outcome, result, d, options, certificate, seen)


def _check_cross_validation(args):
    """train -v K: no MODEL, and none of the options of one training run."""
    from ..errors import ParameterError

    if args.model is not None:
        raise ParameterError("-v cross-validates and writes no model: drop MODEL")
    for given, name in ((args.trace_file, "--trace"), (args.validation_file, "--validation"),
                        (args.init_model, "--init"), (args.tol_gap, "--tol-gap"),
                        (args.report_gap or None, "--report-gap")):
        if given is not None:
            raise ParameterError(f"-v cross-validates: {name} does not apply (train without -v)")


def _check_run_options(args):
    """The options of a run that exclude or need each other (--stream gives the default --shuffle-buffer)."""
    from ..errors import ParameterError

    if args.shuffle_buffer is not None and args.cache_file is not None:
        raise ParameterError("give either --shuffle-buffer or --cache, not both")
    if args.stream and args.cache_file is None and args.shuffle_buffer is None:
        args.shuffle_buffer = DEFAULT_SHUFFLE_BUFFER
    if args.verbose and args.quiet:
        raise ParameterError("give either -q/--quiet or --verbose, not both")
    if not (args.progress_every > 0 and math.isfinite(args.progress_every)):
        raise ParameterError(f"--progress-every: the interval must be a positive number of seconds, "
                             f"got {args.progress_every!r}")
    if args.report_gap and args.shuffle_buffer is not None:
        raise ParameterError("--report-gap needs the data in memory (not --shuffle-buffer)")
    if args.shuffle_buffer is not None and args.settings["sampling"] is not None:
        raise ParameterError("--shuffle-buffer sets the order itself (random within the buffer); "
                             "drop --sampling, or use --cache")
    if args.cache_file is not None and is_number(args.cache_file) and not os.path.exists(args.cache_file):
        raise ParameterError(f"--cache takes a file name, got {args.cache_file!r}; the kernel-row cache size in "
                             "MiB is --cache-mb (write ./NAME for a file named so)")
    if args.restart_schedule and args.init_model is None:
        raise ParameterError("--restart-schedule needs --init MODEL")
    if args.paper and args.init_model is not None:
        raise ParameterError("--paper chooses the settings of a first run; a run resumed with --init keeps MODEL's "
                             "(drop --paper)")


def _train_options(args):
    """The run's TrainOptions from the command line, validated (before DATA is read)."""
    from ..errors import ParameterError
    from ..options import TrainOptions

    options = TrainOptions(n_threads=args.jobs, shuffle_buffer=args.shuffle_buffer,
                           preset="paper" if args.paper else "auto",
                           class_weight=parse_class_weights(args.class_weights, None, None), spelling="cli",
                           restart_schedule=args.restart_schedule, resume_state=args.resume_state,
                           tol_gap=args.tol_gap, given=given_on_command_line() if args.init_model is not None else None,
                           **option_settings(args.settings)).validate()
    if args.cost_matrix is not None and options.multiclass != "crammer-singer":
        raise ParameterError("--cost-matrix needs --multiclass crammer-singer")
    return options


def _check_outputs(args, options):
    """MODEL (its default name, ``-`` as /dev/stdout), --cache's and --trace's files, and the options of
    checks during the run; whether the model goes to standard output."""
    from ..errors import ParameterError, PegasosError
    from ..model import check_distinct_files, check_writable

    data, model = args.data, args.model
    if model is None:
        if data == "-":
            raise PegasosError("give a MODEL file name when DATA is read from standard input")
        model = os.path.basename(data) + ".model"
    to_stdout = is_stdout(model)
    if args.as_json and to_stdout:
        raise ParameterError("--json prints to standard output, where MODEL - writes the model: give MODEL a "
                             "file name")
    if model == "-":
        model = "/dev/stdout"
    args.model = model
    check_writable(model)
    check_distinct_files(model, "MODEL", (("DATA", data), ("--cost-matrix", args.cost_matrix)))
    if args.cache_file is not None:
        check_distinct_files(args.cache_file, "--cache", (("DATA", data), ("MODEL", model)))
    if args.trace_file is not None:
        from ..trace import trace_format

        trace_format(args.trace_file)
        check_writable(args.trace_file)
        check_distinct_files(args.trace_file, "--trace", (("DATA", data), ("MODEL", model)))
    if not (args.trace_budget >= 0 and math.isfinite(args.trace_budget)):
        raise ParameterError(f"--trace-budget: the budget must be a fraction >= 0 of the training time, "
                             f"got {args.trace_budget!r}")
    if args.trace_sample is not None and (args.trace_file is None or args.trace_sample < 1):
        raise ParameterError("--trace-sample needs --trace FILE and a positive number of examples")
    _refuse_options_that_do_not_apply(options, args.trace_file, args.validation_file, args.init_model)
    return to_stdout


def _is_shard_run(args):
    """Whether the run trains on shards (DATA a glob, a directory or @list.txt, or the options of shards),
    after checking that it has none of the options of a run on one file."""
    from ..errors import ParameterError

    data = args.data
    if (args.checkpoint_every is not None or args.sync_every != "1") and not (
            args.engine != "local" or args.split is not None or args.scheduler is not None
            or args.local_workers is not None or args.resume is not None
            or (data != "-" and is_shard_data(data))):
        raise ParameterError(f"{'--checkpoint-every' if args.checkpoint_every is not None else '--sync-every'} is "
                             "an option of training on shards: give DATA as a glob, a directory or @list.txt, "
                             "--split N, or --engine dask")
    shard_run = (args.engine != "local" or args.split is not None or args.scheduler is not None
                 or args.local_workers is not None or args.resume is not None or args.checkpoint_every is not None
                 or args.sync_every != "1")
    if not (shard_run or (data != "-" and not os.path.isfile(data) and is_shard_data(data))):
        return False
    if (args.stream or args.cache_file is not None or args.report_gap or args.cost_matrix is not None
            or args.cost_factor is not None or args.trace_file is not None or args.validation_file is not None
            or args.init_model is not None or args.as_json or args.resume_state):
        raise ParameterError("training on shards takes none of --stream, --cache, --report-gap, "
                             "--cost-matrix, -j, --trace, --validation, --init, --resume-state, --json "
                             "(its checkpoints are --checkpoint-every and --resume)")
    if args.settings["sampling"] not in (None, "uniform"):
        raise ParameterError(f"--sampling {args.settings['sampling']}: training on shards draws i.i.d. batches "
                             "(uniform) from all shards")
    return True


def _read_data(args, options, progress):
    """DATA read (or --cache's file): the examples, the note on the cache, and the options completed from
    the data (labels, classes, class weights, -c)."""
    import numpy as np

    if args.init_model is not None and not args.zero_based and not was_given("zero_based"):
        args.zero_based = index_base_of(args.init_model) == "0"   # options not given are MODEL's, the index base too
    d, cache_note = read_training_data(args.data, options, progress, args.cache_file, args.zero_based,
                                       np.dtype(args.dtype))
    options = options_of_data(options, d, args.class_weights, args.cost_factor, args.cost_matrix,
                              args.settings["cost_c"])
    return d, cache_note, options


def _checks(args, options):
    """The checks during the run that pegasos.fit takes: --trace's and --validation's."""
    import numpy as np

    checks = {}
    if args.trace_file is not None:
        from ..trace import Trace

        checks["trace"] = Trace(sample=args.trace_sample, seed=options.seed, budget=args.trace_budget)
    if args.validation_file is not None:
        from ..io import read_svmlight

        checks["validation"] = read_svmlight(args.validation_file, zero_based=args.zero_based,
                                             dtype=np.dtype(args.dtype))
    return checks


def _fit(args, options, d, checks, progress):
    """The training run, with its progress bar: the model and the seconds it took."""
    from ..api import fit

    bar = TrainingBar(progress, args.progress_every if args.verbose else None)
    t1 = time.perf_counter()
    try:
        result = fit(d, options, progress=bar.update, on_plan=bar.start, init=args.init_model, **checks)
    finally:
        bar.close()
    return result, time.perf_counter() - t1


def _save(args, result, d, options, checks):
    """MODEL written (with --report-gap's certificate) and --trace's file: the run's outcome, the solver's
    own certified gap and the certificate."""
    from ..outcome import Outcome
    from ..solver import Solver

    outcome = Outcome.from_header(result.info)
    finish_gap = result.info.get("certified_gap")    # the solver's, before --report-gap's
    certificate = record_gap(result, d, options.n_threads) if args.report_gap else None
    result.save(args.model)
    if args.trace_file is not None:
        checks["trace"].write(args.trace_file)
        if outcome.solver is Solver.DUAL:
            click.echo("pegasos: note: --trace traces Pegasos' iterations, and the dual solver made the model, "
                       "so the trace has no rows; --solver pegasos traces a Pegasos run", err=True)
    return outcome, finish_gap, certificate


def _summary(args, result, d, options, times, progress, to_stdout, finish_gap, certificate):
    """The summary line (or --json's record); the values it computed (``seen``: the objective)."""
    t_read, t_train, cache_note = times
    seen = {}
    if args.as_json:
        record = train_record(result, d, options, t_read, t_train, cache_note, args.no_objective, args.model)
        if certificate is not None:
            record["certificate"] = certificate
        echo_json(record)
    elif not args.quiet:
        note_unused_qid(d, options)             # (a note of the summary's: not with -q)
        summary = train_summary(result, d, options, t_read, t_train, cache_note, args.no_objective, progress,
                                args.model, finish_gap, seen)
        if args.report_gap:
            summary += " | " + gap_summary(certificate)
        click.echo(summary, err=to_stdout)
    elif args.report_gap and "error" in certificate:
        click.echo(f"pegasos: note: {gap_summary(certificate)}", err=True)
    return seen


def _notes(args, outcome, result, d, options, certificate, seen):
    """The notes after the summary: a model worse than w = 0 or than its start, a stream that would fit in
    memory, how the run ended."""
    note_worse_than_zero(result, d, options, seen.get("objective"))
    note_worse_than_start(result, options)
    if not args.quiet and options.shuffle_buffer is not None and options.length_is_automatic:
        note_stream_fits(d, options)
    note_outcome(outcome, result, d, options, args.quiet, args.report_gap, certificate)


def _refuse_options_that_do_not_apply(options, trace_file, validation_file, init_model):
    """One-line errors for options given on the command line that the run would ignore
    (their siblings, --gamma with a linear model say, are refused the same way)."""
    from click.core import ParameterSource

    from ..errors import ParameterError

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


def _train_shards(data, model, options, quiet, to_stdout, dtype, zero_based, engine, scheduler, local_workers,
                  split, sync_every, checkpoint_every, checkpoint, resume):
    """train on shard files (pegasos.engine_dask.fit_shards), here or on a Dask cluster."""
    from ..engine_dask import EngineSettings, fit_shards
    from ..errors import ParameterError

    if was_given("cost_c"):
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
        quiet_dask()
    progress = Progress(quiet)
    bar = TrainingBar(progress)
    t1 = time.perf_counter()
    try:
        result = fit_shards(data, options, settings, split=split, progress=bar.update, on_plan=bar.start,
                            auto_batch=options.preset == "auto" and not was_given("batch_size"))
    finally:
        bar.close()
    seconds = time.perf_counter() - t1
    result.save(model)
    if not quiet:
        info = result.info
        from ..errors import counted

        click.echo(f"{counted(info['train_examples'], 'example')} in {counted(info['shards'], 'shard')}, "
                   f"{counted(result.n_features, 'feature')} | "
                   f"engine {engine}, sync every {info['sync_every']} | T = {info['iterations']}, k = "
                   f"{info['batch_size']}, lambda = {result.lam:g} | {seconds:.2f} s | model: "
                   f"{'standard output' if to_stdout else model}", err=to_stdout)
