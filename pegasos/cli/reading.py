"""Training data read for train, cv and search (from DATA or a --cache file), and the options that
depend on it (classes, -c C)."""

import os

import click

from .progress import bar_update, close_bar


def index_base_of(model_path):
    """MODEL's ``index_base`` header value ("0" or "1"), or None when it cannot be read here (the run's
    own load of MODEL then says why)."""
    from ..errors import PegasosError
    from ..modelfile import load_model

    try:
        return load_model(model_path).info.get("index_base")
    except PegasosError:
        return None


def options_of_data(options, d, cost_matrix, cost=None):
    """The options with --cost-matrix (which needs the classes of DATA) and -c C (its examples m:
    lambda = 1/(C m))."""
    if cost is not None:
        from ..errors import ParameterError

        if options.task == "ranking":
            raise ParameterError("-c does not apply to a ranking model: its loss is a mean over pairs, not "
                                 "examples (SVMlight's -z p -c C is lambda = 1/(C P), P the pairs): give "
                                 "-l/--lambda")
        if d.n_examples == 0:
            raise ParameterError("-c C sets lambda = 1/(C m), and DATA holds no examples: give -l/--lambda")
        options = options.replace(lam=1.0 / (cost * d.n_examples)).validate()
    if cost_matrix is not None:
        from ..multiclass import read_cost_matrix

        options = options.replace(cost=tuple(read_cost_matrix(cost_matrix, _n_classes(d)).tolist()))
    return options


def read_training_data(data, options, progress, cache_file, zero_based, dtype):
    """DATA in memory, from its cache, or its first pass for the shuffle buffer; and a note on the cache."""
    bar = progress.reading(data)
    try:
        if cache_file is not None:
            from ..stream import CACHE_VERSION, load_cached

            rebuilt = []

            def on_damaged(what):       # with -q too: a cache damaged on disk may be the first sign of a failing disk
                rebuilt.append("rebuilt, it was damaged")
                click.echo(f"pegasos: note: {cache_file}: damaged cache file ({what}); rebuilding it from {data}",
                           err=True)

            def on_newer(version):      # with -q too: two versions sharing one cache rebuild it in turn
                rebuilt.append(f"rebuilt, it was of version {version}")
                click.echo(f"pegasos: note: {cache_file}: cache version {version} was written by a newer pegasos; "
                           f"this one reads version {CACHE_VERSION} and rebuilds it from {data}", err=True)

            d, reused = load_cached(data, cache_file, zero_based=zero_based, dtype=dtype, progress=bar_update(bar),
                                    on_damaged=on_damaged, on_newer=on_newer)
            return d, f"cache {cache_file} ({'reused' if reused else rebuilt[0] if rebuilt else 'built'})"
        if options.shuffle_buffer is not None:
            from ..stream import first_pass_learner, scan

            d = scan(data, zero_based=zero_based, dtype=dtype,
                     epsilon=options.epsilon if options.task == "regression" else None, progress=bar_update(bar),
                     seed=options.seed, learner=first_pass_learner(options))
            n_labels = 65 if d.labels_overflow else len(d.distinct_labels)
            if options.task == "binary" and n_labels > 2:
                from ..errors import ParameterError

                raise ParameterError(f"{data} has {n_labels if n_labels <= 64 else 'more than 64'} labels: "
                                     f"{options.name('shuffle_buffer')} trains binary classifiers and regression; "
                                     "add --cache FILE for a multiclass model (DATA parsed once into FILE, then "
                                     "trained from it memory-mapped)")
            return d, ""
        from ..io import is_plain_text_file, read_svmlight
        from ..linear import second_processor

        # a second thread faults in the pages of a large plain file's arrays beside the parse (the kernel's
        # work of a first write to fresh memory, most of the read's system time); --jobs 1 keeps the run to
        # one thread, reading included
        threads = 1
        if data != "-" and second_processor(options.n_threads) and is_plain_text_file(data) and \
                os.path.getsize(data) >= PARALLEL_READ_BYTES:
            threads = 2
        return read_svmlight(data, zero_based=zero_based, dtype=dtype, progress=bar_update(bar), threads=threads), ""
    finally:
        close_bar(bar)


def _n_classes(d):
    import numpy as np

    return int(np.unique(d.y).size)


#: plain files at least this large are read with a second thread faulting in their arrays (see read_training_data)
PARALLEL_READ_BYTES = 64 << 20
