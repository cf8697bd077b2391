/* cairn_check: walks every node and every key, and cross-checks them: each
 * entry names an existing object that points back at it, each extent lies
 * inside its file and the volume (and, on NAND, matches its page's tag and
 * data CRC), and the pages counted per segment equal the segment table.
 *
 * The counts per segment need a counter each, which the segment table (4
 * bytes a segment) has no room for: they are kept for a window of segments
 * at a time in the record buffer (CN_REC_MAX bytes, idle while nothing is
 * written), and a volume with more segments than the window holds is counted
 * in more passes over the nodes and extents. */
#include "cn.h"

#ifndef CAIRN_NO_CHECK

#define WINDOW (CN_REC_MAX / 2u) /* 16-bit counters: live counts fit 16 bits */

struct chk {
    struct cairn_check_report *r;
    cairn_check_fn fn;
    void *arg;
    uint32_t prev_id, prev_end; /* last extent seen, for overlaps */
    uint32_t lo;      /* the window's first segment */
    int count_only;   /* a later pass: count the window, report nothing */
};

/* Pages [page, +n) are in use: counted if their segment is in the window. */
static void count_pages(cairn *fs, const struct chk *c, uint32_t page, uint32_t n)
{
    uint32_t s = cn_seg_of(fs, page);
    if (s >= c->lo && s - c->lo < WINDOW) {
        uint8_t *ctr = fs->recbuf + 2u * (s - c->lo);
        cn_put16(ctr, (uint16_t)(cn_get16(ctr) + n));
    }
}

static void problem(struct chk *c, const char *what)
{
    c->r->errors++;
    if (c->fn)
        c->fn(c->arg, what);
}

static int count_node(cairn *fs, uint32_t slot, uint32_t addr, void *arg)
{
    struct chk *c = (struct chk *)arg;
    (void)slot;
    c->r->nodes += c->count_only ? 0u : 1u;
    if (addr != CN_NONE)
        count_pages(fs, c, addr, fs->node_pages);
    return 0;
}

static int is_orphan(cairn *fs, uint32_t id)
{
    return cn_tree_get(fs, cn_key(0, CN_K_ORPHAN, id), NULL, 0, NULL) == 0;
}

static int check_inode(cairn *fs, struct chk *c, uint32_t id)
{
    uint8_t type, v[6];
    uint32_t parent, sub, vlen, steps = 0, up;
    int32_t size;
    int err = cn_inode_get(fs, id, &type, &parent, &size);
    if (err == CAIRN_ERR_CORRUPT) {
        problem(c, "inode: malformed value");
        return 0;
    }
    if (err)
        return err;
    if (type == CAIRN_TYPE_DIR)
        c->r->dirs++;
    else
        c->r->files++;
    if (cn_ring_check_inode(fs, id))
        problem(c, "ring: capacity or window malformed");
    if (id == CN_ROOT_ID) {
        if (type != CAIRN_TYPE_DIR)
            problem(c, "root: not a directory");
        return 0;
    }
    err = cn_inode_sub(fs, id, &sub);
    if (!err)
        err = sub == CN_NONE || !cn_sub_ok(sub) ? CAIRN_ERR_NOENT
              : cn_tree_get(fs, cn_dirent_key(parent, sub, id), v, sizeof v, &vlen);
    if (err == CAIRN_ERR_NOENT || (err == 0 && (vlen < 6 || cn_get32(v) != id))) {
        problem(c, "inode: unreachable (no entry in its parent points at it)");
        return 0;
    }
    if (err)
        return err;
    for (up = parent; up != CN_ROOT_ID; steps++) { /* the parent chain reaches the root */
        if (steps > 4096 || cn_inode_get(fs, up, NULL, &up, NULL) != 0) {
            problem(c, "inode: parent chain does not reach the root");
            break;
        }
    }
    return 0;
}

/* A bucket's overflow mark counts exactly the directory's overflow entries
 * of its hash. Scans the overflow area (it reuses fs->scratch: the caller
 * is done with the mark's value). */
static int check_mark(cairn *fs, struct chk *c, uint64_t k, uint32_t count)
{
    uint32_t dir = cn_key_id(k), hash = cn_key_sub(k) >> 4, n = 0, steps;
    uint64_t o = cn_key(dir, CN_K_DIROVF, 0);
    uint8_t *v = fs->scratch;
    for (steps = 0; steps <= CN_ID_MAX; steps++) {
        struct cn_hit h;
        int err;
        h.key = o;
        h.val = v;
        h.cap = 6 + CAIRN_NAME_MAX;
        err = cn_tree_seek(fs, &h, 0);
        if (err && err != CAIRN_ERR_NOENT)
            return err;
        if (err || cn_key_id(h.key) != dir || cn_key_kind(h.key) != CN_K_DIROVF)
            break;
        if (h.len >= 7 && h.len == 6u + v[5] && cn_name_hash((const char *)v + 6, v[5]) == hash)
            n++;
        o = h.key + 1;
    }
    if (n != count)
        problem(c, "entry: a bucket's overflow mark miscounts its overflow entries");
    return 0;
}

