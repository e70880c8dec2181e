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


#: arrays the Python API hands out, edited in place or replaced, then handed back to it: in one process
#: of its own (a crash is its exit status; each case is written to stderr before it runs, so the last
#: line names the one that crashed), ARRAY_EXAMPLES inputs (PEGASOS_FUZZ_EXAMPLES runs more)
ARRAY_EXAMPLES = int(os.environ.get("PEGASOS_FUZZ_EXAMPLES", "100"))
ARRAY_FUZZ = '''
import sys, warnings
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st
import pegasos
from pegasos.errors import PegasosError
from pegasos.io import iter_svmlight

PATH, N = sys.argv[1], int(sys.argv[2])
warnings.simplefilter("ignore")
d0 = pegasos.read_svmlight(PATH)
y3 = np.arange(d0.n_examples) % 3.0
MODELS = {
    "binary": lambda: pegasos.train(d0.X, d0.y, epochs=1),
    "multiclass": lambda: pegasos.train_multiclass(d0.X, y3, epochs=1),
    "kernel": lambda: pegasos.train_kernel(d0.X, d0.y, kernel="rbf", gamma=0.5, epochs=1),
}
BUILT = {k: f() for k, f in MODELS.items()}
HOLDERS = {
    "reader": lambda: pegasos.read_svmlight(PATH),
    "chunk": lambda: pegasos.io.SVMLightData(PATH, next(iter_svmlight(PATH)), d0.n_features),
}
ARRAYS = {"reader": ["X.indptr", "X.indices", "X.data", "chunk.indptr", "chunk.indices", "chunk.data",
                     "chunk.labels", "y"],
          "binary": ["w"], "multiclass": ["W", "biases"],
          "kernel": ["sv_indptr", "sv_indices", "sv_data", "coef"]}
ARRAYS["chunk"] = ARRAYS["reader"]
USES = {
    "fit": lambda d, m: pegasos.fit(d, epochs=1),
    "train": lambda d, m: pegasos.train(d.chunk, d.y, epochs=1),
    "train_multiclass": lambda d, m: pegasos.train_multiclass(d.chunk, y3, epochs=1),
    "decision": lambda d, m: m.decision_function(d.chunk),
    "objective": lambda d, m: pegasos.objective(m, d.chunk, y3 if getattr(m, "task", "") == "multiclass" else d.y),
    "duality_gap": lambda d, m: pegasos.duality_gap(m, d.chunk, d.y),
    "save": lambda d, m: m.save(PATH + ".model"),
}
VALUES = [-1, 0, 1, 2, 7, 39, 40, 41, 2**31 - 1, 2**31, 2**40, -2**63, np.nan, np.inf, -np.inf, 1e308, 0.5]

def copy_of(obj):
    import copy
    return copy.deepcopy(obj)

def resolve(holder, path):
    *parents, last = path.split(".")
    for p in parents:
        holder = getattr(holder, p)
    return holder, last

@settings(max_examples=N, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.data())
def target(data):
    kind = data.draw(st.sampled_from(sorted(ARRAYS)))
    d = HOLDERS["reader"]() if kind not in HOLDERS else HOLDERS[kind]()
    m = copy_of(BUILT[data.draw(st.sampled_from(sorted(BUILT)))])
    owner = d if kind in HOLDERS else copy_of(BUILT[kind])
    if kind in BUILT:
        m = owner
    array = data.draw(st.sampled_from(ARRAYS[kind]))
    holder, name = resolve(owner, array)
    a = getattr(holder, name)
    edit = data.draw(st.sampled_from(["set", "set", "set", "shorter", "longer", "dtype", "reshape", "reverse"]))
    try:
        if edit == "set" and a.size:
            i = data.draw(st.integers(0, a.size - 1))
            value = data.draw(st.sampled_from(VALUES))
            edit = f"set [{i}] = {value!r}"
            a.reshape(-1)[i] = value
        elif edit == "shorter":
            setattr(holder, name, a[:data.draw(st.integers(0, max(a.shape[0] - 1, 0)))].copy())
        elif edit == "longer":
            setattr(holder, name, np.concatenate([a, a[:3]]))
        elif edit == "dtype":
            setattr(holder, name, a.astype(data.draw(st.sampled_from([np.int64, np.int32, np.float32, np.int8,
                                                                         np.float64, np.uint32]))))
        elif edit == "reshape":
            setattr(holder, name, a.reshape(1, -1))
        elif edit == "reverse":
            setattr(holder, name, a[::-1])
    except (ValueError, OverflowError, TypeError, AttributeError):
        return                  # numpy refused the edit itself (a read-only array, an unrepresentable value)
    use = data.draw(st.sampled_from(sorted(USES)))
    print(kind, array, edit, use, getattr(m, "task", ""), getattr(m, "kind", ""), file=sys.stderr, flush=True)
    try:
        USES[use](d, m)
    except PegasosError:
        pass

target()
print("ran", N)
'''


def test_fuzz_arrays_handed_back_to_the_api(tmp_path):
    """Any in-place edit or replacement of an array the API handed out (the reader's, a chunk's, a
    model's), handed back to training, scoring, the certificate or save: a result or a PegasosError,
    never another exception or a crash."""
    import subprocess
    import sys

    path = tmp_path / "d.svm"
    path.write_text("".join(f"{'+1' if i % 2 else '-1'} {1 + i % 5}:1 {6 + i % 3}:0.5 9:{i / 10}\n"
                            for i in range(40)))
    r = subprocess.run([sys.executable, "-c", ARRAY_FUZZ, str(path), str(ARRAY_EXAMPLES)], capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0 and "Traceback" not in r.stderr, f"exit {r.returncode}\n{r.stderr[-4000:]}"
    assert r.stdout.split() == ["ran", str(ARRAY_EXAMPLES)]
