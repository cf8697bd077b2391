"""cairn.Image: a cairn volume as a raw image, built and read in memory (for
build systems: a folder or a dict of files in, the bytes to program out).

The raw image format is the C tool's (docs/TOOL.md "Raw images"): NOR and
BLOCK images are the flash contents page after page; NAND images hold each
page's data followed by its OOB bytes (nanddump --oob), OOB bytes 0-1 the
bad-block marker and cairn's spare area from OOB byte 2. So `cairn ls` reads
an image saved here, and an image of `cairn build` opens here.

Underneath: a simulated device in RAM (cairn.Sim) holds the flash, the
volume is mounted on it with the tool's configuration, and the raw image is
loaded into and dumped from it an erase block at a time (csim_peek_block,
csim_poke_block). A folder is copied in the tool's order (names sorted by
their bytes, files in 128 KiB writes), so the same folder with the same
geometry gives the same bytes, and the bytes of `cairn build`.
"""

from __future__ import annotations

import mmap
import os
import posixpath
import stat as _stat
import warnings
from collections.abc import Iterator, Mapping

from ._errors import Err, Error, NoSpaceError, SimError
from ._ffi import ffi, lib
from ._fs import FS, NAME_MAX, O_CREAT, O_TRUNC, O_WRONLY, CheckReport, FsInfo, Info
from ._probe import Hints, ImageError, detect, fit_write_unit
from ._sim import Cost, Ftl, Geometry, Medium, Sim

COPY_CHUNK = 128 * 1024  # the tool's write size (part of "the same bytes")
FILE_MAX = 0x7FFFFFFF  # cairn's largest file
MARKER_BYTES = 2  # NAND OOB bytes before cairn's spare area
# The tool's mount: cairn_config fields that shape what is written.
MOUNT_CONFIG = {"cache_nodes": 32, "max_open": 8}
MOUNT_CACHE_MOST = 16384  # slots a read-only mount may grow its cache to

_MEDIA = {"nor": Medium.NOR, "nand": Medium.NAND, "block": Medium.BLOCK, "sd": Medium.BLOCK,
          "emmc": Medium.BLOCK}
_DEFAULT_MODEL = {Medium.NOR: "nor-m25p16", Medium.NAND: "nand-dhara", Medium.BLOCK: "sd-tf"}


# ---- arguments ----

def parse_size(value) -> int:
    """A byte count: an int, or a string with an optional K/M/G suffix (powers
    of 1024) or a 0x prefix, as the tool's --size ("1M", "0x100000")."""
    if isinstance(value, int):
        n = value
    else:
        s = str(value).strip()
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:].upper(), 1)
        if mult != 1:
            s = s[:-1]
        try:
            n = int(s, 0) * mult
        except ValueError:
            raise ImageError(f"not a size: {value!r} (bytes, with K, M, G or 0x)") from None
    if n < 0:
        raise ImageError(f"a negative size: {value!r}")
    return n


def parse_medium(value) -> int | None:
    """Medium from "nor", "nand", "block" ("sd", "emmc"), a Medium, or None."""
    if value is None or isinstance(value, int):
        return None if value is None else Medium(value)
    try:
        return _MEDIA[str(value).lower()]
    except KeyError:
        raise ImageError(f"unknown medium {value!r} (nor, nand, block)") from None


def _model_info(model: str):
    try:
        return Sim.model_info(model)
    except SimError:
        raise ImageError(f"unknown model {model!r} ({', '.join(Sim.models())})") from None


# ---- the geometry of a new image (tools/vol.c geometry_from_opts) ----

def _block_ftl(geo: Geometry) -> Ftl | None:
    """The simulator needs a card model for BLOCK media; it only costs time in
    the simulator, so any valid one does: one allocation unit per block."""
    if geo.medium != Medium.BLOCK:
        return None
    return Ftl(au_bytes=geo.block_size, flash_page_bytes=geo.page_size, open_aus=4)


def _new_sim(geo: Geometry) -> Sim:
    return Sim.custom(geo, Cost(), _block_ftl(geo))


