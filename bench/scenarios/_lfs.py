"""littlefs on the simulated devices: a block-device adapter for the
`littlefs-python` package (bench/requirements.txt) whose reads, programs and
erases are calls of the very same csim device (cairn.Sim.dev), so they show in
the same counters and the same modelled time as cairn's.

    with cairn.Sim("nor-w25q128") as sim:
        fs = LfsFS(sim, read_size=1, cache_size=256)   # formats and mounts
        with fs.open("/log", "ab") as f: ...
        sim.counters()

Mapping: a littlefs block is one erase block of the device (NOR, NAND), so
littlefs's erase is the device's erase. On BLOCK media (sd-tf) a littlefs block
is ``lfs_block_size`` bytes of consecutive sectors and erase does nothing (an
SD card needs no erase; littlefs only needs the bytes to be rewritable).
prog_size is the page size (NAND: a page can only be programmed whole, NOR: the
program unit of the cost model). littlefs never uses the NAND spare area and has
no bad-block management.

The configurations tried for "littlefs at its best" (BENCH-SCENARIOS.md): read
size 1 and = page, cache 1x and 4x page, lookahead 32 bytes.
"""
from __future__ import annotations

import itertools

from bench.scenarios.common import cairn, ffi

try:
    import littlefs
    from littlefs import lfs as _lfs
    LFS_ERROR = None
except Exception as e:  # noqa: BLE001  (reported, not fatal)
    littlefs = None
    _lfs = None
    LFS_ERROR = f"littlefs-python is not installed ({e}); run `make venv-bench`"

LOOKAHEAD = 32
BLOCK_CYCLES = 500  # littlefs's wear levelling on (its documented range is 100-1000)


def available() -> bool:
    return littlefs is not None


def version() -> str:
    if littlefs is None:
        return "not installed"
    v = getattr(littlefs, "__version__", "?")
    return f"littlefs-python {v} (littlefs {'.'.join(map(str, littlefs.__LFS_VERSION__))})"


if littlefs is not None:
    class SimContext(littlefs.UserContext):
        """littlefs's block device = a cairn.Sim's struct cairn_dev."""

        def __init__(self, sim: "cairn.Sim", lfs_block_size: int | None = None):
            # UserContext.__init__ would allocate a RAM image: not called.
            g = sim.geometry
            self.sim = sim
            self.dev = sim.dev
            self.page = g.page_size
            self.block_media = g.medium == cairn.Medium.BLOCK
            if self.block_media:
                self.block_size = lfs_block_size or 4096
                self.pages_per_block = self.block_size // g.page_size
            else:
                self.block_size = g.block_size
                self.pages_per_block = g.pages_per_block
            self._buf = ffi.new("uint8_t[]", self.block_size)
            self.errors = 0

        def _page(self, block: int, off: int) -> tuple[int, int]:
            return block * self.pages_per_block + off // self.page, off % self.page

        def read(self, cfg, block, off, size):
            page, o = self._page(block, off)
            d = self.dev
            rc = d.read(d.ctx, page, o, self._buf, size)
            if rc < 0:
                self.errors += 1
            return bytes(ffi.buffer(self._buf, size))

        def prog(self, cfg, block, off, data):
            page, o = self._page(block, off)
            d = self.dev
            rc = d.prog(d.ctx, page, o, ffi.from_buffer(data), len(data), ffi.NULL, 0)
            if rc < 0:
                self.errors += 1
                return -84  # LFS_ERR_CORRUPT: littlefs relocates
            return 0

        def erase(self, cfg, block):
            if self.block_media:
                return 0
            d = self.dev
            rc = d.erase(d.ctx, block)
            if rc < 0:
                self.errors += 1
                return -84
            return 0

        def sync(self, cfg):
            d = self.dev
            if d.sync != ffi.NULL:
                d.sync(d.ctx)
            return 0


