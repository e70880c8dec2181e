"""Sampling: which examples each iteration visits (paper Sec. 2, 7.5).

The solvers take an explicit order of example indices; these classes draw it
from one PCG64 generator per run, block by block, so a seed gives one model:

- :class:`Orders`: i.i.d. draws with replacement ("uniform"), a new random
  permutation every epoch ("permutation"), or file order ("sequential");
- :class:`PairOrders`: pairs of examples with the same query id and different
  labels, drawn uniformly (the rank loss).
"""

import math

import numpy as np

from .errors import ExampleError, ParameterError

BLOCK_SAMPLES = 1 << 20      # example indices drawn per block in uniform sampling


class Orders:
    """Example indices for each block of iterations (one random generator)."""

    def __init__(self, m, k, sampling, seed, order):
        self.m, self.k, self.sampling = m, k, sampling
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.explicit = None if order is None else np.ascontiguousarray(order, dtype=np.int64)
        if self.explicit is not None and self.explicit.size and (
                self.explicit.min() < 0 or self.explicit.max() >= m):
            raise ParameterError("order holds an index outside 0..m-1")
        self.pos = 0
        self.seq = np.arange(m, dtype=np.int64) if sampling == "sequential" else None

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
            elif self.sampling == "uniform":
                n = min(T - done, max(1, BLOCK_SAMPLES // k))
                order = self.rng.integers(0, m, size=n * k, dtype=np.int64)
            elif self.sampling == "permutation":
                n = min(T - done, per_epoch)
                order = self.rng.permutation(m).astype(np.int64, copy=False)
            else:
                n = min(T - done, per_epoch)
                order = self.seq
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
        bad = np.flatnonzero(qid < 0)
        if bad.size:
            i = int(bad[0])
            detail = ("no qid: token (the rank loss needs one on every line)" if qid[i] == -1 else
                      "its qid: is not a decimal integer below 10^18 (the rank loss needs one on every line)")
            raise ExampleError(f"example {i + 1}: {detail}", i, detail)
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