def _mem_size(sim: Sim, **config) -> int:
    """cairn_mem_size for this device (0: cairn refuses the geometry)."""
    cfg = ffi.new("struct cairn_config *")
    cfg.dev = sim.dev
    for name, value in config.items():
        setattr(cfg, name, value)
    return int(lib.cairn_mem_size(cfg))


def _refusal(geo: Geometry) -> str:
    """cairn_config_why for this geometry: why cairn refuses it."""
    try:
        with _new_sim(geo) as sim:
            cfg = ffi.new("struct cairn_config *")
            cfg.dev = sim.dev
            why = lib.cairn_config_why(cfg)
            return ffi.string(why).decode() if why != ffi.NULL else "accepted"
    except SimError as e:
        return f"the simulator refuses it too ({e})"


def _accepted(geo: Geometry) -> bool:
    """Would cairn format this geometry?"""
    try:
        with _new_sim(geo) as sim:
            return _mem_size(sim) != 0
    except SimError:
        return False


def _with_segment(geo: Geometry, bpl: int, model_write_unit: int) -> Geometry:
    seg_bytes = geo.block_size * bpl
    wu = model_write_unit
    if geo.medium == Medium.BLOCK:
        wu = fit_write_unit(model_write_unit, geo.page_size, seg_bytes)
    return Geometry(**{**geo.__dict__, "blocks_per_lblock": bpl, "write_unit": wu})


def new_geometry(model=None, *, medium=None, page=None, block=None, size=None, spare=None,
                 lblock=None) -> tuple[Geometry, int]:
    """(geometry, oob) of a new image from the tool's geometry flags
    (docs/TOOL.md "Geometry when creating"): a model, or a medium (its base
    model), with page, erase block and volume size in bytes, NAND OOB bytes per
    page (default page / 32) and erase blocks per segment (default: the fewest
    cairn accepts). geometry.spare_size is cairn's share of the OOB."""
    med = parse_medium(medium)
    if model is None:
        if med is None:
            raise ImageError("no geometry: give model= (" + ", ".join(Sim.models())
                             + ") or medium= ('nor', 'nand', 'block') with size=")
        model = _DEFAULT_MODEL[med]
    g = _model_info(model).geometry
    if med is not None and med != g.medium:
        raise ImageError(f"medium={medium!r} contradicts model={model!r} "
                         f"(a {Medium(g.medium).name.lower()} model)")
    page_size = parse_size(page) if page else g.page_size
    block_bytes = parse_size(block) if block else g.block_size
    if block_bytes % page_size or not 0 < block_bytes // page_size <= 65535:
        raise ImageError(f"the erase block ({block_bytes} bytes) must be a whole number of pages "
                         f"({page_size} bytes), at most 65535 of them")
    oob = 0
    if g.medium == Medium.NAND:
        oob = page_size // 32 if spare is None else parse_size(spare)
    elif spare:
        raise ImageError("spare= is for NAND images (OOB bytes per page)")
    volume = parse_size(size) if size else g.block_count * block_bytes
    if volume % block_bytes:
        raise ImageError(f"size={volume} is not a whole number of erase blocks "
                         f"({block_bytes} bytes)")
    if not 0 < volume // block_bytes <= 0xFFFFFFFF:
        raise ImageError(f"a volume of {volume} bytes: no whole erase block, or too many")
    base = Geometry(page_size=page_size, spare_size=max(oob - MARKER_BYTES, 0),
                    pages_per_block=block_bytes // page_size,
                    block_count=volume // block_bytes, medium=g.medium,
                    max_partial_programs=g.max_partial_programs)
    geo = _pick_segment(base, lblock, g.write_unit)
    if geo is None:
        # blocks_per_lblock 0: cairn's own pick says why no segment size fits
        why = _refusal(_with_segment(base, int(lblock or 0), g.write_unit))
        raise ImageError(
            f"cairn refuses this geometry: {base.block_count} erase blocks of {block_bytes} "
            f"bytes ({lblock or 1} per segment, {page_size}-byte pages): {why}. Try a larger "
            "size= or a different block=/lblock=")
    return geo, oob


