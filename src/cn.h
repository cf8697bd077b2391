/*
 * cairn core: internal definitions shared by the src/ files.
 * The on-disk format: docs/FORMAT.md, its numbers in format.h.
 */
#ifndef CN_H
#define CN_H

#include <stdint.h>
#include <string.h>

#include "cairn.h"
#include "format.h"

/* Keeps a helper's locals out of its caller's frame: the worst stack is the
 * deepest chain of frames, and inlining adds every branch's locals to one. */
#if defined(__GNUC__)
#define CN_NOINLINE __attribute__((noinline))
#else
#define CN_NOINLINE
#endif
/* The opposite: a small helper with several callers, kept out of the chain
 * of frames by being inlined into each. */
#if defined(__GNUC__)
#define CN_INLINE inline __attribute__((always_inline))
#else
#define CN_INLINE inline
#endif

/* Invariant checks (the numbered invariants of docs/DESIGN.md, "Invariants").
 * A port may define CAIRN_ASSERT (e.g. to its own fault handler) before this
 * header is read, or to nothing; by default it is the C library's assert,
 * active unless NDEBUG is defined. An invariant check never reads the device
 * and never changes state. */
#ifndef CAIRN_ASSERT
#include <assert.h>
#define CAIRN_ASSERT(c) assert(c)
#endif
#define CN_ASSERT(c) CAIRN_ASSERT(c)

/* ---- limits ---- */
#define CN_MAX_OPEN 32     /* handles (files + dirs) */
#define CN_NONE 0xFFFFFFFFu
#define CN_DIRTY_REF 0x80000000u /* tree child ref naming a cache slot */
#define CN_TRIM_BATCH 16u        /* keys one trim record may delete */
/* CN_RESERVE_SEGS, CN_MIN_SEGS: format.h (a volume's smallest size) */
/* The fewest checkpoint slots an anchor may hold. When the other anchor
 * fails, the slots left in this one are all there is until a replacement is
 * ready, and every session a brown-out cuts inside its checkpoint spends one.
 * With 4 (a 13-page checkpoint in 64-page segments) two torn sessions left
 * none and every later write failed (torture nor-w25q128-b4, seed 9); with 9,
 * four torn recoveries did the same (seed 9 again, once the test's draws no
 * longer depended on argument order). 16 leave the 8 of the longest brown-out
 * loop the torture test runs, and the replacement's own checkpoints. */
#define CN_MIN_ANCHOR_SLOTS 16u
#define CN_META_FLOOR 3u
#define CN_GC_FLOOR 2u
/* GC pulls along extents of this many pages (gc.c move_data): a pull
 * saves one index entry whatever it moves, so one-page extents pay best
 * (bench overwrite-iops, 256 KiB file: 15.95 IOPS without pulls, 16.79
 * pulling one-page extents, 15.07 up to two pages, 11.74 up to eight); the
 * pull moves one page (gc.c). A build may define it 0: no pulls, for
 * comparison runs. */
#ifndef CN_PULL_PAGES
#define CN_PULL_PAGES 1u
#endif
#define CN_RECOVERY_SEGS 2u
/* fs->recovering: the last segments are open to a recovery until its first
 * checkpoint lands (seg.c cn_seg_alloc), closed again after it */
enum cn_recovery { CN_RECOVERY_OPEN = 1, CN_RECOVERY_DURABLE = 2 };
/* fs->freeing: the record's nodes may go down to GC's floor (a delete's, and
 * an extent's, whose data is on flash already); a record that frees space
 * (a delete's) may also use the journal pages kept for it (journal.c) */
enum cn_freeing { CN_FREEING_NODES = 1, CN_FREEING_SPACE = 2 };

/* ---- tree keys: (id:32 | kind:4 | sub:28), kinds in format.h ---- */
static inline uint64_t cn_key(uint32_t id, unsigned kind, uint32_t sub)
{
    return ((uint64_t)id << 32) | ((uint64_t)(kind & 0xFu) << 28) |
           (sub & CN_SUB_MASK);
}
static inline uint32_t cn_key_id(uint64_t k) { return (uint32_t)(k >> 32); }
static inline unsigned cn_key_kind(uint64_t k) { return (unsigned)((k >> 28) & 0xFu); }
static inline uint32_t cn_key_sub(uint64_t k) { return (uint32_t)k & CN_SUB_MASK; }

/* Directory entries: buckets, overflow marks and subs as FORMAT.md
 * "Directory entries" has them. */
static inline int cn_sub_is_ovf(uint32_t sub) { return (sub & CN_SUB_OVF) != 0; }
/* A sub a record may name for a new or existing entry. */
static inline int cn_sub_ok(uint32_t sub)
{
    if (cn_sub_is_ovf(sub))
        return (sub & ~(CN_SUB_OVF | 0xFFFFFFu)) == 0;
    return sub <= CN_SUB_MASK && (sub & 15u) != CN_MARK_SLOT;
}
static inline uint64_t cn_dirent_key(uint32_t dir, uint32_t sub, uint32_t id)
{
    return cn_sub_is_ovf(sub) ? cn_key(dir, CN_K_DIROVF, id) : cn_key(dir, CN_K_DIRENT, sub);
}
/* The hash bucket's overflow mark of an entry's sub. */
static inline uint64_t cn_mark_key(uint32_t dir, uint32_t hash)
{
    return cn_key(dir, CN_K_DIRENT, (hash & 0xFFFFFFu) << 4 | CN_MARK_SLOT);
}