/* A DIRENT key (name or mark) or a DIROVF key with its value. */
static int check_dirent(cairn *fs, struct chk *c, uint64_t k, const uint8_t *v, uint32_t vlen)
{
    uint32_t dir = cn_key_id(k), sub = cn_key_sub(k), parent, isub, base, hash;
    uint8_t type;
    int err, ovf = cn_key_kind(k) == CN_K_DIROVF;
    if (!ovf && (sub & 15u) == CN_MARK_SLOT) {
        if (vlen != 4 || cn_get32(v) == 0) {
            problem(c, "entry: malformed overflow mark");
            return 0;
        }
        return check_mark(fs, c, k, cn_get32(v));
    }
    if (vlen < 7 || vlen != 6u + v[5]) {
        problem(c, "entry: malformed value");
        return 0;
    }
    hash = cn_name_hash((const char *)v + 6, v[5]);
    base = hash << 4;
    if (ovf ? sub != cn_get32(v) : (sub < base || sub >= base + 16))
        problem(c, ovf ? "entry: overflow key is not its object's id"
                       : "entry: key does not match the name's hash");
    if (ovf) {
        uint8_t m[4];
        uint32_t mlen;
        sub = CN_SUB_OVF | hash;
        err = cn_tree_get(fs, cn_mark_key(dir, hash), m, sizeof m, &mlen);
        if (err == CAIRN_ERR_NOENT)
            problem(c, "entry: overflow entry without its bucket's mark");
        else if (err)
            return err;
    }
    err = cn_inode_get(fs, cn_get32(v), &type, &parent, NULL);
    if (err == CAIRN_ERR_NOENT) {
        problem(c, "entry: dangling (its object does not exist)");
        return 0;
    }
    if (err)
        return err == CAIRN_ERR_CORRUPT ? 0 : err;
    if (type != v[4])
        problem(c, "entry: type differs from the object's");
    if (cn_inode_sub(fs, cn_get32(v), &isub) == 0 && (parent != dir || isub != sub))
        problem(c, "entry: object does not point back at it");
    return 0;
}

static int check_tag(cairn *fs, struct chk *c, uint32_t id, uint32_t fpage, uint32_t phys)
{
    uint8_t tag[CN_TAG_LEN];
    int err = cn_dev_read(fs, phys, 0, fs->scratch2, fs->page_size);
    if (!err)
        err = fs->dev->read_spare(fs->dev->ctx, phys, tag, sizeof tag) < 0 ? CAIRN_ERR_IO : 0;
    if (err) {
        problem(c, "data: page unreadable");
        return 0;
    }
    if (!cn_tag_ok(tag) || cn_get32(tag + CN_TAG_O_ID) != id ||
        cn_get32(tag + CN_TAG_O_FPAGE) != fpage)
        problem(c, "data: page tag does not match its extent");
    else if (!cn_crc_ok(cn_get32(tag + CN_TAG_O_DATA_CRC),
                        cn_crc32(0, fs->scratch2, fs->page_size)))
        problem(c, "data: page content fails its CRC");
    return 0;
}

static int check_extent(cairn *fs, struct chk *c, uint64_t k, const uint8_t *v, uint32_t vlen)
{
    uint32_t id = cn_key_id(k), fpage = cn_key_sub(k), phys, count, i;
    int32_t size;
    int err;
    if (vlen != 8) {
        if (!c->count_only)
            problem(c, "extent: malformed value");
        return 0;
    }
    phys = cn_get32(v);
    count = cn_get32(v + 4);
    if (count == 0 || count > fs->seg_pages || cn_seg_of(fs, phys) < fs->seg_base ||
        cn_seg_of(fs, phys) >= fs->seg_count ||
        cn_seg_of(fs, phys) != cn_seg_of(fs, phys + count - 1)) {
        if (!c->count_only)
            problem(c, "extent: pages outside the volume or across segments");
        c->r->extents += c->count_only ? 0u : 1u;
        return 0;
    }
    count_pages(fs, c, phys, count);
    if (c->count_only)
        return 0;
    c->r->extents++;
    if (c->prev_id == id && fpage < c->prev_end)
        problem(c, "extent: overlaps the previous one");
    c->prev_id = id;
    c->prev_end = fpage + count;
    c->r->data_pages += count;
    err = cn_inode_get(fs, id, NULL, NULL, &size);
    if (err == 0)
        size = cn_ring_extent_limit(fs, id, size); /* a ring's slots all count */
    if (err == CAIRN_ERR_NOENT || (err == 0 && (uint64_t)(fpage + count) * fs->page_size >=
                                                   (uint64_t)size + fs->page_size)) {
        if (!is_orphan(fs, id))
            problem(c, err ? "extent: belongs to no object" : "extent: past the end of its file");
        return 0;
    }
    if (err)
        return err == CAIRN_ERR_CORRUPT ? 0 : err;
    if (fs->spare_tags)
        for (i = 0; i < count; i++) {
            err = check_tag(fs, c, id, fpage + i, phys + i);
            if (err)
                return err;
        }
    return 0;
}

