/*
 * cairn: a log-structured flash file system for raw NOR, raw NAND and managed
 * (SD/eMMC) flash. This is the only header an application includes.
 *
 * Sizes and offsets are int32_t: a file holds at most 2 GiB - 1 bytes.
 * Every call returns 0 or a count on success and a negative cairn_err on
 * failure; cairn_strerror names it.
 *
 * Failures change nothing. A call that returns an error has left what a
 * caller can see as it was: the directory tree, the sizes and contents of
 * files (unsynced data included), the handles and their positions. The
 * exceptions are CAIRN_ERR_IO and CAIRN_ERR_CORRUPT, which report a failing
 * device or a damaged image: after those only what was synced is promised.
 *
 * Running out of space (CAIRN_ERR_NOSPC) is a clean, recoverable state:
 * - cairn_write returns the bytes that reached the file; fewer than asked
 *   means the rest did not fit; an error means not one byte did.
 * - cairn_close, cairn_file_sync, cairn_sync and cairn_unmount that fail
 *   with NOSPC release nothing: the handle with its unsynced data, or the
 *   mount, stays; remove (or shrink) something and call again, and nothing
 *   is lost. To give the unsynced data up instead, cairn_discard the handle
 *   (or remove the file: its handles then fail with CAIRN_ERR_BADF and close
 *   with 0).
 * - Removing a file, shrinking it and renaming over it free space even on a
 *   full volume; when their trimming finds no room it goes on later (the
 *   next remove, truncate or mount), and mount never fails for lack of room.
 * - cairn_fs_stat's free_bytes is a promise: a new file written
 *   sequentially up to free_bytes bytes (in pieces of any size) takes every
 *   byte and keeps them through close and remount.
 */
#ifndef CAIRN_H
#define CAIRN_H

#include <stddef.h>
#include <stdint.h>

#include "cairn_config.h"
#include "cairn_device.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAIRN_VERSION_MAJOR 0
#define CAIRN_VERSION_MINOR 1
/* On-disk format version written by this code. */
#define CAIRN_DISK_VERSION 5

#define CAIRN_NAME_MAX 255 /* bytes in one path component */
#define CAIRN_PATH_MAX 4096 /* bytes in a path, its NUL included (as Linux) */
#define CAIRN_ATTR_MAX 64  /* bytes in one custom attribute value */

enum cairn_err {
    CAIRN_OK = 0,
    CAIRN_ERR_IO = -1,        /* the device failed */
    CAIRN_ERR_CORRUPT = -2,   /* on-flash data failed a check */
    CAIRN_ERR_NOENT = -3,     /* no such file or directory */
    CAIRN_ERR_EXIST = -4,     /* already exists */
    CAIRN_ERR_NOTDIR = -5,    /* a path component is not a directory */
    CAIRN_ERR_ISDIR = -6,     /* is a directory */
    CAIRN_ERR_NOTEMPTY = -7,  /* directory not empty */
    CAIRN_ERR_NAMETOOLONG = -8, /* a name > CAIRN_NAME_MAX, a path >= CAIRN_PATH_MAX */
    CAIRN_ERR_BADF = -9,      /* bad handle, or not open for this access */
    CAIRN_ERR_NOSPC = -10,    /* no space left */
    CAIRN_ERR_INVAL = -11,    /* invalid argument or configuration */
    CAIRN_ERR_ROFS = -12,     /* read-only (mounted so, or can only be: cairn_mount) */
    CAIRN_ERR_MFILE = -13,    /* too many open files or directories */
    CAIRN_ERR_NOATTR = -14,   /* no such attribute */
    CAIRN_ERR_FBIG = -15      /* file would exceed the maximum size */
};

/* Name of an error ("CAIRN_ERR_NOENT") and a one-line description. */
const char *cairn_errname(int err);
const char *cairn_strerror(int err);

/* Open flags. Exactly one of RDONLY, WRONLY, RDWR. */
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
    uint8_t type;    /* enum cairn_type */
    int32_t size;    /* bytes (files); 0 for directories */
    uint32_t id;     /* object id, stable for the object's life: cairn_open_id */
    char name[CAIRN_NAME_MAX + 1];
};

