"""``pegasos train``: the options checked together, then read, fit, save, summary and notes."""

import os
import time
from types import SimpleNamespace

import click

from ..defaults import DEFAULT_SHUFFLE_BUFFER
from .common import is_shard_data, echo_json, errors_to_click, was_given, is_stdout, is_number, usage_errors
from .progress import Progress, TrainingBar
from .options import (SectionOption, SectionedCommand, solver_options, problem_options, kernel_options,
                      streaming_options, data_options, check_options, given_on_command_line,
                      option_settings, parse_class_weights, refuse_model_options_that_do_not_apply)
from .notes import (note_outcome, note_stream_fits, note_unused_qid, note_worse_than_start,
                    note_worse_than_zero)
from .reading import index_base_of, options_of_data, read_training_data
from .summary import certify, explain_plan, train_summary, train_record


@click.command(cls=SectionedCommand)
@click.argument("data")
@click.argument("model", required=False)
@solver_options
@problem_options
@kernel_options
@streaming_options
@check_options
@data_options
@click.option("--json", "as_json", is_flag=True, cls=SectionOption, section="Input and output",
              help="Print the summary and options as JSON; on stdout, so not with MODEL -.")
@errors_to_click
def train(data, model, paper, jobs, cost_matrix, class_weights, stream,
          shuffle_buffer, cache_file, zero_based, dtype, quiet, verbose, progress_every, no_objective,
          trace_file, trace_sample, trace_budget, validation_file, init_model=None, restart_schedule=False,
          resume_state=None, as_json=False, **settings):
    """Train an SVM on DATA and write MODEL (default: DATA's file name + .model, in the current
    directory; MODEL - writes standard output).
    """
    args = SimpleNamespace(**locals())      # the command line, as the steps below read (and complete) it
    args.explain = settings.pop("explain", False)
    with usage_errors():
        _refuse_shards(data)
        _check_run_options(args)
        options = _train_options(args)
        to_stdout = _check_outputs(args, options)
    options = _stream_if_too_large(args, options)
    if args.explain and (args.shuffle_buffer is not None or init_model is not None):
        return explain_plan(options, m=None, in_memory=args.shuffle_buffer is None,
                            streamed=args.shuffle_buffer is not None, resumed=init_model is not None,
                            as_json=as_json)
    progress = Progress(quiet)
    t0 = time.perf_counter()
    d, cache_note, options = _read_data(args, options, progress)
    if args.explain:
        return explain_plan(options, m=d.n_examples, data=d, as_json=as_json)
    checks = _checks(args, options)
    t_read = time.perf_counter() - t0
    result, t_train = _fit(args, options, d, checks, progress)
    outcome = _save(args, result, d, options, checks)
    seen = _summary(args, result, d, options, (t_read, t_train, cache_note), progress, to_stdout)
    _notes(args, outcome, result, d, options, seen)


def _stream_if_too_large(args, options):
    """The options of the run, streaming DATA (``--stream``) where it was not asked for but reading the
    file into memory would need more than this process can allocate (:func:`pegasos.stream.too_large_for_memory`)
    and the run can stream; a note says so."""
    from ..errors import ParameterError

    if (args.shuffle_buffer is not None or args.cache_file is not None or args.init_model is not None
            or args.settings["sampling"] is not None or args.trace_file is not None
            or args.validation_file is not None):
        return options
    from ..stream import too_large_for_memory

    found = too_large_for_memory(args.data)
    if found is None:
        return options
    try:
        streamed = options.replace(shuffle_buffer=DEFAULT_SHUFFLE_BUFFER).validate()
    except ParameterError:
        return options
    args.shuffle_buffer = DEFAULT_SHUFFLE_BUFFER
    if not args.quiet:
        need, limit = found
        click.echo(f"pegasos: note: {args.data} would need about {need / 2 ** 30:.3g} GiB in memory, more than the "
                   f"{limit / 2 ** 30:.3g} GiB this process can allocate: streaming it (--stream)", err=True)
    return streamed


