/* Sector interface: a fixed array of logical sectors kept in one file, for a
 * FAT or another sector-based layer on raw flash (what Dhara gives, here on
 * the same volume as ordinary files).
 *
 * Sector s is bytes [s * sector_size, +sector_size) of the file, which is
 * created or grown to sector_size * sector_count bytes at open; a grown file
 * is sparse, so sectors never written read as zeros. Everything goes through
 * the file layer, which already has what a sector device needs: whole pages
 * of a write go to flash without reading anything, a part of a page goes
 * through the file's one-page buffer, and the extent cursor makes sequential
 * reads cost one device read per run of pages, not a walk from the root per
 * sector. Trim punches whole pages out of the file's map with PUNCH records
 * (their flash pages become dead) and zeroes the parts of pages it covers. */
#include "cn.h"

#ifndef CAIRN_NO_BD

/* Smaller sectors would only multiply the calls per page (FAT's are 512 B or
 * more), and a power-of-two floor keeps every sector inside one page or
 * made of whole pages. */
#define BD_MIN_SECTOR 128u

static int geometry_ok(const cairn *fs, uint32_t ss, uint32_t count)
{
    uint32_t ps = fs->page_size;
    if (ss < BD_MIN_SECTOR || (ss & (ss - 1u)) != 0 || count == 0)
        return 0;
    if (ps % ss != 0 && ss % ps != 0)
        return 0;
    return (uint64_t)ss * count <= (uint64_t)INT32_MAX;
}

/* Checks a request and turns it into a byte range of the file. */
static int bd_range(const struct cairn_bd *bd, uint32_t sector, uint32_t count, int32_t *off,
                    int32_t *len)
{
    uint64_t end;
    if (bd == NULL)
        return CAIRN_ERR_INVAL;
    if (bd->fs == NULL || bd->fd < 0)
        return CAIRN_ERR_BADF;
    if (sector >= bd->sector_count || count > bd->sector_count - sector)
        return CAIRN_ERR_INVAL;
    /* the struct is the caller's: do not trust that open's check still holds */
    end = ((uint64_t)sector + count) * bd->sector_size;
    if (end > (uint64_t)INT32_MAX)
        return CAIRN_ERR_INVAL;
    *off = (int32_t)((uint64_t)sector * bd->sector_size);
    *len = (int32_t)(end - (uint64_t)*off);
    return 0;
}

/* The open file object behind bd, or NULL when the handle is no longer a
 * file (closed, or its file was removed). */
static struct cn_file *bd_file(const struct cairn_bd *bd)
{
    cairn *fs = bd->fs;
    const struct cn_handle *h;
    struct cn_file *f;
    if ((uint32_t)bd->fd >= fs->max_open)
        return NULL;
    h = &fs->handles[bd->fd];
    if (h->kind != CN_HND_FILE || !(h->flags & CAIRN_O_WRONLY))
        return NULL;
    f = &fs->files[h->file];
    return f->id == 0 || f->id == CN_NONE ? NULL : f;
}

int cairn_bd_open(cairn *fs, struct cairn_bd *bd, const char *path, uint32_t sector_size,
                  uint32_t sector_count)
{
    int32_t bytes, size;
    int fd, err;
    if (bd == NULL)
        return CAIRN_ERR_INVAL;
    bd->fs = NULL;
    bd->fd = -1;
    if (fs == NULL || path == NULL)
        return CAIRN_ERR_INVAL;
    err = cn_fs_ready(fs, 0);
    if (err)
        return err;
    if (!geometry_ok(fs, sector_size, sector_count))
        return CAIRN_ERR_INVAL;
    bytes = (int32_t)(sector_size * sector_count);
    fd = cairn_open(fs, path, fs->read_only ? CAIRN_O_RDONLY : CAIRN_O_RDWR | CAIRN_O_CREAT);
    if (fd < 0)
        return fd;
    size = cairn_size(fs, fd);
    /* a larger file holds data past the array: refuse rather than hide it */
    err = size < 0 ? size : size > bytes ? CAIRN_ERR_INVAL : 0;
    if (!err && size < bytes && !fs->read_only) {
        err = cairn_truncate(fs, fd, bytes); /* grows as a hole: zeros */
        if (!err)
            err = cairn_file_sync(fs, fd);
    }
    if (err) {
        if (cairn_close(fs, fd) != 0)
            (void)cairn_discard(fs, fd); /* the refused growth holds nothing of the caller's */
        return err;
    }
    bd->fs = fs;
    bd->fd = fd;
    bd->sector_size = sector_size;
    bd->sector_count = sector_count;
    return 0;
}

