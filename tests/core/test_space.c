/*
 * test_space: space management (issue 4) on NOR (nor-w25q128, 8 blocks per
 * logical block, 1 MiB) and small NAND (nand-dhara, 32 blocks, 4 MiB).
 *  (a) fill/age: fill to 95% of what the volume accepts, then rewrite,
 *      overwrite and delete files at random for 10 volume-writes (x scale);
 *      every call is checked against the in-memory model, the whole volume
 *      is compared with it at each remount and cairn_check must be clean.
 *      NOSPC may be returned (the file whose write ran out of space is then
 *      removed: its content is unknown), never another error, and the volume
 *      must never wedge (100 operations in a row refused, deletes included);
 *      a final fill must end with NOSPC and leave every file intact. Prints
 *      write amplification.
 *  (b) bounded work: filled to 80% and half deleted at random (garbage
 *      spread around, as in the fill-write bench scenario), then 4000 writes
 *      of 256 B or 4 KiB (appends to a new file up to 60% live, overwrites);
 *      from the simulator's counters around each cairn_write the segment
 *      erases, pages programmed and pages moved by GC (the wrapper device of
 *      spacesup.h) per call; prints max/median/p99, guards the worst call
 *      measured, and asserts call by call the bound docs/DESIGN.md states
 *      (off the hard path at most gc_step_pages moved plus a finished
 *      victim's remainder; on it at most 4 victims per entry, each a segment
 *      of moves and a segment of metadata, and at most 3 entries a call).
 *  (c) wear: 50 volume-writes (x scale) of a hot/cold workload (90% of the
 *      writes to 10% of the data); prints and bounds max/mean erase count.
 *  (d) cairn_gc(budget) moves at most budget pages and frees space; a
 *      cairn_fallocate's errors (negative length, read-only and directory
 *      handles), free_bytes while a promise stands (the promise and one
 *      segment, counted once however often it is extended; a length below
 *      the size changes nothing) and after the last close (all back); a
 *      cairn_fallocate reservation holds while other files get NOSPC: the
 *      reserved file then writes all of it in 4 KiB writes, in 1000-byte
 *      writes, and in 40-byte appends each followed by a file sync (on NAND
 *      a page written again at every sync; 572,040 of 786,432 bytes before
 *      rewrites stopped being charged to the promise);
 *      two files written side by side share no erase block with data_heads=2
 *      and do with data_heads=1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cn.h"
#include "spacesup.h"

static const char *const med_name[2] = {"nor", "nand"};

static csim *space_sim(int medium, uint64_t seed)
{
    if (medium == T_NOR)
        return t_sim_new(T_NOR, seed); /* 32 segments of 16 KiB */
    return t_sim_model("nand-dhara", 32, 1, seed); /* 32 segments of 128 KiB */
}

static uint64_t dev_bytes(csim *sim)
{
    const struct cairn_geometry *g = csim_geometry(sim);
    return (uint64_t)g->page_size * g->pages_per_block * g->block_count;
}

static uint8_t *pbuf(int32_t len, uint64_t seed)
{
    static uint8_t *b;
    static int32_t cap;
    if (len > cap) {
        b = (uint8_t *)realloc(b, (size_t)len);
        if (!b)
            t_fatal("out of memory");
        cap = len;
    }
    t_pattern(b, (size_t)len, seed);
    return b;
}

/* Where the space is when a call ran out of it (printed with the call): free
 * segments, the live pages of every closed one, the heads, GC's state. */
static void space_state(const cairn *fs)
{
    uint32_t s, h;
    printf("      free segments %u, dead %u, dirty nodes %u, tree height %u, gc phase %u "
           "victim %d squeeze %u; live pages of the full segments:",
           (unsigned)cn_free_segs(fs), (unsigned)cn_dead_segs(fs), (unsigned)fs->dirty_nodes,
           (unsigned)fs->height, (unsigned)fs->gc.phase,
           fs->gc.victim == CN_NONE ? -1 : (int)fs->gc.victim, (unsigned)fs->gc.squeeze);
    for (s = fs->seg_base; s < fs->seg_count; s++)
        if (fs->segs[s].state == CN_SEG_FULL)
            printf(" %u", (unsigned)fs->segs[s].live);
    printf("; heads:");
    for (h = 0; h < CN_HEADS; h++)
        if (fs->head[h].seg != CN_NONE)
            printf(" %u@%u/%u", (unsigned)h, (unsigned)fs->head[h].page,
                   (unsigned)fs->segs[fs->head[h].seg].live);
    printf("; journal in %u at %u of %u\n", (unsigned)fs->log.seg, (unsigned)fs->log.off,
           (unsigned)(fs->seg_pages * fs->page_size));
}

static int64_t free_now(cairn *fs)
{
    struct cairn_fsinfo fi;
    if (cairn_fs_stat(fs, &fi) != 0)
        return 0;
    return (int64_t)fi.free_bytes;
}

static int32_t file_size(const struct model *m, const char *path)
{
    int k = m_find(m, path);
    return k < 0 ? -1 : m->objs[m->nodes[k].obj].size;
}

/* ------------------------------------------------------------ (a) fill/age */

#define AGE_FILES 48

/* Removes random files until `need` more bytes keep the model under cap. */
static void make_room(struct mdrv *d, uint64_t *rng, int64_t cap, int64_t need,
                      const char *keep)
{
    char p[32];
    int tries = 0;
    while (d->m->bytes + need > cap && !d->failed && tries++ < 4 * AGE_FILES) {
        snprintf(p, sizeof p, "/f%02u", (unsigned)t_randn(rng, AGE_FILES));
        if (m_find(d->m, p) >= 0 && (keep == NULL || strcmp(p, keep) != 0))
            d_remove(d, p);
    }
}

/* Writes len bytes to fd in pieces of 1 byte .. 16 KiB. */
static int64_t write_pieces(struct mdrv *d, int fd, int32_t len, uint64_t *rng)
{
    int64_t done = 0;
    while (done < len && !d->failed) {
        int32_t n = 1 + (int32_t)t_randn(rng, 16384);
        if (t_randn(rng, 4) == 0)
            n = 1 + (int32_t)t_randn(rng, 300);
        if (n > len - done)
            n = (int32_t)(len - done);
        d_write(d, fd, pbuf(n, t_rand(rng)), n);
        done += n;
    }
    return done;
}

/* After an operation on path: if it ran out of space, the file's content is
 * unknown and it is to be removed (on a full volume); a remove that is
 * refused with NOSPC is tried again before each later operation (see
 * unknown_retry). Returns 1 if the operation ran out of space. */
