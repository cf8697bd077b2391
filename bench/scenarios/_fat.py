"""FAT (ChaN's FatFS through the `fatfs-ng` package, bench/requirements.txt) on
a simulated SD card: a fatfs Disk whose sector reads and writes are calls of
the csim device of a cairn.Sim (BLOCK medium), so they land in the same
counters, card model and modelled time as cairn's.

Only for BLOCK media (sd-tf): FAT needs rewritable sectors. Requests that
cross an allocation unit (the device's erase block) are split at its edge, as
the device interface requires.
"""
from __future__ import annotations

from bench.scenarios.common import cairn, ffi

try:
    import fatfs  # noqa: F401
    from fatfs import wrapper as W
    from fatfs.diskio import Disk
    FAT_ERROR = None
except Exception as e:  # noqa: BLE001  (reported, not fatal)
    W = None
    Disk = object
    FAT_ERROR = f"fatfs-ng is not installed ({e}); run `make venv-bench`"


def available() -> bool:
    return W is not None


def version() -> str:
    try:
        from importlib.metadata import version as v
        return f"fatfs-ng {v('fatfs-ng')} (ChaN FatFS)"
    except Exception:  # noqa: BLE001
        return "fatfs-ng (not installed)"


class SimDisk(Disk):
    """fatfs's disk = a cairn.Sim's struct cairn_dev (BLOCK medium)."""

    def __init__(self, sim: "cairn.Sim"):
        super().__init__()
        g = sim.geometry
        if g.medium != cairn.Medium.BLOCK:
            raise ValueError("FAT runs on BLOCK media only")
        self.dev = sim.dev
        self.ss = g.page_size
        self.per_au = g.pages_per_block
        self.count = g.page_count
        self._buf = ffi.new("uint8_t[]", 1 << 20)
        self.errors = 0

    def ioctl_get_sector_count(self) -> int:
        return self.count

    def ioctl_get_sector_size(self) -> int:
        return self.ss

    def ioctl_get_block_size(self) -> int:
        return self.per_au

    def ioctl_sync(self) -> None:
        d = self.dev
        if d.sync != ffi.NULL:
            d.sync(d.ctx)

    def _pieces(self, sector: int, nbytes: int):
        n = nbytes // self.ss
        done = 0
        while done < n:
            s = sector + done
            k = min(n - done, self.per_au - s % self.per_au)
            yield s, done * self.ss, k * self.ss
            done += k

    def read(self, sector: int, count: int) -> bytes:
        d = self.dev
        if count > len(self._buf):
            self._buf = ffi.new("uint8_t[]", count)
        for s, off, ln in self._pieces(sector, count):
            if d.read(d.ctx, s, 0, self._buf + off, ln) < 0:
                self.errors += 1
        return bytes(ffi.buffer(self._buf, count))

    def write(self, sector: int, count: int, buff: bytes) -> None:
        d = self.dev
        src = ffi.from_buffer(buff)
        for s, off, ln in self._pieces(sector, count):
            if d.prog(d.ctx, s, 0, src + off, ln, ffi.NULL, 0) < 0:
                self.errors += 1


class FatFS:
    """FAT formatted (FatFS's defaults) and mounted on a Sim."""

    def __init__(self, sim):
        if W is None:
            raise RuntimeError(FAT_ERROR)
        self.disk = SimDisk(sim)
        self.part = W.Partition(self.disk)
        self.part.mkfs()
        self.part.mount()

    @staticmethod
    def _ok(rc, what):
        if isinstance(rc, tuple):
            rc = rc[0]
        if rc != 0:
            raise OSError(f"FatFS {what}: {W.fresult_to_name(rc) if hasattr(W, 'fresult_to_name') else rc}")

    def open(self, path: str, write: bool = True):
        fh = W.FIL_Handle()
        mode = (W.PY_FA_WRITE | W.PY_FA_READ | W.PY_FA_OPEN_ALWAYS) if write else W.PY_FA_READ
        self._ok(W.pyf_open(fh, path.encode(), mode), f"open {path}")
        return fh

    def write(self, fh, data) -> int:
        rc, n = W.pyf_write(fh, data)
        self._ok(rc, "write")
        if n != len(data):
            raise OSError(f"FatFS write: {n} of {len(data)} bytes (disk full)")
        return n

    def seek(self, fh, off: int) -> None:
        self._ok(W.pyf_lseek(fh, off), "lseek")

    def sync(self, fh) -> None:
        self._ok(W.pyf_sync(fh), "sync")

    def close(self, fh) -> None:
        self._ok(W.pyf_close(fh), "close")

    def remove(self, path: str) -> None:
        self._ok(W.pyf_unlink(path.encode()), f"unlink {path}")
