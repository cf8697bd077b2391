/* Volumes in image files and on block devices: see vol.h. */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#define _DEFAULT_SOURCE

#include "vol.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h> /* flock */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/fs.h> /* BLKGETSIZE64 */
#endif

static int fail(struct vol *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->err, sizeof v->err, fmt, ap);
    va_end(ap);
    return -1;
}

const char *vol_medium_name(uint32_t medium)
{
    switch (medium) {
    case CAIRN_MEDIUM_NOR: return "nor";
    case CAIRN_MEDIUM_NAND: return "nand";
    case CAIRN_MEDIUM_BLOCK: return "block";
    default: return "?";
    }
}

uint32_t vol_medium_parse(const char *s)
{
    if (strcmp(s, "nor") == 0)
        return CAIRN_MEDIUM_NOR;
    if (strcmp(s, "nand") == 0)
        return CAIRN_MEDIUM_NAND;
    if (strcmp(s, "block") == 0 || strcmp(s, "sd") == 0 || strcmp(s, "emmc") == 0)
        return CAIRN_MEDIUM_BLOCK;
    return 0;
}

uint64_t vol_bytes_read(const struct vol *v) { return v->img_ready ? v->img.bytes_read : 0; }
uint64_t vol_bytes_written(const struct vol *v) { return v->img_ready ? v->img.bytes_written : 0; }

static void reset(struct vol *v, const struct vol_opts *o)
{
    memset(v, 0, sizeof *v);
    v->fd = -1;
    v->o = *o;
}

static void forward_io(void *arg)
{
    struct vol *v = (struct vol *)arg;
    if (v->on_io)
        v->on_io(v->on_io_arg);
}

/* One writer or many readers: another cairn process (a mount, a put) on
 * the same image is refused rather than racing it. */
