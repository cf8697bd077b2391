"""fib (spiffs seed): 1,000,000 writes of 4 bytes to one file on nor-w25q128,
then close. Write amplification = bytes programmed / 4,000,000."""
from __future__ import annotations

import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import common  # noqa: E402
from bench.scenarios import _lfs  # noqa: E402
from bench.scenarios.common import cairn, ffi, figure, lib, result  # noqa: E402

ID = "fib"
TITLE = "1,000,000 writes of 4 bytes to one file (nor-w25q128)"
MODEL = "nor-w25q128"
BPL = 16
WRITES = 1_000_000
SIZE = 4


def run_lfs(cfg, aged: bool = True) -> dict:
    """littlefs: format + mount (counted apart), then open, the writes, close."""
    L = _lfs.lfs_module()
    with common.new_sim(MODEL, aged, seed=1) as sim:
        fs, fmt_c = common.format_mount_lfs(sim, cfg)
        lfs = fs.lfs
        sim.reset_counters()
        fh = L.file_open(lfs, "/fib", _lfs.O_W)
        w, b = L.file_write, b"\x01\x01\x02\x03"
        for _ in range(WRITES):
            w(lfs, fh, b)
        L.file_close(lfs, fh)
        c = sim.counters()
        if L.stat(lfs, "/fib").size != WRITES * SIZE:
            raise RuntimeError("littlefs fib: wrong size")
    return dict(c.as_dict(), format=fmt_c)


SMALLEST = common.smallest_cairn_config(max_open=1)  # one file open


def run_cairn(aged: bool = True, **config) -> dict:
    """cairn (config `config`): format + mount (counted apart), then open, the
    writes, close."""
    with common.new_sim(MODEL, aged, blocks_per_lblock=BPL, seed=1) as sim:
        fs, fmt_c = common.format_mount_cairn(sim, **config)
        ram = fs.ram_bytes
        sim.reset_counters()
        f = fs.open("/fib", "w")
        # Tight loop straight into the C API with one preallocated buffer:
        # File.write would add a cffi buffer per call.
        ctx, fd = fs._ctx, f._fd
        buf = ffi.new("uint8_t[]", b"\x01\x01\x02\x03")
        write = lib.cairn_write
        bad = 0
        for _ in range(WRITES):
            if write(ctx, fd, buf, SIZE) != SIZE:
                bad += 1
        if bad:
            raise RuntimeError(f"fib: {bad} short or failed writes")
        f.close()
        c = sim.counters()
        size = fs.stat("/fib").size
        fs.unmount()
    if size != WRITES * SIZE:
        raise RuntimeError(f"fib: file size {size} != {WRITES * SIZE}")
    return dict(c.as_dict(), format=fmt_c, ram=ram)


def fresh_text(c: dict, lf: dict | None, fn) -> str:
    """The fresh column: cairn / littlefs on the pre-erased device."""
    return fn(c) + ("" if lf is None else " / " + fn(lf))


