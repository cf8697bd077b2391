"""The file system API (include/cairn.h): FS, File, Dir."""

from __future__ import annotations

import dataclasses
import enum
import os
import posixpath
import weakref
from dataclasses import dataclass
from typing import Iterator

from ._errors import Err, Error, NoSpaceError, check
from ._ffi import ffi, has, lib
from ._sim import Sim

# ---- constants ----
O_RDONLY = lib.CAIRN_O_RDONLY
O_WRONLY = lib.CAIRN_O_WRONLY
O_RDWR = lib.CAIRN_O_RDWR
O_CREAT = lib.CAIRN_O_CREAT
O_EXCL = lib.CAIRN_O_EXCL
O_TRUNC = lib.CAIRN_O_TRUNC
O_APPEND = lib.CAIRN_O_APPEND
SEEK_SET = lib.CAIRN_SEEK_SET
SEEK_CUR = lib.CAIRN_SEEK_CUR
SEEK_END = lib.CAIRN_SEEK_END
NAME_MAX = lib.CAIRN_NAME_MAX
ATTR_MAX = lib.CAIRN_ATTR_MAX


class Type(enum.IntEnum):
    """enum cairn_type."""

    FILE = lib.CAIRN_TYPE_FILE
    DIR = lib.CAIRN_TYPE_DIR


_MODES = {
    "r": O_RDONLY,
    "w": O_WRONLY | O_CREAT | O_TRUNC,
    "a": O_WRONLY | O_CREAT | O_APPEND,
    "x": O_WRONLY | O_CREAT | O_EXCL,
}


def mode_flags(mode: str | int) -> int:
    """Open flags for a Python mode ("r", "w", "a", "x", each with an optional
    "+" and "b"; files are always binary), or raw CAIRN_O_* flags as given."""
    if isinstance(mode, int):
        return mode
    m = mode.replace("b", "")
    plus = m.endswith("+")
    if plus:
        m = m[:-1]
    if m not in _MODES:
        raise ValueError(f"invalid mode {mode!r} (r, w, a, x, with + and b; always binary)")
    flags = _MODES[m]
    if plus:
        flags = (flags & ~O_RDWR) | O_RDWR
    return flags


_alloc = ffi.new_allocator(should_clear_after_alloc=False)


