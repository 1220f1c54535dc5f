#!/usr/bin/python3
"""Time the exact LFD linear program (Theorem 1, reduced to n² transport
variables) with HiGHS on the instances of the optlayer benchmarks.

Export the instances first (Go writes them, so both sides solve the same
numbers):

    go test ./optlayer -run TestExportBenchInstances -args -export /tmp/lfd
    /usr/bin/python3 scripts/highs_bench.py /tmp/lfd [--sizes 50,200,500] [--repeat 3] [--full]

For every lfd_<n>_<M>.txt it builds the LP with scipy.sparse (reduced to n^2
plan variables, or with --full as DESIGN.md section 2 writes it, M*n^2), solves it with
scipy.optimize.linprog(method="highs"), prints the best wall time and the LP
value, and compares with ours_<n>_<M>.txt (our objective, lower bound, gap)
when present.

With --npy it takes instead directories as TestExportHard and TestRandomSweep
-sweep-export write them (X.npy features, y.npy labels, theta.txt with one
radius or one per class), the costs from --metric as drknn-lfd computes them,
and times the drknn-lfd command (--bin) and then HiGHS (under --time-limit, in
a child process) on each, with the peak memory of each process:

    go test ./optlayer -run TestRandomSweep -args -sweep-seed 9 -sweep-only 29 -sweep-export /tmp/tail
    go build -o /tmp/drknn-lfd ./cmd/drknn-lfd
    /usr/bin/python3 scripts/highs_bench.py --npy /tmp/tail/sweep9_29 --bin /tmp/drknn-lfd --time-limit 1800
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog


def read_instance(path):
    with open(path) as f:
        n, M, theta = f.readline().split()
        n, M, theta = int(n), int(M), float(theta)
        labels = np.array(f.readline().split(), dtype=np.int64)
        cost = np.loadtxt(f, dtype=np.float64, ndmin=2)
    if cost.shape != (n, n) or labels.shape != (n,):
        raise ValueError(f"{path}: bad shapes {cost.shape}, {labels.shape}")
    return n, M, theta, labels, cost


def build_lp(n, M, theta, labels, cost):
    """Variables: gamma(i, j) for all i, j (the class of an entry is the class
    of its column j), then t_i. Minimise sum t subject to
      sum_i gamma(i, j) = 1/n_{y_j}                 (columns)
      sum_{j in class m} gamma(i, j) - t_i <= 0     (rows, per class)
      sum_{i, j in class m} gamma(i, j) c(i, j) <= theta   (budgets)."""
    counts = np.bincount(labels, minlength=M)
    nv = n * n + n
    c = np.zeros(nv)
    c[n * n:] = 1.0
    gidx = np.arange(n * n).reshape(n, n)  # gamma(i, j) -> i*n + j
    # equalities: columns
    rows = np.repeat(np.arange(n), n)          # constraint j
    cols = gidx.T.ravel()                       # entries (i, j) for fixed j
    A_eq = sp.csr_matrix((np.ones(n * n), (rows, cols)), shape=(n, nv))
    b_eq = 1.0 / counts[labels]
    # inequalities: rows per class, then budgets
    ub_r, ub_c, ub_v = [], [], []
    ii, jj = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    ii, jj = ii.ravel(), jj.ravel()
    cls = labels[jj]
    r_row = cls * n + ii                        # constraint (m, i)
    ub_r.append(r_row); ub_c.append(gidx.ravel()); ub_v.append(np.ones(n * n))
    ub_r.append(np.tile(np.arange(n), M) + np.repeat(np.arange(M), n) * n)
    ub_c.append(np.tile(n * n + np.arange(n), M)); ub_v.append(-np.ones(n * M))
    ub_r.append(M * n + cls); ub_c.append(gidx.ravel()); ub_v.append(cost.ravel())
    A_ub = sp.csr_matrix((np.concatenate(ub_v), (np.concatenate(ub_r), np.concatenate(ub_c))),
                         shape=(M * n + M, nv))
    b_ub = np.concatenate([np.zeros(M * n), np.broadcast_to(np.asarray(theta, dtype=np.float64), (M,))])
    return c, A_ub, b_ub, A_eq, b_eq


def build_lp_full(n, M, theta, labels, cost):
    """The LP exactly as DESIGN.md section 2 writes it, before the reduction:
    one n x n plan gamma_m per class (columns outside class m must carry no
    mass), the row masses p_m(i) as variables and t_i >= p_m(i). Variables:
    gamma_m(i, j) (M*n*n), p_m(i) (M*n), t_i (n)."""
    counts = np.bincount(labels, minlength=M)
    G, P = M * n * n, M * n
    nv = G + P + n
    c = np.zeros(nv)
    c[G + P:] = 1.0
    m_, i_, j_ = np.meshgrid(np.arange(M), np.arange(n), np.arange(n), indexing="ij")
    m_, i_, j_ = m_.ravel(), i_.ravel(), j_.ravel()
    g = np.arange(G)                               # gamma_m(i, j) -> m*n*n + i*n + j
    # equalities: columns (m, j), then rows (m, i) with -p_m(i)
    eq_r = np.concatenate([m_ * n + j_, M * n + m_ * n + i_, M * n + np.arange(P)])
    eq_c = np.concatenate([g, g, G + np.arange(P)])
    eq_v = np.concatenate([np.ones(G), np.ones(G), -np.ones(P)])
    A_eq = sp.csr_matrix((eq_v, (eq_r, eq_c)), shape=(2 * M * n, nv))
    phat = np.where(labels[None, :] == np.arange(M)[:, None], 1.0 / counts[:, None], 0.0)
    b_eq = np.concatenate([phat.ravel(), np.zeros(P)])
    # inequalities: p_m(i) - t_i <= 0, then the budgets
    ub_r = np.concatenate([np.arange(P), np.arange(P), M * n + m_])
    ub_c = np.concatenate([G + np.arange(P), G + P + np.tile(np.arange(n), M), g])
    ub_v = np.concatenate([np.ones(P), -np.ones(P), cost[i_, j_]])
    A_ub = sp.csr_matrix((ub_v, (ub_r, ub_c)), shape=(M * n + M, nv))
    b_ub = np.concatenate([np.zeros(P), np.broadcast_to(np.asarray(theta, dtype=np.float64), (M,))])
    return c, A_ub, b_ub, A_eq, b_eq


def read_npy(d):
    """An exported instance: X.npy (n x d), y.npy and theta.txt (its text is
    returned too, for drknn-lfd -theta)."""
    x = np.load(os.path.join(d, "X.npy")).astype(np.float64)
    labels = np.load(os.path.join(d, "y.npy")).astype(np.int64)
    with open(os.path.join(d, "theta.txt")) as f:
        text = f.read().strip()
    theta = np.array([float(v) for v in text.split(",")])
    if x.ndim != 2 or labels.shape != (x.shape[0],):
        raise ValueError(f"{d}: bad shapes {x.shape}, {labels.shape}")
    M = int(labels.max()) + 1
    if theta.size not in (1, M):
        raise ValueError(f"{d}: theta.txt holds {theta.size} radii for {M} classes")
    return x, M, theta, labels, text


def feature_costs(x, metric):
    """The n x n costs as drknn-lfd -features computes them: Euclidean
    distances, or with metric "sqeuclidean" their squares."""
    sq = (x * x).sum(axis=1)
    cost = np.maximum(sq[:, None] + sq[None, :] - 2.0 * (x @ x.T), 0.0)
    if metric == "euclidean":
        cost = np.sqrt(cost)
    np.fill_diagonal(cost, 0.0)
    return cost


def highs_child(d, metric, time_limit):
    """One HiGHS solve of an exported instance (run_npy's child process):
    prints its seconds, status, LP value (NaN unless solved) and the peak
    memory of the process (the LP's assembly in scipy.sparse included)."""
    x, M, theta, labels, _ = read_npy(d)
    lp = build_lp(x.shape[0], M, theta, labels, feature_costs(x, metric))
    t0 = time.perf_counter()
    res = linprog(lp[0], A_ub=lp[1], b_ub=lp[2], A_eq=lp[3], b_eq=lp[4], bounds=(0, None),
                  method="highs", options={"time_limit": time_limit})
    dt = time.perf_counter() - t0
    mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": dt, "status": int(res.status),
                      "value": float(res.fun) if res.status == 0 else float("nan"), "mb": mb}))


