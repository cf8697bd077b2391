/*
 * Simulator: models, geometry, and every medium rule (each violation fails
 * with CAIRN_DEV_RULE, counts, leaves a text, and changes nothing).
 */
#include <stdio.h>
#include <string.h>

#include "simutil.h"

#define R CAIRN_DEV_RULE

/* Checks that `call` is a violation that changed nothing on `page`. */
#define VIOLATION(s, call, page, what)                                          \
    do {                                                                        \
        uint8_t before_[4096], after_[4096], sb_[64], sa_[64];                  \
        uint64_t v0_ = sim_viol(s);                                             \
        int r_;                                                                 \
        csim_peek(s, page, before_, sb_);                                       \
        r_ = (call);                                                            \
        csim_peek(s, page, after_, sa_);                                        \
        CHECK(r_ == R && sim_viol(s) == v0_ + 1 &&                              \
                  csim_last_violation(s)[0] != '\0' &&                          \
                  memcmp(before_, after_, csim_geometry(s)->page_size) == 0 &&  \
                  memcmp(sb_, sa_, csim_geometry(s)->spare_size) == 0,          \
              "%s: %s -> RULE, counted, unchanged (\"%s\")", name, what,        \
              csim_last_violation(s));                                          \
    } while (0)

static void test_models(void)
{
    const char *const *names = csim_model_names();
    struct cairn_geometry g;
    struct csim_cost c;
    struct csim_ftl f;
    struct csim_options o;
    csim *s;
    int n = 0;

    while (names[n])
        n++;
    CHECK(n == 5, "five model names");
    CHECK(csim_model_info("nope", &g, &c, &f) == -1, "unknown model info -1");
    s = csim_new("nope", NULL);
    CHECK(s == NULL && csim_error()[0],
          "unknown model: NULL + error \"%s\"", csim_error());

    csim_model_info("nor-m25p16", &g, &c, &f);
    CHECK(g.medium == CAIRN_MEDIUM_NOR && g.page_size == 256 &&
              g.pages_per_block == 256 && g.block_count == 32 &&
              g.spare_size == 0 && g.blocks_per_lblock == 0,
          "nor-m25p16: 2 MiB, 256 B pages, 64 KiB blocks, segment size left to cairn");
    CHECK(c.read_setup_ns == 20000 && c.read_bytes_per_s == 4500000 &&
              c.prog_page_ns == 640000 && c.erase_ns == 600000000,
          "nor-m25p16 cost table");
    csim_model_info("nor-w25q128", &g, &c, &f);
    CHECK(g.medium == CAIRN_MEDIUM_NOR && g.page_size == 256 &&
              g.pages_per_block == 16 && g.block_count == 4096,
          "nor-w25q128: 16 MiB, 4 KiB blocks");
    csim_model_info("nand-dhara", &g, &c, &f);
    CHECK(g.medium == CAIRN_MEDIUM_NAND && g.page_size == 2048 &&
              g.pages_per_block == 64 && g.block_count == 1024 &&
              g.spare_size == 32 && g.max_partial_programs == 1,
          "nand-dhara: 128 MiB, NOP 1, spare 32");
    csim_model_info("nand-jffs2", &g, &c, &f);
    CHECK(g.medium == CAIRN_MEDIUM_NAND && g.page_size == 2048 &&
              g.pages_per_block == 64 && g.block_count == 8192 &&
              g.spare_size == 32 && g.max_partial_programs == 4,
          "nand-jffs2: 1 GiB, NOP 4, spare 32");
    csim_model_info("sd-tf", &g, &c, &f);
    CHECK(g.medium == CAIRN_MEDIUM_BLOCK && g.page_size == 512 &&
              g.pages_per_block == 8192 && g.block_count == 256 &&
              g.write_unit == 262144 && f.au_bytes == 4194304 &&
              f.flash_page_bytes == 16384 && f.open_aus == 4 &&
              c.ftl_prog_ns == 1000000 && c.ftl_erase_ns == 3000000,
          "sd-tf: 1 GiB, 512 B sectors, 4 MiB AU, card model");

    /* options */
    s = csim_new("nor-w25q128", NULL);
    CHECK(s && csim_geometry(s)->block_count == 4096 &&
              csim_dev(s)->geo.block_count == 4096 &&
              csim_dev(s)->read_spare == NULL && csim_dev(s)->ctx == s,
          "csim_new(NULL options): model geometry, no read_spare on NOR");
    csim_free(s);
    memset(&o, 0, sizeof(o));
    o.block_count = 256;
    o.blocks_per_lblock = 2;
    s = csim_new("nor-w25q128", &o);
    CHECK(s && csim_geometry(s)->block_count == 256 &&
              csim_geometry(s)->blocks_per_lblock == 2,
          "block_count 256 (1 MiB volume) and blocks_per_lblock 2");
    csim_free(s);
    o.blocks_per_lblock = 3;
    s = csim_new("nor-w25q128", &o);
    CHECK(s == NULL,
          "blocks_per_lblock not dividing block_count rejected (\"%s\")",
          csim_error());
    {
        struct cairn_geometry cg = {100, 0, 4, 8, 9, 0, 0, 1};
        struct csim_cost cc;
        memset(&cc, 0, sizeof(cc));
        s = csim_new_custom(&cg, &cc, NULL, NULL);
        CHECK(s == NULL,
              "custom geometry with a bad medium rejected (\"%s\")",
              csim_error());
        cg.medium = CAIRN_MEDIUM_BLOCK;
        s = csim_new_custom(&cg, &cc, NULL, NULL);
        CHECK(s == NULL,
              "custom BLOCK without a card model rejected (\"%s\")",
              csim_error());
        cg.medium = CAIRN_MEDIUM_NOR;
        s = csim_new_custom(&cg, &cc, NULL, NULL);
        CHECK(s != NULL && csim_geometry(s)->page_size == 100,
              "custom NOR geometry (100 B pages) accepted");
        csim_free(s);
    }
}

