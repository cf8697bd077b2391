"""chunk-read (spiffs seed): a 512 KiB file on nor-m25p16 read whole with
chunk sizes 1, 2, 4, ... 1024 bytes after a remount."""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import common  # noqa: E402
from bench.scenarios import _lfs  # noqa: E402
from bench.scenarios.common import cairn, ffi, figure, lib, result  # noqa: E402

ID = "chunk-read"
TITLE = "512 KiB file read whole in chunks of 1..1024 bytes (nor-m25p16)"
MODEL = "nor-m25p16"
FILE = 512 * 1024
CHUNKS = [1 << i for i in range(11)]
SEED = {1: 27_064, 1024: 856_680}


SMALLEST = common.smallest_cairn_config(max_open=1)  # one file open at a time


def make_fs(sim_args, config: dict | None = None):
    """An aged device formatted and mounted (cairn config `config`) with
    blocks_per_lblock=1, else 2 (the spec allows either). Returns (sim, bpl,
    the refusal, FS, format counters)."""
    last = None
    for bpl in (1, 2):
        sim = common.new_sim(MODEL, blocks_per_lblock=bpl, seed=1, **sim_args)
        try:
            fs, fmt_c = common.format_mount_cairn(sim, **(config or {}))
            return sim, bpl, last, fs, fmt_c
        except cairn.Error as e:
            last = f"blocks_per_lblock={bpl} refused: {e}"
            sim.close()
    raise RuntimeError(last)