static long nospc_last;
static char unknown[AGE_FILES][32];
static int nunknown;
static int nospc_seen(struct mdrv *d, const char *path, int wrote)
{
    int i;
    if (d->nospc == nospc_last)
        return 0;
    nospc_last = d->nospc;
    if (!wrote || m_find(d->m, path) < 0)
        return 1;
    for (i = 0; i < nunknown; i++)
        if (strcmp(unknown[i], path) == 0)
            return 1;
    if (nunknown < AGE_FILES)
        snprintf(unknown[nunknown++], sizeof unknown[0], "%s", path);
    return 1;
}
/* Removes the files of unknown content; returns how many are left. */
static int unknown_retry(struct mdrv *d)
{
    int i = 0;
    while (i < nunknown && !d->failed) {
        long before = d->nospc;
        d_remove(d, unknown[i]);
        nospc_last = d->nospc;
        if (d->nospc == before) {
            memmove(unknown[i], unknown[i + 1], (size_t)(nunknown - i - 1) * sizeof unknown[0]);
            nunknown--;
        } else {
            i++;
        }
    }
    d_close_unlinked(d); /* handles whose close ran out of space, now of removed files */
    return nunknown;
}
static int is_unknown(const char *path)
{
    int i;
    for (i = 0; i < nunknown; i++)
        if (strcmp(unknown[i], path) == 0)
            return 1;
    return 0;
}

static void age_run(int medium, uint64_t seed)
{
    struct tfs t;
    struct model m;
    struct mdrv d;
    struct work w0, w1, wd;
    uint64_t rng = seed * 1000003u + (uint64_t)medium, user = 0, target, vol;
    int64_t cap, hi, seg;
    char label[64], p[32];
    long ops = 0, remounts = 0, throttled = 0, nospc_end = 0, refused = 0, wedged = 0;
    clock_t c0 = clock();
    unsigned long f0 = tc_fail;
    int rc;

    snprintf(label, sizeof label, "age %s", med_name[medium]);
    t_fs_init(&t, space_sim(medium, seed), 0);
    t_fs_format_mount(&t);
    m_init(&m);
    drv_init(&d, &t, &m, label, seed);
    d.nospc_ok = 1;
    vol = dev_bytes(t.sim);
    seg = (int64_t)t.fs->seg_pages * t.fs->page_size;
    nospc_last = 0;
    nunknown = 0;
    cap = probe_capacity(t.fs, label);
    hi = cap * 95 / 100;
    printf("  %s: volume %llu bytes, accepts %lld in one file; aged at <= %lld bytes\n", label,
           (unsigned long long)vol, (long long)cap, (long long)hi);

    /* fill to 95% */
    work_take(NULL, t.sim, &w0);
    while (m.bytes < hi - 1024 && !d.failed) {
        int32_t len = 1024 + (int32_t)t_randn(&rng, (uint32_t)(cap / 12));
        int fd;
        if (len > hi - m.bytes)
            len = (int32_t)(hi - m.bytes);
        snprintf(p, sizeof p, "/f%02u", (unsigned)t_randn(&rng, AGE_FILES));
        if (m_find(&m, p) >= 0)
            continue;
        fd = d_open(&d, p, CAIRN_O_WRONLY | CAIRN_O_CREAT);
        user += (uint64_t)write_pieces(&d, fd, len, &rng);
        d_close(&d, fd);
        if (nospc_seen(&d, p, 1))
            break;
    }
    printf("  %s: filled to %lld bytes (%.1f%% of what it accepts), %d files\n", label,
           (long long)m.bytes, 100.0 * (double)m.bytes / (double)cap, m.nnodes);

    target = vol * 10u * t_scale();
    while (user < target && !d.failed) {
        uint32_t c = t_randn(&rng, 100);
        int fd;
        int32_t size, len, off;
        long nospc0 = d.nospc;
        if (unknown_retry(&d) > 0)
            refused++;
        snprintf(p, sizeof p, "/f%02u", (unsigned)t_randn(&rng, AGE_FILES));
        if (is_unknown(p))
            continue;
        size = file_size(&m, p);
        ops++;
        d.step = ops;
        if (c < 55 || size < 0) { /* rewrite the whole file */
            len = 1024 + (int32_t)t_randn(&rng, (uint32_t)(cap / 12));
            make_room(&d, &rng, hi, len - (size > 0 ? size : 0), p);
            fd = d_open(&d, p, CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_TRUNC);
            user += (uint64_t)write_pieces(&d, fd, len, &rng);
            d_close(&d, fd);
        } else if (c < 90) { /* overwrite a range inside */
            off = (int32_t)t_randn(&rng, (uint32_t)size + 1);
            len = 1 + (int32_t)t_randn(&rng, 20000);
            if (off + len > size)
                make_room(&d, &rng, hi, off + len - size, p);
            fd = d_open(&d, p, CAIRN_O_RDWR);
            d_seek(&d, fd, off, CAIRN_SEEK_SET);
            user += (uint64_t)write_pieces(&d, fd, len, &rng);
            if (t_randn(&rng, 4) == 0)
                d_fsync(&d, fd);
            d_close(&d, fd);
        } else if (c < 97) {
            long r0 = d.nospc;
            d_remove(&d, p);
            refused += d.nospc != r0;
            nospc_last = d.nospc;
        } else {
            fd = d_open(&d, p, CAIRN_O_RDONLY);
            d_read(&d, fd, size + 1);
            d_close(&d, fd);
        }
        if (nospc_seen(&d, p, 1)) /* its content is unknown: it goes */
            throttled++;
        /* a volume where neither writes nor deletes get through is wedged */
        wedged = d.nospc != nospc0 ? wedged + 1 : 0;
        if (wedged > 100) {
            CHECK(0, "[%s] wedged: 100 operations in a row ran out of space (deletes "
                  "included) with %lld bytes live", label, (long long)m.bytes);
            break;
        }
        if (!d.failed && (ops % 40) == 0 && nunknown == 0) {
            remounts++;
            if (t_fs_remount(&t, label))
                d.failed = 1;
            else
                d_verify(&d);
        }
    }
    work_take(NULL, t.sim, &w1);
    work_diff(&w0, &w1, &wd);
    unknown_retry(&d);
    CHECK(nunknown == 0, "[%s] %d files whose writes ran out of space cannot be removed",
          label, nunknown);
    if (!d.failed && nunknown == 0 && wedged <= 100) {
        /* the last of the space: fill it until NOSPC, which must be the only error */
        int fd = cairn_open(t.fs, "/zfill", CAIRN_O_WRONLY | CAIRN_O_CREAT);
        int32_t n = fd < 0 ? fd : 0;
        int i;
        /* a volume aged to its last pages may refuse even the new file */
        CHECK(fd >= 0 || fd == CAIRN_ERR_NOSPC, "[%s] open /zfill: %d %s", label, fd,
              t_errname(fd));
        /* until a write takes nothing: a short write is not the end, since
         * the next call may take the metadata head's spare pages once its
         * collection finds nothing (session 43, alloc.c
         * cn_meta_spare_for_data: write 14 got 2,816 B, 15 and 16 took
         * spare pages) */
        for (i = 0; fd >= 0 && i < 100000; i++) {
            n = cairn_write(t.fs, fd, pbuf(4096, 7), 4096);
            if (n <= 0)
                break;
        }
        nospc_end = n == CAIRN_ERR_NOSPC;
        CHECK(n == CAIRN_ERR_NOSPC, "[%s] the final fill ends with NOSPC: %ld %s", label,
              (long)n, t_errname(n));
        if (fd >= 0) {
            rc = cairn_close(t.fs, fd);
            CHECK(rc == 0 || rc == CAIRN_ERR_NOSPC, "[%s] close on a full volume: %d %s",
                  label, rc, t_errname(rc));
            rc = cairn_remove(t.fs, "/zfill");
            CHECK(rc == 0, "[%s] remove on a full volume: %d %s", label, rc, t_errname(rc));
        }
        d_verify(&d);
        d.failed = 0;
        d.stop = 0;
        if (t_fs_remount(&t, label) == 0)
            d_verify(&d);
    }
    printf("  %s: %ld operations, %llu user bytes written (%.1f volume-writes), %ld remounts "
           "(check and full compare each), %ld operations ran out of space (NOSPC; the file was then removed), %ld times a remove was refused with NOSPC; final fill "
           "ended with NOSPC: %s\n",
           label, ops, (unsigned long long)user, (double)user / (double)vol, remounts,
           throttled, refused, nospc_end ? "yes" : "no");
    printf("  %s: write amplification %.2f bytes programmed per byte written (%.2f pages per "
           "page), %llu erases (%.1f per segment); %.1f s: %s\n",
           label, (double)wd.bytes / (double)(user ? user : 1),
           (double)wd.pages /
               ((double)(user ? user : 1) / (double)csim_geometry(t.sim)->page_size),
           (unsigned long long)wd.erases,
           (double)wd.erases / ((double)vol / (double)seg),
           (double)(clock() - c0) / CLOCKS_PER_SEC,
           d.failed || tc_fail != f0 ? "FAILED" : "ok");
    CHECK(!d.failed, "[%s] the model held", label);
    m_free(&m);
    t_fs_free(&t);
}

