/* Checkpoints: the root of everything durable, written into fixed slots of
 * two anchor segments (the first two good segments of the volume). Slots
 * fill in order inside one anchor; when it is full the other anchor is
 * erased and restarted. Mount finds the newest valid checkpoint with a
 * handful of reads: a binary search in each anchor finds its last written
 * slot, and the newer of the two valid checkpoints wins. On NAND a slot holds
 * two copies of the checkpoint, so one unreadable page does not lose the
 * volume. Layout: docs/FORMAT.md "Checkpoint" (offsets in format.h). */
#include "cn.h"

#define CK_CLEAN CN_CK_F_CLEAN
/* The other anchor was erased after the switch to this one (pre_erase) and
 * nothing has been written into it since, as far as the writer knew. */
#define CK_OTHER_ERASED CN_CK_F_OTHER_ERASED
/* ckpt_blank_from[a] when only a checkpoint says anchor a is erased. A later
 * session may have torn a switch into it without a checkpoint to say so, and
 * an erase that was cut reads erased yet does not hold what is programmed
 * (weak cells): so it is read back blank before use, and every checkpoint
 * is read back after it is programmed (program_slot). */
#define CK_CLAIMED_ERASED (CN_NONE - 1u)
/* ckpt_blank_from[a] while anchor a, left behind by a switch, is erased a
 * block at a time (cn_ckpt_erase_step): its blocks before its front (device.c)
 * were erased in this session, the rest still hold older checkpoints. It is
 * never programmed in that state: a switch into it first erases the rest. */
#define CK_ERASING (CN_NONE - 2u)
/* ckpt_blank_from[a] for NAND anchors of several blocks (block_anchors):
 * every block of anchor a but its first is erased (tail_erase), and its first
 * is erased right before slot 0 is programmed. A checkpoint that says the
 * other anchor is erased (CK_OTHER_ERASED) means this on such volumes. */
#define CK_ERASED_BUT_FIRST (CN_NONE - 3u)
/* Not a header flag: the checkpoint's session byte reads programmed (a NOR
 * session began changing the volume after this clean checkpoint). */
#define CK_BEGUN 0x100u
/* fs->ckpt_fresh: the session's first checkpoint goes into the other anchor,
 * erased whole first, or only its first block (cn_ckpt_first_of_session) */
#define CK_FRESH_WHOLE 1u
#define CK_FRESH_FIRST_BLOCK 2u
/* the next checkpoint goes into the other anchor, as at its switch slot
 * (leave_at_unmount) */
#define CK_FRESH_SWITCH 3u
/* erase_step_if: who asks. A landed checkpoint (erase_due's share), the end
 * of a write call that erased nothing (the anchor left behind, or the next
 * slot of a partial run), idle time (cairn_gc: any block still due). */
#define CK_STEP_IDLE 0
#define CK_STEP_LANDED 1
#define CK_STEP_CALL 2

static uint32_t ck_len(const cairn *fs) { return CN_CK_HDR + CN_CK_ENTRY * fs->seg_count; }
static uint32_t slot_pages(const cairn *fs) { return fs->ckpt_pages * fs->ckpt_copies; }
static uint32_t slots_per_anchor(const cairn *fs) { return fs->seg_pages / slot_pages(fs); }
static uint32_t slot_page(const cairn *fs, uint32_t anchor, uint32_t slot)
{
    return fs->anchor[anchor] * fs->seg_pages + slot * slot_pages(fs);
}

/* The table bytes that fall in page j: [first, end) of the table area. */
static void table_span(const cairn *fs, uint32_t j, uint32_t *first, uint32_t *end)
{
    uint32_t base = j * fs->page_size, top = base + fs->page_size;
    *first = base < CN_CK_HDR ? 0 : base - CN_CK_HDR;
    *end = top < CN_CK_HDR ? 0 : top - CN_CK_HDR;
    if (*end > CN_CK_ENTRY * fs->seg_count)
        *end = CN_CK_ENTRY * fs->seg_count;
}

/* Page j of the checkpoint image of the current state. */
static void ck_page(cairn *fs, uint32_t j, uint8_t *buf, uint32_t flags, uint32_t seq)
{
    uint32_t ps = fs->page_size, i, h, first, end;
    uint8_t ent[CN_CK_ENTRY];

    memset(buf, 0, ps);
    if (j == 0) {
        cn_put32(buf + CN_CK_O_MAGIC, CN_CK_MAGIC);
        cn_put16(buf + CN_CK_O_VERSION, CN_CK_VERSION);
        buf[CN_CK_O_FLAGS] = (uint8_t)flags;
        buf[CN_CK_O_SESSION] = 0xFF; /* left erased on NOR: the session byte */
        cn_put32(buf + CN_CK_O_SEQ, seq);
        cn_put32(buf + CN_CK_O_LENGTH, ck_len(fs));
        cn_put32(buf + CN_CK_O_PAGE_SIZE, fs->page_size);
        cn_put32(buf + CN_CK_O_SEG_PAGES, fs->seg_pages);
        cn_put32(buf + CN_CK_O_SEG_COUNT, fs->seg_count);
        cn_put32(buf + CN_CK_O_NODE_SIZE, fs->node_size);
        cn_put32(buf + CN_CK_O_ROOT, fs->root);
        cn_put32(buf + CN_CK_O_HEIGHT, fs->height);
        cn_put32(buf + CN_CK_O_NEXT_ID, fs->next_id);
        cn_put32(buf + CN_CK_O_LOG_SEG, fs->log.seg);
        cn_put32(buf + CN_CK_O_LOG_OFF, fs->log.off);
        cn_put32(buf + CN_CK_O_LOG_SEQ, fs->log.seq);
        cn_put32(buf + CN_CK_O_CLOCK, fs->seg_clock);
        for (h = 0; h < CN_HEADS; h++) {
            cn_put32(buf + CN_CK_O_HEADS + h * 8, fs->head[h].seg);
            cn_put32(buf + CN_CK_O_HEADS + 4 + h * 8, fs->head[h].page);
        }
    }
    table_span(fs, j, &first, &end);
    for (i = first; i < end; i++) { /* entries may straddle pages */
        if (i == first || i % CN_CK_ENTRY == 0)
            cn_seg_entry_out(fs, i / CN_CK_ENTRY, ent);
        buf[CN_CK_HDR + i - j * ps] = ent[i % CN_CK_ENTRY];
    }
}

static uint32_t ck_crc_of_state(cairn *fs, uint32_t flags, uint32_t seq)
{
    uint32_t j, crc = 0, len = ck_len(fs), ps = fs->page_size;
    for (j = 0; j < fs->ckpt_pages && j * ps < len; j++) {
        uint32_t n = len - j * ps < ps ? len - j * ps : ps;
        ck_page(fs, j, fs->scratch2, flags, seq);
        if (j == 0)
            fs->scratch2[CN_CK_O_SESSION] = 0; /* outside the CRC */
        crc = cn_crc32(crc, fs->scratch2, n);
    }
    return crc;
}

/* Slots an anchor holds, and where writing normally moves on to the other
 * anchor: the second half is kept back, so that when the other anchor fails
 * the checkpoints still have room while a replacement is made ready (a
 * session takes up to three slots: the skipped one, its first write's, its
 * unmount's). */
static uint32_t switch_slot(const cairn *fs)
{
    uint32_t n = slots_per_anchor(fs);
    return n - n / 2u;
}

static int anchor_failing(const cairn *fs, uint32_t a)
{
    return (fs->segs[fs->anchor[a]].flags & CN_SF_FAILING) != 0;
}

/* Can no checkpoint be written any more? Both anchors failed a program or
 * an erase, or one did and the other has no slot left (next_slot said so),
 * so nothing a write changes could be made durable; what the newest
 * checkpoint holds still reads (cairn_mount: CAIRN_ERR_ROFS). */
int cn_ckpt_unwritable(const cairn *fs)
{
    return (anchor_failing(fs, 0) && anchor_failing(fs, 1)) || fs->ckpt_nowhere;
}

static uint32_t anchor_blocks(const cairn *fs)
{
    return fs->seg_pages / fs->dev->geo.pages_per_block;
}

/* NAND, anchors of one erase block: every session erases the other anchor
 * for its first checkpoint (cn_ckpt_first_of_session). */
static int session_erases_anchor(const cairn *fs)
{
    return fs->medium == CAIRN_MEDIUM_NAND && anchor_blocks(fs) == 1u;
}

/* NAND, anchors of several erase blocks: an anchor's first block is erased
 * right before its slot 0 is programmed (the one slot an earlier attempt
 * from the same state can have torn: mark_first_block), and once the anchor
 * is left behind only the blocks after it that its checkpoints reached are
 * erased, last one first (tail_erase). A session of a few checkpoints
 * stays in the first block, so it erases one block, for its mark (200
 * sessions on nand-jffs2: 200 anchor erases; erasing the anchor left behind
 * whole would have taken 1,800). */
static int block_anchors(const cairn *fs)
{
    return fs->medium == CAIRN_MEDIUM_NAND && anchor_blocks(fs) > 1u;
}

/* The last erase block of its anchor that slot s reaches into. */
static uint32_t slot_last_block(const cairn *fs, uint32_t s)
{
    return ((s + 1u) * slot_pages(fs) - 1u) / fs->dev->geo.pages_per_block;
}

/* Partial run (NOR, anchors of several erase blocks): format erases only the
 * blocks of anchor 0's slot 0, not both anchors whole (18 blocks and 816 ms
 * on 4 MiB of nor-w25q128 in 32 KiB segments, where littlefs's format takes
 * 2 blocks). The anchor's blocks from its front on still hold what an
 * earlier volume left there; each is erased when a slot first reaches it
 * (partial_extend), and every checkpoint of the run says so (PARTIAL), so a
 * mount knows the front: the block after the newest checkpoint's last page.
 * Older checkpoints in those blocks are passed over by the mount's search
 * (older_than_run): the volume's seq starts above every slot header format
 * found (cn_ckpt_format_erase). The run ends at the switch; the anchor is
 * then erased whole like any anchor left behind. */
