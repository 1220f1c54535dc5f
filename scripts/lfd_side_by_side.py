#!/usr/bin/python3
"""Side by side: drknn-lfd against HiGHS on the same LFD instances, in one run.

Export the benchmark instances first (Go writes them, so both sides solve the
same numbers), then run this script from the repository root:

    go test ./optlayer -run TestExportBenchInstances -args -export /tmp/lfd
    /usr/bin/python3 scripts/lfd_side_by_side.py /tmp/lfd [--sizes 50,200] [--rounds 5]

For every lfd_<n>_<M>.txt the script writes the costs, labels and a seeded
upstream gradient as .npy files, builds cmd/drknn-lfd (or takes --bin) and
then runs, interleaved, --rounds rounds of

  in-process  drknn-lfd -grad-p ... -repeat R: forward (certified gap <= tol)
              + backward (the VJP), solved R times in one process; the
              command reports the median and fastest solve time, without
              start-up and file I/O;
  command     drknn-lfd without -grad-p (the certified LP answer only), timed
              from here as a whole process: start-up, reading the .npy files,
              solving, writing P.npy (median of --launches launches);
  HiGHS       scipy.optimize.linprog(method="highs") on the reduced LP of
              scripts/highs_bench.py (median of --highs-repeat solves; the LP
              is built once, outside the timing).

Each round prints the times (wall; CPU in brackets: ours from getrusage of
the child — for the in-process solves the whole run divided by R, start-up
included — HiGHS's from time.process_time) and the ratios HiGHS / ours of
the median wall times (and of the CPU times, in brackets). Under load, wall
times of a 1 ms and a 10 ms computation are not inflated alike (the longer
one is preempted more often), so the CPU ratio is the steadier figure. The last lines give, per size, the least ratio
over the rounds. Timings on a shared machine are noisy: interleaving puts both
sides under the same load, and the load average is printed with every round.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy.optimize import linprog

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from highs_bench import build_lp, read_instance  # noqa: E402


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def child_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_cmd(args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="directory with lfd_<n>_<M>.txt from TestExportBenchInstances")
    ap.add_argument("--sizes", default="50,200", help="comma-separated n")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=0,
                    help="in-process solves per round (default: 400 for n <= 50, 40 for n <= 200, else 5)")
    ap.add_argument("--launches", type=int, default=3, help="command launches per round")
    ap.add_argument("--highs-repeat", type=int, default=3, help="HiGHS solves per round")
    ap.add_argument("--bin", help="drknn-lfd binary (default: go build ./cmd/drknn-lfd into a temporary directory)")
    ap.add_argument("--tol", default="1e-3")
    args = ap.parse_args()
    if not os.path.isdir(args.dir):
        sys.exit(f"{args.dir}: not a folder; export the instances first (see the top of this file)")

    # every exit, sys.exit on a failed run included, removes it
    with tempfile.TemporaryDirectory(prefix="lfd-sbs-", ignore_cleanup_errors=True) as tmp:
        run(args, tmp)


def run(args, tmp):
    binary = args.bin
    if not binary:
        binary = os.path.join(tmp, "drknn-lfd")
        subprocess.run(["go", "build", "-o", binary, "./cmd/drknn-lfd"], check=True)
    ver = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"# drknn-lfd {binary} (commit {ver or '?'}), {os.cpu_count()} CPUs, load {load()}")

    sizes = [int(s) for s in args.sizes.split(",") if s]
    inst = {}
    for name in sorted(os.listdir(args.dir)):
        if not (name.startswith("lfd_") and name.endswith(".txt")):
            continue
        n, M, theta, labels, cost = read_instance(os.path.join(args.dir, name))
        if n not in sizes:
            continue
        d = os.path.join(tmp, f"n{n}")
        os.makedirs(d)
        np.save(os.path.join(d, "C.npy"), cost)
        np.save(os.path.join(d, "y.npy"), labels)
        np.save(os.path.join(d, "G.npy"), np.random.default_rng(99).standard_normal((M, n)))
        lp = build_lp(n, M, theta, labels, cost)
        base = [binary, "-cost", os.path.join(d, "C.npy"), "-labels", os.path.join(d, "y.npy"),
                "-theta", repr(theta), "-tol", args.tol, "-out", os.path.join(d, "P.npy")]
        rep = args.repeat or (400 if n <= 50 else 40 if n <= 200 else 5)
        grad = base + ["-grad-p", os.path.join(d, "G.npy"), "-grad-out", os.path.join(d, "D.npy"),
                       "-repeat", str(rep)]
        inst[n] = (M, lp, base, grad, rep)
    missing = [n for n in sizes if n not in inst]
    if missing:
        sys.exit(f"no lfd_<n>_*.txt for n = {missing} in {args.dir}; run the Go export first")

    worst = {n: [float("inf")] * 4 for n in sizes}
    print(f"{'round':>5} {'n':>5} {'M':>3} | {'HiGHS fwd ms':>18} | {'ours fwd+bwd ms':>17} {'ratio':>13} |"
          f" {'command ms':>16} {'ratio':>13} | {'rel_gap':>8} {'LP value':>12} {'ours':>12} | load")
    for r in range(1, args.rounds + 1):
        for n in sizes:
            M, lp, base, grad, rep = inst[n]
            # HiGHS, forward only
            hw, value = [], None
            c0 = time.process_time()
            for _ in range(args.highs_repeat):
                t0 = time.perf_counter()
                res = linprog(lp[0], A_ub=lp[1], b_ub=lp[2], A_eq=lp[3], b_eq=lp[4], bounds=(0, None), method="highs")
                hw.append(time.perf_counter() - t0)
                if res.status != 0:
                    sys.exit(f"n = {n}: HiGHS failed: {res.message}")
                value = res.fun
            hcpu = (time.process_time() - c0) / args.highs_repeat
            hmed = statistics.median(hw)
            # ours in process: forward + backward, repeated (CPU: the
            # child's whole run, start-up and I/O included, per solve)
            c0 = child_cpu()
            out = run_cmd(grad)
            icpu = (child_cpu() - c0) / rep
            if out["status"] != "optimal" or out["rel_gap"] > float(args.tol):
                sys.exit(f"n = {n}: not certified: {out}")
            imed = out["seconds_median"]
            # the whole command, forward only (the certified LP answer)
            cw = []
            c0 = child_cpu()
            for _ in range(args.launches):
                t0 = time.perf_counter()
                o2 = run_cmd(base)
                cw.append(time.perf_counter() - t0)
                if o2["status"] != "optimal":
                    sys.exit(f"n = {n}: command not certified: {o2}")
            ccpu = (child_cpu() - c0) / args.launches
            cmed = statistics.median(cw)
            ri, rc = hmed / imed, hmed / cmed
            rci, rcc = hcpu / icpu, hcpu / ccpu
            for k, v in enumerate((ri, rc, rci, rcc)):
                worst[n][k] = min(worst[n][k], v)
            print(f"{r:>5} {n:>5} {M:>3} | {hmed*1e3:>8.2f} ({hcpu*1e3:>7.2f}) | {imed*1e3:>7.3f} ({icpu*1e3:>7.3f})"
                  f" {ri:>5.1f}x ({rci:>4.1f}x) | {cmed*1e3:>7.2f} ({ccpu*1e3:>6.2f}) {rc:>5.1f}x ({rcc:>4.1f}x) |"
                  f" {out['rel_gap']:>8.1e} {value:>12.7f}"
                  f" {out['objective']:>12.7f} | {load()}", flush=True)
    for n in sizes:
        w = worst[n]
        print(f"n = {n}: least ratio over {args.rounds} rounds (wall; CPU): in-process forward+backward"
              f" {w[0]:.1f}x; {w[2]:.1f}x, command (start-up included, forward) {w[1]:.1f}x; {w[3]:.1f}x")


if __name__ == "__main__":
    main()
