/*
 * `cairn mount`: a cairn volume served through FUSE 3 (the high-level API),
 * single-threaded, so the one cairn context needs no locking. See
 * cairn_fuse.h and docs/TOOL.md ("mount").
 *
 * FUSE file handles are cairn handles (the low 32 bits) with a "writable"
 * flag above them. fsync maps to cairn_file_sync, flush (each close(2)) to
 * cairn_file_sync on a writable handle (so close reports NOSPC and IO
 * errors), release to cairn_close, fsyncdir to cairn_sync, and the FUSE
 * destroy (fusermount3 -u, SIGTERM) to cairn_unmount. cairn keeps no times,
 * permissions or links: the mount keeps times in memory for its session
 * (fuse_times.h; utimens sets them there), chmod and chown succeed without
 * doing anything; link and symlink are not implemented (ENOSYS).
 */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#define _DEFAULT_SOURCE
#define FUSE_USE_VERSION 31

#include "cairn_fuse.h"
#include "fuse_times.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wshadow"
#include <fuse.h>
#pragma GCC diagnostic pop

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1u << 0) /* linux/fs.h */
#endif

#define FH_WRITABLE ((uint64_t)1 << 32)
#define MOUNT_MAX_OPEN 32u

static struct vol g_vol;
static int g_read_only;
static int g_served;      /* init ran: the FUSE mount was up */
static int g_unmounted;   /* destroy unmounted cairn cleanly */

static cairn *fs(void) { return g_vol.fs; }

/* Handles whose release got NOSPC. cairn keeps such a handle with its
 * unsynced data (cairn.h: free space and close again), but the kernel sends
 * release once and ignores what it returns, so each one leaked a handle, and
 * after MOUNT_MAX_OPEN of them every open failed with EMFILE (a full volume,
 * synced overwrites). Up to MOUNT_KEPT are kept and closed again after each
 * call that may free space and before each call that takes a handle; past
 * that, and at the unmount, a handle still refused is discarded
 * (cairn_discard: its unsynced data is given up, as close(2) had reported
 * with ENOSPC). One bit per cairn handle. */
#define MOUNT_KEPT 8u
static uint32_t g_pending;
static int to_errno(int err);

/* libfuse keeps a file that is unlinked, or renamed over, while open under
 * a hidden name (.fuse_hidden*, removed at its last close): it asks for a
 * rename to that name and, for a rename, goes on in the very next call with
 * the rename itself. A cairn rename to a new name needs room, so on a full
 * volume (an fsx-style run, session 40):
 * - the hide was refused, and unlink(2) of an open file failed with ENOSPC
 *   where a remove works on a full volume;
 * - the hide took the last room and the rename was refused: libfuse left
 *   the target hidden, so a rename(2) that failed deleted the file it was
 *   to replace, and putting its name back was refused the same way.
 * So a hide is only noted, and the next call completes it. When that call
 * is the rename onto the noted name: with room (free_bytes above 0) the
 * hide and the rename (a failed rename undoes the hide), else cairn's rename
 * over the file (which frees space; the replaced file's descriptors then
 * fail with EBADF). Any other call: the hide, or if it finds no room the
 * remove the unlink asked for (its descriptors then fail with EBADF). */
static unsigned g_call; /* FUSE operations served */
static struct {
    int noted;
    unsigned call; /* g_call of the hide */
    char name[CAIRN_PATH_MAX], hidden[CAIRN_PATH_MAX];
} g_hide;
static void begin_call(void);

static unsigned pending_count(void)
{
    unsigned n = 0;
    uint32_t m;
    for (m = g_pending; m != 0; m &= m - 1)
        n++;
    return n;
}

static void close_pending(void)
{
    int fd;
    for (fd = 0; g_pending != 0 && fd < (int)MOUNT_MAX_OPEN; fd++) {
        int err;
        if (!(g_pending & (1u << fd)))
            continue;
        err = cairn_close(fs(), fd);
        if (err == CAIRN_ERR_NOSPC)
            continue;
        g_pending &= ~(1u << fd);
        if (err < 0)
            fprintf(stderr, "cairn mount: a close kept for want of space: %s (%s)\n",
                    cairn_errname(err), cairn_strerror(err));
    }
}

/* Close fd; NOSPC keeps it for close_pending, or discards it when
 * MOUNT_KEPT are kept already. */