/* ------------------------------------------------------- (b) bounded work */

/* The worst write call measured, with a little margin (regression guard). */
struct guard {
    uint32_t erases, moved, extra;
};

/* The bound docs/DESIGN.md states ("Work per write call"). Off the hard
 * path a call moves at most its step of data pages plus, when the step
 * finishes a victim, what that victim still held (at most a segment), and
 * programs beyond its data at most those moves and a segment of the nodes,
 * journal and checkpoint of that commit. Each entry to the hard path
 * (cn_gc_collect, fs->call_hard) empties at most 4 victims, each at most a
 * segment of moves and a segment of nodes, journal and checkpoint. A call
 * enters the hard path once for each segment the free count stands below
 * the user reserve: metadata may take it down to GC's floor, so at most
 * CN_RESERVE_SEGS + 1 - CN_GC_FLOOR entries. */
#define HARD_ENTRIES_MAX (CN_RESERVE_SEGS + 1u - CN_GC_FLOOR)

/* Erases: a block is erased only just before a writer first programs into
 * it (device.c erase_ahead; a segment handed out erases its first block),
 * so the blocks a call erases are at most the blocks its programs fill
 * plus, for each writer, the one it opens and only partly fills (data, cold
 * and metadata heads, journal: CALL_WRITERS), plus one block of the anchor a
 * checkpoint switch left behind (ckpt.c cn_ckpt_erase_step; until session
 * 10 the whole anchor went in the switching call: 8 blocks of a 32 KiB
 * segment, and a call at scale 20 erased 21 blocks programming 189 pages). */
#define CALL_WRITERS 4u

static int call_within_bound(const struct cairn *fs, uint32_t n, const struct work *dw,
                             uint64_t extra, uint32_t step_pages, uint32_t seg_pages,
                             uint32_t ppb)
{
    uint64_t victims = 4u * (uint64_t)fs->call_hard;
    uint64_t move_bound = step_pages + seg_pages + victims * seg_pages;
    uint64_t extra_bound = move_bound + seg_pages + victims * seg_pages;
    uint64_t erase_bound = (dw->pages + ppb - 1) / ppb + CALL_WRITERS + 1u;
    if (dw->moved <= move_bound && extra <= extra_bound && dw->erases <= erase_bound)
        return 1;
    printf("    call %u: %llu moved (bound %llu), %llu pages beyond its data (bound %llu), "
           "%llu blocks erased (bound %llu), %u hard-path entries\n",
           n, (unsigned long long)dw->moved, (unsigned long long)move_bound,
           (unsigned long long)extra, (unsigned long long)extra_bound,
           (unsigned long long)dw->erases, (unsigned long long)erase_bound,
           (unsigned)fs->call_hard);
    return 0;
}