/* ---- little-endian field access (on-disk format is little-endian) ---- */
static inline uint16_t cn_get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t cn_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}
static inline uint64_t cn_get64(const uint8_t *p)
{
    return (uint64_t)cn_get32(p) | ((uint64_t)cn_get32(p + 4) << 32);
}
static inline void cn_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void cn_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void cn_put64(uint8_t *p, uint64_t v)
{
    uint32_t lo = (uint32_t)v, hi = (uint32_t)(v >> 32);
    p[0] = (uint8_t)lo; /* no calls: a leaf with no frame where it is not inlined */
    p[1] = (uint8_t)(lo >> 8);
    p[2] = (uint8_t)(lo >> 16);
    p[3] = (uint8_t)(lo >> 24);
    p[4] = (uint8_t)hi;
    p[5] = (uint8_t)(hi >> 8);
    p[6] = (uint8_t)(hi >> 16);
    p[7] = (uint8_t)(hi >> 24);
}

uint32_t cn_crc32(uint32_t crc, const void *data, uint32_t len);
uint32_t cn_name_hash(const char *name, uint32_t len);
/* Every CRC read from flash is compared here. A fuzzing build defines
 * CAIRN_FUZZ_NO_CRC so that mutated images get past the CRCs into the parsing
 * behind them (tests/fuzz); no other build may. */
static inline int cn_crc_ok(uint32_t stored, uint32_t computed)
{
#ifdef CAIRN_FUZZ_NO_CRC
    (void)stored;
    (void)computed;
    return 1;
#else
    return stored == computed;
#endif
}

/* ---- segments (logical blocks) ---- */
/* (states and flags: format.h) One segment's entry in RAM, 4 bytes (the RAM
 * formula's only per-segment term, docs/DESIGN.md "RAM"). The checkpoint
 * stores 12 (FORMAT.md): the erase count is kept here relative to the least
 * worn segment in service (fs->wear_base), saturating, and the age of the
 * data as a class, about log2 of the ticks since the segment was opened
 * (seg.c). A replay's pins are the states it sets (fs.c pin_record); what a
 * lazily erased segment has erased lives in device.c's fronts. */
struct cn_seg {
    unsigned int live : 16; /* live pages (data and tree nodes) */
    unsigned int state : 3; /* enum cn_seg_state */
    unsigned int flags : 5; /* CN_SF_* */
    unsigned int wear : 5;  /* erase count - fs->wear_base, at most CN_WEAR_MAX */
    unsigned int age : 3;   /* age class of its data, 0 (new) to CN_AGE_MAX */
};
#define CN_WEAR_MAX 31u
#define CN_AGE_MAX 7u
typedef char cn_seg_is_4_bytes[sizeof(struct cn_seg) == 4 ? 1 : -1];
typedef char cn_seg_flags_fit[(CN_SF_NODES | CN_SF_SCRUB | CN_SF_FAILING | CN_SF_STUCK |
                               CN_SF_EVICT) < 32u ? 1 : -1];
typedef char cn_seg_states_fit[CN_SEG_BAD < 8 ? 1 : -1];
/* Flags are set through these: a bit field takes only what fits it. */
static inline void cn_seg_set_flags(struct cn_seg *g, unsigned f) { g->flags = f & 0x1Fu; }
static inline void cn_seg_add_flags(struct cn_seg *g, unsigned f)
{
    g->flags = (g->flags | f) & 0x1Fu;
}
static inline void cn_seg_clear_flags(struct cn_seg *g, unsigned f)
{
    g->flags = g->flags & ~f & 0x1Fu;
}

/* device.c: how far a segment that is being written is erased. A segment
 * handed out lazily has only its first erase block erased, and a program
 * that reaches a block at or past `erased` erases it first; at most
 * CN_FRONTS segments are part-erased at once (the heads, the journal, the
 * anchors, a replacement anchor and one being handed out). A segment with no
 * front is erased as far as anything will be programmed into it. */
struct cn_front {
    uint32_t seg; /* CN_NONE: unused */
    uint32_t erased; /* erase blocks from the segment's start erased before use */
};
#define CN_FRONTS 16u
#define CN_SF_URGENT (CN_SF_SCRUB | CN_SF_FAILING | CN_SF_EVICT)

/* Heads: where each kind of write appends. Files written side by side get a
 * data head each, up to cfg.data_heads (CN_DATA_HEADS_MAX). */
enum cn_head_id { CN_H_META = 0, CN_H_COLD = 1, CN_H_DATA = 2 };
#define CN_DATA_HEADS_MAX 8u
#define CN_HEADS (CN_H_DATA + CN_DATA_HEADS_MAX)
typedef char cn_heads_in_ckpt[CN_HEADS == CN_CK_HEADS ? 1 : -1]; /* every head is recorded */
struct cn_head {
    uint32_t seg;  /* CN_NONE: no segment yet */
    uint32_t page; /* next page to program, inside seg */
};

/* Incremental garbage collection: the victim being emptied and how far. */
enum cn_gc_phase { CN_GC_IDLE = 0, CN_GC_DATA = 1, CN_GC_NODES = 2 };
/* A squeeze takes one segment below GC's floor (alloc.c floor_of): down to
 * CN_RECOVERY_SEGS - 1, or the last one where it began with only that free
 * (its commit frees the victim, so the free count is where it began) or lost
 * its segment to a failed program (alloc.c cn_head_failed). */
