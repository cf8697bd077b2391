/*
 * Image files of the flash simulator (format in docs/DESIGN.md, "Simulator").
 * All integers little-endian.
 *
 *   header (164 bytes)
 *     0  magic "CAIRNSIM"          8
 *     8  format version (1)       u32
 *    12  header size (164)        u32
 *    16  struct cairn_geometry    8 x u32 (in declaration order)
 *    48  struct csim_cost         8 x u64
 *   112  struct csim_ftl          3 x u32 (zero unless BLOCK)
 *   124  reserved (0)             u32
 *   128  model name               32 bytes, NUL-terminated, NUL-padded
 *   160  CRC-32 of bytes 0..159   u32
 *   block table: block_count records of 4 x u32:
 *     erase count, flags (BF_*), wear_left, reserved (0)
 *   per block, in order:
 *     if BF_STORED: data (block_bytes), spare (ppb x spare_size),
 *                   program count per page (ppb bytes)
 *     if BF_WEAK:   ppb records of 13 bytes: n (u8), 3 x u32 bit positions
 *   BLOCK media only: live-sector bitmap (ceil(pages / 8) bytes, sector i =
 *     byte i / 8, bit i % 8), then one byte per AU (has a data block: 0/1)
 *   CRC-32 of everything between the header and this field   u32
 *   end of file
 */
#define _POSIX_C_SOURCE 200809L

#include "csim_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMG_MAGIC "CAIRNSIM"
#define IMG_VERSION 1u
#define IMG_HEADER 164u

struct io {
    FILE *f;
    uint32_t crc;
    int err;
    uint32_t tab[256];
};

static void crc_init(struct io *io)
{
    uint32_t i, k, c;
    for (i = 0; i < 256; i++) {
        c = i;
        for (k = 0; k < 8; k++)
            c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        io->tab[i] = c;
    }
    io->crc = 0xFFFFFFFFu;
}

static void crc_add(struct io *io, const uint8_t *p, size_t n)
{
    uint32_t c = io->crc;
    size_t i;
    for (i = 0; i < n; i++)
        c = io->tab[(c ^ p[i]) & 0xFFu] ^ (c >> 8);
    io->crc = c;
}

