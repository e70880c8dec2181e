"""``pegasos cv`` and ``pegasos search``: cross-validation and the lambda/gamma grid."""

import os
import sys

import click

from ..defaults import MAX_POINTS
from .common import UsageLine, echo_json, errors_to_click, was_given, is_stdout, fmt, quiet_dask, usage_errors
from .progress import Progress
from .options import (SectionedCommand, cluster_options, option_settings, parse_class_weights, model_options,
                      ONE_RUN_ONLY, refuse_model_options_that_do_not_apply, without_options)
from .notes import note_best_on_an_edge, note_worse_than_zero_runs, note_uncertified_folds, note_uncertified_points
from .reading import options_of_data, read_training_data
from .summary import options_record


def _selection_setup(data, paper, threads, cost_matrix, class_weights, stream, shuffle_buffer,
                     cache_file, zero_based, dtype, quiet, settings):
    """(options, data in memory) for cv and search: train's options, DATA read (or from --cache)."""
    import numpy as np

    from ..errors import ParameterError
    from ..options import TrainOptions

    with usage_errors():
        if stream and cache_file is None or shuffle_buffer is not None:
            raise ParameterError("cross-validation holds the folds in memory: --stream and --shuffle-buffer do "
                                 "not apply (--cache FILE does)")
        if cost_matrix is not None and settings.get("multiclass") != "crammer-singer":
            raise ParameterError("--cost-matrix needs --multiclass crammer-singer")
        options = TrainOptions(n_threads=threads, preset="paper" if paper else "auto",
                               class_weight=parse_class_weights(class_weights), spelling="cli",
                               **option_settings(settings)).validate()
        refuse_model_options_that_do_not_apply(options)
    if cache_file is not None:
        from ..model import check_distinct_files

        check_distinct_files(cache_file, "--cache", (("DATA", data),))
    d, _ = read_training_data(data, options, Progress(quiet), cache_file, zero_based, np.dtype(dtype))
    return options_of_data(options, d, cost_matrix, settings.get("cost_c")), d


def _selection_engine(data, cache_file, cost_matrix, fold_jobs, zero_based, dtype, engine, scheduler,
                      local_workers, streaming):
    """The DaskEngine of cv or search --engine dask, and DATA as the file its workers read (or None, None)."""
    from ..errors import ParameterError

    with usage_errors():
        _check_selection_engine(data, cache_file, cost_matrix, fold_jobs, engine, scheduler, local_workers,
                                streaming)
    if engine == "local":
        return None, None
    from ..engine_dask import DaskEngine
    from ..selection import DataFile

    if data == "-" or not os.path.isfile(data):
        raise ParameterError(f"--engine dask: DATA must be a file the workers can read (shared filesystem), "
                             f"got {data}")
    quiet_dask()
    return (DaskEngine(scheduler=scheduler, local_workers=local_workers),
            DataFile(os.path.abspath(data), zero_based=bool(zero_based), dtype=str(dtype)))


def _check_selection_engine(data, cache_file, cost_matrix, fold_jobs, engine, scheduler, local_workers,
                            streaming):
    """The options of cv's and search's --engine that exclude or need each other."""
    from ..engine_dask import EngineSettings
    from ..errors import ParameterError

    if engine == "local":
        if scheduler is not None or local_workers is not None:
            raise ParameterError("--scheduler and --local-workers need --engine dask")
        return
    if streaming:
        raise ParameterError("cross-validation holds the folds in memory: --stream and --shuffle-buffer do not "
                             "apply")
    for given, name in ((cache_file, "--cache"), (cost_matrix, "--cost-matrix")):
        if given is not None:
            raise ParameterError(f"--engine dask: the workers read DATA, {name} does not apply (it needs DATA "
                                 "on this machine)")
    if fold_jobs != 1:
        raise ParameterError("--jobs runs folds in local processes; with --engine dask the workers run them")
    EngineSettings(engine="dask", scheduler=scheduler, local_workers=local_workers).validate()


def _remote_options(paper, threads, class_weights, settings):
    from ..errors import ParameterError
    from ..options import TrainOptions

    with usage_errors():
        if settings.get("cost_c") is not None:
            raise ParameterError("-c C sets lambda = 1/(C m), and with --engine dask the workers read DATA, not "
                                 "this machine: give -l/--lambda")
        options = TrainOptions(n_threads=threads, preset="paper" if paper else "auto",
                               class_weight=parse_class_weights(class_weights), spelling="cli",
                               **option_settings(settings)).validate()
        refuse_model_options_that_do_not_apply(options)
        return options