static int partial(const cairn *fs, uint32_t a)
{
    return fs->ckpt_partial == a + 1u;
}

/* Partial run: erase the blocks slot s reaches past the front. */
static int partial_extend(cairn *fs, uint32_t a, uint32_t s)
{
    uint32_t seg = fs->anchor[a];
    int err = 0;
    while (!err && cn_dev_front(fs, seg) <= slot_last_block(fs, s)) {
        err = cn_dev_erase_next(fs, seg);
        if (fs->ckpt_extended < 0xFFu)
            fs->ckpt_extended++; /* the checkpoint's erase steps (erase_step_if) */
    }
    return err;
}

/* Where the current anchor's checkpoints stop and the next goes to the other
 * anchor. A partial run goes on past the switch slot while the other anchor
 * is not erased yet (format left it as it was): its erase and the run's own
 * blocks are then spread over the whole anchor, a block a call, where up to
 * the switch slot some calls erased 3 anchor blocks (test_anchor "anchor
 * erase spread", 4 MiB, directory changes: 8 blocks of the other anchor and
 * 3 of the run in 8 checkpoints). The other anchor's erase comes first
 * (erase_step_if), so a failing block of it is found early in the run.
 * Not a recovery's checkpoint: it switches at the switch slot, erasing the
 * other anchor whole (a mount is not a write call), so that a failing one
 * leaves the second half for its replacement. In a brown-out loop the other
 * anchor's erase began again in every session and none lived to record it,
 * each recovery took two slots, and the run reached its last slot with the
 * other anchor failing: mount IO for good (torture nor-w25q128-b4 seed
 * 241009, --aged 40 --kinds early,brownout,mount,unmount, in --regress). */
static uint32_t run_end(const cairn *fs)
{
    uint32_t other = fs->ckpt_blank_from[fs->ckpt_anchor ^ 1u];
    if (partial(fs, fs->ckpt_anchor) && other != 0 && other != CK_CLAIMED_ERASED &&
        other != CK_ERASED_BUT_FIRST && !fs->recovering)
        return slots_per_anchor(fs);
    return switch_slot(fs);
}

/* Block 0 of anchor a erased, the rest as ckpt_blank_from[a] says (claimed,
 * or CK_ERASED_BUT_FIRST): it takes checkpoints from slot 0. */
static int first_block_erased(cairn *fs, uint32_t a)
{
    uint32_t seg = fs->anchor[a];
    int err;
    fs->ckpt_blank_from[a] = CN_NONE; /* block 0 is not blank until erased */
    err = cn_seg_erase_first(fs, seg);
    if (err)
        return err;
    cn_dev_set_front(fs, seg, anchor_blocks(fs));
    fs->ckpt_blank_from[a] = 0;
    return 0;
}

/* Is every page of the slot, every copy, erased? (An unreadable page is not.)
 * Checked before a slot is programmed: a program over written bytes would
 * break NOR and NAND alike, and a slot can read as unwritten to the mount's
 * search yet hold bytes (a torn program, a hostile image). */
static int slot_blank(cairn *fs, uint32_t anchor, uint32_t slot, int *blank)
{
    uint32_t j, i, first = slot_page(fs, anchor, slot);
    *blank = 0;
    for (j = 0; j < slot_pages(fs); j++) {
        int err = cn_dev_read(fs, first + j, 0, fs->scratch2, fs->page_size);
        if (err == CAIRN_ERR_IO)
            return 0;
        if (err)
            return err;
        for (i = 0; i < fs->page_size; i++)
            if (fs->scratch2[i] != 0xFF)
                return 0;
    }
    *blank = 1;
    return 0;
}

/* Does every slot of the anchor read erased? */
static int anchor_blank(cairn *fs, uint32_t anchor, int *blank)
{
    uint32_t s;
    int err = 0;
    *blank = 1;
    for (s = 0; s < slots_per_anchor(fs) && *blank && !err; s++)
        err = slot_blank(fs, anchor, s, blank);
    return err;
}

/* The healthy anchor is full and the failing one's replacement R is ready
 * (erased in this session, named an anchor in the table): the checkpoint
 * that names R goes into R's first slot, in the failing anchor's place. Mount
 * still finds {healthy, failing} until the failing one's blocks are marked
 * bad right after that checkpoint lands (retire_failing_anchor); a cut in
 * between leaves the healthy anchor's newest checkpoint, which still names R
 * free and EVICT, as the newest found, and the replacement is made again.
 * Before, such a volume returned IO from every write and every recovery
 * mount for ever (torture nor-w25q128-b4 seed 103: a recovery's commits used
 * the healthy anchor's last slots before R was ready). */
static void into_replacement(cairn *fs, uint32_t failing)
{
    fs->anchor_old = fs->anchor[failing];
    if (partial(fs, failing))
        fs->ckpt_partial = 0; /* the replacement was erased whole */
    cn_seg_set_anchors(fs, failing == 0 ? fs->anchor_new : fs->anchor[0],
                       failing == 1 ? fs->anchor_new : fs->anchor[1]);
    fs->ckpt_blank_from[failing] = 0; /* erased in this session (anchor.c) */
}

/* NAND, a session's first checkpoint, the other anchor's erase just failed
 * and the replacement is erased (the standby, anchor.c): the checkpoint goes
 * into the replacement's slot 0, the one target no earlier attempt from the
 * same newest checkpoint can have torn. The current anchor's next slot was
 * the same for every attempt; one cut before its first byte and every later
 * mount's program there was refused (torture nand-4k seed 244092). */
static int into_standby(cairn *fs, uint32_t failing, uint32_t *anchor_out, uint32_t *slot_out)
{
    fs->ckpt_fresh = 0;
    into_replacement(fs, failing);
    *anchor_out = failing;
    *slot_out = 0;
    return 0;
}

static int erase_step(cairn *fs, uint32_t anchor);

/* NAND, an anchor of several erase blocks that the clean checkpoint says is
 * erased (CK_OTHER_ERASED: the last session finished erasing it before its
 * clean unmount, finish_erase): the session mark goes into its slot 0 after
 * only its first block is erased again. Slot 0 is the one page an earlier
 * attempt from the same clean checkpoint can have torn (the mark is the
 * first checkpoint of a session, and nothing else is written there before
 * it lands), so that erase is what makes the target new; the other blocks
 * stay as the claim says (each checkpoint is read back all the same). One
 * erase, where erasing the whole anchor made the first write after a mount
 * 44 x a normal one (first-write, 64 MiB of nand-jffs2) and broke "a write
 * call erases at most one block"; the mark in place, the one earlier
 * attempts took, was programmed twice (test_anchor clean boot loop,
 * nand-dhara in 4-block segments: 5 first writes of 29 failed with IO). The
 * other blocks: block_anchors. */
static int mark_first_block(cairn *fs, uint32_t other, uint32_t *anchor_out,
                            uint32_t *slot_out)
{
    int err;
    *anchor_out = other; /* a failed erase flags it failing: the caller retries */
    *slot_out = 0;
    err = first_block_erased(fs, other);
    if (!err)
        fs->ckpt_fresh = 0; /* (failed: the retry goes into the standby) */
    return err;
}

/* Where the next checkpoint goes: the first blank slot after the newest one in
 * the same anchor, until its switch point (or its end, when the other anchor
 * is failing); else slot 0 of the other anchor, erased first unless it was
 * erased in this session, or a checkpoint says so and it reads blank. The
 * anchor that holds the newest valid checkpoint is never erased (I3). */
static int next_slot(cairn *fs, uint32_t *anchor_out, uint32_t *slot_out)
{
    uint32_t cur = fs->ckpt_anchor, other = cur ^ 1u, limit, s;
    int err, blank, fresh = fs->ckpt_fresh && fs->ckpt_slot != CN_NONE &&
                            !anchor_failing(fs, other) && fs->anchor_new == CN_NONE;
    if (fs->ckpt_fresh && fs->ckpt_slot != CN_NONE && anchor_failing(fs, other) &&
        fs->anchor_new != CN_NONE && fs->anchor_old == CN_NONE)
        return into_standby(fs, other, anchor_out, slot_out);
    if (fresh && fs->ckpt_fresh == CK_FRESH_FIRST_BLOCK &&
        fs->ckpt_blank_from[other] == CK_CLAIMED_ERASED)
        return mark_first_block(fs, other, anchor_out, slot_out);
    if (fresh && fs->ckpt_fresh == CK_FRESH_WHOLE)
        fs->ckpt_blank_from[other] = CN_NONE; /* erased below, whatever it claims */
    else if (fresh)
        fs->ckpt_fresh = 0; /* as a switch: the rest of a tail_erase, block 0 */
    else if (fs->ckpt_slot != CN_NONE && !anchor_failing(fs, cur)) {
        limit = anchor_failing(fs, other) ? slots_per_anchor(fs) : run_end(fs);
        for (s = fs->ckpt_slot + 1u; s < limit; s++) {
            if (partial(fs, cur)) {
                *anchor_out = cur; /* a failed erase flags it failing: the caller retries */
                err = partial_extend(fs, cur, s);
                if (err)
                    return err;
            }
            blank = s >= fs->ckpt_blank_from[cur];
            err = blank ? 0 : slot_blank(fs, cur, s, &blank);
            if (err)
                return err;
            if (blank) {
                *anchor_out = cur;
                *slot_out = s;
                return 0;
            }
        }
    }
    if (fs->ckpt_slot == CN_NONE)
        other = cur; /* format: the first checkpoint goes to slot 0 of the anchor it chose */
    if (anchor_failing(fs, other) && fs->anchor_new != CN_NONE && fs->anchor_old == CN_NONE)
        into_replacement(fs, other);
    if (anchor_failing(fs, other)) {
        fs->ckpt_nowhere = 1;
        return CAIRN_ERR_IO; /* both anchors failed, or one failed and the other is full */
    }
    CN_ASSERT(fs->ckpt_slot == CN_NONE || other != fs->ckpt_anchor);
    *anchor_out = other;
    *slot_out = 0;
    while (fs->ckpt_blank_from[other] == CK_ERASING) { /* the blocks not erased yet */
        err = erase_step(fs, other);
        if (err)
            return err;
    }
    if (fs->ckpt_blank_from[other] == CK_ERASED_BUT_FIRST ||
        (block_anchors(fs) && fs->ckpt_blank_from[other] == CK_CLAIMED_ERASED))
        return first_block_erased(fs, other); /* the claim: block_anchors */
    if (fs->ckpt_blank_from[other] == 0)
        return 0; /* erased in this session and not written since */
    blank = 0;
    err = fs->ckpt_blank_from[other] == CK_CLAIMED_ERASED ? anchor_blank(fs, other, &blank) : 0;
    if (!err && !blank) {
        fs->ckpt_blank_from[other] = CN_NONE;
        err = cn_seg_erase_whole(fs, fs->anchor[other]);
    }
    if (!err) {
        fs->ckpt_blank_from[other] = 0;
        fs->ckpt_fresh = 0;
    }
    /* NAND, taken on a claim: slot 0 may hold a switch's program cut before
     * its first byte, which reads erased and may not be programmed again
     * (NOP; torture nand-dhara seed 10 got write IO): slot 1 */
    if (!err && blank && fs->dev->geo.medium == CAIRN_MEDIUM_NAND)
        *slot_out = 1;
    return err;
}