static int close_or_keep(int fd)
{
    int err = cairn_close(fs(), fd);
    if (err != CAIRN_ERR_NOSPC || fd < 0 || fd >= (int)MOUNT_MAX_OPEN)
        return err;
    if (pending_count() < MOUNT_KEPT)
        g_pending |= 1u << fd;
    else
        (void)cairn_discard(fs(), fd);
    return err;
}

/* The unmount: closes that still find no room are given up. */
static void discard_pending(void)
{
    int fd;
    for (fd = 0; g_pending != 0 && fd < (int)MOUNT_MAX_OPEN; fd++)
        if (g_pending & (1u << fd)) {
            (void)cairn_discard(fs(), fd);
            g_pending &= ~(1u << fd);
        }
}

/* The result of a call that may have freed space: pending closes go again. */
static int freed(int err)
{
    if (err == 0)
        close_pending();
    return to_errno(err);
}

static int to_errno(int err)
{
    switch (err) {
    case CAIRN_ERR_IO: return -EIO;
    case CAIRN_ERR_CORRUPT: return -EIO;
    case CAIRN_ERR_NOENT: return -ENOENT;
    case CAIRN_ERR_EXIST: return -EEXIST;
    case CAIRN_ERR_NOTDIR: return -ENOTDIR;
    case CAIRN_ERR_ISDIR: return -EISDIR;
    case CAIRN_ERR_NOTEMPTY: return -ENOTEMPTY;
    case CAIRN_ERR_NAMETOOLONG: return -ENAMETOOLONG;
    case CAIRN_ERR_BADF: return -EBADF;
    case CAIRN_ERR_NOSPC: return -ENOSPC;
    case CAIRN_ERR_INVAL: return -EINVAL;
    case CAIRN_ERR_ROFS: return -EROFS;
    case CAIRN_ERR_MFILE: return -EMFILE;
    case CAIRN_ERR_NOATTR: return -ENODATA;
    case CAIRN_ERR_FBIG: return -EFBIG;
    default: return err < 0 ? -EIO : 0;
    }
}

static int fh_fd(const struct fuse_file_info *fi) { return (int)(fi->fh & 0xFFFFFFFFu); }

static void fill_stat(struct stat *st, const struct cairn_info *info)
{
    memset(st, 0, sizeof *st);
    st->st_ino = info->id;
    st->st_uid = getuid();
    st->st_gid = getgid();
    st->st_blksize = 4096;
    if (info->type == CAIRN_TYPE_DIR) {
        st->st_mode = S_IFDIR | 0755;
        st->st_nlink = 2;
    } else {
        st->st_mode = S_IFREG | 0644;
        st->st_nlink = 1;
        st->st_size = info->size;
        st->st_blocks = ((off_t)info->size + 511) / 512;
    }
    ft_get(info->id, &st->st_mtim, &st->st_ctim);
    st->st_atim = st->st_mtim;
}

/* The object at path, or its parent directory's (parent), changed. */
static void changed_at(const char *path, int parent)
{
    struct cairn_info info;
    char dir[CAIRN_PATH_MAX + 1];
    const char *slash = strrchr(path, '/');
    if (parent) {
        size_t n = slash && slash != path ? (size_t)(slash - path) : 1u;
        if (n > CAIRN_PATH_MAX)
            return;
        memcpy(dir, path, n);
        dir[n] = '\0';
        path = dir;
    }
    if (cairn_stat(fs(), path, &info) == 0)
        ft_changed(info.id);
}

/* The file open as fd changed. */
static void changed_fd(int fd)
{
    struct cairn_info info;
    if (cairn_fstat(fs(), fd, &info) == 0)
        ft_changed(info.id);
}

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    struct cairn_info info;
    int err;
    begin_call();
    err = fi ? cairn_fstat(fs(), fh_fd(fi), &info) : cairn_stat(fs(), path, &info);
    if (fi && err == CAIRN_ERR_BADF) /* a removed file's handle */
        err = cairn_stat(fs(), path, &info);
    if (err < 0)
        return to_errno(err);
    fill_stat(st, &info);
    return 0;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    struct cairn_info info;
    struct stat st;
    int dd, r;
    begin_call();
    (void)offset, (void)fi, (void)flags;
    close_pending();
    dd = cairn_opendir(fs(), path);
    if (dd < 0)
        return to_errno(dd);
    filler(buf, ".", NULL, 0, (enum fuse_fill_dir_flags)0);
    filler(buf, "..", NULL, 0, (enum fuse_fill_dir_flags)0);
    while ((r = cairn_readdir(fs(), dd, &info)) == 1) {
        fill_stat(&st, &info);
        if (filler(buf, info.name, &st, 0, (enum fuse_fill_dir_flags)0))
            break;
    }
    cairn_closedir(fs(), dd);
    return r < 0 ? to_errno(r) : 0;
}

