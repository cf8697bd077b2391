/* Garbage collection, the simple form of this stage: pick the closed segment
 * with the fewest live pages, move its tree nodes (by rewriting them) and its
 * file data (to the cold head), then checkpoint so the segment is free.
 * Finding what lives in the victim walks the whole index: correct, bounded in
 * RAM, but linear in the volume's metadata (the space-management stage adds
 * per-segment summaries to make it proportional to the victim). */
#include "cn.h"

struct gc_ctx {
    uint32_t victim;
};

static int node_in_victim(cairn *fs, uint32_t slot, uint32_t addr, void *arg)
{
    struct gc_ctx *g = (struct gc_ctx *)arg;
    (void)slot;
    return addr != CN_NONE && cn_seg_of(fs, addr) == g->victim ? 1 : 0;
}

/* Copy one extent that lies in the victim to the cold head, whole (the cold
 * head hands out a run of exactly its pages, extents never cross segments). */
static int move_extent(cairn *fs, uint32_t id, uint32_t fpage, uint32_t phys, uint32_t count)
{
    uint32_t to, got, i;
    uint8_t p[20];
    int err = cn_head_pages(fs, CN_H_COLD, count, &to, &got);
    if (err)
        return err;
    if (got != count)
        return CAIRN_ERR_CORRUPT;
    for (i = 0; i < count; i++) {
        err = cn_dev_read(fs, phys + i, 0, fs->scratch2, fs->page_size);
        if (!err)
            err = cn_write_data(fs, to + i, id, fpage + i, fs->scratch2, 1);
        if (err)
            return err;
    }
    cn_put32(p, id);
    cn_put32(p + 4, fpage);
    cn_put32(p + 8, phys);
    cn_put32(p + 12, to);
    cn_put32(p + 16, count);
    return cn_record_move(fs, p);
}

static int move_data(cairn *fs, uint32_t victim)
{
    uint64_t k = 0;
    for (;;) {
        uint8_t v[8];
        uint32_t vlen;
        int err = cn_tree_seek(fs, k, 0, &k, v, sizeof v, &vlen);
        if (err == CAIRN_ERR_NOENT)
            return 0;
        if (err)
            return err;
        if (cn_key_kind(k) == CN_K_EXTENT && vlen == 8 &&
            cn_seg_of(fs, cn_get32(v)) == victim) {
            err = move_extent(fs, cn_key_id(k), cn_key_sub(k), cn_get32(v), cn_get32(v + 4));
            if (err)
                return err;
        }
        if (k == UINT64_MAX)
            return 0;
        k++;
    }
}

static int gc_one(cairn *fs);

int cn_gc_one(cairn *fs)
{
    int err;
    if (fs->in_gc)
        return CAIRN_ERR_NOSPC;
    err = cn_begin_write(fs);
    if (err)
        return err;
    fs->in_gc = 1;
    err = gc_one(fs);
    fs->in_gc = 0;
    return err;
}

static int gc_one(cairn *fs)
{
    struct gc_ctx g;
    uint32_t s;
    int err;
    if (cn_dead_segs(fs) > 0) /* a checkpoint frees them */
        return cn_commit(fs);
    g.victim = CN_NONE;
    for (s = 2; s < fs->seg_count; s++) {
        const struct cn_seg *sg = &fs->segs[s];
        if (sg->state == CN_SEG_FULL && sg->live < fs->seg_pages &&
            (g.victim == CN_NONE || sg->live < fs->segs[g.victim].live))
            g.victim = s;
    }
    if (g.victim == CN_NONE)
        return CAIRN_ERR_NOSPC;
    /* the data moves first: its records dirty the leaves that point at it */
    err = move_data(fs, g.victim);
    if (!err)
        err = cn_tree_walk(fs, node_in_victim, &g);
    if (!err)
        err = cn_cache_flush(fs);
    if (err)
        return err;
    cn_files_forget_tails(fs, g.victim);
    if (fs->segs[g.victim].live != 0)
        return CAIRN_ERR_CORRUPT;
    return cn_commit(fs);
}