int cairn_bd_read(struct cairn_bd *bd, uint32_t sector, void *buf, uint32_t count)
{
    uint8_t *out = (uint8_t *)buf;
    int32_t off, len, got;
    int err = bd_range(bd, sector, count, &off, &len);
    if (!err && buf == NULL && count > 0)
        err = CAIRN_ERR_INVAL;
    if (err || count == 0)
        return err;
    got = cairn_seek(bd->fs, bd->fd, off, CAIRN_SEEK_SET);
    while (got >= 0 && len > 0) {
        got = cairn_read(bd->fs, bd->fd, out, len);
        if (got == 0) { /* past the end of a file shorter than the array (read-only) */
            memset(out, 0, (size_t)len);
            break;
        }
        if (got > 0) {
            out += got;
            len -= got;
        }
    }
    return got < 0 ? got : 0;
}

/* Writes len bytes at off: from src, or zeros when src is NULL. */
static int write_at(struct cairn_bd *bd, int32_t off, const uint8_t *src, int32_t len)
{
    static const uint8_t zeros[128] = {0}; /* initialised: C++ requires it of a const */
    int32_t got = cairn_seek(bd->fs, bd->fd, off, CAIRN_SEEK_SET);
    while (got >= 0 && len > 0) {
        int32_t n = src != NULL || len < (int32_t)sizeof zeros ? len : (int32_t)sizeof zeros;
        got = cairn_write(bd->fs, bd->fd, src != NULL ? src : zeros, n);
        if (got == 0)
            got = CAIRN_ERR_IO; /* no progress: never loop for ever */
        if (got > 0) {
            len -= got;
            if (src != NULL)
                src += got;
        }
    }
    return got < 0 ? got : 0;
}

int cairn_bd_write(struct cairn_bd *bd, uint32_t sector, const void *buf, uint32_t count)
{
    int32_t off, len;
    int err = bd_range(bd, sector, count, &off, &len);
    if (!err && buf == NULL && count > 0)
        err = CAIRN_ERR_INVAL;
    if (!err)
        err = cn_fs_ready(bd->fs, 1);
    if (err || count == 0)
        return err;
    return write_at(bd, off, (const uint8_t *)buf, len);
}

/* Trim's partial pages: bytes [a, b) of one page become zeros. A page that is
 * a hole (not mapped, not buffered) reads as zeros already. */
/* 0 when file page `page` is mapped, or an error (CAIRN_ERR_NOENT: a hole).
 * Out of line: the lookup's locals stay out of zero_part's frame. */
CN_NOINLINE static int page_mapped(cairn *fs, uint32_t id, uint32_t page)
{
    struct cn_ext e;
    return cn_extent_lookup(fs, id, page, &e);
}

CN_NOINLINE static int zero_part(struct cairn_bd *bd, struct cn_file *f, uint32_t a, uint32_t b)
{
    cairn *fs = bd->fs;
    uint32_t page = a / fs->page_size;
    int err;
    if (a >= b)
        return 0;
    if (f->buf_page != page) {
        err = page_mapped(fs, f->id, page);
        if (err)
            return err == CAIRN_ERR_NOENT ? 0 : err;
    }
    return write_at(bd, (int32_t)a, NULL, (int32_t)(b - a));
}

/* The first mapped run of file pages inside [from, to): [*a, *b). */
CN_NOINLINE static int next_mapped(cairn *fs, uint32_t id, uint32_t from, uint32_t to,
                                   uint32_t *a, uint32_t *b)
{
    struct cn_ext e;
    uint32_t s, n;
    int err = cn_extent_lookup(fs, id, from, &e);
    if (err == CAIRN_ERR_NOENT) /* from is in a hole: the next extent after it */
        err = cn_extent_find(fs, id, from, 0, &e);
    if (err)
        return err;
    s = e.start;
    n = e.count;
    if (s >= to)
        return CAIRN_ERR_NOENT;
    *a = s > from ? s : from;
    *b = s + n < to ? s + n : to;
    return 0;
}

/* Whole pages [p0, p1) leave the file's map: one PUNCH record per mapped run,
 * so each record does bounded work and holes cost nothing. */