/* NAND: a session's first checkpoint goes into the other anchor, erased
 * first: a recovery's always, the session mark after a clean mount
 * (cn_begin_write) when an anchor is one erase block. The slot it would take
 * in the current anchor (one past the first blank slot, which a torn write
 * may leave reading blank) is the same for every attempt after the same
 * newest checkpoint, and an attempt cut at its first program may leave that
 * page reading blank, yet programmed once: the next attempt programmed it
 * again, and a NOP=1 chip refused (torture nand-dhara seed 8011, a
 * recovery: every later mount failed with IO; test_anchor's clean boot loop,
 * a session mark: that session's first write failed with IO, once). No read
 * tells such a page from an erased one, so only an erase makes a target no
 * earlier attempt can have torn. An anchor of one block is erased whole; of
 * several, only its first block where the newest checkpoint says the rest is
 * erased (mark_first_block: one erase, a recovery's too), or the blocks it
 * records as not erased yet, then the first (resume_tail_erase), else a
 * recovery erases it whole and a session mark stays in place (the next
 * session's first write may then fail once: the last session did not end
 * clean or could not erase the anchor it left behind). */
void cn_ckpt_first_of_session(cairn *fs, int recovery)
{
    uint32_t other = fs->ckpt_anchor ^ 1u;
    fs->ckpt_fresh = 0;
    if (fs->medium != CAIRN_MEDIUM_NAND || fs->read_only)
        return;
    if (block_anchors(fs) && (fs->ckpt_blank_from[other] == CK_CLAIMED_ERASED ||
                              fs->ckpt_blank_from[other] == CK_ERASING))
        fs->ckpt_fresh = CK_FRESH_FIRST_BLOCK; /* mark_first_block, or the rest of
                                                  a tail_erase first (next_slot) */
    else if (recovery || session_erases_anchor(fs))
        fs->ckpt_fresh = CK_FRESH_WHOLE;
}

/* The next erase block of an anchor being erased (CK_ERASING), in order;
 * after its last one the anchor is known blank (0). With block_anchors, the
 * next one down from its front (here: the highest not erased yet) to block
 * 1, after which it is CK_ERASED_BUT_FIRST: going down, a cut leaves its
 * checkpoints a prefix of its slots, as mount's search wants. A failed erase
 * flags the anchor failing (device.c) and returns IO. */
static int erase_step(cairn *fs, uint32_t anchor)
{
    uint32_t seg = fs->anchor[anchor], bpl = anchor_blocks(fs);
    int err;
    if (block_anchors(fs)) {
        uint32_t b = cn_dev_front(fs, seg);
        CN_ASSERT(fs->ckpt_blank_from[anchor] == CK_ERASING && b >= 1u && b < bpl);
        err = cn_dev_erase_block(fs, seg, b);
        if (!err)
            cn_dev_set_front(fs, seg, b - 1u);
        if (!err && b == 1u)
            fs->ckpt_blank_from[anchor] = CK_ERASED_BUT_FIRST;
        return err;
    }
    CN_ASSERT(fs->ckpt_blank_from[anchor] == CK_ERASING && cn_dev_front(fs, seg) < bpl);
    err = cn_dev_front(fs, seg) == 0 ? cn_seg_erase_first(fs, seg) : cn_dev_erase_next(fs, seg);
    if (!err && cn_dev_front(fs, seg) >= bpl)
        fs->ckpt_blank_from[anchor] = 0;
    return err;
}

/* Right after a switch, the anchor left behind starts being erased: it holds
 * only older checkpoints (the new one is durable, I3), and an anchor that
 * fails is found within a few calls, while the current one has all its
 * slots but a few to spend on the replacement (anchor.c), not at the switch
 * with only its spare half. Its erase blocks go one a call (cn_ckpt_erase_
 * step), not all in the call whose checkpoint switched: on 4 KiB-sector NOR
 * that call erased a whole anchor, 8 blocks of a 32 KiB segment (test_space
 * bounded at scale 20: 21 blocks erased by a call that programmed 12
 * blocks' worth). The checkpoint after the last block records the erase
 * (CK_OTHER_ERASED), so the switch back need not erase again. */
static void start_erase(cairn *fs, uint32_t anchor)
{
    fs->ckpt_blank_from[anchor] = CK_ERASING;
    cn_dev_set_front(fs, fs->anchor[anchor], 0);
}

/* block_anchors: the anchor left behind gets its blocks after the first
 * erased, down from `last` (the last block its checkpoints may have reached:
 * the one holding the slot after its newest, which a cut may have torn). */
static void tail_erase(cairn *fs, uint32_t anchor, uint32_t last)
{
    if (last >= anchor_blocks(fs))
        last = anchor_blocks(fs) - 1u;
    fs->ckpt_blank_from[anchor] = last == 0 ? CK_ERASED_BUT_FIRST : CK_ERASING;
    cn_dev_set_front(fs, fs->anchor[anchor], last);
}

/* The block of `anchor` holding its slot s. */
static uint32_t block_of_slot(const cairn *fs, uint32_t s)
{
    return s * slot_pages(fs) / fs->dev->geo.pages_per_block;
}

/* Is the anchor left behind being erased (and not failing)? */
static int other_erasing(const cairn *fs, uint32_t other)
{
    return fs->ckpt_blank_from[other] == CK_ERASING && !anchor_failing(fs, other);
}

/* Partial run: blocks its slots up to the run's end still need erased. */
static uint32_t partial_left(const cairn *fs)
{
    uint32_t cur = fs->ckpt_anchor, last, front;
    if (!partial(fs, cur) || fs->ckpt_slot == CN_NONE || run_end(fs) == 0u)
        return 0;
    last = slot_last_block(fs, run_end(fs) - 1u);
    front = cn_dev_front(fs, fs->anchor[cur]);
    return front <= last ? last + 1u - front : 0u;
}

/* How many blocks of the anchor left behind this checkpoint's call must
 * erase even if it erased already: the blocks left spread over the
 * checkpoints left before the switch, so that the switch finds the anchor
 * erased. 0 while there are more checkpoints left than blocks. At most
 * ceil(blocks / (slots before the switch)): 1 on 4 MiB of nor-w25q128 (21
 * slots, 8 blocks), 2 on 16 MiB (10, 16). Directory changes alone, whose
 * commits often open a journal block, put 3 anchor blocks in one call at the
 * switch (4 MiB) and 7 (16 MiB) without it (test_anchor).
 * Since session 18 it counts a partial run's blocks too, and the one a
 * checkpoint's own slot took in its call (partial_extend): the blocks left,
 * of the anchor left behind and of the run, spread over the checkpoints left
 * before the run's end. */
static uint32_t erase_due(const cairn *fs, uint32_t other)
{
    uint32_t to = cn_dev_front(fs, fs->anchor[other]);
    uint32_t left = !other_erasing(fs, other) ? 0u : block_anchors(fs) ? to : anchor_blocks(fs) - to;
    uint32_t until = run_end(fs) > fs->ckpt_slot + 1u ? run_end(fs) - fs->ckpt_slot - 1u : 0;
    left += partial_left(fs);
    return until < left ? (left + until) / (until + 1u) : 0;
}

/* A partial run (format left the other anchor as it was) starts erasing the
 * other anchor at its first checkpoint, as after a switch, but for its
 * first CK_PARTIAL_QUIET_DIV-th of slots the write calls between two
 * checkpoints take only the share of the blocks due (erase_due) that the
 * next checkpoint's call cannot take with one block (ckpt_call_steps), and
 * of the run's own blocks only the next slot's; the checkpoint takes the
 * rest of its share. bench fib (16 MiB nor-w25q128, one checkpoint in its
 * 1,000,000 writes): its first 22 write calls each erased an anchor block
 * (16 of anchor 1, 6 of the run), 990 ms of the run's 51.9 s, which no
 * checkpoint of the run needed; the first unmount erases them now
 * (finish_erase), or the eager steps after the quiet quarter. A failing
 * block is still found with three quarters of the run's slots left for the
 * replacement (anchor.c), more than the spare half after a switch. */
#define CK_PARTIAL_QUIET_DIV 4u
static int partial_quiet(const cairn *fs)
{
    return partial(fs, fs->ckpt_anchor) &&
           fs->ckpt_slot < slots_per_anchor(fs) / CK_PARTIAL_QUIET_DIV;
}

/* Partial run: blocks the next slot still needs erased (the one a write
 * call erases ahead of need; the rest come one a checkpoint, erase_due). */