static int open_flags(int flags)
{
    int cf;
    switch (flags & O_ACCMODE) {
    case O_WRONLY: cf = CAIRN_O_WRONLY; break;
    case O_RDWR: cf = CAIRN_O_RDWR; break;
    default: cf = CAIRN_O_RDONLY; break;
    }
    if (flags & O_CREAT)
        cf |= CAIRN_O_CREAT;
    if (flags & O_EXCL)
        cf |= CAIRN_O_EXCL;
    if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY)
        cf |= CAIRN_O_TRUNC;
    /* O_APPEND: the kernel gives each write its offset (the end) */
    return cf;
}

static int do_open(const char *path, int cf, struct fuse_file_info *fi)
{
    int fd;
    close_pending();
    fd = cairn_open(fs(), path, cf);
    if (fd < 0)
        return to_errno(fd);
    fi->fh = (uint64_t)(uint32_t)fd;
    if ((cf & CAIRN_O_RDWR) != CAIRN_O_RDONLY)
        fi->fh |= FH_WRITABLE;
    return 0;
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
    begin_call();
    return do_open(path, open_flags(fi->flags), fi);
}

static int op_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    int err;
    begin_call();
    (void)mode;
    err = do_open(path, open_flags(fi->flags) | CAIRN_O_CREAT, fi);
    if (err == 0) {
        changed_fd(fh_fd(fi));
        changed_at(path, 1);
    }
    return err;
}

static int op_read(const char *path, char *buf, size_t size, off_t off,
                   struct fuse_file_info *fi)
{
    int fd = fh_fd(fi);
    int32_t r, done = 0;
    begin_call();
    (void)path;
    if (off >= INT32_MAX)
        return 0;
    if (size > INT32_MAX)
        size = INT32_MAX;
    r = cairn_seek(fs(), fd, (int32_t)off, CAIRN_SEEK_SET);
    if (r < 0)
        return to_errno(r);
    while ((size_t)done < size) {
        r = cairn_read(fs(), fd, buf + done, (int32_t)(size - (size_t)done));
        if (r < 0)
            return done ? done : to_errno(r);
        if (r == 0)
            break;
        done += r;
    }
    return done;
}

static int op_write(const char *path, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    int fd = fh_fd(fi);
    int32_t r;
    begin_call();
    (void)path;
    if (off > INT32_MAX || size > (size_t)(INT32_MAX - off))
        return -EFBIG;
    r = cairn_seek(fs(), fd, (int32_t)off, CAIRN_SEEK_SET);
    if (r < 0)
        return to_errno(r);
    r = cairn_write(fs(), fd, buf, (int32_t)size);
    if (r < 0)
        return to_errno(r);
    if (r > 0)
        changed_fd(fd);
    /* Fewer than size: the rest did not fit (the next write: ENOSPC). The
     * kernel passes a short count on to write(2), but the writeback of a
     * mmap'd page ignores it and reports success to msync and fsync: the
     * rest of the page was lost without a word (an fsx-style run on a full
     * volume, session 40). There the error is what reaches the caller. */
    if ((size_t)r < size && fi->writepage)
        return -ENOSPC;
    return r;
}

static int truncate_file(const char *path, off_t size, struct fuse_file_info *fi)
{
    struct cairn_info info;
    int fd, err, cerr;
    begin_call();
    if (size < 0)
        return -EINVAL;
    if (size > INT32_MAX)
        return -EFBIG;
    if (fi && (fi->fh & FH_WRITABLE)) {
        err = cairn_truncate(fs(), fh_fd(fi), (int32_t)size);
        if (err != CAIRN_ERR_BADF)
            return freed(err);
    }
    close_pending();
    if ((err = cairn_stat(fs(), path, &info)) < 0)
        return to_errno(err);
    fd = cairn_open(fs(), path, CAIRN_O_WRONLY);
    if (fd < 0)
        return to_errno(fd);
    err = cairn_truncate(fs(), fd, (int32_t)size);
    cerr = cairn_close(fs(), fd);
    if (cerr == CAIRN_ERR_NOSPC) {
        /* the new size did not fit: back to the old one (a failed call
         * changes nothing), which frees what it took, and close */
        (void)cairn_truncate(fs(), fd, info.size);
        (void)close_or_keep(fd);
        return -ENOSPC;
    }
    if (err < 0)
        return to_errno(err);
    return cerr < 0 ? to_errno(cerr) : freed(0);
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    int err = truncate_file(path, size, fi);
    if (err == 0 && fi)
        changed_fd(fh_fd(fi));
    if (err == 0)
        changed_at(path, 0);
    return err;
}