static void bounded_run(int medium, uint64_t seed, const struct guard *g)
{
    int seed_is_one = seed == 1 && t_scale() == 1;
    struct tfs t;
    struct wdev w;
    struct model m;
    struct mdrv d;
    uint64_t rng = seed * 7777u + (uint64_t)medium;
    int64_t cap, seg, ps;
    uint32_t nfiles = 0, i, ncalls, n, step_pages, seg_pages, bpl;
    char label[64], p[32];
    uint64_t *erases, *pages, *moved, *extra;
    uint64_t mx, med, p99, hard_calls = 0, worst_soft_moved = 0, worst_soft_erases = 0;
    uint64_t worst_hard_moved = 0, worst_hard_erases = 0, calls_erasing = 0;
    uint64_t over_bound = 0;
    uint32_t max_entries = 0;
    int fd = -1, fa = -1;
    long nospc_calls = 0, appends = 0;
    clock_t c0 = clock();
    struct cairn *fs;

    snprintf(label, sizeof label, "bounded %s", med_name[medium]);
    t_fs_init(&t, space_sim(medium, seed), 0);
    w_attach(&w, &t);
    t_fs_format_mount(&t);
    fs = t.fs;
    m_init(&m);
    drv_init(&d, &t, &m, label, seed);
    ps = (int64_t)csim_geometry(t.sim)->page_size;
    seg_pages = fs->seg_pages;
    seg = ps * seg_pages;
    step_pages = fs->gc_step;
    bpl = csim_geometry(t.sim)->blocks_per_lblock ? csim_geometry(t.sim)->blocks_per_lblock : 1;
    cap = probe_capacity(t.fs, label);

    /* fill to 80% with files of half a segment, delete half at random */
    d.nospc_ok = 1;
    while (m.bytes + seg / 2 < cap * 80 / 100 && !d.failed && nfiles < 1000) {
        snprintf(p, sizeof p, "/b%03u", (unsigned)nfiles++);
        fd = d_open(&d, p, CAIRN_O_WRONLY | CAIRN_O_CREAT);
        d_write(&d, fd, pbuf((int32_t)(seg / 2), nfiles), (int32_t)(seg / 2));
        d_close(&d, fd);
    }
    for (i = 0; i < nfiles && !d.failed; i++)
        if (t_randn(&rng, 2)) {
            snprintf(p, sizeof p, "/b%03u", (unsigned)i);
            d_remove(&d, p);
        }
    printf("  %s: accepts %lld bytes; filled to 80%%, half deleted: %lld live (%.0f%%) in %d "
           "files, garbage spread around; %lld bytes free as fs_stat says\n",
           label, (long long)cap, (long long)m.bytes, 100.0 * (double)m.bytes / (double)cap,
           m.nnodes, (long long)free_now(t.fs));

    ncalls = 4000 * t_scale();
    erases = (uint64_t *)calloc(ncalls, sizeof *erases);
    pages = (uint64_t *)calloc(ncalls, sizeof *pages);
    moved = (uint64_t *)calloc(ncalls, sizeof *moved);
    extra = (uint64_t *)calloc(ncalls, sizeof *extra);
    if (!erases || !pages || !moved || !extra)
        t_fatal("out of memory");
    fd = -1;
    for (n = 0; n < ncalls && !d.failed; n++) {
        struct work a, b, dw;
        int32_t len = t_randn(&rng, 2) ? 256 : 4096, size, off;
        uint32_t free_before;
        int hard, append = m.bytes + len < cap * 60 / 100 && t_randn(&rng, 2);
        long nospc0 = d.nospc;
        if (append) {
            if (fd >= 0)
                d_close(&d, fd);
            fd = -1;
            if (fa < 0)
                fa = d_open(&d, "/new", CAIRN_O_WRONLY | CAIRN_O_CREAT | CAIRN_O_APPEND);
            if (fa < 0)
                break;
            free_before = cn_free_segs(fs);
            hard = free_before <= CN_RESERVE_SEGS;
            work_take(&w, t.sim, &a);
            d.step = (long)n;
            d_write(&d, fa, pbuf(len, t_rand(&rng)), len);
            work_take(&w, t.sim, &b);
            off = file_size(&m, "/new") - len;
            appends++;
        } else {
        if (fa >= 0)
            d_close(&d, fa);
        fa = -1;
        if (fd < 0 || n % 16 == 0) {
            if (m.nnodes == 0)
                break;
            int k;
            if (fd >= 0)
                d_close(&d, fd);
            do
                k = (int)t_randn(&rng, (uint32_t)m.nnodes);
            while (m.objs[m.nodes[k].obj].type != CAIRN_TYPE_FILE);
            snprintf(p, sizeof p, "%s", m.nodes[k].path);
            fd = d_open(&d, p, CAIRN_O_RDWR);
        }
        size = file_size(&m, p);
        off = (int32_t)t_randn(&rng, (uint32_t)(size - len + 1));
        if (len == 4096)
            off -= off % (int32_t)(ps < 4096 ? ps : 4096);
        d_seek(&d, fd, off, CAIRN_SEEK_SET);
        free_before = cn_free_segs(fs);
        work_take(&w, t.sim, &a);
        d.step = (long)n;
        d_write(&d, fd, pbuf(len, t_rand(&rng)), len);
        work_take(&w, t.sim, &b);
        hard = fs->call_hard > 0; /* the call reached the user reserve */
        }
        if (d.nospc != nospc0) {
            nospc_calls++;
            if (nospc_calls <= 3)
            {
                printf("    call %u: %s of %ld B ran out of space at %.0f%% live\n", n,
                       append ? "append" : "overwrite", (long)len,
                       100.0 * (double)m.bytes / (double)cap);
                space_state(fs);
            }
        }
        work_diff(&a, &b, &dw);
        if (d.nospc != nospc0) { /* the file's content is unknown: it goes */
            if (append) {
                d_close(&d, fa);
                fa = -1;
                d_remove(&d, "/new");
            } else {
                d_close(&d, fd);
                fd = -1;
                d_remove(&d, p);
            }
        }
        extra[n] = dw.pages > (uint64_t)((len + ps - 1) / ps) ? dw.pages - (uint64_t)((len + ps - 1) / ps) : 0;
        if (!call_within_bound(fs, n, &dw, extra[n], step_pages, seg_pages, seg_pages / bpl) &&
            ++over_bound <= 3)
            printf("    call %u: beyond the stated bound\n", n);
        /* erase blocks, in segments rounded up (segments are erased a block at a time) */
        dw.erases = (dw.erases + bpl - 1) / bpl;
        erases[n] = dw.erases;
        pages[n] = dw.pages;
        moved[n] = dw.moved;
        calls_erasing += dw.erases > 0;
        max_entries = fs->call_hard > max_entries ? fs->call_hard : max_entries;
        if (hard) {
            hard_calls++;
            worst_hard_moved = dw.moved > worst_hard_moved ? dw.moved : worst_hard_moved;
            worst_hard_erases = dw.erases > worst_hard_erases ? dw.erases : worst_hard_erases;
        } else {
            if (dw.moved > worst_soft_moved || dw.erases > worst_soft_erases)
                if (dw.moved > step_pages || dw.erases > 1)
                    printf("    call %u (%ld B at %ld, %u free segments before): %llu erases, "
                           "%llu pages programmed, %llu moved\n",
                           n, (long)len, (long)off, free_before,
                           (unsigned long long)dw.erases, (unsigned long long)dw.pages,
                           (unsigned long long)dw.moved);
            worst_soft_moved = dw.moved > worst_soft_moved ? dw.moved : worst_soft_moved;
            worst_soft_erases = dw.erases > worst_soft_erases ? dw.erases : worst_soft_erases;
        }
    }
    if (fd >= 0)
        d_close(&d, fd);
    if (fa >= 0)
        d_close(&d, fa);
    if (!d.failed && t_fs_remount(&t, label) == 0)
        d_verify(&d);
    n = n < ncalls ? n : ncalls;
    CHECK(nospc_calls == 0, "[%s] %ld write calls ran out of space with at most 60%% of what "
          "the volume accepts live", label, nospc_calls);
    printf("  %s: %u write calls of 256 B or 4 KiB (%ld appends to a new file while under 60%% "
           "live, the rest overwrites), %llu of them erased, %llu reached the hard path; "
           "%.0f%% live at the end\n",
           label, n, appends, (unsigned long long)calls_erasing, (unsigned long long)hard_calls,
           100.0 * (double)m.bytes / (double)cap);
    {
        uint64_t em, mm, xm;
        stats(erases, n, &em, &med, &p99);
        stats(moved, n, &mm, &med, &p99);
        stats(extra, n, &xm, &med, &p99);
        /* The stated bound held call by call (call_within_bound: moves,
         * pages and erase blocks). At seed 1 the worst calls stay well
         * inside (g: measured). */
        CHECK(over_bound == 0 && max_entries <= HARD_ENTRIES_MAX,
              "[%s] every write call within the stated bound (%llu over), at most %u entries "
              "to the hard path per call (%u); worst: %llu segments' worth of erase blocks, "
              "%llu moved, %llu beyond its data",
              label, (unsigned long long)over_bound, HARD_ENTRIES_MAX, max_entries,
              (unsigned long long)em, (unsigned long long)mm, (unsigned long long)xm);
        if (seed_is_one)
            CHECK(em <= g->erases && mm <= g->moved && xm <= g->extra,
                  "[%s] seed 1: worst write call %llu erases (measured guard %u), %llu moved "
                  "(%u), %llu beyond its data (%u)",
                  label, (unsigned long long)em, (unsigned)g->erases, (unsigned long long)mm,
                  (unsigned)g->moved, (unsigned long long)xm, (unsigned)g->extra);
    }
    stats(erases, n, &mx, &med, &p99);
    printf("  %s: segment erases per call: max %llu, median %llu, p99 %llu\n", label,
           (unsigned long long)mx, (unsigned long long)med, (unsigned long long)p99);
    stats(pages, n, &mx, &med, &p99);
    printf("  %s: pages programmed per call: max %llu, median %llu, p99 %llu\n", label,
           (unsigned long long)mx, (unsigned long long)med, (unsigned long long)p99);
    stats(extra, n, &mx, &med, &p99);
    printf("  %s: pages programmed beyond the call's own data: max %llu, median %llu, p99 "
           "%llu\n",
           label, (unsigned long long)mx, (unsigned long long)med, (unsigned long long)p99);
    {
        uint64_t extra_max = mx;
        stats(moved, n, &mx, &med, &p99);
        printf("  %s: pages moved by GC per call: max %llu, median %llu, p99 %llu (gc_step_pages "
               "%u, segment %u pages); outside the hard reserve max %llu moved, %llu erases\n",
               label, (unsigned long long)mx, (unsigned long long)med, (unsigned long long)p99,
               step_pages, seg_pages, (unsigned long long)worst_soft_moved,
               (unsigned long long)worst_soft_erases);
        /* Off the hard path (call_within_bound with no entry): the step's
         * data pages plus, if it finishes its victim, what the victim held.
         * Erases are printed: a call's own data, nodes and journal may open
         * segments besides GC. */
        CHECK(worst_soft_moved <= step_pages + seg_pages,
              "[%s] pages moved by one write call that stayed off the hard path: %llu > %u",
              label, (unsigned long long)worst_soft_moved, step_pages + seg_pages);
        printf("  %s: stated bound met by every call (off the hard path <= %u moved: %llu at "
               "most; on it <= %u moved per entry, 4 victims; worst %llu moved, %u entries in "
               "one call); erases per call off the hard path max %llu, on it max %llu\n",
               label, step_pages + seg_pages, (unsigned long long)worst_soft_moved,
               4u * seg_pages, (unsigned long long)worst_hard_moved, max_entries,
               (unsigned long long)worst_soft_erases, (unsigned long long)worst_hard_erases);
        (void)extra_max;
    }
    printf("  %s: %.1f s\n", label, (double)(clock() - c0) / CLOCKS_PER_SEC);
    free(erases);
    free(pages);
    free(moved);
    free(extra);
    CHECK(!d.failed, "[%s] the model held", label);
    m_free(&m);
    t_fs_free(&t);
}