static uint32_t partial_next_left(const cairn *fs)
{
    uint32_t cur = fs->ckpt_anchor, next = fs->ckpt_slot + 1u, last, front;
    if (partial_left(fs) == 0 || next >= run_end(fs))
        return 0;
    last = slot_last_block(fs, next);
    front = cn_dev_front(fs, fs->anchor[cur]);
    return front <= last ? last + 1u - front : 0u;
}

/* Erase blocks of the anchors ahead of need: of the anchor left behind by a
 * switch while its erase is under way (first: a failing block is found
 * early), then a partial run's next (at the end of a write call only the
 * next slot's). One when the current call has erased nothing yet, or as many
 * as a landed checkpoint has to (erase_due), less the block its own slot
 * took. 1: a block was erased, 0: nothing to do. An anchor whose erase
 * failed is left to its replacement (anchor.c): 1. */
static int erase_step_if(cairn *fs, int who)
{
    uint32_t other = fs->ckpt_anchor ^ 1u, cur = fs->ckpt_anchor, n,
             extended = fs->ckpt_extended;
    int err = 0;
    fs->ckpt_extended = 0;
    if (fs->read_only || fs->ckpt_slot == CN_NONE ||
        (!other_erasing(fs, other) && partial_left(fs) == 0))
        return 0;
    if (who == CK_STEP_CALL && partial_quiet(fs)) {
        CN_ASSERT(fs->call_erases == 0); /* cn_write_call_ends: the step below is taken */
        if (erase_due(fs, other) >= 2u + fs->ckpt_call_steps) {
            fs->ckpt_call_steps++; /* the share the next checkpoint cannot take */
        } else if (partial_next_left(fs) == 0) {
            return 0; /* the rest: one a checkpoint, or idle time */
        } else {
            err = cn_dev_erase_next(fs, fs->anchor[cur]);
            return err && !anchor_failing(fs, cur) ? err : 1;
        }
    }
    n = who == CK_STEP_LANDED ? erase_due(fs, other) : 0;
    if (who == CK_STEP_LANDED) { /* less what the calls since the last one took */
        n = n > fs->ckpt_call_steps ? n - fs->ckpt_call_steps : 0u;
        fs->ckpt_call_steps = 0;
    }
    if (who == CK_STEP_LANDED && extended > 0)
        n = n > extended ? n - extended : 0u;
    else if (n == 0 && fs->call_erases == 0)
        n = 1;
    for (; n > 0 && !err; n--) {
        if (other_erasing(fs, other))
            err = erase_step(fs, other);
        else if (partial_left(fs) > 0)
            err = cn_dev_erase_next(fs, fs->anchor[cur]);
    }
    if (err)
        return anchor_failing(fs, other) || anchor_failing(fs, cur) ? 1 : err;
    return 1;
}

int cn_ckpt_erase_step(cairn *fs, int idle)
{
    return erase_step_if(fs, idle ? CK_STEP_IDLE : CK_STEP_CALL);
}

/* A clean checkpoint ends the session (unmount): the erase of the anchor
 * left behind is finished first, so that the checkpoint records it
 * (CK_OTHER_ERASED). Begun again by the next session, which trusts no erase
 * it was not told of, it would erase the same first blocks in every short
 * session (a boot loop: mount, a write, unmount); before the erase went a
 * block a call, a switch's whole erase was recorded by the next checkpoint.
 * The unmount is not a write call: its length is not bounded to a block. */
static int finish_erase(cairn *fs)
{
    uint32_t other = fs->ckpt_anchor ^ 1u;
    int err = 0;
    if (fs->ckpt_slot == CN_NONE)
        return 0;
    /* NOR: an anchor no checkpoint says is erased and no erase of which is
     * under way (format left it as it was, "partial run") is erased whole
     * here, once: the clean checkpoint then claims it, so the next sessions'
     * light write calls take no steps of it (bench first-write: the normal
     * append after a remount took one, 45 ms against 1.3), and a failing
     * block of it is found at the first unmount, not near the switch */
    if (fs->medium == CAIRN_MEDIUM_NOR && fs->ckpt_blank_from[other] == CN_NONE &&
        !anchor_failing(fs, other) && fs->anchor_new == CN_NONE && !fs->read_only)
        start_erase(fs, other);
    while (!err && fs->ckpt_blank_from[other] == CK_ERASING && !anchor_failing(fs, other))
        err = erase_step(fs, other);
    if (anchor_failing(fs, other))
        err = 0;
    /* a partial run ends at the first clean unmount: its anchor's blocks past
     * the front are erased, so the clean checkpoint (in a slot after them or
     * before) need not say PARTIAL, and the next mount takes the anchor for
     * one erased whole before its run, as format used to leave it; else every
     * later session's light calls erased those blocks again (the mount knows
     * no front but the newest checkpoint's block) */
    if (!err && partial(fs, fs->ckpt_anchor) && !anchor_failing(fs, fs->ckpt_anchor)) {
        uint32_t seg = fs->anchor[fs->ckpt_anchor];
        while (!err && cn_dev_front(fs, seg) < anchor_blocks(fs))
            err = cn_dev_erase_next(fs, seg);
        if (!err)
            fs->ckpt_partial = 0;
        else if (anchor_failing(fs, fs->ckpt_anchor))
            err = 0; /* the checkpoint goes to the other anchor (write_checkpoint) */
    }
    return err;
}

static int ck_read(cairn *fs, uint32_t anchor, uint32_t slot, int load, uint32_t *seq_out,
                   uint32_t *flags_out);

static int program_slot(cairn *fs, uint32_t anchor, uint32_t slot, uint32_t flags,
                        uint32_t seq)
{
    uint32_t j, crc = ck_crc_of_state(fs, flags, seq);
    int err;
    for (j = 0; j < slot_pages(fs); j++) {
        ck_page(fs, j % fs->ckpt_pages, fs->scratch2, flags, seq);
        if (j % fs->ckpt_pages == 0)
            cn_put32(fs->scratch2 + CN_CK_O_CRC, crc);
        err = cn_dev_prog(fs, slot_page(fs, anchor, slot) + j, 0, fs->scratch2,
                          fs->page_size, NULL, 0);
        if (err)
            return err;
    }
    err = cn_dev_sync(fs);
    if (!err) { /* read back: a program into cells a cut erase left weak
                 * reports success and reads wrong (CK_CLAIMED_ERASED) */
        uint32_t rseq, rflags;
        err = ck_read(fs, anchor, slot, 0, &rseq, &rflags);
        if (!err && rseq != seq)
            err = CAIRN_ERR_CORRUPT;
        /* unreadable is wrong too: weak cells may read uncorrectable, and an
         * IO here ended every session's first write in IO (torture nand-dhara
         * seed 4, a claimed anchor erased by a cut erase) */
        if (err == CAIRN_ERR_IO)
            err = CAIRN_ERR_CORRUPT;
    }
    return err;
}

/* The anchors become {kept, fresh}: mount finds them so once the old one's
 * blocks are marked bad. `kept` holds the newest checkpoint. */
static void set_anchors(cairn *fs, uint32_t kept, uint32_t fresh, uint32_t kept_blank_from,
                        uint32_t fresh_blank_from)
{
    CN_ASSERT(kept < fresh);
    /* a partial run goes on only in the anchor that holds the newest */
    fs->ckpt_partial = fs->ckpt_partial != 0 && fs->anchor[fs->ckpt_partial - 1u] == kept ? 1u : 0u;
    cn_seg_set_anchors(fs, kept, fresh);
    fs->ckpt_anchor = 0;
    fs->ckpt_blank_from[0] = kept_blank_from;
    fs->ckpt_blank_from[1] = fresh_blank_from;
    fs->seg_base = fresh + 1u;
}

static void mark_blocks_bad(cairn *fs, uint32_t seg)
{
    struct cairn_dev *d = fs->dev;
    uint32_t bpl = fs->seg_pages / d->geo.pages_per_block, i;
    if (d->mark_bad != NULL && !fs->read_only)
        for (i = 0; i < bpl; i++)
            (void)d->mark_bad(d->ctx, seg * bpl + i); /* best effort: the table says BAD */
}

/* A checkpoint naming the replacement is durable in anchor `landed`: the
 * failing anchor's blocks are marked bad (anchor.c, step 3). It landed in
 * the healthy anchor, or in the replacement itself when the healthy one was
 * full (into_replacement): then the replacement holds the newest one. */
static void retire_failing_anchor(cairn *fs, uint32_t landed)
{
    uint32_t fresh = fs->anchor_new;
    if (fs->anchor_old != CN_NONE && fs->anchor[landed] == fresh) {
        uint32_t healthy = fs->anchor[landed ^ 1u];
        mark_blocks_bad(fs, fs->anchor_old);
        set_anchors(fs, healthy, fresh, CN_NONE, fs->ckpt_blank_from[landed]);
        fs->ckpt_anchor = 1; /* fresh > healthy: the replacement is after the anchors */
    } else {
        mark_blocks_bad(fs, fs->anchor[landed ^ 1u]);
        set_anchors(fs, fs->anchor[landed], fresh, fs->ckpt_blank_from[landed], 0);
    }
    fs->anchor_new = fs->anchor_old = CN_NONE;
}

/* block_anchors: how many blocks of the anchor other than `anchor` may hold
 * anything but erased bytes, from its first (the rest are erased), as far as
 * this session knows; 0: not known. At a switch the anchor left behind holds
 * its checkpoints up to ckpt_slot and a torn one after it at most (it was
 * erased but for its first block before its slot 0: first_block_erased, or
 * whole); while it is erased from the top down (tail_erase), the blocks up
 * to the one being erased; once erased but for its first block, one. A
 * checkpoint records it (CN_CK_F_OTHER_BLOCKS_SHIFT): no erase of a block
 * past it is under way until the next checkpoint, so a recovery need erase
 * only those blocks (cn_ckpt_load), not the whole anchor. */
