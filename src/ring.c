/* Ring files: a file of fixed capacity that keeps the newest bytes of an
 * endless stream (a log that wraps by itself).
 *
 * Layout. Ring offsets run over [0, capacity); the byte at ring offset r
 * lies in file page ("slot") r / page_size, so stream page p lands in slot
 * p mod C (C = capacity in pages) and the tree maps slots like the pages of
 * any file. The window is (head, size): the oldest byte held is at ring
 * offset head and size bytes are held; the tail, where the next byte goes,
 * is head + size (mod capacity). Only ring offsets are kept, never a stream
 * count, so nothing grows however long the stream runs.
 *
 * Writing. Every write appends at the tail, whatever the handle's position.
 * A page that starts at a slot boundary replaces the slot's old page whole,
 * without reading it: whole pages go from the caller's buffer, and a partial
 * tail page is buffered (growing in place on NOR) as in other files. When
 * the stream comes back to a slot the window gives up the slot's old page
 * as a whole, so a ring that has wrapped holds between capacity - page_size
 * + 1 and capacity bytes (exactly capacity when the tail is on a page end).
 *
 * Durability. A RING record names the slots a run of pages filled and the
 * window after it, so pages and window change together; the old pages stay
 * on flash until that record is in the journal. After a cut the window is
 * the one of some record: a state between the last sync and the last write.
 *
 * Readers. A handle's position is an offset in the window. When the window
 * slides, every position of the ring moves back with it and so stays on the
 * same byte of the stream; a reader whose byte was overwritten continues at
 * the new oldest byte (position 0). A read is served from one window, so it
 * never mixes bytes from two laps. Seeking past the size is INVAL; truncate
 * to 0 empties the ring (its space stays with it); other sizes are INVAL. */
#include "cn.h"

#ifndef CAIRN_NO_RING

static uint32_t ring_cap(const cairn *fs, const struct cn_file *f)
{
    return f->ring_pages * fs->page_size;
}

/* Ring offset of window offset pos (pos <= size <= capacity). */
static uint32_t ring_off(const cairn *fs, const struct cn_file *f, uint32_t pos)
{
    uint32_t r = f->ring_head + pos, cap = ring_cap(fs, f);
    return r >= cap ? r - cap : r;
}

/* Journal slots [slot, +count) at phys (count 0: none) with the window in
 * RAM, which is the one that holds once they are there: file.c's flush of
 * the tail page (everything written is in it or journaled already), sync,
 * and this file's runs of whole pages, which set the window first. */
int cn_ring_record(cairn *fs, struct cn_file *f, uint32_t slot, uint32_t phys, uint32_t count)
{
    uint8_t *p = fs->recbuf;
    int err;
    cn_put32(p, f->id);
    cn_put32(p + 4, slot);
    cn_put32(p + 8, count ? phys : CN_NONE);
    cn_put32(p + 12, count);
    cn_put32(p + 16, (uint32_t)f->size);
    cn_put32(p + 20, f->ring_head);
    err = cn_record_ring(fs, p);
    if (!err) {
        f->rec_size = f->size;
        f->ring_rec_head = f->ring_head;
    }
    return err;
}

/* ---- the window in RAM ---- */

/* The window once n more bytes are at the tail: the head moves past every
 * slot the new bytes reach into. n never passes the end of the ring, so the
 * end, counted from the head's lap, stays below 2 x capacity (< 2^32).
 * Returns how far the head moved. */
static uint32_t ring_after(const cairn *fs, const struct cn_file *f, uint32_t n,
                           uint32_t *head, int32_t *size)
{
    uint32_t ps = fs->page_size, cap = ring_cap(fs, f), h = f->ring_head;
    uint32_t end = h + (uint32_t)f->size + n, pages = (end + ps - 1) / ps;
    if (pages > f->ring_pages && (pages - f->ring_pages) * ps > h)
        h = (pages - f->ring_pages) * ps;
    *size = (int32_t)(end - h);
    *head = h >= cap ? h - cap : h;
    return h - f->ring_head;
}

/* The head moved by d bytes: every handle of the ring keeps its byte, or
 * goes to the oldest one if its byte is gone. */
static void ring_slide(cairn *fs, const struct cn_file *f, uint32_t d)
{
    uint32_t i, slot = (uint32_t)(f - fs->files);
    for (i = 0; i < fs->max_open && d > 0; i++) {
        struct cn_handle *h = &fs->handles[i];
        if (h->kind == CN_HND_FILE && h->file == slot)
            h->pos = (uint32_t)h->pos > d ? h->pos - (int32_t)d : 0;
    }
}

/* Journal a new window (and the run of pages it takes in), then let the
 * handles follow; on failure the window stays as it was. */
static int ring_commit(cairn *fs, struct cn_file *f, uint32_t head, int32_t size, uint32_t d,
                       uint32_t slot, uint32_t phys, uint32_t count)
{
    uint32_t old_head = f->ring_head;
    int32_t old_size = f->size;
    int err;
    f->ring_head = head;
    f->size = size;
    err = cn_ring_record(fs, f, slot, phys, count);
    if (err) {
        f->ring_head = old_head;
        f->size = old_size;
        return err;
    }
    ring_slide(fs, f, d);
    return 0;
}

