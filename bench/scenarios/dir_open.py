"""dir-open (follow-up issue): a directory of 1,000 files created in order;
after an unmount and a mount (counted apart), the last created file is opened
read-only and 1 byte read; the first created file, for contrast, after another
mount. On 4 MiB of nor-w25q128 and 64 MiB of nand-jffs2, cairn and littlefs."""
from __future__ import annotations

import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import _cold, _lfs, common  # noqa: E402
from bench.scenarios.common import figure, result  # noqa: E402

ID = "dir-open"
TITLE = ("open + read 1 byte of the last / first of 1,000 files right after a mount "
         "(nor-w25q128, nand-jffs2)")
FILES = 1000


def check(got: bytes, want: bytes, who: str) -> None:
    if got != want:
        raise RuntimeError(f"dir-open, {who}: read {got!r}, expected {want!r}")


def cairn_probe(fs, sim, path: str, want: bytes) -> dict:
    """Counted: open read-only, read 1 byte (checked), close."""
    sim.reset_counters()
    with fs.open(path, "r") as f:
        got = f.read(1)
    c = _cold.counts(sim)
    check(got, want, f"cairn {path}")
    return c


def run_cairn(dev) -> dict:
    """cairn, default config: fill, unmount; the counted mount, the probe of
    the last file; remount, the probe of the first file."""
    files = _cold.small_files(FILES)
    sim, fs, bpl, fmt_c = _cold.cairn_volume(dev, files)
    with sim:
        fs.unmount()
        sim.reset_counters()
        fs.mount()
        mount = _cold.counts(sim)
        last = cairn_probe(fs, sim, files[-1][0], files[-1][1][:1])
        fs.remount()
        first = cairn_probe(fs, sim, files[0][0], files[0][1][:1])
        ram, ram_small = _cold.cairn_rams(sim)
        fs.unmount()
    return {"format": fmt_c, "mount": mount, "last": last, "first": first, "bpl": bpl,
            "ram": ram, "ram_smallest": ram_small}


def lfs_probe(fs, sim, path: str, want: bytes) -> dict:
    """littlefs's probe, counted as cairn_probe's."""
    L, lfs = _lfs.lfs_module(), fs.lfs
    sim.reset_counters()
    fh = L.file_open(lfs, path, _lfs.O_R)
    try:
        got = L.file_read(lfs, fh, 1)
    finally:
        L.file_close(lfs, fh)
    c = _cold.counts(sim)
    check(got, want, f"littlefs {path}")
    return c


def run_lfs(dev, cfg: dict) -> dict:
    """littlefs with cfg, as run_cairn. The sweep keeps the config with the
    lowest time for the probe of the last file."""
    files = _cold.small_files(FILES)
    with _cold.lfs_volume(dev, cfg, _cold.small_name(FILES), files) as sim:
        fs, mount = _cold.lfs_mount(sim, cfg)
        last = lfs_probe(fs, sim, files[-1][0], files[-1][1][:1])
        fs.remount()
        first = lfs_probe(fs, sim, files[0][0], files[0][1][:1])
        fs.unmount()
    return {"time_ns": last["time_ns"], "mount": mount, "last": last, "first": first}


def probe_text(c: dict | None) -> str | None:
    return None if c is None else f"{_cold.read_text(c)}, {common.ops(c):,} ops"


def device_figs(dev, c: dict, lb: dict | None, lcfg: dict | None, figs: dict) -> None:
    """The figures of one device (lb: littlefs's best, or None)."""
    p = f"{dev.label}: "

    def lf(key):
        return None if lb is None else probe_text(lb[key])
    k, v = common.format_figure(p, c["format"], None if lcfg is None else
                                _cold.lfs_format_counts(dev, lcfg))
    figs[k] = v
    figs[p + "mount (modelled time)"] = figure(
        round(_cold.ms(c["mount"]), 2), "ms", note=f"{c['mount']['read_calls']:,} reads",
        lfs=None if lb is None else _cold.read_text(lb["mount"]))
    raw = f"{_cold.raw_read_ms(dev, 1):.3f} ms (one read of the byte)"
    for key, which in (("last", f"last created file (/d/f{FILES - 1:04d})"),
                       ("first", "first created file (/d/f0000), after another mount")):
        d = c[key]
        figs[p + f"open + read 1 byte: {which}"] = figure(
            round(_cold.ms(d), 3), "ms", note=f"{d['read_calls']:,} reads "
            f"({d['read_bytes']:,} B), {common.ops(d):,} ops", raw=raw, lfs=lf(key),
            summary=key == "last")
    if lb is not None:
        k, v = common.beats_figure(c["last"], lb["last"], p + "open of the last file: ")
        figs[k] = v
    k, v = common.ram_figure(p, c["ram"], lcfg, 1, c["ram_smallest"])
    figs[k] = v


def run() -> dict:
    t0 = time.perf_counter()
    figs, notes, raw, params = {}, [], {}, {}
    for dev in _cold.DEVICES:
        c = run_cairn(dev)
        lb, lcfg, tried = _cold.lfs_best(dev, lambda cfg: run_lfs(dev, cfg))
        raw[dev.label] = {"cairn": c, "littlefs": lb, "littlefs tried": common.lfs_figs(tried)}
        device_figs(dev, c, lb, lcfg, figs)
        if _lfs.available():
            notes.append(f"{dev.label}: " + common.lfs_note(
                lcfg, tried, "time_ns", "ms (open + read of the last file)", 1e-6))
        params[f"{dev.label} volume"] = f"{dev.model}, block_count={dev.block_count}, " \
                                        f"blocks_per_lblock={c['bpl']}"
    notes += [
        f"Volume: one directory /d with {FILES:,} files created in order (/d/f0000 ... "
        f"/d/f{FILES - 1:04d}, 100-1,000 B of random.Random(7) bytes each, each written in one "
        "call and closed; the same volume as first-write's), then unmounted. Counted apart: "
        "the mount. Then, right after it (nothing cached but what the mount read): open the "
        "last created file read-only, read 1 byte (compared with the file's first byte), "
        "close. Then unmount + mount (not counted) and the same for the first created file.",
        "Target (the benchmark's rule for cairn against littlefs): cairn beats littlefs on "
        "modelled time and device operations, for the open of the last file.",
        "Raw device limit: one read call of the 1 byte (no file system reads less).",
        _cold.DEVICE_TEXT, _cold.LFS_POPULATE_TEXT,
        "littlefs's sweep keeps the configuration with the lowest time for the open + read "
        "of the last file, per device.",
        common.RAM_TEXT, common.AGING_TEXT, common.TIME_NOTE]
    params["wall seconds"] = round(time.perf_counter() - t0, 2)
    return result(ID, TITLE, figs, params=params, notes=notes, raw=raw)


if __name__ == "__main__":
    common.main(sys.modules[__name__])
