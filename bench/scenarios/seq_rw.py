"""seq-rw (Dhara seed): on a fresh nand-dhara, 4,000 KB written sequentially in
2 KiB writes and synced, caches dropped (remount), read back in 2 KiB reads;
once through a file and once through cairn's sector interface (cairn_bd_*)."""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import _lfs, common  # noqa: E402
from bench.scenarios.common import cairn, ffi, figure, lib, result  # noqa: E402

ID = "seq-rw"
TITLE = "4,000 KB sequential write and read in 2 KiB pieces (nand-dhara)"
MODEL = "nand-dhara"
KB = 1000                      # the seed's KB/s are 1000-byte units (987 = 2048 B / 2.075 ms)
TOTAL = 4000 * 1024            # "4,000 KB" of 1 KiB blocks: 2,000 pieces of 2 KiB
PIECE = 2048
SEED = {"raw_w": 987, "raw_r": 1998, "dhara_w": 620, "dhara_r": 271}


def data() -> bytes:
    return random.Random(4).randbytes(TOTAL)


BPLS = (1, 2, 4, 8)
SMALLEST = common.smallest_cairn_config(max_open=1)  # one file open at a time


def make_fs(**config):
    """An aged nand-dhara formatted and mounted with the smallest
    blocks_per_lblock cairn accepts (BPLS) and cairn config `config`."""
    return common.cairn_smallest_bpl(MODEL, BPLS, config, seed=1)


def run_file(blob: bytes, **config) -> dict:
    sim, fs, bpl, fmt_c, refused = make_fs(**config)
    with sim:
        ram = fs.ram_bytes
        src = ffi.from_buffer(blob)
        sim.reset_counters()
        f = fs.open("/seq", "w")
        ctx, fd = fs._ctx, f._fd
        for off in range(0, TOTAL, PIECE):
            if lib.cairn_write(ctx, fd, src + off, PIECE) != PIECE:
                raise RuntimeError("seq-rw: write failed")
        if lib.cairn_file_sync(ctx, fd) < 0:
            raise RuntimeError("seq-rw: sync failed")
        w = sim.counters()
        f.close()
        fs.remount()
        f = fs.open("/seq", "r")
        ctx, fd = fs._ctx, f._fd
        buf = ffi.new("uint8_t[]", TOTAL)
        sim.reset_counters()
        for off in range(0, TOTAL, PIECE):
            if lib.cairn_read(ctx, fd, buf + off, PIECE) != PIECE:
                raise RuntimeError("seq-rw: read failed")
        r = sim.counters()
        f.close()
        fs.unmount()
        if bytes(ffi.buffer(buf)) != blob:
            raise RuntimeError("seq-rw: data read back differs")
    return {"w": w.as_dict(), "r": r.as_dict(), "ram": ram, "bpl": bpl, "format": fmt_c,
            "refused": refused}


def run_bd(blob: bytes) -> dict:
    sim, fs, _, _, _ = make_fs()
    with sim:
        n = TOTAL // PIECE
        bd = fs.block_device("/disk", PIECE, n)
        src = ffi.from_buffer(blob)
        sim.reset_counters()
        for s in range(n):
            rc = lib.cairn_bd_write(bd._bd, s, src + s * PIECE, 1)
            if rc < 0:
                raise cairn.Error.from_code(rc, op="bd_write")
        bd.sync()
        w = sim.counters()
        bd.close()
        fs.remount()
        bd = fs.block_device("/disk", PIECE, n)
        buf = ffi.new("uint8_t[]", TOTAL)
        sim.reset_counters()
        for s in range(n):
            rc = lib.cairn_bd_read(bd._bd, s, buf + s * PIECE, 1)
            if rc < 0:
                raise cairn.Error.from_code(rc, op="bd_read")
        r = sim.counters()
        bd.close()
        fs.unmount()
        if bytes(ffi.buffer(buf)) != blob:
            raise RuntimeError("seq-rw: sector data read back differs")
    return {"w": w.as_dict(), "r": r.as_dict()}


