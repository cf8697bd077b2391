/* cairn dump: see dump.h. Layouts: docs/FORMAT.md, numbers: src/format.h. */
#define _POSIX_C_SOURCE 200809L

#include "dump.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

#define NO_PAGE 0xFFFFFFFFu

/* What every decoder below needs of the volume, and a page buffer. */
struct vctx {
    struct cairn_dev *dev;
    uint32_t ps, seg_pages, seg_count, seg_base, node_size, node_pages;
    int paged; /* NAND, BLOCK: records never cross a page */
    int tags;  /* NAND pages carry spare tags */
    uint8_t *page;
    uint32_t held; /* page in `page`, NO_PAGE if none */
    int problems;
};

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

static int vctx_init(struct vctx *v, struct cairn_dev *dev, const struct ckpt *ck)
{
    const struct cairn_geometry *g = &dev->geo;
    memset(v, 0, sizeof *v);
    v->dev = dev;
    v->ps = ck->h.page_size;
    v->seg_pages = ck->h.seg_pages;
    v->seg_count = ck->h.seg_count;
    v->seg_base = ck->anchor[1] + 1u;
    v->node_size = ck->h.node_size;
    v->node_pages = ck->h.node_size / ck->h.page_size; /* both checked by ckpt_parse_header */
    v->paged = g->medium != CAIRN_MEDIUM_NOR;
    v->tags = g->medium == CAIRN_MEDIUM_NAND && g->spare_size >= CN_TAG_LEN &&
              dev->read_spare != NULL;
    v->held = NO_PAGE;
    v->page = (uint8_t *)malloc(v->ps);
    return v->page ? 0 : -1;
}

static void problem(struct vctx *v, const char *indent, const char *what)
{
    printf("%sproblem: %s\n", indent, what);
    v->problems++;
}

/* Page `page` into v->page; 0, or -1 when it cannot be read. */
static int load_page(struct vctx *v, uint32_t page)
{
    if (v->held == page)
        return 0;
    v->held = NO_PAGE;
    if (v->dev->read(v->dev->ctx, page, 0, v->page, v->ps) < 0)
        return -1;
    v->held = page;
    return 0;
}

/* len bytes at byte off of segment seg (off + len inside the segment). */
static int read_bytes(struct vctx *v, uint32_t seg, uint32_t off, uint8_t *out, uint32_t len)
{
    while (len > 0) {
        uint32_t in = off % v->ps, n = v->ps - in < len ? v->ps - in : len;
        if (load_page(v, seg * v->seg_pages + off / v->ps) < 0)
            return -1;
        memcpy(out, v->page + in, n);
        out += n;
        off += n;
        len -= n;
    }
    return 0;
}

/* ---- printing values ---- */

static void print_hex(const char *label, const uint8_t *p, uint32_t len)
{
    uint32_t i;
    printf(" %s=", label);
    for (i = 0; i < len; i++)
        printf("%02x", p[i]);
}

/* A name as "...": printable ASCII as it is, '"', '\\' and other bytes as \xNN. */
static void print_name(const uint8_t *p, uint32_t len)
{
    uint32_t i;
    printf(" name=\"");
    for (i = 0; i < len; i++) {
        if (p[i] >= 0x20 && p[i] < 0x7F && p[i] != '"' && p[i] != '\\')
            putchar(p[i]);
        else
            printf("\\x%02x", p[i]);
    }
    putchar('"');
}

static const char *type_name(uint8_t t, char *buf, size_t size)
{
    if (t == CAIRN_TYPE_FILE)
        return "file";
    if (t == CAIRN_TYPE_DIR)
        return "dir";
    snprintf(buf, size, "%u", (unsigned)t);
    return buf;
}

/* ---- the checkpoint ---- */

static void print_heads(const struct ckpt_hdr *h)
{
    uint32_t i;
    char name[16];
    for (i = 0; i < CN_CK_HEADS; i++) {
        ckpt_head_name(i, name, sizeof name);
        if (h->head_seg[i] == 0xFFFFFFFFu)
            printf("head %-7s none\n", name);
        else
            printf("head %-7s segment %u page %u\n", name, (unsigned)h->head_seg[i],
                   (unsigned)h->head_page[i]);
    }
}

