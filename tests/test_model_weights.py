"""The compiled parse of a model file's weight block (pegasos._svmlight.parse_weight_block,
pegasos.model.read_weights): exact values, every line checked, bad lines named."""

import struct

import numpy as np
import pytest

import pegasos
from pegasos import _svmlight
from pegasos.errors import ModelFormatError

EDGE_VALUES = [5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, -2.225073858507201e-308,
               1e-310, -0.0, 0.0, 1e308, -1e308, 1.7976931348623157e308, -1.7976931348623157e308, 0.1, 1 / 3,
               1.0, -1.0, 123456789012345680.0, 9007199254740993.0, 2.0 ** -1074 * 3, 1e22, 1e23, 1e-22, 1e-23]


def _parse(lines, n, base=1, count=None):
    text = ("\n".join(lines) + "\n").encode()
    return _svmlight.parse_weight_block(text, len(lines) if count is None else count, n, base)


def _random_doubles(k, seed):
    """Finite doubles drawn uniformly over bit patterns (every exponent, subnormals included)."""
    bits = np.random.default_rng(seed).integers(0, 2 ** 64, size=4 * k, dtype=np.uint64)
    v = bits.view(np.float64)
    return v[np.isfinite(v)][:k]


def test_repr_round_trips_bit_for_bit():
    values = np.concatenate([_random_doubles(20000, 1), EDGE_VALUES])
    lines = [f"{j + 1}:{float(v)!r}" for j, v in enumerate(values.tolist())]
    cols, got, code, done = _parse(lines, len(values))
    assert code == _svmlight.WEIGHT_OK and done == len(values)
    np.testing.assert_array_equal(cols, np.arange(len(values)))
    assert got.view(np.uint64).tolist() == values.view(np.uint64).tolist()     # -0.0 keeps its sign


@pytest.mark.parametrize("text", ["1e-400", "-1e-400", "2.4703282292062328e-324", "2.4703282292062327e-324",
                                  "0.1000000000000000055511151231257827021181583404541015625",
                                  "1.00000000000000011102230246251565404236316680908203125",
                                  "1." + "0" * 200 + "1", "0." + "0" * 330 + "5", ".5", "5.", "+3", "7E+2",
                                  "1.7976931348623158e308", "000012.5e-0001"])
def test_other_decimal_texts_read_as_float_reads_them(text):
    cols, got, code, _ = _parse([f"4:{text}"], 10)
    assert code == _svmlight.WEIGHT_OK
    assert struct.pack("<d", got[0]) == struct.pack("<d", float(text))


@pytest.mark.parametrize("value, code", [
    ("nan", "NOT_FINITE"), ("-NaN", "NOT_FINITE"), ("inf", "NOT_FINITE"), ("-Infinity", "NOT_FINITE"),
    ("1e309", "NOT_FINITE"), ("-1.8e308", "NOT_FINITE"), ("1" + "0" * 400, "NOT_FINITE"),
    ("0x1p3", "NOT_NUMBER"), ("abc", "NOT_NUMBER"), ("", "NOT_NUMBER"), ("1e", "NOT_NUMBER"), ("1_0", "NOT_NUMBER"),
    ("1:2", "NOT_NUMBER"), ("2 3:4", "NOT_NUMBER"), (".", "NOT_NUMBER"), ("--1", "NOT_NUMBER"),
])
def test_bad_values_are_refused_at_their_line(value, code):
    cols, got, c, line = _parse(["1:0.5", "2:0.25", f"3:{value}", "4:1.0"], 10)
    assert (c, line) == (getattr(_svmlight, "WEIGHT_" + code), 2)


