"""Bounded fuzzing of the three readers of untrusted bytes: the SVMlight reader,
the model loader and the cache opener.

Inputs are the shared failure cases, small real files, model files of every kind
and a cache, mutated byte by byte (flips, insertions of random bytes, deletions,
truncation, splices of two seeds) or random bytes.  Every input must give a
result or a PegasosError: any other exception (or a crash of the process) fails
the test.  Each target runs FUZZ_EXAMPLES = 2500 inputs (15-25 s on a loaded
2-core machine); PEGASOS_FUZZ_EXAMPLES runs more.
"""

import os
import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pegasos
from pegasos import stream
from pegasos.errors import PegasosError
from pegasos.io import iter_svmlight, read_svmlight
from pegasos.linear import LinearModel

from conftest import CASES_DIR, DATA_DIR, REQUIRE_SHARED, data_file

FUZZ_EXAMPLES = int(os.environ.get("PEGASOS_FUZZ_EXAMPLES", "2500"))
FUZZ = settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])


def _seed_files():
    if not (CASES_DIR.is_dir() and DATA_DIR.is_dir()) and not REQUIRE_SHARED:
        # the seeds are read at import (the strategies need them): skip the module, not fail its collection
        pytest.skip(f"needs the shared folders {CASES_DIR} and {DATA_DIR}, which are absent (set PEGASOS_CASES, "
                    "PEGASOS_DATA)", allow_module_level=True)
    seeds = [p.read_bytes() for p in sorted(CASES_DIR.glob("*.svm")) if p.stat().st_size < 64 << 10]
    seeds.append(data_file("heart_scale/heart_scale").read_bytes()[:20000])
    seeds.append(data_file("dna/dna.scale").read_bytes()[:20000])
    assert len(seeds) > 10
    return seeds


@st.composite
def mutated(draw, seeds):
    """A seed changed by up to 6 byte-level edits, or random bytes."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=2000))
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "splice", "special"]))
        pos = draw(st.integers(0, max(len(data), 1))) % (len(data) + 1)
        if kind == "flip" and data:
            data[pos % len(data)] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[pos:pos + draw(st.integers(1, 16))]
        elif kind == "truncate":
            del data[pos:]
        elif kind == "splice":
            other = draw(st.sampled_from(seeds))
            data[pos:] = other[draw(st.integers(0, max(len(other) - 1, 0))):]
        elif kind == "special":
            data[pos:pos] = draw(st.sampled_from([b"\xef\xbb\xbf", b"\r", b"\0", b"nan", b"inf", b"-1", b":",
                                                  b"1e999", b"99999999999", b"\n", b"#", b"qid:", b",", b"0x1p3"]))
    return bytes(data)


SEEDS = _seed_files()


@FUZZ
@given(data=mutated(SEEDS), zero_based=st.booleans(), block_size=st.sampled_from([7, 4096]))
def test_fuzz_reader(tmp_path_factory, data, zero_based, block_size):
    path = tmp_path_factory.mktemp("fz") / "d.svm"
    path.write_bytes(data)
    try:
        d = read_svmlight(str(path), zero_based=zero_based)
    except PegasosError:
        d = None
    rows = 0
    try:
        for chunk in iter_svmlight(str(path), zero_based=zero_based, block_size=block_size):
            rows += chunk.n_rows
            assert np.all(np.isfinite(chunk.data)) and np.all(chunk.indices >= 0)
    except PegasosError:
        assert d is None, "iter_svmlight failed where read_svmlight did not"
        return
    assert d is not None and d.n_examples == rows


@pytest.fixture(scope="module")
def model_seeds(tmp_path_factory):
    d = tmp_path_factory.mktemp("seeds")
    X = sp.random(30, 5, density=0.5, format="csr", random_state=0)
    y = np.where(np.arange(30) % 2, 1.0, -1.0)
    models = [pegasos.train(X, y, epochs=1, average_from=0.5),
              pegasos.train(X, y, epochs=1, loss="log", class_weight={1.0: 2.0}, bias="unregularized"),
              pegasos.train_multiclass(X, np.arange(30) % 3.0, epochs=1),
              pegasos.train_multiclass(X, np.arange(30) % 3.0, epochs=1, method="crammer-singer"),
              pegasos.train_kernel(X, y, kernel="rbf", gamma=0.5, epochs=1)]
    out = []
    for i, m in enumerate(models):
        m.save(d / f"{i}.model")
        out.append((d / f"{i}.model").read_bytes())
    return out, X


_BIG_NUMBER = re.compile(rb"(n_features|classes|weights|support_vectors)[ \t]+\+?\d{7,}")


def test_fuzz_model_loader(tmp_path_factory, model_seeds):
    seeds, X = model_seeds

    @FUZZ
    @given(data=mutated(seeds))
    def run(data):
        if _BIG_NUMBER.search(data):          # a valid header asking for much memory: refused elsewhere
            return
        path = tmp_path_factory.mktemp("fm") / "m.model"
        path.write_bytes(data)
        try:
            model = pegasos.load_model(str(path))
        except PegasosError:
            return
        f = model.decision_function(X)
        assert np.all(np.isfinite(f))

    run()


@pytest.fixture(scope="module")
def cache_seed(tmp_path_factory):
    d = tmp_path_factory.mktemp("cache")
    cache = d / "h.cache"
    stream.load_cached(str(data_file("heart_scale/heart_scale")), str(cache))
    return cache.read_bytes()


@st.composite
def damaged_cache(draw, raw):
    data = bytearray(raw)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "word", "truncate", "header"]))
        if len(data) < 16:
            break
        if kind == "flip":
            pos = draw(st.integers(0, len(data) - 1))
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "word":                  # an 8-byte field of a section set to a random value
            pos = draw(st.integers(0, len(data) // 8 - 1)) * 8
            data[pos:pos + 8] = draw(st.binary(min_size=8, max_size=8))
        elif kind == "truncate":
            del data[draw(st.integers(0, len(data))):]
        else:                                 # a digit of the JSON header changed
            digits = [m.start() for m in re.finditer(rb"\d", bytes(data[:4096]))]
            if digits:
                data[draw(st.sampled_from(digits))] = draw(st.sampled_from(b"0123456789"))
    return bytes(data)


def test_fuzz_cache_opener(tmp_path_factory, cache_seed):
    w = np.random.default_rng(0).normal(size=20)

    @FUZZ
    @given(data=damaged_cache(cache_seed))
    def run(data):
        path = tmp_path_factory.mktemp("fc") / "h.cache"
        path.write_bytes(data)
        try:
            d = stream.open_cache(str(path))
        except PegasosError:
            return
        chunk = d.chunk
        model = LinearModel(w=w[:max(d.n_features, 1)].copy() if d.n_features <= 20 else np.zeros(d.n_features),
                            bias=0.0, labels=None, lam=1.0, loss="eps-insensitive")
        f = model.decision_function(chunk)
        assert f.shape == (chunk.n_rows,) and np.all(np.isfinite(f))

    run()