/* ---- file operations (file.c's hooks) ---- */

int cn_ring_load(cairn *fs, struct cn_file *f)
{
    uint8_t v[CN_RING_INODE_LEN];
    uint32_t cap = 0;
    int r = cn_ring_inode(fs, f->id, v, &cap);
    if (r <= 0)
        return r;
    if (!cn_ring_window_ok(fs, cap, cn_get32(v + 20), f->size))
        return CAIRN_ERR_CORRUPT;
    f->ring_pages = cap / fs->page_size;
    f->ring_head = cn_get32(v + 20);
    f->ring_rec_head = f->ring_head;
    return 0;
}

/* From window offset pos: the rest of one page, or a run of whole pages
 * that lie together on flash. */
CN_NOINLINE static int read_some(cairn *fs, struct cn_file *f, uint32_t pos, uint8_t *out,
                                 uint32_t want, uint32_t *n)
{
    uint32_t ps = fs->page_size, r = ring_off(fs, f, pos), slot = r / ps, in = r % ps;
    uint32_t phys, run;
    int err;
    *n = ps - in < want ? ps - in : want;
    if (f->buf_page == slot) { /* the tail page: the window holds no other in its slot */
        memcpy(out, f->buf + in, *n);
        return 0;
    }
    err = cn_file_map(fs, f, slot, &phys, &run);
    if (err)
        return err;
    if (in == 0 && want >= ps) {
        uint32_t k = want / ps;
        if (k > run)
            k = run;
        if (k > f->ring_pages - slot)
            k = f->ring_pages - slot;
        if (f->buf_page > slot && f->buf_page < slot + k)
            k = f->buf_page - slot;
        *n = k * ps;
    }
    if (phys == CN_NONE) {
        memset(out, 0, *n);
        return 0;
    }
    return cn_dev_read(fs, phys, in, out, *n);
}

int32_t cn_ring_read(cairn *fs, struct cn_handle *h, struct cn_file *f, uint8_t *out,
                     int32_t len)
{
    int32_t done = 0;
    if (h->pos >= f->size)
        return 0;
    if (len > f->size - h->pos)
        len = f->size - h->pos;
    while (done < len) {
        uint32_t n;
        int err = read_some(fs, f, (uint32_t)h->pos, out + done, (uint32_t)(len - done), &n);
        if (err)
            return done ? done : err;
        done += (int32_t)n;
        h->pos += (int32_t)n;
    }
    return done;
}

/* Make the buffer (flushed by the caller) hold the tail page, in slot
 * `slot` with `in` bytes written: a new page (in == 0) starts empty,
 * the slot's old page unread; a page written before the file was opened is
 * read back, only its bytes that are still in the window. */
CN_NOINLINE static int tail_page(cairn *fs, struct cn_file *f, uint32_t slot, uint32_t in)
{
    uint32_t phys, run, lo = (uint32_t)f->size < in ? in - (uint32_t)f->size : 0;
    int err = 0;
    f->buf_page = CN_NONE;
    f->tail_phys = CN_NONE;
    memset(f->buf, 0, fs->page_size);
    if (in > lo) {
        err = cn_file_map(fs, f, slot, &phys, &run);
        if (!err && phys != CN_NONE)
            err = cn_dev_read(fs, phys, lo, f->buf + lo, in - lo);
        if (err)
            return err;
    }
    f->buf_page = slot;
    f->buf_dirty = 0;
    f->dlo = fs->page_size;
    f->dhi = 0;
    return 0;
}

/* Append up to the end of the tail page, through the buffer. *n is what
 * the ring took, even when the flush of a completed page then failed. */
CN_NOINLINE static int ring_bytes(cairn *fs, struct cn_file *f, const uint8_t *src,
                                  uint32_t want, uint32_t *n)
{
    uint32_t ps = fs->page_size, t = ring_off(fs, f, (uint32_t)f->size), in = t % ps, head;
    int32_t size;
    int err;
    if (in == 0 || f->buf_page != t / ps) {
        err = cn_file_flush_buffer(fs, f);
        if (!err)
            err = tail_page(fs, f, t / ps, in);
        if (err)
            return err;
    }
    *n = ps - in < want ? ps - in : want;
    memcpy(f->buf + in, src, *n);
    if (!f->buf_dirty || in < f->dlo)
        f->dlo = in;
    f->dhi = in + *n; /* appends only: the dirty range ends at the tail */
    f->buf_dirty = 1;
    ring_slide(fs, f, ring_after(fs, f, *n, &head, &size));
    f->ring_head = head; /* journaled when the page is flushed */
    f->size = size;
    return in + *n == ps ? cn_file_flush_buffer(fs, f) : 0;
}

/* One run of whole pages at a page-aligned tail, from the caller's buffer,
 * up to the ring's last slot: the run replaces its slots' pages without
 * reading them, and its record moves the window past them. */
