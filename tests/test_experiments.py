"""The quick run of experiments/run.py (the paper's Sec. 7), checked on its results.

The driver runs once per pytest run (``--quick`` into a temporary directory,
a few minutes on two cores); the assertions are the paper's findings, which
would fail if the algorithm were wrong, not only that files exist:

- Fig. 6: at fixed T the suboptimality grows like 1/lambda (the fitted
  log-log slope lies in [-1.3, -0.7]);
- Fig. 7: up to k = 256 the suboptimality depends on kT, not on k (within a
  factor 2 of k = 1's);
- Fig. 8: a new permutation each epoch ends below i.i.d. sampling on a9a;
- Fig. 9: Norma is above Pegasos at the largest T;
- every suboptimality is >= 0 against the certified f* (a wrong objective or
  optimum shows here), and the report holds each section and its figure.

Without the shared data the tests skip with one reason (PEGASOS_REQUIRE_SHARED=1
makes that a failure, as in CI).  PEGASOS_EXPERIMENTS_RESULTS=DIR checks the
results of an earlier quick run in DIR instead of running the driver.
The last test runs the driver without any data (an empty PEGASOS_DATA) and
needs no shared files: each skipped experiment must say which file is missing.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, data_file

sys.path.insert(0, str(ROOT / "experiments"))
import report  # noqa: E402


@pytest.fixture(scope="session")
def quick(tmp_path_factory):
    data_file("a9a/a9a")            # skips (or fails with PEGASOS_REQUIRE_SHARED) without the shared data
    given = os.environ.get("PEGASOS_EXPERIMENTS_RESULTS")
    if given:                       # the results of an earlier `experiments/run.py --quick --out DIR`
        out = Path(given)
        assert (out / "REPORT.md").exists(), f"PEGASOS_EXPERIMENTS_RESULTS={given} holds no REPORT.md"
        return out, report.analyse(out)
    out = tmp_path_factory.mktemp("experiments")
    done = subprocess.run([sys.executable, str(ROOT / "experiments" / "run.py"), "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out, report.analyse(out)


def test_suboptimality_grows_like_one_over_lambda(quick):
    _, res = quick
    slopes = res["lambda"]["slopes"]
    assert sorted(slopes) == [1000, 4000, 16000]
    for T, s in slopes.items():
        assert -1.3 <= s["slope"] <= -0.7, (T, s)


def test_mini_batches_depend_on_kT_up_to_256(quick):
    _, res = quick
    ratios = res["batch"]["ratios"]
    assert len(ratios) == 3
    for kT, r in ratios.items():
        for k, ratio in r.items():
            if k <= 256:
                assert 0.5 <= ratio <= 2.0, (kT, k, ratio)
        assert r[4096] > r[1]          # far beyond a few hundred the large batch is worse (the test can fail)


def test_permutation_ends_below_iid_on_a9a(quick):
    _, res = quick
    finals = res["sampling"]["finals"]["a9a"]
    assert finals["permutation"]["median"] < finals["uniform"]["median"]
    assert finals["shuffle-once"]["median"] < finals["uniform"]["median"]


def test_norma_is_above_pegasos_at_the_largest_T(quick):
    _, res = quick
    norma = res["rules"]["norma"]
    T = max(norma)
    assert T >= 10**5
    assert norma[T]["norma"]["subopt"] > 2 * norma[T]["pegasos"]["subopt"]


def test_suboptimality_is_never_below_the_certified_optimum(quick):
    _, res = quick
    seen = 0
    for name in ("linear", "lambda", "batch", "sampling", "rules"):
        for r in res[name]["records"]:
            rows = r.get("rows") or ([r] if "subopt" in r else [])
            for row in rows:
                assert row["subopt"] >= -1e-9, (name, r.get("dataset"), row)
                seen += 1
    assert seen > 1000


def test_table1_has_the_present_sets_and_the_peers(quick):
    _, res = quick
    table = res["linear"]["table"]
    assert {"a9a", "w8a", "ijcnn1", "sector", "synthetic"} <= set(table)
    a9a = table["a9a"]
    assert a9a["eps"] is not None and 0.14 < a9a["err_star"] < 0.16
    assert {"LIBLINEAR (dual CD)", "scikit-learn SGDClassifier", "Pegasos (paper setting)"} <= set(a9a["times"])
    assert any("astro-ph" in why for why in res["linear"]["meta"]["skipped"]) or "astro-ph" in table


def test_report_has_every_section_and_figure(quick):
    out, _ = quick
    text = (out / "REPORT.md").read_text()
    for heading in ("## Table 1 and Fig. 4", "## Table 2 and Fig. 5", "## Fig. 6", "## Fig. 7", "## Fig. 8",
                    "## Fig. 9", "## Beyond the paper"):
        assert heading in text, heading
    assert "QUICK run" in text and "- not run" not in text
    for fig in ("fig4_linear", "fig5_kernel", "fig6_lambda", "fig7_batch", "fig8_sampling", "fig9_rules",
                "beyond_averaging_offset"):
        assert f"]({fig}.png)" in text
        for ext in ("png", "svg"):
            assert (out / f"{fig}.{ext}").stat().st_size > 10_000


def test_a_skipped_experiment_says_which_file_is_missing(tmp_path):
    """Without the data, every skipped experiment names the missing file and PEGASOS_DATA, on the console
    (not 'done in 0.0 s') and in the report (not a bare 'skipped'); runs without the shared data."""
    nowhere = tmp_path / "no-data"
    env = dict(os.environ, PEGASOS_DATA=str(nowhere))
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, str(ROOT / "experiments" / "run.py"), "--quick", "--out", str(out),
                           "--only", "kernel", "lambda", "beyond"], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    console = done.stdout
    assert "done in" not in console, console
    under = f"is absent under PEGASOS_DATA={nowhere}"
    for name, missing in (("kernel", "Adult: a9a/a9a"), ("lambda", "a9a: a9a/a9a"), ("beyond", "a9a: a9a/a9a")):
        line = next((x for x in console.splitlines() if f"] {name}: skipped" in x), None)
        assert line is not None and f"{missing} {under}" in line, (name, console)
    assert f"Reuters: reuters/reuters.trn.bz2 {under}" in console
    text = (out / "REPORT.md").read_text()
    sections = {s.split("\n", 1)[0]: s for s in text.split("\n## ")[1:]}
    beyond = next(s for h, s in sections.items() if h.startswith("Beyond the paper"))
    assert f"- skipped: a9a: a9a/a9a {under}" in beyond, beyond
    fig6 = next(s for h, s in sections.items() if h.startswith("Fig. 6"))
    assert f"- skipped: a9a: a9a/a9a {under}" in fig6, fig6
    kernel = next(s for h, s in sections.items() if h.startswith("Table 2"))
    assert f"- skipped: Adult: a9a/a9a {under}" in kernel and "reuters.trn.bz2" in kernel, kernel
