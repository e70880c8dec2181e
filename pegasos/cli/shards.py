"""``pegasos train-shards``: Pegasos on shard files (a glob, a directory, @list.txt, or one file cut by
--split), in this process or on a Dask cluster, with checkpoints (:func:`pegasos.engine_dask.fit_shards`)."""

import os
import time

import click

from .common import errors_to_click, is_stdout, quiet_dask, usage_errors, was_given
from ..defaults import ROUNDS_PER_EPOCH
from .options import (SectionOption, SectionedCommand, default_shown, option_settings, parse_class_weights,
                      problem_options, shard_options, solver_options, without_options)
from .progress import Progress, TrainingBar
from .summary import explain_plan


#: the options of train that a run on shards has no use for: -c (lambda = 1/(C m) needs m before the run
#: starts), --cost-matrix, and the step rules other than Pegasos' (the engine keeps the Pegasos step)
_NOT_ON_SHARDS = ("cost_c", "cost_matrix")


@click.command("train-shards", cls=SectionedCommand)
@click.argument("data")
@click.argument("model", required=False)
@without_options(*_NOT_ON_SHARDS)
@default_shown("batch_size", f"ceil(m/{ROUNDS_PER_EPOCH}), m the examples; 1 with --paper")
@solver_options
@problem_options
@shard_options
@click.option("--zero-based", is_flag=True, cls=SectionOption, section="Input and output",
              help="Feature indices in DATA start at 0 (default 1).")
@click.option("--dtype", type=click.Choice(["float64", "float32"]), default="float64", show_default=True,
              cls=SectionOption, section="Input and output", help="Type of the feature values held in memory.")
@click.option("-q", "--quiet", is_flag=True, cls=SectionOption, section="Input and output",
              help="No progress bar and no summary.")
@errors_to_click
def train_shards(data, model, paper, jobs, class_weights, zero_based, dtype, quiet, engine, scheduler,
                 local_workers, split, sync_every, checkpoint_every, checkpoint, resume, **settings):
    """Train a linear model on the shards of DATA (a quoted glob, a directory, @list.txt with one file a
    line, or one file cut by --split N) and write MODEL (default: DATA's name + .model; - writes standard
    output): exact mini-batch Pegasos drawing k examples from all shards each step, here or on a Dask
    cluster (--engine dask), the same model either way.
    """
    from ..errors import ParameterError
    from ..model import check_writable
    from ..options import TrainOptions

    explain = settings.pop("explain", False)
    with usage_errors():
        if settings["sampling"] not in (None, "uniform"):
            raise ParameterError(f"--sampling {settings['sampling']}: training on shards draws i.i.d. batches "
                                 "(uniform) from all shards")
        options = TrainOptions(n_threads=jobs, preset="paper" if paper else "auto",
                               class_weight=parse_class_weights(class_weights), spelling="cli",
                               **option_settings(settings)).validate()
        if model is None:
            if data == "-":
                raise ParameterError("give a MODEL file name: shards are files, not standard input")
            model = os.path.basename(data.rstrip("/")) + ".model"
        to_stdout = is_stdout(model)
        model = "/dev/stdout" if model == "-" else model
        engine_settings = _engine_settings(model, to_stdout, dtype, zero_based, engine, scheduler, local_workers,
                                           sync_every, checkpoint_every, checkpoint, resume)
    check_writable(model)
    if explain:
        return explain_plan(options, m=None, in_memory=False)
    _fit_and_save(data, model, options, engine_settings, quiet, to_stdout, split)


def _engine_settings(model, to_stdout, dtype, zero_based, engine, scheduler, local_workers, sync_every,
                     checkpoint_every, checkpoint, resume):
    """The run's EngineSettings from the command line, validated (--sync-every parsed, --checkpoint's
    default MODEL.ckpt)."""
    from ..engine_dask import EngineSettings
    from ..errors import ParameterError

    if sync_every != "epoch":
        try:
            sync_every = int(sync_every)
        except ValueError:
            raise ParameterError(f"--sync-every: a number of steps >= 1 or 'epoch', got {sync_every!r}") from None
    if checkpoint_every is not None and checkpoint is None:
        if to_stdout:
            raise ParameterError("--checkpoint-every with MODEL on standard output needs --checkpoint FILE")
        checkpoint = model + ".ckpt"
    return EngineSettings(engine=engine, scheduler=scheduler, local_workers=local_workers, sync_every=sync_every,
                          checkpoint_every=checkpoint_every, checkpoint=checkpoint, resume=resume,
                          zero_based=True if zero_based else None, dtype=dtype).validate()


def _fit_and_save(data, model, options, settings, quiet, to_stdout, split):
    """The run (pegasos.engine_dask.fit_shards), MODEL written, and the summary line."""
    from ..engine_dask import fit_shards
    from ..errors import counted

    engine = settings.engine
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
        click.echo(f"{counted(info['train_examples'], 'example')} in {counted(info['shards'], 'shard')}, "
                   f"{counted(result.n_features, 'feature')} | solver {info['solver']} ({info['solver_reason']}) | "
                   f"engine {engine}, sync every {info['sync_every']} | T = {info['iterations']}, k = "
                   f"{info['batch_size']}, lambda = {result.lam:g} | {seconds:.2f} s | model: "
                   f"{'standard output' if to_stdout else model}", err=to_stdout)
