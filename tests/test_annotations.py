"""The public API keeps its type hints: every parameter and the return of each function and method
below is annotated (mypy checks them, `make typecheck`; this test makes sure they stay there), the
package ships its py.typed marker, and pegasos/__init__.py shows its lazily imported names to type
checkers."""

import ast
import inspect
from pathlib import Path

import pytest

import pegasos
from pegasos import api, certificate, io, kernel, linear, model, modelfile, multiclass, options, scoring, selection
from pegasos import trainers

ROOT = Path(__file__).resolve().parents[1]

FUNCTIONS = [
    api.fit, trainers.train, trainers.train_multiclass, trainers.train_kernel,
    io.load_svmlight, io.read_svmlight, io.iter_svmlight,
    model.save_model, modelfile.load_model,
    scoring.objective, scoring.evaluate, scoring.objective_file, scoring.evaluate_file,
    certificate.duality_gap, selection.cross_validate, selection.search,
]

METHODS = {
    io.Chunk: ["n_rows", "matrix"],
    io.SVMLightData: ["X", "y", "n_examples", "nnz"],
    linear.LinearModel: ["task", "n_features", "decision_function", "predict", "predict_proba", "losses",
                         "regularizer", "squared_norm", "to_text", "save"],
    multiclass.MulticlassModel: ["n_features", "n_classes", "decision_function", "predict_index", "predict",
                                 "class_index", "regularizer", "to_text", "save"],
    kernel.KernelModel: ["n_support", "decision_function", "predict", "support_matrix",
                         "squared_norm", "regularizer", "to_text", "save"],
    options.TrainOptions: ["step_is_automatic", "length_is_automatic", "kernel_dual", "finishes_given_length",
                           "name", "subject", "replace", "task", "validate", "finish_unavailable", "check_finish",
                           "t0", "plan", "header", "from_header"],
}

ESTIMATOR_METHODS = {
    "PegasosClassifier": ["fit", "partial_fit", "decision_function", "predict", "predict_proba",
                          "predict_log_proba", "save", "load"],
    "PegasosRegressor": ["fit", "partial_fit", "predict", "save", "load"],
    "PegasosRanker": ["fit", "predict", "score", "save", "load"],
}


def unannotated(function):
    """The parameters (besides self and cls) and "return" that have no annotation."""
    if isinstance(function, property):
        function = function.fget
    signature = inspect.signature(function)
    missing = [name for name, p in signature.parameters.items()
               if p.annotation is inspect.Parameter.empty and name not in ("self", "cls")]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def member(cls, name):
    """The function behind a method, classmethod, property or scikit-learn's available_if, as the class
    defines it."""
    for klass in cls.__mro__:
        if name in vars(klass):
            value = vars(klass)[name]
            if isinstance(value, (classmethod, staticmethod)):
                return value.__func__
            return getattr(value, "fn", value) if not callable(value) else value
    raise AttributeError(f"{cls.__name__} defines no {name}")


def test_the_check_finds_what_is_missing():
    def half(x, y: int, *args, **kwargs) -> int:
        return y

    def whole(x: int) -> None:
        pass

    class Model:
        @property
        def size(self):
            return 0

        def predict(self, X: int):
            return X

    assert unannotated(half) == ["x", "args", "kwargs"]
    assert unannotated(whole) == []
    assert unannotated(member(Model, "size")) == ["return"]
    assert unannotated(member(Model, "predict")) == ["return"]


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f"{f.__module__}.{f.__qualname__}")
def test_public_functions_are_annotated(function):
    assert unannotated(function) == []


@pytest.mark.parametrize("cls, name", [(c, n) for c, names in METHODS.items() for n in names],
                         ids=lambda v: getattr(v, "__name__", v))
def test_public_methods_are_annotated(cls, name):
    assert unannotated(member(cls, name)) == []


def test_estimator_methods_are_annotated():
    sklearn = pytest.importorskip("pegasos.sklearn")
    missing = {f"{cls}.{name}": unannotated(member(getattr(sklearn, cls), name))
               for cls, names in ESTIMATOR_METHODS.items() for name in names}
    assert {k: v for k, v in missing.items() if v} == {}


def test_dataclass_fields_that_may_be_none_say_so():
    """A field whose default is None is annotated with None among its types (mypy refuses the rest)."""
    import dataclasses

    wrong = []
    for cls in (io.Chunk, io.SVMLightData, linear.LinearModel, multiclass.MulticlassModel, kernel.KernelModel,
                options.TrainOptions):
        for f in dataclasses.fields(cls):
            if f.default is None and "None" not in str(f.type) and str(f.type) not in ("object", "Any"):
                wrong.append(f"{cls.__name__}.{f.name}: {f.type}")
    assert wrong == []


def test_the_package_is_marked_typed():
    assert (ROOT / "pegasos" / "py.typed").is_file()
    assert 'pegasos = ["py.typed"]' in (ROOT / "pyproject.toml").read_text()


def test_type_checkers_see_every_lazily_imported_name():
    """pegasos/__init__.py imports its names when first used (__getattr__), which a type checker reads as
    Any; its TYPE_CHECKING block imports each one from its module for the checker."""
    tree = ast.parse((ROOT / "pegasos" / "__init__.py").read_text())
    seen = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                if isinstance(imp, ast.ImportFrom):
                    seen.update({a.asname or a.name: imp.module.removeprefix("pegasos.") for a in imp.names})
    assert seen == pegasos._EXPORTS
