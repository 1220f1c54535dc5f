#!/usr/bin/python3
"""Does the LFD weighting change Dr.k-NN's vote? (README, "Does the LFD
weighting matter?")

    go build -o /tmp/drknn-lfd ./cmd/drknn-lfd
    /usr/bin/python3 scripts/lfd_votes.py RUN [RUN ...] [--thetas 0,0.03,0.1,0.3,1] [--k 5]
        [--lfd /tmp/drknn-lfd] [--heatmap OUT.png --heatmap-export EXPORT [EXPORT]]

RUN is an output folder of drknn-train (its repeats/NN/export/ folders are
read). For every exported repeat and every test-time radius ϑ (relative to
the mean training cost, as the pipeline uses it) the script re-solves the
LFD on the exported training embeddings with drknn-lfd (same solver, ε = the
run's train.epsilon, tol = train.tol; Euclidean costs, ϑ scaled by the mean
cost), and compares Dr.k-NN's prediction with vanilla k-NN's on the
exported queries (eval's tie rules: Dr.k-NN ties go to the class with more
of the k neighbours, then the lowest index; k-NN ties to the lowest index).
It prints per run and ϑ: mean accuracy of Dr.k-NN and k-NN, the mean
difference with its 95% t-interval (paired over repeats), the share of
queries whose prediction differs, the share that differ where the vote
without the LFD is a tie (k-NN's counts, or the counts divided by the class
sizes n_m — Dr.k-NN's vote at ϑ = 0 — when noisy labels make the classes
unequal), and the mass P*_m puts on other classes' points (averaged over m).

--heatmap draws n_m·P*_m(i) for the support points of the given exports at
each ϑ (ϑ = 0 is the one-hot labels) into OUT.png.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy import stats


def load(export):
    a = {f: np.load(os.path.join(export, f + ".npy")) for f in
         ("train_embeddings", "train_labels", "query_embeddings", "query_labels")}
    man = json.load(open(os.path.join(export, "manifest.json")))
    return a, man


def dist(q, e):
    return np.sqrt(np.maximum(((q[:, None, :] - e[None, :, :]) ** 2).sum(-1), 0))


def solve(lfd, e, y, theta_rel, eps, tol, tmp):
    """P* (M×n) for a radius relative to the mean training cost."""
    if theta_rel == 0:
        m = y.max() + 1
        p = np.zeros((m, len(y)))
        for c in range(m):
            p[c, y == c] = 1 / (y == c).sum()
        return p
    c = dist(e, e)
    theta = theta_rel * c.mean()
    fx, fy, fp = (os.path.join(tmp, f) for f in ("x.npy", "y.npy", "p.npy"))
    np.save(fx, e)
    np.save(fy, y.astype(np.int64))
    subprocess.run([lfd, "-features", fx, "-labels", fy, "-theta", repr(theta), "-eps", repr(eps),
                    "-tol", repr(tol), "-allow-uncertified", "-out", fp], check=True, capture_output=True)
    return np.load(fp)


def votes(p, e, y, q, k):
    d = dist(q, e)
    nn = np.argsort(d, axis=1, kind="stable")[:, :k]  # ties in distance: lower index first
    m = p.shape[0]
    dr = p[:, nn].mean(-1).T                            # nq×M Dr.k-NN votes
    cnt = np.stack([(y[nn] == c).sum(1) for c in range(m)], 1)
    return dr, cnt


def argmax_tie(v, cnt=None):
    best = v.max(1, keepdims=True)
    tied = np.abs(v - best) <= 1e-12 * np.abs(best)
    if cnt is None:
        return tied.argmax(1)
    c = np.where(tied, cnt, -1)
    return c.argmax(1)


def ci(x):
    x = np.asarray(x, float)
    if len(x) < 2:
        return x.mean(), float("nan")
    return x.mean(), stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="*")
    ap.add_argument("--thetas", default="0,0.03,0.1,0.3,1")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--lfd", default="/tmp/drknn-lfd")
    ap.add_argument("--heatmap")
    ap.add_argument("--heatmap-export", nargs="*", default=[])
    args = ap.parse_args()
    # every exit, sys.exit on a failed run included, removes it
    with tempfile.TemporaryDirectory(prefix="lfd-votes-", ignore_cleanup_errors=True) as tmp:
        run(args, tmp)


def run(args, tmp):
    thetas = [float(t) for t in args.thetas.split(",")]
    skipped = 0
    for path in args.runs:
        exports = sorted(glob.glob(os.path.join(path, "repeats", "*", "export")))
        if not exports:
            print(f"{path}: no repeats/*/export folder (not a drknn-train output folder?), skipped",
                  file=sys.stderr)
            skipped += 1
            continue
        rows = {t: [] for t in thetas}
        for ex in exports:
            a, man = load(ex)
            e, y, q, yq = a["train_embeddings"], a["train_labels"], a["query_embeddings"], a["query_labels"]
            tr = man["config"]["train"]
            m = int(y.max()) + 1
            onehot = np.zeros((m, len(y)))
            onehot[y, np.arange(len(y))] = 1
            _, cnt = votes(onehot, e, y, q, args.k)
            knn = argmax_tie(cnt.astype(float))
            tie = (cnt == cnt.max(1, keepdims=True)).sum(1) > 1
            hat = cnt / np.bincount(y, minlength=m)[None, :]  # the vote at ϑ = 0: counts / n_m
            tie |= (np.abs(hat - hat.max(1, keepdims=True)) <= 1e-12).sum(1) > 1
            for t in thetas:
                p = solve(args.lfd, e, y, t, tr["epsilon"], tr["tol"], tmp)
                dr, cnt = votes(p, e, y, q, args.k)
                pred = argmax_tie(dr, cnt)
                diff = pred != knn
                xmass = sum(p[c, y != c].sum() for c in range(m)) / m
                rows[t].append(((pred == yq).mean(), (knn == yq).mean(), diff.mean(), (diff & tie).mean(), xmass))
        print(f"{path} ({len(exports)} repeats, k = {args.k})")
        print("  ϑ       drknn   knn     drknn−knn (95% CI)   differ  at a tie  cross-class mass")
        for t in thetas:
            r = np.array(rows[t])
            d, h = ci(r[:, 0] - r[:, 1])
            print(f"  {t:<6g}  {r[:, 0].mean():.3f}   {r[:, 1].mean():.3f}   {d:+.3f} ± {h:.3f}      "
                  f"{r[:, 2].mean():.3f}   {r[:, 3].mean():.3f}     {r[:, 4].mean():.3f}")
    if args.heatmap:
        heatmap(args, thetas, tmp)
    if skipped:
        sys.exit(1)


def heatmap(args, thetas, tmp):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    exps = args.heatmap_export
    fig, axes = plt.subplots(len(exps), len(thetas), figsize=(2.9 * len(thetas) + 1.2, 2.3 * len(exps) + 0.8),
                             squeeze=False, constrained_layout=True)
    for r, ex in enumerate(exps):
        a, man = load(ex)
        e, y = a["train_embeddings"], a["train_labels"]
        o = np.argsort(y, kind="stable")
        nm = np.bincount(y)
        tr = man["config"]["train"]
        cfg = man["config"]
        label = f"{cfg['dataset']} {cfg['ways']}-way {cfg['shots']}-shot\nepisode {man['episode']['seed']}"
        for c, t in enumerate(thetas):
            p = solve(args.lfd, e, y, t, tr["epsilon"], tr["tol"], tmp)
            w = p[:, o] * nm[:, None]
            ax = axes[r, c]
            im = ax.imshow(w, aspect="auto", cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
            for b in np.cumsum(nm)[:-1]:
                ax.axvline(b - 0.5, color="w", lw=0.7)
            ax.set_yticks(range(len(nm)))
            ax.set_yticklabels([f"P*{m}" for m in range(len(nm))], fontsize=7)
            ax.set_xticks([])
            xm = sum(p[m, y != m].sum() for m in range(len(nm))) / len(nm)
            ax.set_title(f"ϑ = {t:g}: cross-class mass {xm:.2f}", fontsize=8)
            if c == 0:
                ax.set_ylabel(label, fontsize=8)
            if r == len(exps) - 1:
                ax.set_xlabel("support points, by label", fontsize=7)
    fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.85, label="n_m · P*_m(i)   (ϑ = 0: the one-hot labels)")
    fig.suptitle("Least-favourable weights on the support set of a trained embedding (ϑ relative to the mean cost)", fontsize=9)
    fig.savefig(args.heatmap, dpi=110)
    print("wrote", args.heatmap)


if __name__ == "__main__":
    main()
