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
        where = str(path) if line is None else f"{path}, line {line}"
        super().__init__(f"{where}: {message}")


class ModelFormatError(DataError):
    """A model file is not a pegasos model, is damaged, or has an unknown version."""


class ParameterError(PegasosError, ValueError):
    """A training or evaluation parameter is out of range."""
