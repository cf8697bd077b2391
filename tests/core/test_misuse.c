/*
 * test_misuse: the public API called the way a careless program calls it.
 * Random calls with arguments drawn half from sense and half from nonsense:
 * handles out of range, closed, of the other kind (a directory's as a
 * file's), NULL and over-long paths, "." and "..", NULL buffers, negative and
 * huge lengths, offsets and sizes, bad whence, flag words no one defines,
 * sector arrays of odd geometry. On volumes of each medium, empty or filled
 * to a few pages of NOSPC. Checked:
 *  - every result is a count or one of the CAIRN_ERR_ codes, never IO or
 *    CORRUPT (the device works, the volume is sound), and nothing crashes
 *    (the build runs under ASan and UBSan);
 *  - a call that fails for any reason but NOSPC changes nothing a stat sees
 *    (existence, type, size and id of ten paths);
 *  - cairn_check is clean every 500 calls, and after a remount;
 *  - after an unmount, 200 calls all fail (and a second unmount does); then
 *    half the time a read-only mount takes 300 calls and the device sees no
 *    program or erase.
 * Usage: test_misuse [seed] [runs]  (CAIRN_TEST_SEED; CAIRN_TEST_SCALE
 * multiplies the runs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsupport.h"

#define NPATHS 10
#define NFDS 8
#define NDDS 4
static const char *const paths[NPATHS] = {"/a", "/b", "/d", "/d/c", "/d/e",
                                          "/a/x", "", "/", "//d//c", "/d/"};

struct run {
    struct tfs t;
    uint64_t rng;
    int fds[NFDS], dds[NDDS];
    struct cairn_bd bds[2];
    int fill;           /* the run keeps the volume near NOSPC */
    const char *what;   /* the last call */
    long rc;            /* its result */
};

static char longname[400];
static uint8_t buf[9000];
static unsigned long ncalls, nerr[16];

static uint32_t R(struct run *r, uint32_t n) { return t_randn(&r->rng, n); }

static int any_fd(struct run *r)
{
    switch (R(r, 8)) {
    case 0: return -1;
    case 1: return (int)R(r, 12);
    case 2: return R(r, 4) ? r->fds[R(r, NFDS)] : 1 << 30;
    case 3: return R(r, 4) ? r->fds[R(r, NFDS)] : r->dds[R(r, NDDS)];
    default: return r->fds[R(r, NFDS)];
    }
}

static int any_dd(struct run *r)
{
    switch (R(r, 6)) {
    case 0: return -1;
    case 1: return (int)R(r, 12);
    case 2: return r->fds[R(r, NFDS)];
    default: return r->dds[R(r, NDDS)];
    }
}

static const char *any_path(struct run *r)
{
    switch (R(r, 12)) {
    case 0: return NULL;
    case 1: return longname;
    case 2: return "/d/../a";
    case 3: return "/./a";
    default: return paths[R(r, NPATHS)];
    }
}

static int32_t any_len(struct run *r)
{
    switch (R(r, 10)) {
    case 0: return -1;
    case 1: return INT32_MAX;
    case 2: return INT32_MIN;
    case 3: return 0;
    case 4: case 5: case 6: return (int32_t)R(r, sizeof buf);
    default: return (int32_t)R(r, 600);
    }
}

/* NULL sometimes, and always for a length the buffer does not have (the
 * caller's buffer is the caller's business) */
static void *any_buf(struct run *r, int32_t len)
{
    return R(r, 10) == 0 || len > (int32_t)sizeof buf ? NULL : buf;
}

static int any_flags(struct run *r)
{
    static const int f[] = {CAIRN_O_RDONLY, CAIRN_O_WRONLY, CAIRN_O_RDWR,
                            CAIRN_O_RDWR | CAIRN_O_CREAT,
                            CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_TRUNC,
                            CAIRN_O_RDWR | CAIRN_O_APPEND | CAIRN_O_CREAT,
                            CAIRN_O_CREAT | CAIRN_O_EXCL | CAIRN_O_RDWR, 0, 0x7fffffff, -1,
                            CAIRN_O_CREAT, CAIRN_O_TRUNC | CAIRN_O_RDONLY};
    return f[R(r, sizeof f / sizeof f[0])];
}