/* -------------------------------------------------------------- (c) wear */

static void wear_run(int medium, uint64_t seed, double bound)
{
    struct tfs t;
    struct model m;
    struct mdrv d;
    struct cairn_fsinfo fi;
    uint64_t rng = seed * 31337u + (uint64_t)medium, user = 0, target, vol, sum = 0;
    int64_t cap, data, chunk;
    uint32_t b, nblocks, bmax = 0, bmin = UINT32_MAX, nb = 0, anchor_max = 0, hot_writes = 0;
    uint32_t nfiles = 16, nhot = 2, i;
    int32_t fsize;
    int fds[16];
    char label[64], p[32];
    clock_t c0 = clock();
    double ratio_fs, ratio_blk;
    const struct cairn_geometry *g;

    snprintf(label, sizeof label, "wear %s", med_name[medium]);
    t_fs_init(&t, space_sim(medium, seed), 0);
    t.cfg.max_open = 16;
    t_fs_format_mount(&t);
    m_init(&m);
    drv_init(&d, &t, &m, label, seed);
    g = csim_geometry(t.sim);
    vol = dev_bytes(t.sim);
    cap = probe_capacity(t.fs, label);
    data = cap * 60 / 100;
    chunk = medium == T_NOR ? 4096 : 16384;
    fsize = (int32_t)(data / (int64_t)nfiles);
    fsize -= fsize % (int32_t)chunk;
    /* 16 files of equal size: 2 hot (12.5% of the data) get 90% of the writes */
    for (i = 0; i < nfiles && !d.failed; i++) {
        snprintf(p, sizeof p, "/w%02u", (unsigned)i);
        fds[i] = d_open(&d, p, CAIRN_O_RDWR | CAIRN_O_CREAT);
        d_write(&d, fds[i], pbuf(fsize, i), fsize);
        d_fsync(&d, fds[i]);
    }
    target = vol * 50u * t_scale();
    while (user < target && !d.failed) {
        uint32_t f = t_randn(&rng, 100) < 90 ? t_randn(&rng, nhot)
                                              : nhot + t_randn(&rng, nfiles - nhot);
        int32_t off = (int32_t)(t_randn(&rng, (uint32_t)(fsize / chunk)) * (uint32_t)chunk);
        hot_writes += f < nhot;
        d_seek(&d, fds[f], off, CAIRN_SEEK_SET);
        d_write(&d, fds[f], pbuf((int32_t)chunk, t_rand(&rng)), (int32_t)chunk);
        user += (uint64_t)chunk;
        if (t_randn(&rng, 64) == 0)
            d_fsync(&d, fds[f]);
    }
    for (i = 0; i < nfiles; i++)
        d_close(&d, fds[i]);
    if (!d.failed && t_fs_remount(&t, label) == 0)
        d_verify(&d);
    CHECK(cairn_fs_stat(t.fs, &fi) == 0, "[%s] fs_stat", label);
    /* per erase block from the simulator, the anchors (segments 0 and 1) apart */
    nblocks = g->block_count;
    for (b = 0; b < nblocks; b++) {
        uint32_t e = csim_erase_count(t.sim, b), s = b / (g->blocks_per_lblock ? g->blocks_per_lblock : 1);
        if (s < 2) {
            anchor_max = e > anchor_max ? e : anchor_max;
            continue;
        }
        sum += e;
        nb++;
        bmax = e > bmax ? e : bmax;
        bmin = e < bmin ? e : bmin;
    }
    ratio_fs = fi.erase_mean ? (double)fi.erase_max / (double)fi.erase_mean : 0;
    ratio_blk = sum ? (double)bmax * nb / (double)sum : 0;
    printf("  %s: %llu bytes written (%.0f volume-writes), %.1f%% of writes to %.1f%% of the "
           "data (%lld bytes live)\n",
           label, (unsigned long long)user, (double)user / (double)vol,
           100.0 * hot_writes / (double)(user / (uint64_t)chunk), 100.0 * nhot / nfiles,
           (long long)m.bytes);
    printf("  %s: fs_stat erase min %u, max %u, mean %u: max/mean %.3f; per erase block "
           "(simulator): min %u, max %u, mean %.1f: max/mean %.3f; anchor blocks up to %u "
           "erases (%.2f x the mean); wear_spread %u; %.1f s\n",
           label, (unsigned)fi.erase_min, (unsigned)fi.erase_max, (unsigned)fi.erase_mean,
           ratio_fs, (unsigned)bmin, (unsigned)bmax, nb ? (double)sum / nb : 0.0, ratio_blk,
           (unsigned)anchor_max, sum ? (double)anchor_max * nb / (double)sum : 0.0,
           (unsigned)t.fs->wear_spread, (double)(clock() - c0) / CLOCKS_PER_SEC);
    CHECK(ratio_blk > 0 && ratio_blk < bound,
          "[%s] max/mean erase count %.3f < %.2f", label, ratio_blk, bound);
    CHECK(!d.failed, "[%s] the model held", label);
    m_free(&m);
    t_fs_free(&t);
}