static void print_table(const struct ckpt *ck)
{
    uint32_t i;
    char fl[64];
    printf("segments:\n  %5s %-8s %-12s %8s %8s %6s\n", "seg", "state", "flags", "erases",
           "stamp", "live");
    for (i = 0; i < ck->h.seg_count; i++) {
        const struct ckpt_seg *s = &ck->segs[i];
        printf("  %5u %-8s %-12s %8u %8u %6u\n", (unsigned)i, ckpt_state_name(s->state),
               ckpt_flag_names(s->flags, fl, sizeof fl), (unsigned)s->erase_count,
               (unsigned)s->stamp, (unsigned)s->live);
    }
}

void dump_checkpoint(const struct ckpt *ck, uint32_t medium)
{
    const struct ckpt_hdr *h = &ck->h;
    unsigned n = (unsigned)(h->flags >> CN_CK_F_OTHER_BLOCKS_SHIFT);
    printf("checkpoint in segment %u (anchor %u) slot %u copy %u, %u page%s a copy\n",
           (unsigned)ck->anchor[ck->anchor_index], (unsigned)ck->anchor_index,
           (unsigned)ck->slot, (unsigned)ck->copy, (unsigned)ck->ckpt_pages,
           ck->ckpt_pages == 1 ? "" : "s");
    printf("magic        CRN1\n");
    printf("version      %u\n", (unsigned)h->version);
    printf("flags        0x%02x (%s%s", (unsigned)h->flags,
           h->flags & CN_CK_F_CLEAN ? "clean" : "not clean",
           h->flags & CN_CK_F_OTHER_ERASED ? ", other anchor erased" : "");
    /* bits 2..7: NOR bit 2 PARTIAL; NAND the other anchor's erased blocks */
    if (medium == CAIRN_MEDIUM_NOR && (h->flags & CN_CK_F_PARTIAL))
        printf(", partial run");
    else if (medium != CAIRN_MEDIUM_NOR && n != 0)
        printf(", other anchor erased from block %u", n);
    printf(")\n");
    printf("session      0x%02x (%s)\n", (unsigned)h->session,
           h->session == 0xFF ? "no session began after it" : "a session began after it");
    printf("seq          %u\n", (unsigned)h->seq);
    printf("length       %u\n", (unsigned)h->length);
    printf("crc          0x%08x\n", (unsigned)h->crc);
    printf("page_size    %u\n", (unsigned)h->page_size);
    printf("seg_pages    %u\n", (unsigned)h->seg_pages);
    printf("seg_count    %u\n", (unsigned)h->seg_count);
    printf("node_size    %u\n", (unsigned)h->node_size);
    printf("root         %u\n", (unsigned)h->root);
    printf("height       %u\n", (unsigned)h->height);
    printf("next_id      %u\n", (unsigned)h->next_id);
    printf("log_seg      %u\n", (unsigned)h->log_seg);
    printf("log_off      %u\n", (unsigned)h->log_off);
    printf("log_seq      %u\n", (unsigned)h->log_seq);
    printf("clock        %u\n", (unsigned)h->clock);
    print_heads(h);
    print_table(ck);
}

/* ---- journal records ---- */

struct rec_kind {
    uint8_t type;
    const char *name;
    uint32_t len; /* the fixed length, or the fixed part when `named` */
    int named;    /* a name (length byte at len - 1) follows */
};

static const struct rec_kind rec_kinds[] = {
    {CN_R_PAD, "PAD", 0, 0},           {CN_R_NEXT, "NEXT", CN_RL_NEXT, 0},
    {CN_R_EXTENT, "EXTENT", CN_RL_EXTENT, 0}, {CN_R_SIZE, "SIZE", CN_RL_SIZE, 0},
    {CN_R_TRIM, "TRIM", CN_RL_TRIM, 0}, {CN_R_MOVE, "MOVE", CN_RL_MOVE, 0},
    {CN_R_PUNCH, "PUNCH", CN_RL_PUNCH, 0}, {CN_R_RING, "RING", CN_RL_RING, 0},
    {CN_R_RINGNEW, "RINGNEW", CN_RL_RINGNEW, 1}, {CN_R_CREATE, "CREATE", CN_RL_CREATE, 1},
    {CN_R_REMOVE, "REMOVE", CN_RL_REMOVE, 0}, {CN_R_RENAME, "RENAME", CN_RL_RENAME, 1},
    {CN_R_ATTR, "ATTR", CN_RL_ATTR, 1},  {CN_R_ATTRDEL, "ATTRDEL", CN_RL_ATTRDEL, 0},
};

