"""ram (follow-up issue's RAM targets): cairn's RAM on the seed's small NOR
volumes and on a 1 GiB NAND, the default config and the smallest that works
(each formatted, mounted, a file written and read back, on the device, so a
config that does not work shows as failed), against the targets: a working
config of at most 4 KiB and a default of at most 8 KiB on NOR volumes up to
4 MiB, a default of at most 32 KiB on the 1 GiB NAND, and at most 4 B per
segment. The per-segment cost is measured, not read from the code: the same
geometry at two volume sizes, the RAM difference over the segment
difference."""
from __future__ import annotations

import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import _lfs, common  # noqa: E402
from bench.scenarios.common import cairn, figure, result  # noqa: E402

ID = "ram"
TITLE = "RAM: default and smallest working config (nor-m25p16 1/2 MiB, nor-w25q128 4 MiB, " \
        "nand-jffs2 1 GiB)"
# (label, model, block_count (0: the model's), default target, smallest target)
VOLUMES = [
    ("1 MiB nor-m25p16", "nor-m25p16", 16, 8192, 4096),
    ("2 MiB nor-m25p16 (whole chip)", "nor-m25p16", 0, 8192, 4096),
    ("4 MiB nor-w25q128", "nor-w25q128", 1024, 8192, 4096),
    ("1 GiB nand-jffs2", "nand-jffs2", 0, 32768, None),
]
SMALLEST = common.smallest_cairn_config(max_open=1)
PER_SEGMENT_TARGET = 4
DATA = bytes(range(256)) * 40  # 10,240 B: a few pages, a tree update, a sync


def works(model: str, blocks: int, config: dict) -> tuple[int, str | None]:
    """(RAM, None) when the config formats, mounts, stores a file and reads it
    back after a remount on a fresh device; (RAM, why) otherwise."""
    kw = {"block_count": blocks} if blocks else {}
    with cairn.Sim(model, **kw) as sim:
        try:
            fs = cairn.FS(sim, **config)
        except cairn.Error as e:
            return 0, str(e)
        ram = fs.ram_bytes
        try:
            fs.format()
            fs.mount()
            fs.write_file("/f", DATA)
            fs.remount()
            ok = fs.read_file("/f") == DATA
            fs.unmount()
        except cairn.Error as e:
            return ram, f"{e.name} ({e})"
    return ram, None if ok else "the file read back differs"


def per_segment(model: str, bpl: int) -> tuple[float, str]:
    """RAM per segment: two volume sizes of the model with the same segment
    size (bpl erase blocks), the RAM difference over the segment difference."""
    info = cairn.Sim.model_info(model).geometry
    rams, segs = [], []
    for n in (info.block_count // 4, info.block_count // 2):
        with cairn.Sim(model, block_count=n, blocks_per_lblock=bpl) as sim:
            rams.append(cairn.FS(sim).ram_bytes)
            segs.append(n // bpl)
    d = (rams[1] - rams[0]) / (segs[1] - segs[0])
    return d, (f"{segs[0]} segments {rams[0]:,} B, {segs[1]} segments {rams[1]:,} B "
               f"({bpl} erase blocks a segment)")


def run() -> dict:
    t0 = time.perf_counter()
    figs, notes = {}, []
    lfs_cfg = _lfs.configs(256)[0] if _lfs.available() else None
    for label, model, blocks, t_default, t_small in VOLUMES:
        p = f"{label}: "
        ram, why = works(model, blocks, {})
        figs[p + "RAM, default config (context + cairn_mem_size)"] = figure(
            ram if why is None else f"FAILED: {why}", "B", target=f"<= {t_default:,} B",
            met=why is None and ram <= t_default,
            why=None if why is not None or ram <= t_default else
            "the node cache: 16 slots of the node size (1 KiB on 256 B pages, 2 KiB on 2 KiB "
            "pages), with 16 B a slot; the segment table is 4 B a segment (docs/DESIGN.md "
            "\"RAM\")")
        small, why = works(model, blocks, SMALLEST)
        row = p + f"RAM, smallest working config {SMALLEST}"
        if t_small is None:
            figs[row] = figure(small if why is None else f"FAILED: {why}", "B")
        else:
            figs[row] = figure(
                small if why is None else f"FAILED: {why}", "B", target=f"<= {t_small:,} B",
                met=why is None and small <= t_small,
                why=None if why is not None or small <= t_small else
                "the node cache's floor: 12 slots of 1 KiB (docs/DESIGN.md \"RAM\")")
        if lfs_cfg is not None and model.startswith("nor"):
            figs[row]["lfs"] = f"{_lfs.ram_bytes(lfs_cfg, 1):,} B (1 open file)"
    for model, bpl in (("nor-w25q128", 16), ("nand-jffs2", 8)):
        d, how = per_segment(model, bpl)
        figs[f"{model}: RAM per segment"] = figure(
            round(d, 1), "B", target=f"<= {PER_SEGMENT_TARGET} B", met=d <= PER_SEGMENT_TARGET,
            note=how, why=None if d <= PER_SEGMENT_TARGET else
            "the segment table in RAM: live pages, state and flags, the erase count relative to "
            "the least worn segment and the age class of the data (docs/DESIGN.md \"RAM\")")
    notes += [
        "RAM = cairn_context_size() + cairn_mem_size(config) on this host (x86-64; the "
        "context is 56 B smaller on Cortex-M3). Each config is formatted, mounted, given a "
        "10,240-byte file, remounted and read back on a fresh simulated device; a config "
        "that fails any of that shows FAILED with the error.",
        f"Smallest working config: {SMALLEST} (cache_nodes at its minimum, one file open; "
        "node_size at its default, which is its minimum).",
        "littlefs's figure, where given, is its RAM with its smallest benchmark config "
        "(read/prog caches and one file cache), for scale.",
        "The formula (docs/DESIGN.md \"RAM\"): context + 4 x segments + 128 (erase fronts) + "
        "cache_nodes x (node_size + 16) + scratch and journal pages + max_open x "
        "(page + ~100)."]
    return result(ID, TITLE, figs, params={"wall seconds": round(time.perf_counter() - t0, 2)},
                  notes=notes)


if __name__ == "__main__":
    common.main(sys.modules[__name__])
