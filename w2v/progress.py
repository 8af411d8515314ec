"""Progress on stderr for every long step: a bar on a terminal, plain lines elsewhere.

``progress_bar(desc, total, unit, show)`` gives the bar of one step (reading a
corpus, training, k-means): a tqdm bar when stderr is a terminal; otherwise a
``LineBar``, which prints a whole line as the step begins, at each tenth of the
total, every ``LINE_SECONDS`` seconds and at the end, and never a carriage return
(nohup, CI logs, ``2> log``); or ``NoBar`` when progress is off. Every bar takes the
position reached, not an increment: ``bar.update(done, **fields)``.

``Steps`` chains bars, a new one whenever the step's name changes (k-means'
seeding, then its iterations; the passes of ``w2v phrases``); ``reading`` shows a
corpus being counted (``counting.ReadStatus``). The library only calls back;
what is shown is chosen here.
"""

import sys
import time
from collections.abc import Callable
from typing import Protocol, TextIO

LINE_SECONDS = 10.0  # a progress line at least this often when stderr is not a terminal
LINE_PARTS = 10  # and one at each tenth of the total,
LINE_GAP = 1.0  # unless the last one is more recent than this (a step of a second prints only its end)
SHORT_UNITS = {"words": "w", "tokens": "tok", "bytes": "B"}  # tqdm's unit names (scaled: kw, MB); others as given


class Bar(Protocol):
    """What every bar does: move to ``done`` (with fields such as ``loss="2.53"``), leave
    a pause of ``seconds`` just ended out of its rate, and close, ``completed`` or not
    (the step failed: an error message follows)."""

    def update(self, done: int, **fields: str) -> None: ...

    def pause(self, seconds: float) -> None: ...

    def close(self, completed: bool = True) -> None: ...


class NoBar:
    """A bar showing nothing."""

    def update(self, done: int, **fields: str) -> None:
        pass

    def pause(self, seconds: float) -> None:
        pass

    def close(self, completed: bool = True) -> None:
        pass


class TerminalBar:
    """A tqdm bar (imported only to show one); ``initial``: where the step starts, so
    that the rate counts only what this run does (a resumed training run)."""

    def __init__(self, desc: str, total: int | None, unit: str, initial: int, file: TextIO):
        from tqdm import tqdm

        self.bar = tqdm(
            desc=desc, total=total, initial=initial, unit=SHORT_UNITS.get(unit, unit), unit_scale=True, file=file
        )

    def update(self, done: int, **fields: str) -> None:
        if fields:
            self.bar.set_postfix(fields, refresh=False)
        self.bar.update(done - self.bar.n)

    def pause(self, seconds: float) -> None:
        self.bar.start_t += seconds  # tqdm's mean rate counts from start_t, its smoothed one from last_print_t
        self.bar.last_print_t += seconds

    def close(self, completed: bool = True) -> None:
        self.bar.close()


