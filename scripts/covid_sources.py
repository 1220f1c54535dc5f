#!/usr/bin/python3
"""COVID-CT: how much of the class can be read off the files' format, colour
mode and loader, rather than the CT content (docs/medical-rows.md).

    /usr/bin/python3 scripts/covid_sources.py [--data ../shared/data/covid-ct] [--episodes 20]

Needs the Debian packages python3-numpy, python3-pil and python3-matplotlib.
Reads the 746 images once (about a minute), then draws 2-way K-shot episodes
(K = 5, 10; K images per class for training, all the others as queries;
numpy generator seeded 1001, 1002, ...) and prints mean accuracy ± 95% CI
(normal approximation over the episodes) for:

  format/mode lookup   majority class of the training images that share the
                       query's (extension, decoded format, PIL mode); ties
                       and unseen signatures go to the larger class
  luma                 BT.601 luma (PIL "L"), box-resized to 32x32, in [0, 1]:
                       the honest input
  alpha averaged       mean over all stored channels, alpha included
                       (np.asarray(PIL image).mean(axis=2)), box-resized
  matplotlib           matplotlib.image.imread (PNG: float in [0, 1]; JPEG:
                       uint8 0..255; it refuses the 34 .png files holding
                       JPEG data, read here as JPEG), mean over channels
  histogram            64-bin grey-level histogram of the full-resolution
                       luma, normalised to sum 1
  black+white          two numbers: the shares of pixels in the histogram's
                       first (black) and last (white) bins
  histogram w/o extremes  bins 1..62 renormalised (the black and white
                       bins removed)

each with 1-NN, 5-NN and PCA (10 components, centred on the training
images) + 5-NN, Euclidean. It also prints the file format and mode counts
per class and how well the luma pixels predict the file format within each
class (leave-one-out 5-NN): the formats come from different source papers,
and the sources are visible in the pixels themselves.
"""
import argparse
import collections
import os

import numpy as np
from PIL import Image
import matplotlib.image as mpimg

CLASSES = ["CT_COVID", "CT_NonCOVID"]
SIDE = 32


def box32(a):
    return np.asarray(Image.fromarray(a.astype(np.float32), mode="F").resize((SIDE, SIDE), Image.BOX),
                      dtype=np.float64).ravel()


def load(root):
    rows = collections.defaultdict(list)
    for label, cls in enumerate(CLASSES):
        for name in sorted(os.listdir(os.path.join(root, cls))):
            if name.startswith("."):
                continue
            path = os.path.join(root, cls, name)
            im = Image.open(path)
            im.load()
            rows["label"].append(label)
            rows["sig"].append(f"{os.path.splitext(name)[1].lower()}|{im.format}|{im.mode}")
            rows["format"].append(im.format)
            luma = im.convert("L")
            rows["luma"].append(box32(np.asarray(luma, dtype=np.float64) / 255))
            a = np.asarray(im, dtype=np.float64)
            rows["alpha averaged"].append(box32((a.mean(axis=2) if a.ndim == 3 else a) / 255))
            try:
                m = mpimg.imread(path)
            except SyntaxError:  # JPEG data in a .png file
                m = np.asarray(Image.open(path))
            m = m.astype(np.float64)
            rows["matplotlib"].append(box32(m.mean(axis=2) if m.ndim == 3 else m))
            full = np.asarray(luma, dtype=np.int64).ravel()
            rows["histogram"].append(np.bincount(full >> 2, minlength=64) / full.size)
    return {k: np.array(v) for k, v in rows.items()}


def knn(xt, yt, xq, k):
    d = ((xq[:, None, :] - xt[None, :, :]) ** 2).sum(-1)
    nn = np.argsort(d, axis=1, kind="stable")[:, :k]
    votes = np.stack([(yt[nn] == c).sum(1) for c in (0, 1)], 1)
    return votes.argmax(1)


def pca(xt, xq, r=10):
    mu = xt.mean(0)
    _, _, vt = np.linalg.svd(xt - mu, full_matrices=False)
    r = min(r, len(xt) - 1)
    return (xt - mu) @ vt[:r].T, (xq - mu) @ vt[:r].T


def lookup(st, yt, sq):
    votes = collections.defaultdict(lambda: [0, 0])
    for s, l in zip(st, yt):
        votes[s][l] += 1
    larger = int(np.argmax(np.bincount(yt, minlength=2)))
    out = []
    for s in sq:
        v = votes.get(s)
        out.append(int(np.argmax(v)) if v and v[0] != v[1] else larger)
    return np.array(out)


def loo_knn(x, lab, k=5):
    d = ((x[:, None, :] - x[None]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    nn = np.argsort(d, 1, kind="stable")[:, :k]
    votes = np.stack([(lab[nn] == c).sum(1) for c in (0, 1)], 1)
    return (votes.argmax(1) == lab).mean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("DRKNN_DATA", "../shared/data") + "/covid-ct")
    ap.add_argument("--episodes", type=int, default=20)
    args = ap.parse_args()
    z = load(args.data)
    h = z["histogram"]
    z["black+white"] = h[:, [0, 63]]
    inner = h[:, 1:63]
    z["histogram w/o extremes"] = inner / inner.sum(1, keepdims=True)
    y = z["label"]
    n = len(y)
    print(f"{n} images")
    for c, cls in enumerate(CLASSES):
        cnt = collections.Counter(z["sig"][y == c])
        print(f"  {cls}: " + ", ".join(f"{k} {v}" for k, v in sorted(cnt.items())))
    print("file format (JPEG vs PNG data) predicted from the 32x32 luma within each class, leave-one-out 5-NN:")
    for c, cls in enumerate(CLASSES):
        idx = np.where(y == c)[0]
        f = (z["format"][idx] == "JPEG").astype(int)
        share = max(f.mean(), 1 - f.mean())
        print(f"  {cls}: {loo_knn(z['luma'][idx], f):.3f} (majority share {share:.3f})")
    for c, cls in enumerate(CLASSES):
        hc = h[y == c]
        print(f"  {cls}: mean share of pure-white pixels (bin 63) {hc[:, 63].mean():.3f}, of pure-black (bin 0) "
              f"{hc[:, 0].mean():.3f}; images with > 5% white {np.mean(hc[:, 63] > 0.05):.2f}, > 5% black {np.mean(hc[:, 0] > 0.05):.2f}")
    for K in (5, 10):
        res = collections.defaultdict(list)
        for r in range(args.episodes):
            rng = np.random.default_rng(1001 + r)
            tr = np.concatenate([rng.choice(np.where(y == c)[0], K, replace=False) for c in (0, 1)])
            q = np.setdiff1d(np.arange(n), tr)
            yt, yq = y[tr], y[q]
            res["format/mode lookup"].append((lookup(z["sig"][tr], yt, z["sig"][q]) == yq).mean())
            for name in ("luma", "alpha averaged", "matplotlib", "histogram", "black+white", "histogram w/o extremes"):
                x = z[name]
                res[f"{name} 1-NN"].append((knn(x[tr], yt, x[q], 1) == yq).mean())
                res[f"{name} 5-NN"].append((knn(x[tr], yt, x[q], 5) == yq).mean())
                a, b = pca(x[tr], x[q])
                res[f"{name} PCA+5-NN"].append((knn(a, yt, b, 5) == yq).mean())
        print(f"2-way {K}-shot, {args.episodes} episodes (seeds 1001...), mean ± 95% CI:")
        for k, v in res.items():
            v = np.array(v)
            print(f"  {k:28s} {v.mean():.3f} ± {1.96 * v.std(ddof=1) / np.sqrt(len(v)):.3f}")


if __name__ == "__main__":
    main()