@pytest.mark.parametrize("lines, base, code, line", [
    (["1:1.0", "3:1.0", "2:1.0"], 1, "NOT_INCREASING", 2),
    (["1:1.0", "1:2.0"], 1, "NOT_INCREASING", 1),
    (["0:1.0"], 1, "OUTSIDE", 0),
    (["0:1.0", "10:1.0"], 0, "OUTSIDE", 1),
    (["11:1.0"], 1, "OUTSIDE", 0),
    (["99999999999999999999999:1.0"], 1, "OUTSIDE", 0),
    ([":4"], 1, "NOT_INDEX_VALUE", 0),
    (["-1:4"], 0, "NOT_INDEX_VALUE", 0),
    (["1.5:4"], 1, "NOT_INDEX_VALUE", 0),
    (["1:1", "17"], 1, "NOT_INDEX_VALUE", 1),
    (["1:1", ""], 1, "NOT_INDEX_VALUE", 1),
    (["1:1", "end"], 1, "END", 1),
])
def test_bad_lines_are_refused_at_their_line(lines, base, code, line):
    _, _, c, j = _parse(lines, 10, base)
    assert (c, j) == (getattr(_svmlight, "WEIGHT_" + code), line)


def test_blanks_around_a_line_and_crlf_are_accepted():
    cols, got, code, _ = _parse(["  2:0.5\r", "\t7:-1.25 "], 10)
    assert code == _svmlight.WEIGHT_OK and cols.tolist() == [1, 6] and got.tolist() == [0.5, -1.25]


def test_nothing_past_the_block_is_read():
    text = b"1:1.0\n2:2.0\ngarbage that is not a weight"
    cols, got, code, _ = _svmlight.parse_weight_block(text, 2, 10, 1)
    assert code == _svmlight.WEIGHT_OK and got.tolist() == [1.0, 2.0]
    # a view ending inside the buffer: the parse stops at its end, not at the next newline
    view = memoryview(b"1:1.0\n2:2.5\n3:4.0\n")[:11]
    cols, got, code, done = _svmlight.parse_weight_block(view, 2, 10, 1)
    assert code == _svmlight.WEIGHT_OK and got.tolist() == [1.0, 2.5]
    _, _, code, done = _svmlight.parse_weight_block(b"1:1.0\n", 2, 10, 1)
    assert (code, done) == (_svmlight.WEIGHT_SHORT, 1)


def _model_file(tmp_path, weights_lines, n=10):
    X = np.eye(n)
    model = pegasos.train(X, np.where(np.arange(n) % 2, 1.0, -1.0), lam=0.1, iterations=20)
    model.save(tmp_path / "m")
    text = (tmp_path / "m").read_text().splitlines()
    start = next(i for i, ln in enumerate(text) if ln.startswith("weights "))
    end = text.index("end")
    text[start:end] = [f"weights {len(weights_lines)}"] + weights_lines
    (tmp_path / "bad").write_text("\n".join(text) + "\n")
    return tmp_path / "bad", start + 2     # the file line of the first weight line


@pytest.mark.parametrize("bad, message", [
    ("3:nan", "weight 'nan' is not finite"), ("3:1e999", "weight '1e999' is not finite"),
    ("3:-inf", "weight '-inf' is not finite"), ("3:abc", "weight 'abc' is not a number"),
    ("1:5", "weight index 1 is not increasing"), ("11:5", "weight index 11 is outside 1..10"),
    ("3 5", "weight line '3 5' is not index:value"),
])
def test_load_model_names_the_file_and_line(tmp_path, bad, message):
    path, first = _model_file(tmp_path, ["1:0.5", "2:-0.5", bad, "9:1.0"])
    with pytest.raises(ModelFormatError) as e:
        pegasos.load_model(str(path))
    assert message in str(e.value) and str(path) in str(e.value) and f"line {first + 2}" in str(e.value)


def test_load_model_keeps_the_exact_weights(tmp_path):
    # the parser keeps every double exactly (test_edge_values above); a model whose squared norm
    # overflows float64 (weights beyond about 1e154) is refused at load, so these stay below
    values = np.concatenate([_random_doubles(2000, 5), [v for v in EDGE_VALUES if v != 0 and abs(v) < 1e150]])
    values = values[np.abs(values) < 1e150]
    lines = [f"{j + 1}:{float(v)!r}" for j, v in enumerate(values.tolist())]
    path, _ = _model_file(tmp_path, lines, n=len(values))
    model = pegasos.load_model(str(path))
    assert model.w.view(np.uint64).tolist() == values.view(np.uint64).tolist()
    model.save(tmp_path / "again")
    assert (tmp_path / "again").read_text() == path.read_text()


