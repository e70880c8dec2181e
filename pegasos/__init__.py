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

TYPE_CHECKING = False     # typing.TYPE_CHECKING without importing typing (type checkers take it as true)

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
    "DivergenceError": "errors",
    "ConvergenceWarning": "errors",
    "Outcome": "outcome",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    # The names above as type checkers see them (at run time __getattr__ imports each when first used);
    # "name as name" marks each as exported (mypy reads no computed __all__).
    from pegasos.api import fit as fit
    from pegasos.certificate import duality_gap as duality_gap
    from pegasos.errors import (ConvergenceWarning as ConvergenceWarning, DamagedCacheError as DamagedCacheError,
                                DataError as DataError, DivergenceError as DivergenceError,
                                ExampleError as ExampleError, ModelFormatError as ModelFormatError,
                                ParameterError as ParameterError, PegasosError as PegasosError)
    from pegasos.outcome import Outcome as Outcome
    from pegasos.io import (iter_svmlight as iter_svmlight, load_svmlight as load_svmlight,
                            read_svmlight as read_svmlight)
    from pegasos.kernel import KernelModel as KernelModel
    from pegasos.labels import BinaryLabels as BinaryLabels
    from pegasos.linear import LinearModel as LinearModel
    from pegasos.model import save_model as save_model
    from pegasos.modelfile import load_model as load_model
    from pegasos.multiclass import MulticlassModel as MulticlassModel
    from pegasos.options import TrainOptions as TrainOptions
    from pegasos.plot import plot_traces as plot_traces
    from pegasos.scoring import (evaluate as evaluate, evaluate_file as evaluate_file, objective as objective,
                                 objective_file as objective_file)
    from pegasos.selection import cross_validate as cross_validate, search as search
    from pegasos.trace import Trace as Trace, read_trace as read_trace
    from pegasos.trainers import train as train, train_kernel as train_kernel, train_multiclass as train_multiclass


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
