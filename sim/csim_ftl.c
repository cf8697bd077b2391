/*
 * The card model of BLOCK media: a small hybrid log-block FTL that counts the
 * internal work a host's write pattern causes. It tracks no data (the sim's
 * storage holds it); only which sectors are live, which allocation units
 * (AUs) are open, and where their write pointers stand.
 *
 * - Every open AU is a log block filled in sector order; wp is the next sector.
 * - A write at wp appends. A write beyond wp first copies the live sectors of
 *   the gap. A write behind wp, or to an AU that is not open, merges: the AU
 *   (behind wp) or, when every slot is in use, the least recently used open
 *   AU is closed: its live sectors beyond wp are copied, its old data block
 *   is erased. Opening an AU at sector s copies its live sectors before s.
 * - An AU whose wp reaches its end is closed at once (nothing to copy).
 * - Internal programs are whole flash pages: the partly filled flash page at
 *   wp stays in the card's buffer until it fills, the AU closes, or sync.
 * - Discard (erase) makes sectors dead; a fully discarded AU drops its open
 *   slot and its data block for free.
 */
#include "csim_int.h"

static void bits_set(uint64_t *m, uint64_t a, uint64_t b)
{
    for (; a < b && (a & 63u); a++)
        m[a >> 6] |= 1ull << (a & 63u);
    for (; a + 64 <= b; a += 64)
        m[a >> 6] = ~0ull;
    for (; a < b; a++)
        m[a >> 6] |= 1ull << (a & 63u);
}

static void bits_clear(uint64_t *m, uint64_t a, uint64_t b)
{
    for (; a < b && (a & 63u); a++)
        m[a >> 6] &= ~(1ull << (a & 63u));
    for (; a + 64 <= b; a += 64)
        m[a >> 6] = 0;
    for (; a < b; a++)
        m[a >> 6] &= ~(1ull << (a & 63u));
}

static int bits_any(const uint64_t *m, uint64_t a, uint64_t b)
{
    for (; a < b && (a & 63u); a++)
        if ((m[a >> 6] >> (a & 63u)) & 1u)
            return 1;
    for (; a + 64 <= b; a += 64)
        if (m[a >> 6])
            return 1;
    for (; a < b; a++)
        if ((m[a >> 6] >> (a & 63u)) & 1u)
            return 1;
    return 0;
}

/* Programs the buffered flash page, if it holds anything. */
static void flush(csim *s, struct ftl_slot *sl)
{
    if (!sl->buf_host && !sl->buf_copy)
        return;
    s->c.ftl_prog_pages++;
    if (!sl->buf_host)
        s->c.ftl_copy_pages++;
    s->c.time_ns += s->cost.ftl_prog_ns;
    sl->buf_host = 0;
    sl->buf_copy = 0;
}

/* Moves wp to `to`, filling the log block with host data (host != 0) or with
 * copies of the live sectors in between. */
static void advance(csim *s, struct ftl_slot *sl, uint32_t to, int host)
{
    uint64_t base = (uint64_t)sl->au * s->spa;
    while (sl->wp < to) {
        uint32_t fend = (sl->wp / s->spf + 1) * s->spf;
        uint32_t e = fend < to ? fend : to;
        if (host)
            sl->buf_host = 1;
        else if (!sl->buf_copy && bits_any(s->live, base + sl->wp, base + e))
            sl->buf_copy = 1;
        sl->wp = e;
        if (e == fend)
            flush(s, sl);
    }
}

static void close_au(csim *s, struct ftl_slot *sl)
{
    uint64_t base = (uint64_t)sl->au * s->spa;
    int copies = bits_any(s->live, base + sl->wp, base + s->spa);
    advance(s, sl, s->spa, 0);
    flush(s, sl);
    if (sl->old_phys) {
        s->c.ftl_erases++;
        s->c.time_ns += s->cost.ftl_erase_ns;
    }
    if (copies || sl->old_phys)
        s->c.ftl_merges++;
    s->has_data[sl->au] = (uint8_t)bits_any(s->live, base, base + s->spa);
    sl->used = 0;
}

static struct ftl_slot *find(csim *s, uint32_t au)
{
    uint32_t i;
    for (i = 0; i < s->ftl.open_aus; i++)
        if (s->slots[i].used && s->slots[i].au == au)
            return &s->slots[i];
    return NULL;
}

static struct ftl_slot *open_au(csim *s, uint32_t au, uint32_t at)
{
    struct ftl_slot *sl = NULL, *lru = NULL;
    uint32_t i;
    for (i = 0; i < s->ftl.open_aus; i++) {
        if (!s->slots[i].used) {
            sl = &s->slots[i];
            break;
        }
        if (!lru || s->slots[i].stamp < lru->stamp)
            lru = &s->slots[i];
    }
    if (!sl) {
        close_au(s, lru);
        sl = lru;
    }
    sl->used = 1;
    sl->au = au;
    sl->wp = 0;
    sl->old_phys = s->has_data[au];
    sl->buf_host = 0;
    sl->buf_copy = 0;
    advance(s, sl, at, 0);
    return sl;
}

void csim_ftl_write_(csim *s, uint32_t first, uint32_t n)
{
    while (n) {
        uint32_t au = first / s->spa, o = first % s->spa;
        uint32_t m = n < s->spa - o ? n : s->spa - o;
        struct ftl_slot *sl = find(s, au);
        if (sl && o < sl->wp) {
            close_au(s, sl);
            sl = NULL;
        }
        if (!sl)
            sl = open_au(s, au, o);
        else if (o > sl->wp)
            advance(s, sl, o, 0);
        bits_set(s->live, first, (uint64_t)first + m);
        advance(s, sl, o + m, 1);
        sl->stamp = ++s->ftl_stamp;
        if (sl->wp == s->spa)
            close_au(s, sl);
        first += m;
        n -= m;
    }
}

void csim_ftl_discard_(csim *s, uint32_t first, uint32_t n)
{
    uint64_t end = (uint64_t)first + n;
    uint32_t au;
    if (n == 0)
        return;
    bits_clear(s->live, first, end);
    for (au = first / s->spa; (uint64_t)au * s->spa < end; au++) {
        uint64_t a0 = (uint64_t)au * s->spa;
        if (a0 >= first && a0 + s->spa <= end) {
            struct ftl_slot *sl = find(s, au);
            if (sl)
                sl->used = 0; /* the open log block is simply dropped */
            s->has_data[au] = 0;
        }
    }
}

void csim_ftl_sync_(csim *s)
{
    uint32_t i;
    for (i = 0; i < s->ftl.open_aus; i++)
        if (s->slots[i].used)
            flush(s, &s->slots[i]);
}

/* What an image keeps of an AU: after a power cycle an AU that holds live
 * sectors has a data block (open log blocks are not saved). */
int csim_ftl_au_saved_(const csim *s, uint32_t au)
{
    uint64_t base = (uint64_t)au * s->spa;
    return s->has_data[au] || bits_any(s->live, base, base + s->spa);
}
