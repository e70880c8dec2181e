"""pegasos: linear SVMs trained with Pegasos, for SVMlight/LIBSVM files.

Python API (the command line ``pegasos`` is a thin layer over it)::

    import pegasos
    X, y = pegasos.load_svmlight("a9a")                 # CSR matrix, labels
    model = pegasos.train(X, y, lam=1e-4, epochs=20)    # Fig. 1 of the paper
    options = pegasos.TrainOptions(lam=1e-4, epochs=20, sampling="permutation")
    model = pegasos.fit((X, y), options)                 # binary, multiclass, ... as the data need
    f = model.decision_function(X)                       # <w, x> + b
    pegasos.objective(model, X, y)["objective"]          # lambda/2 |w|^2 + mean hinge
    model.save("a9a.model"); model = pegasos.load_model("a9a.model")

Names are imported lazily, so ``import pegasos`` is cheap.
"""

__version__ = "0.1.0"

_EXPORTS = {
    "load_svmlight": "io",
    "read_svmlight": "io",
    "iter_svmlight": "io",
    "fit": "api",
    "train": "trainers",
    "train_kernel": "trainers",
    "TrainOptions": "options",
    "KernelModel": "kernel",
    "LinearModel": "linear",
    "BinaryLabels": "labels",
    "train_multiclass": "trainers",
    "MulticlassModel": "multiclass",
    "save_model": "model",
    "load_model": "modelfile",
    "objective": "scoring",
    "objective_file": "scoring",
    "evaluate": "scoring",
    "evaluate_file": "scoring",
    "duality_gap": "certificate",
    "Trace": "trace",
    "read_trace": "trace",
    "plot_traces": "plot",
    "cross_validate": "selection",
    "search": "selection",
    "PegasosError": "errors",
    "DataError": "errors",
    "ModelFormatError": "errors",
    "DamagedCacheError": "errors",
    "ParameterError": "errors",
    "ExampleError": "errors",
    "ConvergenceWarning": "errors",
    "Outcome": "outcome",
}

__all__ = sorted(_EXPORTS)


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


def __getattr__(name):
    if name in ("trace", "plot"):                # submodules: pegasos.trace.Trace, pegasos.plot.plot_traces
        import importlib

        return importlib.import_module(f".{name}", __name__)
    if name in _EXPORTS:
        import importlib

        module = importlib.import_module(f".{_EXPORTS[name]}", __name__)
        value = getattr(module, name)
        globals()[name] = value          # later lookups skip __getattr__
        return value
    raise AttributeError(f"module 'pegasos' has no attribute {name!r}")
