"""Helpers of the scenarios first-write, dir-open and delete (not a scenario:
the runner skips modules whose name starts with "_"): their two devices, cairn
volumes filled with a file list, littlefs volumes filled once per on-disk
configuration and reused from an image file, and counter texts."""
from __future__ import annotations

import contextlib
import functools
import math
import os
import random
import shutil
import tempfile
from dataclasses import dataclass

from bench.scenarios import _lfs, common
from bench.scenarios.common import cairn, ffi, lib

SMALLEST = common.smallest_cairn_config(max_open=1)  # these scenarios hold one file open


@dataclass(frozen=True)
class Device:
    label: str        # "NOR" / "NAND": the prefix of the figures
    model: str
    block_count: int
    bpls: tuple       # blocks_per_lblock tried for cairn, smallest first (the first accepted runs)

    @property
    def info(self):
        return cairn.Sim.model_info(self.model)

    @property
    def page(self) -> int:
        return self.info.geometry.page_size

    @property
    def block_size(self) -> int:
        return self.info.geometry.block_size

    @property
    def volume_bytes(self) -> int:
        return self.block_count * self.block_size

    def sim_kw(self) -> dict:
        return {"block_count": self.block_count, "seed": 1}


DEVICES = (
    Device("NOR", "nor-w25q128", 1024, (1, 2, 4, 8, 16)),  # 4 MiB: 1,024 sectors of 4 KiB
    Device("NAND", "nand-jffs2", 512, (8,)),               # 64 MiB: 512 blocks of 128 KiB
)

DEVICE_TEXT = (
    "Devices: 4 MiB of nor-w25q128 (block_count=1024 sectors of 4 KiB; cairn with the "
    "smallest blocks_per_lblock it accepts, in the parameters) and 64 MiB of nand-jffs2 "
    "(block_count=512 blocks of 128 KiB; cairn with blocks_per_lblock=8, as sync-log). Not "
    "the 1 MiB of nor-m25p16 (16 sectors of 64 KiB): neither file system held the 1,000 "
    "files of 100-1,000 B there when tried while writing these scenarios (cairn ran out of "
    "space before the end; littlefs gives each file above its inline limit a whole 64 KiB "
    "sector), and a 1 MiB file would be the whole volume. 4 MiB of 4 KiB sectors holds it "
    "all for both, the 1 MiB file is a quarter of it, and each scenario stays within its "
    "minute.")

LFS_POPULATE_TEXT = (
    "littlefs volumes are filled once per on-disk configuration and copied from an image "
    "file for each configuration measured: the fill runs with the largest read_size "
    "littlefs accepts (cache_size, or its common divisor with metadata_max) and "
    "the configuration's other settings (prog_size, cache_size, metadata_max, inline_max, "
    "block_cycles, lookahead); the measured configuration then mounts a copy with its own "
    "read_size. read_size changes only how littlefs reads, never what it writes (checked: "
    "fills with read_size 1 and read_size = cache_size gave byte-identical images on both "
    "devices); it keeps littlefs's fills of a 1,000-file directory (each file's creation "
    "searches the directory, seconds per fill on the NAND) within the time budget. Format rows: littlefs's best "
    "configuration formatting a fresh aged device, counted alone.")


# ---- file sets ----
@functools.lru_cache(maxsize=None)
def small_files(n: int, seed: int = 7) -> tuple:
    """n files /d/f0000, /d/f0001, ... in creation order, 100-1,000 B of
    random.Random(seed) bytes each."""
    rng = random.Random(seed)
    return tuple((f"/d/f{i:04d}", rng.randbytes(rng.randint(100, 1000))) for i in range(n))


def small_name(n: int) -> str:
    """The name of small_files(n) for lfs_volume (first-write and dir-open
    share the 1,000-file volume when they run in one process)."""
    return f"{n} small files"