def _fold_text(task):
    return {"binary": "stratified by class", "multiclass": "stratified by class", "ranking": "whole queries",
            "regression": "shuffled"}[task]


def cv_command(data, folds, jobs, as_json, paper, threads, cost_matrix, class_weights, stream,
               shuffle_buffer, cache_file, zero_based, dtype, quiet, settings, engine="local", scheduler=None,
               local_workers=None):
    from ..selection import cross_validate

    cluster, source = _selection_engine(data, cache_file, cost_matrix, jobs, zero_based, dtype, engine,
                                        scheduler, local_workers, stream or shuffle_buffer is not None)
    if cluster is None:
        options, d = _selection_setup(data, paper, threads, cost_matrix, class_weights, stream,
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
        r["options"] = options_record(options)
        echo_json(r)
        note_uncertified_folds(r["per_fold"], options.tol)        # on stderr, as train --json keeps its notes
        note_worse_than_zero_runs(r["per_fold"], "fold", r["task"], options, "folds", "fold {}")
        return
    names = r["metrics"]
    cost = settings.get("cost_c")
    lam = f"lambda={options.lam!r}" + ("" if cost is None else f" (-c {cost:g}: 1/(C m))")
    rows = [f"{r['folds']}-fold cross-validation on {path}: m={r['examples']} ({r['task']}; folds "
            f"{_fold_text(r['task'])}, seed {r['seed']}) | {lam}",
            f"{'fold':>4} {'train':>8} {'test':>8} " + " ".join(f"{n:>10}" for n in names) + f" {'seconds':>8}"]
    for f in r["per_fold"]:
        rows.append(f"{f['fold']:>4} {f['train_examples']:>8} {f['test_examples']:>8} "
                    + " ".join(f"{fmt(f[n]):>10}" for n in names) + f" {f['seconds']:>8.2f}")
    def undefined(n):     # folds where a metric is undefined (F1 without positives, say) are left out
        missing = sum(1 for f in r["per_fold"] if f.get(n) is None)
        return f" ({len(r['per_fold']) - missing} of {len(r['per_fold'])} folds)" if missing else ""

    rows.append("mean ± sd: " + " | ".join(
        f"{n} {fmt(r['mean'][n])} ± {fmt(r['sd'][n])}{undefined(n)}" for n in names))
    click.echo("\n".join(rows))
    note_uncertified_folds(r["per_fold"], options.tol)
    note_worse_than_zero_runs(r["per_fold"], "fold", r["task"], options, "folds", "fold {}")


@click.command(cls=SectionedCommand)
@click.argument("data")
@click.option("-v", "--folds", type=click.IntRange(min=2), default=5, show_default=True,
              help="Number of folds K; stratified by class, whole queries for ranking.")
@click.option("--jobs", "fold_jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Folds trained at once, in separate processes; the results are the same for any number.")
@click.option("--json", "as_json", is_flag=True, help="Print the folds' metrics, means and sds as one JSON object.")
@without_options("jobs", "no_objective", *ONE_RUN_ONLY)
@model_options
@cluster_options
@errors_to_click
def cv(data, folds, fold_jobs, as_json, paper, cost_matrix, class_weights, stream,
       shuffle_buffer, cache_file, zero_based, dtype, quiet, engine, scheduler, local_workers, **settings):
    """K-fold cross-validation of pegasos train on DATA (every train option applies): each fold's
    metrics on its held-out examples, and their mean ± sd.  The folds are drawn with --seed.
    """
    cv_command(data, folds, fold_jobs, as_json, paper, 1 if fold_jobs > 1 else 2, cost_matrix,
               class_weights, stream, shuffle_buffer, cache_file, zero_based, dtype, quiet, settings, engine,
               scheduler, local_workers)


@click.command(cls=SectionedCommand)
@click.argument("data")
@click.argument("model", required=False)
@click.option("-l", "--lambda", "lambda_grid", default="1e-7:1e-1", show_default=True, metavar="LO:HI|A,B,..",
              help="The lambdas: LO:HI or a comma list; LO:HI is --points values evenly spaced in log scale.")
@click.option("--points", type=click.IntRange(2, MAX_POINTS), help="Values of a LO:HI range [default: 13].")
@click.option("--gamma", "gamma_grid", metavar="LO:HI|A,B,..",
              help="Kernel gammas to try with every lambda (with --kernel; --gamma-points values for LO:HI).")
@click.option("--gamma-points", type=click.IntRange(2, MAX_POINTS), help="Values of a --gamma LO:HI range [default: 13].")
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
@without_options("jobs", "no_objective", "lam", "cost_c", "gamma", *ONE_RUN_ONLY)
@model_options
@cluster_options
@errors_to_click
def search(data, model, lambda_grid, points, gamma_grid, gamma_points, folds, validation, metric, no_warm_start,
           fold_jobs, as_json, paper, cost_matrix, class_weights, stream, shuffle_buffer, cache_file,
           zero_based, dtype, quiet, engine, scheduler, local_workers, **settings):
    """Choose lambda (and the kernel's gamma) by cross-validation on DATA or on a --validation FILE;
    with MODEL, write the model of pegasos train at the best point, trained on all of DATA.  Every train
    option applies.
    """
    from ..errors import ParameterError
    from ..model import check_distinct_files, check_writable
    from ..selection import LOWER_IS_BETTER, parse_grid
    from ..selection import search as run_search

    with usage_errors():
        if validation is not None and was_given("folds"):
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
            raise UsageLine("--json prints to standard output: give MODEL a file name")
        model = "/dev/stdout" if model == "-" else model
        check_writable(model)
        check_distinct_files(model, "MODEL", (("DATA", data), ("--validation", validation)))
    cluster, source = _selection_engine(data, cache_file, cost_matrix, fold_jobs, zero_based, dtype,
                                        engine, scheduler, local_workers, stream or shuffle_buffer is not None)
    first = dict(settings, lam=lambdas[0], gamma=None if gammas is None else gammas[0])
    if cluster is None:
        options, d = _selection_setup(data, paper, 1 if fold_jobs > 1 else 2, cost_matrix,
                                      class_weights, stream, shuffle_buffer, cache_file, zero_based, dtype, quiet,
                                      first)
        path = d.path
        holdout = None
        if validation is not None:
            from ..io import read_svmlight

            holdout = read_svmlight(validation, zero_based=zero_based, dtype=dtype)
        r = run_search(d, options, lambdas, gammas, folds=folds, validation=holdout, metric=metric, jobs=fold_jobs,
                       warm_start=not no_warm_start)
        if model is not None:
            from ..api import fit

            fit(d, options.replace(**r["best"])).save(model)
    else:
        from ..selection import DataFile, fit_task

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
        r["options"] = options_record(options)
        echo_json(r)
        note_best_on_an_edge(r["best"], {"lam": lambdas, "gamma": gammas})
        note_uncertified_points(r["rows"], options.tol)        # on stderr, as cv --json keeps its notes
        note_worse_than_zero_runs(r["rows"], "lam", r["task"], options, "grid points (their folds' mean)",
                                  "lambda {!r}")
        return
    out = sys.stderr if model is not None and is_stdout(model) else sys.stdout
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
        shown = fmt(mean) + (" ± " + fmt(sd) if validation is None else "")    # one validation set: no sd
        lines.append(("* " if row["best"] else "  ") + f"{row['lam']!r:>{wl}}"    # as the best: line shows it
                     + (f" {row['gamma']!r:>{wg}}" if gammas is not None else "")
                     + f" {shown:>24} {row['objective']:>11.6g} {row['seconds']:>8.2f}")
    best = " ".join(f"{'lambda' if k == 'lam' else k}={v!r}" for k, v in r["best"].items())
    lines.append(f"best: {best}" + (f" | model {model} (trained on all of {path})" if model is not None else ""))
    click.echo("\n".join(lines), file=out)
    note_best_on_an_edge(r["best"], {"lam": lambdas, "gamma": gammas})
    note_uncertified_points(r["rows"], options.tol)
    note_worse_than_zero_runs(r["rows"], "lam", r["task"], options, "grid points (their folds' mean)",
                              "lambda {!r}")
