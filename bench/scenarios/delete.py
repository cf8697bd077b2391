"""delete (follow-up issue): on a volume about half full, with a 1 MiB file
among others, the 1 MiB file is deleted, then 1 MiB is written to a new file;
the same write on an identical volume where the 1 MiB file never was (the same
space free) is the baseline, so what the write costs more after the delete is
what the delete left for later. On 4 MiB of nor-w25q128 and 64 MiB of
nand-jffs2, cairn and littlefs."""
from __future__ import annotations

import functools
import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import _cold, _lfs, common  # noqa: E402
from bench.scenarios.common import cairn, ffi, figure, lib, result  # noqa: E402

ID = "delete"
TITLE = ("delete a 1 MiB file, then write 1 MiB, on a half-full volume "
         "(nor-w25q128, nand-jffs2)")
MIB = 1 << 20
BIG, NEW = "/big", "/new"
FILL = 0.5     # of the volume, in file bytes, the 1 MiB file included
WRITE = 4096   # the new file is written in writes of this size, then closed
NEW_DATA = random.Random(5).randbytes(MIB)


@functools.lru_cache(maxsize=None)
def volume_files(dev, with_big: bool) -> tuple:
    """The files of the volume in creation order: others of volume/1024 to
    volume/32 bytes (random.Random(3)) adding up to FILL of the volume with
    the 1 MiB file, which comes after the first half of them (with_big)."""
    rng = random.Random(3)
    vol = dev.volume_bytes
    budget = int(vol * FILL) - MIB
    others = []
    while budget > 0:
        n = min(rng.randint(vol // 1024, vol // 32), budget)
        others.append((f"/o{len(others):03d}", rng.randbytes(n)))
        budget -= n
    half = len(others) // 2
    big = [(BIG, random.Random(4).randbytes(MIB))] if with_big else []
    return tuple(others[:half] + big + others[half:])


def neighbour(dev) -> tuple:
    """The file written right after the 1 MiB file (read back at the end)."""
    files = volume_files(dev, True)
    return files[[p for p, _ in files].index(BIG) + 1]


def erased_blocks(sim) -> int:
    """Erase blocks whose every page reads erased (data and spare all 0xFF):
    space that can be programmed without an erase first."""
    g = sim.geometry
    nand = g.medium == cairn.Medium.NAND
    page_ff = b"\xff" * g.page_size
    spare_ff = b"\xff" * g.spare_size
    n = 0
    for b in range(g.block_count):
        for pg in range(b * g.pages_per_block, (b + 1) * g.pages_per_block):
            if nand:
                data, spare = sim.peek(pg, spare=True)
                if data != page_ff or spare != spare_ff:
                    break
            elif sim.peek(pg) != page_ff:
                break
        else:
            n += 1
    return n


def cairn_write_new(fs) -> None:
    """NEW_DATA to a new file in WRITE-byte writes, then closed (synced)."""
    buf = ffi.from_buffer(NEW_DATA)
    with fs.open(NEW, "w") as f:
        ctx, fd = fs._ctx, f.fd
        for off in range(0, MIB, WRITE):
            r = lib.cairn_write(ctx, fd, buf + off, WRITE)
            if r != WRITE:
                raise cairn.Error.from_code(r if r < 0 else cairn.Err.NOSPC, op="write",
                                            path=NEW)


def check(dev, who: str, new: bytes, big_exists: bool, nb: tuple, got_nb: bytes) -> None:
    """The new file, the neighbour of the 1 MiB file, and the 1 MiB file gone
    (never there on the baseline)."""
    what = f"delete, {who} {dev.label}"
    if new != NEW_DATA:
        raise RuntimeError(f"{what}: the new file read back differs")
    if got_nb != nb[1]:
        raise RuntimeError(f"{what}: {nb[0]} read back differs")
    if big_exists:
        raise RuntimeError(f"{what}: {BIG} is still there")


def run_cairn(dev, delete: bool) -> dict:
    """cairn, default config: the volume (with the 1 MiB file when delete),
    a remount (not counted), then counted: the remove (and a sync) when delete,
    the 1 MiB write."""
    files = volume_files(dev, delete)
    sim, fs, bpl, fmt_c = _cold.cairn_volume(dev, files, dirs=())
    with sim:
        fs.remount()
        out = {"format": fmt_c, "bpl": bpl, "free_bytes": fs.fs_stat().free_bytes}
        if delete:
            sim.reset_counters()
            fs.remove(BIG)
            out["remove"] = _cold.counts(sim)
            fs.sync()
            out["delete"] = _cold.counts(sim)
        sim.reset_counters()
        cairn_write_new(fs)
        out["write"] = _cold.counts(sim)
        nb = neighbour(dev)
        check(dev, "cairn", fs.read_file(NEW), fs.exists(BIG), nb, fs.read_file(nb[0]))
        out["erased_blocks"] = erased_blocks(sim)
        out["ram"], out["ram_smallest"] = _cold.cairn_rams(sim)
        fs.unmount()
    return out


def lfs_read(L, lfs, path: str) -> bytes:
    fh = L.file_open(lfs, path, _lfs.O_R)
    try:
        return L.file_read(lfs, fh, L.stat(lfs, path).size)
    finally:
        L.file_close(lfs, fh)


def lfs_exists(L, lfs, path: str) -> bool:
    try:
        L.stat(lfs, path)
        return True
    except Exception:  # noqa: BLE001  (littlefs raises LittleFSError NOENT)
        return False


def run_lfs(dev, cfg: dict, delete: bool = True) -> dict:
    """littlefs with cfg, as run_cairn (its remove is durable on return: no
    sync). The sweep keeps the config with the lowest time for the remove and
    the write."""
    L = _lfs.lfs_module()
    files = volume_files(dev, delete)
    name = f"half full, {'with' if delete else 'without'} the 1 MiB file"
    with _cold.lfs_volume(dev, cfg, name, files, dirs=()) as sim:
        fs, _ = _cold.lfs_mount(sim, cfg)
        lfs = fs.lfs
        out = {"free_bytes": None}
        if delete:
            sim.reset_counters()
            L.remove(lfs, BIG)
            out["remove"] = out["delete"] = _cold.counts(sim)
        sim.reset_counters()
        fh = L.file_open(lfs, NEW, _lfs.O_W)
        try:
            for off in range(0, MIB, WRITE):
                L.file_write(lfs, fh, NEW_DATA[off:off + WRITE])
        finally:
            L.file_close(lfs, fh)
        out["write"] = _cold.counts(sim)
        nb = neighbour(dev)
        check(dev, "littlefs", lfs_read(L, lfs, NEW), lfs_exists(L, lfs, BIG), nb,
              lfs_read(L, lfs, nb[0]))
        out["erased_blocks"] = erased_blocks(sim)
        fs.unmount()
    out["time_ns"] = out["write"]["time_ns"] + (out["delete"]["time_ns"] if delete else 0)
    return out


def later(after: dict, base: dict) -> dict:
    """What the write after the delete cost more than the baseline write, and
    the blocks still holding the deleted data after it (erased blocks left on
    the baseline minus those left after the delete)."""
    return {"erases": after["write"]["erases"] - base["write"]["erases"],
            "time_ns": after["write"]["time_ns"] - base["write"]["time_ns"],
            "debt": base["erased_blocks"] - after["erased_blocks"]}


def device_figs(dev, c: dict, cb: dict, lb: dict | None, lbb: dict | None, lcfg, figs) -> None:
    """The figures of one device: cairn after the delete (c) and baseline (cb),
    littlefs's (lb, lbb; None without littlefs)."""
    p = f"{dev.label}: "
    k, v = common.format_figure(p, c["format"], None if lcfg is None else
                                _cold.lfs_format_counts(dev, lcfg))
    figs[k] = v
    lt = _cold.cost_text
    figs[p + "delete: the remove call"] = figure(
        round(_cold.ms(c["remove"]), 3), "ms", note=_cold.ops_text(c["remove"]),
        lfs=None if lb is None else lt(lb["remove"]) + " (durable on return)", summary=True)
    figs[p + "delete made durable: remove + sync"] = figure(
        round(_cold.ms(c["delete"]), 3), "ms", note=_cold.ops_text(c["delete"]),
        lfs=None if lb is None else lt(lb["delete"]) + " (the remove alone)")
    raw = f"{common.raw_prog_seconds(dev.model, MIB) * 1e3:,.1f} ms (1 MiB in whole " \
          "blocks, each erased first)"
    figs[p + "1 MiB write after the delete"] = figure(
        round(_cold.ms(c["write"]), 1), "ms", note=_cold.ops_text(c["write"]), raw=raw,
        lfs=None if lb is None else lt(lb["write"]))
    figs[p + "the same 1 MiB write on the baseline volume (nothing deleted, same space free)"] = \
        figure(round(_cold.ms(cb["write"]), 1), "ms", note=_cold.ops_text(cb["write"]),
               raw=raw, lfs=None if lbb is None else lt(lbb["write"]))
    d = later(c, cb)
    ld = None if lb is None or lbb is None else later(lb, lbb)
    figs[p + "erases the delete causes in the 1 MiB write (after - baseline)"] = figure(
        d["erases"], "", note=f"{d['time_ns'] / 1e6:+,.1f} ms", summary=True,
        lfs=None if ld is None else f"{ld['erases']:,} ({ld['time_ns'] / 1e6:+,.1f} ms)")
    figs[p + "erases due later (erased blocks left: baseline minus after the delete)"] = \
        figure(d["debt"], "", note=f"{d['debt'] * dev.info.cost.erase_ns / 1e6:,.0f} ms of "
               "erases", summary=True, lfs=None if ld is None else f"{ld['debt']:,}")
    k, v = common.ram_figure(p, c["ram"], lcfg, 1, c["ram_smallest"])
    figs[k] = v


def run() -> dict:
    t0 = time.perf_counter()
    figs, notes, raw, params = {}, [], {}, {}
    for dev in _cold.DEVICES:
        c, cb = run_cairn(dev, True), run_cairn(dev, False)
        lb, lcfg, tried = _cold.lfs_best(dev, lambda cfg: run_lfs(dev, cfg))
        lbb = None if lcfg is None else run_lfs(dev, lcfg, delete=False)
        raw[dev.label] = {"cairn": c, "cairn baseline": cb, "littlefs": lb,
                          "littlefs baseline": lbb, "littlefs tried": common.lfs_figs(tried)}
        device_figs(dev, c, cb, lb, lbb, lcfg, figs)
        if _lfs.available():
            notes.append(f"{dev.label}: " + common.lfs_note(
                lcfg, tried, "time_ns", "ms (remove + 1 MiB write)", 1e-6,
                " The baseline ran with the best config."))
        files = volume_files(dev, True)
        params[f"{dev.label} volume"] = (
            f"{dev.model}, block_count={dev.block_count}, blocks_per_lblock={c['bpl']}; "
            f"{len(files) - 1} other files, {sum(len(d) for _, d in files):,} B with the "
            "1 MiB file")
    notes += [
        f"Volume: about {FILL:.0%} of the volume in file bytes: other files of volume/1024 to "
        "volume/32 bytes (4-128 KiB on NOR, 64 KiB-2 MiB on NAND; random.Random(3)), the "
        f"1 MiB file {BIG} written after the first half of them, each file in one write call "
        "and closed; then a remount (not counted).",
        f"Counted: the remove of {BIG} (cairn: the remove call, and remove + cairn_sync; "
        "littlefs's remove is durable on return), then 1 MiB written to a new file in "
        f"{WRITE:,} B writes and closed (synced). Baseline: the same volume without the "
        "1 MiB file (the others identical, so the same space free, minus metadata), the same "
        "1 MiB write, nothing deleted.",
        "Erases the delete causes later, two parts: (1) in the 1 MiB write, erases (and "
        "modelled time) after the delete minus the baseline's; (2) after it, the erases "
        "still due: erase blocks that read fully erased (data and spare all 0xFF, from the "
        "simulator's state) on the baseline minus those after the delete, i.e. the blocks "
        "the deleted data left programmed where the baseline has them ready; each needs an "
        "erase before it is written again, whenever that comes (modelled at the device's "
        "erase time). cairn erases a segment when it hands it out (or ahead, in idle "
        "cairn_gc calls); littlefs erases "
        "every block just before it programs it (its format erases only the superblocks, "
        "the aged blocks hold old data), so it has no such blocks on either volume and pays "
        "one erase per block it writes, deleted data or not.",
        "Read back after the run: the new file, the file written right after the 1 MiB "
        f"one, and {BIG} gone (baseline: present nowhere).",
        "Raw device limit of the 1 MiB write: whole-block programs, each block erased first. "
        "The erases the delete leaves are the 'erases due later' row.",
        _cold.DEVICE_TEXT,
        f"littlefs's volumes here hold fewer than {_cold.KEEP_FILES} files: each configuration "
        "fills its own (no image kept), with the largest read_size it accepts (see "
        "first-write; read_size does not change what littlefs writes).",
        common.RAM_TEXT, common.AGING_TEXT, common.TIME_NOTE]
    params["wall seconds"] = round(time.perf_counter() - t0, 2)
    return result(ID, TITLE, figs, params=params, notes=notes, raw=raw)


if __name__ == "__main__":
    common.main(sys.modules[__name__])
