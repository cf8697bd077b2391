/*
 * test_corrupt: invariant 3 on damaged images. Valid images (files, dirs,
 * attributes; one cleanly unmounted, one with a journal to replay) are built
 * on NOR, NAND and BLOCK volumes; each trial copies one into a fresh device,
 * damages it (bit flips, a page of random bytes, a zeroed page, an erased
 * page, a page copied over another, or several of these), then mounts it and,
 * if that works, runs cairn_check, lists the tree, reads every file, writes,
 * removes and unmounts. Every call must return 0/a count or a cairn_err;
 * nothing may crash (sanitizers), hang (each trial is limited to 10 million
 * device operations, after which the device fails every call, and to 60 s by
 * an alarm) or touch the device outside its geometry (checked by a wrapper
 * around the simulated device).
 *
 * Usage: test_corrupt [seed]   (default 1, or CAIRN_TEST_SEED; trials scale
 * with CAIRN_TEST_SCALE)
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tsupport.h"

#define OP_LIMIT 10000000ull

/* ---- a checking wrapper around the simulated device ---- */
struct wdev {
    struct cairn_dev dev;
    struct cairn_dev *in;
    struct cairn_geometry g;
    uint64_t ops;
    int tripped;
    uint64_t bad_prog, bad_read;
    char first_bad[160];
};

static int w_count(struct wdev *w)
{
    if (++w->ops > OP_LIMIT) {
        w->tripped = 1;
        return 1;
    }
    return 0;
}

static void w_bad(struct wdev *w, uint64_t *ctr, const char *what, uint32_t a, uint32_t b,
                  uint32_t c)
{
    (*ctr)++;
    if (!w->first_bad[0])
        snprintf(w->first_bad, sizeof w->first_bad, "%s(%lu, %lu, %lu)", what,
                 (unsigned long)a, (unsigned long)b, (unsigned long)c);
}

static int w_read(void *ctx, uint32_t page, uint32_t off, void *buf, uint32_t len)
{
    struct wdev *w = (struct wdev *)ctx;
    uint64_t total = (uint64_t)w->g.pages_per_block * w->g.block_count;
    uint64_t blk_end = ((uint64_t)page / w->g.pages_per_block + 1) * w->g.pages_per_block;
    if (w->g.medium != CAIRN_MEDIUM_NAND)
        blk_end = total; /* NOR and BLOCK reads may run on into the next blocks */
    if (w_count(w))
        return CAIRN_DEV_IO;
    if (page >= total ||
        (uint64_t)page * w->g.page_size + off + len > blk_end * w->g.page_size) {
        w_bad(w, &w->bad_read, "read", page, off, len);
        return CAIRN_DEV_IO;
    }
    return w->in->read(w->in->ctx, page, off, buf, len);
}

static int w_read_spare(void *ctx, uint32_t page, void *buf, uint32_t len)
{
    struct wdev *w = (struct wdev *)ctx;
    if (w_count(w))
        return CAIRN_DEV_IO;
    if ((uint64_t)page >= (uint64_t)w->g.pages_per_block * w->g.block_count ||
        len > w->g.spare_size) {
        w_bad(w, &w->bad_read, "read_spare", page, 0, len);
        return CAIRN_DEV_IO;
    }
    return w->in->read_spare(w->in->ctx, page, buf, len);
}

static int w_prog(void *ctx, uint32_t page, uint32_t off, const void *data, uint32_t len,
                  const void *spare, uint32_t spare_len)
{
    struct wdev *w = (struct wdev *)ctx;
    uint64_t total = (uint64_t)w->g.pages_per_block * w->g.block_count;
    uint64_t blk_end = ((uint64_t)page / w->g.pages_per_block + 1) * w->g.pages_per_block;
    if (w->g.medium != CAIRN_MEDIUM_NAND)
        blk_end = total; /* NOR and BLOCK reads may run on into the next blocks */
    if (w_count(w))
        return CAIRN_DEV_IO;
    if (page >= total ||
        (uint64_t)page * w->g.page_size + off + len > blk_end * w->g.page_size ||
        spare_len > w->g.spare_size) {
        w_bad(w, &w->bad_prog, "prog", page, off, len);
        return CAIRN_DEV_IO;
    }
    return w->in->prog(w->in->ctx, page, off, data, len, spare, spare_len);
}

static int w_erase(void *ctx, uint32_t block)
{
    struct wdev *w = (struct wdev *)ctx;
    if (w_count(w))
        return CAIRN_DEV_IO;
    if (block >= w->g.block_count) {
        w_bad(w, &w->bad_prog, "erase", block, 0, 0);
        return CAIRN_DEV_IO;
    }
    return w->in->erase(w->in->ctx, block);
}

