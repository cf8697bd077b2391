"""cpu-cost: instructions per call of cairn's hot calls, counted by valgrind's
callgrind (deterministic) on bench/cpu_cost.c: 1-byte cached read, 4 KiB read,
4 KiB write, open of a cached and of an uncached path, stat. The simulator's
own work (the device callbacks) is left out of the counts."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import common  # noqa: E402
from bench.scenarios.common import figure, result  # noqa: E402

ID = "cpu-cost"
TITLE = "CPU instructions per call of the hot calls (callgrind)"
# (measure, calls, label)
MEASURES = [
    ("read1", 10_000, "1-byte read of a cached page"),
    ("read4k", 1_000, "4 KiB read"),
    ("write4k", 200, "4 KiB write"),
    ("open_cached", 1_000, "open of a cached path (3 levels)"),
    ("open_uncached", 50, "open of an uncached path (first open after a mount)"),
    ("stat", 1_000, "stat of a cached path"),
]


def driver() -> Path | None:
    lib = Path(str(common.cairn._ffi.lib_path)).resolve()
    for cand in (lib.parent.parent / "bench" / "cpu_cost",
                 common.ROOT / "build-release" / "bench" / "cpu_cost"):
        if cand.is_file() and os.access(cand, os.X_OK):
            return cand
    return None


def count(drv: Path, what: str, n: int, tmp: str) -> tuple[int, int]:
    out = os.path.join(tmp, f"cg.{what}")
    p = subprocess.run(
        ["valgrind", "--tool=callgrind", "--collect-atstart=no",
         f"--callgrind-out-file={out}", str(drv), what, str(n)],
        capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"cpu_cost {what}: exit {p.returncode}: {p.stderr[-500:]}")
    calls = int(re.search(r"calls (\d+)", p.stdout).group(1))
    if "callgrind 1" not in p.stdout:
        raise RuntimeError("bench/cpu_cost was built without valgrind/callgrind.h "
                           "(install valgrind and rebuild)")
    txt = Path(out).read_text()
    m = re.search(r"^(?:totals|summary): (\d+)", txt, re.M)
    return int(m.group(1)), calls


def run() -> dict:
    t0 = time.perf_counter()
    drv = driver()
    figs, notes, raw = {}, [], {}
    missing = None
    if shutil.which("valgrind") is None:
        missing = "valgrind is not installed (apt-get install valgrind)"
    elif drv is None:
        missing = "bench/cpu_cost was not built (it is built with the release build)"
    if missing:
        for _, _, label in MEASURES:
            figs[label] = figure("not measured", "", note=missing)
        return result(ID, TITLE, figs, notes=[missing])
    with tempfile.TemporaryDirectory(prefix="cairn-cg-") as tmp:
        for what, n, label in MEASURES:
            ir, calls = count(drv, what, n, tmp)
            raw[what] = {"instructions": ir, "calls": calls}
            figs[label] = figure(round(ir / calls), "instructions per call",
                                 note=f"{calls:,} calls")
    notes += [
        f"Driver: {drv} (bench/cpu_cost.c, the release build's compiler options), x86-64 "
        "instructions (callgrind's Ir), not Cortex-M cycles; the ratio between calls is what "
        "carries over.",
        "Volume: nor-w25q128, 4 MiB, 16 KiB logical blocks, default config; 64 files in "
        "/www/static (one of 64 KiB, the rest 2 KiB), unmounted and mounted before measuring.",
        "Each measured call is made with callgrind's collection switched on around it "
        "(client requests, CALLGRIND_TOGGLE_COLLECT; the count includes those few "
        "instructions) and off inside the device callbacks (fwd_*, which forward to the "
        "simulator), so neither the simulated flash's work nor the setup is counted. "
        "1-byte read: seek to the same page, then read 1 byte (seek not counted). "
        "Uncached open: unmount + mount before each open (not counted).",
        "The seed's figures (spiffs) are wall-clock, not instruction counts: no comparison.",
        "littlefs: not measured (its CPU cost would need the same driver against its C "
        "sources; the littlefs-python package only ships a compiled extension)."]
    return result(ID, TITLE, figs, params={"wall seconds": round(time.perf_counter() - t0, 2)},
                  notes=notes, raw=raw)


if __name__ == "__main__":
    common.main(sys.modules[__name__])
