/* Journal records and their effect on the tree. The live path appends a
 * record and applies it with the very function mount uses to replay it, so a
 * replayed volume reaches the same tree and the same space accounting.
 * Payloads and tree values: docs/FORMAT.md "Journal" and "Values" (a sub is
 * a DIRENT sub or CN_SUB_OVF | hash24; creating, removing or moving an
 * overflow entry also counts it in its bucket's mark). */
#include <stddef.h>

#include "cn.h"

static uint32_t pages_for(const cairn *fs, int32_t size)
{
    return (uint32_t)(((uint64_t)(uint32_t)size + fs->page_size - 1) / fs->page_size);
}

int cn_inode_get(cairn *fs, uint32_t id, uint8_t *type, uint32_t *parent, int32_t *size)
{
    uint8_t v[CN_INODE_LEN];
    uint32_t vlen;
    int err = cn_tree_get(fs, cn_key(id, CN_K_INODE, 0), v, sizeof v, &vlen);
    if (err)
        return err;
    if (!cn_inode_len_ok(v, vlen) || (v[0] != CAIRN_TYPE_FILE && v[0] != CAIRN_TYPE_DIR) ||
        (int32_t)cn_get32(v + 8) < 0)
        return CAIRN_ERR_CORRUPT;
    if (type)
        *type = v[0];
    if (parent)
        *parent = cn_get32(v + 4);
    if (size)
        *size = (int32_t)cn_get32(v + 8);
    return 0;
}

int cn_inode_sub(cairn *fs, uint32_t id, uint32_t *sub)
{
    uint8_t v[CN_INODE_LEN];
    uint32_t vlen;
    int err = cn_tree_get(fs, cn_key(id, CN_K_INODE, 0), v, sizeof v, &vlen);
    if (!err)
        *sub = cn_inode_len_ok(v, vlen) ? cn_get32(v + 12) : CN_NONE;
    return err;
}

/* Rewrite an inode with one field changed (size or parent/sub). */
static int inode_update(cairn *fs, uint32_t id, const int32_t *size, const uint32_t *parent,
                        const uint32_t *sub)
{
    uint8_t v[CN_INODE_MAX]; /* a ring inode keeps its longer value */
    uint32_t vlen;
    int err = cn_tree_get(fs, cn_key(id, CN_K_INODE, 0), v, sizeof v, &vlen);
    if (err)
        return err == CAIRN_ERR_NOENT ? CAIRN_ERR_CORRUPT : err;
    if (!cn_inode_len_ok(v, vlen))
        return CAIRN_ERR_CORRUPT;
    if (size) {
        if ((int32_t)cn_get32(v + 8) == *size)
            return 0;
        cn_put32(v + 8, (uint32_t)*size);
    }
    if (parent)
        cn_put32(v + 4, *parent);
    if (sub)
        cn_put32(v + 12, *sub);
    return cn_tree_put(fs, cn_key(id, CN_K_INODE, 0), v, vlen);
}

static int inode_set_size(cairn *fs, uint32_t id, int32_t size)
{
    return inode_update(fs, id, &size, NULL, NULL);
}

/* A run of file pages [fpage, +count) at phys: at least one page, all in one
 * segment after the anchors, inside the volume. Every extent read from the
 * tree is checked with this too: a count of 0 (or one past its segment) would
 * stop the loops over extents from making progress, and a page outside the
 * volume would send GC and the trims to the wrong segment table entry. */
static int valid_run(const cairn *fs, uint32_t fpage, uint32_t phys, uint32_t count)
{
    return count > 0 && count <= fs->seg_pages && fpage <= CN_SUB_MASK - count &&
           cn_seg_of(fs, phys) >= fs->seg_base && cn_seg_of(fs, phys) < fs->seg_count &&
           cn_seg_of(fs, phys) == cn_seg_of(fs, phys + count - 1);
}

CN_NOINLINE static int get_extent(cairn *fs, uint64_t key, uint32_t *phys, uint32_t *count)
{
    uint8_t v[8];
    uint32_t vlen;
    int err = cn_tree_get(fs, key, v, sizeof v, &vlen);
    if (err)
        return err;
    *phys = cn_get32(v);
    *count = cn_get32(v + 4);
    return vlen == CN_EXTENT_VAL && valid_run(fs, cn_key_sub(key), *phys, *count)
               ? 0
               : CAIRN_ERR_CORRUPT;
}

static int put_extent(cairn *fs, uint32_t id, uint32_t fpage, uint32_t phys, uint32_t count)
{
    uint8_t b[8];
    struct cn_val v;
    cn_put32(b, phys);
    cn_put32(b + 4, count);
    v.a = b;
    v.alen = 8;
    v.b = NULL;
    v.blen = 0;
    return cn_tree_put2(fs, &v, cn_key(id, CN_K_EXTENT, fpage));
}

