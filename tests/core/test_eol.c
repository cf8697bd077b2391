/*
 * End of life: a small device whose every erase block wears out after a
 * few dozen erases (csim_wear_out_after, each block its own endurance) is
 * written until it can take nothing more, with clean remounts and power
 * cuts on the way. What a user keeps through the device's whole life:
 * - every call answers a count, 0 or a cairn_err; never CORRUPT, and IO
 *   only as the device's failures (after it, only what was synced is
 *   promised);
 * - every mount after a cut or a remount works, or answers CAIRN_ERR_ROFS
 *   (no checkpoint can be written any more, or no room is left to recover:
 *   cairn_mount), and then a read-only mount works (the run ends there);
 * - every file holds what its last successful replace or sync gave it: the
 *   "slot" files are replaced whole (written under a temporary name, closed,
 *   renamed over: old or new after a failure), "log" takes synced appends
 *   (a prefix of what was appended, no shorter than the last sync);
 * - at the end a read-only mount shows all of that, and `cairn_check` is
 *   clean.
 * The model allows what cairn.h allows: a rename or a remove is durable at
 * the next successful sync (each is followed by cairn_sync here); a handle
 * given up with cairn_discard leaves all, some or none of its unsynced
 * bytes (the file's size is read back); a write that fails with IO may
 * have landed. The three faults it found are in DESIGN.md "Session 38".
 * `test_eol SEED RUNS` runs more volumes (printing each); CAIRN_TEST_SCALE
 * multiplies the default runs; EOL_TRACE=1 prints every call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsupport.h"

#define SLOTS 6
#define SLOT_MAX 6000
#define LOG_MAX (256 * 1024)

struct eol_geo {
    const char *model;
    uint32_t blocks, per_lblock;
};

/* Small volumes of each kind of flash: few segments, so that wear reaches
 * the anchors, the journal and the reserve alike. */
static const struct eol_geo geos[] = {
    {"nor-w25q128", 96, 4},  {"nor-w25q128", 160, 0}, {"nor-m25p16", 20, 1},
    {"nand-dhara", 40, 1},   {"nand-jffs2", 48, 2},   {"nand-dhara", 72, 0},
};
#define NGEOS (sizeof geos / sizeof geos[0])

struct eol {
    struct tfs t;
    const char *label;
    uint64_t rs;
    /* per slot: the content a mount must show (and, while a replace's
     * outcome is unknown, the other one it may show) */
    uint8_t *data[SLOTS], *maybe[SLOTS];
    int32_t len[SLOTS], maybe_len[SLOTS];
    int have[SLOTS], maybe_have[SLOTS], unsure[SLOTS];
    uint8_t *log;           /* every byte appended to /log */
    int32_t log_len, log_synced;
    int32_t log_maybe;      /* an append that failed with IO may have landed up to here */
    int log_gone;           /* /log's remove answered 0, its sync did not */
    uint32_t ops, failed, io, nospc, cuts, remounts, rofs;
    int read_only;          /* the volume only mounts read-only now */
};

static uint8_t scratch[SLOT_MAX];
static int trace; /* EOL_TRACE set: print every call */

static void content(uint8_t *buf, int32_t len, uint64_t tag)
{
    t_pattern(buf, (size_t)len, tag);
}

/* An error code a call may answer on a dying device. */
static int acceptable(int rc)
{
    return rc >= 0 || rc == CAIRN_ERR_NOSPC || rc == CAIRN_ERR_IO || rc == CAIRN_ERR_ROFS;
}

static void note_error(struct eol *e, int rc, const char *what)
{
    e->failed++;
    e->io += rc == CAIRN_ERR_IO;
    e->nospc += rc == CAIRN_ERR_NOSPC;
    CHECK(acceptable(rc), "[%s] op %u: %s: %s", e->label, e->ops, what, t_errname(rc));
}

