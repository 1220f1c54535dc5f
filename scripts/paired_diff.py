#!/usr/bin/python3
"""Paired differences of per-repeat accuracies between methods or runs.

    /usr/bin/python3 scripts/paired_diff.py RUN[:METHOD] RUN[:METHOD] [RUN[:METHOD] ...]

Each argument is a drknn-train output folder (its results.json) or a
results.json, with an optional method (default drknn). The first argument
is the reference: for every other one the script prints its mean accuracy
and the mean of (its accuracy − the reference's) over the repeats, with the
95% t-interval of that mean (paired: both must have run the same episodes,
which it checks through the recorded seeds and training indices).

    scripts/paired_diff.py runs/mn:embedding_knn runs/mn:drknn runs/mn:drknn_loo
"""
import json
import os
import sys

import numpy as np
from scipy import stats


def load(arg):
    path, _, method = arg.partition(":")
    method = method or "drknn"
    if os.path.isdir(path):
        path = os.path.join(path, "results.json")
    r = json.load(open(path))
    if method not in r["methods"]:
        sys.exit(f"{path}: no method {method} (has {', '.join(sorted(r['methods']))})")
    # a fit run (protocol: fit) records no episodes: its repeats are its
    # cross-validation folds, paired by position
    eps = [(e["seed"], tuple(e.get("train_index") or ())) for e in r.get("episodes") or ()]
    return np.array(r["methods"][method]["per_repeat"], float), eps


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ref, ref_eps = load(sys.argv[1])
    print(f"{sys.argv[1]}: {np.nanmean(ref):.3f} ({np.count_nonzero(~np.isnan(ref))} repeats)")
    for arg in sys.argv[2:]:
        acc, eps = load(arg)
        if eps != ref_eps:
            sys.exit(f"{arg}: not the same episodes as {sys.argv[1]}")
        ok = ~np.isnan(acc) & ~np.isnan(ref)  # null: the method failed on that repeat
        if not ok.all():
            print(f"{arg}: {np.count_nonzero(~ok)} repeats without a pair (a method failed there) left out")
        acc, d = acc[ok], (acc - ref)[ok]
        h = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
        print(f"{arg}: {acc.mean():.3f}   difference {d.mean():+.3f} ± {h:.3f}")


if __name__ == "__main__":
    main()