/* The extent of `id` with the greatest start <= fpage (le) or the least start
 * >= fpage (ge). Returns CAIRN_ERR_NOENT when there is none. */
CN_NOINLINE int cn_extent_find(cairn *fs, uint32_t id, uint32_t fpage, int le, struct cn_ext *e)
{
    struct cn_hit h;
    const uint8_t *v = (const uint8_t *)&e->phys; /* the value lands on phys, count */
    uint32_t phys;
    int err;
    h.key = cn_key(id, CN_K_EXTENT, fpage);
    h.val = &e->phys;
    h.cap = 8;
    err = cn_tree_seek(fs, &h, le);
    if (err)
        return err;
    if (cn_key_id(h.key) != id || cn_key_kind(h.key) != CN_K_EXTENT)
        return CAIRN_ERR_NOENT;
    if (h.len != 8)
        return CAIRN_ERR_CORRUPT;
    e->start = cn_key_sub(h.key);
    phys = cn_get32(v); /* decoded in place: little-endian bytes to host order */
    e->count = cn_get32(v + 4);
    e->phys = phys;
    return valid_run(fs, e->start, phys, e->count) ? 0 : CAIRN_ERR_CORRUPT;
}
typedef char cn_ext_packed[offsetof(struct cn_ext, count) == offsetof(struct cn_ext, phys) + 4 ? 1 : -1];

int cn_extent_lookup(cairn *fs, uint32_t id, uint32_t fpage, struct cn_ext *e)
{
    int err = cn_extent_find(fs, id, fpage, 1, e);
    if (err == 0 && e->start + e->count <= fpage)
        err = CAIRN_ERR_NOENT;
    return err;
}

/* Remove pages [from, to) of id from the map, freeing their space. */
static int cut_range(cairn *fs, uint32_t id, uint32_t from, uint32_t to)
{
    struct cn_ext e;
    uint32_t cursor = from;
    int err = cn_extent_find(fs, id, from, 1, &e);
    if (err == CAIRN_ERR_NOENT || (err == 0 && e.start + e.count <= from))
        err = cn_extent_find(fs, id, from, 0, &e);
    while (err == 0 && e.start < to) {
        uint32_t s = e.start, p = e.phys, n = e.count;
        uint32_t a = s > cursor ? s : cursor, b = s + n < to ? s + n : to;
        if (b <= a) /* cannot happen with valid extents: never loop without progress */
            return CAIRN_ERR_CORRUPT;
        cn_live_add(fs, p + (a - s), -(int32_t)(b - a));
        if (s < a)
            err = put_extent(fs, id, s, p, a - s);
        else
            err = cn_tree_del(fs, cn_key(id, CN_K_EXTENT, s));
        if (!err && s + n > b)
            err = put_extent(fs, id, b, p + (b - s), s + n - b);
        if (err)
            return err;
        cursor = b;
        if (cursor >= to)
            break;
        err = cn_extent_find(fs, id, cursor, 0, &e);
    }
    return err == CAIRN_ERR_NOENT ? 0 : err;
}

/* map_run once [fpage, +count) is cut: map it, merged with a neighbour that
 * continues it in the same segment. Out of line, so the neighbours' lookups
 * are not in map_run's frame while it cuts. */
CN_NOINLINE static int map_merge(cairn *fs, uint32_t id, uint32_t fpage, uint32_t phys,
                                 uint32_t count)
{
    struct cn_ext e;
    uint32_t end = fpage + count;
    int err;
    if (fpage > 0 && cn_extent_find(fs, id, fpage - 1, 1, &e) == 0 &&
        e.start + e.count == fpage && e.phys + e.count == phys &&
        cn_seg_of(fs, e.phys) == cn_seg_of(fs, phys)) {
        fpage = e.start;
        phys = e.phys;
        count += e.count;
    }
    if (get_extent(fs, cn_key(id, CN_K_EXTENT, end), &e.phys, &e.count) == 0 &&
        e.phys == phys + count && cn_seg_of(fs, e.phys + e.count - 1) == cn_seg_of(fs, phys)) {
        err = cn_tree_del(fs, cn_key(id, CN_K_EXTENT, end));
        if (err)
            return err;
        count += e.count;
    }
    return put_extent(fs, id, fpage, phys, count);
}

/* Map pages [fpage, +count) of id to phys (replacing what they mapped to),
 * merging with a neighbour that continues it in the same segment. */
static int map_run(cairn *fs, uint32_t id, uint32_t fpage, uint32_t phys, uint32_t count)
{
    int err = cut_range(fs, id, fpage, fpage + count);
    if (!err)
        err = map_merge(fs, id, fpage, phys, count);
    if (err)
        return err;
    cn_live_add(fs, phys, (int32_t)count);
    fs->ext_gen++; /* open files' extent cursors are stale */
    return 0;
}