enum cn_squeeze { CN_SQUEEZE_ONE = 1, CN_SQUEEZE_LAST = 2 };
struct cn_gc {
    uint32_t victim;
    uint8_t phase;
    uint8_t stuck;   /* a page of the victim could not be read */
    uint8_t squeeze; /* 0, or enum cn_squeeze: emptied below GC's floor (gc.c) */
    uint8_t freed;   /* a commit freed the victim (seg.c): the walk is over */
    uint64_t cursor; /* next tree key whose extent may lie in the victim */
    /* Victims begun so far, and pages pulled along (move_data). GC moves
     * pages of open files without telling them (it sits below file.c): a
     * NOR tail page set before the count changed may have moved, and is not
     * appended to in place. */
    uint32_t begun;
    /* Idle collection that frees nothing (cairn_gc): victims begun by idle
     * calls since the free segments last rose above idle_free. */
    uint8_t idle_victims; /* (at most seg_pages / min_gain + 3 <= 11 counted) */
    /* Pages this victim may still pull along (gc.c pull_candidate): half
     * its gain, at most 255 (a byte of the padding, not 8 more bytes) */
    uint8_t pull_left;
    uint16_t idle_free;
    /* The last count of the nodes a victim would rewrite (gc.c
     * rewrite_nodes): that segment at that live count, and the checkpoint
     * then (fs->tally_ckpt: in the struct's padding) */
    uint32_t tally_seg;
    uint16_t tally_live;
    uint16_t tally_nodes;
};

/* ---- node cache ---- */
struct cn_slot {
    uint32_t addr; /* page of the node on flash; CN_NONE while dirty/empty */
    uint32_t lru;
    uint8_t used;
    uint8_t dirty;
    uint8_t pins;
    uint8_t level;
    uint8_t sane; /* its structure was checked (once per load from flash) */
};

/* ---- journal ---- */
/* (record types and sizes: format.h) */
struct cn_log {
    uint32_t seg;     /* segment the journal appends into */
    uint32_t off;     /* byte offset of the next record in seg */
    uint32_t flushed; /* bytes of seg programmed so far (<= off) */
    uint32_t seq;     /* sequence number of the next record */
    uint32_t since;   /* pages of journal since the last checkpoint */
    /* Record that may still be extended in RAM (offset in seg), or CN_NONE. */
    uint32_t last_ext;
    uint8_t *page; /* RAM copy of the page holding off */
};

/* ---- open files ---- */
struct cn_file {
    uint32_t id;     /* 0: slot unused */
    uint16_t refs;
    uint8_t buf_dirty;
    uint8_t closing;  /* the last handle is closing: the tail page is final */
    int32_t size;     /* current size, including buffered bytes */
    int32_t rec_size; /* size as the journal/tree knows it */
    uint32_t buf_page;  /* file page held in buf, CN_NONE if none */
    uint32_t dlo, dhi;  /* dirty byte range inside buf */
    uint32_t tail_phys; /* NOR: page buf_page was programmed into, in place */
    uint32_t tail_prog; /* NOR: bytes of tail_phys programmed */
    uint32_t tail_gen;  /* NOR: fs->gc.begun when tail_phys was set: a victim
                         * begun or a page pulled since may have moved it (gc.c) */
    uint8_t *buf;
    /* cursor: the extent that served the last lookup, and fs->ext_gen when
     * it was read (apply.c) */
    uint64_t ext_gen;
    uint32_t ext_start, ext_phys, ext_count;
    uint32_t next_load; /* file page a sequential reader loads next */
    uint32_t reserved; /* pages set aside by cairn_fallocate, not yet used */
    uint32_t resv_top; /* while reserved: the file pages below it are paid for */
#ifndef CAIRN_NO_RING
    /* ring files (ring.c): capacity in pages (0: not a ring) and the ring
     * offset of the oldest byte, in RAM and as the journal knows it */
    uint32_t ring_pages, ring_head, ring_rec_head;
#endif
};

enum cn_handle_kind { CN_HND_FREE = 0, CN_HND_FILE = 1, CN_HND_DIR = 2 };
struct cn_handle {
    uint8_t kind;
    uint8_t flags;  /* open flags */
    uint16_t file;  /* index into files */
    int32_t pos;
    uint32_t dir_id;   /* directories: the listed dir */
    uint32_t dir_next; /* directories: next sub to return */
};