def _aligned(nbytes: int, clear: bool = True):
    """nbytes of memory aligned to 8 (a uint64_t array: cffi aligns its data)."""
    n = max((nbytes + 7) // 8, 1)
    buf = ffi.new("uint64_t[]", n) if clear else _alloc("uint64_t[]", n)
    assert int(ffi.cast("uintptr_t", buf)) % 8 == 0
    return buf


def _path(p) -> bytes:
    b = os.fsencode(p) if not isinstance(p, bytes) else p
    if b"\0" in b:
        raise ValueError("embedded NUL in path")
    return b


def _show(p):
    return p.decode(errors="surrogateescape") if isinstance(p, bytes) else os.fspath(p)


@dataclass(frozen=True)
class Config:
    """struct cairn_config without dev and mem (see include/cairn.h).
    Zero fields take cairn's defaults."""

    cache_nodes: int = 0
    node_size: int = 0
    max_open: int = 0
    commit_pages: int = 0
    read_only: bool = False
    data_heads: int = 0
    wear_spread: int = 0
    gc_step_pages: int = 0


@dataclass(frozen=True)
class Info:
    """struct cairn_info: one file or directory."""

    type: int
    size: int
    id: int
    name: str

    @property
    def is_file(self) -> bool:
        return self.type == Type.FILE

    @property
    def is_dir(self) -> bool:
        return self.type == Type.DIR


def _info(ci) -> Info:
    return Info(Type(ci.type) if ci.type in (1, 2) else int(ci.type), int(ci.size), int(ci.id),
                ffi.string(ci.name).decode(errors="surrogateescape"))


@dataclass(frozen=True)
class FsInfo:
    """struct cairn_fsinfo."""

    total_bytes: int
    free_bytes: int
    used_bytes: int
    block_size: int
    page_size: int
    name_max: int
    files: int
    erase_min: int = 0
    erase_max: int = 0
    erase_mean: int = 0
    bad_blocks: int = 0


@dataclass(frozen=True)
class CheckReport:
    """cairn_check's report, the problems it described, and what it returned
    (result: 0 clean, Err.CORRUPT problems found). ok: clean.

    A walk that stops at an unreadable node returns CORRUPT without counting
    or describing a problem: then errors is 0 and problems is empty, but
    result (and ok) still say so."""

    errors: int
    files: int
    dirs: int
    extents: int
    nodes: int
    data_pages: int
    problems: tuple[str, ...] = ()
    result: int = 0

    @property
    def ok(self) -> bool:
        return self.result == 0 and self.errors == 0 and not self.problems


@ffi.callback("void(void *, const char *)")
def _check_cb(arg, problem):
    ffi.from_handle(arg).append(ffi.string(problem).decode(errors="replace"))


def context_size() -> int:
    """cairn_context_size(): bytes of the file system context."""
    return int(lib.cairn_context_size())


def _give_back(f: "File", size: int) -> None:
    """write_file's data did not fit: back to `size` (which frees what the
    data took) and close; if even that finds no room, discard the handle."""
    try:
        if f.size() > size:
            f.truncate(size)
        f.close()
    except Error:
        if not f.closed:
            f.discard()


class FS:
    """A cairn file system on a device: a Sim, or a cdata ``struct cairn_dev *``
    (then the caller keeps the device alive).

    ``FS(dev, cache_nodes=0, node_size=0, max_open=0, commit_pages=0,
    read_only=False, data_heads=0, wear_spread=0, gc_step_pages=0)`` only
    checks the configuration (cairn_mem_size) and allocates the context and
    buffers; ``format()``, ``mount()``,
    ``unmount()``, ``remount()`` and ``abandon()`` drive the mount. The
    module functions ``cairn.format(dev, **cfg)`` and ``cairn.mount(dev,
    **cfg)`` are the short forms. As a context manager the FS unmounts at the
    end of the block (if mounted; after an exception, a failing unmount is
    turned into abandon() so the first error is the one raised).

    Every failing call raises cairn.Error (a subclass per code). The memory of
    the mount (the context and cfg.mem, cairn_mem_size bytes) belongs to this
    object: nothing leaks when a mount is abandoned after a power cut.
    Not thread-safe.
    """

    def __init__(self, dev, *, cache_nodes: int = 0, node_size: int = 0, max_open: int = 0,
                 commit_pages: int = 0, read_only: bool = False, data_heads: int = 0,
                 wear_spread: int = 0, gc_step_pages: int = 0):
        if isinstance(dev, Sim):
            self.sim: Sim | None = dev
            devptr = dev.dev
        elif isinstance(dev, ffi.CData) and ffi.typeof(dev) is ffi.typeof("struct cairn_dev *"):
            self.sim = None
            devptr = dev
        else:
            raise TypeError("FS needs a cairn.Sim or a cdata 'struct cairn_dev *'")
        self._devptr = devptr
        self.config = Config(cache_nodes, node_size, max_open, commit_pages, bool(read_only),
                             data_heads, wear_spread, gc_step_pages)
        cfg = ffi.new("struct cairn_config *")
        cfg.dev = devptr
        cfg.cache_nodes = cache_nodes
        cfg.node_size = node_size
        cfg.max_open = max_open
        cfg.commit_pages = commit_pages
        cfg.read_only = 1 if read_only else 0
        cfg.data_heads = data_heads
        cfg.wear_spread = wear_spread
        cfg.gc_step_pages = gc_step_pages
        size = int(lib.cairn_mem_size(cfg))
        if size == 0:
            why = lib.cairn_config_why(cfg)
            raise Error.from_code(
                Err.INVAL, "bad configuration for this device: " +
                (ffi.string(why).decode() if why != ffi.NULL else "cairn_mem_size is 0"),
                op="FS")
        self.mem_size = size
        self._mem = _aligned(size, clear=False)
        cfg.mem = self._mem
        cfg.mem_size = size
        self._cfg = cfg
        self._ctx_mem = _aligned(context_size())
        self._ctx = ffi.cast("cairn *", self._ctx_mem)
        self._mounted = False
        self._handles: weakref.WeakSet = weakref.WeakSet()
        if self.sim is not None:
            self.sim._users.add(self)

    # ---- sizes ----
    @property
    def ram_bytes(self) -> int:
        """RAM of the mount: context plus buffers."""
        return context_size() + self.mem_size

    @property
    def mounted(self) -> bool:
        return self._mounted

    def __repr__(self) -> str:
        return f"<cairn.FS on {self.sim!r} {'mounted' if self._mounted else 'unmounted'}>"

    # ---- mount ----
    def _c(self, op: str = "call"):
        if not self._mounted:
            raise Error.from_code(Err.INVAL, "the file system is not mounted", op=op)
        return self._ctx

    def _alive(self, op: str) -> None:
        if self.sim is not None and self.sim.closed:
            raise ValueError(f"{op}: the simulator is closed")

    def format(self) -> None:
        """cairn_format: write an empty file system (not while mounted)."""
        self._alive("format")
        if self._mounted:
            raise Error.from_code(Err.INVAL, "unmount before format", op="format")
        check(lib.cairn_format(self._ctx, self._cfg), "format")

    def mount(self) -> "FS":
        """cairn_mount. Returns self."""
        self._alive("mount")
        if self._mounted:
            raise Error.from_code(Err.INVAL, "already mounted", op="mount")
        check(lib.cairn_mount(self._ctx, self._cfg), "mount")
        self._mounted = True
        return self

    def _drop_handles(self) -> None:
        for h in list(self._handles):
            h._fd = -1
        self._handles.clear()

    def unmount(self) -> None:
        """cairn_unmount (syncs everything). NoSpaceError, as in C: still
        mounted with every open file and its unsynced data; remove or shrink
        something and unmount again. Any other failure still unmounts (and is
        raised)."""
        ctx = self._c("unmount")
        rc = lib.cairn_unmount(ctx)
        if rc != lib.CAIRN_ERR_NOSPC:
            self._drop_handles()
            self._mounted = False
        check(rc, "unmount")

    def abandon(self) -> None:
        """Forget the mount without touching the device (after a power cut,
        as a board that lost power would). Open files become closed."""
        self._drop_handles()
        self._mounted = False

    _forget = abandon

    def remount(self) -> "FS":
        """unmount() (if mounted) then mount()."""
        if self._mounted:
            self.unmount()
        return self.mount()

    def __enter__(self) -> "FS":
        return self

    def __exit__(self, et, ev, tb) -> None:
        if not self._mounted:
            return
        if et is None:
            self.unmount()
        else:
            try:
                self.unmount()
            except Error:
                self.abandon()

    # ---- volume ----
    def fs_stat(self) -> FsInfo:
        """cairn_fs_stat."""
        info = ffi.new("struct cairn_fsinfo *")
        check(lib.cairn_fs_stat(self._c("fs_stat"), info), "fs_stat")
        return FsInfo(**{f.name: int(getattr(info, f.name)) for f in dataclasses.fields(FsInfo)})

    def sync(self) -> None:
        """cairn_sync: everything written so far becomes durable."""
        check(lib.cairn_sync(self._c("sync")), "sync")

    def gc(self, budget: int = 16) -> int:
        """cairn_gc: idle-time work. Collects garbage, moving at most ``budget``
        pages, and returns the pages moved; with nothing worth collecting it
        erases one free segment ahead of need and returns 1; 0 when there is
        nothing left to do."""
        _need("cairn_gc")
        return check(lib.cairn_gc(self._c("gc"), budget), "gc")

    # ---- ring files and the sector interface ----
    def ring_create(self, path, capacity: int) -> None:
        """cairn_ring_create: a ring file of ``capacity`` bytes (a multiple of
        the page size); open it with open(path, "a") and every write appends,
        overwriting the oldest data once full."""
        _need("cairn_ring_create")
        check(lib.cairn_ring_create(self._c("ring_create"), _path(path), capacity),
              "ring_create", _show(path))

    def block_device(self, path, sector_size: int, sector_count: int) -> "BlockDevice":
        """cairn_bd_open: a BlockDevice of sector_count sectors stored in the
        file ``path`` (created on first open)."""
        return BlockDevice(self, path, sector_size, sector_count)

    def check(self, raise_on_problems: bool = False) -> CheckReport:
        """cairn_check: a CheckReport. Problems found (CAIRN_ERR_CORRUPT) ->
        report.ok is False, or CorruptError with raise_on_problems. Other
        failures raise."""
        ctx = self._c("check")
        rep = ffi.new("struct cairn_check_report *")
        problems: list[str] = []
        handle = ffi.new_handle(problems)
        rc = lib.cairn_check(ctx, rep, _check_cb, handle)
        report = CheckReport(int(rep.errors), int(rep.files), int(rep.dirs), int(rep.extents),
                             int(rep.nodes), int(rep.data_pages), tuple(problems),
                             Err(rc) if rc in (0, Err.CORRUPT) else rc)
        if rc == Err.CORRUPT and not raise_on_problems:
            return report
        check(rc, "check")
        return report

    # ---- files ----
    def open(self, path, mode: str | int = "r") -> "File":
        """cairn_open. mode: "r", "w", "a", "x" (+ "+"), or raw O_* flags."""
        flags = mode_flags(mode)
        p = _path(path)
        fd = check(lib.cairn_open(self._c("open"), p, flags), "open", _show(path))
        return File(self, fd, _show(path), flags)

    def open_id(self, id: int, mode: str | int = "r") -> "File":
        """cairn_open_id: open a file by its object id (Info.id). No O_CREAT."""
        flags = mode_flags(mode)
        fd = check(lib.cairn_open_id(self._c("open_id"), id, flags), "open_id", f"#{id}")
        return File(self, fd, f"#{id}", flags)

    def read_file(self, path) -> bytes:
        """The whole content of a file."""
        with self.open(path, "r") as f:
            return f.read()

    def write_file(self, path, data, mode: str = "w") -> int:
        """Write data to a file (created or truncated with "w", appended with
        "a") and close it. Returns the bytes written. When the data does not
        fit (NoSpaceError from the write or the close), the file is given back
        its size from before the data (0 with "w") and closed, then the error
        is raised: no handle stays open (a close that fails with NOSPC keeps
        its handle, File.close)."""
        f = self.open(path, mode)
        start = f.size()
        try:
            n = f.write(data)
            f.close()
            return n
        except NoSpaceError:
            _give_back(f, start)
            raise
        except BaseException:
            if not f.closed:
                try:
                    f.close()
                except Error:
                    pass
            raise

    # ---- namespace ----
    def stat(self, path) -> Info:
        """cairn_stat."""
        info = ffi.new("struct cairn_info *")
        check(lib.cairn_stat(self._c("stat"), _path(path), info), "stat", _show(path))
        return _info(info)

    def exists(self, path) -> bool:
        try:
            self.stat(path)
        except Error as e:
            if e.code in (Err.NOENT, Err.NOTDIR):
                return False
            raise
        return True

    def remove(self, path) -> None:
        """cairn_remove: a file, or an empty directory."""
        check(lib.cairn_remove(self._c("remove"), _path(path)), "remove", _show(path))

    def rename(self, src, dst) -> None:
        """cairn_rename (replaces dst if it exists and may be replaced)."""
        check(lib.cairn_rename(self._c("rename"), _path(src), _path(dst)), "rename",
              (_show(src), _show(dst)))

    def mkdir(self, path) -> None:
        """cairn_mkdir."""
        check(lib.cairn_mkdir(self._c("mkdir"), _path(path)), "mkdir", _show(path))

    def opendir(self, path="/") -> "Dir":
        """cairn_opendir: a Dir (iterable of Info, context manager)."""
        dd = check(lib.cairn_opendir(self._c("opendir"), _path(path)), "opendir", _show(path))
        return Dir(self, dd, _show(path))

    def scandir(self, path="/") -> list[Info]:
        """Every entry of a directory (Info), in cairn's order."""
        with self.opendir(path) as d:
            return list(d)

    def listdir(self, path="/") -> list[str]:
        """Names in a directory."""
        return [i.name for i in self.scandir(path)]

    def walk(self, top="/") -> Iterator[tuple[str, list[str], list[str]]]:
        """Like os.walk (top-down): (dirpath, dirnames, filenames)."""
        top = _show(top)
        entries = self.scandir(top)
        dirs = [e.name for e in entries if e.is_dir]
        files = [e.name for e in entries if not e.is_dir]
        yield top, dirs, files
        for d in dirs:
            yield from self.walk(posixpath.join(top, d))

    # ---- attributes ----
    def getattr(self, path, type: int) -> bytes:
        """cairn_getattr: the value of custom attribute ``type`` (0..255)."""
        buf = ffi.new("uint8_t[]", ATTR_MAX)
        n = check(lib.cairn_getattr(self._c("getattr"), _path(path), type, buf, ATTR_MAX),
                  "getattr", _show(path))
        return bytes(ffi.buffer(buf, min(n, ATTR_MAX)))

    def setattr(self, path, type: int, value) -> None:
        """cairn_setattr: value of at most ATTR_MAX bytes."""
        v = bytes(value)
        check(lib.cairn_setattr(self._c("setattr"), _path(path), type, v, len(v)),
              "setattr", _show(path))

    def removeattr(self, path, type: int) -> None:
        """cairn_removeattr."""
        check(lib.cairn_removeattr(self._c("removeattr"), _path(path), type), "removeattr",
              _show(path))


class _ClosedByWith:
    """`with` closes the object; an error while closing is raised unless the
    block is already leaving with an exception."""

    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb) -> None:
        if et is None:
            self.close()
        else:
            try:
                self.close()
            except Error:
                pass