static int lock_target(struct vol *v, int read_only)
{
    if (flock(v->fd, (read_only ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0)
        return 0;
    if (errno == EWOULDBLOCK)
        return fail(v, "%s: in use by another process (a cairn command or mount)", v->o.path);
    return 0; /* a file system without locks: go on */
}

/* Opens the target; its size in v->target_bytes. */
static int open_target(struct vol *v, int create, int read_only)
{
    struct stat st;
    const char *path = v->o.path;
    int exists = stat(path, &st) == 0, flags;
    if (!exists && (errno != ENOENT || !create))
        return fail(v, "%s: %s", path, strerror(errno));
    if (exists && S_ISBLK(st.st_mode)) {
        v->block_device = 1;
        flags = read_only ? O_RDONLY : O_RDWR;
    } else if (exists && !S_ISREG(st.st_mode)) {
        return fail(v, "%s: not a regular file or a block device (MTD character devices are not "
                       "supported: use nanddump/nandwrite or flashcp with an image file)", path);
    } else if (create) { /* opened by vol_create once the geometry is known */
        v->target_bytes = exists ? (uint64_t)st.st_size : 0;
        return 0;
    } else {
        flags = read_only ? O_RDONLY : O_RDWR;
    }
    v->fd = open(path, flags | O_CLOEXEC, 0666);
    if (v->fd < 0)
        return fail(v, "%s: %s", path, strerror(errno));
    if (lock_target(v, read_only) < 0)
        return -1;
    if (v->block_device) {
#ifdef BLKGETSIZE64
        uint64_t bytes = 0;
        if (ioctl(v->fd, BLKGETSIZE64, &bytes) < 0)
            return fail(v, "%s: BLKGETSIZE64: %s", path, strerror(errno));
        v->target_bytes = bytes;
#else
        off_t end = lseek(v->fd, 0, SEEK_END);
        if (end < 0)
            return fail(v, "%s: %s", path, strerror(errno));
        v->target_bytes = (uint64_t)end;
#endif
    } else {
        if (fstat(v->fd, &st) < 0)
            return fail(v, "%s: %s", path, strerror(errno));
        v->target_bytes = (uint64_t)st.st_size;
    }
    return 0;
}

static int dummy_read(void *c, uint32_t p, uint32_t o, void *b, uint32_t l)
{
    (void)c, (void)p, (void)o, (void)b, (void)l;
    return CAIRN_DEV_IO;
}
static int dummy_prog(void *c, uint32_t p, uint32_t o, const void *d, uint32_t l, const void *s,
                      uint32_t sl)
{
    (void)c, (void)p, (void)o, (void)d, (void)l, (void)s, (void)sl;
    return CAIRN_DEV_IO;
}
static int dummy_erase(void *c, uint32_t b)
{
    (void)c, (void)b;
    return CAIRN_DEV_IO;
}

/* BLOCK: the write unit, halved until segments are whole units. */
static void fit_write_unit(struct cairn_geometry *g)
{
    uint64_t seg_bytes = (uint64_t)g->page_size * g->pages_per_block *
                         (g->blocks_per_lblock ? g->blocks_per_lblock : 1);
    if (g->medium != CAIRN_MEDIUM_BLOCK)
        return;
    while (g->write_unit > g->page_size && seg_bytes % g->write_unit)
        g->write_unit /= 2;
    if (g->write_unit <= g->page_size)
        g->write_unit = 0;
}

/* Why cairn would refuse this geometry (with the tool's mount
 * configuration), or NULL when it takes it. */
static const char *geometry_why(struct cairn_geometry *g, uint32_t oob, uint32_t model_write_unit)
{
    struct cairn_dev dev;
    struct cairn_config cfg;
    g->write_unit = model_write_unit;
    fit_write_unit(g);
    memset(&dev, 0, sizeof dev);
    memset(&cfg, 0, sizeof cfg);
    dev.geo = *g;
    dev.geo.spare_size = oob > IMGDEV_MARKER_BYTES ? oob - IMGDEV_MARKER_BYTES : 0;
    dev.read = dummy_read;
    dev.prog = dummy_prog;
    dev.erase = dummy_erase;
    cfg.dev = &dev;
    return cairn_config_why(&cfg);
}

static int geometry_ok(struct cairn_geometry *g, uint32_t oob, uint32_t model_write_unit)
{
    return geometry_why(g, oob, model_write_unit) == NULL;
}

/* No power of two divides the volume into segments cairn accepts (e.g. 361
 * NAND blocks = 19 x 19): the fewest blocks a segment it accepts, the volume
 * cut to whole segments (the blocks past the last one would be unused on the
 * device too, as cairn's zero config leaves them). 0 when one is found. */
static int whole_segments(struct cairn_geometry *g, uint32_t oob, uint32_t model_write_unit)
{
    uint32_t bpl, all = g->block_count;
    for (bpl = 1; bpl <= all / 11u && bpl < 1024u; bpl++) {
        g->blocks_per_lblock = bpl;
        g->block_count = all - all % bpl;
        if (geometry_ok(g, oob, model_write_unit))
            return 0;
    }
    g->block_count = all;
    return -1;
}

static const char *default_model(uint32_t medium)
{
    switch (medium) {
    case CAIRN_MEDIUM_NAND: return "nand-dhara";
    case CAIRN_MEDIUM_BLOCK: return "sd-tf";
    default: return "nor-m25p16";
    }
}

/* The geometry of a new image from the flags (docs/TOOL.md, "Geometry"). */
static int geometry_from_opts(struct vol *v, struct cairn_geometry *g, uint32_t *oob)
{
    const struct vol_opts *o = &v->o;
    const char *model = o->model;
    struct csim_cost cost;
    struct csim_ftl ftl;
    uint64_t block_bytes, size;
    uint32_t bpl, wu;
    if (model == NULL) {
        if (o->medium == 0 && !v->block_device)
            return fail(v, "no geometry: give --model NAME (nor-m25p16, nor-w25q128, nand-dhara, "
                           "nand-jffs2, sd-tf) or --medium nor|nand|block with --size");
        model = default_model(o->medium ? o->medium : CAIRN_MEDIUM_BLOCK);
    }
    if (csim_model_info(model, g, &cost, &ftl) < 0)
        return fail(v, "unknown model '%s' (nor-m25p16, nor-w25q128, nand-dhara, nand-jffs2, "
                       "sd-tf)", model);
    if (o->medium && o->model && o->medium != g->medium)
        return fail(v, "--medium %s contradicts --model %s (a %s model)",
                    vol_medium_name(o->medium), o->model, vol_medium_name(g->medium));
    block_bytes = (uint64_t)g->page_size * g->pages_per_block;
    wu = g->write_unit;
    if (o->page)
        g->page_size = o->page;
    if (o->block)
        block_bytes = o->block;
    if (block_bytes % g->page_size || block_bytes / g->page_size == 0 ||
        block_bytes / g->page_size > 65535)
        return fail(v, "the erase block (%llu bytes) must be a whole number of pages (%u bytes), "
                       "at most 65535 of them", (unsigned long long)block_bytes,
                    (unsigned)g->page_size);
    g->pages_per_block = (uint32_t)(block_bytes / g->page_size);
    *oob = 0;
    if (g->medium == CAIRN_MEDIUM_NAND)
        *oob = o->have_spare ? o->spare : g->page_size / 32u;
    else if (o->have_spare && o->spare)
        return fail(v, "--spare is for NAND images (OOB bytes per page)");
    size = (uint64_t)g->block_count * block_bytes;
    if (o->size) {
        size = o->size;
        if (size % block_bytes)
            return fail(v, "--size %llu is not a whole number of erase blocks (%llu bytes)",
                        (unsigned long long)size, (unsigned long long)block_bytes);
    } else if (v->block_device) {
        if (v->target_bytes <= o->offset)
            return fail(v, "%s: --offset %llu is past the device's end", o->path,
                        (unsigned long long)o->offset);
        size = (v->target_bytes - o->offset) / (g->page_size + *oob) * g->page_size;
        size -= size % block_bytes;
    }
    if (size / block_bytes == 0 || size / block_bytes > 0xFFFFFFFFu)
        return fail(v, "a volume of %llu bytes: no whole erase block, or too many",
                    (unsigned long long)size);
    g->block_count = (uint32_t)(size / block_bytes);
    /* the segment: the fewest erase blocks cairn accepts */
    g->blocks_per_lblock = o->lblock ? o->lblock : 1;
    while (!o->lblock && g->blocks_per_lblock < 1024 &&
           (g->block_count % g->blocks_per_lblock || !geometry_ok(g, *oob, wu)))
        g->blocks_per_lblock *= 2;
    if (!o->lblock && g->blocks_per_lblock >= 1024 && whole_segments(g, *oob, wu) != 0)
        g->blocks_per_lblock = 1; /* none fits: report the plain geometry */
    bpl = g->blocks_per_lblock;
    if (g->block_count % bpl)
        return fail(v, "cairn refuses this geometry: %u erase blocks are not a multiple of "
                       "--lblock %u", (unsigned)g->block_count, (unsigned)bpl);
    if (!geometry_ok(g, *oob, wu)) {
        const char *why;
        g->blocks_per_lblock = o->lblock; /* 0: cairn's own pick says why none fits */
        why = geometry_why(g, *oob, wu);
        g->blocks_per_lblock = bpl;
        return fail(v, "cairn refuses this geometry: %u erase blocks of %llu bytes (%u per "
                       "segment, %u-byte pages): %s. Try a larger --size or a different "
                       "--block/--lblock",
                    (unsigned)g->block_count, (unsigned long long)block_bytes, (unsigned)bpl,
                    (unsigned)g->page_size, why ? why : "refused");
    }
    return 0;
}

int vol_create(struct vol *v, const struct vol_opts *o)
{
    struct cairn_geometry g = {0};
    uint32_t oob = 0;
    uint64_t bytes;
    reset(v, o);
    if (open_target(v, 1, 0) < 0)
        return -1;
    if (geometry_from_opts(v, &g, &oob) < 0)
        return -1;
    bytes = imgdev_bytes(&g, oob);
    if (v->fd < 0) {
        v->fd = open(o->path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (v->fd < 0)
            return fail(v, "%s: %s", o->path, strerror(errno));
        if (lock_target(v, 0) < 0)
            return -1;
        if (o->offset == 0) { /* a new image: the file is exactly the volume */
            if (ftruncate(v->fd, 0) < 0)
                return fail(v, "%s: %s", o->path, strerror(errno));
            v->target_bytes = 0;
        }
    }
    if (v->block_device) {
        if (o->offset + bytes > v->target_bytes)
            return fail(v, "%s: the volume (%llu bytes at offset %llu) does not fit the device "
                           "(%llu bytes)", o->path, (unsigned long long)bytes,
                        (unsigned long long)o->offset, (unsigned long long)v->target_bytes);
    } else if (v->target_bytes < o->offset + bytes) {
        if (ftruncate(v->fd, (off_t)(o->offset + bytes)) < 0)
            return fail(v, "%s: %s", o->path, strerror(errno));
        v->target_bytes = o->offset + bytes;
    }
    if (imgdev_init(&v->img, v->fd, o->offset, &g, oob, 0) < 0)
        return fail(v, "out of memory (erase block of %llu bytes)",
                    (unsigned long long)g.pages_per_block * (g.page_size + oob));
    v->img_ready = 1;
    v->img.no_sync = o->no_sync;
    v->img.on_io = forward_io;
    v->img.on_io_arg = v;
    v->dev = &v->img.dev;
    v->oob = oob;
    /* a file holds no real bad blocks: its region starts erased (a device is
     * erased segment by segment by the format, its NAND marks kept) */
    if (!v->block_device && imgdev_erase_all(&v->img) < 0)
        return fail(v, "%s: %s", o->path, strerror(errno));
    return 0;
}

static int alloc_fs(struct vol *v)
{
    if (v->fs == NULL) {
        v->fs = (cairn *)calloc(1, cairn_context_size());
        if (v->fs == NULL)
            return fail(v, "out of memory");
    }
    return 0;
}

/* The node cache of the tool's mounts; a read-only mount whose replay of
 * the journal outgrows it (CAIRN_ERR_NOSPC: the nodes the records change
 * stay in the cache) tries again with twice as many, up to the most. */
#define VOL_CACHE_NODES 32u
#define VOL_CACHE_NODES_MOST 16384u

static void make_config(struct vol *v, int read_only, uint32_t cache_nodes)
{
    memset(&v->cfg, 0, sizeof v->cfg);
    v->cfg.dev = v->dev;
    v->cfg.node_size = v->node_size;
    v->cfg.cache_nodes = cache_nodes;
    v->cfg.max_open = v->o.max_open ? v->o.max_open : 8;
    v->cfg.read_only = (uint8_t)(read_only != 0);
}

static int cairn_fail(struct vol *v, const char *what, int err)
{
    const char *why = err == CAIRN_ERR_INVAL ? cairn_config_why(&v->cfg) : NULL;
    if (why)
        return fail(v, "%s: %s (%s: %s)", what, cairn_errname(err), cairn_strerror(err), why);
    return fail(v, "%s: %s (%s)", what, cairn_errname(err), cairn_strerror(err));
}

int vol_format(struct vol *v)
{
    int err;
    if (alloc_fs(v) < 0)
        return -1;
    make_config(v, 0, VOL_CACHE_NODES);
    err = cairn_format(v->fs, &v->cfg);
    if (err)
        return cairn_fail(v, "format", err);
    return 0;
}

static int read_image(void *arg, uint64_t pos, void *buf, size_t len)
{
    struct vol *v = (struct vol *)arg;
    uint8_t *p = (uint8_t *)buf;
    pos += v->o.offset;
    while (len > 0) {
        ssize_t n = pread(v->fd, p, len, (off_t)pos);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) {
            memset(p, 0xFF, len);
            break;
        }
        p += n;
        len -= (size_t)n;
        pos += (uint64_t)n;
    }
    return 0;
}

static int open_sim(struct vol *v, int read_only)
{
    struct csim_options so;
    const struct cairn_geometry *g;
    memset(&so, 0, sizeof so); /* v->fd stays open: it holds the lock */
    so.image_path = v->o.path;
    so.create = 0;
    v->sim = csim_new(NULL, &so);
    if (v->sim == NULL)
        return fail(v, "%s: simulator image: %s", v->o.path, csim_error());
    v->dev = csim_dev(v->sim);
    g = csim_geometry(v->sim);
    v->det.geo = *g;
    (void)read_only;
    return 0;
}

int vol_open(struct vol *v, const struct vol_opts *o, int read_only)
{
    struct detect_hints hints;
    struct ckpt ck;
    uint8_t magic[8];
    uint32_t seg_pages, seg_count;
    reset(v, o);
    v->read_only = read_only;
    if (open_target(v, 0, read_only) < 0)
        return -1;
    if (o->offset >= v->target_bytes)
        return fail(v, "%s: %s (%llu bytes) ends before --offset %llu", o->path,
                    v->block_device ? "the device" : "the file",
                    (unsigned long long)v->target_bytes, (unsigned long long)o->offset);
    if (o->offset == 0 && !v->block_device && read_image(v, 0, magic, 8) == 0 &&
        memcmp(magic, "CAIRNSIM", 8) == 0) {
        if (open_sim(v, read_only) < 0)
            return -1;
        seg_pages = v->det.geo.pages_per_block *
                    (v->det.geo.blocks_per_lblock ? v->det.geo.blocks_per_lblock : 1);
        seg_count = v->det.geo.block_count / (seg_pages / v->det.geo.pages_per_block);
        if (ckpt_find_newest(v->dev, seg_pages, seg_count, &ck, v->err, sizeof v->err) < 0)
            return -1;
        v->node_size = ck.h.node_size;
        ckpt_free(&ck);
        return 0;
    }
    memset(&hints, 0, sizeof hints);
    hints.medium = o->medium;
    if (o->model) {
        struct cairn_geometry mg;
        struct csim_cost cost;
        struct csim_ftl ftl;
        if (csim_model_info(o->model, &mg, &cost, &ftl) < 0)
            return fail(v, "unknown model '%s'", o->model);
        if (hints.medium && hints.medium != mg.medium)
            return fail(v, "--medium contradicts --model");
        hints.medium = mg.medium;
    }
    hints.page = o->page;
    hints.block = o->block;
    hints.size = o->size;
    hints.have_oob = o->have_spare;
    hints.oob = o->spare;
    hints.block_device = v->block_device;
    if (detect_geometry(read_image, v, v->target_bytes - o->offset, &hints, &v->det, NULL, NULL,
                        v->err, sizeof v->err) < 0) {
        char msg[sizeof v->err];
        snprintf(msg, sizeof msg, "%s", v->err);
        return fail(v, "%s: %s", o->path, msg);
    }
    v->detected = 1;
    v->oob = v->det.oob;
    if (imgdev_init(&v->img, v->fd, o->offset, &v->det.geo, v->det.oob, read_only) < 0)
        return fail(v, "out of memory");
    v->img_ready = 1;
    v->img.no_sync = o->no_sync;
    v->img.on_io = forward_io;
    v->img.on_io_arg = v;
    v->dev = &v->img.dev;
    v->node_size = v->det.hdr.node_size;
    return 0;
}

/* cairn_mount with cache_nodes slots; 0 in *mem when out of memory. */
static int mount_with(struct vol *v, int read_only, uint32_t cache_nodes, int *mem)
{
    make_config(v, read_only, cache_nodes);
    v->cfg.mem_size = cairn_mem_size(&v->cfg);
    *mem = 1;
    if (v->cfg.mem_size > 0) { /* (0: a config mount refuses, and says why) */
        free(v->mem);
        v->mem = malloc(v->cfg.mem_size); /* aligned for any type: 8 at least */
        *mem = v->mem != NULL;
        if (v->mem == NULL)
            return 0;
        v->cfg.mem = v->mem;
    }
    return cairn_mount(v->fs, &v->cfg);
}

int vol_mount(struct vol *v, int read_only)
{
    uint32_t cache = VOL_CACHE_NODES;
    int err, mem;
    if (alloc_fs(v) < 0)
        return -1;
    err = mount_with(v, read_only, cache, &mem);
    while (mem && err == CAIRN_ERR_NOSPC && read_only && cache < VOL_CACHE_NODES_MOST) {
        cache *= 2u;
        err = mount_with(v, read_only, cache, &mem);
    }
    if (!mem)
        return fail(v, "out of memory");
    if (err == CAIRN_ERR_ROFS && !read_only)
        return fail(v, "mount: %s (%s): the volume can no longer be written (a worn-out "
                       "chip); its files still read through a read-only mount",
                    cairn_errname(err), cairn_strerror(err));
    if (err)
        return cairn_fail(v, "mount", err);
    v->mounted = 1;
    v->read_only = read_only;
    return 0;
}

int vol_unmount(struct vol *v)
{
    int err;
    if (!v->mounted)
        return 0;
    err = cairn_unmount(v->fs);
    if (err == CAIRN_ERR_NOSPC)
        return cairn_fail(v, "unmount", err); /* still mounted (cairn.h) */
    v->mounted = 0;
    if (err)
        return cairn_fail(v, "unmount", err);
    return 0;
}

int vol_close(struct vol *v)
{
    int rc = 0;
    if (v->mounted && vol_unmount(v) < 0) {
        rc = -1;
        v->mounted = 0; /* given up: what was synced survives */
    }
    free(v->fs);
    v->fs = NULL;
    free(v->mem);
    v->mem = NULL;
    if (v->img_ready) {
        if (!v->read_only && !v->o.no_sync && v->fd >= 0 && fsync(v->fd) < 0 && rc == 0)
            rc = fail(v, "%s: %s", v->o.path, strerror(errno));
        imgdev_fini(&v->img);
        v->img_ready = 0;
    }
    if (v->sim) {
        if (!v->read_only && csim_save(v->sim) < 0 && rc == 0)
            rc = fail(v, "%s: %s", v->o.path, csim_error());
        csim_free(v->sim);
        v->sim = NULL;
    }
    if (v->fd >= 0 && close(v->fd) < 0 && rc == 0)
        rc = fail(v, "%s: %s", v->o.path, strerror(errno));
    v->fd = -1;
    return rc;
}
