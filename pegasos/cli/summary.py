"""train's output: the one-line summary, its JSON record and --explain."""


import click

from .common import echo_json
from .progress import bar_update, close_bar


def explain_plan(options, m, in_memory=True, resumed=False, streamed=False, data=None, as_json=False):
    """train --explain: the solver plan (:func:`pegasos.solver.plan`) on one line of stdout (``as_json``: a
    JSON object), no training.  ``data`` (read) is refused first as train refuses it: no examples, or one
    class (:meth:`pegasos.labels.BinaryLabels.from_data`'s errors)."""
    from ..solver import Problem, plan

    if data is not None and (data.n_examples == 0 or (options.task == "binary" and options.multiclass is None
                                                      and len(data.distinct_labels) < 2)):
        from ..labels import BinaryLabels

        BinaryLabels.from_data(data, allow_one_class=options.allow_one_class)
    chosen = plan(Problem(m=0 if m is None else int(m), in_memory=in_memory, streamed=streamed, resumed=resumed),
                  options)
    if as_json:
        echo_json({"examples": m, "lambda": options.lam, "solver": chosen.solver.value, "asked": chosen.asked,
                   "reason": chosen.reason, "detail": chosen.detail, "why": chosen.why, "how": chosen.how(options)})
        return
    click.echo(("" if m is None else f"m={m} lambda={options.lam!r} | ") + chosen.describe(options))


def _solver_part(info, plan):
    """The summary's solver and why (the plan's reason with the settings behind it, as given), and what it
    ran: T and k for Pegasos, lambda alone for a model of the dual alone (:func:`pegasos.outcome.dual_only`)."""
    from ..outcome import KEPT_DUAL, dual_only

    why = info["solver_reason"]
    if plan is not None:
        why = plan.why + ("" if plan.solver.value == info["solver"] else KEPT_DUAL)
    run = f"lambda={float(info['lambda'])!r}"
    if dual_only(info):
        start = " (the dual passes from the model's weights)" if "warm_start" in info else ""
        return f"solver dual ({why}) | {run}{start}"
    return (f"solver {info['solver']} ({why}) | T={info['iterations']}{_no_iteration(info)} "
            f"k={int(info['batch_size'])} {run}")


def _no_iteration(info):
    """The summary's words after T=0: where the dual passes started (w = 0, or a resumed model's weights)."""
    if info.get("iterations") != "0":
        return ""
    if "dual_updates" in info:
        return " (no Pegasos iteration: the kernel dual solver from alpha = 0)"
    start = "the model's weights" if "warm_start" in info else "w = 0"
    return f" (no Pegasos iteration: the dual passes from {start})"


def train_summary(result, d, options, t_read, t_train, cache_note, no_objective, progress, model, seen=None):
    """train's one-line summary: data, run, timings, objective, cache, model file; the dual finish's part
    with its certified gap.  The objective computed is left in ``seen`` (a dict), for the notes."""
    parts = [f"trained on {d.path}: m={d.n_examples} n={d.n_features} nnz={d.nnz}",
             _solver_part(result.info, result.plan) if "solver" in result.info else
             f"T={result.info['iterations']}{_no_iteration(result.info)} "
             f"k={int(result.info['batch_size'])} lambda={float(result.info['lambda'])!r}"]
    if options.shuffle_buffer is not None:
        if "shuffle_buffer" in result.info:     # (Pegasos: the streamed dual has no buffer)
            parts.append(f"shuffle buffer {options.shuffle_buffer}")
        parts.append(f"scan {t_read:.2f} s, train {t_train:.2f} s")
    else:
        if getattr(result, "kind", "linear") == "kernel":
            from ..errors import counted

            parts.append(f"kernel {result.kernel} gamma={result.gamma!r}: "
                         f"{counted(result.n_support, 'support vector')}")
        if getattr(result, "task", None) == "multiclass":
            parts.append(f"{result.method}, {result.n_classes} classes")
        parts.append(f"read {t_read:.2f} s, train {t_train:.2f} s")
    if not no_objective:
        from ..scoring import objective, objective_file

        # the kernel dual solver's model has it from the solver's margins, a streamed one from its last pass
        obj = getattr(result, "train_objective", None)
        if obj is None and options.shuffle_buffer is not None:
            bar = progress.reading(d.path)
            try:
                obj = objective_file(result, d.path, progress=bar_update(bar))
            finally:
                close_bar(bar)
        elif obj is None:
            obj = objective(result, d.chunk, d.y, qid=d.chunk.qid)
        parts.append(_objective_summary(obj))
        if seen is not None:
            seen["objective"] = float(obj["objective"])
    if "stream_reads" in result.info:           # a streamed run: its reads, and the certificate of its last
        part = f"read {result.info['stream_reads']}"
        if "certified_gap" in result.info and result.info.get("finish") != "dual":
            gap = float(result.info["certified_gap"])
            part += (f": certified within {100 * gap:.3g}% of the optimum" if gap <= options.tol
                     else f": not certified within {100 * options.tol:.3g}% (its gap: {100 * gap:.3g}%)")
        parts.append(part)
    if "dual_updates" in result.info:           # the kernel dual solver (pegasos.kernel.fit_kernel_dual)
        gap = max(0.0, float(result.info["certified_gap"]))
        updates = int(result.info["dual_updates"])
        proof = (f"certified within {100 * gap:.3g}% of the optimum" if gap <= options.tol
                 else f"not certified within {100 * options.tol:.3g}% (its gap: {100 * gap:.3g}%)")
        parts.append(f"dual solver: {updates} update{'' if updates == 1 else 's'}, {proof}")
    elif result.info.get("finish") == "dual":
        from ..outcome import dual_only

        passes = [int(p) for p in result.info["finish_passes"].split(",")]
        most = max(passes)
        gap = max(0.0, float(result.info["certified_gap"]))
        within = options.tol if options.tol_gap is None else options.tol_gap
        if gap <= within:
            proof = f"certified within {100 * gap:.3g}% of the optimum"
        elif options.finish_passes:         # the passes asked for: a proof, though not within --tol
            proof = f"not certified within {100 * within:.3g}% (its gap after the passes asked for: {100 * gap:.3g}%)"
        else:
            proof = f"not certified within {100 * within:.3g}% (its gap: {100 * gap:.3g}%)"
        solver = "dual solver" if dual_only(result.info) else "dual finish"
        parts.append(f"{solver}: {most} pass{'' if most == 1 else 'es'}"
                     f"{' (the most of any class)' if len(passes) > 1 else ''}, {proof}")
    if "best_iteration" in result.info:
        parts.append(f"{'stopped early' if result.info.get('stop') == 'early stop' else 'ran all T'}: best "
                     f"validation {result.info['early_stop_metric']} {float(result.info['best_validation']):.6g} "
                     f"at iteration {result.info['best_iteration']}")
    if cache_note:
        parts.append(cache_note)
    parts.append(f"model {model}")
    return " | ".join(p for p in parts if p)