static const struct rec_kind *rec_kind_of(uint8_t type)
{
    size_t i;
    for (i = 0; i < sizeof rec_kinds / sizeof rec_kinds[0]; i++)
        if (rec_kinds[i].type == type)
            return &rec_kinds[i];
    return NULL;
}

/* Does a payload of len bytes fit its type? (the name or value length byte
 * is the fixed part's last byte) */
static int payload_fits(const struct rec_kind *k, const uint8_t *p, uint32_t len)
{
    if (!k->named)
        return len == k->len;
    return len >= k->len && len == k->len + p[k->len - 1];
}

/* u32 fields of a payload, "name=value" each, from byte 0. */
static void print_u32s(const uint8_t *p, const char *const *names, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        printf(" %s=%u", names[i], (unsigned)le32(p + 4 * i));
}

/* The CREATE part of CREATE and RINGNEW. */
static void print_create(const uint8_t *p)
{
    static const char *const f[] = {"parent", "id"};
    char tb[8];
    print_u32s(p, f, 2);
    printf(" sub=0x%08x type=%s", (unsigned)le32(p + 8), type_name(p[12], tb, sizeof tb));
    print_name(p + CN_RL_CREATE, p[13]);
}

static void print_payload(uint8_t type, const uint8_t *p)
{
    static const char *const ext[] = {"id", "fpage", "phys", "count", "size"};
    static const char *const move[] = {"id", "fpage", "from", "to", "count"};
    static const char *const ring[] = {"id", "slot", "phys", "count", "size", "head"};
    static const char *const punch[] = {"id", "fpage", "count"};
    static const char *const ren[] = {"oparent", "osub", "nparent", "nsub", "replaced", "id"};
    switch (type) {
    case CN_R_NEXT: printf(" seg=%u", (unsigned)le32(p)); break;
    case CN_R_EXTENT:
        print_u32s(p, ext, 4);
        printf(" size=%d", (int)(int32_t)le32(p + 16));
        break;
    case CN_R_SIZE: printf(" id=%u size=%d", (unsigned)le32(p), (int)(int32_t)le32(p + 4)); break;
    case CN_R_TRIM: printf(" id=%u", (unsigned)le32(p)); break;
    case CN_R_MOVE: print_u32s(p, move, 5); break;
    case CN_R_PUNCH: print_u32s(p, punch, 3); break;
    case CN_R_RING:
        print_u32s(p, ring, 4);
        printf(" size=%d head=%u", (int)(int32_t)le32(p + 16), (unsigned)le32(p + 20));
        break;
    case CN_R_RINGNEW:
        printf(" capacity=%u", (unsigned)le32(p));
        print_create(p + 4);
        break;
    case CN_R_CREATE: print_create(p); break;
    case CN_R_REMOVE:
        printf(" parent=%u sub=0x%08x id=%u", (unsigned)le32(p), (unsigned)le32(p + 4),
               (unsigned)le32(p + 8));
        break;
    case CN_R_RENAME:
        printf(" oparent=%u osub=0x%08x nparent=%u nsub=0x%08x", (unsigned)le32(p),
               (unsigned)le32(p + 4), (unsigned)le32(p + 8), (unsigned)le32(p + 12));
        print_u32s(p + 16, ren + 4, 2);
        print_name(p + CN_RL_RENAME, p[24]);
        break;
    case CN_R_ATTR:
        printf(" id=%u atype=%u", (unsigned)le32(p), (unsigned)p[4]);
        print_hex("value", p + CN_RL_ATTR, p[5]);
        break;
    case CN_R_ATTRDEL: printf(" id=%u atype=%u", (unsigned)le32(p), (unsigned)p[4]); break;
    default: break; /* PAD: nothing */
    }
}

static void print_record(uint32_t seg, uint32_t off, uint32_t seq, uint8_t type,
                         const uint8_t *p, uint32_t len)
{
    const struct rec_kind *k = rec_kind_of(type);
    printf("record seg=%u off=%u seq=%u", (unsigned)seg, (unsigned)off, (unsigned)seq);
    if (k == NULL) {
        printf(" type=0x%02x len=%u", (unsigned)type, (unsigned)len);
        print_hex("payload", p, len);
        printf(" unknown-type\n");
        return;
    }
    printf(" type=%s len=%u", k->name, (unsigned)len);
    if (payload_fits(k, p, len))
        print_payload(type, p);
    else {
        print_hex("payload", p, len);
        printf(" malformed");
    }
    putchar('\n');
}