static void file_calls(struct run *r, int k)
{
    cairn *fs = r->t.fs;
    struct cairn_info in;
    int32_t len = any_len(r);
    switch (k) {
    case 0: r->what = "open"; r->rc = cairn_open(fs, any_path(r), any_flags(r)); break;
    case 1: r->what = "write";
        t_pattern(buf, sizeof buf, ncalls);
        r->rc = cairn_write(fs, any_fd(r), any_buf(r, len), len); break;
    case 2: r->what = "read"; r->rc = cairn_read(fs, any_fd(r), any_buf(r, len), len); break;
    case 3: r->what = "seek"; r->rc = cairn_seek(fs, any_fd(r), len, (int)R(r, 5) - 1); break;
    case 4: r->what = "truncate";
        r->rc = cairn_truncate(fs, any_fd(r), R(r, 3) ? (int32_t)R(r, 20000) : len); break;
    case 5: r->what = "close"; r->rc = cairn_close(fs, any_fd(r)); break;
    case 6: r->what = "discard"; r->rc = cairn_discard(fs, any_fd(r)); break;
    case 7: r->what = "fstat"; r->rc = cairn_fstat(fs, any_fd(r), R(r, 10) ? &in : NULL); break;
    case 8: r->what = "file_sync"; r->rc = cairn_file_sync(fs, any_fd(r)); break;
    case 9: r->what = "fallocate";
        r->rc = cairn_fallocate(fs, any_fd(r), R(r, 2) ? (int32_t)R(r, 40000) : len); break;
    case 10: r->what = "ring_capacity"; r->rc = cairn_ring_capacity(fs, any_fd(r)); break;
    case 11: r->what = "size";
        r->rc = R(r, 2) ? cairn_size(fs, any_fd(r)) : cairn_tell(fs, any_fd(r)); break;
    default: r->what = "open_id";
        r->rc = cairn_open_id(fs, R(r, 2) ? R(r, 40) : 0xFFFFFFFFu, any_flags(r)); break;
    }
    if ((k == 0 || k == 12) && r->rc >= 0)
        r->fds[R(r, NFDS)] = (int)r->rc;
}

static void tree_calls(struct run *r, int k)
{
    cairn *fs = r->t.fs;
    struct cairn_info in;
    uint8_t type = (uint8_t)R(r, 256);
    int32_t l = (int32_t)R(r, 600);
    switch (k) {
    case 0: r->what = "stat"; r->rc = cairn_stat(fs, any_path(r), R(r, 10) ? &in : NULL); break;
    case 1: r->what = "remove"; r->rc = cairn_remove(fs, any_path(r)); break;
    case 2: r->what = "rename"; r->rc = cairn_rename(fs, any_path(r), any_path(r)); break;
    case 3: r->what = "mkdir"; r->rc = cairn_mkdir(fs, any_path(r)); break;
    case 4: r->what = "ring_create";
        r->rc = cairn_ring_create(fs, any_path(r), R(r, 2) ? (int32_t)(R(r, 8) * 512) : any_len(r));
        break;
    case 5: r->what = "opendir"; r->rc = cairn_opendir(fs, any_path(r));
        if (r->rc >= 0)
            r->dds[R(r, NDDS)] = (int)r->rc;
        break;
    case 6: r->what = "readdir"; r->rc = cairn_readdir(fs, any_dd(r), R(r, 10) ? &in : NULL); break;
    case 7: r->what = "closedir";
        r->rc = R(r, 2) ? cairn_closedir(fs, any_dd(r)) : cairn_rewinddir(fs, any_dd(r)); break;
    case 8: r->what = "setattr";
        r->rc = cairn_setattr(fs, any_path(r), type, any_buf(r, l), (uint32_t)l); break;
    case 9: r->what = "getattr";
        r->rc = cairn_getattr(fs, any_path(r), type, any_buf(r, l), (uint32_t)l); break;
    default: r->what = "removeattr"; r->rc = cairn_removeattr(fs, any_path(r), type); break;
    }
}