def configs(page: int) -> list[dict]:
    """The four configurations tried: read size 1 / page x cache 1x / 4x page."""
    return [{"read_size": r, "cache_size": c * page}
            for r, c in itertools.product((1, page), (1, 4))]


def cfg_text(c: dict) -> str:
    return (f"read_size={c['read_size']}, prog_size=page, cache_size={c['cache_size']}, "
            f"lookahead={LOOKAHEAD} B, block_cycles={BLOCK_CYCLES}")


def ram_estimate(c: dict, open_files: int = 1) -> int:
    """littlefs's RAM: read + program caches, the lookahead buffer, one cache per
    open file, and its structures (lfs_t ~ 120 B, lfs_file_t ~ 90 B each, from
    littlefs 2.9's lfs.h on a 32-bit target)."""
    return c["cache_size"] * (2 + open_files) + LOOKAHEAD + 120 + 90 * open_files


class LfsFS:
    """littlefs on a Sim, formatted and mounted at construction."""

    def __init__(self, sim, read_size: int, cache_size: int, lookahead: int = LOOKAHEAD,
                 block_count: int | None = None, lfs_block_size: int | None = None,
                 format: bool = True):
        if littlefs is None:
            raise RuntimeError(LFS_ERROR)
        g = sim.geometry
        self.ctx = SimContext(sim, lfs_block_size)
        if block_count is None:
            block_count = (g.total_bytes // self.ctx.block_size)
        self.config = {"read_size": read_size, "cache_size": cache_size}
        self.fs = littlefs.LittleFS(
            context=self.ctx, mount=False, block_size=self.ctx.block_size,
            block_count=block_count, read_size=read_size, prog_size=g.page_size,
            cache_size=cache_size, lookahead_size=lookahead, block_cycles=BLOCK_CYCLES)
        if format:
            self.fs.format()
        self.fs.mount()
        self.lfs = self.fs.fs  # the raw LFSFilesystem for littlefs.lfs calls

    def open(self, path, mode="rb"):
        return self.fs.open(path, mode)

    def raw_open(self, path, flags):
        return _lfs.file_open(self.lfs, path, flags)

    def unmount(self):
        self.fs.unmount()

    def remount(self):
        self.fs.unmount()
        self.fs.mount()


def lfs_module():
    return _lfs


def write_file(lfs, path, data) -> bool:
    """Writes a whole file with littlefs; False (file removed) when it fails.
    A handle is always closed: littlefs keeps open files in a list, and a
    handle freed by Python while still on it crashes the next call."""
    fh = None
    try:
        fh = _lfs.file_open(lfs, path, O_W)
        _lfs.file_write(lfs, fh, data)
        _lfs.file_close(lfs, fh)
        return True
    except Exception:  # noqa: BLE001  (NOSPC and friends)
        if fh is not None:
            try:
                _lfs.file_close(lfs, fh)
            except Exception:  # noqa: BLE001
                pass
        try:
            _lfs.remove(lfs, path)
        except Exception:  # noqa: BLE001
            pass
        return False


# open flags of littlefs (lfs.h): RDONLY 1, WRONLY 2, RDWR 3, CREAT 0x100,
# EXCL 0x200, TRUNC 0x400, APPEND 0x800
O_R, O_W, O_A, O_RW = 1, 2 | 0x100 | 0x400, 2 | 0x100 | 0x800, 3


def best(run_one, page: int, cfgs: list[dict] | None = None, key="time_ns"):
    """Runs run_one(cfg) -> dict (with `key`) for every config; returns
    (best result, best cfg, {cfg_text: result or error text})."""
    tried = {}
    best_r = best_c = None
    for c in cfgs or configs(page):
        try:
            r = run_one(c)
        except Exception as e:  # noqa: BLE001  (a config littlefs refuses is a result)
            tried[cfg_text(c)] = f"failed: {type(e).__name__}: {e}"
            continue
        tried[cfg_text(c)] = r
        if best_r is None or r[key] < best_r[key]:
            best_r, best_c = r, c
    return best_r, best_c, tried