def test_truncated_block_is_named(tmp_path):
    path, _ = _model_file(tmp_path, ["1:0.5", "2:-0.5"])
    text = path.read_text().replace("weights 2", "weights 3")
    path.write_text(text)
    with pytest.raises(ModelFormatError, match="expected 3 weight lines"):
        pegasos.load_model(str(path))


def _decimal_texts(seed, k):
    """Decimal strings that stress exact conversion: random 1..19-digit significands with
    exponents around the exact range, and the midpoints of adjacent doubles to 17..19 digits."""
    rng = np.random.default_rng(seed)
    texts = []
    for digits, exp in zip(rng.integers(1, 20, size=k).tolist(), rng.integers(-40, 40, size=k).tolist()):
        mant = "".join(rng.choice(list("0123456789"), size=digits))
        texts.append(f"{'-' if exp % 3 == 0 else ''}{mant[:1]}.{mant[1:]}e{exp}" if exp % 2 else f"{mant}e{exp}")
    for v in _random_doubles(k, seed + 1).tolist():
        v = abs(v) % 1e20 + 1e-20
        lo, hi = v, float(np.nextafter(v, np.inf))
        from decimal import Decimal

        m = (Decimal(lo) + Decimal(hi)) / 2
        for p in (17, 18, 19):
            texts.append(f"{m:.{p - 1}e}")
    return texts


def test_exact_conversion_matches_float_on_hard_decimals():
    texts = _decimal_texts(11, 20000)
    lines = [f"{j + 1}:{t}" for j, t in enumerate(texts)]
    cols, got, code, done = _parse(lines, len(texts))
    assert code == _svmlight.WEIGHT_OK, (code, texts[done])
    want = np.array([float(t) for t in texts])
    bad = np.flatnonzero(got.view(np.uint64) != want.view(np.uint64))
    assert bad.size == 0, [texts[i] for i in bad[:5]]


# ------------------------------------------------------------ header fields --

def _binary_model_text(tmp_path, **kw):
    X = np.eye(10)
    model = pegasos.train(X, np.where(np.arange(10) % 2, 1.0, -1.0), lam=0.1, iterations=20,
                          class_weight={1.0: 2.0, -1.0: 0.5}, **kw)
    model.save(tmp_path / "m")
    return (tmp_path / "m").read_text()


def _line_of(text, key):
    return next(i + 1 for i, ln in enumerate(text.splitlines()) if ln.split(" ", 1)[0] == key)


@pytest.mark.parametrize("key, value, message", [
    ("lambda", "-3", "lambda must be positive"), ("lambda", "0", "lambda must be positive"),
    ("lambda", "nan", "not a finite number"), ("iterations", "-20", "negative"),
    ("class_weights", "-1:-2.0,1:0.5", "gives label -1 the weight -2.0, which is negative"),
    ("class_weights", "-1:nan,1:0.5", "not a finite number"), ("class_weights", "-1:inf,1:0.5", "not a finite"),
    ("class_weights", "-1,1:0.5", "is not LABEL:WEIGHT"),
    ("bias", "1e999", "not a finite number"), ("seed", "-1", "negative"), ("batch_size", "-1", "negative"),
    ("n_features", "ten", "bad n_features"), ("index_base", "2", "index_base must be 0 or 1"),
    ("bias_mode", "maybe", "unknown bias_mode"), ("label_positive", "-5", "must be smaller than"),
    ("loss", "cubic", "unsupported model kind"), ("train_examples", "-300", "negative"),
])
def test_every_header_field_error_names_its_line(tmp_path, key, value, message):
    text = _binary_model_text(tmp_path)
    lines = text.splitlines()
    line = _line_of(text, key)
    lines[line - 1] = f"{key} {value}"
    (tmp_path / "bad").write_text("\n".join(lines) + "\n")
    with pytest.raises(ModelFormatError) as e:
        pegasos.load_model(str(tmp_path / "bad"))
    assert message in str(e.value) and f"{tmp_path / 'bad'}, line {line}:" in str(e.value), str(e.value)


def test_negative_labels_and_bias_stay_accepted(tmp_path):
    text = _binary_model_text(tmp_path, bias="unregularized")
    model = pegasos.load_model(str(tmp_path / "m"))
    assert model.labels.negative == -1.0 and "class_weights -1:0.5,1:2.0" in text