/* Is path a file libfuse renamed when it was unlinked while open? It
 * removes it after the last release; no one can open it again. */
static int is_unlinked(const char *path)
{
    const char *base = strrchr(path, '/');
    return strncmp(base != NULL ? base + 1 : path, ".fuse_hidden", 12) == 0;
}

/* A noted hide not followed by its rename: an unlink's. */
static void complete_hide(void)
{
    int err;
    if (!g_hide.noted)
        return;
    g_hide.noted = 0;
    err = cairn_rename(fs(), g_hide.name, g_hide.hidden);
    if (err == CAIRN_ERR_NOSPC) {
        fprintf(stderr, "cairn mount: no room to keep %s while open: removed, its open "
                        "descriptors fail\n", g_hide.name);
        err = cairn_remove(fs(), g_hide.name);
    }
    if (err < 0)
        fprintf(stderr, "cairn mount: unlink %s: %s (%s)\n", g_hide.name, cairn_errname(err),
                cairn_strerror(err));
    (void)freed(err);
}

/* The start of every operation but rename (op_rename). */
static void begin_call(void)
{
    g_call++;
    complete_hide();
}

/* rename(from, to) where to is a hidden name: libfuse hides an open file. */
static int note_hide(const char *from, const char *to)
{
    struct cairn_info info;
    int err = cairn_stat(fs(), to, &info);
    if (err != CAIRN_ERR_NOENT)
        return err == 0 ? -EEXIST : to_errno(err);
    if ((err = cairn_stat(fs(), from, &info)) < 0)
        return to_errno(err);
    g_hide.noted = 1;
    g_hide.call = g_call;
    strcpy(g_hide.name, from); /* both shorter than CAIRN_PATH_MAX: cairn took them */
    strcpy(g_hide.hidden, to);
    return 0;
}

/* The rename whose target (to) libfuse has just hidden. */
static int rename_over_hidden(const char *from, const char *to)
{
    struct cairn_fsinfo st;
    int err;
    g_hide.noted = 0;
    if (cairn_fs_stat(fs(), &st) == 0 && st.free_bytes > 0 &&
        cairn_rename(fs(), to, g_hide.hidden) == 0) {
        err = cairn_rename(fs(), from, to);
        if (err < 0) {
            int undo = cairn_rename(fs(), g_hide.hidden, to);
            if (undo < 0)
                fprintf(stderr, "cairn mount: a rename failed, and %s stays at %s (removed "
                                "at its last close): %s (%s)\n", to, g_hide.hidden,
                        cairn_errname(undo), cairn_strerror(undo));
        }
        return freed(err);
    }
    fprintf(stderr, "cairn mount: no room to keep %s while open: replaced, its open "
                    "descriptors fail\n", to);
    return freed(cairn_rename(fs(), from, to)); /* over the file: frees */
}

static int op_flush(const char *path, struct fuse_file_info *fi)
{
    struct cairn_info info;
    int err;
    begin_call();
    if (!(fi->fh & FH_WRITABLE))
        return 0;
    err = cairn_file_sync(fs(), fh_fd(fi));
    if (err == CAIRN_ERR_BADF)
        return 0; /* removed */
    /* The close(2) of a file unlinked while open: its data is going away,
     * so a sync refused for room is no error to report (the handle keeps
     * the data for the file's other descriptors until the removal). */
    if (err == CAIRN_ERR_NOSPC && path != NULL && is_unlinked(path) &&
        cairn_stat(fs(), path, &info) == 0) /* (not where a failed rename left it) */
        return 0;
    return to_errno(err);
}