/* Replace slot k whole: write /tmpK, close, rename over /sK. */
static int replace_slot(struct eol *e, uint32_t k)
{
    char tmp[16], name[16];
    int32_t n = 1 + (int32_t)t_randn(&e->rs, SLOT_MAX), fd, w, rc;
    sprintf(tmp, "/tmp%u", k);
    sprintf(name, "/s%u", k);
    content(scratch, n, t_rand(&e->rs));
    fd = cairn_open(e->t.fs, tmp, CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_TRUNC);
    if (fd < 0)
        return fd;
    w = cairn_write(e->t.fs, fd, scratch, n);
    rc = cairn_close(e->t.fs, fd);
    if (rc == CAIRN_ERR_NOSPC)
        (void)cairn_discard(e->t.fs, fd);
    if (w < 0 || rc < 0)
        return w < 0 ? w : rc;
    if (w != n)
        return CAIRN_ERR_NOSPC;
    /* from here the rename may land even when it answers an error */
    memcpy(e->maybe[k], scratch, (size_t)n);
    e->maybe_len[k] = n;
    e->maybe_have[k] = 1;
    e->unsure[k] = 1;
    rc = cairn_rename(e->t.fs, tmp, name);
    if (rc == 0)
        rc = cairn_sync(e->t.fs); /* durable from here (a rename alone is not) */
    if (rc == 0) {
        memcpy(e->data[k], scratch, (size_t)n);
        e->len[k] = n;
        e->have[k] = 1;
        e->unsure[k] = 0;
    }
    return rc; /* either, until a mount shows which */
}

static int remove_slot(struct eol *e, uint32_t k)
{
    char name[16];
    int rc;
    sprintf(name, "/s%u", k);
    e->maybe_have[k] = 0;
    e->unsure[k] = 1;
    rc = cairn_remove(e->t.fs, name);
    if (rc == 0 || rc == CAIRN_ERR_NOENT)
        rc = cairn_sync(e->t.fs); /* durable from here */
    if (rc == 0) {
        e->have[k] = 0;
        e->unsure[k] = 0;
    }
    return rc;
}

/* Appends to /log and syncs it. */
static int append_log(struct eol *e)
{
    int32_t n = 1 + (int32_t)t_randn(&e->rs, 700), fd, w, rc;
    if (e->log_len + n > LOG_MAX)
        return 0;
    content(e->log + e->log_len, n, t_rand(&e->rs));
    fd = cairn_open(e->t.fs, "/log", CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_APPEND);
    if (fd < 0)
        return fd;
    w = cairn_write(e->t.fs, fd, e->log + e->log_len, n);
    if (w == CAIRN_ERR_IO)
        e->log_maybe = e->log_len + n; /* only what was synced is promised */
    if (w > 0)
        e->log_len += w; /* landed in the file (maybe not yet on flash) */
    rc = w < 0 ? 0 : cairn_file_sync(e->t.fs, fd);
    if (w >= 0 && rc == 0)
        e->log_synced = e->log_len;
    if (trace)
        printf("  append n %ld at %ld: write %ld sync %s\n", (long)n,
               (long)(e->log_len - (w > 0 ? w : 0)), (long)w, t_errname(rc));
    if (cairn_close(e->t.fs, fd) == CAIRN_ERR_NOSPC) {
        struct cairn_info info;
        int src;
        (void)cairn_discard(e->t.fs, fd);
        /* what was written out of the unsynced bytes stays (all, some or
         * none: cairn.h), a prefix of them */
        src = cairn_stat(e->t.fs, "/log", &info);
        CHECK(src == 0 && info.size >= e->log_synced && info.size <= e->log_len,
              "[%s] op %u: /log after a discard: %s, size %ld, synced %ld, written %ld",
              e->label, e->ops, t_errname(src), src == 0 ? (long)info.size : -1L,
              (long)e->log_synced, (long)e->log_len);
        if (src == 0 && info.size >= e->log_synced && info.size <= e->log_len)
            e->log_len = info.size;
    }
    if (w < 0)
        return w;
    return rc;
}

/* What a mount shows against the model: each slot its content (or, after a
 * replace whose outcome a failure hid, either), /log a prefix of what was
 * appended no shorter than its last sync. The model then takes what it saw. */
