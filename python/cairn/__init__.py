"""cairn: Python bindings of the cairn flash file system and its simulator.

    import cairn

    with cairn.Sim("nor-w25q128", block_count=128, blocks_per_lblock=4) as sim:
        cairn.format(sim)
        with cairn.mount(sim) as fs:
            with fs.open("/log", "a") as f:
                f.write(b"hello\\n")
                f.sync()                       # durable on return
            print(fs.listdir("/"), sim.counters().time_ns)

Pieces:
  Sim        a simulated device (models, counters, time, power cuts, faults)
  FS         a file system on a device; format() / mount() / unmount()
  File, Dir  open handles (context managers)
  BlockDevice  the sector interface (FS.block_device; cairn_bd_*)
  Error      every failure of a cairn call: .code (Err), .name, .message;
             a subclass per code (NotFoundError is also a FileNotFoundError...)
  SimError   the simulator refused a request
  Image      a volume as a raw image, built from a folder or a dict of files
             and read back, in the C tool's image format (for build systems)

The C library (libcairn_py.so) is found through CAIRN_LIB, next to this
package (pip install), or under build/python/ (`make`; see cairn._ffi).
Nothing here is thread-safe.
"""

from ._errors import (
    BadHandleError,
    CorruptError,
    DeviceError,
    Err,
    Error,
    ExistsError,
    FileTooBigError,
    InvalidError,
    IsADirError,
    NameTooLongError,
    NoAttrError,
    NoSpaceError,
    NotADirError,
    NotEmptyError,
    NotFoundError,
    ReadOnlyError,
    SimError,
    TooManyOpenError,
    errname,
    strerror,
)
from ._ffi import ffi, has, lib, lib_path
from ._fs import (
    ATTR_MAX,
    NAME_MAX,
    O_APPEND,
    O_CREAT,
    O_EXCL,
    O_RDONLY,
    O_RDWR,
    O_TRUNC,
    O_WRONLY,
    SEEK_CUR,
    SEEK_END,
    SEEK_SET,
    FS,
    BlockDevice,
    CheckReport,
    Config,
    Dir,
    File,
    FsInfo,
    Info,
    Type,
    context_size,
    format,
    has_feature,
    mode_flags,
    mount,
)
from ._image import Image
from ._probe import ImageError
from ._sim import Cost, Counters, DevResult, Ftl, Geometry, Medium, ModelInfo, Sim, Tear
from ._version import __version__

VERSION = (lib.CAIRN_VERSION_MAJOR, lib.CAIRN_VERSION_MINOR)
DISK_VERSION = lib.CAIRN_DISK_VERSION

__all__ = [
    "ATTR_MAX", "NAME_MAX", "O_APPEND", "O_CREAT", "O_EXCL", "O_RDONLY", "O_RDWR", "O_TRUNC",
    "O_WRONLY", "SEEK_CUR", "SEEK_END", "SEEK_SET", "VERSION", "DISK_VERSION",
    "FS", "File", "Dir", "BlockDevice", "has", "has_feature",
    "Config", "Info", "FsInfo", "CheckReport", "Type",
    "context_size", "format", "mount", "mode_flags",
    "Image", "ImageError", "__version__",
    "Sim", "Geometry", "Cost", "Ftl", "ModelInfo", "Counters", "Medium", "DevResult", "Tear",
    "Err", "Error", "SimError", "errname", "strerror",
    "DeviceError", "CorruptError", "NotFoundError", "ExistsError", "NotADirError",
    "IsADirError", "NotEmptyError", "NameTooLongError", "BadHandleError", "NoSpaceError",
    "InvalidError", "ReadOnlyError", "TooManyOpenError", "NoAttrError", "FileTooBigError",
    "ffi", "lib", "lib_path",
]