CN_NOINLINE static int apply_extent(cairn *fs, uint32_t id, uint32_t fpage, uint32_t phys,
                        uint32_t count, int32_t size)
{
    int err;
    if (!valid_run(fs, fpage, phys, count) || size < 0)
        return CAIRN_ERR_CORRUPT;
    err = map_run(fs, id, fpage, phys, count);
    return err ? err : inode_set_size(fs, id, size);
}

/* A MOVE record's pages must still be where GC read them: inside one extent,
 * at `from`. Out of line: apply_move's frame stays small over map_run. */
CN_NOINLINE static int move_ok(cairn *fs, const uint8_t *p)
{
    uint32_t id = cn_get32(p), fpage = cn_get32(p + 4), from = cn_get32(p + 8);
    uint32_t count = cn_get32(p + 16);
    struct cn_ext e;
    int err;
    if (!valid_run(fs, fpage, cn_get32(p + 12), count))
        return CAIRN_ERR_CORRUPT;
    err = cn_extent_find(fs, id, fpage, 1, &e);
    if (err || e.start + e.count < fpage + count || e.phys + (fpage - e.start) != from)
        return err && err != CAIRN_ERR_NOENT ? err : CAIRN_ERR_CORRUPT;
    return 0;
}

/* GC moved pages of one extent, unchanged but for where they are. */
CN_NOINLINE static int apply_move(cairn *fs, const uint8_t *p)
{
    int err = move_ok(fs, p);
    return err ? err : map_run(fs, cn_get32(p), cn_get32(p + 4), cn_get32(p + 12),
                               cn_get32(p + 16));
}

/* Sector trim: pages [fpage, +count) of a file become a hole. */
CN_NOINLINE static int apply_punch(cairn *fs, uint32_t id, uint32_t fpage, uint32_t count)
{
    int err;
    if (id < 2 || count == 0 || fpage > CN_SUB_MASK - count)
        return CAIRN_ERR_CORRUPT;
    err = cut_range(fs, id, fpage, fpage + count);
    fs->ext_gen++; /* open files' extent cursors are stale */
    return err;
}

/* Queue the object for trimming: its space is freed in bounded steps. */
static int add_orphan(cairn *fs, uint32_t id)
{
    return cn_tree_put(fs, cn_key(0, CN_K_ORPHAN, id), "", 0);
}

CN_NOINLINE static int apply_size(cairn *fs, uint32_t id, int32_t size)
{
    int32_t old;
    int err = cn_inode_get(fs, id, NULL, NULL, &old);
    if (err)
        return err == CAIRN_ERR_NOENT ? CAIRN_ERR_CORRUPT : err;
    if (size < 0)
        return CAIRN_ERR_CORRUPT;
    err = inode_set_size(fs, id, size);
    if (err || size >= old)
        return err;
    fs->ext_gen++; /* open files' extent cursors are stale */
    {
        struct cn_ext e;
        err = cn_extent_find(fs, id, CN_SUB_MASK, 1, &e);
        if (err == 0 && e.start + e.count > pages_for(fs, size))
            return add_orphan(fs, id);
    }
    return err == CAIRN_ERR_NOENT ? 0 : err;
}

/* Free up to CN_TRIM_BATCH keys of an orphan: the extents past its size if
 * the inode still exists, else every key of the object. */
CN_NOINLINE static int apply_trim(cairn *fs, uint32_t id)
{
    uint32_t done = 0;
    int32_t size;
    int err, alive = cn_inode_get(fs, id, NULL, NULL, &size) == 0;
    uint32_t first = alive ? pages_for(fs, size) : 0;
    if (id == 0)
        return CAIRN_ERR_CORRUPT;
    while (done < CN_TRIM_BATCH) {
        uint64_t k;
        uint8_t v[8];
        struct cn_hit h;
        h.key = cn_key(id, alive ? (unsigned)CN_K_EXTENT : 0xFu, CN_SUB_MASK);
        h.val = v;
        h.cap = sizeof v;
        err = cn_tree_seek(fs, &h, 1);
        k = h.key;
        if (err == CAIRN_ERR_NOENT || (err == 0 && cn_key_id(k) != id))
            break;
        if (err)
            return err;
        if (cn_key_kind(k) == CN_K_EXTENT) {
            uint32_t s = cn_key_sub(k), n = cn_get32(v + 4);
            if (h.len != 8 || !valid_run(fs, s, cn_get32(v), n))
                return CAIRN_ERR_CORRUPT;
            if (s + n <= first)
                break;
            err = cut_range(fs, id, s > first ? s : first, s + n);
        } else if (alive) {
            break;
        } else {
            err = cn_tree_del(fs, k);
        }
        if (err)
            return err;
        done++;
    }
    fs->ext_gen++; /* open files' extent cursors are stale */
    if (done < CN_TRIM_BATCH) {
        err = cn_tree_del(fs, cn_key(0, CN_K_ORPHAN, id));
        if (err && err != CAIRN_ERR_NOENT)
            return err;
    }
    return 0;
}