static uint32_t other_blocks(const cairn *fs, uint32_t anchor)
{
    uint32_t known = fs->ckpt_blank_from[anchor ^ 1u], n = 0;
    if (!block_anchors(fs))
        return 0;
    if (anchor != fs->ckpt_anchor && fs->ckpt_slot != CN_NONE)
        n = block_of_slot(fs, fs->ckpt_slot + 1u) + 1u; /* a switch */
    else if (known == 0 || known == CK_CLAIMED_ERASED || known == CK_ERASED_BUT_FIRST)
        n = 1;
    else if (known == CK_ERASING)
        n = cn_dev_front(fs, fs->anchor[anchor ^ 1u]) + 1u;
    if (n >= anchor_blocks(fs) || n > CN_CK_F_OTHER_BLOCKS_MAX)
        n = 0; /* all of it: the same as not known */
    return n;
}

/* The flags of a checkpoint written into `anchor`. With block_anchors, a
 * switch away from an anchor whose checkpoints (and a torn one after them)
 * never left its first block claims it already: its other blocks were
 * erased before its first checkpoint, and tail_erase will have nothing to do.
 * Else the checkpoint records how many blocks of it a recovery must erase
 * (other_blocks): a recovery after a cut that came before a checkpoint with
 * the claim erased that anchor whole (8 blocks on nand-jffs2: 28.9 ms to
 * mount at the mount-scale scenario's 836 MB point). */
static uint32_t ck_flags(const cairn *fs, uint32_t anchor, int clean)
{
    uint32_t other = fs->ckpt_blank_from[anchor ^ 1u], n = other_blocks(fs, anchor);
    return (clean ? CK_CLEAN : 0u) | (n << CN_CK_F_OTHER_BLOCKS_SHIFT) |
           (partial(fs, anchor) ? CN_CK_F_PARTIAL : 0u) |
           (other == 0 || other == CK_CLAIMED_ERASED || other == CK_ERASED_BUT_FIRST || n == 1u
                ? CK_OTHER_ERASED
                : 0u);
}

/* The checkpoint is in (anchor, slot): it is the newest now. The other
 * anchor starts being erased unless it is known erased (in this session, or
 * by a checkpoint's claim) or already being erased: after a switch, and
 * again in a later session when a cut came before the checkpoint that would
 * record its erase, so that a failing anchor is found early (torture b4 seed
 * 9: found only at the switch, the spare half then went to torn recoveries:
 * mount IO). Each checkpoint takes the erase one block further, in a call
 * that has erased nothing yet; a clean one, which ends the session, neither
 * starts nor takes it further (finish_erase). Not where every session
 * erases the other anchor for its first checkpoint anyway
 * (session_erases_anchor), which finds a failing one as early. */
static int ck_landed(cairn *fs, uint32_t anchor, uint32_t slot, uint32_t seq, int clean)
{
    uint32_t other = anchor ^ 1u, known = fs->ckpt_blank_from[other];
    /* where the checkpoints stood before: a switch leaves them in `other` */
    uint32_t left_at = fs->ckpt_anchor == other ? fs->ckpt_slot : CN_NONE;
    int err;
    if (slot >= fs->ckpt_blank_from[anchor])
        fs->ckpt_blank_from[anchor] = slot + 1u;
    if (fs->ckpt_partial != 0 && !partial(fs, anchor))
        fs->ckpt_partial = 0; /* a switch ends the run: the anchor left behind is
                                 erased whole (start_erase) */
    fs->ckpt_nowhere = 0; /* a slot was found after all (a replacement) */
    fs->ckpt_anchor = anchor;
    fs->ckpt_slot = slot;
    fs->ckpt_seq = seq;
    fs->ckpt_mark_page = CN_NONE; /* a session mark goes on the newest one only */
    if (fs->recovering)
        fs->recovering = CN_RECOVERY_DURABLE;
    cn_anchor_landed(fs);
    if (fs->anchor_new != CN_NONE) {
        retire_failing_anchor(fs, anchor);
        return 0;
    }
    if (clean)
        return 0; /* the session ends: the next one erases it (finish_erase) */
    if (known != 0 && known != CK_CLAIMED_ERASED && known != CK_ERASING &&
        known != CK_ERASED_BUT_FIRST && !anchor_failing(fs, other) &&
        !session_erases_anchor(fs)) {
        if (!block_anchors(fs))
            start_erase(fs, other);
        else /* its checkpoints end at left_at, a torn one after it at most */
            tail_erase(fs, other,
                       left_at == CN_NONE ? anchor_blocks(fs) : block_of_slot(fs, left_at + 1u));
    }
    err = erase_step_if(fs, CK_STEP_LANDED);
    return err < 0 ? err : 0;
}

/* Programming (anchor, slot) failed with err: the slot is used up. Is there
 * another try? A slot that read back wrong never was a checkpoint (an anchor
 * switched into on a claim is erased at the retry); a failing anchor sends
 * the checkpoint to the other one; anything else (a cut) ends the write. */
static int ck_missed(cairn *fs, uint32_t anchor, uint32_t slot, int err)
{
    if (fs->ckpt_blank_from[anchor] <= slot)
        fs->ckpt_blank_from[anchor] = slot + 1u; /* not blank any more */
    if (anchor == fs->ckpt_anchor && fs->ckpt_slot != CN_NONE)
        /* a torn slot is never programmed again; after one that read back
         * wrong the rest of the anchor is not trusted either (the cells a cut
         * erase left weak may be all of a block): the other anchor is next */
        fs->ckpt_slot = err == CAIRN_ERR_CORRUPT ? slots_per_anchor(fs) - 1u : slot;
    else if (err == CAIRN_ERR_CORRUPT)
        fs->ckpt_blank_from[anchor] = CN_NONE;
    return err == CAIRN_ERR_CORRUPT || (err == CAIRN_ERR_IO && anchor_failing(fs, anchor));
}

/* Write the current state as the newest checkpoint. A program or erase that
 * fails in an anchor flags it failing (device.c) and the checkpoint goes to
 * the other anchor; the flag travels in the table, and the failing anchor is
 * replaced (anchor.c) before its partner fills up. Any other error (a power
 * cut) is returned as it is: the previous checkpoint stands. */
static int write_checkpoint(cairn *fs, int clean)
{
    uint32_t seq = fs->ckpt_seq + 1, tries, anchor = 0, slot = 0;
    int err = 0;
    for (tries = 0; tries < 4; tries++) {
        /* (again after a failure: the retry already flags the replacement) */
        err = cn_anchor_tend(fs);
        if (!err)
            err = next_slot(fs, &anchor, &slot);
        if (err) {
            if (err == CAIRN_ERR_IO && anchor_failing(fs, anchor))
                continue; /* the switch's erase failed: back to the other one */
            return err;
        }
        err = program_slot(fs, anchor, slot, ck_flags(fs, anchor, clean), seq);
        if (!err)
            return ck_landed(fs, anchor, slot, seq, clean);
        if (!ck_missed(fs, anchor, slot, err))
            return err;
    }
    return err;
}

/* block_anchors, at a clean unmount: the checkpoints reached past the first
 * block of the current anchor. The next session's mark goes into the other
 * anchor, and a recovery after a cut in that session into this one again,
 * which it must then erase up to the block after its newest checkpoint (5
 * blocks of 8 on nand-jffs2, test_anchor "recovery after a switch"): the
 * mount-scale scenario's mount after a cut took 14.7 ms where this anchor
 * held one block of checkpoints and 22.6 ms where it held four. So the
 * unmount moves the checkpoints over to the other anchor's first block
 * (leave_at_unmount) and erases this one behind them: what the next session
 * would have erased a block a call, and any recovery in it then erases one
 * block. Not worth it for an anchor whose checkpoints stayed in its first
 * block (short sessions): its switch claims it at once (ck_flags). */
static int leaves_at_unmount(const cairn *fs)
{
    uint32_t other = fs->ckpt_anchor ^ 1u, known = fs->ckpt_blank_from[other];
    return block_anchors(fs) && fs->ckpt_slot != CN_NONE &&
           block_of_slot(fs, fs->ckpt_slot + 1u) > 0 && fs->anchor_new == CN_NONE &&
           !anchor_failing(fs, other) && !anchor_failing(fs, fs->ckpt_anchor) &&
           (known == 0 || known == CK_CLAIMED_ERASED || known == CK_ERASED_BUT_FIRST);
}

/* The clean checkpoint into the other anchor's slot 0 (its first block
 * erased: next_slot), then the anchor left behind erased but for its first
 * block, last block first (the clean checkpoint that follows claims it). A
 * cut in between leaves that checkpoint the newest, clean, with the blocks
 * to erase recorded (other_blocks): the next session's mark erases them. */
static int leave_at_unmount(cairn *fs)
{
    uint32_t left = fs->ckpt_anchor, left_at = fs->ckpt_slot;
    int err;
    fs->ckpt_fresh = CK_FRESH_SWITCH;
    err = write_checkpoint(fs, 1);
    fs->ckpt_fresh = 0;
    if (err || fs->ckpt_anchor == left)
        return err;
    tail_erase(fs, left, block_of_slot(fs, left_at + 1u));
    return finish_erase(fs);
}

int cn_ckpt_write(cairn *fs, int clean)
{
    int err = clean ? finish_erase(fs) : 0;
    if (!err && clean && leaves_at_unmount(fs))
        err = leave_at_unmount(fs);
    return err ? err : write_checkpoint(fs, clean);
}