class File(_ClosedByWith):
    """An open file (cairn handle). Binary: read() returns bytes, write()
    takes any bytes-like object. Usable with ``with``; closed when collected.
    A handle of an earlier mount is dead: its calls raise BadHandleError."""

    def __init__(self, fs: FS, fd: int, name: str, flags: int):
        self._fs = fs
        self._fd = fd
        self.name = name
        self.flags = flags
        fs._handles.add(self)

    def __repr__(self) -> str:
        return f"<cairn.File {self.name!r} fd={self._fd}{' closed' if self._fd < 0 else ''}>"

    @property
    def fd(self) -> int:
        """The C handle (-1 once closed)."""
        return self._fd

    @property
    def closed(self) -> bool:
        return self._fd < 0

    @property
    def fs(self) -> FS:
        return self._fs

    def readable(self) -> bool:
        return bool(self.flags & O_RDONLY)

    def writable(self) -> bool:
        return bool(self.flags & O_WRONLY)

    def _h(self, op: str):
        if self._fd < 0:
            raise Error.from_code(Err.BADF, "the file is closed", op=op, path=self.name)
        return self._fs._ctx, self._fd

    def read(self, n: int = -1) -> bytes:
        """Up to n bytes (all to the end when n < 0); b"" at the end."""
        ctx, fd = self._h("read")
        if n is None or n < 0:
            parts = []
            while True:
                size = check(lib.cairn_size(ctx, fd), "read", self.name)
                pos = check(lib.cairn_tell(ctx, fd), "read", self.name)
                want = max(size - pos, 0)
                if want == 0:
                    break
                chunk = self.read(want)
                if not chunk:
                    break
                parts.append(chunk)
            return b"".join(parts)
        buf = _alloc("uint8_t[]", max(n, 1))  # n == 0 still checks the handle
        got = check(lib.cairn_read(ctx, fd, buf, n), "read", self.name)
        return ffi.buffer(buf, got)[:]

    def readinto(self, b) -> int:
        """Read into a writable buffer; returns the bytes read."""
        ctx, fd = self._h("readinto")
        buf = ffi.from_buffer(b, require_writable=True)
        return check(lib.cairn_read(ctx, fd, buf, len(buf)), "readinto", self.name)

    def write(self, data) -> int:
        """Write all of data (bytes-like) at the position (the end with O_APPEND).
        Returns len(data); on failure the Error's ``written`` tells how many
        bytes went in first."""
        ctx, fd = self._h("write")
        buf = ffi.from_buffer("uint8_t[]", data)
        n = len(buf)
        rc = lib.cairn_write(ctx, fd, buf, n)
        if rc == n:
            return n
        done = 0
        while True:
            if rc < 0:
                raise Error.from_code(rc, op="write", path=self.name, written=done)
            if rc == 0:
                raise Error.from_code(Err.IO, "write made no progress", op="write",
                                      path=self.name, written=done)
            done += rc
            if done >= n:
                return done
            rc = lib.cairn_write(ctx, fd, buf + done, n - done)

    def seek(self, offset: int, whence: int = SEEK_SET) -> int:
        """cairn_seek; whence as os.SEEK_SET/CUR/END. Returns the new position."""
        ctx, fd = self._h("seek")
        return check(lib.cairn_seek(ctx, fd, offset, whence), "seek", self.name)

    def tell(self) -> int:
        ctx, fd = self._h("tell")
        return check(lib.cairn_tell(ctx, fd), "tell", self.name)

    def size(self) -> int:
        """cairn_size: the file's size now (buffered writes included)."""
        ctx, fd = self._h("size")
        return check(lib.cairn_size(ctx, fd), "size", self.name)

    def ring_capacity(self) -> int:
        """cairn_ring_capacity: the ring's capacity in bytes, 0 for a plain file."""
        _need("cairn_ring_capacity")
        ctx, fd = self._h("ring_capacity")
        return check(lib.cairn_ring_capacity(ctx, fd), "ring_capacity", self.name)

    def truncate(self, size: int | None = None) -> int:
        """cairn_truncate to size (default: the position); the position stays.
        Returns the new size."""
        ctx, fd = self._h("truncate")
        if size is None:
            size = check(lib.cairn_tell(ctx, fd), "truncate", self.name)
        check(lib.cairn_truncate(ctx, fd, size), "truncate", self.name)
        return size

    def fallocate(self, length: int) -> None:
        """cairn_fallocate: reserve room for the file to grow to ``length`` bytes
        (writes up to there cannot fail with NoSpaceError while it stays open)."""
        _need("cairn_fallocate")
        ctx, fd = self._h("fallocate")
        check(lib.cairn_fallocate(ctx, fd, length), "fallocate", self.name)

    def sync(self) -> None:
        """cairn_file_sync: the file is durable on return."""
        ctx, fd = self._h("sync")
        check(lib.cairn_file_sync(ctx, fd), "sync", self.name)

    flush = sync

    def stat(self) -> Info:
        """cairn_fstat (name is empty)."""
        ctx, fd = self._h("stat")
        info = ffi.new("struct cairn_info *")
        check(lib.cairn_fstat(ctx, fd, info), "stat", self.name)
        return _info(info)

    def close(self) -> None:
        """cairn_close (syncs a writable file). Idempotent. NoSpaceError, as
        in C: the file stays open with its unsynced data; free space (remove
        or shrink another file) and close again, or discard() it to give the
        unsynced data up. Any other failure releases the
        handle (and is raised). Before, the handle was dropped on NOSPC too,
        and cairn kept it: four such closes used up max_open and every open
        after them failed with TooManyOpenError."""
        if self._fd < 0:
            return
        rc = lib.cairn_close(self._fs._ctx, self._fd)
        if rc != lib.CAIRN_ERR_NOSPC:
            self._fd = -1
            self._fs._handles.discard(self)
        check(rc, "close", self.name)

    def discard(self) -> None:
        """cairn_discard: release the handle without syncing (never fails on
        an open file). With the file's last handle, what it holds unsynced in
        RAM is given up. The way out after a close refused with NoSpaceError
        when no space can be freed. Idempotent."""
        if self._fd < 0:
            return
        rc = lib.cairn_discard(self._fs._ctx, self._fd)
        self._fd = -1
        self._fs._handles.discard(self)
        check(rc, "discard", self.name)

    def __del__(self):
        try:
            if self._fd >= 0 and self._fs._mounted:
                self.close()
        except Exception:
            pass