class LineBar:
    """Progress as whole lines (``w2v: training: 40% (606,664 of 1,516,660 words),
    812,345 words/s, elapsed 0:01, ETA 0:02, epoch=2/5, loss=2.5300``): one at the
    first update (the step has begun), one at each ``1 / LINE_PARTS`` of the total
    (unless the last line is less than ``LINE_GAP`` old), one at least every
    ``LINE_SECONDS``, and one at ``close`` unless the last line already said it all or
    the step failed. The rate counts from ``initial``, and so does the time left
    (``ETA``: the rest of the total at that rate); the time elapsed is the step's,
    pauses included. ``clock``: seconds."""

    def __init__(
        self,
        desc: str,
        total: int | None,
        unit: str,
        initial: int,
        file: TextIO,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.desc, self.total, self.unit, self.file, self.clock = desc, total, unit, file, clock
        self.initial = self.done = initial
        self.fields: dict[str, str] = {}
        self.began = self.started = self.printed_at = clock()  # ``started`` moves past pauses
        self.next_mark = self._mark_after(initial)
        self.shown: tuple | None = None  # what the last line said

    def _mark_after(self, done: int) -> int:
        """The next tenth of the total after ``done`` (in units)."""
        if not self.total:
            return 0
        parts = done * LINE_PARTS // self.total + 1
        return -(-self.total * parts // LINE_PARTS)

    def update(self, done: int, **fields: str) -> None:
        self.done = done
        self.fields.update(fields)
        now = self.clock()
        since = now - self.printed_at
        tenth = bool(self.total) and done >= self.next_mark and since >= LINE_GAP
        if self.shown is None or tenth or since >= LINE_SECONDS:
            self._print(now)

    def pause(self, seconds: float) -> None:
        self.started += seconds

    def close(self, completed: bool = True) -> None:
        if completed and self.shown != (self.done, tuple(self.fields.items())):
            self._print(self.clock())

    def _print(self, now: float) -> None:
        self.printed_at = now
        self.next_mark = self._mark_after(self.done)
        self.shown = (self.done, tuple(self.fields.items()))
        parts = [self._position()]
        if now > self.started and self.done > self.initial:
            rate = (self.done - self.initial) / (now - self.started)
            parts += [f"{format_amount(rate, self.unit)}/s", f"elapsed {clock_time(now - self.began)}"]
            if self.total and self.done < self.total:
                parts.append(f"ETA {clock_time((self.total - self.done) / rate)}")
        parts += [f"{key}={value}" for key, value in self.fields.items()]
        print(f"w2v: {self.desc}: " + ", ".join(parts), file=self.file, flush=True)

    def _position(self) -> str:
        if not self.total:
            return format_amount(self.done, self.unit)
        total = format_amount(self.total, self.unit)
        done = format_amount(self.done, self.unit, scale_of=self.total).rsplit(" ", 1)[0]
        return f"{100 * self.done / self.total:.0f}% ({done} of {total})"


def clock_time(seconds: float) -> str:
    """``seconds`` as a clock shows a time: ``0:07``, ``12:05``, ``1:02:03``."""
    minutes, whole_seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{whole_seconds:02d}" if hours else f"{minutes}:{whole_seconds:02d}"


def format_amount(amount: float, unit: str, scale_of: float | None = None) -> str:
    """``1,234,567 words``; bytes in MB (``12.3 MB``), kB below one MB, bytes below
    one kB (the scale of ``scale_of`` if given, so that two amounts compare)."""
    scale = amount if scale_of is None else scale_of
    if unit == "bytes" and scale >= 1e6:
        return f"{amount / 1e6:.1f} MB"
    if unit == "bytes" and scale >= 1e3:
        return f"{amount / 1e3:.1f} kB"
    return f"{amount:,.0f} {unit}"


def is_terminal(file: TextIO) -> bool:
    """Whether ``file`` is a terminal (False for a closed or unusual stream)."""
    try:
        return file.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def progress_bar(desc: str, total: int | None, unit: str, show: bool, initial: int = 0, file=None) -> Bar:
    """The bar of one step on ``file`` (stderr by default): ``total`` in ``unit``
    (``"words"``, ``"bytes"``, ``"iterations"``...; None: unknown), starting at
    ``initial``; a tqdm bar on a terminal, a ``LineBar`` elsewhere, nothing unless ``show``."""
    if not show:
        return NoBar()
    file = sys.stderr if file is None else file
    if is_terminal(file):
        return TerminalBar(desc, total, unit, initial, file)
    return LineBar(desc, total, unit, initial, file)


def note(message: str, show: bool = True) -> None:
    """Print ``w2v: message`` on stderr (when ``show``)."""
    if show:
        print(f"w2v: {message}", file=sys.stderr, flush=True)


def note_above_bar(message: str) -> None:
    """``note`` while a bar may be shown: on a terminal above the bar (tqdm's
    ``write``, which redraws it), elsewhere as one more line of the log."""
    if not is_terminal(sys.stderr):
        note(message)
        return
    from tqdm import tqdm

    tqdm.write(f"w2v: {message}", file=sys.stderr)


class Steps:
    """Bars for consecutive steps: ``steps(name, done, total, unit, **fields)`` moves
    the current bar, or closes it and opens a new one when ``name`` changes. As a
    context manager, it closes the last bar at the end of the block."""

    def __init__(self, show: bool):
        self.show = show
        self.bar: Bar | None = None
        self.name: str | None = None

    def __enter__(self) -> "Steps":
        return self

    def __exit__(self, error_type, *_exc) -> None:
        self.close(completed=error_type is None)  # before any error message

    def __call__(self, name: str, done: int, total: int | None, unit: str, **fields: str) -> None:
        if name != self.name or self.bar is None:
            self.close()
            self.bar, self.name = progress_bar(name, total, unit, self.show), name
        self.bar.update(done, **fields)

    def close(self, completed: bool = True) -> None:
        if self.bar is not None:
            self.bar.close(completed)
        self.bar = self.name = None


def reading(steps: Steps, name: str = "reading"):
    """A ``counting.ReadStatus`` callback showing a corpus being read as step ``name``
    of ``steps``: its bytes (of the total where known) with the tokens and distinct
    words so far, or the tokens alone for tokenised sentences (no bytes)."""

    def show(status) -> None:
        words = {} if status.words is None else {"words": f"{status.words:,}"}
        if status.bytes_read is None:
            steps(name, status.tokens or 0, None, "tokens", **words)
        else:
            tokens = {} if status.tokens is None else {"tokens": f"{status.tokens:,}"}
            steps(name, status.bytes_read, status.total_bytes, "bytes", **tokens, **words)

    return show