struct cairn {
    struct cairn_dev *dev;
    uint32_t commit_pages; /* journal pages between commits (cfg.commit_pages) */
    /* geometry in pages */
    uint32_t page_size, seg_pages, seg_count, node_pages, node_size;
    uint8_t medium;     /* enum cairn_medium (one byte: the context fits CAIRN_CONTEXT_SIZE) */
    uint8_t spare_tags; /* NAND: data pages carry a tag in the spare area */
    uint8_t mounted;
    uint8_t read_only;
    /* checkpoint state */
    uint32_t ckpt_seq;      /* sequence of the newest checkpoint */
    uint32_t ckpt_anchor;   /* 0 or 1: anchor holding the newest one */
    uint32_t ckpt_slot;     /* its slot */
    /* NOR, after a clean mount: the page holding the header of the clean
     * checkpoint the mount loaded, whose session byte read 0xFF; the session's
     * first change programs that byte (ckpt.c). CN_NONE otherwise. */
    uint32_t ckpt_mark_page;
    uint32_t ckpt_pages;    /* pages per checkpoint slot */
    uint32_t ckpt_blank_from[2]; /* per anchor: slots from here on are known
                                    erased (erased this session), CN_NONE: unknown
                                    (ckpt.c: or claimed, or being erased) */
    uint32_t root;          /* tree root ref (page or CN_DIRTY_REF|slot) */
    uint32_t height;        /* levels; 1 = the root is a leaf */
    uint32_t next_id;
    struct cn_head head[CN_HEADS];
    uint32_t tally_ckpt; /* ckpt_seq at gc.tally's count (gc.c rewrite_nodes) */
    struct cn_log log;
    /* RAM areas carved out of cfg.mem (or the mount's malloc) */
    struct cn_seg *segs;
    struct cn_front *fronts; /* CN_FRONTS (device.c) */
    struct cn_slot *slots;
    uint32_t nslots;
    /* The first staged page's first changed byte (its bytes below read as
     * on flash: file.c cuts_unsynced). Here, not by the other stage_
     * fields: a hole of the x86-64 layout. */
    uint32_t stage_dlo;
    uint8_t *cache;   /* nslots * node_size */
    uint8_t *scratch; /* max(page_size, CN_REC_MAX) bytes */
    uint8_t *scratch2;
    uint8_t *recbuf;  /* CN_REC_MAX bytes: a record being built */
    struct cn_file *files;
    struct cn_handle *handles;
    uint32_t max_open;
    uint32_t lru_clock;
    /* Bumped whenever a commit changes any file's extents (apply.c), which
     * does not call up into file.c: an open file's extent cursor holds only
     * for the generation it was read in. 64 bits: a device's lifetime of
     * page programs can pass 2^32 (a cursor kept that long would match a
     * wrapped count); victims (fs->gc.begun) stay below its erases. */
    uint64_t ext_gen;
    /* read-ahead of file data in one node-cache slot (cache.c) */
    uint32_t ra_slot, ra_phys, ra_pages; /* ra_pages 0: none */
    /* the stage (file.c): full pages of one file written in sequence, held
     * in a node-cache slot lent out, programmed together */
    uint32_t stage_slot;  /* CN_NONE: no stage */
    uint32_t stage_fpage; /* file page of the first page held */
    uint16_t stage_file;  /* index into files */
    uint16_t stage_pages; /* pages held */
    uint32_t dirty_nodes;
    uint32_t free_segs; /* FREE or ERASED, live 0, not pinned */
    uint32_t seg_base;  /* first segment after the anchors */
    uint32_t anchor[2]; /* the two anchor segments (the first two good ones) */
    uint32_t anchor_evict; /* segment being emptied to replace a failing anchor */
    /* the newest durable checkpoint (or the state a mount found) shows it
     * free: only then may it be erased (anchor.c, invariant I3) */
    uint8_t evict_durable_free;
    /* NAND, a session's first checkpoint: into the other anchor, erased
     * first (ckpt.c cn_ckpt_first_of_session) */
    uint8_t ckpt_fresh;
    uint16_t call_pages; /* pages programmed since the current call began (saturating) */
    uint32_t anchor_new;   /* replacement named in the table, awaiting its
                              checkpoint (then the failing one is marked bad) */
    uint32_t anchor_old;   /* the failing anchor, while the checkpoint that
                              names its replacement goes into the replacement */
    uint32_t seg_clock; /* counts segments opened: the age scale of GC */
    uint32_t wear_base; /* erase count of the least worn segment in service */
    uint32_t anchor_erases[2]; /* the anchors' erase counts, exact */
    uint32_t head_owner[CN_DATA_HEADS_MAX]; /* file id writing through it, 0 none */
    uint32_t head_used[CN_DATA_HEADS_MAX];  /* clock of its last use (sharing) */
    uint32_t reserved;  /* pages promised by cairn_fallocate to open files */
    uint32_t own_reserved; /* the part of them that is the settling caller's
                              own to use (file.c collect_for_data), else 0 */
    uint16_t call_erases; /* erases issued since the current call began (at most 65535) */
    uint16_t call_hard;   /* victims the hard path emptied during this call */
    uint32_t call_moved;  /* pages GC moved in bounded steps during this call */
    /* The segment of pages GC has written and not yet recorded (gc.c
     * move_run), else CN_NONE: no checkpoint frees it (seg.c
     * cn_seg_release_dead). (Kept out of struct cn_gc, which would grow by
     * 8 bytes with it.) */
    uint32_t gc_moving;
    uint8_t data_heads;
    uint8_t ckpt_copies; /* 2 on NAND: a checkpoint survives one unreadable copy */
    uint16_t wear_spread;
    uint32_t gc_step;
    struct cn_gc gc;
    void *mem_owned;    /* malloc'd by mount, freed by unmount */
    uint8_t session_pending; /* clean mount: checkpoint before the first write */
    uint8_t broken;          /* an update failed half-way: refuse further work */
    uint8_t in_gc;           /* GC is running: no nested collection */
    uint8_t recovering;      /* mount is replaying (enum cn_recovery; 0: not) */
    uint8_t borrow;          /* a freeing commit may take one recovery segment */
    uint8_t unrecorded;      /* GC moved pages without records (a squeeze,
                              * gc.c): commit before the next record */
    uint8_t freeing;         /* enum cn_freeing: a delete's record (or an
                              * extent's, whose data is written) */
    uint8_t call_flags;      /* CN_CALL_*: what the current call has met */
    /* NOR, anchors of several erase blocks: 1 + the anchor (0, 1) whose run
     * began at format with only the blocks of its slot 0 erased; its blocks
     * from its front on still hold what was there before (ckpt.c "partial
     * run"). 0: none. */
    uint8_t ckpt_partial;
    uint8_t ckpt_extended; /* blocks of a partial run the next checkpoint's slot took */
    uint8_t ckpt_call_steps; /* anchor blocks write calls erased since the last checkpoint
                              * in a partial run's quiet quarter (ckpt.c) */
    /* The volume was never written: format left the tree and the journal
     * unwritten (fs.c); the tree in the cache is the empty one, with the
     * root directory, and the session's first change writes it. */
    uint8_t unwritten;
    /* Clean mount: the heads' next pages are read blank at the session's
     * first change, not at mount (alloc.c cn_heads_check). */
    uint8_t heads_unchecked;
    /* NAND: the standby (anchor_evict) is lent to the pool, its EVICT flag
     * cleared, by a delete refused for room (anchor.c); handing it out
     * ends the loan and its claim to be durably free (seg.c cn_seg_alloc). */
    uint8_t standby_lent;
    /* The last checkpoint found no slot: both anchors failing, or one
     * failing and the other full (ckpt.c next_slot); a writable mount that
     * fails so answers ROFS (fs.c mount_by). */
    uint8_t ckpt_nowhere;
    /* GC's (struct cn_gc has no byte to spare): 0, or 1 + the data head a
     * writer's last try moves the victim into, while that head's open
     * segment has room (gc.c fits_into_data, alloc.c resolve) */
    uint8_t gc_into_data;
};