def run_lfs(blob: bytes, cfg) -> dict:
    L = _lfs.lfs_module()
    with common.new_sim(MODEL, seed=1) as sim:
        fs, fmt_c = common.format_mount_lfs(sim, cfg)
        sim.reset_counters()
        fh = L.file_open(fs.lfs, "/seq", _lfs.O_W)
        for off in range(0, TOTAL, PIECE):
            L.file_write(fs.lfs, fh, blob[off:off + PIECE])
        L.file_sync(fs.lfs, fh)
        w = sim.counters()
        L.file_close(fs.lfs, fh)
        fs.remount()
        fh = L.file_open(fs.lfs, "/seq", _lfs.O_R)
        sim.reset_counters()
        parts = [L.file_read(fs.lfs, fh, PIECE) for _ in range(TOTAL // PIECE)]
        r = sim.counters()
        L.file_close(fs.lfs, fh)
        if b"".join(parts) != blob:
            raise RuntimeError("littlefs seq-rw: data differs")
    return {"w": w.as_dict(), "r": r.as_dict(), "time_ns": w.time_ns + r.time_ns,
            "format": fmt_c}


def kbps(c) -> float:
    return TOTAL / KB / (c["time_ns"] / 1e9)


def run() -> dict:
    t0 = time.perf_counter()
    blob = data()
    raw_w = common.raw_write_bytes_per_s(MODEL) / KB
    raw_r = common.raw_read_bytes_per_s(MODEL) / KB
    figs, notes, rawd = {}, [], {}
    f = run_file(blob)
    rawd["file"] = f
    notes += f["refused"]
    lb = lcfg = None
    if _lfs.available():
        lb, lcfg, tried = _lfs.best(lambda c: run_lfs(blob, c), 2048)
        rawd["littlefs"] = tried
        notes.append(common.lfs_note(lcfg, tried, "time_ns", "ms (write + read)", 1e-6))
    k, v = common.format_figure("", f["format"], None if lb is None else lb["format"])
    figs[k] = v
    k, v = common.total_figure("", f["format"], f["w"], None if lb is None else lb["format"],
                               None if lb is None else lb["w"],
                               what="format + mount + the measured write")
    figs[k] = v
    bd = None
    if cairn.has_feature("bd"):
        bd = run_bd(blob)
        rawd["bd"] = bd
    for label, d, lfs_ok in (("file", f, True), ("sector interface", bd, False)):
        p = f"through the {label}: "
        if d is None:
            for what in ("write", "read"):
                figs[p + f"{what} speed / raw"] = figure(
                    "not available in this build", "", target=">= 0.85" if what == "write"
                    else ">= 0.90", met=None,
                    note="the library has no cairn_bd_open")
            continue
        wk, rk = kbps(d["w"]), kbps(d["r"])
        lw = lr = None
        if lfs_ok and lb is not None:
            lw, lr = f"{kbps(lb['w']):,.0f} KB/s", f"{kbps(lb['r']):,.0f} KB/s"
        elif not lfs_ok:
            lw = lr = "littlefs has no sector interface"
        figs[p + "write speed"] = figure(round(wk), "KB/s", raw=f"{raw_w:,.0f} KB/s",
                                         seed=f"{SEED['dhara_w']} KB/s (Dhara; raw "
                                         f"{SEED['raw_w']})", lfs=lw)
        figs[p + "read speed"] = figure(round(rk), "KB/s", raw=f"{raw_r:,.0f} KB/s",
                                        seed=f"{SEED['dhara_r']} KB/s (Dhara; raw "
                                        f"{SEED['raw_r']})", lfs=lr)
        figs[p + "write speed / raw"] = figure(
            round(wk / raw_w, 4), "", target=">= 0.85", met=wk / raw_w >= 0.85, raw="1.0",
            seed=f"{SEED['dhara_w'] / SEED['raw_w']:.3f}",
            lfs=f"{kbps(lb['w']) / raw_w:.4f}" if lfs_ok and lb else None)
        figs[p + "read speed / raw"] = figure(
            round(rk / raw_r, 4), "", target=">= 0.90", met=rk / raw_r >= 0.90, raw="1.0",
            seed=f"{SEED['dhara_r'] / SEED['raw_r']:.3f}",
            lfs=f"{kbps(lb['r']) / raw_r:.4f}" if lfs_ok and lb else None)
        figs[p + "device operations (write; read)"] = figure(
            f"{common.ops(d['w']):,}; {common.ops(d['r']):,}", "",
            raw=f"{TOTAL // 2048:,}; {TOTAL // 2048:,} (one per page)",
            lfs=f"{common.ops(lb['w']):,}; {common.ops(lb['r']):,}" if lfs_ok and lb else None)
        if lfs_ok and lb is not None:
            tot = {k: d["w"][k] + d["r"][k] for k in d["w"]}
            ltot = {k: lb["w"][k] + lb["r"][k] for k in lb["w"]}
            k, v = common.beats_figure(tot, ltot, p)
            figs[k] = v
    small = run_file(blob, **SMALLEST)
    rawd["file, smallest config"] = small
    k, v = common.ram_figure("", f["ram"], lcfg, 1, small["ram"])
    figs[k] = v
    both = {k: small["w"][k] + small["r"][k] for k in small["w"]}
    lboth = None if lb is None else {k: lb["w"][k] + lb["r"][k] for k in lb["w"]}
    k, v = common.matched_figure("", both, small["ram"], v["ram"]["lfs"], lboth,
                                 "write + read through the file")
    figs[k] = v
    notes += [
        f"{MODEL}, aged, whole device (128 MiB), default config with blocks_per_lblock="
        f"{f['bpl']} (the smallest cairn accepts of {', '.join(map(str, BPLS))}).",
        common.RAM_TEXT + f" The smallest-RAM row writes and reads again with cairn config "
        f"{SMALLEST}.",
        "Write = 2,000 writes of 2 KiB + sync; read (after a remount) = 2,000 reads of "
        "2 KiB; data compared. KB = 1000 B, as the seed's figures.",
        "Sector interface: cairn_bd_open(\"/disk\", 2048-byte sectors, 2,000 sectors), one "
        "sector per call." if bd else
        "Sector interface: not available in this build (no cairn_bd_open in the library).",
        "littlefs: no sector interface (it is a file system, not a block device layer).",
        "Raw device limit: whole pages programmed at 2,075 us each plus one 3 ms erase per "
        "64 pages (the aged device holds old data everywhere); pages read at 950 us + "
        "2 KiB / 27 MB/s each (cost table).",
        "Write counters: the open, the writes and the sync, for both file systems; read "
        "counters: the reads (opened before); format + mount are the format row.",
        common.AGING_TEXT, common.TIME_NOTE]
    return result(ID, TITLE, figs, params={"model": MODEL, "bytes": TOTAL, "piece": PIECE,
                                           "wall seconds": round(time.perf_counter() - t0, 2)},
                  notes=notes, raw=rawd)


if __name__ == "__main__":
    common.main(sys.modules[__name__])