struct cairn_fsinfo {
    uint64_t total_bytes; /* space for file data and metadata */
    uint64_t free_bytes;  /* a promise: one new file written sequentially takes
                             this many bytes (GC reclaims what it needs) */
    uint64_t used_bytes;  /* live data and metadata */
    uint32_t block_size;  /* bytes in one logical block (segment) */
    uint32_t page_size;
    uint32_t name_max;
    uint32_t files;       /* not tracked yet: 0 */
    /* wear: erase counts over the segments in use (bad ones left out) */
    uint32_t erase_min, erase_max, erase_mean;
    uint32_t bad_blocks;  /* segments retired as bad (factory or worn out) */
};

/* How the file system uses the device and RAM. Zero fields take defaults. */
struct cairn_config {
    struct cairn_dev *dev;
    /* Tree node cache: slots of node_size bytes. 0 = 16. At least 12. */
    uint32_t cache_nodes;
    /* Bytes per index node: a multiple of the page size, 1024 to 65536, and a
     * segment must hold 16 nodes. 0 = the page size, raised to a multiple of
     * it that is at least 1024. */
    uint32_t node_size;
    /* Files and directories open at once (each file object holds one page
     * buffer). 0 = 4. */
    uint32_t max_open;
    /* Journal pages written after a checkpoint before the next commit.
     * Bounds the replay work of a mount. 0 = half a segment, at most 64. */
    uint32_t commit_pages;
    /* Memory for all buffers: at least cairn_mem_size(cfg) bytes, aligned to
     * 8. NULL = one malloc at mount (unless built with CAIRN_NO_MALLOC). */
    void *mem;
    uint32_t mem_size;
    /* Mount read-only: no write reaches the device (replay stays in RAM).
     * After a power cut the replay keeps every tree node the journal's
     * records change in the node cache: when they do not fit, cairn_mount
     * returns CAIRN_ERR_NOSPC (mount again with more cache_nodes, or once
     * writable, which checkpoints the replay). */
    uint8_t read_only;
    /* Data heads: files written side by side each fill an erase block of
     * their own, up to this many at once (then they share the least recently
     * used head). 0 = 1 below 64 segments, else 4. At most 8. */
    uint8_t data_heads;
    /* Static wear levelling starts when the erase counts of the segments in
     * use differ by more than this. 0 = 16; at most 30 (larger values count
     * as 30: erase counts are kept up to 31 above the least worn segment's). */
    uint16_t wear_spread;
    /* Pages of live data garbage collection may move during one write call
     * (its incremental step). 0 = 16. */
    uint32_t gc_step_pages;
};

/* Bytes of memory a mount with this config needs (0 if the config is bad;
 * with blocks_per_lblock 0, also enough for a volume formatted with 0 by an
 * earlier cairn, whose segments are no smaller). */
uint32_t cairn_mem_size(const struct cairn_config *cfg);
/* Why cairn_format and cairn_mount refuse this config with CAIRN_ERR_INVAL:
 * a sentence naming the first check that fails (a static string), or NULL
 * when the config works. cairn_mem_size(cfg) is 0 exactly when the reason is
 * not about mem. */
const char *cairn_config_why(const struct cairn_config *cfg);

/* The file system context. Its fields are private. */
typedef struct cairn cairn;
/* A context needs cairn_context_size() bytes aligned to 8; that is at most
 * CAIRN_CONTEXT_SIZE, so static storage can be declared as
 * static uint64_t fs_storage[CAIRN_CONTEXT_SIZE / 8]. */
size_t cairn_context_size(void);

/* Writes an empty file system; fs is working space only (no mount results). */
int cairn_format(cairn *fs, const struct cairn_config *cfg);
/* fs points to cairn_context_size() bytes aligned to 8; it needs no
 * initialisation. Format and mount take the context as found: one still
 * mounted is abandoned as a power cut would abandon it (what it held
 * unsynced is lost, and memory cairn allocated for it, cfg.mem NULL, is not
 * freed), which is how a simulated power cut is followed; unmount first
 * otherwise. Every other call on a context that format, unmount or a failed
 * mount left returns CAIRN_ERR_INVAL. CAIRN_ERR_ROFS from a writable mount:
 * the volume can no longer be written (its checkpoint areas failed, or
 * worn-out blocks left it no room to recover: a worn-out chip); mounted
 * with read_only set it still reads everything synced before. */