/* Read and verify one copy of a slot; on success the state is loaded into fs. */
static int ck_read_copy(cairn *fs, uint32_t first_page, int load, uint32_t *seq_out,
                        uint32_t *flags_out)
{
    uint32_t ps = fs->page_size, len = ck_len(fs), j, crc = 0, stored = 0, i, lo, hi;
    uint8_t *b = fs->scratch2;
    uint8_t ent[CN_CK_ENTRY]; /* entries may straddle pages */
    int err;
    if (load)
        cn_seg_load_begin(fs);
    for (j = 0; j < fs->ckpt_pages && j * ps < len; j++) {
        uint32_t n = len - j * ps < ps ? len - j * ps : ps;
        err = cn_dev_read(fs, first_page + j, 0, b, ps);
        if (err)
            return err;
        if (j == 0) {
            if (cn_get32(b + CN_CK_O_MAGIC) != CN_CK_MAGIC ||
                cn_get16(b + CN_CK_O_VERSION) < CN_CK_VERSION_OLDEST ||
                cn_get16(b + CN_CK_O_VERSION) > CN_CK_VERSION ||
                cn_get32(b + CN_CK_O_LENGTH) != len ||
                cn_get32(b + CN_CK_O_PAGE_SIZE) != fs->page_size ||
                cn_get32(b + CN_CK_O_SEG_PAGES) != fs->seg_pages ||
                cn_get32(b + CN_CK_O_SEG_COUNT) != fs->seg_count ||
                cn_get32(b + CN_CK_O_NODE_SIZE) != fs->node_size)
                return CAIRN_ERR_CORRUPT;
            stored = cn_get32(b + CN_CK_O_CRC);
            *seq_out = cn_get32(b + CN_CK_O_SEQ);
            *flags_out = b[CN_CK_O_FLAGS] | (b[CN_CK_O_SESSION] != 0xFF ? CK_BEGUN : 0u);
            cn_put32(b + CN_CK_O_CRC, 0);
            b[CN_CK_O_SESSION] = 0; /* outside the CRC */
            if (load) {
                uint32_t h;
                fs->root = cn_get32(b + CN_CK_O_ROOT);
                fs->height = cn_get32(b + CN_CK_O_HEIGHT);
                fs->next_id = cn_get32(b + CN_CK_O_NEXT_ID);
                fs->log.seg = cn_get32(b + CN_CK_O_LOG_SEG);
                fs->log.off = cn_get32(b + CN_CK_O_LOG_OFF);
                fs->log.seq = cn_get32(b + CN_CK_O_LOG_SEQ);
                fs->seg_clock = cn_get32(b + CN_CK_O_CLOCK);
                for (h = 0; h < CN_HEADS; h++) {
                    fs->head[h].seg = cn_get32(b + CN_CK_O_HEADS + h * 8);
                    fs->head[h].page = cn_get32(b + CN_CK_O_HEADS + 4 + h * 8);
                }
            }
        }
        if (load) {
            table_span(fs, j, &lo, &hi);
            for (i = lo; i < hi; i++) {
                ent[i % CN_CK_ENTRY] = b[CN_CK_HDR + i - j * ps];
                if (i % CN_CK_ENTRY == CN_CK_ENTRY - 1u &&
                    cn_seg_entry_in(fs, i / CN_CK_ENTRY, ent) != 0)
                    return CAIRN_ERR_CORRUPT;
            }
        }
        crc = cn_crc32(crc, b, n);
    }
    if (load)
        cn_seg_load_end(fs);
    return cn_crc_ok(stored, crc) ? 0 : CAIRN_ERR_CORRUPT;
}

/* A slot is good if either copy is. */
static int ck_read(cairn *fs, uint32_t anchor, uint32_t slot, int load, uint32_t *seq_out,
                   uint32_t *flags_out)
{
    uint32_t c;
    int err = CAIRN_ERR_CORRUPT;
    for (c = 0; c < fs->ckpt_copies && err; c++)
        err = ck_read_copy(fs, slot_page(fs, anchor, slot) + c * fs->ckpt_pages, load,
                           seq_out, flags_out);
    return err;
}

/* Has the slot been written? The header of its first copy is looked at:
 * the copies are programmed in order (program_slot), so a first copy that
 * reads blank was never programmed past its first bytes and the second one
 * not at all. An unreadable one counts as written (its second copy may
 * serve). Before, a blank first copy's second was read too: a clean mount of
 * an empty 1 GiB nand-jffs2 took 63 reads, 22 of them such second copies.
 * `seq_out` gets the header's seq when it is one this code reads, else is
 * left as it was (a hint only: nothing is trusted before its CRC). */
static int header_plausible(const uint8_t *h);
static int slot_written(cairn *fs, uint32_t anchor, uint32_t slot, int *written,
                        uint32_t *seq_out)
{
    uint8_t h[20];
    uint32_t i;
    int err = cn_dev_read(fs, slot_page(fs, anchor, slot), 0, h, sizeof h);
    *written = 1;
    if (err)
        return err == CAIRN_ERR_IO ? 0 : err;
    if (header_plausible(h))
        *seq_out = cn_get32(h + CN_CK_O_SEQ);
    for (i = 0; i < sizeof h; i++)
        if (h[i] != 0xFF)
            return 0;
    *written = 0;
    return 0;
}

/* Do the first bytes of a slot read as a checkpoint header of a version
 * this code reads? (Its CRC is not checked.) */
static int header_plausible(const uint8_t *h)
{
    uint32_t v = cn_get16(h + CN_CK_O_VERSION);
    return cn_get32(h + CN_CK_O_MAGIC) == CN_CK_MAGIC && v >= CN_CK_VERSION_OLDEST &&
           v <= CN_CK_VERSION;
}

/* Is the valid checkpoint (seq) found in slot s older than the anchor's run?
 * A run begins in slot 0, or 1 (NAND passes over a slot 0 a torn switch may
 * hold), and every checkpoint of it is newer than its first; a partial run
 * leaves an earlier volume's checkpoints after its own, whose seqs are all
 * below the volume's first (cn_ckpt_format_erase). So a valid slot 0 or 1
 * newer than the candidate says it is not of the run. Its header is looked at
 * first (one small read per mount); only a newer one is read whole. */
static int older_than_run(cairn *fs, uint32_t anchor, uint32_t s, uint32_t seq, int *older)
{
    uint8_t h[CN_CK_O_LENGTH];
    uint32_t f, fseq, fflags;
    int err;
    *older = 0;
    for (f = 0; f < 2u && f < s; f++) {
        err = cn_dev_read(fs, slot_page(fs, anchor, f), 0, h, sizeof h);
        if (err != 0 && err != CAIRN_ERR_IO)
            return err;
        if (err == CAIRN_ERR_IO || !header_plausible(h))
            continue;
        if ((int32_t)(cn_get32(h + CN_CK_O_SEQ) - seq) <= 0)
            return 0; /* the run's first is not newer */
        err = ck_read(fs, anchor, f, 0, &fseq, &fflags);
        if (err == 0) {
            *older = (int32_t)(fseq - seq) > 0;
            return 0;
        }
        if (err != CAIRN_ERR_CORRUPT && err != CAIRN_ERR_IO)
            return err;
    }
    return 0;
}

/* The end of an anchor's written slots. Slots are written in order and a
 * mount skips one slot (see cn_ckpt_load), so "slot i or slot i+1 written"
 * holds on a prefix of the slots: a binary search finds the first slot where
 * it does not (slots_per_anchor when it holds everywhere). `hint` gets the seq
 * of the highest slot the search saw a header in (CN_NONE: none). */
static int written_end(cairn *fs, uint32_t anchor, uint32_t *end_out, uint32_t *hint)
{
    uint32_t lo = 0, hi = slots_per_anchor(fs), top = 0;
    int err, w1, w2;
    *hint = CN_NONE;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2, seq = CN_NONE;
        err = slot_written(fs, anchor, mid, &w1, &seq);
        w2 = 0;
        if (!err && !w1 && mid + 1 < slots_per_anchor(fs))
            err = slot_written(fs, anchor, mid + 1, &w2, &seq);
        if (err)
            return err;
        if (seq != CN_NONE && mid + 1u >= top) {
            *hint = seq;
            top = mid + 1u;
        }
        if (w1 || w2)
            lo = mid + 1;
        else
            hi = mid;
    }
    *end_out = lo;
    return 0;
}

/* The header of slot s's first copy: *seq when it is one this code reads,
 * *state 0 for blank, 1 for a header, 2 for anything else, 3 unreadable. */
static int slot_header(cairn *fs, uint32_t anchor, uint32_t s, int *state, uint32_t *seq)
{
    uint8_t h[CN_CK_O_LENGTH];
    uint32_t i;
    int err = cn_dev_read(fs, slot_page(fs, anchor, s), 0, h, sizeof h);
    *state = 3;
    if (err)
        return err == CAIRN_ERR_IO ? 0 : err;
    *state = 2;
    for (i = 0; i < sizeof h && h[i] == 0xFF; i++)
        ;
    if (i == sizeof h)
        *state = 0;
    else if (header_plausible(h))
        *state = 1;
    *seq = cn_get32(h + CN_CK_O_SEQ);
    return 0;
}

/* Is seq `a` no newer than `b`, in the serial sense and as plain numbers? A
 * torn program only clears fewer bits than it meant to, so a torn header's
 * seq reads as a number at least the one it was meant to carry: both senses
 * are asked, so that such a header is never taken for an older one. Near
 * the end of the number space (a seq that wraps) nothing is taken as older. */
static int seq_not_newer(uint32_t a, uint32_t b)
{
    return b < 0xF0000000u && a <= b && (int32_t)(a - b) <= 0;
}

/* Can anchor `anchor` (slots written up to `end`) hold a checkpoint newer
 * than seq `than`, the newest valid one of the other anchor? A checkpoint
 * lands in an anchor only after the anchor was erased (or claimed erased by
 * a checkpoint), so a newer one means every written slot of the anchor came
 * after `than`: its lowest written slot (0, or 1: NAND passes over slot 0)
 * then carries a newer seq, valid or torn, or `than` itself: a checkpoint
 * whose program failed in one anchor is written again into the other with
 * the same seq, and the failed one may still read valid (torture nand-dhara
 * seed 245197: anchor 0's slot 5 and anchor 1's slot 0 both seq 133, 134
 * after it in anchor 1; skipping anchor 1 on "133, not newer" loaded 133 and
 * lost the data that 134 had moved out of the replacement erased since). A
 * lowest slot whose header says older than `than` (an earlier run, or an
 * earlier volume's) means the anchor was not erased since: nothing newer is
 * there. Anything else (both blank, unreadable, not a header) answers
 * "maybe". */