def _pick_segment(base: Geometry, lblock, model_write_unit: int) -> Geometry | None:
    """The segment: lblock erase blocks, else the fewest (1, 2, 4 ... 512) that
    divide the volume and that cairn accepts; when no power of two does, the
    fewest blocks of any number that cairn accepts, the volume cut to whole
    segments (as the tool does, docs/TOOL.md). None when cairn refuses."""
    tries = [int(lblock)] if lblock else [1 << k for k in range(10)]
    for bpl in tries:
        geo = _with_segment(base, bpl, model_write_unit)
        if base.block_count % bpl == 0 and _accepted(geo):
            return geo
    if lblock:
        return None
    for bpl in range(1, min(base.block_count // 11, 1023) + 1):
        whole = base.block_count - base.block_count % bpl
        cut = Geometry(**{**base.__dict__, "block_count": whole})
        geo = _with_segment(cut, bpl, model_write_unit)
        if _accepted(geo):
            return geo
    return None


# ---- volume paths ----

def _split_path(path) -> list[bytes]:
    """A volume path as its names (bytes); "/" and "" are the root."""
    b = os.fsencode(path)
    names = [n for n in b.split(b"/") if n]
    if any(n in (b".", b"..") for n in names):
        raise ValueError(f"'.' and '..' are not names in a cairn volume: {path!r}")
    return names


def _join(names: list[bytes]) -> bytes:
    return b"/" + b"/".join(names)


def _show(p: bytes) -> str:
    return os.fsdecode(p)


class Image:
    """A cairn volume in memory, read from or written as a raw image.

    ``Image(model=None, *, medium=None, page=None, block=None, size=None,
    spare=None, lblock=None)`` makes a new, empty (formatted) volume; the
    geometry arguments are the C tool's flags (``--model`` ... ``--lblock``,
    docs/TOOL.md), sizes as ints or strings like ``"1M"``. Build one with
    ``Image.from_dir(folder, ...)`` or ``Image.from_files({path: bytes}, ...)``;
    read one with ``Image.open(path_or_bytes)`` (the geometry is read from the
    image, as the tool does; the arguments only settle what the image cannot
    tell). Then ``listdir``, ``read_file``, ``walk``, ``files``, ``extract``,
    ``write_file``, ``add_dir``, ``mkdir``, ``remove``, ``rename``; ``save(path)``
    or ``tobytes()`` give the raw image. Use it with ``with`` (or ``close()``).

    Reading mounts the volume read-only, so an image only read saves as the
    same bytes; the first change remounts it read-write.
    """

    def __init__(self, model=None, *, medium=None, page=None, block=None, size=None,
                 spare=None, lblock=None):
        geo, oob = new_geometry(model, medium=medium, page=page, block=block, size=size,
                                spare=spare, lblock=lblock)
        self._setup(_new_sim(geo), oob, node_size=0, path=None)
        try:
            FS(self._sim, **MOUNT_CONFIG).format()
        except BaseException:
            self.close()
            raise

    def _setup(self, sim: Sim, oob: int, node_size: int, path) -> None:
        self._sim = sim
        self._oob = oob
        self._node_size = node_size
        self._path = path
        self._fs: FS | None = None
        self._fs_rw = False
        self._marks: dict[int, bytes] = {}  # NAND: bad-block marks as the image had them

    # ---- building ----
    @classmethod
    def from_dir(cls, folder, model=None, **geometry) -> "Image":
        """A new image holding a copy of the folder (recursively): regular files
        and directories, names in byte order; anything else is skipped with a
        warning. Geometry as for Image()."""
        image = cls(model, **geometry)
        try:
            image.add_dir(folder, "/")
        except BaseException:
            image.close()
            raise
        return image

    @classmethod
    def from_files(cls, files: Mapping, model=None, **geometry) -> "Image":
        """A new image holding ``files``: {path: bytes}, a path's directories
        made as needed, a value of None making an (empty) directory. Geometry
        as for Image()."""
        image = cls(model, **geometry)
        try:
            image.add_files(files, "/")
        except BaseException:
            image.close()
            raise
        return image

    @classmethod
    def open(cls, source, *, model=None, medium=None, page=None, block=None, size=None,
             spare=None) -> "Image":
        """Read a raw image: a path, or the bytes of one. Its geometry is read
        from it (tools/probe.c: a checkpoint, the image's length); model= or
        medium= and page=, block=, size=, spare= (NAND OOB bytes per page; 0
        for a NAND image of the data alone) settle what the image cannot tell
        and are checked against it."""
        hints = _hints(model, medium, page, block, size, spare)
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            with open(path, "rb") as f:
                if os.fstat(f.fileno()).st_size == 0:
                    raise ImageError(f"{path}: empty file")
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as raw:
                    return cls._load(raw, hints, path)
        return cls._load(bytes(source), hints, None)

    @classmethod
    def _load(cls, raw, hints: Hints, path) -> "Image":
        where = f"{path}: " if path else ""
        if raw[:8] == b"CAIRNSIM":
            raise ImageError(f"{where}a simulator image file (sim/, header CAIRNSIM), not a raw "
                             "image: open it with cairn.Sim.open")
        try:
            found = detect(raw, hints)
        except ImageError as e:
            raise ImageError(f"{where}{e}") from None
        image = cls.__new__(cls)
        image._setup(_new_sim(found.geometry), found.oob, found.header.node_size, path)
        try:
            image._fill(raw)
        except BaseException:
            image.close()
            raise
        return image

    def _fill(self, raw) -> None:
        """Load the raw image into the simulated device, block by block;
        erased blocks are left unallocated, NAND bad-block marks become bad
        blocks."""
        g = self._sim.geometry
        stride = g.page_size + self._oob
        block_raw = stride * g.pages_per_block
        erased = b"\xff" * block_raw
        for b in range(g.block_count):
            chunk = raw[b * block_raw:(b + 1) * block_raw]
            if len(chunk) < block_raw:  # the image ends early: the rest reads erased
                chunk = bytes(chunk) + erased[len(chunk):]
            if chunk == erased:
                continue
            if self._oob == 0:
                self._sim.poke_block(b, chunk)
                continue
            if chunk[g.page_size] != 0xFF:
                self._sim.set_factory_bad(b)
                self._marks[b] = bytes(chunk[g.page_size:g.page_size + MARKER_BYTES])
            data, spare = self._split_oob(chunk)
            self._sim.poke_block(b, data, spare if g.spare_size else None)

    def _split_oob(self, chunk) -> tuple[bytes, bytes]:
        """A NAND block of the image as (data of its pages, their spare areas)."""
        g = self._sim.geometry
        ps, ss = g.page_size, g.spare_size
        stride = ps + self._oob
        spare_at = ps + min(self._oob, MARKER_BYTES)
        data = b"".join(chunk[p * stride:p * stride + ps] for p in range(g.pages_per_block))
        spare = b"".join(chunk[p * stride + spare_at:p * stride + spare_at + ss]
                         for p in range(g.pages_per_block))
        return data, spare

    def _raw_blocks(self) -> Iterator[bytes]:
        """The raw image, one erase block at a time."""
        g = self._sim.geometry
        erased = None
        for b in range(g.block_count):
            if self._oob == 0:
                yield self._sim.peek_block(b)
                continue
            data, spare = self._sim.peek_block(b, spare=True)
            bad = self._sim.is_bad(b)
            if not bad and data.count(0xFF) == len(data) and spare.count(0xFF) == len(spare):
                if erased is None:
                    erased = b"\xff" * ((g.page_size + self._oob) * g.pages_per_block)
                yield erased
                continue
            yield self._join_oob(data, spare, self._mark(b) if bad else None)

    def _mark(self, block: int) -> bytes:
        """The bad-block mark of a bad block: the one the image had, else
        zeros (what the tool's mark_bad writes)."""
        n = min(self._oob, MARKER_BYTES)
        return self._marks.get(block, b"\x00" * n)[:n]

    def _join_oob(self, data: bytes, spare: bytes, mark: bytes | None) -> bytes:
        """A NAND block's pages as the image holds them: data, then the OOB
        (bad-block mark, cairn's spare area, 0xFF up to the OOB size)."""
        g = self._sim.geometry
        ps, ss = g.page_size, g.spare_size
        marker = min(self._oob, MARKER_BYTES)
        pad = b"\xff" * (self._oob - marker - ss)
        parts = []
        for p in range(g.pages_per_block):
            parts.append(data[p * ps:(p + 1) * ps])
            parts.append(mark if mark is not None and p == 0 else b"\xff" * marker)
            parts.append(spare[p * ss:(p + 1) * ss])
            parts.append(pad)
        return b"".join(parts)

    # ---- output ----
    def tobytes(self) -> bytes:
        """The raw image: exactly the bytes to program (the volume unmounted
        cleanly first)."""
        self._settle()
        return b"".join(self._raw_blocks())

    __bytes__ = tobytes

    def save(self, path=None) -> None:
        """Write the raw image to path (default: the file it was opened from).
        Written over the file it was opened from, bytes past the volume (a
        longer image: a firmware dump) are kept; any other file is replaced.
        A regular file is replaced whole (written beside it, flushed, then
        renamed over it), so a host that dies halfway leaves the old image or
        the new one, never a mix; a block device is written in place."""
        if path is None:
            if self._path is None:
                raise ValueError("save: give a path (this image was not opened from a file)")
            path = self._path
        self._settle()
        in_place = self._path is not None and os.path.exists(path) and \
            os.path.samefile(path, self._path)
        if os.path.exists(path) and not os.path.isfile(path):
            with open(path, "r+b" if in_place else "wb") as f:  # a device
                for chunk in self._raw_blocks():
                    f.write(chunk)
            return
        self._replace(path, in_place)

    def _replace(self, path, keep_tail: bool) -> None:
        """The image into path's directory under a temporary name, the old
        file's bytes past the volume after it (keep_tail), then renamed over
        path with the old file's permissions."""
        tmp = "%s.cairn-save-%d" % (path, os.getpid())
        try:
            with open(tmp, "wb") as f:
                size = 0
                for chunk in self._raw_blocks():
                    f.write(chunk)
                    size += len(chunk)
                if keep_tail:
                    with open(path, "rb") as old:
                        old.seek(size)
                        for tail in iter(lambda: old.read(1 << 20), b""):
                            f.write(tail)
                f.flush()
                os.fsync(f.fileno())
            if os.path.exists(path):
                os.chmod(tmp, _stat.S_IMODE(os.stat(path).st_mode))
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def _settle(self) -> None:
        """Unmount (a clean checkpoint on the device) before the bytes are taken;
        a mount abandoned through image.fs.abandon() (a power cut) leaves the
        bytes as the cut left them."""
        self._live()
        if self._fs is not None:
            fs, self._fs = self._fs, None
            if fs.mounted:
                fs.unmount()

    # ---- geometry ----
    @property
    def geometry(self) -> Geometry:
        """The device's geometry (spare_size: cairn's share of the NAND OOB)."""
        return self._sim.geometry

    @property
    def medium(self) -> Medium:
        return Medium(self._sim.geometry.medium)

    @property
    def oob(self) -> int:
        """NAND: OOB bytes per page in the raw image (0 for flat images)."""
        return self._oob

    @property
    def image_size(self) -> int:
        """Bytes of the raw image."""
        g = self._sim.geometry
        return (g.page_size + self._oob) * g.page_count

    # ---- mounting ----
    def _live(self) -> None:
        if self._sim is None or self._sim.closed:
            raise ValueError("the image is closed")

    def _fs_for(self, write: bool) -> FS:
        """The volume, mounted read-only for reading (nothing is written) and
        read-write once something changes."""
        self._live()
        if self._fs is not None and (self._fs_rw or not write):
            return self._fs
        if self._fs is not None:
            self._fs.unmount()
            self._fs = None
        cache = MOUNT_CONFIG["cache_nodes"]
        while True:
            fs = FS(self._sim, node_size=self._node_size, read_only=not write,
                    **{**MOUNT_CONFIG, "cache_nodes": cache})
            try:
                fs.mount()
                break
            except NoSpaceError:
                # a read-only replay keeps the nodes the journal changes in the
                # cache: one too small for it says NOSPC (tools/vol.c does the same)
                if write or cache >= MOUNT_CACHE_MOST:
                    raise
                cache *= 2
        self._fs, self._fs_rw = fs, write
        return fs

    @property
    def fs(self) -> FS:
        """The mounted file system (read-write) for everything else of the
        cairn API (open, attributes, fs_stat...). Valid until the next save(),
        tobytes() or close()."""
        return self._fs_for(write=True)

    def close(self) -> None:
        """Free the device (nothing is saved). Idempotent."""
        if self._sim is None:
            return
        if self._fs is not None:
            self._fs.abandon()
            self._fs = None
        self._sim.close()
        self._sim = None

    def __enter__(self) -> "Image":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._sim is None:
            return "<cairn.Image closed>"
        g = self._sim.geometry
        oob = f" + {self._oob} B OOB" if self._oob else ""
        return (f"<cairn.Image {self.medium.name.lower()} {g.total_bytes} bytes, "
                f"{g.page_size} B pages{oob}>")

    # ---- reading ----
    def stat(self, path) -> Info:
        return self._fs_for(False).stat(_join(_split_path(path)))

    def exists(self, path) -> bool:
        return self._fs_for(False).exists(_join(_split_path(path)))

    def isdir(self, path) -> bool:
        return self.exists(path) and self.stat(path).is_dir

    def isfile(self, path) -> bool:
        return self.exists(path) and self.stat(path).is_file

    def scandir(self, path="/") -> list[Info]:
        """The entries of a directory, sorted by name (bytes, as the tool)."""
        entries = self._fs_for(False).scandir(_join(_split_path(path)))
        return sorted(entries, key=lambda e: os.fsencode(e.name))

    def listdir(self, path="/") -> list[str]:
        """Names in a directory, sorted."""
        return [e.name for e in self.scandir(path)]

    def read_file(self, path) -> bytes:
        return self._fs_for(False).read_file(_join(_split_path(path)))

    def walk(self, top="/") -> Iterator[tuple[str, list[str], list[str]]]:
        """Like os.walk, top-down, names sorted: (dirpath, dirnames, filenames)
        with absolute volume paths ("/", "/etc", ...)."""
        top = _show(_join(_split_path(top)))
        entries = self.scandir(top)
        dirs = [e.name for e in entries if e.is_dir]
        yield top, dirs, [e.name for e in entries if not e.is_dir]
        for d in dirs:
            yield from self.walk(posixpath.join(top, d))

    def files(self, top="/") -> dict[str, bytes | None]:
        """Everything below top as {path: bytes}, directories as None (the
        form from_files takes), paths relative to top, in walk order."""
        out: dict[str, bytes | None] = {}
        base = _show(_join(_split_path(top)))
        for dirpath, dirs, names in self.walk(base):
            rel = posixpath.relpath(dirpath, base)
            for d in dirs:
                out[posixpath.normpath(posixpath.join(rel, d))] = None
            for n in names:
                out[posixpath.normpath(posixpath.join(rel, n))] = \
                    self.read_file(posixpath.join(dirpath, n))
        return out

    def extract(self, dest, top="/") -> None:
        """Copy everything below top into the host folder dest (made if
        needed; existing files are overwritten)."""
        src = _split_path(top)
        dest = os.fsencode(dest)
        os.makedirs(dest, exist_ok=True)
        for dirpath, dirs, names in self.walk(_join(src)):
            rel = _split_path(dirpath)[len(src):]
            here = os.path.join(dest, *rel) if rel else dest
            for d in dirs:
                os.makedirs(os.path.join(here, os.fsencode(d)), exist_ok=True)
            for n in names:
                with open(os.path.join(here, os.fsencode(n)), "wb") as f:
                    f.write(self.read_file(posixpath.join(dirpath, n)))

    def check(self) -> CheckReport:
        """cairn_check on the volume (as `cairn fsck`): report.ok, .problems."""
        return self._fs_for(False).check()

    def fs_stat(self) -> FsInfo:
        """Space and wear (cairn_fs_stat)."""
        return self._fs_for(False).fs_stat()

    # ---- changing ----
    def mkdir(self, path, parents: bool = False, exist_ok: bool = False) -> None:
        """Make a directory (with its parents when parents is true)."""
        names = _split_path(path)
        fs = self._fs_for(True)
        for i in range(1 if parents else len(names), len(names) + 1):
            p = _join(names[:i])
            try:
                fs.mkdir(p)
            except Error as e:
                last = i == len(names)
                if e.code != Err.EXIST or (last and not exist_ok) or not fs.stat(p).is_dir:
                    raise

    def write_file(self, path, data, parents: bool = True) -> None:
        """Write a file (created or replaced), its directories made when
        parents is true. Written in 128 KiB pieces, as the tool writes, and
        whole or not at all: an existing file is replaced by a rename once
        the new one is written beside it, so an error (NoSpaceError on a
        full volume) leaves it as it was."""
        names = _split_path(path)
        if not names:
            raise IsADirectoryError("write_file: '/' is a directory")
        if parents and len(names) > 1:
            self.mkdir(_join(names[:-1]), parents=True, exist_ok=True)
        self._put(_join(names), memoryview(data).cast("B"))

    def _put(self, path: bytes, data: memoryview) -> None:
        if len(data) > FILE_MAX:
            raise Error.from_code(Err.FBIG, "larger than a cairn file can be (2 GiB - 1 bytes)",
                                  op="write", path=_show(path))

        def write(f) -> None:
            for off in range(0, len(data), COPY_CHUNK):
                f.write(data[off:off + COPY_CHUNK])
        self._write_whole(path, write)

    def _put_host_file(self, src: bytes, path: bytes) -> None:
        with open(src, "rb") as host:
            def write(f) -> None:
                total = 0
                while chunk := host.read(COPY_CHUNK):
                    total += len(chunk)
                    if total > FILE_MAX:
                        raise Error.from_code(Err.FBIG, "larger than a cairn file can be "
                                              "(2 GiB - 1 bytes)", op="write", path=_show(src))
                    f.write(chunk)
            self._write_whole(path, write)

    def _write_whole(self, path: bytes, write) -> None:
        """A file at path written by write(f), whole or not at all, as the
        tool's put: a failure removes what was written, and an existing file
        is replaced by a rename once the new one is closed. (Until session 40
        it was written over, and a replacement that did not fit left it cut
        short.)"""
        fs = self._fs_for(True)
        target = path
        try:
            if fs.stat(path).is_file:
                target = _name_beside(fs, path)
        except FileNotFoundError:
            pass
        f = fs.open(target, O_WRONLY | O_CREAT | O_TRUNC)
        try:
            write(f)
            f.close()
            if target != path:
                fs.rename(target, path)
        except BaseException as e:
            try:
                fs.remove(target)
                if not f.closed:
                    f.close()  # (its file removed: closes)
            except Error:
                pass
            if isinstance(e, Error) and target != path:
                msg = e.message
                if e.code == Err.NOSPC:
                    msg += ("; the file is as it was (its replacement must fit beside it: "
                            "remove it first to make room)")
                raise Error.from_code(e.code, msg, op=e.op, path=_show(path),
                                      written=e.written) from e
            raise

    def add_dir(self, folder, dest="/") -> None:
        """Copy a host folder's contents into the directory dest (made if
        needed; existing directories are merged, files replaced): regular
        files and directories, names in byte order; anything else (symbolic
        links, devices) is skipped with a warning."""
        src = os.fsencode(folder)
        if not os.path.isdir(src):
            raise NotADirectoryError(f"{os.fsdecode(src)}: not a directory")
        names = _split_path(dest)
        if names:
            self.mkdir(_join(names), parents=True, exist_ok=True)
        self._copy_tree(src, names)

    def _copy_tree(self, src: bytes, names: list[bytes]) -> None:
        for name in sorted(os.listdir(src)):
            host = os.path.join(src, name)
            if len(name) > NAME_MAX:
                raise Error.from_code(Err.NAMETOOLONG, f"name longer than {NAME_MAX} bytes",
                                      op="add_dir", path=os.fsdecode(host))
            st = os.lstat(host)
            path = _join(names + [name])
            if _stat.S_ISREG(st.st_mode):
                self._put_host_file(host, path)
            elif _stat.S_ISDIR(st.st_mode):
                self._mkdir_merge(path)
                self._copy_tree(host, names + [name])
            else:
                warnings.warn(f"{os.fsdecode(host)}: skipped (not a regular file or a "
                              "directory)", stacklevel=3)

    def _mkdir_merge(self, path: bytes) -> None:
        """mkdir; an existing directory is fine (merged into)."""
        fs = self._fs_for(True)
        try:
            fs.mkdir(path)
        except Error as e:
            if e.code != Err.EXIST or not fs.stat(path).is_dir:
                raise

    def add_files(self, files: Mapping, dest="/") -> None:
        """Add {path: bytes} under dest (directories made as needed; a value
        of None makes a directory), in the order a folder is copied: by name
        (bytes), depth first."""
        tree = _tree(files)
        base = _split_path(dest)
        if base:
            self.mkdir(_join(base), parents=True, exist_ok=True)
        self._add_tree(tree, base)

    def _add_tree(self, tree: dict, names: list[bytes]) -> None:
        for name in sorted(tree):
            path = _join(names + [name])
            value = tree[name]
            if isinstance(value, dict):
                self._mkdir_merge(path)
                self._add_tree(value, names + [name])
            else:
                self._put(path, value)

    def remove(self, path, recursive: bool = False) -> None:
        """Remove a file or an empty directory; a whole tree when recursive."""
        p = _join(_split_path(path))
        fs = self._fs_for(True)
        if recursive and fs.stat(p).is_dir:
            for e in fs.scandir(p):
                self.remove(p + b"/" + os.fsencode(e.name), recursive=True)
        fs.remove(p)

    def rename(self, src, dst) -> None:
        """Rename (replacing a file dst)."""
        self._fs_for(True).rename(_join(_split_path(src)), _join(_split_path(dst)))


def _name_beside(fs: FS, path: bytes) -> bytes:
    """A name for a new file in path's directory."""
    head = path[:path.rfind(b"/") + 1]
    for i in range(1000):
        name = head + b".cairn-put-%d" % i
        try:
            fs.stat(name)
        except FileNotFoundError:
            return name
    raise Error.from_code(Err.EXIST, "no name free for its replacement", op="write",
                          path=_show(path))


def _hints(model, medium, page, block, size, spare) -> Hints:
    med = parse_medium(medium)
    if model is not None:
        mm = Medium(_model_info(model).geometry.medium)
        if med is not None and med != mm:
            raise ImageError(f"medium={medium!r} contradicts model={model!r}")
        med = mm
    return Hints(medium=med, page=parse_size(page) if page else None,
                 block=parse_size(block) if block else None,
                 size=parse_size(size) if size else None,
                 oob=None if spare is None else parse_size(spare))


def _tree(files: Mapping) -> dict:
    """{path: bytes or None} as nested dicts of bytes names: a dict is a
    directory, a memoryview a file."""
    root: dict = {}
    for path, value in files.items():
        names = _split_path(path)
        if not names:
            if value is None:
                continue
            raise ValueError("a file cannot be the root '/'")
        node = root
        for i, name in enumerate(names[:-1]):
            node = node.setdefault(name, {})
            if not isinstance(node, dict):
                raise ValueError(f"{_show(_join(names[:i + 1]))} is a file and a directory")
        last = names[-1]
        if value is None:
            child = node.setdefault(last, {})
            if not isinstance(child, dict):
                raise ValueError(f"{_show(_join(names))} is a file and a directory")
        elif isinstance(node.get(last), dict):
            raise ValueError(f"{_show(_join(names))} is a file and a directory")
        else:
            if isinstance(value, str):
                raise TypeError(f"{path!r}: file contents must be bytes, not str")
            node[last] = memoryview(value).cast("B")
    return root
