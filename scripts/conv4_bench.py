#!/usr/bin/env python3
"""Training-step speed of the Go networks against PyTorch CPU, side by side.

Times one training step (forward, loss sum(emb**2), backward, Adam) of the
same networks on the same batches in PyTorch (2 threads) and in Go
(`go test ./model -bench`), back to back in one run, and prints wall
min/median and CPU time per step with the Go/PyTorch ratios:

  conv4 1x28x28 b100  Conv-4 (4 x [conv3x3 64, BN (training mode), ReLU,
                      maxpool2]), batch 100 of 1x28x28 (Omniglot episode:
                      5-way 5-shot + 15 queries per class), float32
  conv4 3x84x84 b100  the same on 3x84x84 (miniImageNet)
  cnn 1x28x28 b50     the paper's single-layer CNN (conv3x3 32 + bias, ReLU,
                      maxpool2, linear 6272 -> 400), batch 50, float32

Usage (from the repository root; Debian's python3-torch):
  /usr/bin/python3 scripts/conv4_bench.py [--steps 20] [--count 5] [--only conv4]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import torch
import torch.nn as nn

CASES = [
    # name, Go benchmark, kind, input shape, batch
    ("conv4 1x28x28 b100", "BenchmarkTrainStepConv4/1x28x28-b100", "conv4", (1, 28, 28), 100),
    ("conv4 3x84x84 b100", "BenchmarkTrainStepConv4/3x84x84-b100", "conv4", (3, 84, 84), 100),
    ("cnn 1x28x28 b50", "BenchmarkTrainStep/float32", "cnn", (1, 28, 28), 50),
]


def build(kind, shape):
    if kind == "conv4":
        def block(i, o):
            # No convolution bias: batch normalisation cancels it (as in Go).
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o),
                                 nn.ReLU(), nn.MaxPool2d(2))
        return nn.Sequential(block(shape[0], 64), block(64, 64), block(64, 64), block(64, 64),
                             nn.Flatten())
    c, h, w = shape
    return nn.Sequential(nn.Conv2d(c, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(32 * (h // 2) * (w // 2), 400))


def torch_step_times(kind, shape, batch, steps):
    torch.manual_seed(1)
    net = build(kind, shape).train()
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    x = torch.rand(batch, *shape)

    def step():
        opt.zero_grad(set_to_none=False)
        e = net(x)
        (e * e).sum().backward()
        opt.step()

    for _ in range(2):  # warm-up
        step()
    walls, cpus = [], []
    for _ in range(steps):
        w0, c0 = time.perf_counter(), time.process_time()
        step()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return walls, cpus


BENCH_RE = re.compile(r"^(Benchmark\S+?)-\d+\s+\d+\s+([\d.]+) ns/op\s+([\d.]+) cpu-ms/op")


def go_step_times(count, only):
    pattern = "TrainStep(Conv4)?$" if only is None else ("TrainStepConv4$" if only == "conv4" else "TrainStep$")
    cmd = ["go", "test", "./model", "-run", "^$", "-bench", pattern, "-count", str(count), "-benchtime", "5x"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        m = BENCH_RE.match(line)
        if m:
            res.setdefault(m.group(1), []).append((float(m.group(2)) / 1e6, float(m.group(3))))
    return " ".join(cmd), res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=20, help="timed PyTorch steps per case")
    ap.add_argument("--count", type=int, default=5, help="go test -count (each run: 5 steps)")
    ap.add_argument("--only", choices=["conv4", "cnn"], help="run one kind only")
    a = ap.parse_args()
    torch.set_num_threads(2)
    cases = [c for c in CASES if a.only is None or c[2] == a.only]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; load average {os.getloadavg()}")
    tres = {}
    for name, _, kind, shape, batch in cases:
        tres[name] = torch_step_times(kind, shape, batch, a.steps)
        print(f"  torch {name}: done", file=sys.stderr)
    cmd, gres = go_step_times(a.count, a.only)
    print(f"go: {cmd}; load average {os.getloadavg()}")
    print()
    print("| step | PyTorch wall min / median (CPU) | Go wall min / median (CPU) | Go / PyTorch: min wall, CPU |")
    print("|---|---|---|---|")
    for name, bench, *_ in cases:
        tw, tc = tres[name]
        g = gres.get(bench)
        if not g:
            print(f"| {name} | – | no Go result for {bench} | – |")
            continue
        gw = [w for w, _ in g]
        gc = [c for _, c in g]
        tcm = statistics.median(tc) * 1e3
        gcm = statistics.median(gc)
        print(f"| {name} | {min(tw)*1e3:.1f} / {statistics.median(tw)*1e3:.1f} ms ({tcm:.1f} ms) "
              f"| {min(gw):.1f} / {statistics.median(gw):.1f} ms ({gcm:.1f} ms) "
              f"| {min(gw)/(min(tw)*1e3):.2f}×, {gcm/tcm:.2f}× |")


if __name__ == "__main__":
    main()
