#include "tsupport.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- checks ---- */
static unsigned long t_max_printed(void)
{
    static unsigned long v;
    if (!v)
        v = (unsigned long)t_env_u64("CAIRN_TEST_MAXFAIL", 100);
    return v ? v : 100;
}
#define T_MAX_PRINTED t_max_printed()

unsigned long tc_pass, tc_fail;
const char *t_name = "test";

void t_begin(const char *name)
{
    t_name = name;
    setvbuf(stdout, NULL, _IOLBF, 0);
}

static void tc_vfail(const char *file, int line, const char *cond, const char *fmt,
                     va_list ap)
{
    tc_fail++;
    if (tc_fail > T_MAX_PRINTED) {
        if (tc_fail == T_MAX_PRINTED + 1)
            printf("  (further failures are counted, not printed)\n");
        return;
    }
    printf("FAIL %s:%d: %s: ", file, line, cond);
    vprintf(fmt, ap);
    printf("\n");
}

void tc_failed(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tc_vfail(file, line, cond, fmt, ap);
    va_end(ap);
}

void tc_failed_eq(const char *file, int line, const char *cond, long long a,
                  long long b, const char *fmt, ...)
{
    va_list ap;
    if (tc_fail < T_MAX_PRINTED)
        printf("  (%lld != %lld)\n", a, b);
    va_start(ap, fmt);
    tc_vfail(file, line, cond, fmt, ap);
    va_end(ap);
}

int t_summary(const char *name)
{
    printf("%s: %lu passed, %lu failed\n", name, tc_pass, tc_fail);
    fflush(stdout);
    return tc_fail ? 1 : 0;
}

