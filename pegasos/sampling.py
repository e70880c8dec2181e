"""Sampling: which examples each iteration visits (paper Sec. 2, 7.5).

The solvers take an explicit order of example indices; these classes draw it
from one PCG64 generator per run, block by block, so a seed gives one model:

- :class:`Orders`: i.i.d. draws with replacement ("uniform"), a new random
  permutation every epoch ("permutation"), one random permutation drawn at
  the start and reused every epoch ("shuffle-once", the third variant of
  Sec. 7.5), or file order ("sequential");
- :class:`PairOrders`: pairs of examples with the same query id and different
  labels, drawn uniformly (the rank loss).
"""

import math

import numpy as np

from .errors import ExampleError, ParameterError
from .examples import check_query_ids

BLOCK_SAMPLES = 1 << 20      # example indices drawn per block in uniform sampling
GROUP_SAMPLES = 1 << 16      # permutation sampling of small m: whole epochs drawn together up to this many indices


class Orders:
    """Example indices for each block of iterations (one random generator).

    The random orders are drawn in units: a permutation of the m examples
    per epoch ("permutation"), ``BLOCK_SAMPLES // k`` batches of i.i.d. draws
    ("uniform"), one pass in file order ("sequential") or in the order of
    the one permutation drawn from the seed when the object is made
    ("shuffle-once": the generator is not used after it).  A run that stops
    inside a unit can be continued exactly: :meth:`get_state` records the
    generator state before the unit was drawn and the batches of it already
    run, and :meth:`set_state` makes the next :meth:`blocks` draw the same
    unit again and start after those batches.  So runs of T1 and T2
    iterations visit the examples of one run of T1 + T2 for every sampling
    and any T1.
    """

    def __init__(self, m, k, sampling, seed, order):
        self.m, self.k, self.sampling = m, k, sampling
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.explicit = None if order is None else np.ascontiguousarray(order, dtype=np.int64)
        if self.explicit is not None and self.explicit.size and (
                self.explicit.min() < 0 or self.explicit.max() >= m):
            raise ParameterError("order holds an index outside 0..m-1")
        self.pos = 0
        self.seq = np.arange(m, dtype=np.int64) if sampling == "sequential" else None
        self.fixed = sampling in ("sequential", "shuffle-once")     # the same order every epoch
        self.perm_rng = None        # shuffle-once: the generator state the permutation was drawn from
        if sampling == "shuffle-once" and self.explicit is None:
            self._shuffle(self.rng.bit_generator.state)
        self.unit_rng = None        # generator state before the current unit was drawn
        self.unit_done = 0          # batches of the current unit already run (0: none pending)

    def _shuffle(self, state):
        """Draw the shuffle-once permutation from the generator state ``state`` (and leave
        ``self.rng`` where that draw ends)."""
        self.rng.bit_generator.state = state
        self.perm_rng = state
        self.seq = self.rng.permutation(self.m).astype(np.int64, copy=False)

    def unit_batches(self):
        """Batches in one unit of the order (an epoch, or one draw of uniform indices)."""
        if self.sampling == "uniform":
            return max(1, BLOCK_SAMPLES // self.k)
        return math.ceil(self.m / self.k)

    def _draw_unit(self, batches):
        """The first ``batches`` batches of a new unit.  A shorter draw of i.i.d. indices is the
        start of the full one (numpy fills an array in order), so only a unit that is run to its
        end needs its whole draw, and then the generator is where the full draw leaves it."""
        if self.fixed:
            return self.seq
        self.unit_rng = self.rng.bit_generator.state
        if self.sampling == "uniform":
            return self.rng.integers(0, self.m, size=batches * self.k, dtype=np.int64)
        if self.sampling == "permutation":
            return self.rng.permutation(self.m).astype(np.int64, copy=False)
        return self.seq

    def get_state(self):
        """What continuing the order needs (a dict of plain values; None with an explicit order).

        Keys: ``sampling``, ``m``, ``k``, ``rng`` (``bit_generator.state``
        after the last draw), ``unit_done`` (batches of the last unit run;
        0 when it was run to its end) and ``unit_rng`` (the state before that
        unit was drawn, None when ``unit_done`` is 0; for "shuffle-once" always
        the state its permutation was drawn from).
        """
        if self.explicit is not None:
            return None
        pending = 0 < self.unit_done < self.unit_batches()
        unit_rng = self.unit_rng if pending and not self.fixed else None
        if self.sampling == "shuffle-once":
            unit_rng = self.perm_rng
        return {"sampling": self.sampling, "m": int(self.m), "k": int(self.k), "rng": self.rng.bit_generator.state,
                "unit_done": int(self.unit_done) if pending else 0, "unit_rng": unit_rng}

    def set_state(self, state, *, generator=True):
        """Continue the order of :meth:`get_state`'s dict ``state``.

        The generator goes on from the saved one (unless ``generator`` is
        False: the seed's stream is kept).  A unit cut by the end of the saved
        run is finished first when it still applies: the same sampling, the
        same m and k; otherwise the next run starts a new unit.  A
        "shuffle-once" order of the same m goes on with the saved permutation
        (drawn again from the saved ``unit_rng``).

        Raises
        ------
        ParameterError
            A generator state numpy cannot use, a negative ``unit_done``.
        """
        try:
            same = state.get("sampling") == self.sampling and int(state.get("m", -1)) == self.m
            if self.sampling == "shuffle-once" and same and state.get("unit_rng") is not None:
                probe = np.random.PCG64()
                probe.state = state["unit_rng"]              # checked before it replaces the generator's
                self._shuffle(state["unit_rng"])
            if generator:
                self.rng.bit_generator.state = state["rng"]
            done = int(state.get("unit_done", 0))
            if done < 0:
                raise ValueError(f"unit_done {done} is negative")
            if done and same and int(state.get("k", -1)) == self.k and done < self.unit_batches():
                if not self.fixed:
                    probe = np.random.PCG64()
                    probe.state = state["unit_rng"]          # checked before it replaces the generator's
                    self.unit_rng = state["unit_rng"]
                self.unit_done = done
        except (TypeError, ValueError, KeyError, OverflowError) as e:
            raise ParameterError(f"init: the saved generator state of the order is unusable ({type(e).__name__}: {e})") from None

    def blocks(self, T, k=None):
        """Yield (order, n_iter) pairs covering T iterations."""
        done = 0
        m, k = self.m, self.k
        per_epoch = math.ceil(m / k)
        while done < T:
            if self.explicit is not None:
                n = min(T - done, max(1, BLOCK_SAMPLES // k))
                if self.sampling == "uniform":
                    order = self.explicit[self.pos:self.pos + n * k]
                    need = n * k
                else:
                    n = min(T - done, per_epoch)
                    order = self.explicit[self.pos:self.pos + m]
                    need = m
                if order.shape[0] < min(need, (n - 1) * k + 1):
                    raise ParameterError("the explicit order is shorter than the run needs")
                self.pos += order.shape[0]
                yield order, n
                done += n
                continue
            unit = self.unit_batches()
            skip = self.unit_done if 0 < self.unit_done < unit else 0
            if (not skip and self.sampling == "permutation" and m % k == 0 and 2 * m <= GROUP_SAMPLES
                    and T - done >= 2 * unit):
                # several whole epochs in one draw: numpy's permuted() shuffles each row as permutation()
                # does, in turn, so these are the permutations of one draw per epoch, and the batches
                # (m/k of k each) do not cross an epoch's end (an epoch costs a Python step otherwise:
                # 16384 epochs of 4 examples took 0.2 s to draw one by one, 0.6 ms together)
                g = min((T - done) // unit, GROUP_SAMPLES // m)
                order = self.rng.permuted(np.tile(np.arange(m, dtype=np.int64), (g, 1)), axis=1).reshape(-1)
                self.unit_done = unit
                yield order, g * unit
                done += g * unit
                continue
            n = min(T - done, unit - skip)
            if skip:
                # finish the unit a saved run stopped in: draw it again from the state before it
                if not self.fixed:
                    self.rng.bit_generator.state = self.unit_rng
                order = self._draw_unit(skip + n)[skip * k:]
            else:
                order = self._draw_unit(n)
            self.unit_done = skip + n
            yield order, n
            done += n


class PairOrders:
    """Pairs (a, b) with the same qid and different labels, drawn uniformly
    among all such ordered pairs (each sample is two consecutive entries)."""

    def __init__(self, qid, y, seed, order=None):
        if qid is None:
            raise ParameterError("the rank loss needs qid: tokens in the data")
        qid = np.asarray(qid, dtype=np.int64)
        if qid.shape != np.shape(y):
            raise ParameterError(f"qid has shape {qid.shape}; it needs one query id per example ({len(y)})")
        check_query_ids(qid, "the rank loss needs")
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.explicit = None if order is None else np.ascontiguousarray(order, dtype=np.int64)
        self.pos = 0
        if self.explicit is not None:
            a, b = self.explicit[0::2], self.explicit[1::2]
            if self.explicit.size % 2 or (self.explicit.size and (self.explicit.min() < 0
                                                                  or self.explicit.max() >= qid.size)):
                raise ParameterError("the pair order needs an even number of indices in 0..m-1")
            bad = np.flatnonzero((qid[a] != qid[b]) | (y[a] == y[b]))
            if bad.size:
                raise ParameterError(f"pair {bad[0] + 1} of the order ({a[bad[0]]}, {b[bad[0]]}) is not two "
                                     "examples of one qid with different labels")
        srt = np.lexsort((y, qid))
        qs, ys = qid[srt], y[srt]
        m = srt.size
        new_q = np.r_[True, qs[1:] != qs[:-1]] if m else np.zeros(0, bool)
        new_l = new_q | np.r_[True, ys[1:] != ys[:-1]] if m else np.zeros(0, bool)
        q_id = np.cumsum(new_q) - 1
        l_id = np.cumsum(new_l) - 1
        q_first = np.flatnonzero(new_q)
        l_first = np.flatnonzero(new_l)
        q_len = np.diff(np.r_[q_first, m])
        l_len = np.diff(np.r_[l_first, m])
        self.srt = srt
        self.q_start = q_first[q_id]
        self.l_start = l_first[l_id]
        self.l_len = l_len[l_id]
        partners = q_len[q_id] - self.l_len
        self.cum = np.cumsum(partners)
        self.partners = partners
        self.n_pairs = int(self.cum[-1]) if m else 0
        if self.n_pairs == 0:
            raise ExampleError("no pair of examples with the same qid and different labels")

    def blocks(self, T, k):
        done = 0
        while done < T:
            n = min(T - done, max(1, BLOCK_SAMPLES // k))
            if self.explicit is not None:
                block = self.explicit[self.pos:self.pos + 2 * n * k]
                if block.shape[0] < 2 * n * k:
                    raise ParameterError("the explicit order is shorter than the run needs")
                self.pos += block.shape[0]
            else:
                block = self.draw(n * k)
            yield block, n
            done += n

    def draw(self, count):
        """``count`` pairs as a flat int64 array a0, b0, a1, b1, ..."""
        r = self.rng.integers(0, self.n_pairs, size=count, dtype=np.int64)
        p = np.searchsorted(self.cum, r, side="right")
        off = r - (self.cum[p] - self.partners[p])
        before = self.l_start[p] - self.q_start[p]
        partner = np.where(off < before, self.q_start[p] + off, self.q_start[p] + off + self.l_len[p])
        out = np.empty(2 * count, dtype=np.int64)
        out[0::2] = self.srt[p]
        out[1::2] = self.srt[partner]
        return out


class ShardDraws:
    """Mini-batches drawn uniformly from the union of several shards.

    For iteration t the k examples of the batch A_t are allocated to the
    shards by ``counts(t)`` ~ Multinomial(k, n_j / n), and shard j's
    ``counts(t)[j]`` rows are drawn uniformly with replacement by
    ``rows(t, j, count)``; together these are k i.i.d. uniform draws from all
    n examples, the sampling of the paper's analysis (Sec. 2, Fig. 2).  Every
    draw comes from a PCG64 generator keyed by (seed, t) or (seed, t, j), so
    a process holding only shard j draws the same rows as one holding all
    shards, in any order of the calls (training on shards, resuming at t).

    Parameters
    ----------
    sizes : sequence of int >= 0
        Examples n_j of each shard (n = sum > 0).
    k : int >= 1
        Batch size.
    seed : int >= 0
    """

    def __init__(self, sizes, k, seed):
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.n = int(self.sizes.sum())
        if self.n <= 0:
            raise ExampleError("no training examples in the shards")
        self.k, self.seed = int(k), int(seed)
        self.p = self.sizes / float(self.n)

    def counts(self, t):
        """int64 array (n_shards,): how many of the k examples of iteration t each shard gives."""
        rng = np.random.Generator(np.random.PCG64([self.seed, int(t), 0]))
        return rng.multinomial(self.k, self.p).astype(np.int64)

    def rows(self, t, j, count):
        """int64 array (count,): the rows (0..n_j-1) shard j gives to iteration t."""
        if int(count) == 0:
            return np.zeros(0, dtype=np.int64)
        rng = np.random.Generator(np.random.PCG64([self.seed, int(t), 1, int(j)]))
        return rng.integers(0, int(self.sizes[j]), size=int(count), dtype=np.int64)

    def local_rows(self, r, j, steps, batch):
        """int64 array (steps * batch,): shard j's rows for ``steps`` local
        iterations of ``batch`` examples in averaging round r (model averaging,
        Zinkevich et al. 2010)."""
        rng = np.random.Generator(np.random.PCG64([self.seed, int(r), 2, int(j)]))
        return rng.integers(0, int(self.sizes[j]), size=int(steps) * int(batch), dtype=np.int64)