static uint32_t crc_of(struct io *io, const uint8_t *p, size_t n)
{
    io->crc = 0xFFFFFFFFu;
    crc_add(io, p, n);
    return ~io->crc;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void wr(struct io *io, const void *p, size_t n)
{
    if (io->err || n == 0)
        return;
    crc_add(io, p, n);
    if (fwrite(p, 1, n, io->f) != n)
        io->err = 1;
}

static int rd(struct io *io, void *p, size_t n)
{
    if (io->err)
        return -1;
    if (n && fread(p, 1, n, io->f) != n) {
        io->err = 1;
        return -1;
    }
    crc_add(io, p, n);
    return 0;
}

static void encode_header(const csim *s, uint8_t *h, struct io *io)
{
    const struct cairn_geometry *g = &s->geo;
    const struct csim_cost *c = &s->cost;
    memset(h, 0, IMG_HEADER);
    memcpy(h, IMG_MAGIC, 8);
    put32(h + 8, IMG_VERSION);
    put32(h + 12, IMG_HEADER);
    put32(h + 16, g->page_size);
    put32(h + 20, g->spare_size);
    put32(h + 24, g->pages_per_block);
    put32(h + 28, g->block_count);
    put32(h + 32, g->medium);
    put32(h + 36, g->max_partial_programs);
    put32(h + 40, g->write_unit);
    put32(h + 44, g->blocks_per_lblock);
    put64(h + 48, c->read_setup_ns);
    put64(h + 56, c->read_bytes_per_s);
    put64(h + 64, c->prog_setup_ns);
    put64(h + 72, c->prog_bytes_per_s);
    put64(h + 80, c->prog_page_ns);
    put64(h + 88, c->erase_ns);
    put64(h + 96, c->ftl_prog_ns);
    put64(h + 104, c->ftl_erase_ns);
    put32(h + 112, s->ftl.au_bytes);
    put32(h + 116, s->ftl.flash_page_bytes);
    put32(h + 120, s->ftl.open_aus);
    memcpy(h + 128, s->model, strnlen(s->model, 31));
    put32(h + 160, crc_of(io, h, 160));
}

int csim_save(csim *s)
{
    struct io *io;
    uint8_t h[IMG_HEADER], rec[16];
    char *tmp;
    size_t n;
    uint32_t b, p;
    int ok;

    if (!s->path)
        return 0;
    io = malloc(sizeof(*io));
    n = strlen(s->path);
    tmp = malloc(n + 5);
    if (!io || !tmp) {
        free(io);
        free(tmp);
        csim_set_error_("save: out of memory");
        return -1;
    }
    memcpy(tmp, s->path, n);
    memcpy(tmp + n, ".tmp", 5);
    crc_init(io);
    io->err = 0;
    io->f = fopen(tmp, "wb");
    if (!io->f) {
        free(io);
        free(tmp);
        csim_set_error_("save: cannot create the image file");
        return -1;
    }
    encode_header(s, h, io);
    if (fwrite(h, 1, IMG_HEADER, io->f) != IMG_HEADER)
        io->err = 1;
    io->crc = 0xFFFFFFFFu;

    for (b = 0; b < s->geo.block_count; b++) {
        const struct blk *bk = &s->blk[b];
        put32(rec, bk->erase_count);
        put32(rec + 4, bk->flags | (bk->mem ? (uint32_t)BF_STORED : 0u));
        put32(rec + 8, bk->wear_left);
        put32(rec + 12, 0);
        wr(io, rec, 16);
    }
    for (b = 0; b < s->geo.block_count; b++) {
        const struct blk *bk = &s->blk[b];
        if (bk->mem)
            wr(io, bk->mem, s->mem_bytes);
        if (bk->weak) {
            for (p = 0; p < s->ppb; p++) {
                uint8_t w[13];
                w[0] = bk->weak[p].n;
                put32(w + 1, bk->weak[p].pos[0]);
                put32(w + 5, bk->weak[p].pos[1]);
                put32(w + 9, bk->weak[p].pos[2]);
                wr(io, w, 13);
            }
        }
    }
    if (s->geo.medium == CAIRN_MEDIUM_BLOCK) {
        uint8_t chunk[4096];
        size_t bytes = ((size_t)s->total_pages + 7) / 8, i = 0, k;
        while (i < bytes) {
            size_t m = bytes - i < sizeof(chunk) ? bytes - i : sizeof(chunk);
            for (k = 0; k < m; k++)
                chunk[k] = (uint8_t)(s->live[(i + k) / 8] >> (8 * ((i + k) % 8)));
            wr(io, chunk, m);
            i += m;
        }
        for (b = 0; b < s->au_count; b++) {
            uint8_t v = (uint8_t)csim_ftl_au_saved_(s, b);
            wr(io, &v, 1);
        }
    }
    put32(rec, ~io->crc);
    if (!io->err && fwrite(rec, 1, 4, io->f) != 4)
        io->err = 1;
    ok = !io->err;
    if (fclose(io->f) != 0)
        ok = 0;
    if (ok && rename(tmp, s->path) != 0)
        ok = 0;
    if (!ok) {
        remove(tmp);
        csim_set_error_("save: cannot write the image file");
    }
    free(io);
    free(tmp);
    return ok ? 0 : -1;
}

/* Fails the load with `text`. */
static csim *fail(struct io *io, csim *s, const char *text)
{
    if (io) {
        if (io->f)
            fclose(io->f);
        free(io);
    }
    if (s) {
        free(s->path);
        s->path = NULL; /* never write back a file we could not load */
        csim_destroy_(s);
    }
    csim_set_error_(text);
    return NULL;
}

csim *csim_load_(const char *path, const char *model,
                 const struct csim_options *opt)
{
    struct io *io;
    uint8_t h[IMG_HEADER], rec[16];
    struct cairn_geometry g;
    struct csim_cost c;
    struct csim_ftl f;
    char name[32];
    const char *err;
    csim *s = NULL;
    uint32_t b, p, *flags = NULL;

    io = malloc(sizeof(*io));
    if (!io)
        return fail(NULL, NULL, "image: out of memory");
    crc_init(io);
    io->err = 0;
    io->f = fopen(path, "rb");
    if (!io->f)
        return fail(io, NULL, "image: cannot open the file");
    if (fread(h, 1, IMG_HEADER, io->f) != IMG_HEADER)
        return fail(io, NULL, "image: file too short for a header");
    if (memcmp(h, IMG_MAGIC, 8) != 0)
        return fail(io, NULL, "image: not a cairn simulator image (bad magic)");
    if (get32(h + 8) != IMG_VERSION)
        return fail(io, NULL, "image: unsupported format version");
    if (get32(h + 12) != IMG_HEADER)
        return fail(io, NULL, "image: bad header size");
    if (get32(h + 160) != crc_of(io, h, 160))
        return fail(io, NULL, "image: header CRC mismatch");
    if (get32(h + 124) != 0)
        return fail(io, NULL, "image: bad header (reserved field set)");
    g.page_size = get32(h + 16);
    g.spare_size = get32(h + 20);
    g.pages_per_block = get32(h + 24);
    g.block_count = get32(h + 28);
    g.medium = get32(h + 32);
    g.max_partial_programs = get32(h + 36);
    g.write_unit = get32(h + 40);
    g.blocks_per_lblock = get32(h + 44);
    c.read_setup_ns = get64(h + 48);
    c.read_bytes_per_s = get64(h + 56);
    c.prog_setup_ns = get64(h + 64);
    c.prog_bytes_per_s = get64(h + 72);
    c.prog_page_ns = get64(h + 80);
    c.erase_ns = get64(h + 88);
    c.ftl_prog_ns = get64(h + 96);
    c.ftl_erase_ns = get64(h + 104);
    f.au_bytes = get32(h + 112);
    f.flash_page_bytes = get32(h + 116);
    f.open_aus = get32(h + 120);
    memcpy(name, h + 128, 32);
    if (name[31] != '\0')
        return fail(io, NULL, "image: bad model name");
    err = csim_validate_(&g, &f);
    if (err)
        return fail(io, NULL, err);
    if (g.medium != CAIRN_MEDIUM_BLOCK &&
        (f.au_bytes || f.flash_page_bytes || f.open_aus))
        return fail(io, NULL, "image: card model set for a non-BLOCK medium");
    if (model && strcmp(model, name) != 0)
        return fail(io, NULL, "image: holds a different model than requested");
    if ((opt->block_count && opt->block_count != g.block_count) ||
        (opt->blocks_per_lblock &&
         opt->blocks_per_lblock != g.blocks_per_lblock))
        return fail(io, NULL, "image: geometry differs from the options");

    s = csim_alloc_(&g, &c, &f, name, opt);
    if (!s)
        return fail(io, NULL, csim_error());
    io->crc = 0xFFFFFFFFu;
    flags = malloc((size_t)g.block_count * sizeof(*flags));
    if (!flags)
        return fail(io, s, "image: out of memory");
    for (b = 0; b < g.block_count; b++) {
        struct blk *bk = &s->blk[b];
        if (rd(io, rec, 16)) {
            free(flags);
            return fail(io, s, "image: file truncated");
        }
        flags[b] = get32(rec + 4);
        if ((flags[b] & ~BF_KNOWN) || get32(rec + 12) != 0) {
            free(flags);
            return fail(io, s, "image: bad block record");
        }
        bk->erase_count = get32(rec);
        bk->flags = flags[b] & ~(uint32_t)BF_STORED;
        bk->wear_left = get32(rec + 8);
    }
    for (b = 0; b < g.block_count; b++) {
        struct blk *bk = &s->blk[b];
        if (flags[b] & BF_STORED) {
            bk->mem = malloc(s->mem_bytes);
            if (!bk->mem) {
                free(flags);
                return fail(io, s, "image: out of memory");
            }
            if (rd(io, bk->mem, s->mem_bytes)) {
                free(flags);
                return fail(io, s, "image: file truncated");
            }
            if (g.medium == CAIRN_MEDIUM_NAND) {
                for (p = s->ppb; p > 0 && !bk->mem[s->nop_off + p - 1]; p--)
                    ;
                bk->top = p;
            }
        }
        if (flags[b] & BF_WEAK) {
            bk->weak = calloc(s->ppb, sizeof(*bk->weak));
            if (!bk->weak) {
                free(flags);
                return fail(io, s, "image: out of memory");
            }
            for (p = 0; p < s->ppb; p++) {
                uint8_t w[13];
                uint32_t k;
                if (rd(io, w, 13)) {
                    free(flags);
                    return fail(io, s, "image: file truncated");
                }
                bk->weak[p].n = w[0];
                for (k = 0; k < 3; k++)
                    bk->weak[p].pos[k] = get32(w + 1 + 4 * k);
                if (w[0] > 3) {
                    free(flags);
                    return fail(io, s, "image: bad weak-page record");
                }
                for (k = 0; k < 3; k++) {
                    if (bk->weak[p].pos[k] >= s->ps * 8 ||
                        (k >= w[0] && bk->weak[p].pos[k])) {
                        free(flags);
                        return fail(io, s, "image: bad weak-page record");
                    }
                }
            }
        }
    }
    free(flags);
    if (g.medium == CAIRN_MEDIUM_BLOCK) {
        uint8_t chunk[4096];
        size_t bytes = ((size_t)s->total_pages + 7) / 8, i = 0, k;
        while (i < bytes) {
            size_t m = bytes - i < sizeof(chunk) ? bytes - i : sizeof(chunk);
            if (rd(io, chunk, m))
                return fail(io, s, "image: file truncated");
            for (k = 0; k < m; k++)
                s->live[(i + k) / 8] |= (uint64_t)chunk[k] << (8 * ((i + k) % 8));
            i += m;
        }
        if (s->total_pages % 8 && (chunk[(bytes - 1) % sizeof(chunk)] >>
                                   (s->total_pages % 8)))
            return fail(io, s, "image: bad card state");
        if (rd(io, s->has_data, s->au_count))
            return fail(io, s, "image: file truncated");
        for (b = 0; b < s->au_count; b++)
            if (s->has_data[b] > 1)
                return fail(io, s, "image: bad card state");
    }
    {
        uint32_t want = ~io->crc;
        if (fread(rec, 1, 4, io->f) != 4)
            return fail(io, s, "image: file truncated");
        if (get32(rec) != want)
            return fail(io, s, "image: content CRC mismatch");
        if (fgetc(io->f) != EOF)
            return fail(io, s, "image: trailing bytes after the content");
    }
    fclose(io->f);
    free(io);
    return s;
}
