#!/usr/bin/env python3
"""quiver Table.to_pandas() against building the same frame from numpy
arrays already in memory (issue 21 item 2's yardstick).

    PYTHONPATH=build/release/python python3 bench/python_to_pandas.py [--scale 1] [--runs 3]

TPC-H lineitem at --scale (quiver gen tpch; 6 M rows at scale 1) is written
LZ4-compressed, so quiver.read_ipc decodes it into memory before the clock
starts. Each measurement runs in its own process:
  quiver  read_ipc, then time t.to_pandas();
  numpy   read_ipc and to_pandas to get the columns, keep them as numpy
          arrays (dropping the table and frame), then time
          pd.DataFrame({name: array}) (pandas stacks them into blocks).
Memory: the process's peak RSS during the call above its RSS just before
(VmHWM reset through /proc/self/clear_refs), and the process's whole peak
(input + conversion). Medians of --runs runs; ratios quiver / numpy.
"""

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def child(mode, path):
    import pandas as pd

    import quiver

    t = quiver.read_ipc(path)
    if mode == "numpy":
        df0 = t.to_pandas()
        arrays = {f"{name}": df0.iloc[:, i].to_numpy() for i, name in enumerate(df0.columns)}
        del df0, t
    gc.collect()
    exact = reset_peak()
    rss0 = status_kib("VmRSS")
    t0 = time.perf_counter()
    if mode == "quiver":
        df = t.to_pandas()
    else:
        df = pd.DataFrame(arrays)
    seconds = time.perf_counter() - t0
    hwm = status_kib("VmHWM")
    print(json.dumps({"mode": mode, "seconds": seconds, "rows": len(df), "columns": df.shape[1],
                      "rss_before_kib": rss0, "peak_kib": hwm, "peak_increase_kib": hwm - rss0,
                      "frame_bytes": int(df.memory_usage(index=False, deep=False).sum()), "hwm_reset": exact}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quiver", default=os.environ.get("QUIVER_BINARY", "build/release/quiver"))
    ap.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--keep-dir")
    a = ap.parse_args()
    if a.child:
        child(*a.child)
        return
    work = a.keep_dir or tempfile.mkdtemp(prefix="quiver-to-pandas-")
    try:
        tpch = os.path.join(work, "tpch")
        lineitem = os.path.join(work, "lineitem.lz4.arrow")
        if not os.path.exists(lineitem):
            t0 = time.perf_counter()
            subprocess.run([a.quiver, "gen", "tpch", "--scale", str(a.scale), "-o", tpch], check=True,
                           capture_output=True)
            subprocess.run([a.quiver, "convert", os.path.join(tpch, "lineitem.arrow"), lineitem, "--compression",
                            "lz4"], check=True, capture_output=True)
            print(f"generated lineitem at scale {a.scale} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        results = {"quiver": [], "numpy": []}
        for _ in range(a.runs):
            for mode in ("quiver", "numpy"):  # interleaved: drift hits both
                out = subprocess.run([sys.executable, __file__, "--child", mode, lineitem], check=True,
                                     capture_output=True, text=True).stdout
                results[mode].append(json.loads(out.strip().splitlines()[-1]))
        med = {m: {k: statistics.median(r[k] for r in rs) for k in ("seconds", "peak_increase_kib", "peak_kib")}
               for m, rs in results.items()}
        rows = results["quiver"][0]["rows"]
        print(f"lineitem scale {a.scale}: {rows} rows x {results['quiver'][0]['columns']} columns, "
              f"frame {results['quiver'][0]['frame_bytes'] / 2**20:.0f} MiB (shallow), median of {a.runs}")
        print(f"{'':8} {'seconds':>9} {'peak +RSS MiB':>14} {'peak RSS MiB':>13}")
        for m in ("quiver", "numpy"):
            r = med[m]
            print(f"{m:8} {r['seconds']:9.2f} {r['peak_increase_kib'] / 1024:14.0f} {r['peak_kib'] / 1024:13.0f}")
        q, n = med["quiver"], med["numpy"]
        print(f"ratio    {q['seconds'] / n['seconds']:9.2f} {q['peak_increase_kib'] / max(n['peak_increase_kib'], 1):14.2f}"
              f" {q['peak_kib'] / max(n['peak_kib'], 1):13.2f}   (quiver / numpy; target time <= 2, memory <= 1.5)")
        print(json.dumps({"scale": a.scale, "rows": rows, "median": med}))
    finally:
        if not a.keep_dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