/* One key of the first pass: every check of its kind. */
static int check_key(cairn *fs, struct chk *c, uint64_t k, const uint8_t *v, uint32_t vlen)
{
    int err = 0;
    switch (cn_key_kind(k)) {
    case CN_K_INODE:
        err = cn_key_sub(k) == 0 ? check_inode(fs, c, cn_key_id(k)) : 0;
        break;
    case CN_K_DIRENT: /* nothing below reuses fs->scratch but check_mark */
    case CN_K_DIROVF:
        err = check_dirent(fs, c, k, v, vlen);
        break;
    case CN_K_EXTENT:
        err = check_extent(fs, c, k, v, vlen);
        break;
    case CN_K_ATTR:
        if (cn_inode_get(fs, cn_key_id(k), NULL, NULL, NULL) == CAIRN_ERR_NOENT &&
            !is_orphan(fs, cn_key_id(k)))
            problem(c, "attribute: belongs to no object");
        break;
    case CN_K_ORPHAN:
        if (cn_key_id(k) != 0)
            problem(c, "orphan mark under a non-zero id");
        break;
    default:
        problem(c, "key of unknown kind");
    }
    return err;
}

/* A later pass counts extents only: the key before the next that may be one
 * (check_keys steps one on). */
static uint64_t skip_to_extents(uint64_t k)
{
    if (cn_key_kind(k) < CN_K_EXTENT)
        return cn_key(cn_key_id(k), CN_K_EXTENT, 0) - 1u;
    return k | 0xFFFFFFFFu; /* the greatest key of this id */
}

static int check_keys(cairn *fs, struct chk *c)
{
    uint64_t k = 0;
    uint8_t *v = fs->scratch;
    for (;;) {
        uint32_t vlen;
        struct cn_hit h;
        int err;
        h.key = k;
        h.val = v;
        h.cap = 6 + CAIRN_NAME_MAX;
        err = cn_tree_seek(fs, &h, 0);
        k = h.key;
        vlen = h.len;
        if (err == CAIRN_ERR_NOENT)
            return 0;
        if (err)
            return err;
        if (c->count_only && cn_key_kind(k) != CN_K_EXTENT)
            k = skip_to_extents(k);
        else if (c->count_only)
            err = check_extent(fs, c, k, v, vlen);
        else
            err = check_key(fs, c, k, v, vlen);
        if (err)
            return err;
        if (k == UINT64_MAX)
            return 0;
        k++;
    }
}


int cairn_check(cairn *fs, struct cairn_check_report *report, cairn_check_fn report_fn,
                void *arg)
{
    struct cairn_check_report local;
    struct chk c;
    uint32_t s;
    int err;
    if (report == NULL)
        report = &local;
    /* zeroed before anything can fail: a caller that reads it after an
     * error reads zeros (session 39: the fuzz walk read a stack's garbage,
     * 2,040,608 nodes, after an IO from a volume no longer ready) */
    memset(report, 0, sizeof *report);
    err = cn_fs_ready(fs, 0);
    if (err)
        return err;
    c.r = report;
    c.fn = report_fn;
    c.arg = arg;
    c.prev_id = CN_NONE;
    c.prev_end = 0;
    c.count_only = 0;
    /* every node gets its address first, so each is counted where it lives;
     * on a volume too full to write them the check goes on without the live
     * counts (as on a read-only mount, whose replay leaves nodes dirty):
     * before session 38 it answered NOSPC there (test_eol) */
    if (!fs->read_only)
        err = cn_flush_nodes(fs);
    if (err == CAIRN_ERR_NOSPC)
        err = 0;
    for (c.lo = fs->seg_base; c.lo < fs->seg_count && !err; c.lo += WINDOW) {
        memset(fs->recbuf, 0, CN_REC_MAX);
        err = cn_tree_walk(fs, count_node, &c);
        if (!err)
            err = check_keys(fs, &c);
        for (s = c.lo; s - c.lo < WINDOW && s < fs->seg_count && !err; s++) {
            const struct cn_seg *g = &fs->segs[s];
            if (cn_get16(fs->recbuf + 2u * (s - c.lo)) != g->live && fs->dirty_nodes == 0)
                problem(&c, "segment: live page count differs from the pages in use");
            if (g->live > 0 && (g->state == CN_SEG_FREE || g->state == CN_SEG_ERASED ||
                                g->state == CN_SEG_BAD))
                problem(&c, "segment: holds live pages but is marked free or bad");
        }
        c.count_only = 1;
    }
    if (err == CAIRN_ERR_CORRUPT || err == CAIRN_ERR_NOENT || err == CAIRN_ERR_IO)
        problem(&c, err == CAIRN_ERR_IO ? "tree: a node cannot be read (the check stopped)"
                                        : "tree: a node is corrupt (the check stopped)");
    if (err)
        return err == CAIRN_ERR_NOENT ? CAIRN_ERR_CORRUPT : err;
    return report->errors ? CAIRN_ERR_CORRUPT : 0;
}

#else
int cairn_check(cairn *fs, struct cairn_check_report *report, cairn_check_fn report_fn,
                void *arg)
{
    (void)fs;
    (void)report;
    (void)report_fn;
    (void)arg;
    return CAIRN_ERR_INVAL;
}
#endif