CN_NOINLINE static int punch_pages(cairn *fs, struct cn_file *f, uint32_t p0, uint32_t p1)
{
    uint8_t rec[12];
    uint32_t a, b;
    int err = cn_settle(fs, 1);
    if (!err)
        err = cn_file_flush(fs, f); /* the journal keeps the order of writes */
    if (err)
        return err;
    if (f->buf_page != CN_NONE && f->buf_page >= p0 && f->buf_page < p1) {
        f->buf_page = CN_NONE; /* it would serve the old bytes */
        f->tail_phys = CN_NONE; /* a NOR tail there is dead: never append into it */
    }
    while (p0 < p1) {
        err = next_mapped(fs, f->id, p0, p1, &a, &b);
        if (err)
            return err == CAIRN_ERR_NOENT ? 0 : err;
        cn_put32(rec, f->id);
        cn_put32(rec + 4, a);
        cn_put32(rec + 8, b - a);
        err = cn_settle(fs, 0);
        if (!err)
            err = cn_record(fs, CN_R_PUNCH, rec, sizeof rec);
        if (err)
            return err;
        p0 = b;
    }
    return 0;
}

int cairn_bd_trim(struct cairn_bd *bd, uint32_t sector, uint32_t count)
{
    struct cn_file *f;
    uint32_t ps, a, b, p0, p1;
    int32_t off, len;
    int err = bd_range(bd, sector, count, &off, &len);
    if (!err)
        err = cn_fs_ready(bd->fs, 1);
    if (err || count == 0)
        return err;
    f = bd_file(bd);
    if (f == NULL)
        return CAIRN_ERR_BADF;
    ps = bd->fs->page_size;
    a = (uint32_t)off;
    b = a + (uint32_t)len;
    p0 = (a + ps - 1u) / ps;
    /* the file's last page counts as whole when the range reaches the end */
    p1 = (int64_t)b >= (int64_t)f->size ? (b + ps - 1u) / ps : b / ps;
    if (p0 > p1) /* inside one page */
        return zero_part(bd, f, a, b);
    /* the ends: parts of the pages before p0 and from p1 (zero_part works
     * on one page, and the range may end in the page after p0's) */
    err = zero_part(bd, f, a, p0 * ps < b ? p0 * ps : b);
    if (!err && p1 * ps < b)
        err = zero_part(bd, f, p1 * ps, b);
    if (!err && p0 < p1)
        err = punch_pages(bd->fs, f, p0, p1);
    return err;
}

int cairn_bd_sync(struct cairn_bd *bd)
{
    if (bd == NULL)
        return CAIRN_ERR_INVAL;
    if (bd->fs == NULL || bd->fd < 0)
        return CAIRN_ERR_BADF;
    return cairn_file_sync(bd->fs, bd->fd);
}

int cairn_bd_close(struct cairn_bd *bd)
{
    int err;
    if (bd == NULL)
        return CAIRN_ERR_INVAL;
    if (bd->fs == NULL || bd->fd < 0)
        return CAIRN_ERR_BADF;
    err = cairn_close(bd->fs, bd->fd);
    if (err == CAIRN_ERR_NOSPC)
        return err; /* as cairn_close: the array stays open with its data */
    bd->fs = NULL;
    bd->fd = -1;
    return err;
}

#else /* CAIRN_NO_BD */

int cairn_bd_open(cairn *fs, struct cairn_bd *bd, const char *path, uint32_t sector_size,
                  uint32_t sector_count)
{
    (void)fs;
    (void)bd;
    (void)path;
    (void)sector_size;
    (void)sector_count;
    return CAIRN_ERR_INVAL;
}

int cairn_bd_read(struct cairn_bd *bd, uint32_t sector, void *buf, uint32_t count)
{
    (void)bd;
    (void)sector;
    (void)buf;
    (void)count;
    return CAIRN_ERR_INVAL;
}

int cairn_bd_write(struct cairn_bd *bd, uint32_t sector, const void *buf, uint32_t count)
{
    (void)bd;
    (void)sector;
    (void)buf;
    (void)count;
    return CAIRN_ERR_INVAL;
}

int cairn_bd_trim(struct cairn_bd *bd, uint32_t sector, uint32_t count)
{
    (void)bd;
    (void)sector;
    (void)count;
    return CAIRN_ERR_INVAL;
}

int cairn_bd_sync(struct cairn_bd *bd)
{
    (void)bd;
    return CAIRN_ERR_INVAL;
}

int cairn_bd_close(struct cairn_bd *bd)
{
    (void)bd;
    return CAIRN_ERR_INVAL;
}

#endif /* CAIRN_NO_BD */