static void test_common(const char *name)
{
    csim *s = sim_open(name, 8, 1);
    struct cairn_dev *d = csim_dev(s);
    const struct cairn_geometry *g = csim_geometry(s);
    uint32_t ps = g->page_size, ppb = g->pages_per_block;
    uint32_t pages = g->block_count * ppb;
    uint8_t *buf = xmalloc((size_t)ps * ppb);
    int r;

    pattern(buf, (size_t)ps * ppb, 5);
    VIOLATION(s, d->read(d->ctx, pages, 0, buf, 1), 0, "read page beyond device");
    VIOLATION(s, d->read(d->ctx, 0, ps, buf, 1), 0, "read off == page_size");
    if (g->medium == CAIRN_MEDIUM_NAND)
        VIOLATION(s, d->read(d->ctx, ppb - 1, 1, buf, ps), 0,
                  "NAND read running past the erase block");
    VIOLATION(s, d->read(d->ctx, pages - 1, 1, buf, ps), 0, "read running past the device");
    VIOLATION(s, d->prog(d->ctx, pages, 0, buf, ps, NULL, 0), 0,
              "prog page beyond device");
    VIOLATION(s, d->erase(d->ctx, g->block_count), 0, "erase beyond device");
    VIOLATION(s, d->is_bad(d->ctx, g->block_count), 0, "is_bad beyond device");
    VIOLATION(s, d->mark_bad(d->ctx, g->block_count), 0,
              "mark_bad beyond device");
    VIOLATION(s, d->prog(d->ctx, ppb - 1, 0, buf, 2 * ps, NULL, 0), ppb - 1,
              "multi-page prog running past the erase block");
    VIOLATION(s, d->prog(d->ctx, 1, 0, buf, ps, buf, g->spare_size + 1), 1,
              "spare_len > spare_size");

    /* legal: a read of a whole block from page 0, and across pages */
    r = d->read(d->ctx, 0, 0, buf, ps * ppb);
    CHECK(r == CAIRN_DEV_OK, "%s: read of a whole erase block in one call", name);
    if (g->medium != CAIRN_MEDIUM_NAND) {
        uint8_t *two = malloc((size_t)ps * ppb * 2);
        r = two ? d->read(d->ctx, 0, 0, two, ps * ppb * 2) : CAIRN_DEV_IO;
        CHECK(r == CAIRN_DEV_OK, "%s: NOR/BLOCK read across two erase blocks in one call", name);
        free(two);
    }
    r = d->read(d->ctx, 2, ps - 3, buf, ps + 6);
    CHECK(r == CAIRN_DEV_OK && all_bytes(buf, ps + 6, 0xFF),
          "%s: read across a page boundary (unwritten reads 0xFF)", name);
    CHECK(d->read(d->ctx, ppb, 0, buf, 0) == CAIRN_DEV_OK,
          "%s: zero-length read is legal", name);
    CHECK(d->is_bad(d->ctx, 1) == 0 && d->mark_bad(d->ctx, 1) == 0 &&
              d->is_bad(d->ctx, 1) == 1,
          "%s: mark_bad then is_bad reports 1", name);
    CHECK(d->sync(d->ctx) == CAIRN_DEV_OK, "%s: sync", name);
    free(buf);
    csim_free(s);
}

