/* Shared parts of the fuzz targets: see fuzz_util.h. */
#include "fuzz_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fz_fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fuzz: FAIL: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    abort();
}

/* ---- the device wrapper: counts every call, checks the geometry ---- */
static void count_op(struct fz_vol *v, const char *what)
{
    if (++v->ops > FZ_OP_LIMIT)
        fz_fail("hang: more than %u device operations (last: %s)", FZ_OP_LIMIT, what);
}

/* A device result, counted when it is a refusal (a hostile image can make
 * the core program a page it takes for erased that is not: NOR refuses). */
static int counted(struct fz_vol *v, int r)
{
    if (r < 0)
        v->dev_errors++;
    return r;
}

/* Bytes [page, off, len) must stay inside the device (NAND: inside the block). */
static void check_span(const struct fz_vol *v, const char *what, uint32_t page, uint32_t off,
                       uint32_t len)
{
    const struct cairn_geometry *g = &v->in->geo;
    uint64_t total = (uint64_t)g->pages_per_block * g->block_count;
    uint64_t end = total;
    if (g->medium == CAIRN_MEDIUM_NAND)
        end = ((uint64_t)page / g->pages_per_block + 1) * g->pages_per_block;
    if (page >= total || (uint64_t)page * g->page_size + off + len > end * g->page_size)
        fz_fail("%s outside the device: page %u off %u len %u", what, page, off, len);
}

static int w_read(void *ctx, uint32_t page, uint32_t off, void *buf, uint32_t len)
{
    struct fz_vol *v = (struct fz_vol *)ctx;
    count_op(v, "read");
    check_span(v, "read", page, off, len);
    return counted(v, v->in->read(v->in->ctx, page, off, buf, len));
}

static int w_read_spare(void *ctx, uint32_t page, void *buf, uint32_t len)
{
    struct fz_vol *v = (struct fz_vol *)ctx;
    count_op(v, "read_spare");
    if (page >= v->pages || len > v->in->geo.spare_size)
        fz_fail("read_spare outside the device: page %u len %u", page, len);
    return counted(v, v->in->read_spare(v->in->ctx, page, buf, len));
}

static int w_prog(void *ctx, uint32_t page, uint32_t off, const void *data, uint32_t len,
                  const void *spare, uint32_t spare_len)
{
    struct fz_vol *v = (struct fz_vol *)ctx;
    count_op(v, "prog");
    check_span(v, "prog", page, off, len);
    if (spare_len > v->in->geo.spare_size)
        fz_fail("prog: spare of %u bytes", spare_len);
    return counted(v, v->in->prog(v->in->ctx, page, off, data, len, spare, spare_len));
}

static int w_erase(void *ctx, uint32_t block)
{
    struct fz_vol *v = (struct fz_vol *)ctx;
    count_op(v, "erase");
    if (block >= v->in->geo.block_count)
        fz_fail("erase of block %u outside the device", block);
    return counted(v, v->in->erase(v->in->ctx, block));
}

static int w_is_bad(void *ctx, uint32_t block)
{
    struct fz_vol *v = (struct fz_vol *)ctx;
    count_op(v, "is_bad");
    if (block >= v->in->geo.block_count)
        fz_fail("is_bad of block %u outside the device", block);
    return v->in->is_bad(v->in->ctx, block);
}

static int w_mark_bad(void *ctx, uint32_t block)
{
    struct fz_vol *v = (struct fz_vol *)ctx;
    count_op(v, "mark_bad");
    if (block >= v->in->geo.block_count)
        fz_fail("mark_bad of block %u outside the device", block);
    return v->in->mark_bad(v->in->ctx, block);
}

static int w_sync(void *ctx)
{
    struct fz_vol *v = (struct fz_vol *)ctx;
    count_op(v, "sync");
    return v->in->sync ? v->in->sync(v->in->ctx) : 0;
}

