/* Times for `cairn mount` (fuse_times.h): an open-addressing table of object
 * ids, grown to twice its size at half full. */
#define _POSIX_C_SOURCE 200809L
#include "fuse_times.h"

#include <stdlib.h>

struct ft_entry {
    uint32_t id; /* 0: empty (cairn's ids start at 1) */
    struct timespec mtime, ctime;
};

static struct ft_entry *g_table;
static uint32_t g_size, g_used;
static struct timespec g_began, g_last;

static int before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Now, and later than every time handed out before (a clock that did not
 * move between two changes must still tell them apart). */
static struct timespec now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    if (!before(&g_last, &t)) {
        t = g_last;
        if (++t.tv_nsec >= 1000000000L) {
            t.tv_nsec = 0;
            t.tv_sec++;
        }
    }
    g_last = t;
    return t;
}

void ft_begin(void) { g_began = now(); }

static struct ft_entry *slot(uint32_t id)
{
    uint32_t i = (id * 2654435761u) & (g_size - 1u);
    while (g_table[i].id != 0 && g_table[i].id != id)
        i = (i + 1u) & (g_size - 1u);
    return &g_table[i];
}

static int grow(void)
{
    struct ft_entry *old = g_table;
    uint32_t i, n = g_size;
    g_size = n ? 2u * n : 1024u;
    g_table = (struct ft_entry *)calloc(g_size, sizeof *g_table);
    if (g_table == NULL) {
        g_table = old;
        g_size = n;
        return -1;
    }
    for (i = 0; i < n; i++)
        if (old[i].id != 0)
            *slot(old[i].id) = old[i];
    free(old);
    return 0;
}

/* The entry of id, made if new (NULL only without memory: then the object
 * keeps the mount's time, as before session 42). */
static struct ft_entry *entry(uint32_t id)
{
    struct ft_entry *e;
    if ((g_used + 1u) * 2u > g_size && grow() < 0)
        return NULL;
    e = slot(id);
    if (e->id == 0) {
        e->id = id;
        e->mtime = e->ctime = g_began;
        g_used++;
    }
    return e;
}

void ft_changed(uint32_t id)
{
    struct ft_entry *e = id ? entry(id) : NULL;
    if (e)
        e->mtime = e->ctime = now();
}

void ft_set_mtime(uint32_t id, const struct timespec *t)
{
    struct ft_entry *e = id ? entry(id) : NULL;
    if (e) {
        e->ctime = now();
        e->mtime = *t;
    }
}

void ft_get(uint32_t id, struct timespec *mtime, struct timespec *ctime)
{
    const struct ft_entry *e = g_size && id ? slot(id) : NULL;
    *mtime = *ctime = g_began;
    if (e && e->id == id) {
        *mtime = e->mtime;
        *ctime = e->ctime;
    }
}

void ft_end(void)
{
    free(g_table);
    g_table = NULL;
    g_size = g_used = 0;
}