static void volume_calls(struct run *r, int k)
{
    struct cairn_fsinfo fi;
    struct cairn_bd *b = &r->bds[R(r, 2)];
    uint32_t ss = R(r, 4) ? 512u : R(r, 5000), cnt = R(r, 4) ? 16u + R(r, 40) : R(r, 0x7FFFFFFF);
    uint32_t s = R(r, 60), c = R(r, 6);
    switch (k) {
    case 0: r->what = "sync"; r->rc = cairn_sync(r->t.fs); break;
    case 1: r->what = "gc"; r->rc = cairn_gc(r->t.fs, R(r, 3) ? R(r, 4) : 0xFFFFFFFFu); break;
    case 2: r->what = "fs_stat"; r->rc = cairn_fs_stat(r->t.fs, R(r, 10) ? &fi : NULL); break;
    case 3: r->what = "bd_open"; r->rc = cairn_bd_open(r->t.fs, b, any_path(r), ss, cnt); break;
    case 4: r->what = "bd_close"; r->rc = cairn_bd_close(b); break;
    case 5: r->what = "bd_write"; r->rc = cairn_bd_write(b, s, any_buf(r, 0), c); break;
    case 6: r->what = "bd_read"; r->rc = cairn_bd_read(b, s, any_buf(r, 0), c); break;
    default: r->what = "bd_trim"; r->rc = cairn_bd_trim(b, s, c); break;
    }
}

static void one_call(struct run *r)
{
    uint32_t k = R(r, 32);
    /* a filling run writes where others would remove, shrink or discard */
    if (r->fill && (k == 4 || k == 6 || k == 14) && R(r, 8))
        k = 1;
    if (k < 13)
        file_calls(r, (int)k);
    else if (k < 24)
        tree_calls(r, (int)k - 13);
    else
        volume_calls(r, (int)k - 24);
    ncalls++;
    CHECK(r->rc >= CAIRN_ERR_FBIG, "%s returned %ld", r->what, r->rc);
    CHECK(r->rc != CAIRN_ERR_IO && r->rc != CAIRN_ERR_CORRUPT, "call %lu, %s: %s", ncalls,
          r->what, t_errname(r->rc));
    if (r->rc < 0 && r->rc >= CAIRN_ERR_FBIG)
        nerr[-r->rc]++;
}

struct snap {
    int rc[NPATHS];
    struct cairn_info in[NPATHS];
};

static void snap_take(cairn *fs, struct snap *s)
{
    int i;
    memset(s, 0, sizeof *s);
    for (i = 0; i < NPATHS; i++)
        s->rc[i] = cairn_stat(fs, paths[i], &s->in[i]);
}

static void snap_same(struct run *r, const struct snap *a, const char *label)
{
    struct snap b;
    int i;
    snap_take(r->t.fs, &b);
    for (i = 0; i < NPATHS; i++)
        if (a->rc[i] != b.rc[i] || a->in[i].type != b.in[i].type ||
            a->in[i].size != b.in[i].size || a->in[i].id != b.in[i].id) {
            CHECK(0, "[%s] %s failed with %s and changed \"%s\": stat %d -> %d, size %ld -> %ld",
                  label, r->what, t_errname(r->rc), paths[i], a->rc[i], b.rc[i],
                  (long)a->in[i].size, (long)b.in[i].size);
            return;
        }
}

static void forget_handles(struct run *r)
{
    int i;
    for (i = 0; i < NFDS; i++)
        r->fds[i] = -1;
    for (i = 0; i < NDDS; i++)
        r->dds[i] = -1;
}

/* A big file that leaves a few pages to a hundred KiB free. */
static void fill(struct run *r)
{
    int fd = cairn_open(r->t.fs, "/big", CAIRN_O_RDWR | CAIRN_O_CREAT);
    int32_t w, total = 0, cut = (int32_t)R(r, 100000);
    do {
        w = cairn_write(r->t.fs, fd, buf, 8192);
        total += w > 0 ? w : 0;
    } while (w == 8192);
    CHECK(w >= 0 || w == CAIRN_ERR_NOSPC, "fill: %s", t_errname(w));
    CHECK(cairn_truncate(r->t.fs, fd, total > cut ? total - cut : 0) == 0, "fill: truncate");
    CHECK(cairn_close(r->t.fs, fd) == 0, "fill: close");
}