/* device.c */
int cn_dev_read(cairn *fs, uint32_t page, uint32_t off, void *buf, uint32_t len);
int cn_dev_prog(cairn *fs, uint32_t page, uint32_t off, const void *buf,
                uint32_t len, const void *spare, uint32_t spare_len);
/* Erases; the erase counts are the segment table's (seg.c counts them). */
int cn_dev_erase_seg(cairn *fs, uint32_t seg);
int cn_dev_erase_first(cairn *fs, uint32_t seg);
int cn_dev_erase_next(cairn *fs, uint32_t seg);
int cn_dev_erase_block(cairn *fs, uint32_t seg, uint32_t i);
uint32_t cn_dev_front(const cairn *fs, uint32_t seg);
void cn_dev_set_front(cairn *fs, uint32_t seg, uint32_t erased);
int cn_dev_sync(cairn *fs);
int cn_dev_blank(cairn *fs, uint32_t page, uint32_t off, uint8_t *buf, uint32_t len,
                 int *blank);
static inline uint32_t cn_seg_of(const cairn *fs, uint32_t page) { return page / fs->seg_pages; }

/* tag.c: data pages and the spare-area tag of a NAND data page (FORMAT.md
 * "NAND spare tags") */
void cn_make_tag(uint8_t *tag, uint8_t kind, uint32_t id, uint32_t fpage, uint32_t seq,
                 int32_t size, const uint8_t *data, uint32_t page_size);
int cn_tag_ok(const uint8_t *tag);
int cn_write_data(cairn *fs, uint32_t phys, uint32_t id, uint32_t fpage, const uint8_t *data,
                  uint32_t pages);

/* cache.c */
/* Slot holding node `ref` (a page, or CN_DIRTY_REF | slot), or an error (< 0). */
int cn_cache_get(cairn *fs, uint32_t ref);
int cn_cache_new(cairn *fs); /* a new dirty slot (>= 0), or an error */
uint8_t *cn_slot_data(cairn *fs, uint32_t slot);
void cn_cache_cow(cairn *fs, uint32_t slot);
void cn_cache_drop(cairn *fs, uint32_t slot);
#define CN_RA_SLOTS 2u /* node-cache slots a read-ahead may take */
/* fs->call_flags, set afresh by every writing call (invariant.c cn_fs_ready) */
#define CN_CALL_FIRST 1u /* the call begins the session (its first write) */
#define CN_CALL_FULL 2u  /* the call's collection found no room (space.c) */
const uint8_t *cn_ra_page(cairn *fs, uint32_t phys);
int cn_ra_fill(cairn *fs, uint32_t phys, uint32_t pages);
uint32_t cn_cache_evictable(const cairn *fs);
int cn_cache_lend(cairn *fs);
void cn_cache_take_back(cairn *fs, uint32_t slot);
int cn_cache_flush(cairn *fs);
int cn_cache_flush_leaves(cairn *fs, uint32_t want);

/* tree.c */
int cn_tree_get(cairn *fs, uint64_t key, void *val, uint32_t cap, uint32_t *vlen);
/* An entry found by cn_tree_seek. key: where to look, then the key found;
 * val (NULL: none) receives up to cap bytes of its value, len its length. */
struct cn_hit {
    uint64_t key;
    void *val;
    uint32_t cap;
    uint32_t len;
};
/* First entry with key >= h->key (le 0) or last entry with key <= h->key (le 1). */
int cn_tree_seek(cairn *fs, struct cn_hit *h, int le);
int cn_tree_put(cairn *fs, uint64_t key, const void *val, uint32_t vlen);
/* A value in two pieces (a header and, e.g., a name), stored as one. */
struct cn_val {
    const void *a;
    uint32_t alen;
    const void *b;
    uint32_t blen;
};
/* v before key: all three arguments travel in registers (AAPCS) */
int cn_tree_put2(cairn *fs, const struct cn_val *v, uint64_t key);
int cn_tree_del(cairn *fs, uint64_t key);
typedef int (*cn_match_fn)(uint64_t key, const uint8_t *val, uint32_t vlen, void *arg);
int cn_tree_scan_leaf(cairn *fs, uint64_t key, cn_match_fn match, void *arg,
                      uint64_t *found, void *val, uint32_t vcap, uint32_t *vlen);
