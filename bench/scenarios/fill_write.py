"""fill-write (spiffs seed): a 1 MiB volume on nor-m25p16 filled to about 80%
with files of mixed sizes, about half of them deleted, then 100,000 bytes
written to a new file in 256 B writes; the same on a freshly formatted volume.
Second row: the whole 2 MiB chip at 80%."""
from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import _lfs, common  # noqa: E402
from bench.scenarios.common import cairn, ffi, figure, lib, result  # noqa: E402

ID = "fill-write"
TITLE = "100,000 B in 256 B writes at 80% full vs fresh (nor-m25p16)"
MODEL = "nor-m25p16"
TOTAL = 100_000
W = 256
LEVEL = 0.80
SEED = (1384, 6330)
VOLUMES = [("1 MiB volume", 16), ("whole 2 MiB chip", 32)]


def file_sizes(rng, budget: int) -> list[int]:
    """Mixed sizes (many small, some large) adding up to budget."""
    out, s = [], 0
    while s < budget:
        n = rng.choice([rng.randint(200, 2000)] * 3 + [rng.randint(2000, 16000)] * 2
                       + [rng.randint(16000, 60000)])
        n = min(n, budget - s)
        out.append(n)
        s += n
    return out


GIVE_UP = 5  # consecutive refused files that end a fill (smaller ones may still fit)


def fill_cairn(fs, volume: int, level: float):
    """Writes files until level * volume bytes of file data are stored or the
    volume refuses GIVE_UP files in a row (NOSPC). Returns (names, bytes stored)."""
    rng = random.Random(11)
    names, stored, refused = [], 0, 0
    for i, n in enumerate(file_sizes(rng, int(volume * level))):
        p = f"/f{i:04d}"
        data = rng.randbytes(n)
        try:
            with fs.open(p, "w") as f:
                f.write(data)
        except cairn.NoSpaceError:
            try:
                fs.remove(p)
            except cairn.Error:
                pass
            refused += 1
            if refused >= GIVE_UP:
                break
            continue
        refused = 0
        names.append(p)
        stored += n
    return names, stored


