"""Errors: cairn's negative return codes as Python exceptions."""

from __future__ import annotations

import enum
import errno as _errno

from ._ffi import ffi, lib


class Err(enum.IntEnum):
    """cairn's error codes (enum cairn_err): negative, as the C API returns them."""

    OK = lib.CAIRN_OK
    IO = lib.CAIRN_ERR_IO
    CORRUPT = lib.CAIRN_ERR_CORRUPT
    NOENT = lib.CAIRN_ERR_NOENT
    EXIST = lib.CAIRN_ERR_EXIST
    NOTDIR = lib.CAIRN_ERR_NOTDIR
    ISDIR = lib.CAIRN_ERR_ISDIR
    NOTEMPTY = lib.CAIRN_ERR_NOTEMPTY
    NAMETOOLONG = lib.CAIRN_ERR_NAMETOOLONG
    BADF = lib.CAIRN_ERR_BADF
    NOSPC = lib.CAIRN_ERR_NOSPC
    INVAL = lib.CAIRN_ERR_INVAL
    ROFS = lib.CAIRN_ERR_ROFS
    MFILE = lib.CAIRN_ERR_MFILE
    NOATTR = lib.CAIRN_ERR_NOATTR
    FBIG = lib.CAIRN_ERR_FBIG


def errname(code: int) -> str:
    """cairn_errname: "CAIRN_ERR_NOENT" for -3."""
    return ffi.string(lib.cairn_errname(int(code))).decode()


def strerror(code: int) -> str:
    """cairn_strerror: a one-line description of the code."""
    return ffi.string(lib.cairn_strerror(int(code))).decode()


class Error(OSError):
    """A cairn call failed.

    Attributes:
      code:     cairn's error code (negative int, an Err member)
      name:     its name from cairn_errname ("CAIRN_ERR_NOENT")
      message:  cairn_strerror's description (or a message of the bindings)
      op:       the call that failed ("open", "rename", ...), or None
      path:     the path (or paths) involved, or None
      written:  for File.write: bytes written before the failure, else None
      errno:    the nearest POSIX errno (ENOENT, ...), as for any OSError

    Each code has its own subclass (NotFoundError, ExistsError, ...); those
    of NOENT, EXIST, NOTDIR and ISDIR also derive from Python's
    FileNotFoundError, FileExistsError, NotADirectoryError and
    IsADirectoryError, so code written against the os module catches them.
    Error.from_code(code) builds the right subclass.
    """

    code: int = 0

    def __init__(self, code: int, message: str | None = None, *, op: str | None = None,
                 path=None, written: int | None = None):
        code = int(code)
        self.code = Err(code) if code in _CODES else code
        self.name = errname(code)
        self.message = message if message is not None else strerror(code)
        self.op = op
        self.path = path
        self.written = written
        super().__init__(_POSIX.get(code, _errno.EIO), self.message)
        if isinstance(path, tuple) and len(path) == 2:
            self.filename, self.filename2 = path
        elif path is not None:
            self.filename = path

    @staticmethod
    def from_code(code: int, message: str | None = None, **kw) -> "Error":
        """The Error subclass instance for a negative cairn code."""
        return _CLASS.get(int(code), Error)(code, message, **kw)

    def __str__(self) -> str:
        s = f"[{self.name}] {self.message}"
        if self.op:
            s += f" ({self.op}"
            if self.path is not None:
                s += f" {self.path!r}"
            s += ")"
        return s

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name}, {self.message!r}, op={self.op!r}, path={self.path!r})"

    def __reduce__(self):
        return (_rebuild, (self.code, self.message, self.op, self.path, self.written))


def _rebuild(code, message, op, path, written):
    return Error.from_code(code, message, op=op, path=path, written=written)


class DeviceError(Error):
    """CAIRN_ERR_IO: the device failed (also: power cut in the simulator)."""


class CorruptError(Error):
    """CAIRN_ERR_CORRUPT: on-flash data failed a check."""


class NotFoundError(Error, FileNotFoundError):
    """CAIRN_ERR_NOENT."""


class ExistsError(Error, FileExistsError):
    """CAIRN_ERR_EXIST."""


class NotADirError(Error, NotADirectoryError):
    """CAIRN_ERR_NOTDIR."""


class IsADirError(Error, IsADirectoryError):
    """CAIRN_ERR_ISDIR."""


class NotEmptyError(Error):
    """CAIRN_ERR_NOTEMPTY."""


class NameTooLongError(Error):
    """CAIRN_ERR_NAMETOOLONG."""


class BadHandleError(Error):
    """CAIRN_ERR_BADF: bad handle, or not open for this access."""


class NoSpaceError(Error):
    """CAIRN_ERR_NOSPC."""


class InvalidError(Error):
    """CAIRN_ERR_INVAL: invalid argument or configuration (also: not mounted)."""


class ReadOnlyError(Error):
    """CAIRN_ERR_ROFS."""


class TooManyOpenError(Error):
    """CAIRN_ERR_MFILE: too many open files or directories (config max_open)."""


class NoAttrError(Error):
    """CAIRN_ERR_NOATTR."""


class FileTooBigError(Error):
    """CAIRN_ERR_FBIG."""


_CLASS = {
    Err.IO: DeviceError,
    Err.CORRUPT: CorruptError,
    Err.NOENT: NotFoundError,
    Err.EXIST: ExistsError,
    Err.NOTDIR: NotADirError,
    Err.ISDIR: IsADirError,
    Err.NOTEMPTY: NotEmptyError,
    Err.NAMETOOLONG: NameTooLongError,
    Err.BADF: BadHandleError,
    Err.NOSPC: NoSpaceError,
    Err.INVAL: InvalidError,
    Err.ROFS: ReadOnlyError,
    Err.MFILE: TooManyOpenError,
    Err.NOATTR: NoAttrError,
    Err.FBIG: FileTooBigError,
}
_CODES = {int(e) for e in Err}

_POSIX = {
    Err.IO: _errno.EIO,
    Err.CORRUPT: getattr(_errno, "EUCLEAN", _errno.EIO),
    Err.NOENT: _errno.ENOENT,
    Err.EXIST: _errno.EEXIST,
    Err.NOTDIR: _errno.ENOTDIR,
    Err.ISDIR: _errno.EISDIR,
    Err.NOTEMPTY: _errno.ENOTEMPTY,
    Err.NAMETOOLONG: _errno.ENAMETOOLONG,
    Err.BADF: _errno.EBADF,
    Err.NOSPC: _errno.ENOSPC,
    Err.INVAL: _errno.EINVAL,
    Err.ROFS: _errno.EROFS,
    Err.MFILE: _errno.EMFILE,
    Err.NOATTR: getattr(_errno, "ENODATA", _errno.EIO),
    Err.FBIG: _errno.EFBIG,
}


def check(rc: int, op: str | None = None, path=None) -> int:
    """Return rc if it is >= 0, else raise the Error for it."""
    if rc < 0:
        raise Error.from_code(rc, op=op, path=path)
    return rc


class SimError(Exception):
    """The simulator refused a request (unknown model, bad option, image file
    error); the message is csim_error()'s text."""