class Dir:
    """An open directory: iterate for Info entries; read() gives one (None at
    the end), rewind() starts over. Usable with ``with``."""

    def __init__(self, fs: FS, dd: int, name: str):
        self._fs = fs
        self._fd = dd
        self.name = name
        fs._handles.add(self)

    @property
    def closed(self) -> bool:
        return self._fd < 0

    def _h(self, op: str):
        if self._fd < 0:
            raise Error.from_code(Err.BADF, "the directory is closed", op=op, path=self.name)
        return self._fs._ctx, self._fd

    def read(self) -> Info | None:
        """cairn_readdir: the next entry, or None at the end."""
        ctx, dd = self._h("readdir")
        info = ffi.new("struct cairn_info *")
        rc = check(lib.cairn_readdir(ctx, dd, info), "readdir", self.name)
        return _info(info) if rc == 1 else None

    def rewind(self) -> None:
        ctx, dd = self._h("rewinddir")
        check(lib.cairn_rewinddir(ctx, dd), "rewinddir", self.name)

    def __iter__(self) -> Iterator[Info]:
        while (e := self.read()) is not None:
            yield e

    def close(self) -> None:
        if self._fd < 0:
            return
        ctx, dd = self._fs._ctx, self._fd
        self._fd = -1
        self._fs._handles.discard(self)
        check(lib.cairn_closedir(ctx, dd), "closedir", self.name)

    def __enter__(self) -> "Dir":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            if self._fd >= 0 and self._fs._mounted:
                self.close()
        except Exception:
            pass