def run_npy(args):
    """HiGHS and drknn-lfd, one after the other, on each exported instance."""
    print(f"{'instance':>24} {'n':>5} {'M':>3} | {'HiGHS s':>9} {'MB':>6} {'LP value':>12} |"
          f" {'ours s':>7} {'MB':>6} {'objective':>12} {'lower bound':>12}", flush=True)
    for d in args.npy:
        try:
            x, M, _, _, text = read_npy(d)
        except (OSError, ValueError) as e:  # reported; the other instances go on
            print(f"{d}: {e}", file=sys.stderr)
            continue
        n = x.shape[0]
        name = os.path.basename(os.path.normpath(d))
        ours = ours_mb = obj = lb = float("nan")
        if args.bin:
            with tempfile.TemporaryDirectory() as tmp:
                cmd = ["/usr/bin/time", "-f", "%M", args.bin, "-features", os.path.join(d, "X.npy"),
                       "-labels", os.path.join(d, "y.npy"), "-theta", text, "-metric", args.metric,
                       "-out", os.path.join(tmp, "P.npy")]
                t0 = time.perf_counter()
                out = subprocess.run(cmd, capture_output=True, text=True)
                ours = time.perf_counter() - t0
                if out.returncode != 0:  # reported; the other instances go on
                    print(f"{d}: drknn-lfd failed: {out.stderr.strip()}", file=sys.stderr)
                else:
                    ours_mb = int(out.stderr.strip().splitlines()[-1]) / 1024
                    r = json.loads(out.stdout.strip().splitlines()[-1])
                    obj, lb = r["objective"], r["lower_bound"]
        # HiGHS in a child process (--child), so that its peak memory is its own
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--npy", d,
                              "--metric", args.metric, "--time-limit", str(args.time_limit)],
                             capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{d}: HiGHS failed: {out.stderr.strip()}", file=sys.stderr)
            h = {"seconds": float("nan"), "status": -1, "value": float("nan"), "mb": float("nan")}
        else:
            h = json.loads(out.stdout)
        hs, status, value, hmb = h["seconds"], h["status"], h["value"], h["mb"]
        # status 1: the time limit (scipy's "iteration or time limit")
        hs = f"{hs:9.1f}" if status == 0 else f">{hs:8.0f}" if status == 1 else f"{'status ' + str(status):>9}"
        print(f"{name:>24} {n:>5} {M:>3} | {hs} {hmb:6.0f} {value:12.6f} |"
              f" {ours:7.2f} {ours_mb:6.0f} {obj:12.6f} {lb:12.6f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--npy", nargs="+", metavar="DIR",
                    help="exported instances (X.npy, y.npy, theta.txt) instead of dir's lfd_*.txt")
    ap.add_argument("--metric", default="euclidean", choices=["euclidean", "sqeuclidean"],
                    help="with --npy: the costs from the features, as drknn-lfd -metric")
    ap.add_argument("--bin", help="with --npy: the drknn-lfd command to time beside HiGHS")
    ap.add_argument("--time-limit", type=float, default=3600.0,
                    help="with --npy: HiGHS's time limit in seconds")
    ap.add_argument("--sizes", default="50,200,500", help="comma-separated n to run")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--full", action="store_true",
                    help="solve the unreduced LP of DESIGN.md section 2 (M*n^2 plan variables)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        highs_child(args.npy[0], args.metric, args.time_limit)
        return
    if args.npy:
        run_npy(args)
        return
    if not args.dir:
        ap.error("give dir (lfd_*.txt) or --npy DIR...")
    sizes = {int(s) for s in args.sizes.split(",") if s}
    files = sorted((f for f in os.listdir(args.dir) if f.startswith("lfd_") and f.endswith(".txt")),
                   key=lambda f: int(f.split("_")[1]))
    if not files:
        sys.exit(f"no lfd_*.txt in {args.dir}; run the Go export first")
    print(f"{'n':>5} {'M':>3} {'HiGHS s':>10} {'LP value':>14} {'ours':>14} {'ours LB':>14} {'ours−LP':>10}")
    for name in files:
        n, M, theta, labels, cost = read_instance(os.path.join(args.dir, name))
        if n not in sizes:
            continue
        lp = (build_lp_full if args.full else build_lp)(n, M, theta, labels, cost)
        best, value = float("inf"), None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            res = linprog(lp[0], A_ub=lp[1], b_ub=lp[2], A_eq=lp[3], b_eq=lp[4],
                          bounds=(0, None), method="highs")
            dt = time.perf_counter() - t0
            if res.status != 0:
                sys.exit(f"{name}: HiGHS failed: {res.message}")
            best, value = min(best, dt), res.fun
        ours = os.path.join(args.dir, f"ours_{n}_{M}.txt")
        o = lb = diff = float("nan")
        if os.path.exists(ours):
            with open(ours) as f:
                o, lb, _ = (float(x) for x in f.read().split())
            diff = o - value
        print(f"{n:>5} {M:>3} {best:>10.3f} {value:>14.9f} {o:>14.9f} {lb:>14.9f} {diff:>10.2e}", flush=True)


if __name__ == "__main__":
    main()