int cairn_mount(cairn *fs, const struct cairn_config *cfg);
/* Syncs every open file, writes a clean checkpoint and releases the context
 * (open handles are dropped). NOSPC: still mounted, nothing lost (see the
 * top of this file); another error: released, what was synced survives. */
int cairn_unmount(cairn *fs);
int cairn_fs_stat(cairn *fs, struct cairn_fsinfo *info);
/* Makes everything written so far durable (all open files too). NOSPC:
 * some files may not be durable yet; nothing is lost, call again later. */
int cairn_sync(cairn *fs);

/* Files. Handles are small non-negative integers. */
int cairn_open(cairn *fs, const char *path, int flags);
int cairn_open_id(cairn *fs, uint32_t id, int flags);
int32_t cairn_read(cairn *fs, int fd, void *buf, int32_t len);
/* Returns the bytes that reached the file (readable through every handle
 * from now on, durable at the next successful sync or close): len, or fewer
 * when the rest did not fit; a negative error only when no byte did. */
int32_t cairn_write(cairn *fs, int fd, const void *buf, int32_t len);
int32_t cairn_seek(cairn *fs, int fd, int32_t off, int whence);
int32_t cairn_tell(cairn *fs, int fd);
int32_t cairn_size(cairn *fs, int fd);
/* Growing writes zeros; shrinking frees the pages past the end (even on a
 * full volume). On an error the size and the content are as before. Bytes
 * written since the last sync and cut by a shrink are not written out first,
 * so on a full volume unsynced bytes can be given up (shrink, then close). */
int cairn_truncate(cairn *fs, int fd, int32_t size);
/* Makes the file's data durable. On an error the handle and its data stay
 * as they were (not durable yet). */
int cairn_file_sync(cairn *fs, int fd);
/* Syncs (a writable handle) and releases the handle. CAIRN_ERR_NOSPC: the
 * handle is not released and its data stays; free space and close again.
 * Another error (IO): the handle is released and the data written since the
 * last successful sync may be lost. */
int cairn_close(cairn *fs, int fd);
/* Releases the handle without syncing; never fails on an open file handle
 * (CAIRN_ERR_BADF otherwise). With the file's last handle, what the file
 * holds unsynced in RAM is given up: its content and size are then what
 * was written out since its last sync (all, some or none of it); with other
 * handles open, nothing is given up. The way out for a handle that
 * cairn_close refused with NOSPC when no space can be freed. */
int cairn_discard(cairn *fs, int fd);
int cairn_fstat(cairn *fs, int fd, struct cairn_info *info);

/* Paths are resolved from the root ("a/b" = "/a/b"; "//" and "a//b" as on
 * POSIX). "" is CAIRN_ERR_NOENT; "." and ".." components are CAIRN_ERR_INVAL;
 * a trailing '/' requires a directory (CAIRN_ERR_NOTDIR on a file,
 * CAIRN_ERR_ISDIR for O_CREAT). Names are any bytes but '/' and NUL.
 * docs/DESIGN.md "Paths" has the full rules. */
int cairn_stat(cairn *fs, const char *path, struct cairn_info *info);
/* A file, or an empty directory. The file's open handles fail with
 * CAIRN_ERR_BADF from then on (and close with 0); a remove that fails leaves
 * them and their data alone. Works on a full volume. */
int cairn_remove(cairn *fs, const char *path);
/* Replaces `to` if it exists (as a remove of it would; a rename that fails
 * leaves its handles alone). Handles of `from` follow the object. */
int cairn_rename(cairn *fs, const char *from, const char *to);
int cairn_mkdir(cairn *fs, const char *path);