/* The nodes apply_trim's changes reach for an object that is gone: it
 * deletes its last CN_TRIM_BATCH keys (an extent cut whole is deleted, not
 * split) and, with fewer left, its orphan entry. One still alive (a
 * shrink) may split an extent: 1. */
static int trim_cost(cairn *fs, struct cn_cost *c, uint32_t id)
{
    int fewer = 1, err = cn_inode_get(fs, id, NULL, NULL, NULL);
    if (err != CAIRN_ERR_NOENT)
        return err ? err : 1;
    err = cn_tree_cost_last(fs, c, cn_key(id, 0, 0), cn_key(id, 0xFu, CN_SUB_MASK),
                            CN_TRIM_BATCH, &fewer);
    return err || !fewer ? err : cn_tree_cost_key(fs, c, cn_key(0, CN_K_ORPHAN, id), 0);
}

/* An overflow entry enters (delta 1) or leaves (-1) its bucket's count. */
static int mark_adjust(cairn *fs, uint32_t dir, uint32_t sub, int delta)
{
    uint64_t k = cn_mark_key(dir, sub);
    uint8_t v[4];
    uint32_t vlen, count = 0;
    int err;
    if (!cn_sub_is_ovf(sub))
        return 0;
    err = cn_tree_get(fs, k, v, sizeof v, &vlen);
    if (err && err != CAIRN_ERR_NOENT)
        return err;
    if (!err) {
        if (vlen != 4 || cn_get32(v) == 0)
            return CAIRN_ERR_CORRUPT;
        count = cn_get32(v);
    }
    if (delta < 0 && count == 0)
        return CAIRN_ERR_CORRUPT;
    count = delta < 0 ? count - 1 : count + 1;
    if (count == 0)
        return cn_tree_del(fs, k);
    cn_put32(v, count);
    return cn_tree_put(fs, k, v, 4);
}

/* The callers count an overflow entry in its mark (mark_adjust) beside this
 * call, not under it: one frame less below the tree's writes. */
static int put_dirent(cairn *fs, uint32_t parent, uint32_t sub, uint32_t id, uint8_t type,
                      const uint8_t *name, uint32_t nlen)
{
    uint8_t h[6];
    struct cn_val v;
    if (cn_sub_is_ovf(sub) && (sub & 0xFFFFFFu) != cn_name_hash((const char *)name, nlen))
        return CAIRN_ERR_CORRUPT; /* the mark must count the name's own bucket */
    cn_put32(h, id);
    h[4] = type;
    h[5] = (uint8_t)nlen;
    v.a = h;
    v.alen = 6;
    v.b = name;
    v.blen = nlen;
    return cn_tree_put2(fs, &v, cn_dirent_key(parent, sub, id));
}


CN_NOINLINE static int apply_create(cairn *fs, const uint8_t *p, uint32_t len)
{
    uint32_t parent = cn_get32(p), id = cn_get32(p + 4), sub = cn_get32(p + 8);
    uint8_t type = p[12], nlen = p[13], v[CN_INODE_LEN], ptype = 0;
    int err;
    if (len != CN_RL_CREATE + nlen || nlen == 0 || id < 2 || id > CN_ID_MAX || !cn_sub_ok(sub) ||
        (type != CAIRN_TYPE_FILE && type != CAIRN_TYPE_DIR))
        return CAIRN_ERR_CORRUPT;
    err = cn_inode_get(fs, parent, &ptype, NULL, NULL);
    if (err || ptype != CAIRN_TYPE_DIR)
        return err ? err : CAIRN_ERR_CORRUPT;
    err = put_dirent(fs, parent, sub, id, type, p + CN_RL_CREATE, nlen);
    if (!err)
        err = mark_adjust(fs, parent, sub, 1);
    if (err)
        return err;
    cn_inode_pack(v, type, parent, 0, sub);
    err = cn_tree_put(fs, cn_key(id, CN_K_INODE, 0), v, CN_INODE_LEN);
    if (!err && id >= fs->next_id)
        fs->next_id = id + 1;
    return err;
}

CN_NOINLINE static int apply_remove(cairn *fs, uint32_t parent, uint32_t sub, uint32_t id)
{
    int err = cn_sub_ok(sub) ? cn_tree_del(fs, cn_dirent_key(parent, sub, id))
                             : CAIRN_ERR_CORRUPT;
    if (!err)
        err = mark_adjust(fs, parent, sub, -1);
    if (!err)
        err = cn_tree_del(fs, cn_key(id, CN_K_INODE, 0));
    if (!err)
        err = add_orphan(fs, id);
    fs->ext_gen++; /* open files' extent cursors are stale */
    return err == CAIRN_ERR_NOENT ? CAIRN_ERR_CORRUPT : err;
}

/* The nodes apply_remove's changes reach, in its order: its deletes, the
 * mark's count (same size), the orphan's entry (the one that grows). */
