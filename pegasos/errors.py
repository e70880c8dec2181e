"""Exceptions raised by pegasos.

The library raises; only the command line (:mod:`pegasos.cli`) turns these
into a one-line ``Error: ...`` message and a non-zero exit status.
"""


class PegasosError(Exception):
    """Base class of every error pegasos reports to a user."""


class DataError(PegasosError, ValueError):
    """A data file cannot be read or is malformed.

    The message names the file and, where there is one, the 1-based line.
    """

    def __init__(self, path, message, line=None):
        self.path = path
        self.line = line
        self.message = message
        where = str(path) if line is None else f"{path}, line {line}"
        super().__init__(f"{where}: {message}")

    def __reduce__(self):           # pickled across processes (errors raised on Dask workers)
        return (type(self), (self.path, self.message, self.line))


class DamagedCacheError(DataError):
    """A ``--cache`` file is a pegasos cache but fails its checks (see :func:`pegasos.stream.open_cache`).

    Attributes
    ----------
    what : str
        What is wrong, without the file name (e.g. ``the data section changed since the cache was built``).
    """

    def __init__(self, path, what):
        self.what = what
        super().__init__(path, f"damaged cache file ({what}); delete it to rebuild")

    def __reduce__(self):
        return (type(self), (self.path, self.what))


class ModelFormatError(DataError):
    """A model file is not a pegasos model, is damaged, or has an unknown version."""


class ParameterError(PegasosError, ValueError):
    """A training or evaluation parameter is out of range."""


class DivergenceError(ParameterError):
    """Training diverged: the weights (or kernel coefficients) became infinite or NaN (the scale of
    the data, lambda or the step is at fault)."""


class ExampleError(ParameterError):
    """A problem with the training examples as the API received them (arrays).

    The API does not know the file the examples came from; the command line
    turns this error into a :class:`DataError` naming the file and, for one
    example, its line (see :meth:`in_file`).

    Attributes
    ----------
    example : int or None
        0-based position of the offending example, or None when the problem
        concerns the examples as a whole (e.g. a class that does not occur).
    detail : str
        The message without the position (what the file-and-line form shows).
    """

    def __init__(self, message, example=None, detail=None):
        super().__init__(message)
        self.example = example
        self.detail = detail or message

    def __reduce__(self):
        return (type(self), (str(self), self.example, self.detail))

    def in_file(self, path, line=None):
        """The same error told of the file it came from.

        Parameters
        ----------
        path : str
            The data file (``-`` for standard input).
        line : int or None
            The 1-based line of the example, if known.

        Returns
        -------
        PegasosError
            ``path, line N: detail``; ``path, example N: detail`` when the
            line is unknown; ``example N of standard input: detail`` for
            ``-``; ``path: detail`` when no example is concerned.
        """
        if self.example is None:
            return DataError("standard input" if path == "-" else path, self.detail)
        if path == "-":
            return DataError(f"example {self.example + 1} of standard input", self.detail)
        if line is None:
            return DataError(f"{path}, example {self.example + 1}", self.detail)
        return DataError(path, self.detail, line)


class ConvergenceWarning(UserWarning):
    """A run ended short of what was asked: a dual solver above ``tol`` (the model is not certified), or
    Pegasos' automatic length at its cap (:attr:`pegasos.outcome.Outcome.diagnostics`).  The model is
    still returned; ``pegasos train`` prints the same diagnostics as its notes."""


def counted(n, noun, nouns=None):
    """``n`` and the noun in the number it takes, for messages: "1 feature", "2 features", "0 shards"
    (``nouns``: the plural when it is not ``noun`` + "s")."""
    n = int(n)
    return f"{n} {noun if n == 1 else nouns or noun + 's'}"