/* Where the journal reader is. */
struct jpos {
    uint32_t seg, off, seq, records, hops;
};

/* A page of the journal written as a file page, its spare tag being the
 * record (FORMAT.md "Placement")? 1 yes (printed, position moved), 0 no,
 * -1 when the spare cannot be read. */
static int tagged_entry(struct vctx *v, struct jpos *j)
{
    uint8_t tag[CN_TAG_LEN], p[CN_RL_EXTENT];
    uint32_t page = j->seg * v->seg_pages + j->off / v->ps;
    if (!v->tags || j->off % v->ps != 0)
        return 0;
    if (v->dev->read_spare(v->dev->ctx, page, tag, CN_TAG_LEN) < 0)
        return -1;
    if (le16(tag + CN_TAG_O_MAGIC) != CN_TAG_MAGIC || tag[CN_TAG_O_VERSION] != CN_TAG_VERSION ||
        le32(tag + CN_TAG_O_CRC) != probe_crc32(0, tag, CN_TAG_O_CRC) ||
        tag[CN_TAG_O_KIND] != CN_TAG_LOG || le32(tag + CN_TAG_O_SEQ) != j->seq)
        return 0;
    memcpy(p, tag + CN_TAG_O_ID, 8); /* id, fpage */
    put32(p + 8, page);
    put32(p + 12, 1);
    memcpy(p + 16, tag + CN_TAG_O_SIZE, 4);
    printf("record seg=%u off=%u seq=%u tag=log type=EXTENT len=%u", (unsigned)j->seg,
           (unsigned)j->off, (unsigned)j->seq, (unsigned)CN_RL_EXTENT);
    print_payload(CN_R_EXTENT, p);
    putchar('\n');
    j->seq++;
    j->records++;
    j->off += v->ps;
    return 1;
}

/* Why a record header ends the journal, or NULL when it does not. */
static const char *header_end(const struct vctx *v, const struct jpos *j, const uint8_t *h,
                              char *why, size_t size)
{
    uint32_t len = le16(h + CN_REC_O_LEN), seg_bytes = v->seg_pages * v->ps, i;
    for (i = 0; i < CN_REC_HDR && h[i] == 0xFF; i++)
        ;
    if (i == CN_REC_HDR)
        return "erased";
    if (CN_REC_HDR + len > CN_REC_MAX || j->off + CN_REC_HDR + len > seg_bytes) {
        snprintf(why, size, "bad length %u", (unsigned)len);
        return why;
    }
    if (le32(h + CN_REC_O_SEQ) != j->seq) {
        snprintf(why, size, "seq %u, expected %u", (unsigned)le32(h + CN_REC_O_SEQ),
                 (unsigned)j->seq);
        return why;
    }
    if (v->paged && j->off % v->ps + CN_REC_HDR + len > v->ps)
        return "crosses a page";
    if (h[CN_REC_O_TYPE] == CN_R_PAD && (!v->paged || len != 0))
        return "bad PAD";
    return NULL;
}

/* The next record: printed and passed (1), or the end (0, why set), or -1 on
 * a read error. */
static int next_record(struct vctx *v, struct jpos *j, uint8_t *rec, const char **why,
                       char *buf, size_t size)
{
    uint32_t len, crc, seg_bytes = v->seg_pages * v->ps, next;
    uint8_t type;
    int r;
    if (v->paged && v->ps - j->off % v->ps < CN_REC_HDR)
        j->off += v->ps - j->off % v->ps;
    if (j->off + CN_REC_HDR > seg_bytes) {
        *why = "end of segment";
        return 0;
    }
    r = tagged_entry(v, j);
    if (r != 0)
        return r;
    if (read_bytes(v, j->seg, j->off, rec, CN_REC_HDR) < 0)
        return -1;
    *why = header_end(v, j, rec, buf, size);
    if (*why)
        return 0;
    len = le16(rec + CN_REC_O_LEN);
    type = rec[CN_REC_O_TYPE];
    if (read_bytes(v, j->seg, j->off + CN_REC_HDR, rec + CN_REC_HDR, len) < 0)
        return -1;
    crc = le32(rec + CN_REC_O_CRC);
    memset(rec + CN_REC_O_CRC, 0, 4);
    if (probe_crc32(0, rec, CN_REC_HDR + len) != crc) {
        *why = "bad crc";
        return 0;
    }
    print_record(j->seg, j->off, j->seq, type, rec + CN_REC_HDR, len);
    j->seq++;
    j->records++;
    if (type == CN_R_PAD) {
        j->off += v->ps - j->off % v->ps;
        return 1;
    }
    if (type != CN_R_NEXT) {
        j->off += CN_REC_HDR + len;
        return 1;
    }
    next = len == CN_RL_NEXT ? le32(rec + CN_REC_HDR) : 0xFFFFFFFFu;
    if (next < v->seg_base || next >= v->seg_count || next == j->seg) {
        *why = "bad NEXT";
        return 0;
    }
    if (++j->hops > v->seg_count) {
        *why = "too many segments";
        return 0;
    }
    j->seg = next;
    j->off = 0;
    return 1;
}