static int remove_cost(cairn *fs, struct cn_cost *c, const uint8_t *p)
{
    uint32_t parent = cn_get32(p), sub = cn_get32(p + 4), id = cn_get32(p + 8);
    int err = cn_tree_cost_key(fs, c, cn_dirent_key(parent, sub, id), 0);
    if (!err && cn_sub_is_ovf(sub))
        err = cn_tree_cost_key(fs, c, cn_mark_key(parent, sub), CN_NODE_LEAF_HDR + 4u);
    if (!err)
        err = cn_tree_cost_key(fs, c, cn_key(id, CN_K_INODE, 0), 0);
    if (!err)
        err = cn_tree_cost_key(fs, c, cn_key(0, CN_K_ORPHAN, id), CN_NODE_LEAF_HDR);
    return err;
}

CN_NOINLINE static int apply_rename(cairn *fs, const uint8_t *p, uint32_t len)
{
    uint32_t op = cn_get32(p), osub = cn_get32(p + 4), np = cn_get32(p + 8);
    uint32_t nsub = cn_get32(p + 12), replaced = cn_get32(p + 16), id = cn_get32(p + 20);
    uint32_t vlen;
    uint8_t nlen = p[24], v[6], type;
    int err;
    if (len != CN_RL_RENAME + nlen || nlen == 0 || !cn_sub_ok(osub) || !cn_sub_ok(nsub))
        return CAIRN_ERR_CORRUPT;
    err = cn_tree_get(fs, cn_dirent_key(op, osub, id), v, sizeof v, &vlen);
    if (err || vlen < 7 || cn_get32(v) != id)
        return err == 0 || err == CAIRN_ERR_NOENT ? CAIRN_ERR_CORRUPT : err;
    type = v[4];
    err = cn_tree_del(fs, cn_dirent_key(op, osub, id));
    if (!err)
        err = mark_adjust(fs, op, osub, -1);
    if (!err && replaced != 0) { /* its entry goes (an overflow one has its own key); */
        err = cn_tree_del(fs, cn_dirent_key(np, nsub, replaced)); /* its count stays */
        if (!err)
            err = cn_tree_del(fs, cn_key(replaced, CN_K_INODE, 0));
        if (!err)
            err = add_orphan(fs, replaced);
        fs->ext_gen++;
    }
    if (!err)
        err = put_dirent(fs, np, nsub, id, type, p + CN_RL_RENAME, nlen);
    if (!err && replaced == 0)
        err = mark_adjust(fs, np, nsub, 1);
    if (!err)
        err = inode_update(fs, id, NULL, &np, &nsub);
    return err == CAIRN_ERR_NOENT ? CAIRN_ERR_CORRUPT : err;
}

#ifndef CAIRN_NO_RING
/* Ring records (ring.c) map pages and create objects as these do. */
int cn_apply_extent(cairn *fs, uint32_t id, uint32_t fpage, uint32_t phys, uint32_t count,
                    int32_t size)
{
    return apply_extent(fs, id, fpage, phys, count, size);
}

int cn_apply_create(cairn *fs, const uint8_t *p, uint32_t len)
{
    return len >= CN_RL_CREATE ? apply_create(fs, p, len) : CAIRN_ERR_CORRUPT;
}
#endif

int cn_apply(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len)
{
    switch (type) {
    case CN_R_PAD:
    case CN_R_NEXT:
        return 0;
    case CN_R_EXTENT:
        if (len != CN_RL_EXTENT)
            return CAIRN_ERR_CORRUPT;
        return apply_extent(fs, cn_get32(p), cn_get32(p + 4), cn_get32(p + 8),
                            cn_get32(p + 12), (int32_t)cn_get32(p + 16));
    case CN_R_SIZE:
        return len == CN_RL_SIZE ? apply_size(fs, cn_get32(p), (int32_t)cn_get32(p + 4))
                        : CAIRN_ERR_CORRUPT;
    case CN_R_TRIM:
        return len == CN_RL_TRIM ? apply_trim(fs, cn_get32(p)) : CAIRN_ERR_CORRUPT;
    case CN_R_MOVE:
        return len == CN_RL_MOVE ? apply_move(fs, p) : CAIRN_ERR_CORRUPT;
    case CN_R_PUNCH:
        return len == CN_RL_PUNCH ? apply_punch(fs, cn_get32(p), cn_get32(p + 4), cn_get32(p + 8))
                         : CAIRN_ERR_CORRUPT;
    case CN_R_CREATE:
        return len >= CN_RL_CREATE ? apply_create(fs, p, len) : CAIRN_ERR_CORRUPT;
    case CN_R_RING:
    case CN_R_RINGNEW:
        return cn_ring_apply(fs, type, p, len);
    case CN_R_REMOVE:
        return len == CN_RL_REMOVE ? apply_remove(fs, cn_get32(p), cn_get32(p + 4), cn_get32(p + 8))
                         : CAIRN_ERR_CORRUPT;
    case CN_R_RENAME:
        return len >= CN_RL_RENAME ? apply_rename(fs, p, len) : CAIRN_ERR_CORRUPT;
    case CN_R_ATTR:
        if (len < CN_RL_ATTR || len != CN_RL_ATTR + p[5] || p[5] > CAIRN_ATTR_MAX)
            return CAIRN_ERR_CORRUPT;
        return cn_tree_put(fs, cn_key(cn_get32(p), CN_K_ATTR, p[4]), p + CN_RL_ATTR, p[5]);
    case CN_R_ATTRDEL: {
        int err;
        if (len != CN_RL_ATTRDEL)
            return CAIRN_ERR_CORRUPT;
        err = cn_tree_del(fs, cn_key(cn_get32(p), CN_K_ATTR, p[4]));
        return err == CAIRN_ERR_NOENT ? 0 : err;
    }
    default:
        return CAIRN_ERR_CORRUPT;
    }
}

