"""Start-up: `import pegasos` and every `--help` import no NumPy; a binary linear `pegasos train` on one
plain file, and `predict` with its model, import only what they use: not the shard engine, the kernel
and multiclass trainers or the trace module (each imported when a run needs it), nor scipy; a
multiclass model still loads."""

import json
import os
import subprocess
import sys

import numpy as np

NOT_FOR_A_BINARY_RUN = ("pegasos.engine_dask", "pegasos.kernel", "pegasos.multiclass", "pegasos.trace", "scipy")


def run_and_list_modules(tmp_path, commands):
    code = ("import sys\nfrom pegasos.cli import main\n"
            f"for argv in {commands!r}:\n"
            "    try:\n        main(argv)\n    except SystemExit as e:\n        assert not e.code, e.code\n"
            "print(' '.join(sorted(sys.modules)))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    return set(r.stdout.split())


def test_import_and_help_import_no_numpy():
    """`import pegasos` and `pegasos --help` (and each command's) print and exit without NumPy, SciPy or
    the compiled core: their start-up is the interpreter's and click's."""
    from pegasos.cli import main

    commands = [[]] + [[name] for name in main.commands]
    code = ("import json, sys\nimport pegasos\nseen = [sorted(sys.modules)]\nfrom pegasos.cli import main\n"
            f"for argv in {commands!r}:\n"
            "    try:\n        main(argv + ['--help'])\n    except SystemExit as e:\n        assert not e.code, e.code\n"
            "    seen.append(sorted(sys.modules))\n"
            "print(json.dumps(seen))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    seen = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(seen) == len(commands) + 1 and "pegasos.cli.train" in seen[-1]      # the check sees the imports
    for argv, modules in zip([None] + commands, seen):
        heavy = [m for m in modules if m.split(".")[0] in ("numpy", "scipy") or m.startswith("pegasos._")]
        assert not heavy, (argv, heavy)


def write_data(path, n_classes):
    rng = np.random.default_rng(0)
    lines = []
    for i in range(200):
        cols = np.sort(rng.choice(30, size=4, replace=False)) + 1
        label = ("+1" if i % 2 else "-1") if n_classes == 2 else str(i % n_classes + 1)
        lines.append(label + "".join(f" {c}:{rng.normal():.3f}" for c in cols))
    path.write_text("\n".join(lines) + "\n")


def test_binary_train_and_predict_import_only_what_they_use(tmp_path):
    write_data(tmp_path / "d.svm", 2)
    modules = run_and_list_modules(tmp_path, [["train", "-q", "-l", "1e-2", "d.svm", "d.model"],
                                              ["predict", "-q", "d.svm", "d.model", "out"]])
    assert "pegasos.linear" in modules and "pegasos._core" in modules       # the check sees the imports
    loaded = sorted(m for m in modules if m.split(".")[0] == "scipy" or m in NOT_FOR_A_BINARY_RUN)
    assert not loaded, loaded
    assert len((tmp_path / "out").read_text().split()) == 200


def test_multiclass_train_and_predict_still_work(tmp_path):
    write_data(tmp_path / "d.svm", 3)
    modules = run_and_list_modules(tmp_path, [["train", "-q", "-l", "1e-2", "d.svm", "d.model"],
                                              ["predict", "-q", "d.svm", "d.model", "out"]])
    assert "pegasos.multiclass" in modules
    rows = [line.split() for line in (tmp_path / "out").read_text().splitlines()]
    assert len(rows) == 200 and all(len(r) == 3 for r in rows)


def test_the_command_starts_no_blas_thread_pool():
    """NumPy's BLAS starts a pool of threads at import, which pegasos never uses and which spun on the
    processor --jobs gave the run (--jobs 1 left a second thread): the command sets OPENBLAS_NUM_THREADS=1
    before NumPy is imported, unless the user set it."""
    code = ("import os, pegasos.cli, numpy, threading\n"
            "print(os.environ['OPENBLAS_NUM_THREADS'], len(os.listdir('/proc/self/task')))\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    value, tasks = out.stdout.split()
    assert value == "1" and int(tasks) == 1
    env["OPENBLAS_NUM_THREADS"] = "2"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.split()[0] == "2"