/* Does the checkpoint's journal position lie in the volume? */
static int journal_start_ok(const struct vctx *v, const struct ckpt_hdr *h)
{
    return h->log_seg >= v->seg_base && h->log_seg < v->seg_count &&
           h->log_off <= v->seg_pages * v->ps;
}

int dump_journal(struct cairn_dev *dev, const struct ckpt *ck)
{
    struct vctx v;
    struct jpos j;
    uint8_t rec[CN_REC_MAX];
    char buf[64];
    const char *why = "";
    int r = 1;
    if (vctx_init(&v, dev, ck) < 0)
        return -1;
    j.seg = ck->h.log_seg;
    j.off = ck->h.log_off;
    j.seq = ck->h.log_seq;
    j.records = j.hops = 0;
    if (ck->h.log_seg == 0xFFFFFFFFu && ck->h.root == 0xFFFFFFFFu) {
        /* format leaves a volume unwritten: no journal until its first change */
        printf("journal: none yet (the volume was never written)\n");
        free(v.page);
        return 0;
    }
    printf("journal from segment %u offset %u seq %u\n", (unsigned)j.seg, (unsigned)j.off,
           (unsigned)j.seq);
    if (!journal_start_ok(&v, &ck->h)) {
        problem(&v, "", "the checkpoint's journal position is outside the volume");
        free(v.page);
        return v.problems;
    }
    while (r == 1)
        r = next_record(&v, &j, rec, &why, buf, sizeof buf);
    if (r < 0) {
        why = "unreadable";
        v.problems++;
    }
    printf("journal end segment %u offset %u: %u records, %s\n", (unsigned)j.seg,
           (unsigned)j.off, (unsigned)j.records, why);
    free(v.page);
    return v.problems;
}

/* ---- tree nodes ---- */

struct level {
    uint8_t *node;
    uint32_t next; /* internal: the next child to visit */
    int walk;      /* its children are to be visited */
};

struct walk {
    struct vctx v;
    struct level lv[CN_MAX_HEIGHT];
    uint32_t height, nodes, entries, max_nodes;
};

/* Where a node may lie: whole, in one segment, not in an anchor. */
static const char *node_place(const struct vctx *v, uint32_t ref)
{
    if (ref >= v->seg_count * v->seg_pages)
        return "outside the volume";
    if (ref % v->seg_pages + v->node_pages > v->seg_pages)
        return "crosses its segment";
    if (ref / v->seg_pages < v->seg_base)
        return "in an anchor";
    return NULL;
}

static int load_node(struct vctx *v, uint32_t ref, uint8_t *node)
{
    uint32_t i;
    for (i = 0; i < v->node_pages; i++)
        if (v->dev->read(v->dev->ctx, ref + i, 0, node + i * v->ps, v->ps) < 0)
            return -1;
    return 0;
}