static int w_is_bad(void *ctx, uint32_t block)
{
    struct wdev *w = (struct wdev *)ctx;
    if (w_count(w))
        return CAIRN_DEV_IO;
    if (block >= w->g.block_count) {
        w_bad(w, &w->bad_read, "is_bad", block, 0, 0);
        return CAIRN_DEV_IO;
    }
    return w->in->is_bad(w->in->ctx, block);
}

static int w_mark_bad(void *ctx, uint32_t block)
{
    struct wdev *w = (struct wdev *)ctx;
    if (w_count(w))
        return CAIRN_DEV_IO;
    if (block >= w->g.block_count) {
        w_bad(w, &w->bad_prog, "mark_bad", block, 0, 0);
        return CAIRN_DEV_IO;
    }
    return w->in->mark_bad(w->in->ctx, block);
}

static int w_sync(void *ctx)
{
    struct wdev *w = (struct wdev *)ctx;
    if (w_count(w))
        return CAIRN_DEV_IO;
    return w->in->sync ? w->in->sync(w->in->ctx) : 0;
}

static void w_init(struct wdev *w, csim *sim)
{
    memset(w, 0, sizeof *w);
    w->in = csim_dev(sim);
    w->g = w->in->geo;
    w->dev.ctx = w;
    w->dev.geo = w->g;
    w->dev.read = w_read;
    w->dev.read_spare = w->in->read_spare ? w_read_spare : NULL;
    w->dev.prog = w_prog;
    w->dev.erase = w_erase;
    w->dev.is_bad = w->in->is_bad ? w_is_bad : NULL;
    w->dev.mark_bad = w->in->mark_bad ? w_mark_bad : NULL;
    w->dev.sync = w_sync;
}

static void build(struct tfs *t, int dirty)
{
    cairn *fs = t->fs;
    char path[64];
    uint8_t *buf = (uint8_t *)malloc(20100);
    int i, fd, rc = 0;
    t_pattern(buf, 20100, 1);
    rc |= cairn_mkdir(fs, "/a");
    rc |= cairn_mkdir(fs, "/a/b");
    rc |= cairn_mkdir(fs, "/c");
    rc |= t_write_file(fs, "/f1", buf, 100);
    rc |= t_write_file(fs, "/a/f2", buf + 7, 3 * 2048 + 5);
    rc |= t_write_file(fs, "/a/b/f3", buf + 3, 20000);
    for (i = 0; i < 12; i++) {
        snprintf(path, sizeof path, "/c/file%02d", i);
        rc |= t_write_file(fs, path, buf + i, 10 + 97 * i);
    }
    rc |= cairn_setattr(fs, "/f1", 3, "attr", 4);
    rc |= cairn_remove(fs, "/c/file03");
    rc |= cairn_rename(fs, "/c/file04", "/a/moved");
    fd = cairn_open(fs, "/a/b/f3", CAIRN_O_RDWR);
    rc |= cairn_seek(fs, fd, 5000, CAIRN_SEEK_SET) < 0;
    rc |= cairn_write(fs, fd, buf, 3000) != 3000;
    rc |= cairn_close(fs, fd);
    rc |= cairn_sync(fs);
    if (dirty) { /* leave journal records after the checkpoint */
        rc |= t_write_file(fs, "/c/late", buf, 1500);
        rc |= cairn_rename(fs, "/c/file05", "/c/file05r");
        rc |= cairn_remove(fs, "/c/file06");
        fd = cairn_open(fs, "/a/f2", CAIRN_O_WRONLY | CAIRN_O_APPEND);
        rc |= cairn_write(fs, fd, buf, 700) != 700;
        rc |= cairn_close(fs, fd);
        t_fs_abandon(t);
    } else {
        rc |= t_fs_unmount(t);
    }
    if (rc)
        t_fatal("building the image failed");
    free(buf);
}

/* ---- a bounded walk over a possibly damaged tree ---- */
struct wstat {
    long entries, files, read_ok, read_err, bad_codes;
};

static void code(struct wstat *s, long rc, const char *what, long trial)
{
    if (rc < 0 && !t_is_err(rc)) {
        s->bad_codes++;
        CHECK(0, "trial %ld: %s returned %ld, not a cairn_err", trial, what, rc);
    }
}