void t_fatal(const char *fmt, ...)
{
    va_list ap;
    printf("FATAL: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    tc_fail++;
    t_summary(t_name);
    exit(1);
}

/* ---- environment ---- */
uint64_t t_env_u64(const char *name, uint64_t def)
{
    const char *s = getenv(name);
    char *end;
    unsigned long long v;
    if (!s || !*s)
        return def;
    v = strtoull(s, &end, 0);
    if (*end)
        return def;
    return (uint64_t)v;
}

uint32_t t_scale(void)
{
    uint64_t v = t_env_u64("CAIRN_TEST_SCALE", 1);
    if (v < 1)
        v = 1;
    if (v > 100000)
        v = 100000;
    return (uint32_t)v;
}

/* ---- random ---- */
uint64_t t_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t t_randn(uint64_t *state, uint32_t n)
{
    return n ? (uint32_t)(t_rand(state) % n) : 0;
}

void t_pattern(uint8_t *buf, size_t len, uint64_t seed)
{
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
    size_t i = 0;
    while (i < len) {
        uint64_t r = t_rand(&s);
        int k;
        for (k = 0; k < 8 && i < len; k++, i++)
            buf[i] = (uint8_t)(r >> (8 * k));
    }
}

/* ---- simulated volumes ---- */
const char *const t_medium_name[T_NMEDIA] = {"nor", "nand", "block", "nand-b4"};

csim *t_sim_model(const char *model, uint32_t block_count,
                  uint32_t blocks_per_lblock, uint64_t seed)
{
    struct csim_options opt;
    csim *sim;
    memset(&opt, 0, sizeof opt);
    opt.seed = seed;
    opt.block_count = block_count;
    opt.blocks_per_lblock = blocks_per_lblock;
    sim = csim_new(model, &opt);
    if (!sim)
        t_fatal("csim_new(%s, blocks %u, per lblock %u): %s", model,
                (unsigned)block_count, (unsigned)blocks_per_lblock, csim_error());
    return sim;
}

csim *t_sim_new(int medium, uint64_t seed)
{
    if (medium == T_NOR)
        return t_sim_model("nor-w25q128", 256, 8, seed);
    if (medium == T_NAND)
        return t_sim_model("nand-dhara", 64, 1, seed);
    if (medium == T_NAND_B4)
        return t_sim_model("nand-dhara", 128, 4, seed);
    {
        struct cairn_geometry geo, g2;
        struct csim_cost cost;
        struct csim_ftl ftl, f2;
        struct csim_options opt;
        csim *sim;
        memset(&cost, 0, sizeof cost);
        if (csim_model_info("sd-tf", &g2, &cost, &f2) != 0)
            memset(&cost, 0, sizeof cost);
        memset(&geo, 0, sizeof geo);
        geo.page_size = 512;
        geo.spare_size = 0;
        geo.pages_per_block = 64;
        geo.block_count = 64;
        geo.medium = CAIRN_MEDIUM_BLOCK;
        geo.write_unit = 4096;
        geo.blocks_per_lblock = 1;
        ftl.au_bytes = 32768;
        ftl.flash_page_bytes = 4096;
        ftl.open_aus = 4;
        memset(&opt, 0, sizeof opt);
        opt.seed = seed;
        sim = csim_new_custom(&geo, &cost, &ftl, &opt);
        if (!sim)
            t_fatal("csim_new_custom(block): %s", csim_error());
        return sim;
    }
}

/* ---- file system set-up ---- */
void t_fs_init(struct tfs *t, csim *sim, int own_mem)
{
    memset(t, 0, sizeof *t);
    t->sim = sim;
    t->cfg.dev = csim_dev(sim);
    t->fs = (cairn *)malloc(cairn_context_size());
    if (!t->fs)
        t_fatal("out of memory");
    memset(t->fs, 0, cairn_context_size());
    if (own_mem) {
        uint32_t n = cairn_mem_size(&t->cfg);
        if (n == 0)
            t_fatal("cairn_mem_size returned 0 for the default config");
        t->mem = malloc(n);
        if (!t->mem)
            t_fatal("out of memory");
        t->cfg.mem = t->mem;
        t->cfg.mem_size = n;
    }
}

void t_fs_format_mount(struct tfs *t)
{
    int rc = cairn_format(t->fs, &t->cfg);
    if (rc != 0)
        t_fatal("cairn_format: %d %s", rc, t_errname(rc));
    rc = t_fs_mount(t);
    if (rc != 0)
        t_fatal("cairn_mount after format: %d %s", rc, t_errname(rc));
}

int t_fs_mount(struct tfs *t)
{
    int rc = cairn_mount(t->fs, &t->cfg);
    t->mounted = rc == 0;
    return rc;
}

int t_fs_unmount(struct tfs *t)
{
    int rc = cairn_unmount(t->fs);
    t->mounted = 0;
    return rc;
}

void t_fs_abandon(struct tfs *t) { t->mounted = 0; }

static void t_report_problem(void *arg, const char *problem)
{
    printf("  check [%s]: %s\n", (const char *)arg, problem);
}

int t_fs_check(struct tfs *t, const char *label)
{
    struct cairn_check_report rep;
    int rc;
    memset(&rep, 0, sizeof rep);
    rc = cairn_check(t->fs, &rep, t_report_problem, (void *)label);
    if (rc != 0)
        printf("  cairn_check [%s] = %d %s, errors %u\n", label, rc, t_errname(rc),
               (unsigned)rep.errors);
    return rc;
}

int t_fs_remount(struct tfs *t, const char *label)
{
    int rc = t_fs_unmount(t), bad = 0;
    CHECK(rc == 0, "[%s] unmount: %d %s", label, rc, t_errname(rc));
    bad |= rc != 0;
    rc = t_fs_mount(t);
    CHECK(rc == 0, "[%s] mount: %d %s", label, rc, t_errname(rc));
    if (rc != 0)
        return 1;
    rc = t_fs_check(t, label);
    CHECK(rc == 0, "[%s] cairn_check after mount: %d %s", label, rc, t_errname(rc));
    return bad || rc != 0;
}

int t_fs_no_violations(struct tfs *t, const char *label)
{
    struct csim_counters c;
    csim_counters(t->sim, &c);
    CHECK(c.violations == 0, "[%s] the simulator recorded %llu rule violations, the last: %s",
          label, (unsigned long long)c.violations, csim_last_violation(t->sim));
    return c.violations != 0;
}

void t_fs_free(struct tfs *t)
{
    if (t->mounted)
        t_fs_unmount(t);
    if (t->sim && !t->allow_violations)
        t_fs_no_violations(t, t_name);
    free(t->fs);
    free(t->mem);
    if (t->sim)
        csim_free(t->sim);
    memset(t, 0, sizeof *t);
}

/* ---- images ---- */

void t_image_take(struct t_image *im, csim *sim)
{
    const struct cairn_geometry *g = csim_geometry(sim);
    uint32_t total = g->pages_per_block * g->block_count, p, i, cap = 0;
    uint8_t *buf = (uint8_t *)malloc(g->page_size + g->spare_size + 1);
    memset(im, 0, sizeof *im);
    im->psize = g->page_size;
    im->ssize = g->spare_size;
    im->npages = total;
    for (p = 0; p < total; p++) {
        int blank = 1;
        csim_peek(sim, p, buf, im->ssize ? buf + im->psize : NULL);
        for (i = 0; i < im->psize + im->ssize && blank; i++)
            blank = buf[i] == 0xFF;
        if (blank)
            continue;
        if (im->n == cap) { /* doubling: a realloc per page was quadratic under ASan */
            cap = cap ? 2 * cap : 64;
            im->pages = (uint32_t *)realloc(im->pages, cap * sizeof *im->pages);
            im->data = (uint8_t *)realloc(im->data, (size_t)cap * (im->psize + im->ssize));
            if (!im->pages || !im->data)
                t_fatal("out of memory");
        }
        im->pages[im->n] = p;
        memcpy(im->data + (size_t)im->n * (im->psize + im->ssize), buf, im->psize + im->ssize);
        im->n++;
    }
    free(buf);
}

void t_image_put(const struct t_image *im, csim *sim)
{
    uint32_t i;
    for (i = 0; i < im->n; i++) {
        const uint8_t *d = im->data + (size_t)i * (im->psize + im->ssize);
        csim_poke(sim, im->pages[i], d, im->ssize ? d + im->psize : NULL);
    }
}

void t_image_free(struct t_image *im)
{
    free(im->pages);
    free(im->data);
    memset(im, 0, sizeof *im);
}

/* ---- helpers ---- */
int t_is_err(long rc) { return rc <= CAIRN_ERR_IO && rc >= CAIRN_ERR_FBIG; }

const char *t_errname(long rc)
{
    const char *s;
    if (rc >= 0)
        return "OK";
    if (!t_is_err(rc))
        return "?(not a cairn_err)";
    s = cairn_errname((int)rc);
    return s ? s : "?";
}

int t_read_file(cairn *fs, const char *path, uint8_t **buf, int32_t *len)
{
    int fd = cairn_open(fs, path, CAIRN_O_RDONLY);
    int32_t size, got = 0, n;
    uint8_t *b;
    *buf = NULL;
    *len = 0;
    if (fd < 0)
        return fd;
    size = cairn_size(fs, fd);
    if (size < 0) {
        cairn_close(fs, fd);
        return (int)size;
    }
    b = (uint8_t *)malloc((size_t)size + 1);
    if (!b)
        t_fatal("out of memory");
    while (got < size) {
        int32_t want = size - got > 65536 ? 65536 : size - got;
        n = cairn_read(fs, fd, b + got, want);
        if (n < 0) {
            free(b);
            cairn_close(fs, fd);
            return (int)n;
        }
        if (n == 0)
            break;
        got += n;
    }
    /* A read at the end returns 0. */
    if (got == size) {
        uint8_t extra;
        n = cairn_read(fs, fd, &extra, 1);
        if (n != 0) {
            printf("  read past the end of %s (size %ld) returned %ld\n", path,
                   (long)size, (long)n);
            got = -1;
        }
    }
    cairn_close(fs, fd);
    if (got != size) {
        free(b);
        return got < 0 ? CAIRN_ERR_CORRUPT : CAIRN_ERR_IO;
    }
    *buf = b;
    *len = size;
    return 0;
}

int t_write_file(cairn *fs, const char *path, const void *data, int32_t len)
{
    int fd = cairn_open(fs, path, CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_TRUNC);
    int32_t n;
    int rc;
    if (fd < 0)
        return fd;
    n = len ? cairn_write(fs, fd, data, len) : 0;
    rc = cairn_close(fs, fd);
    if (n < 0)
        return (int)n;
    if (n != len)
        return CAIRN_ERR_IO;
    return rc;
}

void t_print_diff(const uint8_t *a, int32_t alen, const uint8_t *b, int32_t blen)
{
    int32_t i, n = alen < blen ? alen : blen, s;
    for (i = 0; i < n && a[i] == b[i]; i++)
        ;
    printf("    lengths %ld / %ld, first difference at %ld\n", (long)alen, (long)blen,
           (long)i);
    s = i >= 8 ? i - 8 : 0;
    printf("    got:");
    for (n = s; n < s + 16 && n < alen; n++)
        printf(" %02x", a[n]);
    printf("\n    exp:");
    for (n = s; n < s + 16 && n < blen; n++)
        printf(" %02x", b[n]);
    printf("\n");
}

int t_check_file(cairn *fs, const char *path, const void *data, int32_t len,
                 const char *label)
{
    uint8_t *buf;
    int32_t n;
    int rc = t_read_file(fs, path, &buf, &n), ok;
    CHECK(rc == 0, "[%s] read %s: %d %s", label, path, rc, t_errname(rc));
    if (rc != 0)
        return 0;
    ok = n == len && (len == 0 || memcmp(buf, data, (size_t)len) == 0);
    CHECK(ok, "[%s] content of %s", label, path);
    if (!ok)
        t_print_diff(buf, n, (const uint8_t *)data, len);
    free(buf);
    return ok;
}

struct t_dirent {
    char *name;
    struct cairn_info info;
};

int t_walk(cairn *fs, const char *path, t_walk_fn fn, void *arg)
{
    struct t_dirent *ents = NULL;
    size_t n = 0, cap = 0, i;
    struct cairn_info info;
    int dd = cairn_opendir(fs, path), rc = 0, r;
    if (dd < 0)
        return dd;
    while ((r = cairn_readdir(fs, dd, &info)) == 1) {
        if (strcmp(info.name, ".") == 0 || strcmp(info.name, "..") == 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            ents = (struct t_dirent *)realloc(ents, cap * sizeof *ents);
            if (!ents)
                t_fatal("out of memory");
        }
        ents[n].info = info;
        ents[n].name = NULL;
        n++;
        if (n > 1000000) {
            r = CAIRN_ERR_CORRUPT; /* a directory that never ends */
            break;
        }
    }
    if (r < 0)
        rc = r;
    r = cairn_closedir(fs, dd);
    if (rc == 0 && r < 0)
        rc = r;
    for (i = 0; i < n && rc == 0; i++) {
        size_t pl = strlen(path), nl = strlen(ents[i].info.name);
        char *full = (char *)malloc(pl + nl + 2);
        if (!full)
            t_fatal("out of memory");
        memcpy(full, path, pl);
        if (pl == 0 || path[pl - 1] != '/')
            full[pl++] = '/';
        memcpy(full + pl, ents[i].info.name, nl + 1);
        rc = fn(arg, full, &ents[i].info);
        if (rc == 0 && ents[i].info.type == CAIRN_TYPE_DIR)
            rc = t_walk(fs, full, fn, arg);
        free(full);
    }
    free(ents);
    return rc;
}