/* Write the dirty tree and a checkpoint that makes the journal so far
 * unnecessary; segments that became dead are free from here on. */
int cn_commit(cairn *fs)
{
    int err;
    if (fs->read_only)
        return 0;
    /* Moves a squeeze left unrecorded (it stopped half-way) are made durable
     * only with the recovery's two segments free: else a cut after this
     * checkpoint would leave a recovery without room (mount NOSPC). GC goes
     * on with the victim first. (A recovery's own commit is what mounts.) */
    if (fs->unrecorded && !fs->in_gc && !fs->recovering &&
        cn_free_segs(fs) + cn_dead_segs(fs) < CN_RECOVERY_SEGS)
        return CAIRN_ERR_NOSPC;
    err = cn_session_begin(fs);
    /* a commit that frees segments may borrow one from the recovery reserve
     * for its nodes: the checkpoint gives back more than the flush took */
    fs->borrow = cn_dead_segs(fs) > 0;
    if (!err)
        err = cn_cache_flush(fs);
    fs->borrow = 0;
    if (err)
        return err;
    cn_seg_release_dead(fs);
    fs->log.last_ext = CN_NONE;
    fs->log.since = 0;
    err = cn_ckpt_write(fs, 0);
    if (!err)
        fs->unrecorded = 0;
    return err;
}

/* Room for the next flush (alloc.c cn_meta_room), counting one of the
 * recovery's segments when `borrow`. Only the count borrows: a flush takes
 * that segment only in a commit that frees one (cn_commit), so no
 * checkpoint leaves a recovery short, whatever the record turns out to free. */
static int meta_room(cairn *fs, uint32_t extra, uint8_t borrow)
{
    uint8_t was = fs->borrow;
    int ok;
    if (!borrow)
        return cn_meta_room(fs, extra); /* every record but a refused delete's */
    fs->borrow = (uint8_t)(was | borrow);
    ok = cn_meta_room(fs, extra);
    fs->borrow = was;
    return ok;
}

/* Before a record: make room while failing still changes nothing, so that a
 * flush needed while applying the record always has somewhere to go. `extra`
 * is how many nodes the record may dirty (0: the general bound); `borrow`:
 * the room may count a recovery segment (meta_room, cn_record_freeing). */
static int record_room(cairn *fs, uint32_t extra, uint8_t borrow)
{
    int err;
    if (fs->read_only)
        return CAIRN_ERR_ROFS;
    err = cn_session_begin(fs);
    if (!err && fs->unrecorded && !(fs->in_gc && fs->gc.squeeze))
        err = cn_commit(fs); /* a record after unrecorded moves would not replay */
    if (err)
        return err;
    if (!meta_room(fs, extra, borrow) && cn_dead_segs(fs) > 0) {
        err = cn_commit(fs); /* frees segments whose data all died */
        if (err)
            return err;
    }
    if (!meta_room(fs, extra, borrow) && fs->dirty_nodes > 0) {
        err = cn_cache_flush(fs); /* the written nodes need no margin any more */
        if (err)
            return err;
    }
    if (!meta_room(fs, extra, borrow)) {
        return CAIRN_ERR_NOSPC;
    }
    /* Short of slots: the least recently used dirty leaves go first, their
     * parents stay dirty for the next whole flush. Random overwrites dirty a
     * leaf each, and writing every dirty node rewrote the shared inner nodes
     * with every few leaves: 1,142 -> 998 bytes programmed per synced 256 B
     * overwrite (test_opcount h; DESIGN.md "RAM"). */
    if (cn_cache_evictable(fs) < fs->nslots / 2) {
        err = cn_cache_flush_leaves(fs, fs->nslots * 3u / 4u);
        if (!err && cn_cache_evictable(fs) < fs->nslots / 2)
            err = cn_cache_flush(fs);
        return err;
    }
    return 0;
}

/* A record is in the journal and `err` says how applying it went: commit
 * when the journal is long. The operation has happened once its record is
 * in, so a commit that finds no room is not its failure: the journal stays
 * long and the next record commits (GC or a delete makes room meanwhile). */