static void walk(cairn *fs, const char *dir, int depth, struct wstat *s, long trial)
{
    struct cairn_info info;
    char (*names)[CAIRN_NAME_MAX + 1] = NULL;
    uint8_t *types = NULL;
    int n = 0, dd, r, i;
    if (depth > 40 || s->entries > 20000)
        return;
    dd = cairn_opendir(fs, dir);
    code(s, dd, "opendir", trial);
    if (dd < 0)
        return;
    while ((r = cairn_readdir(fs, dd, &info)) == 1 && n < 2000 && s->entries < 20000) {
        s->entries++;
        if (!strcmp(info.name, ".") || !strcmp(info.name, ".."))
            continue;
        names = realloc(names, (size_t)(n + 1) * sizeof *names);
        types = (uint8_t *)realloc(types, (size_t)(n + 1));
        if (!names || !types)
            t_fatal("out of memory");
        memcpy(names[n], info.name, CAIRN_NAME_MAX);
        names[n][CAIRN_NAME_MAX] = 0;
        types[n] = info.type;
        n++;
    }
    code(s, r, "readdir", trial);
    code(s, cairn_closedir(fs, dd), "closedir", trial);
    for (i = 0; i < n; i++) {
        char path[4096];
        int pl = snprintf(path, sizeof path, "%s/%s", strcmp(dir, "/") ? dir : "", names[i]);
        if (pl <= 0 || pl >= (int)sizeof path)
            continue;
        if (types[i] == CAIRN_TYPE_DIR) {
            walk(fs, path, depth + 1, s, trial);
        } else {
            int fd = cairn_open(fs, path, CAIRN_O_RDONLY);
            code(s, fd, "open", trial);
            s->files++;
            if (fd >= 0) {
                uint8_t buf[4096];
                int32_t got, total = 0;
                struct cairn_info fi;
                code(s, cairn_fstat(fs, fd, &fi), "fstat", trial);
                code(s, cairn_size(fs, fd), "size", trial);
                while ((got = cairn_read(fs, fd, buf, sizeof buf)) > 0 && total < (1 << 22))
                    total += got;
                code(s, got, "read", trial);
                if (got == 0)
                    s->read_ok++;
                else
                    s->read_err++;
                code(s, cairn_close(fs, fd), "close", trial);
            }
            {
                char av[CAIRN_ATTR_MAX];
                code(s, cairn_getattr(fs, path, 3, av, sizeof av), "getattr", trial);
            }
        }
    }
    free(names);
    free(types);
}

/* ---- trials ---- */
static long cur_trial;
static void on_alarm(int sig)
{
    (void)sig;
    printf("FAIL: trial %ld did not finish within 60 s (hang)\n", cur_trial);
    printf("test_corrupt: %lu passed, %lu failed\n", tc_pass, tc_fail + 1);
    fflush(stdout);
    _exit(1);
}

static long st_mounted, st_mount_err[17], st_check_ok, st_check_err, st_write_ok;

static void corrupt(csim *sim, const struct t_image *im, uint64_t *rng, char *desc,
                    size_t dn)
{
    uint32_t ps = im->psize, ss = im->ssize, k, rounds = 1, mode;
    uint8_t *buf = (uint8_t *)malloc(ps + ss + 1);
    size_t dl = 0;
    mode = t_randn(rng, 100);
    if (mode >= 95)
        rounds = 3 + t_randn(rng, 8);
    desc[0] = 0;
    for (k = 0; k < rounds; k++) {
        uint32_t i = t_randn(rng, im->n), p = im->pages[i], m = rounds > 1 ? t_randn(rng, 95) : mode;
        uint8_t *spare = ss ? buf + ps : NULL;
        const char *what;
        memcpy(buf, im->data + (size_t)i * (ps + ss), ps + ss);
        if (m < 40) {
            uint32_t nf = 1 + t_randn(rng, 8), f;
            for (f = 0; f < nf; f++) {
                uint32_t at = t_randn(rng, ps + (t_randn(rng, 8) == 0 ? ss : 0));
                buf[at] ^= (uint8_t)(1u << t_randn(rng, 8));
            }
            what = "bitflips";
        } else if (m < 60) {
            t_pattern(buf, ps + ss, t_rand(rng));
            what = "random";
        } else if (m < 75) {
            memset(buf, 0, ps + ss);
            what = "zero";
        } else if (m < 85) {
            memset(buf, 0xFF, ps + ss);
            what = "erase";
        } else {
            uint32_t j = t_randn(rng, im->n);
            memcpy(buf, im->data + (size_t)j * (ps + ss), ps + ss);
            what = "copy";
        }
        csim_poke(sim, p, buf, spare);
        if (dl < dn)
            dl += (size_t)snprintf(desc + dl, dn - dl, "%s%s@%lu", k ? "," : "", what,
                                   (unsigned long)p);
    }
    free(buf);
}