static void verify(struct eol *e, const char *when)
{
    uint32_t k;
    char name[16];
    uint8_t *buf;
    int32_t len;
    int rc;
    for (k = 0; k < SLOTS; k++) {
        int is_old, is_new;
        sprintf(name, "/s%u", k);
        rc = t_read_file(e->t.fs, name, &buf, &len);
        CHECK(rc == 0 || rc == CAIRN_ERR_NOENT, "[%s] %s: read %s: %s", e->label, when, name,
              t_errname(rc));
        is_old = rc == CAIRN_ERR_NOENT ? !e->have[k]
                                       : e->have[k] && len == e->len[k] &&
                                             memcmp(buf, e->data[k], (size_t)len) == 0;
        is_new = e->unsure[k] &&
                 (rc == CAIRN_ERR_NOENT ? !e->maybe_have[k]
                                        : e->maybe_have[k] && len == e->maybe_len[k] &&
                                              memcmp(buf, e->maybe[k], (size_t)len) == 0);
        CHECK(is_old || is_new, "[%s] %s: %s holds %ld bytes (%s), expected %ld%s", e->label,
              when, name, rc == 0 ? (long)len : -1L, t_errname(rc),
              e->have[k] ? (long)e->len[k] : -1L, e->unsure[k] ? " or the replacement" : "");
        if (!is_old && is_new) {
            e->have[k] = e->maybe_have[k];
            e->len[k] = e->maybe_len[k];
            memcpy(e->data[k], e->maybe[k], (size_t)e->maybe_len[k]);
        }
        e->unsure[k] = 0;
        if (rc == 0)
            free(buf);
    }
    rc = t_read_file(e->t.fs, "/log", &buf, &len);
    if (rc == CAIRN_ERR_NOENT && (e->log_synced == 0 || e->log_gone)) {
        len = 0;
        rc = 0;
        buf = NULL;
        e->log_synced = e->log_len = 0; /* (gone: as removed) */
    }
    CHECK(rc == 0 && len >= e->log_synced &&
              len <= (e->log_maybe > e->log_len ? e->log_maybe : e->log_len) &&
              (len == 0 || memcmp(buf, e->log, (size_t)len) == 0),
          "[%s] %s: /log holds %ld bytes (%s), synced %ld, appended %ld", e->label, when,
          rc == 0 ? (long)len : -1L, t_errname(rc), (long)e->log_synced, (long)e->log_len);
    if (rc == 0 && trace) {
        int32_t i;
        for (i = 0; i < len && i < e->log_len && buf[i] == e->log[i]; i++)
            ;
        printf("log: %ld bytes, first difference at %ld\n", (long)len, (long)i);
    }
    e->log_maybe = 0;
    if (rc == 0 && len <= LOG_MAX) {
        if (len > 0)
            memcpy(e->log, buf, (size_t)len); /* after a failure: no cascade */
        e->log_len = e->log_synced = len; /* the next appends go on from here */
    }
    if (rc == 0)
        free(buf);
}

/* Mount after a cut or an unmount. 0: mounted writable; 1: the volume now
 * only mounts read-only (the run ends); -1: failed. */
static int remount(struct eol *e, const char *when)
{
    int rc;
    csim_power_on(e->t.sim);
    rc = t_fs_mount(&e->t);
    if (rc == 0) {
        CHECK_EQ(t_fs_check(&e->t, e->label), 0, "[%s] %s: check", e->label, when);
        verify(e, when);
        return 0;
    }
    CHECK(rc == CAIRN_ERR_ROFS, "[%s] %s: mount: %s", e->label, when, t_errname(rc));
    e->rofs += rc == CAIRN_ERR_ROFS;
    return rc == CAIRN_ERR_ROFS ? 1 : -1;
}

/* The volume at the end (or where it stopped mounting writable): a
 * read-only mount shows the model and checks clean. */
static void final_view(struct eol *e)
{
    int rc;
    if (e->t.mounted)
        (void)t_fs_unmount(&e->t);
    csim_power_on(e->t.sim);
    e->t.cfg.read_only = 1;
    rc = t_fs_mount(&e->t);
    e->t.cfg.read_only = 0;
    CHECK(rc == 0, "[%s] read-only mount at the end: %s", e->label, t_errname(rc));
    if (rc != 0)
        return;
    CHECK_EQ(t_fs_check(&e->t, e->label), 0, "[%s] check at the end", e->label);
    verify(e, "read-only at the end");
    (void)t_fs_unmount(&e->t);
}

/* One step of the workload; a cut or a remount now and then. 1: stop. */
static int step(struct eol *e)
{
    uint32_t k = t_randn(&e->rs, SLOTS), r = t_randn(&e->rs, 100);
    int rc;
    e->ops++;
    if (r < 55)
        rc = replace_slot(e, k);
    else if (r < 65)
        rc = remove_slot(e, k);
    else
        rc = append_log(e);
    if (trace)
        printf("op %u %s k%u rc %s log %ld/%ld powered %d\n", e->ops,
               r < 55 ? "replace" : r < 65 ? "remove" : "append", k, t_errname(rc),
               (long)e->log_synced, (long)e->log_len, csim_powered(e->t.sim));
    if (rc < 0)
        note_error(e, rc, r < 55 ? "replace" : r < 65 ? "remove" : "append");
    if (rc == CAIRN_ERR_IO || t_randn(&e->rs, 40) == 0) {
        /* an IO leaves only what was synced promised: a cut, as after one */
        e->cuts++;
        t_fs_abandon(&e->t);
        return remount(e, "after a cut") != 0;
    }
    if (t_randn(&e->rs, 60) == 0) {
        struct csim_counters c;
        csim_counters(e->t.sim, &c);
        csim_cut_at(e->t.sim, c.mutating_ops + t_randn(&e->rs, 30), CSIM_TEAR_PREFIX);
        e->cuts++;
        return 0; /* the cut falls in one of the next calls */
    }
    if (!csim_powered(e->t.sim)) {
        t_fs_abandon(&e->t);
        return remount(e, "after a cut in a call") != 0;
    }
    if (t_randn(&e->rs, 80) == 0) {
        e->remounts++;
        rc = t_fs_unmount(&e->t);
        if (trace)
            printf("unmount %s\n", t_errname(rc));
        CHECK(acceptable(rc), "[%s] unmount: %s", e->label, t_errname(rc));
        if (rc == CAIRN_ERR_NOSPC)
            t_fs_abandon(&e->t);
        return remount(e, "after an unmount") != 0;
    }
    return 0;
}