def run() -> dict:
    t0 = time.perf_counter()
    lb, lcfg, ltried = (None, None, {})
    if _lfs.available():
        lb, lcfg, ltried = _lfs.best(run_lfs, 256)
    c = run_cairn()
    cf = run_cairn(aged=False)
    lbf = run_lfs(lcfg, aged=False) if lcfg else None
    ram = c["ram"]
    total = WRITES * SIZE
    wa = c["prog_bytes"] / total
    raw_s = common.raw_prog_seconds(MODEL, total)
    raw_fresh_s = common.raw_prog_seconds(MODEL, total, aged=False)
    blocks = -(-total // 4096)

    def lf(key):
        return None if lb is None else lb[key]

    def fr(fn):
        return fresh_text(cf, lbf, fn)
    figs = dict([common.format_figure(
        "", c["format"], None if lb is None else lb["format"], cf["format"],
        None if lbf is None else lbf["format"])])
    figs.update({
        "write amplification (bytes programmed / 4,000,000)": figure(
            round(wa, 4), "x", seed="\"would wear the flash extremely\" (no write cache)",
            target="<= 1.05", met=wa <= 1.05, raw="1.0 x",
            lfs=None if lb is None else f"{lb['prog_bytes'] / total:.4f} x",
            fresh=fr(lambda d: f"{d['prog_bytes'] / total:.4f} x")),
        "bytes programmed": figure(c["prog_bytes"], "B", raw=f"{total:,} B",
                                   lfs=lf("prog_bytes"), fresh=fr(lambda d: f"{d['prog_bytes']:,}")),
        "page programs": figure(c["prog_pages"], raw=f"{total // 256:,}", lfs=lf("prog_pages"),
                                fresh=fr(lambda d: f"{d['prog_pages']:,}")),
        "erases": figure(c["erases"], raw=f"{blocks:,} (one per erase block written)",
                         lfs=lf("erases"), fresh=fr(lambda d: f"{d['erases']:,}")),
        "device reads": figure(c["read_calls"], raw="0", lfs=lf("read_calls"),
                               fresh=fr(lambda d: f"{d['read_calls']:,}")),
        "device operations (read + program calls + erases)": figure(
            common.ops(c), raw=f"{2 * blocks:,} (one erase and one program per erase block)",
            lfs=None if lb is None else common.ops(lb),
            fresh=fr(lambda d: f"{common.ops(d):,}")),
        "modelled time": figure(
            round(c["time_ns"] / 1e9, 3), "s",
            raw=f"{raw_s:.3f} s (fresh device: {raw_fresh_s:.3f} s)",
            lfs=None if lb is None else f"{lb['time_ns'] / 1e9:.3f} s",
            fresh=fr(lambda d: f"{d['time_ns'] / 1e9:.3f} s")),
        "modelled time per write": figure(
            round(c["time_ns"] / WRITES / 1e3, 3), "us", raw=f"{raw_s / WRITES * 1e6:.3f} us",
            lfs=None if lb is None else f"{lb['time_ns'] / WRITES / 1e3:.3f} us",
            fresh=fr(lambda d: f"{d['time_ns'] / WRITES / 1e3:.3f} us")),
    })
    k, v = common.total_figure(
        "", c["format"], c, lf("format"), lb,
        common.total_fresh_text(cf["format"], cf, None if lbf is None else lbf["format"], lbf))
    figs[k] = v
    if lb is not None:
        k, v = common.beats_figure(c, lb)
        v["fresh"] = "yes" if common.beats_figure(cf, lbf)[1]["value"] else "no"
        figs[k] = v
    small = run_cairn(**SMALLEST)
    k, v = common.ram_figure("", ram, lcfg, 1, small["ram"])
    figs[k] = v
    k, v = common.matched_figure("", small, small["ram"], v["ram"]["lfs"], lb, "the run")
    figs[k] = v
    return result(ID, TITLE, figs,
                  params={"model": MODEL, "volume": "16 MiB (full device)",
                          "blocks_per_lblock": BPL, "writes": WRITES, "write size": SIZE,
                          "wall seconds": round(time.perf_counter() - t0, 2)},
                  notes=["Counters cover the open, the writes and the close, for both file "
                         "systems (format and mount are the format row).",
                         common.AGING_TEXT, common.FRESH_TEXT, common.TIME_NOTE,
                         common.RAM_TEXT, f"The smallest-RAM row runs again with cairn "
                         f"config {SMALLEST} on the aged device.",
                         "Raw device limit: 4,000,000 B programmed in whole erase blocks, "
                         "one program call per block, each block erased first (the aged "
                         "device holds old data everywhere; cost table)."]
                  + ([common.lfs_note(lcfg, ltried, "time_ns", "s", 1e-9)] if ltried else
                     [f"littlefs not run: {_lfs.LFS_ERROR}"]),
                  raw={"cairn": c, "cairn fresh": cf, "littlefs": ltried,
                       "littlefs fresh": lbf})


if __name__ == "__main__":
    common.main(sys.modules[__name__])