/* ---- volumes ---- */
int fz_vol_new(struct fz_vol *v, int medium, uint64_t seed)
{
    struct cairn_geometry geo;
    struct csim_cost cost;
    struct csim_options opt;
    uint32_t n;
    memset(v, 0, sizeof *v);
    memset(&geo, 0, sizeof geo);
    memset(&cost, 0, sizeof cost);
    memset(&opt, 0, sizeof opt);
    if (medium == FZ_NAND) {
        geo.page_size = 512;
        geo.spare_size = 32;
        geo.pages_per_block = 32;
        geo.medium = CAIRN_MEDIUM_NAND;
        geo.max_partial_programs = 1;
    } else {
        geo.page_size = 256;
        geo.pages_per_block = 64;
        geo.medium = CAIRN_MEDIUM_NOR;
    }
    geo.block_count = 12;
    geo.blocks_per_lblock = 1;
    opt.seed = seed;
    v->sim = csim_new_custom(&geo, &cost, NULL, &opt);
    if (!v->sim)
        return -1;
    v->in = csim_dev(v->sim);
    v->wrap = *v->in;
    v->wrap.ctx = v;
    v->wrap.read = w_read;
    v->wrap.read_spare = v->in->read_spare ? w_read_spare : NULL;
    v->wrap.prog = w_prog;
    v->wrap.erase = w_erase;
    v->wrap.is_bad = v->in->is_bad ? w_is_bad : NULL;
    v->wrap.mark_bad = v->in->mark_bad ? w_mark_bad : NULL;
    v->wrap.sync = w_sync;
    v->page_bytes = geo.page_size + geo.spare_size;
    v->pages = geo.pages_per_block * geo.block_count;
    v->cfg.dev = &v->wrap;
    n = cairn_mem_size(&v->cfg);
    v->fs = (cairn *)malloc(cairn_context_size());
    v->mem = malloc(n);
    if (!v->fs || !v->mem || n == 0) {
        fz_vol_free(v);
        return -1;
    }
    v->cfg.mem = v->mem;
    v->cfg.mem_size = n;
    return 0;
}

void fz_vol_free(struct fz_vol *v)
{
    if (v->sim)
        csim_free(v->sim);
    free(v->fs);
    free(v->mem);
    memset(v, 0, sizeof *v);
}

/* ---- images ---- */
void fz_image_load(struct fz_vol *v, const uint8_t *data, size_t size)
{
    uint8_t *page = (uint8_t *)malloc(v->page_bytes);
    uint32_t ps = v->in->geo.page_size, ss = v->in->geo.spare_size;
    size_t pos = 0;
    if (!page)
        fz_fail("out of memory");
    while (pos + 4 <= size) {
        uint32_t pg = (uint32_t)(data[pos] | (data[pos + 1] << 8)) % v->pages;
        uint32_t len = (uint32_t)(data[pos + 2] | (data[pos + 3] << 8)) % (v->page_bytes + 1);
        pos += 4;
        if (len > size - pos)
            len = (uint32_t)(size - pos);
        csim_peek(v->sim, pg, page, ss ? page + ps : NULL);
        memcpy(page, data + pos, len);
        csim_poke(v->sim, pg, page, ss ? page + ps : NULL);
        pos += len;
    }
    free(page);
}

size_t fz_image_save(struct fz_vol *v, uint8_t *out, size_t cap)
{
    uint8_t *page = (uint8_t *)malloc(v->page_bytes);
    uint32_t ps = v->in->geo.page_size, ss = v->in->geo.spare_size, pg;
    size_t pos = 0;
    if (!page)
        fz_fail("out of memory");
    for (pg = 0; pg < v->pages; pg++) {
        uint32_t len = v->page_bytes;
        csim_peek(v->sim, pg, page, ss ? page + ps : NULL);
        while (len > 0 && page[len - 1] == 0xFF)
            len--;
        if (len == 0)
            continue;
        if (pos + 4 + len > cap) {
            free(page);
            return 0;
        }
        out[pos] = (uint8_t)pg;
        out[pos + 1] = (uint8_t)(pg >> 8);
        out[pos + 2] = (uint8_t)len;
        out[pos + 3] = (uint8_t)(len >> 8);
        memcpy(out + pos + 4, page, len);
        pos += 4 + len;
    }
    free(page);
    return pos;
}

void fz_check_rc(long rc, const char *what)
{
    if (rc < CAIRN_ERR_FBIG)
        fz_fail("%s returned %ld, not a cairn_err", what, rc);
}

/* ---- the fixed walk ---- */
#define WALK_ENTRIES 64 /* directory entries visited at most */
#define WALK_DIRS 16    /* directories listed at most */
#define PATH_CAP 600

struct walk {
    char dirs[WALK_DIRS][PATH_CAP];
    uint32_t ndirs;
    char files[8][PATH_CAP]; /* the first files found: targets of the writes */
    uint32_t nfiles;
    uint8_t buf[4096];
};