static int record_done(cairn *fs, int err)
{
    if (err) {
        fs->broken = 1; /* the journal holds a record the tree does not */
        return err;
    }
    if (fs->log.since >= fs->commit_pages) {
        err = cn_commit(fs);
        return err == CAIRN_ERR_NOSPC ? 0 : err;
    }
    return 0;
}

/* GC's record: applied directly, not through cn_apply, which keeps the
 * other record handlers off GC's call chain. */
int cn_record_move(cairn *fs, const uint8_t *p)
{
    /* one extent split in place: a leaf, maybe a new one, and their path */
    int err = record_room(fs, fs->height + 2u, 0);
    if (!err)
        err = cn_log_append(fs, CN_R_MOVE, p, CN_RL_MOVE);
    return err ? err : record_done(fs, apply_move(fs, p));
}

/* A squeezing GC's move (gc.c): applied without a record, so that a cut
 * before its commit gives back the segment it moved into (a recovery needs
 * its segments); the commit that ends the victim makes it durable, and any
 * record before that commit is preceded by one (record_room). */
int cn_move_unrecorded(cairn *fs, const uint8_t *p)
{
    int err = record_room(fs, fs->height + 2u, 0);
    if (err)
        return err;
    fs->unrecorded = 1;
    return record_done(fs, apply_move(fs, p));
}

/* Append a record, apply it, and commit when the journal is long enough.
 * It never collects garbage: operations call cn_settle first. */
int cn_record(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len)
{
    int err = record_room(fs, 0, 0);
    if (!err)
        err = cn_log_append(fs, type, p, len);
    return err ? err : record_done(fs, cn_apply(fs, type, p, len));
}

/* Builds with assertions count every remove and trim, so that the tests
 * check the count against what the record dirtied on every one they make,
 * not only on full volumes (cn_record_freeing). */
#ifdef NDEBUG
#define CN_COUNT_ALWAYS 0
#else
#define CN_COUNT_ALWAYS 1
#endif

/* The nodes a freeing record's changes add to the next flush, counted on
 * the tree as it is where they can be (a remove, a trim of a removed
 * object), else 0: the general bound of 2 x height + 4 nodes applies
 * (alloc.c cn_meta_room). Only with slots enough that no flush comes
 * between its changes (tree.c ensure_room, leave_room): a node flushed
 * half-way and changed again would be written twice. */
CN_NOINLINE static uint32_t record_cost(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len)
{
    struct cn_cost c;
    int err;
    c.n = 0;
    c.made = 0;
    if (type == CN_R_REMOVE && len == CN_RL_REMOVE)
        err = remove_cost(fs, &c, p);
    else if (type == CN_R_TRIM && len == CN_RL_TRIM)
        err = trim_cost(fs, &c, cn_get32(p));
    else
        return 0;
    if (err || c.n + c.made + fs->height + 4u > cn_cache_evictable(fs))
        return 0;
    return c.n + c.made;
}

/* Most extents file_frees_segment reads: it runs only for a delete refused
 * for room, and a file of more counts as one that frees nothing. */
#define CN_FREES_SCAN 1024u

/* Does deleting what is left of file `id` give a segment back: every live
 * page of a closed segment, in a run of its extents in file order (the
 * segment is dead at once, and the next commit frees it), or a segment's
 * worth of pages (garbage that GC, squeezing at its floor if it must, gains
 * back)? Pages of one segment that other extents of the file interleave are
 * not summed, so a 0 may be wrong. */
CN_NOINLINE static int file_frees_segment(cairn *fs, uint32_t id)
{
    struct cn_ext e;
    uint32_t run_seg = CN_NONE, run = 0, total = 0, fpage = 0, n;
    for (n = 0; n < CN_FREES_SCAN && cn_extent_find(fs, id, fpage, 0, &e) == 0; n++) {
        uint32_t phys = e.phys, left = e.count;
        total += e.count;
        if (total >= fs->seg_pages)
            return 1;
        while (left > 0) {
            uint32_t s = cn_seg_of(fs, phys);
            uint32_t in = (s + 1u) * fs->seg_pages - phys;
            const struct cn_seg *g = &fs->segs[s];
            in = in < left ? in : left;
            run = s == run_seg ? run + in : in;
            run_seg = s;
            if (g->state == CN_SEG_FULL && g->live > 0 && run >= g->live &&
                !(g->flags & (CN_SF_FAILING | CN_SF_EVICT)))
                return 1;
            phys += in;
            left -= in;
        }
        if (e.start + e.count <= fpage)
            break; /* (never: a found extent starts at fpage or later) */
        fpage = e.start + e.count;
    }
    return 0;
}