# ---- cairn ----
def cairn_write_file(fs, path: str, data: bytes) -> None:
    """The whole file in one write call, then closed (synced)."""
    ctx, p = fs._ctx, path.encode()
    fd = lib.cairn_open(ctx, p, lib.CAIRN_O_WRONLY | lib.CAIRN_O_CREAT | lib.CAIRN_O_TRUNC)
    if fd < 0:
        raise cairn.Error.from_code(fd, op="open", path=path)
    n = lib.cairn_write(ctx, fd, ffi.from_buffer(data), len(data))
    rc = lib.cairn_close(ctx, fd)
    if n != len(data):
        raise cairn.Error.from_code(n if n < 0 else cairn.Err.NOSPC, op="write", path=path)
    if rc < 0:
        raise cairn.Error.from_code(rc, op="close", path=path)


def cairn_volume(dev: Device, files, dirs=("/d",)):
    """An aged `dev` formatted and mounted by cairn (default config), the dirs
    made and the files written. Returns (sim, FS, blocks_per_lblock, format +
    mount counters)."""
    sim, fs, bpl, fmt_c, _ = common.cairn_smallest_bpl(dev.model, dev.bpls, **dev.sim_kw())
    for d in dirs:
        fs.mkdir(d)
    for path, data in files:
        cairn_write_file(fs, path, data)
    return sim, fs, bpl, fmt_c


def cairn_rams(sim) -> tuple[int, int]:
    """RAM of cairn's default config and of its smallest one on this device."""
    return common.cairn_ram(sim), common.cairn_ram(sim, **SMALLEST)


# ---- littlefs ----
def lfs_write_file(L, lfs, path: str, data: bytes) -> None:
    """The whole file in one write call, then closed. Closed exactly once:
    littlefs takes a handle off its open list even when the close fails, and
    a second close of it aborts the process (an assertion in littlefs)."""
    fh = L.file_open(lfs, path, _lfs.O_W)
    try:
        L.file_write(lfs, fh, data)
    finally:
        L.file_close(lfs, fh)


_images: dict = {}  # (device, volume name, on-disk settings) -> (image or None, error, values)
_tmp = None


def _image_dir() -> str:
    global _tmp
    if _tmp is None:  # removed when the process ends; in RAM where /dev/shm exists
        shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
        _tmp = tempfile.TemporaryDirectory(prefix="bench-cold-", dir=shm)
    return _tmp.name


def _on_disk(cfg: dict) -> tuple:
    """The settings of a littlefs config that can change what it writes:
    all but read_size."""
    return tuple(sorted((k, v) for k, v in cfg.items() if k != "read_size"))


def _fill_read_size(cfg: dict) -> int:
    """The largest read_size littlefs accepts with cfg's other settings (it
    must divide cache_size and metadata_max): the fewest read calls."""
    return math.gcd(cfg["cache_size"], cfg.get("metadata_max") or 0)


def _fill_lfs(dev: Device, cfg: dict, files, dirs, image: str | None = None):
    """An aged `dev` (in RAM, or backed by the file `image`) formatted by
    littlefs with cfg, the dirs made and the files written, unmounted: the Sim."""
    L = _lfs.lfs_module()
    sim = common.new_sim(dev.model, image=image, **dev.sim_kw())
    try:
        fs = _lfs.LfsFS(sim, **dict(cfg, read_size=_fill_read_size(cfg)))
        for d in dirs:
            L.mkdir(fs.lfs, d)
        for p, data in files:
            lfs_write_file(L, fs.lfs, p, data)
        fs.unmount()
    except BaseException:
        sim.close()
        raise
    return sim


KEEP_FILES = 100  # fills of fewer files are redone each time: cheaper than copying an image


@contextlib.contextmanager
def lfs_volume(dev: Device, cfg: dict, name: str, files, dirs=("/d",)):
    """Yields a Sim: the aged `dev` formatted by littlefs with cfg, the dirs
    made and the files written, unmounted. `name` names the file list: a fill
    of KEEP_FILES files or more is kept as an image per device, name and
    on-disk settings for the life of the process, and each call gets a copy."""
    if len(files) < KEEP_FILES:
        try:
            small = _fill_lfs(dev, cfg, files, dirs)
        finally:
            _name_config(_lfs.last_params, cfg)
        with small:
            yield small
        return
    path = _kept_image(dev, cfg, name, files, dirs)
    use = path + ".use"
    shutil.copyfile(path, use)
    sim = cairn.Sim.open(use, model=dev.model, seed=1)
    try:
        yield sim
    finally:
        sim.close()  # saves into the copy, which goes
        os.remove(use)


