"""What every command shares: errors as one line and an exit status, JSON output, signals,
small checks of the command line's values, and a model read for DATA.

Exit status 2 is a wrong command line: an unknown option, a value of the wrong type or outside its
range, or options that do not go together, found before any file is read (:class:`UsageLine`,
:class:`Command`, :func:`usage_errors`); exit status 1 is a run that failed (a file, the data, a
model)."""

import contextlib
import functools
import math
import os
import sys

import click


def is_shard_data(data):
    """engine_dask.is_shard_spec, imported only for a DATA that is not a regular file
    (the shard engine's module is not needed, nor its import time paid, for one file)."""
    from ..engine_dask import is_shard_spec

    return is_shard_spec(data)


def strict_json(value):
    """``value`` with every non-finite float as None: JSON has no NaN or Infinity (strict parsers and jq
    refuse them), and an undefined number is null in every record of the commands."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    return value


def echo_json(record):
    """Print ``record`` as indented, strict JSON (see :func:`strict_json`)."""
    import json        # (only for --json: not a cost of every start of the command)

    click.echo(json.dumps(strict_json(record), indent=2, allow_nan=False))


class UsageLine(click.ClickException):
    """A wrong command line in one line ``Error: ...``, without click's usage text: exit status 2, as
    click's usage errors."""

    exit_code = 2


class Command(click.Command):
    """A command whose bad option values (click's types and ranges) are one line :class:`UsageLine`, as
    the values pegasos checks itself (:func:`usage_errors`); an unknown option or a missing argument keeps
    click's usage text."""

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except click.MissingParameter:
            raise
        except click.BadParameter as e:
            raise UsageLine(e.format_message()) from None


class Finite(click.FloatRange):
    """click.FloatRange refusing NaN and the infinities (which compare as in any range or pass an open
    bound): a number with a bound is a finite one."""

    name = "float range"

    def convert(self, value, param, ctx):
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{rv} is not a finite number", param, ctx)
        return rv


@contextlib.contextmanager
def usage_errors():
    """The command line's settings checked inside: a ParameterError raised (a value out of range, options
    that do not go together) is a wrong command line, :class:`UsageLine` (exit 2).  What the data or a
    file refuse (ExampleError, DataError) stays an error of the run (exit 1)."""
    from ..errors import ExampleError, ParameterError

    try:
        yield
    except ExampleError:
        raise
    except ParameterError as e:
        raise UsageLine(str(e)) from None


def errors_to_click(fn):
    """Report library errors as ``Error: message`` (exit 1), never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from ..errors import ExampleError, PegasosError

        try:
            return fn(*args, **kwargs)
        except ExampleError as e:
            # the API names an example by position: name DATA's file and line instead
            data = kwargs.get("data")
            if data is not None:
                from ..io import example_line

                e = e.in_file(data, example_line(data, e.example))
            raise click.ClickException(str(e)) from None
        except PegasosError as e:
            raise click.ClickException(str(e)) from None
        except MemoryError:
            raise click.ClickException("out of memory") from None
        except KeyboardInterrupt:
            # Ctrl-C: one line and the shell's status for SIGINT (128 + 2); temporary files are gone
            _stop_line("interrupted (SIGINT)")
            sys.exit(130)
        except _Terminated as e:
            _stop_line(f"terminated ({e.name})")
            raise
        except BrokenPipeError:
            # output piped into e.g. `head`: stop quietly, with the status a shell gives a
            # process that SIGPIPE ended (128 + 13), as `yes | head -1` reports
            try:
                sys.stdout = open(os.devnull, "w")
            except OSError:
                pass
            sys.exit(141)
        except OSError as e:
            # e.g. standard output on a full disk
            raise click.ClickException(f"cannot write output: {e.strerror or e}") from None

    return wrapper


class _Terminated(SystemExit):
    """Raised by the SIGTERM handler: unwinds like Ctrl-C (temporary files are removed)
    and exits with 128 + the signal number, as a process the signal ended."""

    def __init__(self, signum):
        import signal

        super().__init__(128 + signum)
        self.name = signal.Signals(signum).name


def terminate(signum, frame):
    raise _Terminated(signum)


def _stop_line(what):
    """The one line written when a signal stops a command."""
    try:
        sys.stderr.write(f"pegasos: {what}; stopped, no output file was left half-written\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def was_given(name):
    """Whether the command's option ``name`` (its parameter name) is on the command line, not click's default."""
    from click.core import ParameterSource

    return click.get_current_context().get_parameter_source(name) == ParameterSource.COMMANDLINE


def is_stdout(path):
    """Whether writing ``path`` writes this process's standard output."""
    if path in ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        return True
    try:
        a, b = os.stat(path), os.fstat(1)
    except (OSError, ValueError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino) and not os.path.isfile(path) or \
        (os.path.realpath(path) == os.path.realpath("/proc/self/fd/1"))


def is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def load_model_for(model_path, data):
    """The model of MODEL (``-``: standard input, when DATA is not read from there)."""
    from ..errors import ParameterError
    from ..modelfile import load_model

    if model_path == "-" and data == "-":
        raise ParameterError("DATA and MODEL cannot both be standard input: give one of them as a file")
    return load_model(model_path)


def fmt(v, digits=4):
    return "n/a" if v is None else f"{v:.{digits}f}"


def quiet_dask():
    """Keep Dask's own log lines (a worker's failed task, a lost worker: ours is the one Error line) off
    stderr: its logging configuration, read when distributed is first imported, inherited by the
    workers of --local-workers.  A DASK_LOGGING the user set wins."""
    quiet = {name: "critical" for name in ("distributed", "distributed.client", "distributed.nanny",
                                           "distributed.scheduler", "distributed.worker")}
    os.environ.setdefault("DASK_LOGGING", repr(quiet))