static void read_file(struct fz_vol *v, struct walk *w, const char *path)
{
    int fd = cairn_open(v->fs, path, CAIRN_O_RDONLY);
    int32_t got;
    uint32_t rounds = 0;
    struct cairn_info info;
    fz_check_rc(fd, "open");
    if (fd < 0)
        return;
    fz_check_rc(cairn_fstat(v->fs, fd, &info), "fstat");
    fz_check_rc(cairn_size(v->fs, fd), "size");
    do { /* a hostile size may be huge: read a bounded amount */
        got = cairn_read(v->fs, fd, w->buf, (int32_t)sizeof w->buf);
        fz_check_rc(got, "read");
    } while (got > 0 && ++rounds < 64);
    fz_check_rc(cairn_seek(v->fs, fd, 1000, CAIRN_SEEK_SET), "seek");
    fz_check_rc(cairn_read(v->fs, fd, w->buf, 700), "read");
    fz_check_rc(cairn_close(v->fs, fd), "close");
}

static void join(char *out, const char *dir, const char *name)
{
    if (strcmp(dir, "/") == 0)
        snprintf(out, PATH_CAP, "/%s", name);
    else
        snprintf(out, PATH_CAP, "%s/%s", dir, name);
}

/* Breadth-first over the directories, bounded by WALK_DIRS and WALK_ENTRIES. */
static void list_all(struct fz_vol *v, struct walk *w)
{
    uint32_t d, entries = 0;
    struct cairn_info info;
    char path[PATH_CAP];
    strcpy(w->dirs[0], "/");
    w->ndirs = 1;
    for (d = 0; d < w->ndirs && entries < WALK_ENTRIES; d++) {
        int dd = cairn_opendir(v->fs, w->dirs[d]), rc;
        fz_check_rc(dd, "opendir");
        if (dd < 0)
            continue;
        while (entries < WALK_ENTRIES && (rc = cairn_readdir(v->fs, dd, &info)) == 1) {
            entries++;
            if (strlen(info.name) > CAIRN_NAME_MAX)
                fz_fail("readdir: name of %zu bytes", strlen(info.name));
            join(path, w->dirs[d], info.name);
            fz_check_rc(cairn_stat(v->fs, path, &info), "stat");
            if (info.type == CAIRN_TYPE_DIR && w->ndirs < WALK_DIRS) {
                strcpy(w->dirs[w->ndirs++], path);
            } else if (info.type == CAIRN_TYPE_FILE) {
                read_file(v, w, path);
                if (w->nfiles < 8)
                    strcpy(w->files[w->nfiles++], path);
            }
        }
        fz_check_rc(rc, "readdir");
        fz_check_rc(cairn_rewinddir(v->fs, dd), "rewinddir");
        fz_check_rc(cairn_closedir(v->fs, dd), "closedir");
    }
}

static void write_some(struct fz_vol *v, struct walk *w)
{
    int fd;
    uint32_t i;
    memset(w->buf, 0x5A, sizeof w->buf);
    fd = cairn_open(v->fs, "/fz-new", CAIRN_O_RDWR | CAIRN_O_CREAT);
    fz_check_rc(fd, "open new");
    if (fd >= 0) {
        fz_check_rc(cairn_write(v->fs, fd, w->buf, 3000), "write");
        fz_check_rc(cairn_truncate(v->fs, fd, 700), "truncate");
        fz_check_rc(cairn_fallocate(v->fs, fd, 2048), "fallocate");
        fz_check_rc(cairn_write(v->fs, fd, w->buf, 900), "write");
        fz_check_rc(cairn_close(v->fs, fd), "close");
    }
    for (i = 0; i < w->nfiles; i++) {
        fd = cairn_open(v->fs, w->files[i], CAIRN_O_RDWR);
        fz_check_rc(fd, "open rdwr");
        if (fd < 0)
            continue;
        fz_check_rc(cairn_seek(v->fs, fd, 0, CAIRN_SEEK_END), "seek end");
        fz_check_rc(cairn_write(v->fs, fd, w->buf, 300), "append");
        if (i % 2 == 0)
            fz_check_rc(cairn_truncate(v->fs, fd, 100), "truncate");
        fz_check_rc(cairn_file_sync(v->fs, fd), "file_sync");
        fz_check_rc(cairn_close(v->fs, fd), "close");
    }
}