def _check_run_options(args):
    """The options of a run that exclude or need each other (--stream gives the default --shuffle-buffer)."""
    from ..errors import ParameterError

    if args.shuffle_buffer is not None and args.cache_file is not None:
        raise ParameterError("give either --shuffle-buffer or --cache, not both")
    if args.stream and args.cache_file is None and args.shuffle_buffer is None:
        args.shuffle_buffer = DEFAULT_SHUFFLE_BUFFER
    if args.verbose and args.quiet:
        raise ParameterError("give either -q/--quiet or --verbose, not both")
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
                           class_weight=parse_class_weights(args.class_weights), spelling="cli",
                           restart_schedule=args.restart_schedule, resume_state=args.resume_state,
                           given=given_on_command_line() if args.init_model is not None else None,
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
        if data == "-" and not args.explain:       # (--explain writes no model)
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
    if args.trace_sample is not None and args.trace_file is None:
        raise ParameterError("--trace-sample needs --trace FILE")
    _refuse_options_that_do_not_apply(options, args.trace_file, args.validation_file, args.init_model)
    from ..api import check_checks

    check_checks(options, args.trace_file is not None, args.validation_file is not None, args.init_model is not None)
    return to_stdout


def _refuse_shards(data):
    """A DATA of shards (a glob, a directory or @list.txt, not a file) is pegasos train-shards' (one line)."""
    from ..errors import ParameterError

    if data != "-" and not os.path.isfile(data) and is_shard_data(data):
        raise ParameterError(f"{data} names shards (a glob, a directory or @list.txt): pegasos train-shards "
                             "trains on them")


def _read_data(args, options, progress):
    """DATA read (or --cache's file): the examples, the note on the cache, and the options completed from
    the data (labels, classes, class weights, -c)."""
    import numpy as np

    if args.init_model is not None and not args.zero_based and not was_given("zero_based"):
        args.zero_based = index_base_of(args.init_model) == "0"   # options not given are MODEL's, the index base too
    d, cache_note = read_training_data(args.data, options, progress, args.cache_file, args.zero_based,
                                       np.dtype(args.dtype))
    options = options_of_data(options, d, args.cost_matrix, args.settings["cost_c"])
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
    """MODEL written and --trace's file (with the model's dual bound on f*): the run's outcome."""
    from ..outcome import Outcome
    from ..solver import Solver

    outcome = Outcome.from_header(result.info)
    result.save(args.model)
    if args.trace_file is not None:
        from ..trace import TRACE_BOUND_KEY

        trace = checks["trace"]
        # the dual bound <= f* that `pegasos plot` measures the suboptimality against (none for a kernel model)
        bound = certify(result, d, options.n_threads).get("dual")
        if bound is not None:
            trace.header[TRACE_BOUND_KEY] = repr(float(bound))
        trace.write(args.trace_file)
        if outcome.solver is Solver.DUAL:
            click.echo("pegasos: note: --trace traces Pegasos' iterations, and the dual solver made the model, "
                       "so the trace has no rows, only the model's dual bound on f* (which `pegasos plot` "
                       "measures Pegasos traces of the same data and lambda against); --solver pegasos traces "
                       "a Pegasos run", err=True)
    return outcome


def _summary(args, result, d, options, times, progress, to_stdout):
    """The summary line (or --json's record); the values it computed (``seen``: the objective)."""
    t_read, t_train, cache_note = times
    seen = {}
    if args.as_json:
        echo_json(train_record(result, d, options, t_read, t_train, cache_note, args.no_objective, args.model))
    elif not args.quiet:
        note_unused_qid(d, options)             # (a note of the summary's: not with -q)
        click.echo(train_summary(result, d, options, t_read, t_train, cache_note, args.no_objective, progress,
                                 args.model, seen), err=to_stdout)
    return seen


def _notes(args, outcome, result, d, options, seen):
    """The notes after the summary: a model worse than w = 0 or than its start, a stream that would fit in
    memory, how the run ended."""
    note_worse_than_zero(result, d, options, seen.get("objective"))
    note_worse_than_start(result, options)
    if not args.quiet and options.shuffle_buffer is not None and options.length_is_automatic:
        note_stream_fits(d, options)
    note_outcome(outcome, result, d, options, args.quiet)


def _refuse_options_that_do_not_apply(options, trace_file, validation_file, init_model):
    """One-line errors for options given on the command line that the run would ignore
    (their siblings, --gamma with a linear model say, are refused the same way)."""
    from click.core import ParameterSource

    from ..errors import ParameterError

    ctx = click.get_current_context()

    def given(name):
        return ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE

    refuse_model_options_that_do_not_apply(options, resumed=init_model is not None)
    if given("trace_points") and trace_file is None and validation_file is None:
        raise ParameterError("--trace-points sets the checks of --trace FILE or --validation FILE: give one")
    if given("trace_budget") and trace_file is None:
        raise ParameterError("--trace-budget bounds the checks of --trace FILE: give it")