class BlockDevice(_ClosedByWith):
    """cairn's sector interface (cairn_bd_*): a fixed array of sector_count
    sectors of sector_size bytes stored in a file of the volume. Sectors never
    written or trimmed read as zeros. Usable with ``with`` (closes at the end).
    It holds an open file of the FS, so it dies with the mount."""

    def __init__(self, fs: FS, path, sector_size: int, sector_count: int):
        _need("cairn_bd_open")
        self._fs = fs
        self.name = _show(path)
        self._bd = ffi.new("struct cairn_bd *")
        check(lib.cairn_bd_open(fs._c("bd_open"), self._bd, _path(path), sector_size,
                                sector_count), "bd_open", self.name)
        self.sector_size = int(self._bd.sector_size)
        self.sector_count = int(self._bd.sector_count)
        self._open = True
        self._fd = int(self._bd.fd)
        fs._handles.add(self)

    @property
    def closed(self) -> bool:
        return not self._open

    def _b(self, op: str, sector: int = 0, count: int = 0):
        if not self._open:
            raise Error.from_code(Err.BADF, "the block device is closed", op=op, path=self.name)
        if sector < 0 or count < 0 or sector + count > self.sector_count:
            raise Error.from_code(Err.INVAL, f"sectors {sector}..{sector + count} outside "
                                  f"0..{self.sector_count}", op=op, path=self.name)
        return self._bd

    def read(self, sector: int, count: int = 1) -> bytes:
        """cairn_bd_read: count sectors from ``sector``."""
        bd = self._b("bd_read", sector, count)
        buf = _alloc("uint8_t[]", max(count * self.sector_size, 1))
        check(lib.cairn_bd_read(bd, sector, buf, count), "bd_read", self.name)
        return ffi.buffer(buf, count * self.sector_size)[:]

    def readinto(self, sector: int, b) -> int:
        """Read len(b) // sector_size sectors into a writable buffer."""
        buf = ffi.from_buffer(b, require_writable=True)
        count = len(buf) // self.sector_size
        bd = self._b("bd_read", sector, count)
        check(lib.cairn_bd_read(bd, sector, buf, count), "bd_read", self.name)
        return count

    def write(self, sector: int, data) -> int:
        """cairn_bd_write: data (a whole number of sectors) from ``sector``.
        Returns the sectors written."""
        buf = ffi.from_buffer("uint8_t[]", data)
        if len(buf) % self.sector_size:
            raise ValueError(f"data must be a multiple of {self.sector_size} bytes")
        count = len(buf) // self.sector_size
        bd = self._b("bd_write", sector, count)
        check(lib.cairn_bd_write(bd, sector, buf, count), "bd_write", self.name)
        return count

    def trim(self, sector: int, count: int = 1) -> None:
        """cairn_bd_trim: the sectors read as zeros from now on."""
        bd = self._b("bd_trim", sector, count)
        check(lib.cairn_bd_trim(bd, sector, count), "bd_trim", self.name)

    def sync(self) -> None:
        """cairn_bd_sync: everything written is durable on return."""
        check(lib.cairn_bd_sync(self._b("bd_sync")), "bd_sync", self.name)

    def close(self) -> None:
        """cairn_bd_close (syncs). Idempotent. NoSpaceError, as in C: the
        array stays open with its data; free space and close again, or
        discard() it."""
        if not self._open:
            return
        if self._fs._mounted:
            rc = lib.cairn_bd_close(self._bd)
            if rc == lib.CAIRN_ERR_NOSPC:
                check(rc, "bd_close", self.name)
        else:
            rc = 0
        self._open = False
        self._fs._handles.discard(self)
        check(rc, "bd_close", self.name)

    def discard(self) -> None:
        """cairn_discard on the array's handle: closes it without a sync
        (what it held unsynced in RAM is given up). Idempotent."""
        if not self._open:
            return
        rc = lib.cairn_discard(self._fs._ctx, self._bd.fd) if self._fs._mounted else 0
        self._open = False
        self._fs._handles.discard(self)
        self._bd.fs = ffi.NULL
        self._bd.fd = -1
        check(rc, "discard", self.name)

    # FS._drop_handles sets _fd = -1 on every handle when the mount ends
    @property
    def _fd(self) -> int:
        return int(self._bd.fd) if self._open else -1

    @_fd.setter
    def _fd(self, v: int) -> None:
        if v < 0:
            self._open = False

    def __repr__(self) -> str:
        return (f"<cairn.BlockDevice {self.name!r} {self.sector_count} x {self.sector_size} B"
                f"{' closed' if not self._open else ''}>")


def _need(fn: str) -> None:
    """NotImplementedError when the loaded library lacks the C function fn."""
    if not has(fn):
        raise NotImplementedError(f"{fn} is not in this build of the library "
                                  "(declared in cairn.h; older build or feature left out)")


def has_feature(name: str) -> bool:
    """Whether the library has a feature: "gc", "fallocate", "ring", "bd"."""
    fn = {"gc": "cairn_gc", "fallocate": "cairn_fallocate", "ring": "cairn_ring_create",
          "bd": "cairn_bd_open"}[name]
    return has(fn)


def format(dev, **config) -> None:
    """Format dev (a Sim or a cdata struct cairn_dev *) with this config."""
    FS(dev, **config).format()


def mount(dev, **config) -> FS:
    """Mount dev and return the FS (use it with ``with`` to unmount at the end)."""
    return FS(dev, **config).mount()
