"""littlefs on the simulated devices: a block-device adapter for the
`littlefs-python` package (0.19.0, littlefs 2.11, pinned in
bench/requirements.txt) whose reads, programs and erases are calls of the very
same csim device (cairn.Sim.dev), so they show in the same counters and the
same modelled time as cairn's.

    with cairn.Sim("nor-w25q128") as sim:
        fs = LfsFS(sim, read_size=1, cache_size=256)   # formats and mounts
        with fs.open("/log", "ab") as f: ...
        sim.counters()

Mapping: a littlefs block is one erase block of the device (NOR, NAND), so
littlefs's erase is the device's erase. On BLOCK media (sd-tf) a littlefs block
is ``lfs_block_size`` bytes of consecutive sectors and erase does nothing (an
SD card needs no erase; littlefs only needs the bytes to be rewritable).
A program that crosses a page boundary (possible when prog_size is smaller
than the page) is split there, as a driver splits a NOR page-program command;
whole aligned pages still go in one call. littlefs never uses the NAND spare
area and has no bad-block management.

"littlefs at its best" (BENCH-SCENARIOS.md): best() runs each scenario's
littlefs part once per configuration and keeps the lowest modelled time:

1. The grid of the earlier sweep, with prog_size = the page: read_size 1 and
   = page, times cache_size 1x and 4x page (4 runs). lookahead 32 B (256
   blocks per scan), block_cycles 500 (wear levelling on, the middle of
   littlefs's documented 100-1000), metadata_max and inline_max at littlefs's
   defaults (a metadata log may fill its block; files up to
   min(cache_size, 1022 B, block/8) are inline).
2. From the best of the grid, littlefs's other knobs one at a time, each kept
   when it lowers the time (greedy, at most 4 more runs):
   - prog_size = the smallest program the medium takes instead of the page:
     1 B on NOR, page / NOP on NAND (512 B on nand-jffs2); skipped where that is
     the page (nand-dhara, NOP 1; sd-tf, 512 B sectors). Smaller commits for
     synced small writes (the audit: "prog size is fixed to the page").
   - metadata_max = 4096 B: a metadata log bounded to 4 KiB of its block, as
     littlefs suggests for large blocks (compaction reads less); skipped
     where the block is 4 KiB or less (nor-w25q128).
   - block_cycles = 1000, the top of littlefs's range: metadata blocks are
     moved half as often. -1 (wear levelling off) is not tried: cairn levels
     wear, so the comparison keeps both doing it.
   - inline_max = off: no inline files (each file gets its own block at once).
     Larger than the default is not allowed (it is the maximum already).
compact_thresh (2.10) is not exposed by littlefs-python 0.19.0 (its LFSConfig
has no such field, so littlefs's default applies), and no scenario calls
lfs_fs_gc, as none calls cairn_gc. The report lists every configuration run
with the actual values and its figure, and the one kept.
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
METADATA_MAX = 4096  # the bounded metadata log tried on blocks larger than this
INLINE_OFF = 0xFFFFFFFF  # inline_max = (lfs_size_t)-1: no inline files
# The sweep's second stage: (knob, value) tried one at a time on the best so far.
VARIANTS = (("prog_size", "unit"), ("metadata_max", METADATA_MAX), ("block_cycles", 1000),
            ("inline_max", INLINE_OFF))
# sizeof(lfs_t), sizeof(lfs_file_t) of littlefs 2.11 on Cortex-M3 (bench/footprint.sh prints them)
LFS_T_BYTES, LFS_FILE_T_BYTES = 128, 84


class NotApplicable(Exception):
    """A sweep variant that would run the same configuration again on this device."""


last_params = None  # the values the latest LfsFS was built with (best() reports them)


def available() -> bool:
    return littlefs is not None


def version() -> str:
    if littlefs is None:
        return "not installed"
    v = getattr(littlefs, "__version__", "?")
    return f"littlefs-python {v} (littlefs {'.'.join(map(str, littlefs.__LFS_VERSION__))})"


def program_unit(geo) -> int:
    """The smallest program the medium takes: 1 B on NOR, page / NOP on NAND
    (partial-page programs), the sector on BLOCK media."""
    if geo.medium == cairn.Medium.NOR:
        return 1
    if geo.medium == cairn.Medium.NAND and geo.max_partial_programs > 1:
        return geo.page_size // geo.max_partial_programs
    return geo.page_size


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

        def _pieces(self, block: int, off: int, size: int):
            """(page, offset in it, offset in the data, length) of the device
            programs for one littlefs program: split at page boundaries, whole
            aligned pages in one piece (then the same single call as before)."""
            done = 0
            while done < size:
                page, o = self._page(block, off + done)
                left = size - done
                n = min(left, self.page - o) if o or left < self.page else left - left % self.page
                yield page, o, done, n
                done += n

        def read(self, cfg, block, off, size):
            page, o = self._page(block, off)
            d = self.dev
            rc = d.read(d.ctx, page, o, self._buf, size)
            if rc < 0:
                self.errors += 1
            return bytes(ffi.buffer(self._buf, size))

        def prog(self, cfg, block, off, data):
            d = self.dev
            src = ffi.from_buffer("uint8_t[]", data)
            for page, o, start, n in self._pieces(block, off, len(data)):
                if d.prog(d.ctx, page, o, src + start, n, ffi.NULL, 0) < 0:
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
    """The sweep's grid: read size 1 / page x cache 1x / 4x page (prog size = page)."""
    return [{"read_size": r, "cache_size": c * page}
            for r, c in itertools.product((1, page), (1, 4))]


