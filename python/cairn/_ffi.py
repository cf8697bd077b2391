"""The C side: cffi declarations (ABI mode) and loading of libcairn_py.

The declarations below are copied from include/cairn.h, include/cairn_device.h
and sim/csim.h (only what the bindings use; every struct in full). At import
they are checked against the layout table compiled into the library
(python/layout.c): a struct that changed in the headers but not here raises
ImportError instead of corrupting memory.

The library is found, in this order:
  1. the environment variable CAIRN_LIB (path of the shared library);
  2. libcairn_py.so next to this file (a copied, self-contained install);
  3. <repo>/build/python/libcairn_py.so (what `make` / `make test` builds);
  4. <repo>/build-release/python/libcairn_py.so (what `make bench` builds).
"""

from __future__ import annotations

import os
import pathlib

import cffi

CDEF = r"""
/* ---- cairn_device.h ---- */
enum cairn_medium {
    CAIRN_MEDIUM_NOR = 1,
    CAIRN_MEDIUM_NAND = 2,
    CAIRN_MEDIUM_BLOCK = 3
};
enum cairn_dev_result {
    CAIRN_DEV_OK = 0,
    CAIRN_DEV_CORRECTED = 1,
    CAIRN_DEV_UNCORRECTABLE = -1,
    CAIRN_DEV_PROG_FAIL = -2,
    CAIRN_DEV_ERASE_FAIL = -3,
    CAIRN_DEV_IO = -4,
    CAIRN_DEV_RULE = -5
};
struct cairn_geometry {
    uint32_t page_size;
    uint32_t spare_size;
    uint32_t pages_per_block;
    uint32_t block_count;
    uint32_t medium;
    uint32_t max_partial_programs;
    uint32_t write_unit;
    uint32_t blocks_per_lblock;
};
struct cairn_dev {
    void *ctx;
    struct cairn_geometry geo;
    int (*read)(void *ctx, uint32_t page, uint32_t off, void *buf, uint32_t len);
    int (*read_spare)(void *ctx, uint32_t page, void *buf, uint32_t len);
    int (*prog)(void *ctx, uint32_t page, uint32_t off, const void *data,
                uint32_t len, const void *spare, uint32_t spare_len);
    int (*erase)(void *ctx, uint32_t block);
    int (*is_bad)(void *ctx, uint32_t block);
    int (*mark_bad)(void *ctx, uint32_t block);
    int (*sync)(void *ctx);
};

/* ---- cairn.h ---- */
#define CAIRN_VERSION_MAJOR 0
#define CAIRN_VERSION_MINOR 1
#define CAIRN_DISK_VERSION 5
#define CAIRN_NAME_MAX 255
#define CAIRN_ATTR_MAX 64
#define CAIRN_CONTEXT_SIZE 512

enum cairn_err {
    CAIRN_OK = 0,
    CAIRN_ERR_IO = -1,
    CAIRN_ERR_CORRUPT = -2,
    CAIRN_ERR_NOENT = -3,
    CAIRN_ERR_EXIST = -4,
    CAIRN_ERR_NOTDIR = -5,
    CAIRN_ERR_ISDIR = -6,
    CAIRN_ERR_NOTEMPTY = -7,
    CAIRN_ERR_NAMETOOLONG = -8,
    CAIRN_ERR_BADF = -9,
    CAIRN_ERR_NOSPC = -10,
    CAIRN_ERR_INVAL = -11,
    CAIRN_ERR_ROFS = -12,
    CAIRN_ERR_MFILE = -13,
    CAIRN_ERR_NOATTR = -14,
    CAIRN_ERR_FBIG = -15
};
const char *cairn_errname(int err);
const char *cairn_strerror(int err);

enum cairn_open_flags {
    CAIRN_O_RDONLY = 1,
    CAIRN_O_WRONLY = 2,
    CAIRN_O_RDWR = 3,
    CAIRN_O_CREAT = 0x10,
    CAIRN_O_EXCL = 0x20,
    CAIRN_O_TRUNC = 0x40,
    CAIRN_O_APPEND = 0x80
};
enum cairn_whence { CAIRN_SEEK_SET = 0, CAIRN_SEEK_CUR = 1, CAIRN_SEEK_END = 2 };
enum cairn_type { CAIRN_TYPE_FILE = 1, CAIRN_TYPE_DIR = 2 };

struct cairn_info {
    uint8_t type;
    int32_t size;
    uint32_t id;
    char name[256];
};
struct cairn_fsinfo {
    uint64_t total_bytes;
    uint64_t free_bytes;
    uint64_t used_bytes;
    uint32_t block_size;
    uint32_t page_size;
    uint32_t name_max;
    uint32_t files;
    uint32_t erase_min, erase_max, erase_mean;
    uint32_t bad_blocks;
};
struct cairn_config {
    struct cairn_dev *dev;
    uint32_t cache_nodes;
    uint32_t node_size;
    uint32_t max_open;
    uint32_t commit_pages;
    void *mem;
    uint32_t mem_size;
    uint8_t read_only;
    uint8_t data_heads;
    uint16_t wear_spread;
    uint32_t gc_step_pages;
};
uint32_t cairn_mem_size(const struct cairn_config *cfg);
const char *cairn_config_why(const struct cairn_config *cfg);

typedef struct cairn cairn;
size_t cairn_context_size(void);

int cairn_format(cairn *fs, const struct cairn_config *cfg);
int cairn_mount(cairn *fs, const struct cairn_config *cfg);
int cairn_unmount(cairn *fs);
int cairn_fs_stat(cairn *fs, struct cairn_fsinfo *info);
int cairn_sync(cairn *fs);

int cairn_open(cairn *fs, const char *path, int flags);
int cairn_open_id(cairn *fs, uint32_t id, int flags);
int32_t cairn_read(cairn *fs, int fd, void *buf, int32_t len);
int32_t cairn_write(cairn *fs, int fd, const void *buf, int32_t len);
int32_t cairn_seek(cairn *fs, int fd, int32_t off, int whence);
int32_t cairn_tell(cairn *fs, int fd);
int32_t cairn_size(cairn *fs, int fd);
int cairn_truncate(cairn *fs, int fd, int32_t size);
int cairn_file_sync(cairn *fs, int fd);
int cairn_close(cairn *fs, int fd);
int cairn_discard(cairn *fs, int fd);
int cairn_fstat(cairn *fs, int fd, struct cairn_info *info);

int cairn_stat(cairn *fs, const char *path, struct cairn_info *info);
int cairn_remove(cairn *fs, const char *path);
int cairn_rename(cairn *fs, const char *from, const char *to);
int cairn_mkdir(cairn *fs, const char *path);

int32_t cairn_gc(cairn *fs, uint32_t budget);
int cairn_fallocate(cairn *fs, int fd, int32_t length);
int cairn_ring_create(cairn *fs, const char *path, int32_t capacity);
int32_t cairn_ring_capacity(cairn *fs, int fd);
struct cairn_bd {
    cairn *fs;
    int fd;
    uint32_t sector_size;
    uint32_t sector_count;
};
int cairn_bd_open(cairn *fs, struct cairn_bd *bd, const char *path, uint32_t sector_size,
                  uint32_t sector_count);
int cairn_bd_read(struct cairn_bd *bd, uint32_t sector, void *buf, uint32_t count);
int cairn_bd_write(struct cairn_bd *bd, uint32_t sector, const void *buf, uint32_t count);
int cairn_bd_trim(struct cairn_bd *bd, uint32_t sector, uint32_t count);
int cairn_bd_sync(struct cairn_bd *bd);
int cairn_bd_close(struct cairn_bd *bd);

int cairn_opendir(cairn *fs, const char *path);
int cairn_readdir(cairn *fs, int dd, struct cairn_info *info);
int cairn_rewinddir(cairn *fs, int dd);
int cairn_closedir(cairn *fs, int dd);

int cairn_getattr(cairn *fs, const char *path, uint8_t type, void *buf,
                  uint32_t size);
int cairn_setattr(cairn *fs, const char *path, uint8_t type, const void *buf,
                  uint32_t size);
int cairn_removeattr(cairn *fs, const char *path, uint8_t type);

struct cairn_check_report {
    uint32_t errors;
    uint32_t files;
    uint32_t dirs;
    uint32_t extents;
    uint32_t nodes;
    uint64_t data_pages;
};
typedef void (*cairn_check_fn)(void *arg, const char *problem);
int cairn_check(cairn *fs, struct cairn_check_report *report,
                cairn_check_fn report_fn, void *arg);

/* ---- csim.h ---- */
typedef struct csim csim;
struct csim_cost {
    uint64_t read_setup_ns;
    uint64_t read_bytes_per_s;
    uint64_t prog_setup_ns;
    uint64_t prog_bytes_per_s;
    uint64_t prog_page_ns;
    uint64_t erase_ns;
    uint64_t ftl_prog_ns;
    uint64_t ftl_erase_ns;
};
struct csim_ftl {
    uint32_t au_bytes;
    uint32_t flash_page_bytes;
    uint32_t open_aus;
};
struct csim_counters {
    uint64_t read_calls;
    uint64_t read_bytes;
    uint64_t prog_calls;
    uint64_t prog_bytes;
    uint64_t prog_pages;
    uint64_t erases;
    uint64_t spare_reads;
    uint64_t mutating_ops;
    uint64_t time_ns;
    uint64_t ftl_prog_pages;
    uint64_t ftl_copy_pages;
    uint64_t ftl_erases;
    uint64_t ftl_merges;
    uint64_t corrected;
    uint64_t uncorrectable;
    uint64_t violations;
};
struct csim_options {
    const char *image_path;
    int create;
    uint64_t seed;
    uint32_t block_count;
    uint32_t blocks_per_lblock;
};
csim *csim_new(const char *model, const struct csim_options *opt);
csim *csim_new_custom(const struct cairn_geometry *geo,
                      const struct csim_cost *cost, const struct csim_ftl *ftl,
                      const struct csim_options *opt);
void csim_free(csim *sim);
int csim_save(csim *sim);
const char *csim_error(void);
const char *const *csim_model_names(void);
int csim_model_info(const char *model, struct cairn_geometry *geo,
                    struct csim_cost *cost, struct csim_ftl *ftl);
struct cairn_dev *csim_dev(csim *sim);
const struct cairn_geometry *csim_geometry(const csim *sim);
void csim_counters(const csim *sim, struct csim_counters *out);
void csim_reset_counters(csim *sim);
uint32_t csim_erase_count(const csim *sim, uint32_t block);
const char *csim_last_violation(const csim *sim);
enum csim_tear {
    CSIM_TEAR_PREFIX = 0,
    CSIM_TEAR_RANDOM = 1,
    CSIM_TEAR_NONE = 2,
    CSIM_TEAR_EMPTY = 3
};
void csim_cut_at(csim *sim, uint64_t op_index, enum csim_tear tear);
void csim_cut_cancel(csim *sim);
int csim_powered(const csim *sim);
void csim_power_on(csim *sim);
void csim_set_factory_bad(csim *sim, uint32_t block);
void csim_wear_out_after(csim *sim, uint32_t block, uint32_t erases);
void csim_wear_out_now(csim *sim, uint32_t block);
void csim_fail_op(csim *sim, uint64_t op_index);
void csim_fail_cancel(csim *sim);
void csim_set_bitflips(csim *sim, uint32_t corrected_ppm,
                       uint32_t uncorrectable_ppm);
int csim_peek(const csim *sim, uint32_t page, void *data, void *spare);
int csim_poke(csim *sim, uint32_t page, const void *data, const void *spare);
int csim_peek_block(const csim *sim, uint32_t block, void *data, void *spare);
int csim_poke_block(csim *sim, uint32_t block, const void *data, const void *spare);

/* ---- python/layout.c ---- */
struct cairn_py_layout {
    const char *type;
    const char *field;
    uint32_t offset;
    uint32_t size;
};
const struct cairn_py_layout *cairn_py_layout(void);
"""