def _objective_summary(obj):
    """The summary's "objective F (loss L, train error E)" part from a scoring dict."""
    details = []
    if obj.get("mean_loss") is not None:
        details.append(f"{obj.get('loss', 'hinge')} {obj['mean_loss']:.6g}")
    if obj.get("error_rate") is not None:
        details.append(f"train error {obj['error_rate']:.4f}")
    return f"objective {obj['objective']:.6g} ({', '.join(details)})"


def options_record(options):
    """The training options as given, JSON-ready {field: value} (class weights keyed by label text, the
    set of the settings given as a sorted list); with --init the model's header holds those it ran with."""
    import dataclasses

    out = {}
    for f in dataclasses.fields(options):
        if f.name == "spelling" or not f.init:
            continue
        v = getattr(options, f.name)
        if isinstance(v, dict):
            v = {repr(k): w for k, w in v.items()}
        elif isinstance(v, (set, frozenset)):
            v = sorted(v)
        elif isinstance(v, tuple):
            v = list(v)
        out[f.name] = v
    return out


def train_record(result, d, options, t_read, t_train, cache_note, no_objective, model):
    """train --json: every number of the summary, the model header and the options."""
    record = {"data": d.path, "examples": d.n_examples, "features": d.n_features, "nnz": d.nnz,
              "iterations": int(result.info.get("iterations", 0)),       # (none in the header: the dual alone)
              "lambda": float(result.info["lambda"]), "read_seconds": t_read, "train_seconds": t_train,
              "task": getattr(result, "task", "binary"), "model": model}
    if "batch_size" in result.info:
        record["batch_size"] = int(result.info["batch_size"])
    if getattr(result, "kind", "linear") == "kernel":
        record.update(kernel=result.kernel, gamma=result.gamma, support_vectors=result.n_support)
    if getattr(result, "task", None) == "multiclass":
        record.update(multiclass=result.method, classes=result.n_classes)
    if options.shuffle_buffer is not None:
        record["shuffle_buffer"] = options.shuffle_buffer
    if cache_note:
        record["cache"] = cache_note
    if not no_objective:
        from ..scoring import objective, objective_file

        record["objective"] = (getattr(result, "train_objective", None)
                               or (objective_file(result, d.path) if options.shuffle_buffer is not None
                                   else objective(result, d.chunk, d.y, qid=d.chunk.qid)))
    record["header"] = dict(result.info)
    record["options"] = options_record(options)
    return record


def certify(result, d, jobs=1):
    """The certificate of pegasos.certificate.duality_gap of the model on the training data (its dual
    bound ``dual`` <= f*, its ``rel_gap``), or {"error": why there is none}."""
    from ..certificate import duality_gap
    from ..errors import ParameterError
    from ..linear import second_processor

    try:
        # its default passes: until the gap stops shrinking; the helper thread as the run's --jobs allows
        return duality_gap(result, d.chunk, d.y, helper=second_processor(jobs))
    except ParameterError as e:
        return {"error": str(e)}