static void sector_io(struct fz_vol *v, const char *path)
{
    struct cairn_bd bd;
    uint8_t sec[512];
    int rc = cairn_bd_open(v->fs, &bd, path, 256, 16);
    fz_check_rc(rc, "bd_open");
    if (rc < 0)
        return;
    memset(sec, 0x33, sizeof sec);
    fz_check_rc(cairn_bd_read(&bd, 3, sec, 2), "bd_read");
    fz_check_rc(cairn_bd_write(&bd, 5, sec, 2), "bd_write");
    fz_check_rc(cairn_bd_trim(&bd, 0, 8), "bd_trim");
    fz_check_rc(cairn_bd_sync(&bd), "bd_sync");
    fz_check_rc(cairn_bd_close(&bd), "bd_close");
}

static void change_names(struct fz_vol *v, struct walk *w)
{
    uint8_t attr[CAIRN_ATTR_MAX];
    if (w->nfiles > 0) {
        fz_check_rc(cairn_setattr(v->fs, w->files[0], 7, "fz", 2), "setattr");
        fz_check_rc(cairn_getattr(v->fs, w->files[0], 7, attr, sizeof attr), "getattr");
        fz_check_rc(cairn_getattr(v->fs, w->files[0], 1, attr, sizeof attr), "getattr");
        fz_check_rc(cairn_remove(v->fs, w->files[0]), "remove");
    }
    if (w->nfiles > 1)
        fz_check_rc(cairn_rename(v->fs, w->files[1], "/fz-renamed"), "rename");
    if (w->nfiles > 2)
        sector_io(v, w->files[2]);
    if (w->ndirs > 1) {
        fz_check_rc(cairn_rename(v->fs, w->dirs[1], "/fz-dir2"), "rename dir");
        fz_check_rc(cairn_remove(v->fs, w->ndirs > 2 ? w->dirs[2] : "/fz-dir2"), "rmdir");
    }
    fz_check_rc(cairn_mkdir(v->fs, "/fz-dir"), "mkdir");
    fz_check_rc(cairn_rename(v->fs, "/fz-new", "/fz-dir/moved"), "rename");
    fz_check_rc(cairn_ring_create(v->fs, "/fz-ring", 1024), "ring_create");
    sector_io(v, "/fz-bd");
}

void fz_walk(struct fz_vol *v)
{
    struct walk *w = (struct walk *)calloc(1, sizeof *w);
    struct cairn_check_report rep;
    struct cairn_fsinfo info;
    int rc;
    if (!w)
        fz_fail("out of memory");
    rc = cairn_check(v->fs, &rep, NULL, NULL);
    fz_check_rc(rc, "check");
    /* IO from the first call after a mount that succeeded, with no device
     * operation refused, means the mount left a broken session (session
     * 39: an unwritten volume whose anchor was failing mounted, and every
     * call then answered IO, reads too). The simulator injects no faults,
     * but a hostile image can make a program land on a page that is not
     * erased, which the device refuses: that IO is the device's. */
    if (rc == CAIRN_ERR_IO && v->dev_errors == 0)
        fz_fail("the first call after a successful mount answered IO, no device error");
    /* Each node the check visits has a page of its own or a cache slot (at
     * most 64): more visits mean a walk that went round nodes whose children
     * are shared (regress/image/hang-check-shared-children; before
     * cn_tree_walk's bound about 84^4 visits). Counted, so a fast build
     * fails it as surely as the replay's alarm catches a slow one. */
    if (rep.nodes > v->pages + 64u)
        fz_fail("check visited %u nodes on a volume of %u pages", (unsigned)rep.nodes,
                (unsigned)v->pages);
    if (getenv("FZ_VERBOSE"))
        fprintf(stderr, "walk: check %s, %u problems, %u nodes, %u files\n", cairn_errname(rc),
                (unsigned)rep.errors, (unsigned)rep.nodes, (unsigned)rep.files);
    fz_check_rc(cairn_fs_stat(v->fs, &info), "fs_stat");
    list_all(v, w);
    write_some(v, w);
    change_names(v, w);
    fz_check_rc(cairn_gc(v->fs, 64), "gc");
    fz_check_rc(cairn_sync(v->fs), "sync");
    fz_check_rc(cairn_check(v->fs, &rep, NULL, NULL), "check");
    free(w);
}