/* Space management. cairn_gc is idle-time work: it collects garbage for at
 * most `budget` moved pages of file data and returns the pages moved (the
 * call that finishes a victim also moves the tree nodes in it, at most a
 * segment of them, and frees it); when nothing is
 * worth collecting it erases one free segment ahead of need instead (the
 * writes of the next burst then erase nothing) and returns 1; 0 when there
 * is nothing left to do. Call it until it returns 0 to prepare a burst. A
 * victim one call begins and does not finish waits for the next call; writes
 * go on with it only while free segments run low.
 * The first call after a mount (budget > 0) also does what the first change
 * would (it marks the session begun: on NAND a checkpoint, which erases an
 * anchor block first), so a first write after it costs what a later one does.
 * cairn_fallocate reserves room for the open file to grow to
 * `length` bytes: while it stays open its writes that extend it up to there
 * cannot fail with CAIRN_ERR_NOSPC, and it gets a data head of its own (other writers share
 * it only when promises hold every data head: below 64 segments there is
 * one, cairn_config.data_heads). The promise counts
 * the pages from the file's end at the first call (holes below it are not
 * covered, and a length at or below the size promises nothing); pages
 * written again (overwrites, a partial last page at each sync) are not
 * charged to it, and two segments more are held back for the tree and
 * journal pages the writes need and the heads their collection opens, until
 * the file is closed. An overwrite is not promised: on a volume filled to
 * NOSPC it needs the collector to free what it writes, and may get NOSPC. */
int32_t cairn_gc(cairn *fs, uint32_t budget);
int cairn_fallocate(cairn *fs, int fd, int32_t length);

/* Ring files: a file of fixed capacity (bytes, a multiple of the page size)
 * that wraps. Opened with cairn_open; every write appends, and once the ring
 * is full it overwrites the oldest data. Offset 0 is the oldest byte still
 * held and the size is the bytes held (at most the capacity). A ring takes
 * pages as it fills and writes new pages before it gives up old ones, so on
 * a volume other files have filled its appends fail with CAIRN_ERR_NOSPC
 * like any write; cairn_fallocate(fs, fd, capacity) on the open ring holds
 * its room (also when the ring is full, opened again after a remount: then
 * the room its laps need), and its appends then go on however full the
 * volume gets. */
int cairn_ring_create(cairn *fs, const char *path, int32_t capacity);
/* The capacity in bytes of the ring open as fd (what cairn_ring_create was
 * given), 0 when fd is a plain file, CAIRN_ERR_BADF for a bad handle. */
int32_t cairn_ring_capacity(cairn *fs, int fd);

/* Sector interface: a fixed-size array of logical sectors stored in a file of
 * the volume (created on first open), for a FAT or other sector-based layer on
 * top of raw flash. sector_size divides the page size or is a multiple of it.
 * Sectors never written or trimmed read as zeros. The array is sparse: a
 * sector takes flash when written, and on a volume that other files have
 * filled, writes (rewrites too: flash is not rewritten in place) fail with
 * CAIRN_ERR_NOSPC like a file's. cairn_bd_close refused with NOSPC leaves the
 * array open with its data, as cairn_close does (cairn_discard(bd->fs,
 * bd->fd) gives it up). */
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

/* Directories: readdir returns 1 with an entry, 0 at the end. */
int cairn_opendir(cairn *fs, const char *path);
int cairn_readdir(cairn *fs, int dd, struct cairn_info *info);
int cairn_rewinddir(cairn *fs, int dd);
int cairn_closedir(cairn *fs, int dd);

/* Custom attributes: type 0..255, values up to CAIRN_ATTR_MAX bytes.
 * getattr returns the value's length (copying at most size bytes). */
int cairn_getattr(cairn *fs, const char *path, uint8_t type, void *buf,
                  uint32_t size);
int cairn_setattr(cairn *fs, const char *path, uint8_t type, const void *buf,
                  uint32_t size);
int cairn_removeattr(cairn *fs, const char *path, uint8_t type);

/* Consistency check of the whole volume (reads everything reachable).
 * Returns 0 when clean, CAIRN_ERR_CORRUPT when it found problems (counted in
 * report, described by calling report_fn if not NULL), or another error.
 * On a writable mount it first writes the index nodes held in RAM, so that
 * each segment's live pages can be counted; on a volume too full for that
 * (and on a read-only mount) those counts are not compared. report (when
 * not NULL) is zeroed first, so after any error it holds zeros or what was
 * counted before the error. */
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

#ifdef __cplusplus
}
#endif

#endif /* CAIRN_H */