/* The header's checks (FORMAT.md "Tree nodes"); NULL when it passes. */
static const char *header_problem(const struct vctx *v, const uint8_t *n, uint32_t want,
                                  char *why, size_t size)
{
    uint32_t used = le16(n + CN_NODE_O_USED), crc;
    uint8_t hdr[CN_NODE_HDR];
    if (le16(n + CN_NODE_O_MAGIC) != CN_NODE_MAGIC)
        snprintf(why, size, "bad magic 0x%04x", (unsigned)le16(n + CN_NODE_O_MAGIC));
    else if (n[CN_NODE_O_VERSION] != CN_NODE_VERSION)
        snprintf(why, size, "bad version %u", (unsigned)n[CN_NODE_O_VERSION]);
    else if (n[CN_NODE_O_LEVEL] >= CN_MAX_HEIGHT)
        snprintf(why, size, "bad level %u", (unsigned)n[CN_NODE_O_LEVEL]);
    else if (used > v->node_size - CN_NODE_HDR)
        snprintf(why, size, "bad used %u", (unsigned)used);
    else {
        memcpy(hdr, n, CN_NODE_HDR);
        memset(hdr + CN_NODE_O_CRC, 0, 4);
        crc = probe_crc32(probe_crc32(0, hdr, CN_NODE_HDR), n + CN_NODE_HDR, used);
        if (crc != le32(n + CN_NODE_O_CRC))
            snprintf(why, size, "bad crc (computed 0x%08x)", (unsigned)crc);
        else if (n[CN_NODE_O_LEVEL] != want)
            snprintf(why, size, "level %u, expected %u", (unsigned)n[CN_NODE_O_LEVEL],
                     (unsigned)want);
        else
            return NULL;
    }
    return why;
}

static const char *internal_problem(const uint8_t *n, char *why, size_t size)
{
    uint32_t count = le16(n + CN_NODE_O_COUNT), used = le16(n + CN_NODE_O_USED), i;
    const uint8_t *e = n + CN_NODE_HDR;
    if (count == 0 || used != count * CN_NODE_IENT) {
        snprintf(why, size, "bad count %u for used %u", (unsigned)count, (unsigned)used);
        return why;
    }
    for (i = 0; i < count; i++) {
        if (i > 1 && le64(e + i * CN_NODE_IENT) <= le64(e + (i - 1) * CN_NODE_IENT)) {
            snprintf(why, size, "keys out of order at entry %u", (unsigned)i);
            return why;
        }
        if (le32(e + i * CN_NODE_IENT + 8) & 0x80000000u) {
            snprintf(why, size, "child of entry %u names a cache slot", (unsigned)i);
            return why;
        }
    }
    return NULL;
}

static const char *leaf_problem(const uint8_t *n, char *why, size_t size)
{
    uint32_t count = le16(n + CN_NODE_O_COUNT), used = le16(n + CN_NODE_O_USED), i, off = 0;
    const uint8_t *e = n + CN_NODE_HDR;
    uint64_t prev = 0;
    for (i = 0; i < count; i++) {
        if (off + CN_NODE_LEAF_HDR > used ||
            off + CN_NODE_LEAF_HDR + le16(e + off + 8) > used) {
            snprintf(why, size, "entry %u overruns used", (unsigned)i);
            return why;
        }
        if (i > 0 && le64(e + off) <= prev) {
            snprintf(why, size, "keys out of order at entry %u", (unsigned)i);
            return why;
        }
        prev = le64(e + off);
        off += CN_NODE_LEAF_HDR + le16(e + off + 8);
    }
    if (off != used) {
        snprintf(why, size, "entries end at %u, used %u", (unsigned)off, (unsigned)used);
        return why;
    }
    return NULL;
}

/* Is an extent's run a valid one (FORMAT.md "Values")? */
static int run_ok(const struct vctx *v, uint32_t fpage, uint32_t phys, uint32_t count)
{
    return count > 0 && count <= v->seg_pages && fpage <= CN_SUB_MASK - count &&
           phys / v->seg_pages >= v->seg_base && phys / v->seg_pages < v->seg_count &&
           phys / v->seg_pages == (phys + count - 1) / v->seg_pages;
}

/* NAND: do the extent's pages carry tags naming (id, fpage)? Prints
 * " tags=ok" or the first page that does not. */
static void print_tags(struct vctx *v, uint32_t id, uint32_t fpage, uint32_t phys,
                       uint32_t count)
{
    uint8_t tag[CN_TAG_LEN];
    uint32_t i;
    const char *why = NULL;
    for (i = 0; i < count && why == NULL; i++) {
        if (v->dev->read_spare(v->dev->ctx, phys + i, tag, CN_TAG_LEN) < 0)
            why = "unreadable";
        else if (le16(tag + CN_TAG_O_MAGIC) != CN_TAG_MAGIC ||
                 tag[CN_TAG_O_VERSION] != CN_TAG_VERSION ||
                 le32(tag + CN_TAG_O_CRC) != probe_crc32(0, tag, CN_TAG_O_CRC))
            why = "no valid tag";
        else if (le32(tag + CN_TAG_O_ID) != id || le32(tag + CN_TAG_O_FPAGE) != fpage + i)
            why = "another page's tag";
    }
    if (why == NULL) {
        printf(" tags=ok");
        return;
    }
    printf(" tags=bad page=%u (%s)", (unsigned)(phys + i - 1), why);
    v->problems++;
}