static void test_nor(void)
{
    const char *name = "nor-w25q128";
    csim *s = sim_open(name, 8, 1);
    struct cairn_dev *d = csim_dev(s);
    uint8_t a[512], b[512], p[256];
    uint8_t x;
    int r;

    memset(a, 0x0F, 256);
    CHECK(d->prog(d->ctx, 0, 0, a, 256, NULL, 0) == 0, "nor: program 0x0F");
    memset(b, 0xF0, 256);
    VIOLATION(s, d->prog(d->ctx, 0, 0, b, 256, NULL, 0), 0,
              "program turning bits 0->1");
    x = 0x1F;
    VIOLATION(s, d->prog(d->ctx, 0, 100, &x, 1, NULL, 0), 0,
              "one byte 0x0F -> 0x1F");
    x = 0x07;
    CHECK(d->prog(d->ctx, 0, 100, &x, 1, NULL, 0) == 0,
          "nor: partial reprogram 0x0F -> 0x07 (1->0 only) allowed");
    csim_peek(s, 0, p, NULL);
    CHECK(p[100] == 0x07 && p[99] == 0x0F && p[101] == 0x0F,
          "nor: reprogrammed byte reads 0x07, neighbours intact");

    /* pieces of a page */
    pattern(a, 256, 1);
    CHECK(d->prog(d->ctx, 1, 0, a, 10, NULL, 0) == 0 &&
              d->prog(d->ctx, 1, 10, a + 10, 100, NULL, 0) == 0 &&
              d->prog(d->ctx, 1, 110, a + 110, 146, NULL, 0) == 0,
          "nor: a page programmed in three pieces");
    csim_peek(s, 1, p, NULL);
    CHECK(memcmp(p, a, 256) == 0, "nor: pieces read back as one page");
    VIOLATION(s, d->prog(d->ctx, 2, 200, a, 57, NULL, 0), 2,
              "off + len > page_size");
    VIOLATION(s, d->prog(d->ctx, 2, 300, a, 0, NULL, 0), 2, "off > page_size");

    /* multi-page programs */
    pattern(b, 512, 2);
    r = d->prog(d->ctx, 4, 0, b, 512, NULL, 0);
    csim_peek(s, 4, p, NULL);
    CHECK(r == 0 && memcmp(p, b, 256) == 0 &&
              (csim_peek(s, 5, p, NULL), memcmp(p, b + 256, 256) == 0),
          "nor: two-page program in one call");
    VIOLATION(s, d->prog(d->ctx, 6, 1, b, 512, NULL, 0), 6,
              "multi-page prog with off != 0");
    VIOLATION(s, d->prog(d->ctx, 6, 0, b, 300, NULL, 0), 6,
              "multi-page prog with len not a multiple of page_size");
    VIOLATION(s, d->prog(d->ctx, 15, 0, b, 512, NULL, 0), 15,
              "multi-page prog crossing into the next block");
    {
        /* page 4 unchanged (legal), page 5 all 0xFF (0->1): nothing written */
        uint8_t z[512];
        memcpy(z, b, 256);
        memset(z + 256, 0xFF, 256);
        VIOLATION(s, d->prog(d->ctx, 4, 0, z, 512, NULL, 0), 4,
                  "multi-page prog turning bits 0->1 in its second page");
    }
    /* a violation of a multi-page program leaves the first pages intact too */
    csim_peek(s, 5, p, NULL);
    CHECK(memcmp(p, b + 256, 256) == 0,
          "nor: failed multi-page program left page 5 intact");
    CHECK(d->erase(d->ctx, 0) == 0 && d->prog(d->ctx, 0, 0, b, 256, NULL, 0) == 0,
          "nor: after erase any bits can be programmed again");
    csim_free(s);
}