CN_NOINLINE static int ring_pages(cairn *fs, struct cn_file *f, const uint8_t *src,
                                  uint32_t pages, uint32_t *n)
{
    uint32_t slot = ring_off(fs, f, (uint32_t)f->size) / fs->page_size, phys, got, head, d;
    uint32_t tries;
    int32_t size;
    int err = cn_file_flush_buffer(fs, f); /* the journal keeps the order of writes */
    if (err)
        return err;
    f->buf_page = CN_NONE; /* clean; a slot of this run may be its own */
    f->tail_phys = CN_NONE;
    if (pages > f->ring_pages - slot)
        pages = f->ring_pages - slot;
    for (tries = 0;; tries++) {
        err = cn_data_pages(fs, f, 1, slot, pages, &phys, &got); /* a ring overwrites itself */
        if (err)
            return err;
        err = cn_write_data(fs, phys, f->id, slot, src, got);
        if (!err)
            break;
        if (tries >= 3 || !(fs->segs[cn_seg_of(fs, phys)].flags & CN_SF_FAILING))
            return err;
        cn_head_failed(fs, phys); /* a worn block: the pages go elsewhere */
    }
    d = ring_after(fs, f, got * fs->page_size, &head, &size);
    err = ring_commit(fs, f, head, size, d, slot, phys, got);
    if (!err)
        *n = got * fs->page_size;
    return err;
}

/* One piece of a write (cairn_write settles before each): whole pages
 * when the tail is on a page boundary, else up to the end of the page. The
 * writer's position, at the end, moves with the window and by *n. */
int cn_ring_append(cairn *fs, struct cn_file *f, const uint8_t *src, uint32_t want,
                   uint32_t *n)
{
    if (ring_off(fs, f, (uint32_t)f->size) % fs->page_size == 0 && want >= fs->page_size)
        return ring_pages(fs, f, src, want / fs->page_size, n);
    return ring_bytes(fs, f, src, want, n);
}

/* Truncation to 0 empties the ring: the tail stays, the head joins it. */
int cn_ring_truncate(cairn *fs, struct cn_file *f, int32_t size)
{
    int err;
    if (size != 0)
        return CAIRN_ERR_INVAL;
    err = cn_settle(fs, 0);
    if (!err)
        err = ring_commit(fs, f, ring_off(fs, f, (uint32_t)f->size), 0, (uint32_t)f->size, 0,
                          CN_NONE, 0);
    return err;
}

/* ---- check.c's hooks ---- */

/* A ring's extents may cover any slot, whatever its size. */
int32_t cn_ring_extent_limit(cairn *fs, uint32_t id, int32_t size)
{
    uint8_t v[CN_RING_INODE_LEN];
    uint32_t cap = 0;
    return cn_ring_inode(fs, id, v, &cap) == 1 ? (int32_t)cap : size;
}

int cn_ring_check_inode(cairn *fs, uint32_t id)
{
    uint8_t v[CN_RING_INODE_LEN];
    uint32_t cap = 0;
    int r = cn_ring_inode(fs, id, v, &cap);
    if (r == 0)
        return 0;
    return r < 0 || !cn_ring_window_ok(fs, cap, cn_get32(v + 20), (int32_t)cn_get32(v + 8));
}

/* ---- creation ---- */

CN_NOINLINE static int ring_new(cairn *fs, uint32_t parent, uint32_t sub, const char *name,
                                uint32_t len, uint32_t cap)
{
    uint8_t *p = fs->recbuf;
    int err = cn_new_object_room(fs, sub);
    if (err)
        return err;
    cn_put32(p, cap);
    cn_put32(p + 4, parent);
    cn_put32(p + 8, fs->next_id);
    cn_put32(p + 12, sub);
    p[16] = CAIRN_TYPE_FILE;
    p[17] = (uint8_t)len;
    memcpy(p + CN_RL_RINGNEW, name, len);
    return cn_record(fs, CN_R_RINGNEW, p, CN_RL_RINGNEW + len);
}

int cairn_ring_create(cairn *fs, const char *path, int32_t capacity)
{
    struct cn_where w;
    int err = cn_fs_ready(fs, 1);
    if (err)
        return err;
    if (capacity <= 0 || !cn_ring_cap_ok(fs, (uint32_t)capacity))
        return CAIRN_ERR_INVAL;
    err = cn_lookup(fs, path, &w);
    if (w.slash && (err == 0 || w.last))
        return CAIRN_ERR_ISDIR; /* as open(O_CREAT) of "name/" */
    if (err == 0)
        return CAIRN_ERR_EXIST;
    if (err != CAIRN_ERR_NOENT || w.parent == CN_NONE)
        return err;
    return ring_new(fs, w.parent, w.sub, w.name, w.len, (uint32_t)capacity);
}

#else
int cairn_ring_create(cairn *fs, const char *path, int32_t capacity)
{
    (void)fs;
    (void)path;
    (void)capacity;
    return CAIRN_ERR_INVAL;
}
#endif