static void print_inode(const uint8_t *val, uint32_t vlen)
{
    char tb[8];
    int ring = vlen == CN_RING_INODE_LEN && (val[1] & CN_INODE_F_RING) &&
               val[0] == CAIRN_TYPE_FILE;
    if (!(vlen == CN_INODE_LEN && !(val[1] & CN_INODE_F_RING)) && !ring) {
        print_hex("value", val, vlen);
        printf(" malformed");
        return;
    }
    printf(" type=%s flags=0x%02x parent=%u size=%d dsub=0x%08x", type_name(val[0], tb, sizeof tb),
           (unsigned)val[1], (unsigned)le32(val + 4), (int)(int32_t)le32(val + 8),
           (unsigned)le32(val + 12));
    if (ring)
        printf(" capacity=%u head=%u", (unsigned)le32(val + 16), (unsigned)le32(val + 20));
}

/* A directory entry's value (DIRENT or DIROVF). */
static void print_dirent(const uint8_t *val, uint32_t vlen)
{
    char tb[8];
    if (vlen < CN_DIRENT_HDR + 1u || vlen != CN_DIRENT_HDR + val[5]) {
        print_hex("value", val, vlen);
        printf(" malformed");
        return;
    }
    printf(" child=%u type=%s", (unsigned)le32(val), type_name(val[4], tb, sizeof tb));
    print_name(val + CN_DIRENT_HDR, val[5]);
}

static void print_extent(struct vctx *v, uint64_t key, const uint8_t *val, uint32_t vlen)
{
    uint32_t id = (uint32_t)(key >> 32), fpage = (uint32_t)key & CN_SUB_MASK, phys, count;
    if (vlen != CN_EXTENT_VAL) {
        print_hex("value", val, vlen);
        printf(" malformed");
        return;
    }
    phys = le32(val);
    count = le32(val + 4);
    printf(" fpage=%u phys=%u count=%u", (unsigned)fpage, (unsigned)phys, (unsigned)count);
    if (!run_ok(v, fpage, phys, count)) {
        printf(" bad-run");
        v->problems++;
    } else if (v->tags) {
        print_tags(v, id, fpage, phys, count);
    }
}

static const char *const kind_names[] = {"INODE", "ATTR", "DIRENT", "EXTENT", "ORPHAN", "DIROVF"};

static void print_leaf_entry(struct vctx *v, const uint8_t *e)
{
    uint64_t key = le64(e);
    uint32_t vlen = le16(e + 8), kind = (uint32_t)(key >> 28) & 0xFu, sub = (uint32_t)key & CN_SUB_MASK;
    const uint8_t *val = e + CN_NODE_LEAF_HDR;
    printf("  key=%016llx", (unsigned long long)key);
    if (kind < sizeof kind_names / sizeof kind_names[0])
        printf(" %s", kind_names[kind]);
    else
        printf(" kind=%u", (unsigned)kind);
    printf(" id=%u sub=0x%07x", (unsigned)(key >> 32), (unsigned)sub);
    if (kind == CN_K_INODE)
        print_inode(val, vlen);
    else if ((kind == CN_K_DIRENT && (sub & 15u) != CN_MARK_SLOT) || kind == CN_K_DIROVF)
        print_dirent(val, vlen);
    else if (kind == CN_K_DIRENT && vlen == CN_MARK_VAL)
        printf(" mark=%u", (unsigned)le32(val));
    else if (kind == CN_K_EXTENT)
        print_extent(v, key, val, vlen);
    else if (kind == CN_K_ORPHAN && vlen == 0)
        printf(" orphan");
    else if (kind == CN_K_ATTR && vlen <= CAIRN_ATTR_MAX)
        print_hex("value", val, vlen);
    else {
        print_hex("value", val, vlen);
        printf(" malformed");
    }
    putchar('\n');
}