def write_probe(sim, write_one) -> tuple[list[float], int]:
    """TOTAL bytes in W-byte writes; per-write modelled latency (ms)."""
    lat = []
    t_start = sim.time_ns
    last = t_start
    for _ in range(TOTAL // W + (1 if TOTAL % W else 0)):
        write_one()
        now = sim.time_ns
        lat.append((now - last) / 1e6)
        last = now
    return lat, t_start


def run_cairn(blocks: int, level: float | None) -> dict:
    with cairn.Sim(MODEL, block_count=blocks, seed=1) as sim:
        cairn.format(sim)
        fs = cairn.mount(sim)
        volume = blocks * sim.geometry.block_size
        stored = 0
        if level:
            names, stored = fill_cairn(fs, volume, level)
            for p in names[::2]:
                fs.remove(p)
            fs.sync()
        kept = fs.fs_stat()
        try:
            f = fs.open("/new", "w")
        except cairn.Error as e:
            ram = fs.ram_bytes
            fs.unmount()
            return {"level": stored / volume, "stored": stored, "lat_ms": [], "time_ns": None,
                    "counters": None, "failed": [f"open of the new file failed: {e.name} "
                                                 f"with {kept.free_bytes:,} B reported free"],
                    "free_after_fill": kept.free_bytes, "ram": ram}
        ctx, fd = fs._ctx, f._fd
        buf = ffi.new("uint8_t[]", random.Random(5).randbytes(W))
        err = []

        def one():
            if not err:
                r = lib.cairn_write(ctx, fd, buf, W)
                if r != W:
                    err.append(r)
        sim.reset_counters()
        lat, t0 = write_probe(sim, one)
        t_close = sim.time_ns
        try:
            f.close()
        except cairn.Error as e:
            err.append(f"close: {e.name}")
        c = sim.counters()
        lat.append((c.time_ns - t_close) / 1e6)  # the close (its sync) as a last step
        ram = fs.ram_bytes
        fs.unmount()
    fails = [f"a 256 B write returned {e}" if isinstance(e, int) else e for e in err[:1]]
    return {"level": stored / volume, "stored": stored, "lat_ms": lat,
            "time_ns": c.time_ns, "counters": c.as_dict(), "failed": fails,
            "free_after_fill": kept.free_bytes, "ram": ram}


def run_lfs(blocks: int, level: float | None, cfg) -> dict:
    L = _lfs.lfs_module()
    with cairn.Sim(MODEL, block_count=blocks, seed=1) as sim:
        fs = _lfs.LfsFS(sim, **cfg)
        lfs = fs.lfs
        volume = blocks * sim.geometry.block_size
        stored, names, refused = 0, [], 0
        if level:
            rng = random.Random(11)
            for i, n in enumerate(file_sizes(rng, int(volume * level))):
                p = f"/f{i:04d}"
                data = rng.randbytes(n)
                if not _lfs.write_file(lfs, p, data):  # NOSPC: as for cairn
                    refused += 1
                    if refused >= GIVE_UP:
                        break
                    continue
                refused = 0
                names.append(p)
                stored += n
            for p in names[::2]:
                L.remove(lfs, p)
        fh = L.file_open(lfs, "/new", _lfs.O_W)
        b = random.Random(5).randbytes(W)
        err = []

        def one():
            if not err:
                try:
                    L.file_write(lfs, fh, b)
                except Exception as e:  # noqa: BLE001
                    err.append(str(e))
        sim.reset_counters()
        lat, t0 = write_probe(sim, one)
        t_close = sim.time_ns
        try:
            L.file_close(lfs, fh)
        except Exception as e:  # noqa: BLE001
            err.append(str(e))
        c = sim.counters()
        lat.append((c.time_ns - t_close) / 1e6)
    if err:
        raise RuntimeError(f"littlefs: the 100,000-byte file failed: {err[0]}")
    return {"level": stored / volume, "stored": stored, "lat_ms": lat, "time_ns": c.time_ns,
            "counters": c.as_dict()}


def stats(r) -> dict:
    lat = r["lat_ms"]
    s = sorted(lat)
    return {"Bps": TOTAL / (r["time_ns"] / 1e9), "median": statistics.median(lat),
            "p99": s[int(len(s) * 0.99) - 1], "max": s[-1]}


def run() -> dict:
    t0 = time.perf_counter()
    figs, notes, raw = {}, [], {}
    raw_Bps = common.raw_write_bytes_per_s(MODEL)
    for vname, blocks in VOLUMES:
        fresh = run_cairn(blocks, None)
        full = run_cairn(blocks, LEVEL)
        p = f"{vname} (cairn filled to {full['level'] * 100:.0f}%): "
        raw[vname] = {"fresh": fresh, "full": full}
        lf = lff = None
        if _lfs.available():
            page = 256
            lff, lcfg, tried_f = _lfs.best(lambda c: run_lfs(blocks, None, c), page)
            lf, lcfg2, tried = _lfs.best(lambda c: run_lfs(blocks, LEVEL, c), page)
            raw[vname]["littlefs fresh"] = lff
            raw[vname]["littlefs full"] = lf
            notes.append(p + "fresh: " + common.lfs_note(lcfg, tried_f, "time_ns", "ms", 1e-6))
            notes.append(p + "filled: " + common.lfs_note(lcfg2, tried, "time_ns", "ms", 1e-6))
            if lf is not None:
                notes.append(p + f"littlefs held {lf['stored']:,} B of files "
                             f"({lf['level'] * 100:.1f}% of the volume) before the deletions.")
        bad = {"fresh": fresh["failed"], "filled": full["failed"]}
        sf = None if bad["fresh"] else stats(fresh)
        sfu = None if bad["filled"] else stats(full)
        if fresh["failed"] or full["failed"]:
            notes.append(p + f"cairn's 100,000-byte file failed: fresh {fresh['failed']}, "
                         f"filled {full['failed']}")

        def failed_fig(tag, target=None, **kw):
            return figure("FAILED: " + bad[tag][0], "", target=target,
                          met=False if target else None, **kw)
        lvl = full["level"]
        reached = lvl >= LEVEL - 0.01
        figs[p + "fill level reached before the deletions"] = figure(
            round(lvl * 100, 1), "%", note=None if reached else
            "cairn refused more (NOSPC); the scenario ran at this level",
            raw="100%", lfs=None if lf is None else f"{lf['level'] * 100:.1f}%")
        lsf, lsfu = (stats(lff) if lff else None), (stats(lf) if lf else None)
        for tag, st, lst, sd in (("fresh", sf, lsf, f"{SEED[1]:,} B/s (formatted)"),
                                 ("filled", sfu, lsfu, f"{SEED[0]:,} B/s (80% full)")):
            kw = {"seed": sd, "raw": f"{raw_Bps:,.0f} B/s",
                  "lfs": None if lst is None else f"{lst['Bps']:,.0f} B/s"}
            figs[p + f"throughput, {tag}"] = failed_fig(tag, **kw) if st is None else \
                figure(round(st["Bps"]), "B/s", **kw)
        kw = {"seed": f"{SEED[0] / SEED[1]:.3f}", "raw": "1.0",
              "lfs": None if not (lsf and lsfu) else f"{lsfu['Bps'] / lsf['Bps']:.3f}"}
        if sf and sfu:
            ratio = sfu["Bps"] / sf["Bps"]
            figs[p + "throughput filled / fresh"] = figure(
                round(ratio, 3), "", target=">= 0.70", met=ratio >= 0.70, **kw)
        else:
            figs[p + "throughput filled / fresh"] = failed_fig(
                "fresh" if sf is None else "filled", target=">= 0.70", **kw)
        for tag, st, lst in (("fresh", sf, lsf), ("filled", sfu, lsfu)):
            if st is None:
                figs[p + f"max / median write latency, {tag}"] = failed_fig(tag, target="<= 5")
                continue
            figs[p + f"write latency {tag}: median / p99 / max"] = figure(
                f"{st['median']:.3f} / {st['p99']:.3f} / {st['max']:.3f}", "ms",
                raw=f"{W / raw_Bps * 1e3:.3f} ms", lfs=None if lst is None else
                f"{lst['median']:.3f} / {lst['p99']:.3f} / {lst['max']:.3f} ms")
            mm = st["max"] / st["median"] if st["median"] else float("inf")
            figs[p + f"max / median write latency, {tag}"] = figure(
                round(mm, 1), "x", target="<= 5", met=mm <= 5,
                lfs=None if lst is None or not lst["median"] else
                f"{lst['max'] / lst['median']:.1f} x")
        if lf is not None and full["counters"] is not None and not bad["filled"]:
            k, v = common.beats_figure(full["counters"], lf["counters"], p + "filled: ")
            figs[k] = v
        elif lf is not None:
            figs[p + "filled: cairn beats littlefs on modelled time and device operations"] = \
                failed_fig("filled", target="yes")
        notes.append(p + f"cairn RAM {full['ram']:,} B (default config).")
    notes += [
        f"Files: mixed sizes (200 B-60 KB, random.Random(11)) written until {LEVEL:.0%} of the "
        f"volume holds file data or the file system refuses {GIVE_UP} files in a row (NOSPC; "
        "a refused file is skipped and the next, maybe smaller, tried): the level reached "
        "is reported; "
        "then every other file is deleted and 100,000 B are written to a new file in 256 B "
        "writes, then it is closed (synced).",
        "Latency of a write = modelled device time spent in that call; the close is the last "
        "latency sample. Throughput = 100,000 B / modelled time of the writes and the close.",
        "The seed's figures are wall-clock on real hardware with spiffs.",
        "Raw device limit: programming in whole erase blocks on an erased device.",
        common.TIME_NOTE]
    return result(ID, TITLE, figs, params={"model": MODEL, "write size": W, "bytes": TOTAL,
                                           "wall seconds": round(time.perf_counter() - t0, 2)},
                  notes=notes, raw=raw)


def plot(res, out) -> list:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    vname = VOLUMES[0][0]
    r = res["raw"][vname]
    fig, ax = plt.subplots(figsize=(8, 4.2))
    ax.plot(r["fresh"]["lat_ms"], lw=0.8, label="cairn, fresh")
    ax.plot(r["full"]["lat_ms"], lw=0.8,
            label=f"cairn, filled to {r['full']['level'] * 100:.0f}% then half deleted")
    if r.get("littlefs full"):
        ax.plot(r["littlefs fresh"]["lat_ms"], lw=0.6, ls=":", label="littlefs, fresh")
        ax.plot(r["littlefs full"]["lat_ms"], lw=0.6, ls="--", label="littlefs, filled")
    ax.set_yscale("log")
    ax.set_xlabel("write number (256 B each; last = close)")
    ax.set_ylabel("modelled latency (ms)")
    ax.set_title(f"fill-write: {vname} on nor-m25p16")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fn = "fill-write.png"
    fig.savefig(out / fn, dpi=90)
    plt.close(fig)
    return [("write latency over time, filled vs fresh", fn)]


if __name__ == "__main__":
    common.main(sys.modules[__name__])
