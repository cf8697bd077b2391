/*
 * Simulator image files: exact round trips (data, spare, erase counts, bad
 * marks, NAND program state, weak blocks, card state), lazy storage of big
 * devices, and clean rejection of damaged files.
 */
#define _XOPEN_SOURCE 700

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "simutil.h"

#define IMG "test_sim_image.img"

static csim *open_img(const char *path, const char *model, int create,
                      uint32_t blocks, uint64_t seed)
{
    struct csim_options o;
    memset(&o, 0, sizeof(o));
    o.image_path = path;
    o.create = create;
    o.block_count = blocks;
    o.seed = seed;
    return csim_new(model, &o);
}

static uint8_t *slurp(const char *path, long *n)
{
    FILE *f = fopen(path, "rb");
    uint8_t *b;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = xmalloc((size_t)*n);
    if (fread(b, 1, (size_t)*n, f) != (size_t)*n)
        *n = -1;
    fclose(f);
    return b;
}

static void spit(const char *path, const uint8_t *b, long n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(b, 1, (size_t)n, f);
        fclose(f);
    }
}

static uint32_t crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    size_t i;
    int k;
    for (i = 0; i < n; i++) {
        c ^= p[i];
        for (k = 0; k < 8; k++)
            c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return ~c;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Snapshot of every page's data + spare. */
static uint8_t *snapshot(const csim *s, size_t *n)
{
    const struct cairn_geometry *g = csim_geometry(s);
    size_t per = (size_t)g->page_size + g->spare_size;
    uint32_t pages = g->block_count * g->pages_per_block, i;
    uint8_t *b = xmalloc(per * pages);
    for (i = 0; i < pages; i++)
        csim_peek(s, i, b + i * per, g->spare_size ? b + i * per + g->page_size : NULL);
    *n = per * pages;
    return b;
}

static void test_nand_roundtrip(void)
{
    csim *s = open_img(IMG, "nand-jffs2", 1, 16, 9);
    struct cairn_dev *d;
    uint8_t a[4 * 2048], p[4096], sp[32];
    uint8_t *snap, *snap2;
    size_t n, n2;
    uint32_t i;
    uint64_t t_orig, t_new;
    int r_weak, ok;

    CHECK(s != NULL, "image: new nand-jffs2 image (16 blocks)");
    if (!s)
        return;
    d = csim_dev(s);
    pattern(a, sizeof(a), 1);
    memset(sp, 0x5A, sizeof(sp));
    for (i = 0; i < 3; i++)
        d->erase(d->ctx, 2);
    d->erase(d->ctx, 7);
    d->prog(d->ctx, 2 * 64, 0, a, 2048, sp, 32);
    d->prog(d->ctx, 2 * 64 + 1, 0, a, 4 * 2048, NULL, 0);
    d->prog(d->ctx, 2 * 64 + 9, 100, a, 50, sp, 3); /* partial: NOP 1 of 4 */
    d->prog(d->ctx, 5 * 64 + 63, 0, a + 1, 2048, sp, 32);
    d->mark_bad(d->ctx, 11);
    csim_set_factory_bad(s, 12);
    /* weak block 3 */
    d->prog(d->ctx, 3 * 64, 0, a, 2048, NULL, 0);
    csim_cut_at(s, sim_cnt(s).mutating_ops, CSIM_TEAR_RANDOM);
    d->erase(d->ctx, 3);
    csim_power_on(s);
    d->prog(d->ctx, 3 * 64 + 4, 0, a, 2048, NULL, 0);
    r_weak = d->read(d->ctx, 3 * 64 + 4, 0, p, 2048);
    snap = snapshot(s, &n);
    csim_reset_counters(s);
    d->read(d->ctx, 0, 0, p, 3000);
    t_orig = sim_time(s);
    csim_free(s); /* saves */

    s = open_img(IMG, NULL, 0, 0, 9);
    CHECK(s != NULL, "image: reopened without naming the model (\"%s\")",
          s ? "" : csim_error());
    if (!s) {
        free(snap);
        return;
    }
    d = csim_dev(s);
    CHECK(csim_geometry(s)->block_count == 16 &&
              csim_geometry(s)->page_size == 2048 &&
              csim_geometry(s)->max_partial_programs == 4 &&
              csim_geometry(s)->spare_size == 32 && d->read_spare != NULL,
          "image: geometry taken from the file");
    snap2 = snapshot(s, &n2);
    CHECK(n == n2 && memcmp(snap, snap2, n) == 0,
          "image: every page's data and spare identical");
    CHECK(csim_erase_count(s, 2) == 3 && csim_erase_count(s, 7) == 1 &&
              csim_erase_count(s, 3) == 1 && csim_erase_count(s, 0) == 0,
          "image: erase counts kept");
    CHECK(d->is_bad(d->ctx, 11) == 1 && d->is_bad(d->ctx, 12) == 1 &&
              d->is_bad(d->ctx, 10) == 0,
          "image: bad marks kept (mark_bad and factory)");
    CHECK(d->erase(d->ctx, 12) == CAIRN_DEV_ERASE_FAIL,
          "image: factory bad block still fails erases");
    csim_reset_counters(s);
    d->read(d->ctx, 0, 0, p, 3000);
    t_new = sim_time(s);
    CHECK(t_new == t_orig && t_new == 2 * 25000ull + 3000ull * 1000000000ull / 18400000ull,
          "image: cost table kept (read costs %llu ns)", (unsigned long long)t_new);
    CHECK(d->prog(d->ctx, 2 * 64 + 5, 0, a, 2048, NULL, 0) == CAIRN_DEV_RULE,
          "image: NAND page order kept (page 5 after page 9 refused)");
    ok = 1;
    for (i = 0; i < 3; i++)
        ok &= d->prog(d->ctx, 2 * 64 + 9, (i + 1) * 200, a, 50, NULL, 0) == 0;
    CHECK(ok && d->prog(d->ctx, 2 * 64 + 9, 1000, a, 50, NULL, 0) == CAIRN_DEV_RULE,
          "image: NAND program counts kept (3 more partial programs, then NOP 4)");
    ok = d->read(d->ctx, 3 * 64 + 4, 0, p, 2048);
    CHECK((r_weak == CAIRN_DEV_CORRECTED || r_weak == CAIRN_DEV_UNCORRECTABLE) &&
              ok == r_weak,
          "image: weak page reads the same way after reopening (%d)", r_weak);
    free(snap);
    free(snap2);
    csim_free(s);
}

static void test_nor_block_roundtrip(void)
{
    csim *s;
    struct cairn_dev *d;
    uint8_t *a = xmalloc(2u << 20), *snap, *snap2;
    size_t n, n2;
    uint32_t i;
    struct csim_counters c;

    /* NOR */
    s = open_img(IMG, "nor-w25q128", 1, 64, 1);
    d = csim_dev(s);
    pattern(a, 4096, 2);
    d->prog(d->ctx, 16, 0, a, 4096, NULL, 0);
    d->prog(d->ctx, 40, 10, a, 7, NULL, 0);
    d->erase(d->ctx, 60);
    snap = snapshot(s, &n);
    CHECK(csim_save(s) == 0, "image: csim_save");
    csim_free(s);
    s = open_img(IMG, "nor-w25q128", 0, 64, 1);
    CHECK(s != NULL, "image: NOR reopened with its model name and block count");
    snap2 = snapshot(s, &n2);
    CHECK(n == n2 && memcmp(snap, snap2, n) == 0 && csim_erase_count(s, 60) == 1,
          "image: NOR data and erase counts identical");
    free(snap);
    free(snap2);
    csim_free(s);

    /* BLOCK: data and the card's live sectors */
    s = open_img(IMG, "sd-tf", 1, 8, 1);
    d = csim_dev(s);
    pattern(a, 2u << 20, 3);
    d->prog(d->ctx, 0, 0, a, 2u << 20, NULL, 0); /* first half of AU 0 */
    d->prog(d->ctx, 5 * 8192 + 3, 0, a, 1024, NULL, 0);
    snap = snapshot(s, &n);
    csim_free(s);
    s = open_img(IMG, "sd-tf", 0, 0, 1);
    CHECK(s != NULL, "image: sd-tf reopened");
    d = csim_dev(s);
    snap2 = snapshot(s, &n2);
    CHECK(n == n2 && memcmp(snap, snap2, n) == 0, "image: sd-tf data identical");
    /* rewrite sector 0, then close AU 0 by opening 4 others: the 2 MiB still
     * live beyond the write pointer must be copied: 128 flash pages, the
     * first holding the new sector too */
    d->prog(d->ctx, 0, 0, a, 512, NULL, 0);
    for (i = 1; i <= 4; i++)
        d->prog(d->ctx, i * 8192, 0, a, 512, NULL, 0);
    csim_counters(s, &c);
    CHECK(c.ftl_copy_pages == 127 && c.ftl_merges == 1 && c.ftl_erases == 1,
          "image: card's live sectors and data blocks kept (%llu copies)",
          (unsigned long long)c.ftl_copy_pages);
    free(snap);
    free(snap2);
    csim_free(s);
    free(a);
}

static void test_bad_files(void)
{
    csim *s;
    uint8_t *img, *bad;
    long n;
    struct cairn_dev *d;
    uint8_t a[2048];

    s = open_img(IMG, "nand-dhara", 1, 8, 1);
    d = csim_dev(s);
    pattern(a, sizeof(a), 1);
    d->prog(d->ctx, 70, 0, a, 2048, a, 32);
    csim_free(s);
    img = slurp(IMG, &n);
    CHECK(img && n > 200, "bad: reference image of %ld bytes", n);
    if (!img || n <= 200)
        return;
    bad = xmalloc((size_t)n + 16);

#define TRY(what, len)                                                          \
    do {                                                                        \
        spit(IMG, bad, len);                                                    \
        s = open_img(IMG, NULL, 0, 0, 1);                                       \
        CHECK(s == NULL && csim_error()[0], "bad: %s rejected (\"%s\")", what,  \
              s ? "" : csim_error());                                           \
        if (s)                                                                  \
            csim_free(s);                                                       \
    } while (0)

    memcpy(bad, img, (size_t)n);
    bad[0] = 'X';
    TRY("bad magic", n);
    memcpy(bad, img, (size_t)n);
    bad[8] = 2;
    TRY("unknown format version", n);
    memcpy(bad, img, (size_t)n);
    bad[16] ^= 0x01; /* page_size, CRC not updated */
    TRY("header byte changed (CRC)", n);
    memcpy(bad, img, (size_t)n);
    bad[161] ^= 0x40;
    TRY("header CRC changed", n);
    memcpy(bad, img, (size_t)n);
    put32(bad + 16, 0); /* page_size 0 with a valid CRC */
    put32(bad + 160, crc32(bad, 160));
    TRY("page_size 0 (valid CRC)", n);
    memcpy(bad, img, (size_t)n);
    put32(bad + 32, 7); /* medium 7 */
    put32(bad + 160, crc32(bad, 160));
    TRY("unknown medium (valid CRC)", n);
    memcpy(bad, img, (size_t)n);
    put32(bad + 28, 9); /* one more block than stored */
    put32(bad + 160, crc32(bad, 160));
    TRY("block_count larger than the content (valid CRC)", n);
    memcpy(bad, img, (size_t)n);
    bad[164 + 4] = 0x80; /* block 0 flags: unknown bit */
    TRY("unknown block flag", n);
    memcpy(bad, img, (size_t)n);
    bad[n / 2] ^= 0x10;
    TRY("data byte changed (CRC)", n);
    memcpy(bad, img, (size_t)n);
    TRY("truncated by 10 bytes", n - 10);
    TRY("truncated header", 100);
    TRY("empty file", 0);
    memcpy(bad, img, (size_t)n);
    memset(bad + n, 0, 16);
    TRY("trailing bytes", n + 16);
#undef TRY
    s = open_img("no-such-dir/x.img", NULL, 0, 0, 1);
    CHECK(s == NULL && csim_error()[0], "bad: missing file rejected (\"%s\")",
          csim_error());
    s = open_img("no-such-dir/x.img", "nor-m25p16", 1, 0, 1);
    CHECK(s == NULL && csim_error()[0],
          "bad: image in a missing directory cannot be created (\"%s\")",
          csim_error());

    /* a failed open leaves the file alone; a good one needs the right model */
    spit(IMG, img, n);
    s = open_img(IMG, "nand-jffs2", 0, 0, 1);
    CHECK(s == NULL, "bad: image opened as another model rejected (\"%s\")",
          csim_error());
    s = open_img(IMG, "nand-dhara", 0, 16, 1);
    CHECK(s == NULL, "bad: block_count option differing from the image "
                     "rejected (\"%s\")",
          csim_error());
    {
        long n2;
        uint8_t *again = slurp(IMG, &n2);
        CHECK(again && n2 == n && memcmp(again, img, (size_t)n) == 0,
              "bad: failed opens did not rewrite the file");
        free(again);
    }
    s = open_img(IMG, "nand-dhara", 0, 0, 1);
    CHECK(s != NULL && (csim_peek(s, 70, a, NULL), 1),
          "bad: the intact image still opens");
    if (s)
        csim_free(s);
    free(bad);
    free(img);
}

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void test_big(void)
{
    static const char *big[] = {"sd-tf", "nand-jffs2"};
    long rss0 = max_rss_kb();
    size_t k;
    uint8_t a[2048], p[2048];

    pattern(a, sizeof(a), 4);
    for (k = 0; k < 2; k++) {
        csim *s = open_img(IMG, big[k], 1, 0, 1);
        struct cairn_dev *d = csim_dev(s);
        uint64_t bytes = (uint64_t)csim_geometry(s)->block_count *
                         csim_geometry(s)->pages_per_block *
                         csim_geometry(s)->page_size;
        uint32_t last = csim_geometry(s)->block_count *
                        csim_geometry(s)->pages_per_block - 1;
        uint32_t ps = csim_geometry(s)->page_size;
        long n;
        uint8_t *img;
        CHECK(bytes == 1ull << 30, "big: %s holds 1 GiB", big[k]);
        d->prog(d->ctx, last, 0, a, ps, NULL, 0);
        csim_free(s);
        img = slurp(IMG, &n);
        CHECK(n > 0 && n < (6L << 20), "big: %s image with one page written "
                                       "is %ld bytes",
              big[k], n);
        free(img);
        s = open_img(IMG, big[k], 0, 0, 1);
        CHECK(s && (csim_peek(s, last, p, NULL), memcmp(p, a, ps) == 0) &&
                  (csim_peek(s, 0, p, NULL), all_bytes(p, ps, 0xFF)),
              "big: %s reopened, last page intact, others erased", big[k]);
        csim_free(s);
    }
    CHECK(max_rss_kb() - rss0 < 128 * 1024,
          "big: two 1 GiB devices cost %ld KiB of RSS (lazy storage)",
          max_rss_kb() - rss0);
}

/* csim_peek_block / csim_poke_block: a whole erase block in one call, the
 * same bytes as page by page (csim_peek), erased blocks read 0xFF. */
static void test_block_access(void)
{
    csim *s = sim_open("nand-dhara", 16, 1);
    struct cairn_dev *d = csim_dev(s);
    const uint32_t ps = 2048, ppb = 64, sp = 32;
    uint8_t *data = xmalloc((size_t)ppb * ps), *spare = xmalloc((size_t)ppb * sp);
    uint8_t *back = xmalloc((size_t)ppb * ps), *sback = xmalloc((size_t)ppb * sp);
    uint8_t page[2048], pspare[32];
    int same = 1;
    uint32_t p;
    pattern(data, (size_t)ppb * ps, 7);
    pattern(spare, (size_t)ppb * sp, 8);
    CHECK(csim_peek_block(s, 3, back, sback) == 0 && all_bytes(back, (size_t)ppb * ps, 0xFF) &&
              all_bytes(sback, (size_t)ppb * sp, 0xFF),
          "block access: a never written block peeks as 0xFF, data and spare");
    CHECK(csim_poke_block(s, 3, data, spare) == 0, "block access: poke a whole block");
    for (p = 0; p < ppb; p++) {
        csim_peek(s, 3 * ppb + p, page, pspare);
        same &= memcmp(page, data + (size_t)p * ps, ps) == 0 &&
                memcmp(pspare, spare + (size_t)p * sp, sp) == 0;
    }
    CHECK(same, "block access: page by page reads what the block poke wrote");
    CHECK(csim_peek_block(s, 3, back, NULL) == 0 &&
              memcmp(back, data, (size_t)ppb * ps) == 0,
          "block access: peek without spare");
    CHECK(csim_poke_block(s, 16, data, NULL) == -1 && csim_peek_block(s, 16, back, NULL) == -1,
          "block access: a block beyond the device is refused");
    CHECK(d->erase(d->ctx, 3) == 0 && csim_peek_block(s, 3, back, sback) == 0 &&
              all_bytes(back, (size_t)ppb * ps, 0xFF) && all_bytes(sback, (size_t)ppb * sp, 0xFF),
          "block access: erased again after an erase");
    CHECK(sim_viol(s) == 0 && sim_cnt(s).read_calls == 0, "block access: no rules, no counters");
    free(data);
    free(spare);
    free(back);
    free(sback);
    csim_free(s);
}

int main(void)
{
    csim *s;
    test_big(); /* first: it measures the peak RSS */
    s = sim_open("nor-m25p16", 0, 1);
    CHECK(csim_save(s) == 0, "image: csim_save of a RAM device is a no-op");
    csim_free(s);
    test_nand_roundtrip();
    test_nor_block_roundtrip();
    test_bad_files();
    test_block_access();
    remove(IMG);
    return check_done("sim_image");
}