static void print_entries(struct walk *w, const uint8_t *n)
{
    uint32_t count = le16(n + CN_NODE_O_COUNT), i, off = 0;
    const uint8_t *e = n + CN_NODE_HDR;
    for (i = 0; i < count; i++, w->entries++) {
        if (n[CN_NODE_O_LEVEL] > 0) {
            printf("  key=%016llx child=%u\n", (unsigned long long)le64(e + i * CN_NODE_IENT),
                   (unsigned)le32(e + i * CN_NODE_IENT + 8));
            continue;
        }
        print_leaf_entry(&w->v, e + off);
        off += CN_NODE_LEAF_HDR + le16(e + off + 8);
    }
}

/* Visit the node at ref as level `depth` of the walk: print it, and keep it
 * for its children when it is a sound internal node. */
static void visit(struct walk *w, uint32_t depth, uint32_t ref)
{
    struct level *l = &w->lv[depth];
    uint32_t want = w->height - 1u - depth;
    const char *why = node_place(&w->v, ref);
    char buf[80];
    l->walk = 0;
    w->nodes++;
    if (why == NULL && load_node(&w->v, ref, l->node) < 0)
        why = "unreadable";
    if (why != NULL) {
        printf("node page=%u\n", (unsigned)ref);
        problem(&w->v, "  ", why);
        return;
    }
    printf("node page=%u level=%u count=%u used=%u seq=%u crc=0x%08x\n", (unsigned)ref,
           (unsigned)l->node[CN_NODE_O_LEVEL], (unsigned)le16(l->node + CN_NODE_O_COUNT),
           (unsigned)le16(l->node + CN_NODE_O_USED), (unsigned)le32(l->node + CN_NODE_O_SEQ),
           (unsigned)le32(l->node + CN_NODE_O_CRC));
    why = header_problem(&w->v, l->node, want, buf, sizeof buf);
    if (why == NULL)
        why = want > 0 ? internal_problem(l->node, buf, sizeof buf)
                       : leaf_problem(l->node, buf, sizeof buf);
    if (why != NULL) {
        problem(&w->v, "  ", why);
        return;
    }
    print_entries(w, l->node);
    l->next = 0;
    l->walk = want > 0;
}

/* Depth first from the root, no recursion: lv[d] holds the node being walked
 * at depth d. At most max_nodes visits (more than the volume holds means
 * children are shared or loop). */
static void walk_tree(struct walk *w, uint32_t root)
{
    uint32_t depth = 0;
    visit(w, 0, root);
    for (;;) {
        struct level *l = &w->lv[depth];
        if (l->walk && l->next < le16(l->node + CN_NODE_O_COUNT)) {
            uint32_t child = le32(l->node + CN_NODE_HDR + l->next * CN_NODE_IENT + 8);
            l->next++;
            if (w->nodes >= w->max_nodes) {
                problem(&w->v, "", "more nodes than the volume holds: children shared or "
                                   "looping; the walk stops");
                return;
            }
            visit(w, ++depth, child);
            continue;
        }
        if (depth == 0)
            return;
        depth--;
    }
}

int dump_tree(struct cairn_dev *dev, const struct ckpt *ck)
{
    struct walk w;
    uint32_t i;
    int ok = 1;
    memset(&w, 0, sizeof w);
    if (vctx_init(&w.v, dev, ck) < 0)
        return -1;
    if (ck->h.root == 0xFFFFFFFFu && ck->h.log_seg == 0xFFFFFFFFu) {
        printf("tree: none yet (the volume was never written: an empty root directory)\n");
        free(w.v.page);
        return 0;
    }
    w.height = ck->h.height; /* 1..CN_MAX_HEIGHT: ckpt_parse_header */
    w.max_nodes = w.v.seg_count * w.v.seg_pages / w.v.node_pages;
    for (i = 0; i < w.height; i++)
        ok = ok && (w.lv[i].node = (uint8_t *)malloc(w.v.node_size)) != NULL;
    if (ok) {
        printf("tree from page %u, height %u\n", (unsigned)ck->h.root, (unsigned)w.height);
        walk_tree(&w, ck->h.root);
        printf("tree: %u nodes, %u entries, %d problem%s\n", (unsigned)w.nodes,
               (unsigned)w.entries, w.v.problems, w.v.problems == 1 ? "" : "s");
    }
    for (i = 0; i < w.height; i++)
        free(w.lv[i].node);
    free(w.v.page);
    return ok ? w.v.problems : -1;
}