static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    int err;
    begin_call();
    (void)path, (void)datasync;
    if (!(fi->fh & FH_WRITABLE))
        return 0;
    err = cairn_file_sync(fs(), fh_fd(fi));
    return err == CAIRN_ERR_BADF ? 0 : to_errno(err);
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
    int err;
    begin_call();
    err = close_or_keep(fh_fd(fi));
    if (err < 0)
        fprintf(stderr, "cairn mount: close %s: %s (%s)%s\n", path, cairn_errname(err),
                cairn_strerror(err),
                err != CAIRN_ERR_NOSPC ? ""
                : g_pending & (1u << fh_fd(fi)) ? "; kept open, closed again once space is freed"
                                                : "; too many kept: its unsynced data is given up");
    return to_errno(err);
}

static int op_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
    begin_call();
    (void)path, (void)datasync, (void)fi;
    return g_read_only ? 0 : to_errno(cairn_sync(fs()));
}

static int op_unlink(const char *path)
{
    struct cairn_info info;
    int err;
    begin_call();
    err = cairn_stat(fs(), path, &info);
    if (err == 0 && info.type == CAIRN_TYPE_DIR)
        return -EISDIR;
    err = err < 0 ? to_errno(err) : freed(cairn_remove(fs(), path));
    if (err == 0)
        changed_at(path, 1);
    return err;
}

static int op_rmdir(const char *path)
{
    struct cairn_info info;
    int err;
    begin_call();
    err = cairn_stat(fs(), path, &info);
    if (err == 0 && info.type != CAIRN_TYPE_DIR)
        return -ENOTDIR;
    err = err < 0 ? to_errno(err) : freed(cairn_remove(fs(), path));
    if (err == 0)
        changed_at(path, 1);
    return err;
}

static int op_mkdir(const char *path, mode_t mode)
{
    int err;
    begin_call();
    (void)mode;
    err = to_errno(cairn_mkdir(fs(), path));
    if (err == 0) {
        changed_at(path, 0);
        changed_at(path, 1);
    }
    return err;
}

static int rename_entry(const char *from, const char *to, unsigned int flags)
{
    struct cairn_info info;
    g_call++;
    if (g_hide.noted && g_hide.call + 1 == g_call && !flags && strcmp(to, g_hide.name) == 0)
        return rename_over_hidden(from, to);
    complete_hide();
    if (flags & ~(unsigned)RENAME_NOREPLACE)
        return -EINVAL; /* RENAME_EXCHANGE, RENAME_WHITEOUT */
    if ((flags & RENAME_NOREPLACE) && cairn_stat(fs(), to, &info) == 0)
        return -EEXIST;
    if (is_unlinked(to) && !is_unlinked(from) && !flags)
        return note_hide(from, to);
    return freed(cairn_rename(fs(), from, to)); /* (over a file: frees it) */
}

static int op_rename(const char *from, const char *to, unsigned int flags)
{
    int err = rename_entry(from, to, flags);
    if (err == 0) {
        changed_at(from, 1);
        changed_at(to, 1);
        changed_at(to, 0);
    }
    return err;
}

static int op_statfs(const char *path, struct statvfs *sv)
{
    struct cairn_fsinfo fi;
    int err;
    unsigned long unit;
    begin_call();
    err = cairn_fs_stat(fs(), &fi);
    (void)path;
    if (err < 0)
        return to_errno(err);
    unit = fi.page_size ? fi.page_size : 512;
    memset(sv, 0, sizeof *sv);
    sv->f_bsize = unit;
    sv->f_frsize = unit;
    sv->f_blocks = (fsblkcnt_t)(fi.total_bytes / unit);
    sv->f_bfree = (fsblkcnt_t)(fi.free_bytes / unit);
    sv->f_bavail = sv->f_bfree;
    sv->f_namemax = fi.name_max ? fi.name_max : CAIRN_NAME_MAX;
    return 0;
}

static int op_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    struct cairn_info info;
    int err;
    begin_call();
    err = fi ? cairn_fstat(fs(), fh_fd(fi), &info) : CAIRN_ERR_BADF;
    if (err == CAIRN_ERR_BADF)
        err = cairn_stat(fs(), path, &info);
    if (err < 0)
        return to_errno(err);
    /* (the access time is not kept) */
    if (tv == NULL || tv[1].tv_nsec == UTIME_NOW)
        ft_changed(info.id);
    else if (tv[1].tv_nsec != UTIME_OMIT)
        ft_set_mtime(info.id, &tv[1]);
    return 0; /* kept in memory for this mount (fuse_times.h) */
}