/* Does the file a remove or an orphan's trim deletes give a segment back? */
static int frees_a_segment(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len)
{
    if (type == CN_R_REMOVE && len == CN_RL_REMOVE)
        return file_frees_segment(fs, cn_get32(p + 8));
    if (type == CN_R_TRIM && len == CN_RL_TRIM)
        return file_frees_segment(fs, cn_get32(p));
    return 0;
}

/* A record that frees space (remove, trim, a shrinking size, a rename over
 * a file): its nodes may use the segment GC keeps, so that deletes work on
 * a volume whose metadata filled the user's share. Short of the general
 * bound, a remove or a trim asks for what its changes really write: the
 * room kept for a delete is that bound, and a failing device ate into it
 * (a failing anchor's replacement emptied, a segment retired by a failed
 * erase), so every remove was refused for good with the metadata head 24
 * pages short of 32 and free segments at GC's floor (session-31 worn hunt,
 * seeds 55, 73, 77, 82: nor-w25q128, nand-dhara). A remove of a small file
 * writes 3 or 4 nodes; its trims then free the data that GC collects. Short
 * of that too, the room may count one of the recovery's segments when what
 * the record deletes gives a segment back (frees_a_segment, meta_room). */
int cn_record_freeing(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len)
{
    uint32_t cost = 0;
    int err;
    fs->freeing = CN_FREEING_SPACE;
    err = record_room(fs, 0, 0);
    if (err == CAIRN_ERR_NOSPC) {
        cost = record_cost(fs, type, p, len);
        if (cost > 0)
            err = record_room(fs, cost, 0);
        /* (a segment lost to a failing anchor at GC's floor: test_nospc
         * wedge-anchor seed 1195 run 25; DESIGN.md "Session 37") */
        if (err == CAIRN_ERR_NOSPC && cost > 0 && frees_a_segment(fs, type, p, len))
            err = record_room(fs, cost, 1);
    } else if (!err && CN_COUNT_ALWAYS) {
        cost = record_cost(fs, type, p, len); /* only for the check below */
    }
    if (!err)
        err = cn_log_append(fs, type, p, len);
    if (!err) {
        uint32_t dirty = fs->dirty_nodes;
        int applied = cn_apply(fs, type, p, len);
        /* I11: the count bounds what the record dirtied (apply_remove and
         * apply_trim change the keys remove_cost and trim_cost follow) */
        CN_ASSERT(applied || cost == 0 || fs->dirty_nodes <= dirty + cost);
        (void)dirty; /* (unused where CN_ASSERT is empty) */
        err = record_done(fs, applied);
    }
    fs->freeing = 0;
    return err;
}

#ifndef CAIRN_NO_RING
/* A ring file's RING record (24 bytes), applied without the dispatcher as
 * extent records are: it is on the write path. */
int cn_record_ring(cairn *fs, const uint8_t *p)
{
    int err = record_room(fs, 0, 0);
    if (!err)
        err = cn_log_append(fs, CN_R_RING, p, CN_RL_RING);
    return err ? err : record_done(fs, cn_ring_apply(fs, CN_R_RING, p, CN_RL_RING));
}
#endif

/* The file layer's extent records, applied without the dispatcher (which
 * keeps the other handlers off the write path's call chain). An extent that
 * continues the newest record while it is still in RAM grows that record. */
int cn_record_extent(cairn *fs, uint32_t id, uint32_t fpage, uint32_t phys, uint32_t count,
                     int32_t size)
{
    int err;
    /* The pages are on flash already, taken from above the reserve; the
     * nodes of their record may go down to GC's floor like a delete's, which
     * GC at its floor climbs out of (cn_gc_squeeze_fits). Before, a write
     * whose own data reached the reserve had its record refused at 38% full
     * (torture nor-w25q128-b4, seed 32): a short write, the data wasted. */
    fs->freeing = CN_FREEING_NODES; /* for the record's room and its application alike */
    err = record_room(fs, 0, 0);
    if (!err && cn_log_extend_extent(fs, id, fpage, phys, count, size) != 1) {
        uint8_t p[CN_RL_EXTENT];
        cn_put32(p, id);
        cn_put32(p + 4, fpage);
        cn_put32(p + 8, phys);
        cn_put32(p + 12, count);
        cn_put32(p + 16, (uint32_t)size);
        err = cn_log_append(fs, CN_R_EXTENT, p, CN_RL_EXTENT);
    }
    if (!err)
        err = record_done(fs, apply_extent(fs, id, fpage, phys, count, size));
    fs->freeing = 0;
    return err;
}

/* Tagged media: a file page as a journal entry of its own. Returns 1 when
 * that cannot be done now (the caller writes it the ordinary way). */
int cn_record_data_page(cairn *fs, uint32_t id, uint32_t fpage, int32_t size,
                        const uint8_t *data, uint32_t *phys)
{
    int err = record_room(fs, 0, 0);
    if (!err)
        err = cn_log_data_page(fs, id, fpage, size, data, phys);
    if (err)
        return err;
    return record_done(fs, apply_extent(fs, id, fpage, *phys, 1, size));
}