def raw_speed(sim) -> tuple[float, float, int]:
    """Raw read: 512 KiB with one device read per 64 KiB erase block.
    Returns (measured B/s, B/s from the cost table, read calls)."""
    geo = sim.geometry
    bs = geo.block_size
    sim.reset_counters()
    for b in range(FILE // bs):
        rc, _ = sim.dev_read(b * geo.pages_per_block, 0, bs)
        if rc != 0:
            raise RuntimeError(f"dev_read block {b}: {rc}")
    c = sim.counters()
    cost = cairn.Sim.model_info(MODEL).cost
    t_table = (FILE // bs) * (cost.read_setup_ns / 1e9 + bs / cost.read_bytes_per_s)
    return FILE / (c.time_ns / 1e9), FILE / t_table, c.read_calls


def run_lfs(data, cfg) -> dict:
    """littlefs: the same file, remount, each chunk size read to the end."""
    L = _lfs.lfs_module()
    rows = {}
    with common.new_sim(MODEL, seed=1) as sim:
        fs, fmt_c = common.format_mount_lfs(sim, cfg)
        fh = L.file_open(fs.lfs, "/big", _lfs.O_W)
        L.file_write(fs.lfs, fh, data)
        L.file_close(fs.lfs, fh)
        fs.remount()
        lfs = fs.lfs
        for n in CHUNKS:
            fh = L.file_open(lfs, "/big", _lfs.O_R)
            rd = L.file_read
            sim.reset_counters()
            got = 0
            parts = [] if n in (1, CHUNKS[-1]) else None
            while True:
                b = rd(lfs, fh, n)
                if not b:
                    break
                got += len(b)
                if parts is not None:
                    parts.append(b)
            c = sim.counters()
            L.file_close(lfs, fh)
            if got != FILE or (parts is not None and b"".join(parts) != data):
                raise RuntimeError(f"littlefs chunk {n}: read {got} bytes / content differs")
            rows[n] = {"bytes_per_s": FILE / (c.time_ns / 1e9), "read_calls": c.read_calls,
                       "read_bytes": c.read_bytes, "time_ns": c.time_ns}
    return {"time_ns": sum(r["time_ns"] for r in rows.values()), "rows": rows,
            "format": fmt_c}


def run_cairn(data: bytes, config: dict | None = None) -> dict:
    """cairn (cairn config `config`): the file written, the volume remounted,
    then one pass per chunk size; the raw read speed of the same device."""
    sim, bpl, refused, fs, fmt_c = make_fs({}, config)
    with sim:
        ram = fs.ram_bytes
        fs.write_file("/big", data)
        fs.unmount()
        fs.mount()
        rows = {}
        for n in CHUNKS:
            f = fs.open("/big", "r")
            ctx, fd = fs._ctx, f._fd
            buf = ffi.new("uint8_t[]", n)
            read = lib.cairn_read
            sim.reset_counters()
            got = 0
            calls = 0
            if n == CHUNKS[-1] or n == 1:
                out = bytearray()
            else:
                out = None
            while True:
                r = read(ctx, fd, buf, n)
                if r < 0:
                    raise cairn.Error.from_code(r, op="read", path="/big")
                if r == 0:
                    break
                calls += 1
                got += r
                if out is not None:
                    out += ffi.buffer(buf, r)
            c = sim.counters()
            f.close()
            if got != FILE or (out is not None and bytes(out) != data):
                raise RuntimeError(f"chunk {n}: read {got} bytes / content differs")
            rows[n] = {"bytes_per_s": FILE / (c.time_ns / 1e9) if c.time_ns else float("inf"),
                       "read_calls": c.read_calls, "read_bytes": c.read_bytes,
                       "time_ns": c.time_ns, "fs_read_calls": calls}
        fs.unmount()
        raw, raw_table, raw_calls = raw_speed(sim)
    return {"rows": rows, "ram": ram, "format": fmt_c, "bpl": bpl, "refused": refused,
            "raw": (raw, raw_table, raw_calls)}


def totals(rows: dict) -> dict:
    """The read passes added up (common.beats_figure's keys)."""
    return {"time_ns": sum(r["time_ns"] for r in rows.values()),
            "read_calls": sum(r["read_calls"] for r in rows.values()),
            "prog_calls": 0, "erases": 0}


def run() -> dict:
    t0 = time.perf_counter()
    data = random.Random(1).randbytes(FILE)
    lb, lcfg, ltried = None, None, {}
    if _lfs.available():
        lb, lcfg, ltried = _lfs.best(lambda c: run_lfs(data, c), 256)
    lrows = lb["rows"] if lb else {}
    cr = run_cairn(data)
    small = run_cairn(data, SMALLEST)
    rows, ram, fmt_c, bpl, refused = cr["rows"], cr["ram"], cr["format"], cr["bpl"], \
        cr["refused"]
    raw, raw_table, raw_calls = cr["raw"]
    figs = dict([common.format_figure("", fmt_c, None if lb is None else lb["format"])])
    for n, r in rows.items():
        figs[f"{n} B chunks: modelled throughput"] = figure(
            round(r["bytes_per_s"]), "B/s",
            seed=f"{SEED[n]:,} B/s" if n in SEED else None, raw=f"{raw:,.0f} B/s",
            lfs=f"{lrows[n]['bytes_per_s']:,.0f} B/s" if n in lrows else None)
    for n, r in rows.items():
        figs[f"{n} B chunks: device read calls"] = figure(
            r["read_calls"], "", note=f"{r['read_bytes']} bytes read",
            raw=f"{FILE // 65536} ({FILE:,} bytes)",
            lfs=f"{lrows[n]['read_calls']:,} ({lrows[n]['read_bytes']:,} bytes)"
            if n in lrows else None)
    l_tot = None
    if lb is not None:
        l_tot = totals(lrows)
        k, v = common.beats_figure(totals(rows), l_tot, "all chunk sizes: ")
        figs[k] = v
    t1, t1k = rows[1]["bytes_per_s"], rows[1024]["bytes_per_s"]
    figs["1 B throughput / 1 KiB throughput"] = figure(
        round(t1 / t1k, 4), "", seed=f"{27064 / 856680:.4f}", target=">= 0.90",
        met=t1 / t1k >= 0.90, raw="1.0",
        lfs=f"{lrows[1]['bytes_per_s'] / lrows[1024]['bytes_per_s']:.4f}" if lrows else None)
    figs["1 KiB throughput / raw"] = figure(
        round(t1k / raw, 4), "", seed=f"{856680 / raw:.4f}", target=">= 0.90",
        met=t1k / raw >= 0.90, raw="1.0",
        lfs=f"{lrows[1024]['bytes_per_s'] / raw:.4f}" if lrows else None)
    figs["raw read speed of the model (one read per 64 KiB block)"] = figure(
        round(raw), "B/s", note=f"cost table: {raw_table:,.0f} B/s; {raw_calls} reads")
    k, v = common.ram_figure("", ram, lcfg, 1, small["ram"])
    figs[k] = v
    k, v = common.matched_figure("", totals(small["rows"]), small["ram"], v["ram"]["lfs"],
                                 l_tot, "all chunk sizes")
    figs[k] = v
    notes = [f"{MODEL}, 2 MiB, blocks_per_lblock={bpl}"
             + (f" ({refused})" if refused else "") + ".",
             "The file is written, the volume unmounted and mounted again, then for each "
             "chunk size the file is reopened, counters reset, and read to the end; "
             "the 1 B and 1 KiB passes are compared with the written data.",
             common.RAM_TEXT + f" The smallest-RAM row reads again with cairn config "
             f"{SMALLEST}.",
             common.AGING_TEXT,
             "Throughput = 512 KiB / modelled read time of the pass. "
             + common.TIME_NOTE + " The seed's figures are wall-clock on real hardware "
             "and include CPU time."]
    return result(ID, TITLE, figs,
                  params={"model": MODEL, "blocks_per_lblock": bpl, "file bytes": FILE,
                          "wall seconds": round(time.perf_counter() - t0, 2)},
                  notes=notes + ([common.lfs_note(lcfg, ltried, "time_ns", "s (all passes)",
                                                  1e-9)] if ltried else
                                 [f"littlefs not run: {_lfs.LFS_ERROR}"]),
                  raw={"passes": {str(k): v for k, v in rows.items()},
                       "littlefs_passes": {str(k): v for k, v in lrows.items()},
                                    "raw_bytes_per_s": raw,
                                    "raw_table_bytes_per_s": raw_table})


if __name__ == "__main__":
    common.main(sys.modules[__name__])


def plot(res, out) -> list:
    """Read speed vs chunk size: cairn, littlefs, the raw device and the seed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    raw = res["raw"]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    xs = [int(k) for k in raw["passes"]]
    ax.plot(xs, [raw["passes"][str(x)]["bytes_per_s"] / 1e3 for x in xs], "o-", label="cairn")
    lp = raw.get("littlefs_passes") or {}
    if lp:
        ax.plot(xs, [lp[str(x)]["bytes_per_s"] / 1e3 for x in xs], "s-", label="littlefs (best)")
    ax.axhline(raw["raw_bytes_per_s"] / 1e3, color="gray", ls="--", label="raw device")
    ax.plot(list(SEED), [v / 1e3 for v in SEED.values()], "x", color="red", ms=9,
            label="seed (spiffs, real HW)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("chunk size (bytes)")
    ax.set_ylabel("modelled read speed (KB/s)")
    ax.set_title("chunk-read: 512 KiB file on nor-m25p16")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fn = "chunk-read.png"
    fig.tight_layout()
    fig.savefig(out / fn, dpi=90)
    plt.close(fig)
    return [("read speed vs chunk size", fn)]