static int may_hold_newer(cairn *fs, uint32_t anchor, uint32_t end, uint32_t than, int *maybe)
{
    uint32_t s, seq = 0;
    int state = 0, err = 0;
    *maybe = end > 0;
    for (s = 0; s < 2u && s < end && state == 0 && !err; s++)
        err = slot_header(fs, anchor, s, &state, &seq);
    if (!err && state == 1 && seq != than && seq_not_newer(seq, than))
        *maybe = 0;
    return err;
}

/* Can slot s hold a checkpoint newer than seq `than`? Not when its first
 * copy's header reads as a checkpoint header of that seq or older (the
 * copies of a slot hold the same checkpoint), nor when it reads blank (the
 * copies are programmed in order). One that reads as no header at all can
 * only be valid in its second copy (NAND); an unreadable one is read whole
 * as before. On aged NOR, the other anchor's old bytes cost one small read
 * a slot this way, where each was read as a checkpoint's first page. */
static int slot_may_be_newer(cairn *fs, uint32_t anchor, uint32_t s, uint32_t than, int *maybe)
{
    uint32_t seq = 0;
    int state;
    int err = slot_header(fs, anchor, s, &state, &seq);
    if (err)
        return err;
    if (state == 1)
        *maybe = !seq_not_newer(seq, than);
    else
        *maybe = state == 3 || (state == 2 && fs->ckpt_copies > 1u);
    return 0;
}

/* Format's search (nothing loaded): may slot s hold a valid checkpoint? Not
 * unless one of its copies' headers reads as one (or cannot be read): a
 * small read a copy, so that an anchor of random bytes (an aged device) is
 * not read whole a slot at a time. */
static int slot_plausible(cairn *fs, uint32_t anchor, uint32_t s, int *maybe)
{
    uint8_t h[CN_CK_O_LENGTH];
    uint32_t c;
    int err;
    *maybe = 0;
    for (c = 0; c < fs->ckpt_copies && !*maybe; c++) {
        err = cn_dev_read(fs, slot_page(fs, anchor, s) + c * fs->ckpt_pages, 0, h, sizeof h);
        if (err != 0 && err != CAIRN_ERR_IO)
            return err;
        *maybe = err == CAIRN_ERR_IO || header_plausible(h);
    }
    return 0;
}

/* Last slot of an anchor before `end` holding a valid checkpoint (newer than
 * *newer_than when that is given), or CN_NONE. The search steps back over
 * torn slots, as many as there are: a device in a brown-out loop tears one
 * slot per boot (invariant I2). Slot `end` itself, when there is one, read
 * blank in the search (its first copy's header) and is not read again: that
 * was two page reads per anchor on NAND (both copies), one on NOR, at every
 * mount. Each candidate is read into the state as it is verified: when one is
 * found, the state is its; *tried counts the slots read whole. With
 * `newer_than`, an anchor whose lowest slot says it was not erased since is
 * not searched (may_hold_newer); otherwise a slot whose header says it is not
 * newer is passed over after that small read. */
static int last_valid(cairn *fs, uint32_t anchor, uint32_t end, const uint32_t *newer_than,
                      int load, uint32_t *slot_out, uint32_t *seq_out, uint32_t *flags_out,
                      uint32_t *tried)
{
    uint32_t s = end < slots_per_anchor(fs) ? end : slots_per_anchor(fs);
    int err;
    *slot_out = CN_NONE;
    *tried = 0;
    if (newer_than) {
        int maybe;
        err = may_hold_newer(fs, anchor, end, *newer_than, &maybe);
        if (err || !maybe)
            return err;
    }
    while (s > 0) {
        int older = 0, maybe = 1;
        s--;
        err = newer_than ? slot_may_be_newer(fs, anchor, s, *newer_than, &maybe)
                         : !load ? slot_plausible(fs, anchor, s, &maybe) : 0;
        if (err)
            return err;
        if (!maybe)
            continue;
        (*tried)++;
        err = ck_read(fs, anchor, s, load, seq_out, flags_out);
        if (err == 0)
            err = older_than_run(fs, anchor, s, *seq_out, &older);
        if (err == 0 && !older && (!newer_than || (int32_t)(*seq_out - *newer_than) > 0)) {
            *slot_out = s;
            return 0;
        }
        if (err != 0 && err != CAIRN_ERR_CORRUPT && err != CAIRN_ERR_IO)
            return err;
    }
    return 0;
}

/* The table names the anchors. When it names one of the two found as bad and
 * a later segment as the replacement, a cut came between the checkpoint that
 * made the replacement and the marking of the failing anchor's blocks
 * (anchor.c, step 3): finish it. Anything else is left to the mount's
 * consistency check. */
static void adopt_anchors(cairn *fs)
{
    uint32_t a, s, fresh = CN_NONE, kept = fs->ckpt_anchor;
    if (fs->segs[fs->anchor[0]].state == CN_SEG_ANCHOR &&
        fs->segs[fs->anchor[1]].state == CN_SEG_ANCHOR)
        return;
    a = kept ^ 1u;
    if (fs->segs[fs->anchor[kept]].state != CN_SEG_ANCHOR ||
        fs->segs[fs->anchor[a]].state != CN_SEG_BAD)
        return;
    for (s = fs->seg_base; s < fs->seg_count; s++) {
        if (fs->segs[s].state == CN_SEG_ANCHOR && fresh == CN_NONE)
            fresh = s;
        else if (fs->segs[s].state == CN_SEG_ANCHOR)
            return; /* two replacements: not a state cairn writes */
        else if (fresh == CN_NONE && fs->segs[s].state != CN_SEG_BAD)
            return; /* the replacement is the first good segment after the anchors */
    }
    if (fresh == CN_NONE)
        return;
    mark_blocks_bad(fs, fs->anchor[a]);
    set_anchors(fs, fs->anchor[kept], fresh, CN_NONE, CN_NONE);
}

/* The newest checkpoint says anchor a's blocks from n on are erased
 * (other_blocks): the session goes on erasing the ones before, from the top
 * down, as if it had left them behind itself (tail_erase), and a recovery
 * erases them before its first checkpoint goes into slot 0 (next_slot),
 * instead of the whole anchor. A value that is not a block of the anchor
 * past its first is not trusted (n = 1 comes with the claim itself). */
static void resume_tail_erase(cairn *fs, uint32_t a, uint32_t n)
{
    if (!block_anchors(fs) || n < 2u || n >= anchor_blocks(fs))
        return;
    tail_erase(fs, a, n - 1u);
}

/* Which anchor to search first: the one whose written slots end in the
 * newer header. A guess (headers are not checked yet); a wrong one costs the
 * other anchor's checkpoint read whole too. */
static uint32_t likely_newer(const uint32_t hint[2])
{
    if (hint[1] == CN_NONE)
        return 0;
    if (hint[0] == CN_NONE)
        return 1;
    return (int32_t)(hint[1] - hint[0]) > 0 ? 1u : 0u;
}

/* The newest valid checkpoint of the two anchors, read into the state. The
 * likely winner is searched first; in the other anchor only a slot whose
 * header says it is newer is read whole. Before (session 23), each anchor's
 * newest checkpoint was verified and the winner's read again: a clean mount
 * of 1 GiB nand-jffs2 read 21 checkpoint pages and 4 blank slots' pages, now
 * 7 (DESIGN.md "Mount"). */
int cn_ckpt_load(cairn *fs)
{
    uint32_t slot[2], seq[2], flags[2], blank[2], hint[2], tried[2], a, best, other;
    int err, clean;
    fs->ckpt_mark_page = CN_NONE;
    for (a = 0; a < 2; a++) {
        err = written_end(fs, a, &blank[a], &hint[a]);
        if (err)
            return err;
    }
    best = likely_newer(hint);
    other = best ^ 1u;
    err = last_valid(fs, best, blank[best], NULL, 1, &slot[best], &seq[best], &flags[best],
                     &tried[best]);
    if (!err)
        err = last_valid(fs, other, blank[other], slot[best] != CN_NONE ? &seq[best] : NULL, 1,
                         &slot[other], &seq[other], &flags[other], &tried[other]);
    if (err)
        return err;
    if (slot[other] != CN_NONE)
        best = other; /* newer, and read into the state last */
    else if (slot[best] == CN_NONE)
        return CAIRN_ERR_CORRUPT;
    else if (tried[other] > 0) /* slots read into the state in vain */
        err = ck_read(fs, best, slot[best], 1, &seq[best], &flags[best]);
    if (err)
        return err;
    fs->ckpt_anchor = best;
    /* The first blank slot may hold a torn write that reads blank: the next
     * checkpoint goes one further (ckpt_write adds one to ckpt_slot). */
    fs->ckpt_slot = blank[best];
    fs->ckpt_seq = seq[best];
    if (flags[best] & CK_OTHER_ERASED)
        fs->ckpt_blank_from[best ^ 1u] = CK_CLAIMED_ERASED;
    else
        resume_tail_erase(fs, best ^ 1u, (flags[best] & 0xFFu) >> CN_CK_F_OTHER_BLOCKS_SHIFT);
    clean = (flags[best] & CK_CLEAN) && !(flags[best] & CK_BEGUN);
    if (clean && fs->medium == CAIRN_MEDIUM_NOR)
        fs->ckpt_mark_page = slot_page(fs, best, slot[best]); /* before adopt_anchors
                                                                 renumbers the anchors */
    fs->ckpt_partial = 0;
    if ((flags[best] & CN_CK_F_PARTIAL) && fs->medium == CAIRN_MEDIUM_NOR &&
        anchor_blocks(fs) > 1u) {
        /* the slot after the newest may be torn; past the block holding its
         * last page nothing of the run is erased (partial_extend) */
        fs->ckpt_partial = (uint8_t)(best + 1u);
        fs->ckpt_slot = slot[best] + 1u;
    }
    adopt_anchors(fs);
    for (a = 0; a < 2; a++) /* cn_seg_mark_erased leaves the anchors to this */
        if (fs->ckpt_blank_from[a] != CK_ERASING)
            cn_dev_set_front(fs, fs->anchor[a],
                             partial(fs, a) ? slot_last_block(fs, slot[best]) + 1u
                                            : anchor_blocks(fs));
    return clean;
}

