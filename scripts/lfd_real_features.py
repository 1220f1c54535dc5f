#!/usr/bin/python3
"""drknn-lfd on real features: MNIST and CIFAR-10 test images as pixels.

Issue 15's item 3 asks for hard instances at n = 2,000 / 3,000 / 10,000;
this script checks the command on real, high-dimensional features as well as
on BenchmarkHard's synthetic kinds. From the repository root:

    /usr/bin/python3 scripts/lfd_real_features.py [--sets mnist,cifar10]
        [--sizes 2000,3000] [--radii 0.05,0.2,0.4,0.5,0.6,0.8,1.0]
        [--seed 11] [--bin PATH] [--keep DIR]

(without --keep the instances go to a temporary folder, removed at the end).

The data come from $DRKNN_DATA, else ../shared/data (MNIST's t10k idx files,
CIFAR-10's binary test batch). For every set and size the script draws n
images without replacement (numpy's default_rng(seed)), scales the pixels to
[0, 1] (d = 784 or 3072), writes X.npy (float64) and y.npy (int64, 0…9),
and takes the median Euclidean distance of 20,000 random pairs; ϑ is each
radius × that median. It then runs drknn-lfd -features X.npy (the certified
LP answer: costs, solve, P.npy) once per radius and prints, per run, the
status, the relative gap, the iterations, wall and CPU seconds of the whole
process and its peak RSS (GNU /usr/bin/time: apt-get install time), with the load average. Builds
cmd/drknn-lfd unless --bin is given. Exit status 1 if any run fails or is
not certified.
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np


def data_dir():
    d = os.environ.get("DRKNN_DATA")
    if d:
        return d
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")


def read_mnist(root):
    with gzip.open(os.path.join(root, "mnist", "t10k-images-idx3-ubyte.gz")) as f:
        x = np.frombuffer(f.read()[16:], dtype=np.uint8).reshape(-1, 784)
    with gzip.open(os.path.join(root, "mnist", "t10k-labels-idx1-ubyte.gz")) as f:
        y = np.frombuffer(f.read()[8:], dtype=np.uint8)
    return x, y


def read_cifar10(root):
    with open(os.path.join(root, "cifar-10", "cifar-10-batches-bin", "test_batch.bin"), "rb") as f:
        a = np.frombuffer(f.read(), dtype=np.uint8).reshape(-1, 3073)
    return a[:, 1:], a[:, 0]


READERS = {"mnist": read_mnist, "cifar10": read_cifar10}


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="mnist,cifar10")
    ap.add_argument("--sizes", default="2000,3000")
    ap.add_argument("--radii", default="0.05,0.2,0.4,0.5,0.6,0.8,1.0")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--bin", help="drknn-lfd binary (default: go build ./cmd/drknn-lfd)")
    ap.add_argument("--keep", help="write the instances here and keep them (default: a temporary folder)")
    a = ap.parse_args()

    if not os.path.exists("/usr/bin/time"):
        sys.exit("needs GNU time at /usr/bin/time (apt-get install time)")
    root = data_dir()
    work = a.keep or tempfile.mkdtemp(prefix="drknn-real-")
    os.makedirs(work, exist_ok=True)
    binary = a.bin
    if not binary:
        binary = os.path.join(work, "drknn-lfd")
        subprocess.run(["go", "build", "-o", binary, "./cmd/drknn-lfd"], check=True)

    bad = 0
    print(f"{'set':8} {'n':>6} {'r':>5} {'status':>15} {'rel gap':>8} {'iters':>6} {'wall s':>7} {'CPU s':>7} {'RSS MB':>7} load")
    for name in a.sets.split(","):
        if name not in READERS:
            sys.exit(f"unknown set {name!r} (want {', '.join(READERS)})")
        try:
            x_all, y_all = READERS[name](root)
        except OSError as e:
            sys.exit(f"{name}: {e} (set DRKNN_DATA or put the data in ../shared/data)")
        rng = np.random.default_rng(a.seed)
        for n in (int(s) for s in a.sizes.split(",")):
            if n > len(y_all):
                sys.exit(f"{name}: n = {n} > {len(y_all)} images")
            idx = rng.choice(len(y_all), n, replace=False)
            x = x_all[idx].astype(np.float64) / 255
            y = y_all[idx].astype(np.int64)
            d = os.path.join(work, f"{name}_{n}")
            os.makedirs(d, exist_ok=True)
            np.save(os.path.join(d, "X.npy"), x)
            np.save(os.path.join(d, "y.npy"), y)
            i, j = rng.integers(0, n, 20000), rng.integers(0, n, 20000)
            keep = i != j
            med = float(np.median(np.linalg.norm(x[i[keep]] - x[j[keep]], axis=1)))
            del x
            for r in (float(s) for s in a.radii.split(",")):
                cmd = [binary, "-features", os.path.join(d, "X.npy"), "-labels", os.path.join(d, "y.npy"),
                       "-theta", repr(r * med), "-out", os.path.join(d, "P.npy")]
                # GNU time measures the run: a child of this process would
                # report this process's peak RSS too (Linux carries the
                # image a fork or vfork copied over into the child's maxrss)
                outp, errp, tp = (os.path.join(d, f) for f in ("stdout", "stderr", "time"))
                with open(outp, "w") as fo, open(errp, "w") as fe:
                    code = subprocess.call(["/usr/bin/time", "-f", "%e %U %S %M", "-o", tp] + cmd, stdout=fo, stderr=fe)
                with open(tp) as f:
                    last = f.read().split("\n")[-2].split()
                wall, cpu, rss = float(last[0]), float(last[1]) + float(last[2]), float(last[3]) / 1024
                with open(outp) as f:
                    out = f.read()
                with open(errp) as f:
                    err = f.read()
                if code != 0:
                    bad += 1
                    print(f"{name:8} {n:6} {r:5.2f} failed (exit {code}): {err.strip()}")
                    continue
                s = json.loads(out)
                if s["status"] != "optimal":
                    bad += 1
                print(f"{name:8} {n:6} {r:5.2f} {s['status']:>15} {s['rel_gap']:8.2g} {s['iterations']:6d} "
                      f"{wall:7.2f} {cpu:7.2f} {rss:7.0f} {load()}", flush=True)
    if not a.keep:
        shutil.rmtree(work)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