LIB_NAME = "libcairn_py.so"
_HERE = pathlib.Path(__file__).resolve().parent
REPO_ROOT = _HERE.parent.parent


def candidates() -> list[pathlib.Path]:
    """Paths tried for the shared library, in order (see the module doc)."""
    env = os.environ.get("CAIRN_LIB")
    if env:
        return [pathlib.Path(env)]
    return [
        _HERE / LIB_NAME,
        REPO_ROOT / "build" / "python" / LIB_NAME,
        REPO_ROOT / "build-release" / "python" / LIB_NAME,
    ]


def _load():
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    tried = candidates()
    for path in tried:
        if path.is_file():
            lib = ffi.dlopen(str(path))
            _check_layout(ffi, lib, path)
            return ffi, lib, path
    raise ImportError(
        "cairn: shared library not found (tried "
        + ", ".join(str(p) for p in tried)
        + "); build it with `make` at the top of the repository "
        "or point CAIRN_LIB at libcairn_py.so"
    )


def _check_layout(ffi, lib, path) -> None:
    entry = lib.cairn_py_layout()
    bad = []
    i = 0
    while entry[i].type != ffi.NULL:
        e = entry[i]
        ctype = ffi.string(e.type).decode()
        if e.field == ffi.NULL:
            got = ffi.sizeof(ctype)
            if got != e.size:
                bad.append(f"sizeof({ctype}) = {e.size} in C, {got} in the cdef")
        else:
            field = ffi.string(e.field).decode()
            off = ffi.offsetof(ctype, field)
            size = ffi.sizeof(dict(ffi.typeof(ctype).fields)[field].type)
            if off != e.offset or size != e.size:
                bad.append(
                    f"{ctype}.{field}: offset {e.offset} size {e.size} in C, "
                    f"offset {off} size {size} in the cdef"
                )
        i += 1
    if lib.cairn_context_size() > lib.CAIRN_CONTEXT_SIZE:
        bad.append("cairn_context_size() exceeds CAIRN_CONTEXT_SIZE")
    if bad:
        raise ImportError(
            f"cairn: the cffi declarations do not match {path}: " + "; ".join(bad)
        )


ffi, lib, lib_path = _load()


def has(name: str) -> bool:
    """True when the loaded library exports the C function `name` (features
    declared in cairn.h may be missing from an older or slimmer build:
    CAIRN_NO_RING, CAIRN_NO_BD). cffi's ABI mode resolves each function at its
    first use, so a missing one only fails when called."""
    try:
        getattr(lib, name)
    except AttributeError:
        return False
    return True