int cn_tree_init_empty(cairn *fs);
/* Calls fn for every node (pre-order) with its ref; stops on nonzero. */
typedef int (*cn_node_fn)(cairn *fs, uint32_t slot, uint32_t addr, void *arg);
int cn_tree_walk(cairn *fs, cn_node_fn fn, void *arg);
int cn_tree_leaf_holds(cairn *fs, uint32_t slot, cn_match_fn match, void *arg);
/* What a change would add to the next flush: the nodes on its paths, each
 * once, and the nodes its puts would make (tree.c; apply.c record_cost). */
#define CN_COST_LEAVES 4u
#define CN_COST_NODES (CN_COST_LEAVES * CN_MAX_HEIGHT)
struct cn_cost {
    uint32_t node[CN_COST_NODES]; /* counted: page, or CN_DIRTY_REF | slot */
    uint32_t n;
    uint32_t made; /* nodes splits would make */
};
int cn_tree_cost_key(cairn *fs, struct cn_cost *c, uint64_t key, uint32_t grow);
int cn_tree_cost_last(cairn *fs, struct cn_cost *c, uint64_t lo, uint64_t hi, uint32_t most,
                      int *fewer);

/* seg.c: the segment table */
int cn_seg_alloc(cairn *fs, uint32_t floor, int worn, uint32_t *seg_out);
int cn_seg_pre_erase(cairn *fs);
int cn_seg_erase_soon(cairn *fs);
int cn_seg_erase_whole(cairn *fs, uint32_t seg);
int cn_seg_erase_first(cairn *fs, uint32_t seg);
void cn_seg_count_erase(cairn *fs, uint32_t seg);
void cn_seg_mark_erased(cairn *fs);
/* wear and age (seg.c): erase counts relative to fs->wear_base, ages in
 * classes; a checkpoint's 12-byte entries expand and compress them */
uint32_t cn_seg_erases(const cairn *fs, uint32_t seg);
void cn_seg_opened(cairn *fs, uint32_t seg);
uint32_t cn_seg_age(const cairn *fs, uint32_t seg);
void cn_seg_age_at_least(cairn *fs, uint32_t seg, uint32_t from);
void cn_seg_entry_out(const cairn *fs, uint32_t seg, uint8_t *e);
void cn_seg_load_begin(cairn *fs);
int cn_seg_entry_in(cairn *fs, uint32_t seg, const uint8_t *e);
void cn_seg_load_end(cairn *fs);
void cn_seg_set_anchors(cairn *fs, uint32_t a0, uint32_t a1);
void cn_live_add(cairn *fs, uint32_t page, int32_t delta);
uint32_t cn_free_segs(const cairn *fs);
uint32_t cn_dead_segs(const cairn *fs);
void cn_seg_release_dead(cairn *fs);
void cn_seg_retire(cairn *fs, uint32_t seg);
uint32_t cn_wear_spread(const cairn *fs, uint32_t *min_out, uint32_t *max_out);

/* alloc.c: heads and reserves, accounted */
int cn_head_pages(cairn *fs, unsigned h, uint32_t want, int exact, uint32_t *page_out,
                  uint32_t *got);
void cn_head_failed(cairn *fs, uint32_t page);
int cn_head_full(const cairn *fs, unsigned h);
uint32_t cn_head_left(const cairn *fs, unsigned h);
struct cn_file;
/* A reserved file's pages fpage.. were written (alloc.c: what counts). */
void cn_pay_reserved(cairn *fs, struct cn_file *f, uint32_t fpage, uint32_t got);
/* A reservation holds two segments more than it promises, until the file
 * closes: the tree nodes and journal pages its writes need, and the head its
 * collections open (alloc.c cn_pay_reserved; DESIGN.md "What a promise counts", item 5). */
#define CN_RESV_MARGIN(fs) (2u * (fs)->seg_pages)
/* Pages for file pages fpage.. of f at its data head. */
int cn_data_pages(cairn *fs, struct cn_file *f, int short_lived, uint32_t fpage,
                  uint32_t want, uint32_t *page_out, uint32_t *got);
int cn_meta_room(cairn *fs, uint32_t extra);
int cn_heads_check(cairn *fs);
int cn_gc_fits(cairn *fs, uint32_t live, uint32_t log_segs, uint32_t nodes, int at_once);
uint8_t cn_data_head_for_moves(const cairn *fs);
int cn_gc_squeeze_fits(cairn *fs, uint32_t live, uint32_t nodes, int keep);
uint64_t cn_free_promise(const cairn *fs);
uint32_t cn_meta_spare_for_data(const cairn *fs);
uint32_t cn_reserved_segs(const cairn *fs);
void cn_close_full_heads(cairn *fs);
void cn_close_heads_in(cairn *fs, uint32_t s);
int cn_meta_head_room(const cairn *fs);
uint32_t cn_data_room(const cairn *fs);
void cn_data_head_claim(cairn *fs, uint32_t id);
int cn_record_freeing(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len);
void cn_heads_forget_file(cairn *fs, struct cn_file *f);
int cn_off_own_head(const cairn *fs, uint32_t id, uint32_t phys);

/* journal.c */
int cn_log_append(cairn *fs, uint8_t type, const uint8_t *payload, uint32_t len);
int cn_log_extend_extent(cairn *fs, uint32_t id, uint32_t fpage, uint32_t phys,
                         uint32_t count, int32_t size);