static void test_nand(const char *name, uint32_t nop)
{
    csim *s = sim_open(name, 8, 1);
    struct cairn_dev *d = csim_dev(s);
    uint8_t a[4 * 2048], p[2048], sp[32], spr[32];
    uint32_t i;
    int ok;

    pattern(a, sizeof(a), 7);
    memset(sp, 0xA5, sizeof(sp));
    CHECK(d->read_spare != NULL, "%s: read_spare provided", name);
    CHECK(d->prog(d->ctx, 5, 0, a, 2048, sp, 32) == 0,
          "%s: page 5 with spare", name);
    VIOLATION(s, d->prog(d->ctx, 3, 0, a, 2048, NULL, 0), 3,
              "page 3 after page 5 (order)");
    VIOLATION(s, d->prog(d->ctx, 4, 0, NULL, 0, sp, 8), 4,
              "spare-only program of page 4 after page 5 (order)");
    VIOLATION(s, d->prog(d->ctx, 2, 0, a, 2 * 2048, NULL, 0), 2,
              "multi-page program of pages 2-3 after page 5 (order)");
    CHECK(d->prog(d->ctx, 6, 0, a, 2048, NULL, 0) == 0,
          "%s: page 6 after page 5", name);
    VIOLATION(s, d->prog(d->ctx, 5, 0, a, 16, NULL, 0), 5,
              "partial program of page 5 after page 6 (order)");
    VIOLATION(s, d->prog(d->ctx, 7, 0, a, 2048, sp, 33), 7, "spare_len 33 > 32");
    VIOLATION(s, d->read_spare(d->ctx, 7, spr, 33), 7, "read_spare of 33 bytes");
    VIOLATION(s, d->read_spare(d->ctx, 8 * 64, spr, 1), 0,
              "read_spare beyond device");
    VIOLATION(s, d->prog(d->ctx, 8, 0, a, 2 * 2048, sp, 32), 8,
              "multi-page program with spare");
    CHECK(d->read_spare(d->ctx, 5, spr, 32) == 0 && all_bytes(spr, 32, 0xA5),
          "%s: spare reads back", name);

    /* NOP: page 10 programmed in pieces, data + spare counting once */
    ok = 1;
    for (i = 0; i < nop; i++)
        ok &= d->prog(d->ctx, 10, i * 16, a + i * 16, 16, sp, 4) == 0;
    CHECK(ok, "%s: %lu partial programs of one page (NOP %lu)", name,
          (unsigned long)nop, (unsigned long)nop);
    VIOLATION(s, d->prog(d->ctx, 10, 1000, a, 16, NULL, 0), 10,
              "one program more than NOP");
    VIOLATION(s, d->prog(d->ctx, 10, 0, NULL, 0, sp, 4), 10,
              "spare-only program beyond NOP");
    csim_peek(s, 10, p, spr);
    CHECK(memcmp(p, a, 16 * nop) == 0 && all_bytes(p + 16 * nop, 2048 - 16 * nop, 0xFF),
          "%s: partial programs stored, the rest erased", name);
    /* multi-page program counts for every page */
    CHECK(d->prog(d->ctx, 12, 0, a, 4 * 2048, NULL, 0) == 0,
          "%s: 4-page program 12-15", name);
    if (nop == 1)
        VIOLATION(s, d->prog(d->ctx, 15, 0, a, 1, NULL, 0), 15,
                  "page 15 again after the multi-page program (NOP 1)");
    /* programs only clear bits */
    if (nop > 1) {
        uint8_t z = 0x00, f = 0xFF;
        CHECK(d->prog(d->ctx, 20, 0, &z, 1, NULL, 0) == 0 &&
                  d->prog(d->ctx, 20, 0, &f, 1, NULL, 0) == 0 &&
                  (csim_peek(s, 20, p, NULL), p[0] == 0x00),
              "%s: reprogramming 0xFF over 0x00 leaves 0x00", name);
    }
    /* read across pages of a block in one call */
    {
        uint8_t big[2 * 2048];
        CHECK(d->read(d->ctx, 12, 100, big, 2 * 2048) == 0 &&
                  memcmp(big, a + 100, 2 * 2048) == 0,
              "%s: one read across three pages", name);
    }
    /* erase resets order and NOP */
    CHECK(d->erase(d->ctx, 0) == 0 && d->prog(d->ctx, 0, 0, a, 2048, NULL, 0) == 0 &&
              d->prog(d->ctx, 10, 0, a, 2048, NULL, 0) == 0,
          "%s: after erase pages 0 and 10 programmable again", name);
    /* order is per block: block 1 untouched by block 0's state */
    CHECK(d->prog(d->ctx, 64 + 1, 0, a, 2048, NULL, 0) == 0 &&
              d->prog(d->ctx, 64 + 63, 0, a, 2048, NULL, 0) == 0,
          "%s: another block has its own page order", name);
    csim_free(s);
}