/* NOR: a session's first change programs the session byte of the clean
 * checkpoint the mount loaded to 0x00 (one byte program instead of a whole
 * checkpoint: 7 pages on 4 MiB of nor-w25q128), so a mount after a cut in
 * this session sees that checkpoint as not clean and replays the journal that
 * follows it. The byte read 0xFF at mount (I4: read blank first), and all
 * zeros is the one value a program cut part-way and programmed again cannot
 * corrupt (NOR bits only go 1 -> 0): any other value read means "begun" too.
 * Read back: a byte that still reads 0xFF was not programmed. */
static int mark_session(cairn *fs)
{
    uint32_t page = fs->ckpt_mark_page;
    uint8_t zero = 0, got = 0xFF;
    int err;
    fs->ckpt_mark_page = CN_NONE;
    err = cn_dev_prog(fs, page, CN_CK_O_SESSION, &zero, 1, NULL, 0);
    if (!err)
        err = cn_dev_sync(fs);
    if (!err)
        err = cn_dev_read(fs, page, CN_CK_O_SESSION, &got, 1);
    if (!err && got == 0xFF)
        err = CAIRN_ERR_CORRUPT;
    return err;
}

/* After a clean mount, before the first change: make the session durable as
 * unclean, so that a cut later in it is recovered (the heads' and journal's
 * next pages may then be half written, and nothing is programmed over them).
 * NOR marks the loaded checkpoint's session byte; NAND and BLOCK (no second
 * program into a page) write a checkpoint without the clean flag, as NOR does
 * when the mark fails (its anchor failing, or the byte reading back blank).
 * Every state-changing entry point calls this first. */
int cn_begin_write(cairn *fs)
{
    if (!fs->session_pending)
        return 0;
    fs->session_pending = 0;
    if (fs->ckpt_mark_page != CN_NONE) {
        uint32_t anchor = fs->ckpt_anchor;
        int err = mark_session(fs);
        if (!err || (err == CAIRN_ERR_IO && !anchor_failing(fs, anchor)))
            return err; /* marked, or a power cut */
    }
    return cn_ckpt_write(fs, 0);
}

/* Format (and fs.c, for the layout before session 34): the pages of the
 * slot holding the checkpoint a mount would load now, the newest valid one
 * (verified, nothing loaded), or CN_NONE in both when there is none. A cut
 * format must leave that checkpoint or none: an older one may name segments
 * erased since it was written (I12), and its journal does not reach the
 * state the volume was left in (test_anchor "format cut": a long session's
 * switch, the new anchor's first block erased by format, the other anchor's
 * older run loaded, its files of the wrong generation or a mount refused
 * with NOSPC). So format erases it last (erase_newest_last). */
int cn_ckpt_newest(cairn *fs, uint32_t *first_page, uint32_t *last_page)
{
    uint32_t slot[2], seq[2], flags[2], end, hint, tried, a, best;
    int err, run0, run1 = 0;
    *first_page = *last_page = CN_NONE;
    for (a = 0; a < 2; a++) {
        /* a run begins in slot 0 or 1 (I14): an anchor where neither reads
         * as a checkpoint is not searched (four small reads on random bytes) */
        slot[a] = CN_NONE;
        err = slot_plausible(fs, a, 0, &run0);
        if (!err && !run0)
            err = slot_plausible(fs, a, 1, &run1);
        if (err)
            return err;
        if (!run0 && !run1)
            continue;
        err = written_end(fs, a, &end, &hint);
        if (!err)
            err = last_valid(fs, a, end, NULL, 0, &slot[a], &seq[a], &flags[a], &tried);
        if (err)
            return err;
    }
    if (slot[0] == CN_NONE && slot[1] == CN_NONE)
        return 0;
    best = slot[0] == CN_NONE || (slot[1] != CN_NONE && (int32_t)(seq[1] - seq[0]) > 0);
    *first_page = slot_page(fs, best, slot[best]);
    *last_page = *first_page + slot_pages(fs) - 1u;
    return 0;
}

/* The anchor (0 or 1) holding a page, 2 for neither. */
static uint32_t anchor_of_page(const cairn *fs, uint32_t page)
{
    uint32_t a;
    for (a = 0; a < 2u && page / fs->seg_pages != fs->anchor[a]; a++)
        ;
    return a;
}

/* Format: anchor a erased whole, the blocks of the slot [first, last] (the
 * newest checkpoint, cn_ckpt_newest) last: first the blocks past it, which
 * may hold an earlier volume's checkpoints that only the run's slot 0 or 1
 * rules out (older_than_run), then the run's blocks before it, from the
 * first up (a cut leaves a blank start and the newest, which a mount finds
 * or finds nothing), then its own. */
static int erase_newest_last(cairn *fs, uint32_t a, uint32_t first, uint32_t last)
{
    uint32_t seg = fs->anchor[a], ppb = fs->dev->geo.pages_per_block, n = anchor_blocks(fs);
    uint32_t lo = first / ppb - seg * n, hi = last / ppb - seg * n, i;
    int err = 0;
    if (n == 1u || anchor_of_page(fs, first) != a)
        return cn_seg_erase_whole(fs, seg);
    cn_seg_count_erase(fs, seg);
    for (i = hi + 1u; i < n && !err; i++)
        err = cn_dev_erase_block(fs, seg, i);
    for (i = 0; i < lo && !err; i++)
        err = cn_dev_erase_block(fs, seg, i);
    for (i = lo; i <= hi && !err; i++)
        err = cn_dev_erase_block(fs, seg, i);
    if (!err)
        cn_dev_set_front(fs, seg, n);
    return err;
}

/* Format, NOR: the lowest and highest seq of the slot headers in both
 * anchors (whatever their CRC: a torn header counts too). An unreadable
 * header, whose seq cannot be known, makes *found 2. */
static int prior_seqs(cairn *fs, int *found, uint32_t *lo, uint32_t *hi)
{
    uint8_t h[CN_CK_O_LENGTH];
    uint32_t a, s, q;
    *found = 0;
    *lo = *hi = 0;
    for (a = 0; a < 2; a++)
        for (s = 0; s < slots_per_anchor(fs); s++) {
            int err = cn_dev_read(fs, slot_page(fs, a, s), 0, h, sizeof h);
            if (err == CAIRN_ERR_IO) {
                *found = 2;
                return 0;
            }
            if (err)
                return err;
            if (!header_plausible(h))
                continue;
            q = cn_get32(h + CN_CK_O_SEQ);
            if (*found == 0 || q < *lo)
                *lo = q;
            if (*found == 0 || q > *hi)
                *hi = q;
            *found = 1;
        }
    return 0;
}

/* Format: make the anchors ready for the first checkpoint. On NOR only the
 * blocks of one anchor's slot 0 are erased (the whole anchor when it is one
 * block, else a partial run), and the other is left as it is: the first
 * session that writes erases it a block a call (ck_landed), so it is erased
 * by the switch. What an earlier volume left in either is older than this
 * one: the seq starts above every slot header found there (and the mount
 * passes over older checkpoints in a run, older_than_run; the other anchor's
 * newest loses to this one's). Headers whose seqs span a quarter of the
 * serial space, or one that cannot be read, and NAND (whose session marks
 * rely on the claim that the other anchor is erased) get both anchors
 * erased whole, as before, and seq 1. The run goes into the anchor without
 * the earlier volume's newest checkpoint, and that one is erased last
 * (cn_ckpt_newest): until this volume's checkpoint lands, a cut leaves the
 * earlier volume as it was, or nothing. A failed erase flags its anchor
 * failing (fs.c retires it and finds the anchors again). */
int cn_ckpt_format_erase(cairn *fs)
{
    uint32_t lo, hi, first, last, run;
    int found = 2, err;
    fs->ckpt_partial = 0;
    fs->ckpt_seq = 0;
    fs->ckpt_blank_from[0] = 0;
    fs->ckpt_blank_from[1] = 0;
    fs->segs[fs->anchor[0]].state = CN_SEG_ANCHOR; /* their fronts are not stale */
    fs->segs[fs->anchor[1]].state = CN_SEG_ANCHOR;
    err = cn_ckpt_newest(fs, &first, &last);
    if (err)
        return err;
    run = anchor_of_page(fs, first) == 0u ? 1u : 0u;
    fs->ckpt_anchor = run;
    if (fs->medium == CAIRN_MEDIUM_NOR)
        err = prior_seqs(fs, &found, &lo, &hi);
    if (err)
        return err;
    if (found == 2 || (found == 1 && hi - lo >= 0x40000000u)) {
        err = cn_seg_erase_whole(fs, fs->anchor[run]);
        return err ? err : erase_newest_last(fs, run ^ 1u, first, last);
    }
    fs->ckpt_seq = found ? hi : 0u;
    fs->ckpt_blank_from[run ^ 1u] = CN_NONE; /* not erased: ck_landed starts it */
    if (anchor_blocks(fs) == 1u)
        return cn_seg_erase_whole(fs, fs->anchor[run]);
    fs->ckpt_partial = (uint8_t)(run + 1u);
    err = cn_seg_erase_first(fs, fs->anchor[run]);
    if (!err)
        err = partial_extend(fs, run, 0);
    fs->ckpt_extended = 0; /* format's own: no checkpoint's step */
    return err;
}

/* The first checkpoint, into slot 0 of the anchor cn_ckpt_format_erase made
 * ready (it chose the anchor and the seq it continues). */
int cn_ckpt_format(cairn *fs)
{
    fs->ckpt_slot = CN_NONE;
    return cn_ckpt_write(fs, 1);
}
