/* Raw image device: see imgdev.h. */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#define _DEFAULT_SOURCE

#include "imgdev.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
    uint8_t *p = (uint8_t *)buf;
    while (len > 0) {
        ssize_t n = pread(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) { /* past the end of the file: erased */
            memset(p, 0xFF, len);
            return 0;
        }
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
    const uint8_t *p = (const uint8_t *)buf;
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

uint64_t imgdev_bytes(const struct cairn_geometry *geo, uint32_t oob)
{
    return (uint64_t)geo->block_count * geo->pages_per_block * ((uint64_t)geo->page_size + oob);
}

/* Byte position in the file of byte `off` of page `page`'s data. */
static uint64_t data_pos(const struct imgdev *d, uint32_t page, uint32_t off)
{
    return d->offset + (uint64_t)page * d->stride + off;
}

static uint64_t spare_pos(const struct imgdev *d, uint32_t page)
{
    return d->offset + (uint64_t)page * d->stride + d->dev.geo.page_size + IMGDEV_MARKER_BYTES;
}

static uint32_t total_pages(const struct imgdev *d)
{
    return d->dev.geo.block_count * d->dev.geo.pages_per_block;
}

static void note(struct imgdev *d)
{
    if (d->on_io)
        d->on_io(d->on_io_arg);
}

static int rule(struct imgdev *d)
{
    d->rule_violations++;
    return CAIRN_DEV_RULE;
}

static int img_read(void *ctx, uint32_t page, uint32_t off, void *buf, uint32_t len)
{
    struct imgdev *d = (struct imgdev *)ctx;
    const struct cairn_geometry *g = &d->dev.geo;
    uint8_t *out = (uint8_t *)buf;
    uint64_t end;
    if (page >= total_pages(d) || off >= g->page_size || (len > 0 && buf == NULL))
        return rule(d);
    end = (uint64_t)page * g->page_size + off + len;
    if (end > (uint64_t)total_pages(d) * g->page_size)
        return rule(d);
    if (g->medium == CAIRN_MEDIUM_NAND &&
        end > ((uint64_t)page / g->pages_per_block + 1) * g->pages_per_block * g->page_size)
        return rule(d); /* NAND reads stop at the erase block */
    d->bytes_read += len;
    if (d->oob == 0) {
        if (pread_all(d->fd, out, len, data_pos(d, page, off)) < 0)
            return CAIRN_DEV_IO;
    } else {
        while (len > 0) {
            uint32_t n = g->page_size - off < len ? g->page_size - off : len;
            if (pread_all(d->fd, out, n, data_pos(d, page, off)) < 0)
                return CAIRN_DEV_IO;
            out += n;
            len -= n;
            page++;
            off = 0;
        }
    }
    note(d);
    return CAIRN_DEV_OK;
}

static int img_read_spare(void *ctx, uint32_t page, void *buf, uint32_t len)
{
    struct imgdev *d = (struct imgdev *)ctx;
    if (page >= total_pages(d) || len > d->dev.geo.spare_size || (len > 0 && buf == NULL))
        return rule(d);
    d->bytes_read += len;
    if (pread_all(d->fd, buf, len, spare_pos(d, page)) < 0)
        return CAIRN_DEV_IO;
    return CAIRN_DEV_OK;
}

/* NOR and NAND: may `len` bytes at `pos` be programmed with `data` (no bit
 * 0 -> 1)? 1 yes, 0 no, -1 on a read error. */
static int bits_fall(struct imgdev *d, uint64_t pos, const uint8_t *data, uint32_t len)
{
    uint8_t old[4096];
    while (len > 0) {
        uint32_t n = len < sizeof old ? len : (uint32_t)sizeof old, i;
        if (pread_all(d->fd, old, n, pos) < 0)
            return -1;
        for (i = 0; i < n; i++)
            if ((old[i] & data[i]) != data[i])
                return 0;
        data += n;
        pos += n;
        len -= n;
    }
    return 1;
}

static int img_prog(void *ctx, uint32_t page, uint32_t off, const void *data, uint32_t len,
                    const void *spare, uint32_t spare_len)
{
    struct imgdev *d = (struct imgdev *)ctx;
    const struct cairn_geometry *g = &d->dev.geo;
    const uint8_t *in = (const uint8_t *)data;
    uint32_t pages, i;
    int raw = g->medium != CAIRN_MEDIUM_BLOCK;
    if (d->read_only)
        return CAIRN_DEV_IO;
    if (page >= total_pages(d) || (len > 0 && data == NULL) || (spare_len > 0 && spare == NULL) ||
        spare_len > g->spare_size)
        return rule(d);
    if (off + (uint64_t)len <= g->page_size) {
        pages = 1;
    } else {
        if (off != 0 || len % g->page_size || spare != NULL)
            return rule(d);
        pages = len / g->page_size;
        if (page % g->pages_per_block + pages > g->pages_per_block)
            return rule(d);
    }
    if (g->medium == CAIRN_MEDIUM_BLOCK && (off != 0 || len == 0 || len % g->page_size))
        return rule(d);
    if (raw) { /* check everything before writing anything */
        for (i = 0; i < pages; i++) {
            uint32_t o = i == 0 ? off : 0, n = pages == 1 ? len : g->page_size;
            int r = bits_fall(d, data_pos(d, page + i, o), in + (size_t)i * g->page_size, n);
            if (r < 0)
                return CAIRN_DEV_IO;
            if (r == 0)
                return rule(d);
        }
        if (spare_len > 0) {
            int r = bits_fall(d, spare_pos(d, page), (const uint8_t *)spare, spare_len);
            if (r < 0)
                return CAIRN_DEV_IO;
            if (r == 0)
                return rule(d);
        }
    }
    if (d->oob == 0 || pages == 1) {
        if (len > 0 && pwrite_all(d->fd, in, len, data_pos(d, page, off)) < 0)
            return CAIRN_DEV_IO;
    } else {
        for (i = 0; i < pages; i++)
            if (pwrite_all(d->fd, in + (size_t)i * g->page_size, g->page_size,
                           data_pos(d, page + i, 0)) < 0)
                return CAIRN_DEV_IO;
    }
    if (spare_len > 0 && pwrite_all(d->fd, spare, spare_len, spare_pos(d, page)) < 0)
        return CAIRN_DEV_IO;
    d->bytes_written += (uint64_t)len + spare_len;
    note(d);
    return CAIRN_DEV_OK;
}

static int marked_bad(struct imgdev *d, uint32_t block, int *bad)
{
    uint8_t m;
    *bad = 0;
    if (d->dev.geo.medium != CAIRN_MEDIUM_NAND || d->oob == 0)
        return 0;
    if (pread_all(d->fd, &m, 1,
                  data_pos(d, block * d->dev.geo.pages_per_block, d->dev.geo.page_size)) < 0)
        return -1;
    *bad = m != 0xFF;
    return 0;
}

/* Erases one block: writes 0xFF (unless `force` is 0 and the block already
 * reads 0xFF: a card or file is not rewritten for nothing). */
static int erase_block(struct imgdev *d, uint32_t block, int force)
{
    uint64_t pos = d->offset + (uint64_t)block * d->dev.geo.pages_per_block * d->stride;
    size_t n = (size_t)d->dev.geo.pages_per_block * d->stride, i = 0;
    if (!force) {
        if (pread_all(d->fd, d->scratch, n, pos) < 0)
            return -1;
        d->bytes_read += n;
        for (i = 0; i < n; i++)
            if (d->scratch[i] != 0xFF)
                break;
    }
    if (i < n) {
        memset(d->scratch, 0xFF, n);
        if (pwrite_all(d->fd, d->scratch, n, pos) < 0)
            return -1;
        d->bytes_written += n;
    }
    return 0;
}

static int img_erase(void *ctx, uint32_t block)
{
    struct imgdev *d = (struct imgdev *)ctx;
    int bad;
    if (d->read_only)
        return CAIRN_DEV_IO;
    if (block >= d->dev.geo.block_count)
        return rule(d);
    if (marked_bad(d, block, &bad) < 0)
        return CAIRN_DEV_IO;
    if (bad) /* as MTD: a block marked bad is not erased (that would lose the mark) */
        return CAIRN_DEV_ERASE_FAIL;
    if (erase_block(d, block, 0) < 0)
        return CAIRN_DEV_IO;
    note(d);
    return CAIRN_DEV_OK;
}

static int img_is_bad(void *ctx, uint32_t block)
{
    struct imgdev *d = (struct imgdev *)ctx;
    int bad;
    if (block >= d->dev.geo.block_count)
        return rule(d);
    return marked_bad(d, block, &bad) < 0 ? CAIRN_DEV_IO : bad;
}

static int img_mark_bad(void *ctx, uint32_t block)
{
    struct imgdev *d = (struct imgdev *)ctx;
    static const uint8_t zero[IMGDEV_MARKER_BYTES] = {0};
    if (d->read_only)
        return CAIRN_DEV_IO;
    if (block >= d->dev.geo.block_count)
        return rule(d);
    if (pwrite_all(d->fd, zero, d->oob < IMGDEV_MARKER_BYTES ? d->oob : IMGDEV_MARKER_BYTES,
                   data_pos(d, block * d->dev.geo.pages_per_block, d->dev.geo.page_size)) < 0)
        return CAIRN_DEV_IO;
    return CAIRN_DEV_OK;
}

static int img_sync(void *ctx)
{
    struct imgdev *d = (struct imgdev *)ctx;
    if (d->read_only || d->no_sync)
        return CAIRN_DEV_OK;
    return fdatasync(d->fd) == 0 ? CAIRN_DEV_OK : CAIRN_DEV_IO;
}

int imgdev_init(struct imgdev *d, int fd, uint64_t offset, const struct cairn_geometry *geo,
                uint32_t oob, int read_only)
{
    uint64_t block_bytes;
    memset(d, 0, sizeof *d);
    if (geo->page_size == 0 || geo->pages_per_block == 0 || geo->block_count == 0 ||
        (geo->medium != CAIRN_MEDIUM_NAND && oob != 0))
        return -1;
    if ((uint64_t)geo->block_count * geo->pages_per_block > 0xFFFFFFFFu)
        return -1;
    block_bytes = (uint64_t)geo->pages_per_block * ((uint64_t)geo->page_size + oob);
    if (block_bytes > (1u << 30))
        return -1;
    d->scratch = (uint8_t *)malloc((size_t)block_bytes);
    if (d->scratch == NULL)
        return -1;
    d->fd = fd;
    d->offset = offset;
    d->oob = oob;
    d->stride = geo->page_size + oob;
    d->image_bytes = imgdev_bytes(geo, oob);
    d->read_only = read_only;
    d->dev.ctx = d;
    d->dev.geo = *geo;
    d->dev.geo.spare_size = oob > IMGDEV_MARKER_BYTES ? oob - IMGDEV_MARKER_BYTES : 0;
    d->dev.read = img_read;
    d->dev.read_spare = d->dev.geo.spare_size ? img_read_spare : NULL;
    d->dev.prog = img_prog;
    d->dev.erase = img_erase;
    if (geo->medium == CAIRN_MEDIUM_NAND && oob > 0) {
        d->dev.is_bad = img_is_bad;
        d->dev.mark_bad = img_mark_bad;
    }
    d->dev.sync = img_sync;
    return 0;
}

void imgdev_fini(struct imgdev *d)
{
    free(d->scratch);
    d->scratch = NULL;
}

int imgdev_erase_all(struct imgdev *d)
{
    uint32_t b;
    for (b = 0; b < d->dev.geo.block_count; b++) {
        if (erase_block(d, b, 1) < 0)
            return -1;
        note(d);
    }
    return 0;
}