int cn_log_flush(cairn *fs);
int cn_log_restart(cairn *fs, uint32_t floor);
int cn_log_would_switch(const cairn *fs, uint32_t records, uint32_t len);
int cn_session_begin(cairn *fs);
typedef int (*cn_rec_fn)(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len,
                         void *arg);
int cn_log_scan(cairn *fs, cn_rec_fn fn, void *arg, uint32_t *end_seg,
                uint32_t *end_off, uint32_t *records);

/* ckpt.c: a checkpoint is a header and a table entry per segment */
int cn_ckpt_write(cairn *fs, int clean);
int cn_ckpt_load(cairn *fs);
int cn_ckpt_unwritable(const cairn *fs);
int cn_ckpt_newest(cairn *fs, uint32_t *first_page, uint32_t *last_page);
int cn_ckpt_format_erase(cairn *fs);
int cn_ckpt_format(cairn *fs);
int cn_begin_write(cairn *fs); /* the session's first change: mark it unclean */
void cn_ckpt_first_of_session(cairn *fs, int recovery);
int cn_ckpt_adopt_anchors(cairn *fs);
int cn_ckpt_erase_step(cairn *fs, int idle);

/* invariant.c: the state check (CAIRN_STATE_CHECKS builds; else nothing) */
void cn_state_check(const cairn *fs);

/* anchor.c: replacing a failing anchor */
int cn_seg_good(cairn *fs, uint32_t s);
int cn_anchor_tend(cairn *fs);
void cn_anchor_resume(cairn *fs);
int cn_anchor_evicting(const cairn *fs);
int cn_anchor_standby_affordable(const cairn *fs);
int cn_anchor_lend_standby(cairn *fs);
void cn_anchor_landed(cairn *fs);
int cn_anchor_pending(const cairn *fs);

/* apply.c: record effects on the tree (shared by live path and replay) */
int cn_apply(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len);
int cn_commit(cairn *fs);
int cn_record(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len);
int cn_record_move(cairn *fs, const uint8_t *p);
int cn_move_unrecorded(cairn *fs, const uint8_t *p);
int cn_record_extent(cairn *fs, uint32_t id, uint32_t fpage, uint32_t phys, uint32_t count,
                     int32_t size);

/* gc.c */
int cn_gc_step(cairn *fs, uint32_t budget, uint32_t written, uint32_t *moved);
/* Whole victims (cn_gc_collect) for space, or for the room of a delete's
 * own records: that one takes the nodes a victim really rewrites, counted,
 * where the bound on a commit's nodes would refuse it, and its squeeze need
 * not leave a delete's room (gc.c gains, assumed_nodes). CN_GC_LAST: a
 * writer's last try for space (space.c cn_space_for_user), which counts the
 * nodes as a delete's collection does and keeps a delete's room. */
#define CN_GC_SPACE 1
#define CN_GC_DELETE 2
#define CN_GC_LAST 3
int cn_gc_collect(cairn *fs, int why);
void cn_gc_note_write(cairn *fs);
int cn_gc_cheap_victim(cairn *fs);

/* space.c: the settle point at the entry of an operation */
int cn_settle(cairn *fs, uint32_t pages);
int cn_settle_delete(cairn *fs);
int cn_record_delete(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len);
void cn_write_call_ends(cairn *fs);
int cn_evict_for_anchor(cairn *fs);
int cn_space_for_user(cairn *fs, int last);
int cn_space_for_records(cairn *fs);
int cn_flush_nodes(cairn *fs);
int cn_reserve(cairn *fs, struct cn_file *f, uint32_t pages);
int cn_finish_orphans(cairn *fs, uint32_t budget);

/* name.c */
/* What cn_lookup found: the object, its entry (parent, sub) and the last
 * name of the path (name, len). */
struct cn_where {
    const char *name;
    uint32_t id, parent, sub, len;
    uint8_t type;
    uint8_t slash; /* the path ends in '/': it must name a directory */
    uint8_t last;  /* the error is the last component's (cn_lookup) */
};
int cn_path_ok(const char *path);
int cn_lookup(cairn *fs, const char *path, struct cn_where *w);
int cn_want_dir(const struct cn_where *w);
int cn_inode_get(cairn *fs, uint32_t id, uint8_t *type, uint32_t *parent, int32_t *size);

/* file.c */
int cn_file_flush(cairn *fs, struct cn_file *f);
int cn_file_flush_buffer(cairn *fs, struct cn_file *f);
int cn_sync_file(cairn *fs, struct cn_file *f);

/* inode value: FORMAT.md "Values" */
#ifndef CAIRN_NO_RING
#define CN_INODE_MAX CN_RING_INODE_LEN
#else
#define CN_INODE_MAX CN_INODE_LEN /* ring inodes read as malformed */
#endif
static inline int cn_inode_len_ok(const uint8_t *v, uint32_t vlen)
{
    if (vlen == CN_INODE_LEN)
        return !(v[1] & CN_INODE_F_RING);
    return CN_INODE_MAX == CN_RING_INODE_LEN && vlen == CN_RING_INODE_LEN &&
           (v[1] & CN_INODE_F_RING) && v[0] == CAIRN_TYPE_FILE;
}
static inline void cn_inode_pack(uint8_t *v, uint8_t type, uint32_t parent, int32_t size,
                                 uint32_t sub)
{
    v[0] = type;
    v[1] = 0;
    v[2] = 0;
    v[3] = 0;
    cn_put32(v + 4, parent);
    cn_put32(v + 8, (uint32_t)size);
    cn_put32(v + 12, sub);
}

