# The helper thread of a module's training loop (csrc/warm.h), included by
# _core.pyx and _dual.pyx: each module keeps its own setting.

cdef extern from "warm.h":
    ctypedef struct pg_warm:
        pass
    pg_warm* pg_warm_start(const int64_t* order, int64_t n, const int64_t* indptr, const int32_t* indices,
                           const void* data, size_t value_size, int64_t ahead, int64_t hint) noexcept nogil
    void pg_warm_publish(pg_warm* w, int64_t pos) noexcept nogil
    bint pg_warm_choose(double* timing, double probe) noexcept nogil
    void pg_warm_timed(double* timing, bint helped, double seconds) noexcept nogil
    int64_t pg_warm_stop(pg_warm* w) noexcept nogil

# -1 automatic, 0 never, 1 always (see prefetch_thread)
cdef int WARM_MODE = -1
cdef int64_t WARM_AHEAD = 256
cdef int64_t WARM_HINT = 16
#: In the automatic mode the helper starts only when the rows' index and value
#: arrays hold at least WARM_MIN_BYTES (sets that fit in the caches gain
#: nothing) and the loop visits at least WARM_MIN_ENTRIES entries of its order
#: (a thread costs tens of microseconds to start).
WARM_MIN_BYTES = 64 << 20
WARM_MIN_ENTRIES = 1 << 16
#: The automatic mode times chunks of the loop (pegasos._core: about WARM_CHUNK_ENTRIES entries;
#: pegasos._dual: passes) with and without the helper and keeps the faster, timing the slower
#: again every WARM_PROBE chunks: where other work holds the processors, the helper only takes
#: the loop's time (measured on 2 busy cores: twice as slow).
WARM_CHUNK_ENTRIES = 1 << 16
WARM_PROBE = 16


def prefetch_thread(mode=None, ahead=None, hint=None):
    """The helper thread of this module's loop, optionally set first.

    On sets larger than the caches, a loop that visits rows in a random
    order waits for memory on every row; its own prefetch hints are bounded
    by the cache misses one core can have in flight.  The helper, a second
    thread on another core, walks the same order (:mod:`pegasos._dual`: a
    copy of each pass's order) ``ahead`` entries in front of the loop and
    reads each row's index and value arrays, prefetching its own rows
    ``hint`` entries further, so the loop finds them in the shared caches.
    It only reads: every result is bit-identical with and without it.

    Parameters
    ----------
    mode : {"auto", "on", "off"} or None
        "auto" (the default): the helper may start where the caller allows a
        second processor (``LinearState.run(n_threads >= 2)`` on its serial
        loop, an order not in row order; ``coordinate_ascent_shrinking(helper=True)``),
        the rows hold at least ``WARM_MIN_BYTES`` and the loop visits at
        least ``WARM_MIN_ENTRIES`` entries; the loop then runs in timed
        chunks with and without it and keeps the faster; "on": always (for
        tests and benchmarks); "off": never.
    ahead : int >= 1 or None
        Entries of the order the helper may be in front of the loop.
    hint : int >= 0 or None
        The helper's own prefetch distance in entries (0: none).

    Returns
    -------
    (mode, ahead, hint) now in force.

    Raises
    ------
    ValueError
        An unknown mode, ``ahead`` < 1 or ``hint`` < 0.
    """
    global WARM_MODE, WARM_AHEAD, WARM_HINT
    modes = {"auto": -1, "off": 0, "on": 1}
    if mode is not None and mode not in modes:
        raise ValueError(f"the helper thread's mode must be auto, on or off, got {mode!r}")
    a = WARM_AHEAD if ahead is None else int(ahead)
    h = WARM_HINT if hint is None else int(hint)
    if a < 1 or h < 0:
        raise ValueError("the helper thread needs ahead >= 1 and hint >= 0")
    if mode is not None:
        WARM_MODE = modes[mode]
    WARM_AHEAD, WARM_HINT = a, h
    return {-1: "auto", 0: "off", 1: "on"}[WARM_MODE], WARM_AHEAD, WARM_HINT