/* Unmounted: everything fails; then a read-only mount half the time. */
static void unmounted(struct run *r, const char *label)
{
    struct csim_counters c0, c1;
    int i, rc = cairn_unmount(r->t.fs);
    if (rc == CAIRN_ERR_NOSPC)
        return; /* still mounted: a handle holds unsynced data on a full volume */
    CHECK(rc == 0, "[%s] unmount: %s", label, t_errname(rc));
    r->t.mounted = 0;
    for (i = 0; i < 200; i++) {
        one_call(r);
        CHECK(r->rc < 0, "[%s] %s on an unmounted volume returned %ld", label, r->what, r->rc);
    }
    CHECK(cairn_unmount(r->t.fs) == CAIRN_ERR_INVAL, "[%s] a second unmount", label);
    forget_handles(r);
    if (R(r, 2)) {
        r->t.cfg.read_only = 1;
        csim_counters(r->t.sim, &c0);
        CHECK(t_fs_mount(&r->t) == 0, "[%s] read-only mount", label);
        for (i = 0; i < 300; i++) {
            one_call(r);
            CHECK(r->rc != CAIRN_ERR_NOSPC, "[%s] %s: NOSPC on a read-only mount", label,
                  r->what);
        }
        CHECK(t_fs_check(&r->t, label) == 0, "[%s] check, read-only", label);
        CHECK(t_fs_unmount(&r->t) == 0, "[%s] read-only unmount", label);
        csim_counters(r->t.sim, &c1);
        CHECK(c1.mutating_ops == c0.mutating_ops, "[%s] a read-only mount changed the device "
              "(%llu programs and erases)", label,
              (unsigned long long)(c1.mutating_ops - c0.mutating_ops));
        r->t.cfg.read_only = 0;
        forget_handles(r);
    }
    CHECK(t_fs_mount(&r->t) == 0, "[%s] mount again", label);
}

static void misuse_run(int medium, uint64_t seed, int fill_it)
{
    static const char *const names[T_NMEDIA] = {"nor", "nand", "block", "nand-b4"};
    struct run r;
    struct snap before;
    char label[48];
    int c, i, rc;
    memset(&r, 0, sizeof r);
    r.rng = seed;
    r.fill = fill_it;
    forget_handles(&r);
    r.bds[0].fd = r.bds[1].fd = -1;
    sprintf(label, "%s seed %llu%s", names[medium], (unsigned long long)seed,
            fill_it ? " full" : "");
    t_fs_init(&r.t, t_sim_new(medium, seed), 1);
    t_fs_format_mount(&r.t);
    if (fill_it)
        fill(&r);
    for (c = 0; c < 3000; c++) {
        if (c % 700 == 350) {
            unmounted(&r, label);
            continue;
        }
        snap_take(r.t.fs, &before);
        one_call(&r);
        if (r.rc < 0 && r.rc != CAIRN_ERR_NOSPC)
            snap_same(&r, &before, label);
        if (c % 500 == 499)
            CHECK(t_fs_check(&r.t, label) == 0, "[%s] check after %d calls", label, c + 1);
    }
    rc = cairn_unmount(r.t.fs);
    for (i = 0; rc == CAIRN_ERR_NOSPC && i < 32; i++) /* every handle a context may have */
        rc = cairn_discard(r.t.fs, i) == 0 ? cairn_unmount(r.t.fs) : rc;
    CHECK(rc == 0, "[%s] unmount at the end: %s", label, t_errname(rc));
    r.t.mounted = 0;
    CHECK(t_fs_mount(&r.t) == 0 && t_fs_check(&r.t, label) == 0, "[%s] remount and check",
          label);
    t_fs_free(&r.t);
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : t_env_u64("CAIRN_TEST_SEED", 1);
    uint32_t runs = argc > 2 ? (uint32_t)atoi(argv[2]) : 2u * t_scale(), k;
    int m, e;
    t_begin("test_misuse");
    memset(longname, 'x', sizeof longname - 1);
    longname[0] = '/';
    for (k = 0; k < runs; k++)
        for (m = 0; m < T_NMEDIA; m++) {
            misuse_run(m, seed * 1000 + k * 10 + (uint64_t)m, 0);
            misuse_run(m, seed * 1000 + k * 10 + (uint64_t)m + 5, 1);
        }
    printf("  %lu calls; failed with:", ncalls);
    for (e = 1; e < 16; e++)
        printf(" %s %lu", cairn_errname(-e) + 10, nerr[e]);
    printf("\n");
    return t_summary("test_misuse");
}