/* --------------------------------------------------- (d) gc, fallocate, heads */

/* After idle calls have erased the free space ahead, a burst of writes that
 * fits in it (the free segments beyond the reserve and the heads' next
 * segments) erases nothing. */
static void burst_after_idle(struct mdrv *d, struct tfs *t, const char *label)
{
    struct csim_counters c0, c1;
    int64_t seg = (int64_t)t->fs->seg_pages * t->fs->page_size;
    uint32_t fits = cn_free_segs(t->fs), i, n;
    int fd;
    fits = fits > CN_RESERVE_SEGS + 3u ? fits - CN_RESERVE_SEGS - 3u : 0;
    n = (uint32_t)(fits * seg / 4096);
    csim_counters(t->sim, &c0);
    fd = d_open(d, "/burst", CAIRN_O_WRONLY | CAIRN_O_CREAT);
    for (i = 0; i < n && !d->failed; i++)
        d_write(d, fd, pbuf(4096, i), 4096);
    d_close(d, fd);
    csim_counters(t->sim, &c1);
    printf("  %s: a burst of %u x 4 KiB after the idle calls: %llu erases\n", label,
           (unsigned)n, (unsigned long long)(c1.erases - c0.erases));
    CHECK(n > 0 && c1.erases == c0.erases,
          "[%s] the burst into pre-erased space erased nothing: %llu erases", label,
          (unsigned long long)(c1.erases - c0.erases));
}

static void gc_api(int medium, uint64_t seed)
{
    struct tfs t;
    struct wdev w;
    struct model m;
    struct mdrv d;
    int64_t cap, seg, before, after;
    uint32_t i, nf = 0, budgets[4] = {1, 5, 16, 64};
    int32_t got, total = 0;
    char label[64], p[32];
    int fd, calls = 0;
    uint32_t pre_erased = 0, n_unerased;

    snprintf(label, sizeof label, "gc api %s", med_name[medium]);
    t_fs_init(&t, space_sim(medium, seed), 0);
    w_attach(&w, &t);
    t_fs_format_mount(&t);
    m_init(&m);
    drv_init(&d, &t, &m, label, seed);
    seg = (int64_t)t.fs->seg_pages * t.fs->page_size;
    cap = probe_capacity(t.fs, label);
    while (m.bytes + seg / 3 < cap * 85 / 100 && !d.failed) {
        snprintf(p, sizeof p, "/g%03u", (unsigned)nf++);
        fd = d_open(&d, p, CAIRN_O_WRONLY | CAIRN_O_CREAT);
        d_write(&d, fd, pbuf((int32_t)(seg / 3), nf), (int32_t)(seg / 3));
        d_close(&d, fd);
    }
    for (i = 0; i < nf; i += 2) {
        snprintf(p, sizeof p, "/g%03u", (unsigned)i);
        d_remove(&d, p);
    }
    d_sync(&d);
    before = free_now(t.fs);
    got = cairn_gc(t.fs, 0);
    CHECK(got == 0, "[%s] cairn_gc(0) moves nothing: %ld", label, (long)got);
    for (i = 0; i < 400 + t.fs->seg_count && !d.failed; i++) {
        uint32_t budget = budgets[i % 4];
        uint64_t m0 = w.moved;
        uint32_t free0 = cn_free_segs(t.fs);
        struct csim_counters c0, c1;
        csim_counters(t.sim, &c0);
        got = cairn_gc(t.fs, budget);
        csim_counters(t.sim, &c1);
        calls++;
        CHECK(got >= 0 && (uint32_t)got <= budget,
              "[%s] cairn_gc(%u) returned %ld", label, budget, (long)got);
        CHECK(w.moved - m0 <= budget, "[%s] cairn_gc(%u) moved %llu pages on the device",
              label, budget, (unsigned long long)(w.moved - m0));
        if (got > 0 && w.moved == m0 && c1.prog_calls == c0.prog_calls) {
            /* nothing to collect: one free segment erased ahead of need, or
             * the next block ahead of a writer in a lazily erased segment */
            CHECK(c1.erases - c0.erases == t.fs->seg_pages / csim_geometry(t.sim)->pages_per_block ||
                      c1.erases - c0.erases == 1,
                  "[%s] an idle erase call erased one segment or one block: %llu blocks", label,
                  (unsigned long long)(c1.erases - c0.erases));
            pre_erased++;
            continue;
        }
        if (got <= 0 && cn_free_segs(t.fs) <= free0)
            break;
        if (got > 0)
            total += got;
    }
    after = free_now(t.fs);
    printf("  %s: %d cairn_gc calls with budgets 1/5/16/64 moved %ld pages; free segments %u; "
           "fs_stat free %lld -> %lld bytes\n",
           label, calls, (long)total, (unsigned)cn_free_segs(t.fs), (long long)before,
           (long long)after);
    CHECK(total > 0, "[%s] idle-time GC moved something", label);
    CHECK(got == 0 && calls < 400, "[%s] idle-time GC ends with 0 (nothing worth collecting) "
          "after %d calls: %ld", label, calls, (long)got);
    got = cairn_gc(t.fs, 64);
    CHECK(got == 0, "[%s] and stays at 0: %ld", label, (long)got);
    CHECK(cn_free_segs(t.fs) >= CN_RESERVE_SEGS + 3u,
          "[%s] idle-time GC freed segments: %u free", label, (unsigned)cn_free_segs(t.fs));
    for (i = t.fs->seg_base, n_unerased = 0; i < t.fs->seg_count; i++)
        n_unerased += t.fs->segs[i].state == CN_SEG_FREE &&
                      !(t.fs->segs[i].flags & CN_SF_EVICT); /* (a NAND standby stays) */
    printf("  %s: %u of those calls erased a free segment ahead of need\n", label,
           (unsigned)pre_erased);
    CHECK(pre_erased > 0 && n_unerased == 0,
          "[%s] idle calls erased every free segment ahead: %u erased, %u left", label,
          (unsigned)pre_erased, (unsigned)n_unerased);
    burst_after_idle(&d, &t, label);
    d_verify(&d);
    if (!d.failed && t_fs_remount(&t, label) == 0)
        d_verify(&d);
    CHECK(!d.failed, "[%s] the model held", label);
    m_free(&m);
    t_fs_free(&t);
}