static void test_block(void)
{
    const char *name = "sd-tf";
    csim *s = sim_open(name, 4, 1);
    struct cairn_dev *d = csim_dev(s);
    uint8_t a[4096], p[512], b[700];

    pattern(a, sizeof(a), 3);
    CHECK(d->read_spare == NULL, "sd-tf: no read_spare");
    VIOLATION(s, d->prog(d->ctx, 0, 1, a, 511, NULL, 0), 0, "off != 0");
    VIOLATION(s, d->prog(d->ctx, 0, 0, a, 100, NULL, 0), 0, "partial sector");
    VIOLATION(s, d->prog(d->ctx, 0, 0, a, 0, NULL, 0), 0, "zero-length program");
    VIOLATION(s, d->prog(d->ctx, 0, 0, a, 700, NULL, 0), 0,
              "len not a multiple of 512");
    VIOLATION(s, d->prog(d->ctx, 8191, 0, a, 1024, NULL, 0), 8191,
              "write crossing the AU / erase block");
    CHECK(d->prog(d->ctx, 0, 0, a, 4096, NULL, 0) == 0, "sd-tf: 8 sectors");
    CHECK(d->prog(d->ctx, 1, 0, a, 512, NULL, 0) == 0 &&
              (csim_peek(s, 1, p, NULL), memcmp(p, a, 512) == 0),
          "sd-tf: a sector is simply rewritten (no erase needed)");
    memset(p, 0xFF, 512);
    CHECK(d->prog(d->ctx, 2, 0, p, 512, NULL, 0) == 0 &&
              (csim_peek(s, 2, b, NULL), all_bytes(b, 512, 0xFF)),
          "sd-tf: 0xFF over data reads 0xFF (overwrite, not AND)");
    CHECK(d->read(d->ctx, 3, 17, b, 700) == 0 && memcmp(b, a + 3 * 512 + 17, 495) == 0,
          "sd-tf: unaligned read across sectors");
    CHECK(d->erase(d->ctx, 0) == 0 && d->read(d->ctx, 0, 0, p, 512) == 0 &&
              all_bytes(p, 512, 0xFF),
          "sd-tf: erase = discard, sectors read 0xFF");
    csim_free(s);
}

int main(void)
{
    test_models();
    test_common("nor-m25p16");
    test_common("nor-w25q128");
    test_common("nand-dhara");
    test_common("nand-jffs2");
    test_common("sd-tf");
    test_nor();
    test_nand("nand-dhara", 1);
    test_nand("nand-jffs2", 4);
    test_block();
    return check_done("sim_rules");
}