static int op_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    struct cairn_info info;
    begin_call();
    (void)mode;
    if (fi)
        return 0;
    return to_errno(cairn_stat(fs(), path, &info));
}

static int op_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
    struct cairn_info info;
    begin_call();
    (void)uid, (void)gid;
    if (fi)
        return 0;
    return to_errno(cairn_stat(fs(), path, &info));
}

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    (void)conn;
    g_served = 1;
    ft_begin();
    cfg->use_ino = 1;
    cfg->entry_timeout = 1.0;
    cfg->attr_timeout = 1.0;
    cfg->negative_timeout = 0;
    return NULL;
}

static void op_destroy(void *private_data)
{
    begin_call();
    (void)private_data;
    close_pending();
    if (g_pending) {
        fprintf(stderr, "cairn mount: %u files still open for want of space: their data since "
                        "the last sync is given up\n", pending_count());
        discard_pending();
    }
    if (vol_unmount(&g_vol) < 0)
        fprintf(stderr, "cairn mount: %s\n", g_vol.err);
    else
        g_unmounted = 1;
}

/* Is "ro" one of the comma-separated options? */
static int has_ro(const char *opts)
{
    const char *p = opts;
    while (p && *p) {
        size_t n = strcspn(p, ",");
        if (n == 2 && strncmp(p, "ro", 2) == 0)
            return 1;
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

int cairn_fuse_mount(struct vol_opts *vo, const char *dir, const char *options, int foreground)
{
    static struct fuse_operations ops;
    char fsname[1200];
    char *argv[16];
    int argc = 0, rc;
    size_t i;
    char *abs = realpath(vo->path, NULL); /* the daemon runs in / */
    g_read_only = has_ro(options);
    if (abs)
        vo->path = abs;
    vo->max_open = MOUNT_MAX_OPEN;
    if (vol_open(&g_vol, vo, g_read_only) < 0 || vol_mount(&g_vol, g_read_only) < 0) {
        fprintf(stderr, "cairn mount: %s\n", g_vol.err);
        vol_close(&g_vol);
        free(abs);
        return 2;
    }
    memset(&ops, 0, sizeof ops);
    ops.getattr = op_getattr;
    ops.readdir = op_readdir;
    ops.open = op_open;
    ops.create = op_create;
    ops.read = op_read;
    ops.write = op_write;
    ops.truncate = op_truncate;
    ops.flush = op_flush;
    ops.fsync = op_fsync;
    ops.release = op_release;
    ops.fsyncdir = op_fsyncdir;
    ops.unlink = op_unlink;
    ops.rmdir = op_rmdir;
    ops.mkdir = op_mkdir;
    ops.rename = op_rename;
    ops.statfs = op_statfs;
    ops.utimens = op_utimens;
    ops.chmod = op_chmod;
    ops.chown = op_chown;
    ops.init = op_init;
    ops.destroy = op_destroy;

    /* fsname: the image path, without the commas FUSE would split on */
    snprintf(fsname, sizeof fsname, "fsname=%s,subtype=cairn", vo->path);
    for (i = strlen("fsname="); fsname[i] && strncmp(fsname + i, ",subtype", 8) != 0; i++)
        if (fsname[i] == ',' || fsname[i] == '\\')
            fsname[i] = '_';
    argv[argc++] = (char *)"cairn";
    argv[argc++] = (char *)"-s"; /* single-threaded: one cairn context */
    if (foreground)
        argv[argc++] = (char *)"-f";
    argv[argc++] = (char *)"-o";
    argv[argc++] = fsname;
    if (options && *options) {
        argv[argc++] = (char *)"-o";
        argv[argc++] = (char *)options;
    }
    argv[argc++] = (char *)dir;
    argv[argc] = NULL;
    rc = fuse_main(argc, argv, &ops, NULL);
    if (rc && g_served && g_unmounted)
        rc = 0; /* ended by SIGTERM/SIGINT/SIGHUP (fuse_main returns 1): a clean end */
    if (vol_close(&g_vol) < 0) { /* unmounts if destroy did not run (a failed mount) */
        fprintf(stderr, "cairn mount: %s\n", g_vol.err);
        rc = 2;
    }
    ft_end();
    free(abs);
    return rc ? 2 : 0;
}