static void fallocate_run(int medium, uint64_t seed, int32_t rec, int sync_each, uint32_t nand_blocks)
{
    struct tfs t;
    int64_t cap, seg, resv, other = 0, mine = 0;
    char label[64];
    int fa, fb, rc;
    int32_t n;
    uint8_t *buf;

    snprintf(label, sizeof label, "fallocate %s%s records %ld%s", med_name[medium],
             nand_blocks ? " (other size)" : "", (long)rec, sync_each ? " synced" : "");
    t_fs_init(&t, nand_blocks ? t_sim_model("nand-dhara", nand_blocks, 1, seed)
                              : space_sim(medium, seed), 0);
    t_fs_format_mount(&t);
    seg = (int64_t)t.fs->seg_pages * t.fs->page_size;
    cap = probe_capacity(t.fs, label);
    resv = cap / 4;
    resv -= resv % 4096;
    buf = (uint8_t *)malloc((size_t)resv);
    t_pattern(buf, (size_t)resv, 99);
    fa = cairn_open(t.fs, "/video", CAIRN_O_RDWR | CAIRN_O_CREAT);
    CHECK(fa >= 0, "[%s] open /video: %d", label, fa);
    rc = cairn_fallocate(t.fs, fa, (int32_t)(2 * cap));
    CHECK(rc == CAIRN_ERR_NOSPC, "[%s] fallocate twice the volume: %d %s", label, rc,
          t_errname(rc));
    rc = cairn_fallocate(t.fs, fa, (int32_t)resv);
    CHECK(rc == 0, "[%s] fallocate %lld bytes: %d %s", label, (long long)resv, rc,
          t_errname(rc));
    rc = cairn_fallocate(t.fs, -1, 100);
    CHECK(rc == CAIRN_ERR_BADF, "[%s] fallocate on a bad handle: %d", label, rc);
    /* another file takes what is left */
    fb = cairn_open(t.fs, "/other", CAIRN_O_WRONLY | CAIRN_O_CREAT);
    while ((n = cairn_write(t.fs, fb, buf, 4096)) == 4096)
        other += n;
    if (n > 0) {
        other += n;
        n = cairn_write(t.fs, fb, buf, 4096);
    }
    CHECK(n == CAIRN_ERR_NOSPC, "[%s] the other file ends with NOSPC: %ld %s", label, (long)n,
          t_errname(n));
    rc = cairn_close(t.fs, fb);
    CHECK(rc == 0, "[%s] close /other: %d %s", label, rc, t_errname(rc));
    /* the reserved file still writes all of its reservation */
    while (mine < resv) {
        int32_t want = resv - mine < rec ? (int32_t)(resv - mine) : rec;
        n = cairn_write(t.fs, fa, buf + mine, want);
        if (n != want)
            break;
        mine += n;
        if (sync_each && (rc = cairn_file_sync(t.fs, fa)) != 0) {
            n = rc;
            break;
        }
    }
    CHECK(mine == resv, "[%s] the reserved file wrote %lld of %lld bytes (then %ld %s)", label,
          (long long)mine, (long long)resv, (long)n, t_errname(n));
    rc = cairn_close(t.fs, fa);
    CHECK(rc == 0, "[%s] close /video: %d %s", label, rc, t_errname(rc));
    printf("  %s: reserved %lld bytes; the other file got %lld bytes then NOSPC; the reserved "
           "file then wrote %lld bytes (volume accepts %lld, segment %lld)\n",
           label, (long long)resv, (long long)other, (long long)mine, (long long)cap,
           (long long)seg);
    if (t_fs_remount(&t, label) == 0)
        t_check_file(t.fs, "/video", buf, (int32_t)mine, label);
    free(buf);
    t_fs_free(&t);
}

/* The calls around a promise: errors, what free_bytes shows while it stands
 * (the promise and the segment it holds for metadata, counted once however
 * often it is extended), and all of it back once the file is closed. */
static void fallocate_contract(int medium, uint64_t seed)
{
    struct tfs t;
    char label[64];
    int fd, ro, dd, rc;
    int64_t f0, f1, f2, f3, seg;
    int32_t ps;

    snprintf(label, sizeof label, "fallocate contract %s", med_name[medium]);
    t_fs_init(&t, space_sim(medium, seed), 0);
    t_fs_format_mount(&t);
    ps = (int32_t)t.fs->page_size;
    seg = (int64_t)t.fs->seg_pages * ps;
    rc = t_write_file(t.fs, "/base", pbuf(3 * ps + 10, 1), 3 * ps + 10);
    CHECK(rc == 0, "[%s] write /base: %d", label, rc);
    fd = cairn_open(t.fs, "/base", CAIRN_O_RDWR);
    ro = cairn_open(t.fs, "/base", CAIRN_O_RDONLY);
    dd = cairn_opendir(t.fs, "/");
    CHECK(fd >= 0 && ro >= 0 && dd >= 0, "[%s] open: %d %d %d", label, fd, ro, dd);
    rc = cairn_fallocate(t.fs, fd, -1);
    CHECK(rc == CAIRN_ERR_INVAL, "[%s] negative length: %d %s", label, rc, t_errname(rc));
    rc = cairn_fallocate(t.fs, ro, 100 * ps);
    CHECK(rc == CAIRN_ERR_BADF, "[%s] read-only handle: %d %s", label, rc, t_errname(rc));
    rc = cairn_fallocate(t.fs, dd, 100 * ps);
    CHECK(rc == CAIRN_ERR_BADF, "[%s] directory handle: %d %s", label, rc, t_errname(rc));
    f0 = free_now(t.fs);
    rc = cairn_fallocate(t.fs, fd, 2 * ps);
    f1 = free_now(t.fs);
    CHECK(rc == 0 && f1 == f0, "[%s] a length below the size: %d, free_bytes %lld -> %lld",
          label, rc, (long long)f0, (long long)f1);
    CHECK(cairn_size(t.fs, fd) == 3 * ps + 10, "[%s] the size stays %ld", label,
          (long)cairn_size(t.fs, fd));
    rc = cairn_fallocate(t.fs, fd, 20 * ps);
    f1 = free_now(t.fs);
    CHECK(rc == 0 && f0 - f1 == 16 * (int64_t)ps + 2 * seg,
          "[%s] a promise of 16 pages: %d, free_bytes %lld -> %lld (16 pages and two segments: "
          "%lld)", label, rc, (long long)f0, (long long)f1,
          (long long)(16 * (int64_t)ps + 2 * seg));
    rc = cairn_fallocate(t.fs, fd, 30 * ps);
    f2 = free_now(t.fs);
    CHECK(rc == 0 && f1 - f2 == 10 * (int64_t)ps,
          "[%s] extended by 10 pages: %d, free_bytes %lld -> %lld", label, rc,
          (long long)f1, (long long)f2);
    CHECK(cairn_size(t.fs, fd) == 3 * ps + 10, "[%s] the size stays %ld", label,
          (long)cairn_size(t.fs, fd));
    rc = cairn_close(t.fs, ro);
    f3 = free_now(t.fs);
    CHECK(rc == 0 && f3 == f2, "[%s] another handle's close keeps it: free_bytes %lld -> %lld",
          label, (long long)f2, (long long)f3);
    rc = cairn_close(t.fs, fd);
    f3 = free_now(t.fs);
    CHECK(rc == 0 && f3 == f0, "[%s] the last close gives it back: free_bytes %lld, before %lld",
          label, (long long)f3, (long long)f0);
    (void)cairn_closedir(t.fs, dd);
    t_fs_free(&t);
}

/* Which file each page of the device belongs to (pages start with their
 * owner's letter and page number), and whether any segment holds both. */