def _name_config(params: dict | None, cfg: dict) -> None:
    """The sweep names a config that fails by the values of the latest LfsFS:
    make them the fill's values with cfg's read_size (the fill used another)."""
    if params is not None:
        _lfs.last_params = dict(params, read_size=cfg["read_size"])


def _kept_image(dev: Device, cfg: dict, name: str, files, dirs) -> str:
    """The image of a fill, made on first use; a fill that failed (NOSPC: the
    config cannot hold the volume) fails again at once."""
    key = (dev.label, name, _on_disk(cfg))
    if key not in _images:
        path = os.path.join(_image_dir(), f"{len(_images)}.img")
        try:
            _fill_lfs(dev, cfg, files, dirs, path).close()  # close writes the image
            _images[key] = (path, None, _lfs.last_params)
        except _lfs.NotApplicable:
            raise  # the sweep skips the config (it repeats another on this device)
        except Exception as e:  # noqa: BLE001  (reported by the sweep)
            _images[key] = (None, f"{type(e).__name__}: {e}", _lfs.last_params)
            if os.path.exists(path):
                os.remove(path)
    path, error, params = _images[key]
    _name_config(params, cfg)
    if error:
        raise RuntimeError(f"littlefs could not fill the volume: {error}")
    return path


def lfs_mount(sim, cfg: dict):
    """littlefs mounts the volume with cfg; returns (LfsFS, the mount's counters)."""
    sim.reset_counters()
    fs = _lfs.LfsFS(sim, format=False, **cfg)
    return fs, sim.counters().as_dict()


def lfs_format_counts(dev: Device, cfg: dict) -> dict:
    """littlefs's format + mount of a fresh aged `dev` with cfg (the format row)."""
    with common.new_sim(dev.model, **dev.sim_kw()) as sim:
        fs, c = common.format_mount_lfs(sim, cfg)
        fs.unmount()
    return c


def lfs_best(dev: Device, run_one):
    """littlefs's sweep (_lfs.best) on dev: (best result, config, tried), or
    (None, None, {}) without littlefs."""
    if not _lfs.available():
        return None, None, {}
    return _lfs.best(run_one, dev.page)


# ---- counters ----
def counts(sim) -> dict:
    return sim.counters().as_dict()


def ms(c: dict) -> float:
    return c["time_ns"] / 1e6


def cost_text(c: dict | None) -> str | None:
    """"1.23 ms, 0 erases, 12 ops (10 reads, 2 programs)" (None stays None)."""
    if c is None:
        return None
    return f"{ms(c):,.2f} ms, {ops_text(c)}"


def ops_text(c: dict) -> str:
    """"0 erases, 12 ops (10 reads, 2 programs)"."""
    return (f"{c['erases']:,} erases, {common.ops(c):,} ops ({c['read_calls']:,} reads, "
            f"{c['prog_calls']:,} programs)")


def read_text(c: dict | None) -> str | None:
    """"1.23 ms, 12 reads (4,096 B)" (None stays None)."""
    if c is None:
        return None
    return f"{ms(c):,.2f} ms, {c['read_calls']:,} reads ({c['read_bytes']:,} B)"


def raw_read_ms(dev: Device, nbytes: int) -> float:
    """One read call of nbytes (NAND: within one page): the least any read costs."""
    c = dev.info.cost
    return (c.read_setup_ns + nbytes * 1e9 / c.read_bytes_per_s) / 1e6


def raw_append_ms(dev: Device, nbytes: int) -> float:
    """The least a durable append of nbytes costs on an aged device: NOR, one
    program of the bytes plus their share of an erase; NAND, one page program
    plus its share of an erase (a page is the smallest durable program)."""
    c, g = dev.info.cost, dev.info.geometry
    if g.medium == cairn.Medium.NAND:
        return common.raw_prog_seconds(dev.model, g.block_size) / g.pages_per_block * 1e3
    return (c.prog_setup_ns + nbytes * 1e9 / c.prog_bytes_per_s + c.prog_page_ns
            + common.raw_erase_ns(dev.model, nbytes)) / 1e6
