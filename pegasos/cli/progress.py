"""Progress bars on a terminal (tqdm, imported when a bar is shown): reading, training."""

import os
import sys
import time

import click


class Progress:
    """tqdm bars on stderr, only when stderr is a terminal and not --quiet."""

    def __init__(self, quiet):
        self.enabled = not quiet and sys.stderr.isatty()

    def bar(self, total, desc, unit, scale=False):
        if not self.enabled:
            return None
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, unit=unit, unit_scale=scale, file=sys.stderr,
                    leave=False, dynamic_ncols=True, mininterval=0.25)

    def reading(self, path):
        size = None
        from ..io import is_plain_text_file

        if self.enabled and is_plain_text_file(path):     # compressed: the bytes read are not the file's
            try:
                size = os.path.getsize(path)
            except OSError:
                size = None
        return self.bar(size, f"reading {os.path.basename(path)}", "B", scale=True)


def bar_update(bar):
    return None if bar is None else bar.update


def close_bar(bar):
    if bar is not None:
        bar.close()


class TrainingBar:
    """The training progress bar, sized when the run knows its T (``fit``'s on_plan).

    With ``every`` (seconds; ``--verbose``) and stderr not a terminal, a line
    ``training: DONE/T iterations (P%), S s`` goes to stderr at most every
    ``every`` seconds and once at the end of each run (``training: DONE
    iterations, S s`` when T is not known in advance: the stopping rule) (a run whose T is
    announced again, such as one step of the automatic stopping rule or one
    class of one-vs-rest, starts its count again; the seconds count from the
    first).  Updates may come from several threads.
    """

    def __init__(self, progress, every=None):
        import threading

        self.progress, self.bar = progress, None
        self.lines = every is not None and not progress.enabled
        self.every, self.lock = every, threading.Lock()
        self.total = self.done = 0
        self.shown = None                # the count of the last line
        self.started = self.last = None

    def start(self, total):
        if self.lines:
            with self.lock:
                if self.started is not None and self.done and self.shown != self.done:
                    self._line()
                now = time.monotonic()
                self.started = self.started if self.started is not None else now
                self.last, self.total, self.done = now, None if total is None else int(total), 0
                self.shown = None
            return
        self.bar = self.progress.bar(total, "training", "it", scale=True)

    def update(self, n):
        if self.lines:
            with self.lock:
                self.done += int(n)
                if time.monotonic() - self.last >= self.every:
                    self._line()
        elif self.bar is not None:
            self.bar.update(n)

    def _line(self):
        self.last, self.shown = time.monotonic(), self.done
        seconds = self.last - self.started
        if self.total is None:          # the stopping rule: T is not known in advance
            click.echo(f"training: {self.done} iterations, {seconds:.1f} s", err=True)
            return
        pct = 100.0 * self.done / self.total if self.total else 100.0
        click.echo(f"training: {self.done}/{self.total} iterations ({pct:.1f}%), {seconds:.1f} s", err=True)

    def close(self):
        if self.lines:
            with self.lock:
                if self.started is not None and self.done and self.shown != self.done:
                    self._line()
        close_bar(self.bar)