static void heads_run(int medium, uint8_t heads, int64_t *shared_out)
{
    struct tfs t;
    char label[64];
    const struct cairn_geometry *g;
    uint32_t ps, page, npages, seg_pages, s, nseg, pages_each = 0;
    uint8_t *pg;
    uint32_t *cnt;
    int fp, fq, i, rc;
    int64_t shared = 0, seen_p = 0, seen_q = 0;
    int32_t piece = 4096;

    snprintf(label, sizeof label, "heads %s data_heads=%u", med_name[medium], heads);
    /* NAND: the default 64-block volume (its COLD head is its own) */
    t_fs_init(&t, medium == T_NOR ? t_sim_new(T_NOR, 5) : t_sim_new(T_NAND, 5), 0);
    t.cfg.data_heads = heads;
    t_fs_format_mount(&t);
    g = csim_geometry(t.sim);
    ps = g->page_size;
    seg_pages = t.fs->seg_pages;
    npages = g->pages_per_block * g->block_count;
    nseg = npages / seg_pages;
    pg = (uint8_t *)malloc(ps > (uint32_t)piece ? ps : (uint32_t)piece);
    fp = cairn_open(t.fs, "/p", CAIRN_O_WRONLY | CAIRN_O_CREAT);
    fq = cairn_open(t.fs, "/q", CAIRN_O_WRONLY | CAIRN_O_CREAT);
    CHECK(fp >= 0 && fq >= 0, "[%s] open: %d %d", label, fp, fq);
    /* 3 segments each, in 4 KiB pieces, alternating */
    for (i = 0; (uint32_t)i * (uint32_t)piece < 3u * seg_pages * ps; i++) {
        int f;
        for (f = 0; f < 2; f++) {
            uint32_t k;
            for (k = 0; k < (uint32_t)piece / ps || k == 0; k++) {
                uint32_t fpage = ((uint32_t)i * (uint32_t)piece) / ps + k;
                t_pattern(pg + k * ps, ps, (uint64_t)fpage * 2 + (uint64_t)f);
                pg[k * ps] = f ? 'Q' : 'P';
                pg[k * ps + 1] = 0xA5;
                pg[k * ps + 2] = 0x5A;
                if (ps >= (uint32_t)piece)
                    break;
            }
            if (ps > (uint32_t)piece)
                t_fatal("page larger than a piece");
            rc = (int)cairn_write(t.fs, f ? fq : fp, pg, piece);
            CHECK(rc == piece, "[%s] write: %d %s", label, rc, t_errname(rc));
        }
        pages_each += (uint32_t)piece / ps;
    }
    cairn_close(t.fs, fp);
    cairn_close(t.fs, fq);
    cnt = (uint32_t *)calloc((size_t)nseg * 2, sizeof *cnt);
    for (page = 0; page < npages; page++) {
        csim_peek(t.sim, page, pg, NULL);
        if (pg[1] != 0xA5 || pg[2] != 0x5A || (pg[0] != 'P' && pg[0] != 'Q'))
            continue;
        cnt[(page / seg_pages) * 2 + (pg[0] == 'Q')]++;
    }
    for (s = 0; s < nseg; s++) {
        seen_p += cnt[2 * s];
        seen_q += cnt[2 * s + 1];
        if (cnt[2 * s] && cnt[2 * s + 1])
            shared++;
    }
    printf("  %s: %u pages each written in 4 KiB pieces side by side; found %lld + %lld "
           "pages; segments holding both files: %lld\n",
           label, pages_each, (long long)seen_p, (long long)seen_q, (long long)shared);
    CHECK(seen_p >= pages_each && seen_q >= pages_each, "[%s] every page found", label);
    if (t_fs_remount(&t, label) != 0)
        shared = -1;
    free(cnt);
    free(pg);
    t_fs_free(&t);
    *shared_out = shared;
}

static void heads_test(int medium)
{
    int64_t two, one;
    heads_run(medium, 2, &two);
    heads_run(medium, 1, &one);
    CHECK(two == 0, "[heads %s] with data_heads=2 no segment holds both files: %lld",
          med_name[medium], (long long)two);
    CHECK(one > 0, "[heads %s] with data_heads=1 they share segments: %lld", med_name[medium],
          (long long)one);
}

int main(int argc, char **argv)
{
    uint64_t seed = t_env_u64("CAIRN_TEST_SEED", 1);
    const char *only = argc > 1 ? argv[1] : getenv("CAIRN_TEST_ONLY");
    int med;
    clock_t c0 = clock();
    /* worst call measured on seed 1 at scale 1 (segment erases, moved pages,
     * pages programmed beyond the call's data), plus a margin: a regression
     * guard for that run only; other seeds are held to the stated bound.
     * NOR's worst call is two hard-path entries in one call, which some
     * seeds meet and others not: 296 moved and 502 beyond at seed 1 since
     * the last leaf splits nine tenths full (183 / 295 before; seeds 2-7
     * before that change: 195-304 moved, after it 174-308). NAND: 87 moved
     * and 108 beyond before the standby (anchor.c) took a segment, 93 and 112
     * after, 109 and 133 since GC counts a segment for a journal switch its
     * records would cause (session 29: steps wait, the hard path does more).
     * Session 43: the volume accepts 3,117,056 bytes in one file instead of
     * 3,014,656 (a full volume's data may take the metadata head's spare
     * pages), so the run fills to other sizes from its start: worst call 129
     * moved and 154 beyond (2 erases, 66 calls on the hard path instead of
     * 78, at most 2 erases a call instead of 3) */
    static const struct guard guards[2] = {{8, 330, 560}, {4, 140, 170}};
    t_begin("test_space");
    printf("test_space: fill/age (10 volume-writes x scale %u), bounded work at 80%% full, "
           "wear (50 volume-writes x scale), cairn_gc, cairn_fallocate, data heads; NOR "
           "1 MiB and NAND 4 MiB; seed %llu\n",
           (unsigned)t_scale(), (unsigned long long)seed);
    for (med = T_NOR; med <= T_NAND; med++) {
        clock_t c1 = clock();
        if (!only || strstr(only, "api")) {
            gc_api(med, seed);
            fallocate_contract(med, seed);
            fallocate_run(med, seed, 4096, 0, 0);
            fallocate_run(med, seed, 40, 1, 0);
            fallocate_run(med, seed, 1000, 0, 0);
            /* 40 B synced on other NAND sizes: 33 and 40 blocks broke the
             * promise (wear levelling at the promise floor), 64 (a cold head
             * of GC's own) too with a one-segment margin */
            if (med == T_NAND) {
                fallocate_run(med, seed, 40, 1, 40);
                fallocate_run(med, seed, 40, 1, 64);
            }
            heads_test(med);
        }
        if (!only || strstr(only, "bounded"))
            bounded_run(med, seed, &guards[med]);
        if (!only || strstr(only, "age"))
            age_run(med, seed);
        if (!only || strstr(only, "wear"))
            wear_run(med, seed, 1.3);
        printf("%s: %.1f s\n", med_name[med], (double)(clock() - c1) / CLOCKS_PER_SEC);
    }
    printf("test_space: %.1f s\n", (double)(clock() - c0) / CLOCKS_PER_SEC);
    return t_summary("test_space");
}