static void eol_run(const struct eol_geo *g, uint64_t seed, int verbose)
{
    struct eol e;
    char label[96];
    uint32_t b, k, idle = 0, endurance;
    uint32_t nblocks;
    memset(&e, 0, sizeof e);
    e.rs = seed;
    endurance = 20 + t_randn(&e.rs, 40);
    snprintf(label, sizeof label, "seed %llu: %s %u blocks%s, endurance %u-%u",
             (unsigned long long)seed, g->model, g->blocks,
             g->per_lblock ? "" : " (zero config)", endurance, 2 * endurance);
    e.label = label;
    t_fs_init(&e.t, t_sim_model(g->model, g->blocks, g->per_lblock, seed), 1);
    nblocks = csim_geometry(e.t.sim)->block_count;
    t_fs_format_mount(&e.t);
    for (b = 0; b < nblocks; b++)
        csim_wear_out_after(e.t.sim, b, endurance + t_randn(&e.rs, endurance + 1));
    for (k = 0; k < SLOTS; k++) {
        e.data[k] = malloc(SLOT_MAX);
        e.maybe[k] = malloc(SLOT_MAX);
    }
    e.log = malloc(LOG_MAX);
    /* until 300 calls in a row fail, or the volume only mounts read-only */
    while (e.ops < 400000 && idle < 300) {
        uint32_t before = e.failed;
        int stop = step(&e);
        idle = e.failed > before ? idle + 1 : 0;
        if (stop)
            break;
        if (e.log_len >= LOG_MAX - 1000 && e.t.mounted && csim_powered(e.t.sim)) {
            int rc = cairn_remove(e.t.fs, "/log"); /* begin the log again */
            if (trace)
                printf("remove /log: %s\n", t_errname(rc));
            if (rc == 0)
                rc = cairn_sync(e.t.fs);
            if (trace)
                printf("sync: %s\n", t_errname(rc));
            if (rc == 0)
                e.log_len = e.log_synced = 0;
            else {
                e.log_gone = 1; /* removed or not: the final view accepts either */
                break;
            }
        }
    }
    csim_cut_cancel(e.t.sim);
    final_view(&e);
    if (verbose || tc_fail > 0)
        printf("  %s: %u calls, %u failed (%u IO, %u NOSPC), %u cuts, %u remounts, "
               "writable mount ROFS %u, %s\n",
               label, e.ops, e.failed, e.io, e.nospc, e.cuts, e.remounts, e.rofs,
               idle >= 300 ? "300 calls in a row failed" : "stopped");
    for (k = 0; k < SLOTS; k++) {
        free(e.data[k]);
        free(e.maybe[k]);
    }
    free(e.log);
    e.t.allow_violations = 0;
    t_fs_free(&e.t);
}

int main(int argc, char **argv)
{
    uint64_t seed = t_env_u64("CAIRN_TEST_SEED", 1), i, runs;
    t_begin("test_eol");
    trace = getenv("EOL_TRACE") != NULL;
    if (argc == 3) { /* test_eol SEED RUNS: a hunt */
        seed = strtoull(argv[1], NULL, 10);
        runs = strtoull(argv[2], NULL, 10);
        for (i = 0; i < runs; i++)
            eol_run(&geos[(seed + i) % NGEOS], seed + i, 1);
        return t_summary("test_eol");
    }
    runs = NGEOS * t_scale();
    for (i = 0; i < runs; i++)
        eol_run(&geos[i % NGEOS], seed + i, 1);
    return t_summary("test_eol");
}