static void trial(int medium, const struct t_image *im, uint64_t seed, long n)
{
    struct tfs t;
    struct wdev w;
    struct wstat s;
    uint64_t rng = seed;
    char desc[200];
    int rc;
    cur_trial = n;
    alarm(60);
    t_fs_init(&t, t_sim_new(medium, seed), 1);
    t.allow_violations = 1; /* writes into a damaged image may break rules */
    t_image_put(im, t.sim);
    corrupt(t.sim, im, &rng, desc, sizeof desc);
    w_init(&w, t.sim);
    t.cfg.dev = &w.dev;
    memset(&s, 0, sizeof s);
    rc = t_fs_mount(&t);
    code(&s, rc, "mount", n);
    if (rc < 0) {
        if (t_is_err(rc))
            st_mount_err[-rc]++;
    } else {
        struct cairn_check_report rep;
        uint8_t buf[3000];
        st_mounted++;
        memset(&rep, 0, sizeof rep);
        rc = cairn_check(t.fs, &rep, NULL, NULL);
        code(&s, rc, "check", n);
        if (rc == 0)
            st_check_ok++;
        else
            st_check_err++;
        walk(t.fs, "/", 0, &s, n);
        t_pattern(buf, sizeof buf, seed);
        rc = t_write_file(t.fs, "/new-after-damage", buf, sizeof buf);
        code(&s, rc, "write", n);
        if (rc == 0)
            st_write_ok++;
        code(&s, cairn_mkdir(t.fs, "/a/newdir"), "mkdir", n);
        code(&s, cairn_remove(t.fs, "/f1"), "remove", n);
        code(&s, cairn_rename(t.fs, "/c/file07", "/a/r"), "rename", n);
        code(&s, cairn_sync(t.fs), "sync", n);
        code(&s, t_fs_unmount(&t), "unmount", n);
        /* and once more: mounting what the damaged mount left */
        rc = t_fs_mount(&t);
        code(&s, rc, "second mount", n);
        if (rc == 0) {
            code(&s, cairn_check(t.fs, &rep, NULL, NULL), "second check", n);
            walk(t.fs, "/", 0, &s, n);
            code(&s, t_fs_unmount(&t), "unmount", n);
        }
    }
    t_fs_abandon(&t);
    CHECK(!w.tripped, "trial %ld (%s, seed %llu, %s): more than %llu device operations",
          n, t_medium_name[medium], (unsigned long long)seed, desc, OP_LIMIT);
    CHECK(w.bad_prog == 0, "trial %ld (%s, seed %llu, %s): %llu programs/erases outside "
                           "the device, first %s",
          n, t_medium_name[medium], (unsigned long long)seed, desc,
          (unsigned long long)w.bad_prog, w.first_bad);
    CHECK(w.bad_read == 0, "trial %ld (%s, seed %llu, %s): %llu reads outside the "
                           "device geometry, first %s",
          n, t_medium_name[medium], (unsigned long long)seed, desc,
          (unsigned long long)w.bad_read, w.first_bad);
    CHECK(s.bad_codes == 0, "trial %ld (%s, %s): %ld results that are no cairn_err", n,
          t_medium_name[medium], desc, s.bad_codes);
    t_fs_free(&t);
    alarm(0);
}

int main(int argc, char **argv)
{
    uint64_t seed = t_env_u64("CAIRN_TEST_SEED", 1);
    long per = 1500L * (long)t_scale(), n = 0, i;
    int med, e;
    t_begin("test_corrupt");
    if (argc > 1)
        seed = strtoull(argv[1], NULL, 0);
    signal(SIGALRM, on_alarm);
    printf("test_corrupt: seed %llu, %ld trials per medium and image\n",
           (unsigned long long)seed, per);
    for (med = 0; med < T_NMEDIA; med++) {
        int dirty;
        for (dirty = 0; dirty < 2; dirty++) {
            struct tfs t;
            struct t_image im;
            long f0 = (long)tc_fail;
            memset(st_mount_err, 0, sizeof st_mount_err);
            st_mounted = st_check_ok = st_check_err = st_write_ok = 0;
            t_fs_init(&t, t_sim_new(med, 1), 1);
            t_fs_format_mount(&t);
            build(&t, dirty);
            t_image_take(&im, t.sim);
            t_fs_free(&t);
            for (i = 0; i < per; i++, n++)
                trial(med, &im, seed * 1000003 + (uint64_t)n, n);
            printf("  %s %s image (%lu pages used): %ld trials, mounted %ld (check clean %ld, "
                   "found damage %ld, write ok %ld); mount errors:",
                   t_medium_name[med], dirty ? "unclean" : "clean", (unsigned long)im.n, per,
                   st_mounted, st_check_ok, st_check_err, st_write_ok);
            for (e = 1; e <= 16; e++)
                if (st_mount_err[e])
                    printf(" %s %ld", t_errname(-e), st_mount_err[e]);
            printf(": %s\n", (long)tc_fail == f0 ? "ok" : "FAILED");
            t_image_free(&im);
        }
    }
    return t_summary("test_corrupt");
}
