"""What a liblinear-official user's script does, as one process: read, train, save.

    python benchmarks/liblinear_user.py {svm_read_problem|load_svmlight_file} DATA "OPTIONS" MODEL

Reads DATA with LIBLINEAR's own reader (``svm_read_problem(return_scipy=True)``,
the faster of its two outputs) or with scikit-learn's ``load_svmlight_file``,
trains with LIBLINEAR's option string (e.g. ``-s 3 -c 0.01 -B -1 -q -e 1``) and
writes the model with ``save_model``.  bench_synthetic.py times the whole
process from outside, like ``pegasos train``.
"""

import sys


def main():
    """Entry point."""
    reader, path, options, model_path = sys.argv[1:5]
    from liblinear.liblinearutil import save_model, svm_read_problem, train

    if reader == "svm_read_problem":
        y, X = svm_read_problem(path, return_scipy=True)
    elif reader == "load_svmlight_file":
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(path)
    else:
        raise SystemExit(f"unknown reader {reader!r}")
    model = train(y, X, options)
    save_model(model_path, model)


if __name__ == "__main__":
    main()