int cn_log_data_page(cairn *fs, uint32_t id, uint32_t fpage, int32_t size,
                     const uint8_t *data, uint32_t *phys);
int cn_record_data_page(cairn *fs, uint32_t id, uint32_t fpage, int32_t size,
                        const uint8_t *data, uint32_t *phys);

/* invariant.c: the entry guard */
int cn_fs_ready(cairn *fs, int write);

/* more of name.c, file.c, apply.c */
int cn_new_object_room(cairn *fs, uint32_t sub);
int cn_create(cairn *fs, uint32_t parent, uint32_t sub, const char *name, uint32_t len,
              uint8_t type, uint32_t *id_out);
int cn_handle_new(cairn *fs);
int cn_open_size(cairn *fs, uint32_t id, int32_t *size);
void cn_files_unlinked(cairn *fs, uint32_t id);
/* An extent of a file: pages [start, +count) at phys. */
struct cn_ext {
    uint32_t start, phys, count;
};
/* The extent of id with the greatest start <= fpage (le 1) or the least start
 * >= fpage (le 0); CAIRN_ERR_NOENT when there is none. */
int cn_extent_find(cairn *fs, uint32_t id, uint32_t fpage, int le, struct cn_ext *e);
/* The extent holding file page fpage; CAIRN_ERR_NOENT in a hole. */
int cn_extent_lookup(cairn *fs, uint32_t id, uint32_t fpage, struct cn_ext *e);
int cn_inode_sub(cairn *fs, uint32_t id, uint32_t *sub);

/* ring.c: ring files. file.c and check.c call these hooks; with the ring
 * code compiled out the stubs keep their branches dead. */
#ifndef CAIRN_NO_RING
static inline int cn_is_ring(const struct cn_file *f) { return f->ring_pages != 0; }
static inline uint32_t cn_ring_bytes(const cairn *fs, const struct cn_file *f)
{
    return f->ring_pages * fs->page_size;
}
/* The window's head moved since the journal last recorded it. */
static inline int cn_ring_moved(const struct cn_file *f)
{
    return f->ring_head != f->ring_rec_head;
}
int cn_ring_load(cairn *fs, struct cn_file *f);
int32_t cn_ring_read(cairn *fs, struct cn_handle *h, struct cn_file *f, uint8_t *out,
                     int32_t len);
int cn_ring_append(cairn *fs, struct cn_file *f, const uint8_t *src, uint32_t want,
                   uint32_t *n);
int cn_ring_truncate(cairn *fs, struct cn_file *f, int32_t size);
int cn_ring_record(cairn *fs, struct cn_file *f, uint32_t slot, uint32_t phys, uint32_t count);
int32_t cn_ring_extent_limit(cairn *fs, uint32_t id, int32_t size);
int cn_ring_check_inode(cairn *fs, uint32_t id);
/* ringrec.c: ring records applied, and the ring inode's checks */
int cn_ring_apply(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len);
int cn_ring_cap_ok(const cairn *fs, uint32_t cap);
int cn_ring_window_ok(const cairn *fs, uint32_t cap, uint32_t head, int32_t size);
int cn_ring_inode(cairn *fs, uint32_t id, uint8_t *v, uint32_t *cap);
/* what ring.c reuses of apply.c and file.c */
int cn_apply_extent(cairn *fs, uint32_t id, uint32_t fpage, uint32_t phys, uint32_t count,
                    int32_t size);
int cn_apply_create(cairn *fs, const uint8_t *p, uint32_t len);
int cn_record_ring(cairn *fs, const uint8_t *p);
int cn_file_map(cairn *fs, struct cn_file *f, uint32_t fpage, uint32_t *phys, uint32_t *run);
#else
static inline int cn_is_ring(const struct cn_file *f) { (void)f; return 0; }
static inline uint32_t cn_ring_bytes(const cairn *fs, const struct cn_file *f)
{
    (void)fs; (void)f;
    return 0;
}
static inline int cn_ring_moved(const struct cn_file *f) { (void)f; return 0; }
static inline int cn_ring_load(cairn *fs, struct cn_file *f) { (void)fs; (void)f; return 0; }
static inline int32_t cn_ring_read(cairn *fs, struct cn_handle *h, struct cn_file *f,
                                   uint8_t *out, int32_t len)
{
    (void)fs; (void)h; (void)f; (void)out; (void)len;
    return CAIRN_ERR_INVAL;
}
static inline int cn_ring_append(cairn *fs, struct cn_file *f, const uint8_t *src,
                                 uint32_t want, uint32_t *n)
{
    (void)fs; (void)f; (void)src; (void)want; (void)n;
    return CAIRN_ERR_INVAL;
}
static inline int cn_ring_truncate(cairn *fs, struct cn_file *f, int32_t size)
{
    (void)fs; (void)f; (void)size;
    return CAIRN_ERR_INVAL;
}
static inline int cn_ring_record(cairn *fs, struct cn_file *f, uint32_t slot, uint32_t phys,
                                 uint32_t count)
{
    (void)fs; (void)f; (void)slot; (void)phys; (void)count;
    return CAIRN_ERR_INVAL;
}
static inline int cn_ring_apply(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len)
{
    (void)fs; (void)type; (void)p; (void)len;
    return CAIRN_ERR_CORRUPT;
}
static inline int32_t cn_ring_extent_limit(cairn *fs, uint32_t id, int32_t size)
{
    (void)fs; (void)id;
    return size;
}
static inline int cn_ring_check_inode(cairn *fs, uint32_t id) { (void)fs; (void)id; return 0; }
#endif

#endif /* CN_H */