def cfg_text(c: dict) -> str:
    t = (f"read_size={c['read_size']}, prog_size={c.get('prog_size', 'page')}, "
         f"cache_size={c['cache_size']}, lookahead={c.get('lookahead', LOOKAHEAD)} B, "
         f"block_cycles={c.get('block_cycles', BLOCK_CYCLES)}")
    if c.get("metadata_max"):
        t += f", metadata_max={c['metadata_max']}"
    if c.get("inline_max") == INLINE_OFF:
        t += ", inline files off"
    return t


def ram_bytes(c: dict, open_files: int = 1) -> int:
    """littlefs's RAM for config c (docs/BENCHMARKS.md, "RAM accounting"):
    sizeof(lfs_t) + read cache + program cache (cache_size each) + the lookahead
    buffer (lookahead_size bytes) + per open file sizeof(lfs_file_t) and its own
    cache (cache_size; littlefs allocates it at open unless the user gives one)."""
    cache, lookahead = c["cache_size"], c.get("lookahead", LOOKAHEAD)
    return (LFS_T_BYTES + 2 * cache + lookahead
            + open_files * (LFS_FILE_T_BYTES + cache))


def resolve(ctx, geo, p: dict) -> dict:
    """p with the symbolic values of the sweep made numbers for this device;
    NotApplicable when a variant is the same as its base here."""
    p = dict(p)
    if p["prog_size"] == "page":
        p["prog_size"] = ctx.page
    elif p["prog_size"] == "unit":
        if program_unit(geo) == ctx.page:
            raise NotApplicable("the smallest program is the page")
        p["prog_size"] = program_unit(geo)
    if p["metadata_max"] and p["metadata_max"] >= ctx.block_size:
        raise NotApplicable("metadata_max would be the whole block")
    return p


class LfsFS:
    """littlefs on a Sim, formatted and mounted at construction. prog_size is
    "page", "unit" (program_unit) or a number of bytes; metadata_max and
    inline_max 0 are littlefs's defaults."""

    def __init__(self, sim, read_size: int, cache_size: int, lookahead: int = LOOKAHEAD,
                 block_count: int | None = None, lfs_block_size: int | None = None,
                 format: bool = True, prog_size="page", block_cycles: int = BLOCK_CYCLES,
                 metadata_max: int = 0, inline_max: int = 0):
        global last_params
        if littlefs is None:
            raise RuntimeError(LFS_ERROR)
        g = sim.geometry
        self.ctx = SimContext(sim, lfs_block_size)
        if block_count is None:
            block_count = (g.total_bytes // self.ctx.block_size)
        self.params = p = resolve(self.ctx, g, {
            "read_size": read_size, "prog_size": prog_size, "cache_size": cache_size,
            "lookahead": lookahead, "block_cycles": block_cycles,
            "metadata_max": metadata_max, "inline_max": inline_max})
        last_params = dict(p)
        self.fs = littlefs.LittleFS(
            context=self.ctx, mount=False, block_size=self.ctx.block_size,
            block_count=block_count, read_size=read_size, prog_size=p["prog_size"],
            cache_size=cache_size, lookahead_size=lookahead, block_cycles=block_cycles,
            metadata_max=metadata_max, inline_max=inline_max)
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
    A handle is closed exactly once: littlefs keeps open files in a list, and
    a handle freed by Python while still on it crashes the next call; its
    close takes the handle off that list even when the close fails, and a
    second close aborts on littlefs's assertion."""
    fh = None
    try:
        fh = _lfs.file_open(lfs, path, O_W)
        _lfs.file_write(lfs, fh, data)
        closing, fh = fh, None
        _lfs.file_close(lfs, closing)
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


class _Sweep:
    """The configurations run so far, their results, and the best (lowest key)."""

    def __init__(self, run_one, key):
        self.run_one, self.key, self.tried = run_one, key, {}
        self.best_r = self.best_c = self.best_params = None

    def run(self, c: dict) -> None:
        global last_params
        last_params = None
        try:
            r = self.run_one(c)
        except NotApplicable:
            return
        except Exception as e:  # noqa: BLE001  (a config littlefs refuses is a result)
            self.tried[cfg_text(last_params or c)] = f"failed: {type(e).__name__}: {e}"
            return
        params = last_params or c
        self.tried[cfg_text(params)] = r
        if self.best_r is None or r[self.key] < self.best_r[self.key]:
            self.best_r, self.best_c, self.best_params = r, c, params


def best(run_one, page: int, cfgs: list[dict] | None = None, key="time_ns"):
    """Runs run_one(cfg) -> dict (with `key`) for the grid configs(page) (or
    cfgs), then, from the best of the grid, each of VARIANTS on top of the best
    so far (not with cfgs). Returns (best result, best cfg with the values it ran
    with, {cfg_text: result or error text})."""
    sweep = _Sweep(run_one, key)
    for c in cfgs or configs(page):
        sweep.run(c)
    if cfgs is None and sweep.best_c is not None:
        for knob, value in VARIANTS:
            sweep.run({**sweep.best_c, knob: value})
    return sweep.best_r, sweep.best_params, sweep.tried
