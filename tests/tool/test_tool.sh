#!/bin/sh
# Tests of the command-line tool (tools/cairn, docs/TOOL.md): every
# subcommand with its output and exit code, build -> extract round trips,
# deterministic builds, geometry detection without flags (NOR, NAND with OOB,
# SD) and at an offset inside a bigger file, fsck on damaged images.
#
# usage: test_tool.sh CAIRN WORKDIR [TOOL_FIXTURE [ONDISK_PY]]
# (tool_fixture makes images left by a power cut and a simulator image;
# ONDISK_PY, python/cairn/ondisk.py, is the Python decoder that `cairn dump`
# is compared with when python3 is there)
# Prints "ok: ..." / "FAIL: ..." per check and "test_tool: N passed, M failed";
# exits 1 on any failure.
set -u
CAIRN=$1
W=$2
FIXTURE=${3:-}
ONDISK=${4:-}
case $CAIRN in /*) ;; *) CAIRN=$(pwd)/$CAIRN ;; esac
case $FIXTURE in /* | "") ;; *) FIXTURE=$(pwd)/$FIXTURE ;; esac
case $ONDISK in /* | "") ;; *) ONDISK=$(pwd)/$ONDISK ;; esac
PYTHON=$(command -v python3 || true)
LC_ALL=C
export LC_ALL
# a sanitizer report must not pass for "problems found" (exit 1)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"
export ASAN_OPTIONS UBSAN_OPTIONS

rm -rf "$W"
mkdir -p "$W" || exit 1
cd "$W" || exit 1

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $1"; }
bad() {
    failed=$((failed + 1))
    echo "FAIL: $1"
    if [ -s out.txt ]; then echo "  stdout:"; head -20 out.txt | sed 's/^/    /'; fi
    if [ -s err.txt ]; then echo "  stderr:"; head -20 err.txt | sed 's/^/    /'; fi
}
# run ARGS...: runs the tool; rc, out.txt, err.txt
run() { "$CAIRN" "$@" >out.txt 2>err.txt; rc=$?; }
# expect DESC RC: the last run exited with RC and left no sanitizer report
expect() {
    if [ "$rc" -eq "$2" ] && ! grep -q Sanitizer err.txt; then ok "$1"; else bad "$1 (exit $rc, want $2)"; fi
}
# expect_out DESC RC PATTERN: ... and stdout has a line matching PATTERN
expect_out() {
    if [ "$rc" -eq "$2" ] && grep -q -- "$3" out.txt && ! grep -q Sanitizer err.txt; then
        ok "$1"
    else
        bad "$1 (exit $rc, want $2 and /$3/ in stdout)"
    fi
}
# expect_err DESC RC PATTERN: ... and stderr has PATTERN
expect_err() {
    if [ "$rc" -eq "$2" ] && grep -q -- "$3" err.txt && ! grep -q Sanitizer err.txt; then
        ok "$1"
    else
        bad "$1 (exit $rc, want $2 and /$3/ in stderr)"
    fi
}
check() {
    desc=$1
    shift
    if "$@"; then ok "$desc"; else bad "$desc"; fi
}
filesize() { wc -c <"$1" | tr -d ' '; }
# poke FILE OFFSET STRING: overwrites bytes in place
poke() { printf '%s' "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null; }

# ---- help, usage, exit codes ----
for c in mkfs build ls cat get put rm mkdir mv extract fsck info dump; do
    run "$c" --help
    expect_out "$c --help" 0 "^usage: cairn $c"
    run help "$c"
    expect_out "help $c" 0 "^usage: cairn $c"
done
run --help
expect_out "--help lists the commands" 0 "cairn extract IMAGE DIR"
grep -q "Exit codes: 0 ok, 1 problems found" out.txt && ok "--help states the exit codes" || bad "--help states the exit codes"
run --version
expect_out "--version" 0 "on-disk format"
run
expect "no command: exit 2" 2
run frobnicate
expect_err "unknown command: exit 2" 2 "unknown command"
run ls -z x.img
expect_err "unknown option: exit 2" 2 "unknown option"
run ls -p x.img
expect_err "an option of another command: exit 2" 2 "not for ls"

# ---- the tree: deep paths, empty files, 255-byte names, binary data ----
N255=$(printf '%0255d' 0 | tr 0 n)
D255=$(printf '%0255d' 0 | tr 0 d)
mkdir -p src/empty_dir src/"$D255"
deep=src/deep
i=0
while [ $i -lt 40 ]; do deep=$deep/level$i; i=$((i + 1)); done
mkdir -p "$deep"
echo "at the bottom" >"$deep/file.txt"
: >src/empty
: >"$deep/empty"
echo "long name" >"src/$N255"
echo "long dir" >"src/$D255/$N255"
echo "spaces" >"src/with space"
echo "dash" >"src/-dash"
printf 'caf\303\251' >"src/utf8-caf$(printf '\303\251')"
i=0
while [ $i -lt 256 ]; do printf "\\$(printf %03o $i)"; i=$((i + 1)); done >src/allbytes
head -c 70000 /dev/urandom >src/random70k
head -c 130000 /dev/urandom >src/deep/random130k
head -c 256 /dev/urandom >src/one_page
check "the test tree was made" test -s src/allbytes -a "$(filesize src/allbytes)" -eq 256

# expected ls -R listing of a host tree (dirs end in /)
host_list() {
    (cd "$1" && { find . ! -name . -type d | sed 's|$|/|'; find . ! -name . -type f; }) |
        sed 's|^\./||' | sort
}
host_list src >expect_list.txt

# ---- per geometry: build, determinism, detection, round trip, fsck, info, dump ----
# geometry NAME IMAGE_BYTES MEDIUM PAGE_LINE FLAGS...
geometry() {
    name=$1
    bytes=$2
    medium=$3
    pageline=$4
    shift 4
    img=$name.img

    run build src -o "$img" "$@"
    expect_out "$name: build" 0 "^$img: 1[0-9] files"
    check "$name: build prints no progress bar when stderr is not a terminal" test ! -s err.txt
    check "$name: image is exactly the flash bytes ($bytes)" test "$(filesize "$img")" -eq "$bytes"
    run build src -o "$name.again.img" "$@"
    check "$name: building twice gives the same bytes" cmp -s "$img" "$name.again.img"
    rm -f "$name.again.img"
    cp "$img" "$name.fresh.img"

    # everything below opens the image with no geometry flags
    run info "$img"
    expect_out "$name: info detects the medium" 0 "^medium: *$medium\$"
    expect_out "$name: info detects the page" 0 "^page: *$pageline"
    for field in "^segment: " "^total: " "^used: " "^free: " "^files: *1[0-9] files" \
        "^wear histogram" "^bad blocks: " "^last checkpoint: seq [0-9]* .*clean"; do
        expect_out "$name: info shows /$field/" 0 "$field"
    done
    run dump "$img"
    expect_out "$name: dump decodes the checkpoint magic" 0 "^magic *CRN1"
    expect_out "$name: dump decodes the version" 0 "^version *5$"
    expect_out "$name: dump decodes the segment table" 0 "^ *1 anchor"
    expect_out "$name: dump decodes the heads" 0 "^head meta"

    run ls -R "$img"
    sed 's|^\./||' out.txt | sort >got_list.txt
    check "$name: ls -R lists the tree" cmp -s expect_list.txt got_list.txt
    run ls -l "$img"
    expect_out "$name: ls -l shows sizes" 0 "^-      70000  random70k$"
    expect_out "$name: ls -l shows directories" 0 "^d          0  deep/$"
    run ls "$img" deep
    expect_out "$name: ls of a subdirectory" 0 "^random130k$"
    run ls "$img" /missing
    expect_err "$name: ls of a missing path: exit 2" 2 "no such file"

    rm -rf out
    run extract "$img" out
    expect "$name: extract" 0
    check "$name: build -> extract round-trips the tree (diff -r)" diff -r src out

    run fsck "$img"
    expect_out "$name: fsck of a good image: exit 0" 0 "clean"

    run cat "$img" "deep/level0/level1/level2/level3/level4/level5/level6/level7/level8/level9/level10/level11/level12/level13/level14/level15/level16/level17/level18/level19/level20/level21/level22/level23/level24/level25/level26/level27/level28/level29/level30/level31/level32/level33/level34/level35/level36/level37/level38/level39/file.txt"
    expect_out "$name: cat of a deep path" 0 "^at the bottom$"
    run cat "$img" allbytes
    check "$name: cat of binary data" cmp -s out.txt src/allbytes

    # changes on the image
    run mkdir "$img" /new
    expect "$name: mkdir" 0
    run mkdir "$img" /new
    expect_err "$name: mkdir of an existing directory: exit 2" 2 "exists"
    run mkdir -p "$img" /p/q/r
    expect "$name: mkdir -p" 0
    run mkdir -p "$img" /p/q
    expect "$name: mkdir -p of an existing directory" 0
    run put "$img" src/random70k /new/r70
    expect "$name: put a file" 0
    run get "$img" /new/r70 got.bin
    check "$name: get gives the file back" cmp -s got.bin src/random70k
    run get "$img" /new/r70 -
    check "$name: get to stdout" cmp -s out.txt src/random70k
    printf 'from stdin' | "$CAIRN" put "$img" - /p/q/r/stdin.txt >out.txt 2>err.txt
    rc=$?
    expect "$name: put from stdin" 0
    run cat "$img" /p/q/r/stdin.txt
    expect_out "$name: cat what came from stdin" 0 "^from stdin$"
    run put "$img" src/one_page /new
    expect "$name: put into an existing directory" 0
    run ls "$img" /new
    expect_out "$name: put into a directory keeps the name" 0 "^one_page$"
    # a trailing '/' says "a directory" (cp, mv): before session 39 the tool
    # dropped it and `put f /nodir/` made a file /nodir
    run put "$img" src/one_page /nodir/
    expect_err "$name: put to a missing directory 'name/': exit 2" 2 "is a directory"
    run ls "$img" /nodir
    expect_err "$name: ... and nothing made" 2 "no such file"
    run put "$img" src/one_page /new/
    expect "$name: put into an existing directory 'name/'" 0
    run mv "$img" /new/one_page/ /elsewhere
    expect_err "$name: mv of a file named 'name/': exit 2" 2 "not a directory"
    for c in cat ls rm; do
        run $c "$img" /new/one_page/
        expect_err "$name: $c of a file named 'name/': exit 2" 2 "not a directory"
    done
    run cat "$img" /new/one_page
    expect "$name: ... and the file is still there" 0
    run put "$img" src/deep /deepcopy
    expect "$name: put a directory recursively" 0
    rm -rf got_dir
    run get "$img" /deepcopy got_dir
    expect "$name: get a directory recursively" 0
    check "$name: put/get of a directory round-trips" diff -r src/deep got_dir
    run mv "$img" /new/r70 /moved
    expect "$name: mv" 0
    run cat "$img" /moved
    check "$name: mv keeps the content" cmp -s out.txt src/random70k
    run ls "$img" /new
    if grep -q '^r70$' out.txt; then bad "$name: mv removes the old name"; else ok "$name: mv removes the old name"; fi
    run mv "$img" /moved /p
    expect "$name: mv into a directory" 0
    run cat "$img" /p/moved
    check "$name: mv into a directory keeps the name" cmp -s out.txt src/random70k
    run rm "$img" /p
    expect_err "$name: rm of a non-empty directory: exit 2" 2 "not empty"
    run rm "$img" /p/moved
    expect "$name: rm of a file" 0
    run cat "$img" /p/moved
    expect_err "$name: cat of a removed file: exit 2" 2 "no such file"
    run rm -r "$img" /p /deepcopy
    expect "$name: rm -r" 0
    run rm "$img" /nothing
    expect_err "$name: rm of a missing file: exit 2" 2 "no such file"
    run ls "$img"
    if grep -q -e '^p/$' -e '^deepcopy/$' out.txt; then bad "$name: rm -r removed the trees"; else ok "$name: rm -r removed the trees"; fi
    run put "$img" -- src/-dash /-dash2
    expect "$name: put of a name that starts with '-' after --" 0
    run fsck "$img"
    expect_out "$name: fsck after the changes: exit 0" 0 "clean"
    run ls -R "$img"
    sed 's|^\./||' out.txt | sort >got_list.txt
    { cat expect_list.txt; printf '%s\n' -dash2 new/ new/one_page; } | sort >expect_list2.txt
    check "$name: ls -R after the changes" cmp -s expect_list2.txt got_list.txt
}

geometry nor 1048576 nor "256 bytes$" --model nor-m25p16 --size 1M
geometry nand 2162688 nand "2048 bytes + 64 OOB" --model nand-dhara --size 2M
geometry sd 2097152 block "512 bytes$" --model sd-tf --block 64K --size 2M

# the sd-tf model as it is: 4 MiB erase blocks (AUs), 11 of them at least
run mkfs sd-au.img --model sd-tf --size 44M
expect_out "mkfs sd-tf with 4 MiB erase blocks" 0 "block, 512-byte pages, 11 segments"
run info sd-au.img
expect_out "sd-tf 44M: geometry detected" 0 "^erase block: *4194304 bytes"
rm -f sd-au.img

# ---- mkfs ----
run mkfs m.img --model nor-m25p16
expect_out "mkfs with the model's size" 0 "nor, 256-byte pages, 32 segments of 65536 bytes"
check "mkfs: 2 MiB image" test "$(filesize m.img)" -eq 2097152
run fsck m.img
expect_out "fsck of an empty volume" 0 "clean: 0 files"
run mkfs m2.img --medium nand --size 2M --spare 0
expect_out "mkfs NAND without OOB (--spare 0)" 0 "nand, 2048-byte pages, 16 segments"
check "mkfs NAND without OOB: flat image" test "$(filesize m2.img)" -eq 2097152
run ls m2.img
expect_err "a flat 2048-byte-page image: asks for --medium" 2 "give --medium"
run ls --medium nand m2.img
expect "a flat NAND image opens with --medium nand" 0
run mkfs m3.img --medium nor --page 256 --block 4K --size 1M
expect_out "mkfs with 4 KiB erase blocks: segments of several blocks" 0 "segments of 16384 bytes"
run info m3.img
expect_out "... detected as 16 KiB blocks" 0 "^segment: *16384 bytes"
# 253 sectors = 11 x 23: no power of two divides it into segments cairn takes;
# the fewest blocks a segment that it takes (4), the last sector left out
run mkfs odd.img --model nor-w25q128 --size 1036288
expect_out "mkfs of 253 sectors: whole segments of the fewest blocks" 0 "63 segments of 16384 bytes"
check "mkfs of 253 sectors: the image is the 252 of whole segments" test "$(filesize odd.img)" -eq 1032192
run put odd.img src/one_page /f
expect "put into the odd-sized volume" 0
run fsck odd.img
expect_out "fsck of the odd-sized volume" 0 "clean"
rm -f odd.img
run mkfs small.img --model nor-m25p16 --size 512K
expect_err "mkfs of a too small volume: exit 2 with the reason" 2 "at least 11 erase blocks"
check "a refused mkfs leaves no file" test ! -e small.img
run mkfs x.img --model nor-nothing
expect_err "unknown model: exit 2" 2 "unknown model"
run mkfs x.img --size 1M
expect_err "no geometry: exit 2" 2 "no geometry"
run mkfs x.img --model nor-m25p16 --size 100000
expect_err "--size not a whole number of blocks: exit 2" 2 "not a whole number"
run mkfs x.img --model nor-m25p16 --spare 64
expect_err "--spare on NOR: exit 2" 2 "for NAND"
rm -f x.img

# ---- detection: truncated images, offsets inside bigger files ----
head -c 500000 nor.img >trunc.img
run ls trunc.img
expect_err "a truncated image: exit 2 with the reason" 2 "shorter than the volume"
head -c 100000 /dev/urandom >junk.bin
run ls junk.bin
expect_err "not a cairn image: exit 2" 2 "no cairn checkpoint"

head -c 65536 /dev/urandom >prefix.bin
head -c 12345 /dev/urandom >suffix.bin
cat prefix.bin nor.img suffix.bin >fw.bin
run ls --offset 65536 fw.bin
expect_out "NOR image at --offset 64K inside a firmware file" 0 "^random70k$"
run ls --offset 64K fw.bin
expect_out "--offset takes K" 0 "^random70k$"
run fsck --offset 64K fw.bin
expect_out "fsck at an offset" 0 "clean"
run ls fw.bin
expect_err "without the offset: exit 2, the offset suggested" 2 "65536 bytes further"
run put --offset 64K fw.bin src/one_page /added
expect "put at an offset" 0
run cat --offset 64K fw.bin /added
check "put at an offset: content" cmp -s out.txt src/one_page
head -c 65536 fw.bin >fw_prefix.bin
check "put at an offset keeps the bytes before" cmp -s fw_prefix.bin prefix.bin
tail -c 12345 fw.bin >fw_suffix.bin
check "put at an offset keeps the bytes after" cmp -s fw_suffix.bin suffix.bin
check "put at an offset keeps the file's size" test "$(filesize fw.bin)" -eq $((65536 + 1048576 + 12345))

cat prefix.bin nand.img suffix.bin >fwn.bin
run ls --offset 64K fwn.bin
expect_err "NAND inside a bigger file without flags: exit 2, asks" 2 "give --medium"
run ls --offset 64K --medium nand --spare 64 fwn.bin
expect_out "NAND at an offset with --medium nand --spare 64" 0 "^random70k$"
cat prefix.bin nand.img >fwn2.bin
run ls --offset 64K fwn2.bin
expect_out "NAND image ending the file: OOB size from the length" 0 "^random70k$"
# a NAND dump of 33 blocks in segments of 2, the last block past the last
# whole segment (zero config leaves such blocks unused): still NAND with 64
# OOB bytes a page (its length is also 2,048 pages of 2,178 bytes)
run mkfs ntail.img --model nand-dhara --size 4M --lblock 2
expect "mkfs NAND in 2-block segments" 0
run put ntail.img src/one_page /p
expect "put into it" 0
head -c $((64 * 2112)) /dev/zero | tr '\000' '\377' >>ntail.img
run ls ntail.img
expect_out "a NAND dump with an unused block past the volume: detected" 0 "^p$"
run info --medium nand ntail.img
expect_out "... also with --medium nand" 0 "^page: *2048 bytes + 64 OOB"
rm -f ntail.img

cp prefix.bin emb.bin
run mkfs --offset 64K emb.bin --model nor-m25p16 --size 1M
expect "mkfs at an offset of an existing file" 0
check "mkfs at an offset keeps the bytes before" cmp -s prefix.bin "$(head -c 65536 emb.bin >emb_prefix.bin; echo emb_prefix.bin)"
run put --offset 64K emb.bin src/allbytes /a
expect "the volume at the offset takes files" 0
run cat --offset 64K emb.bin /a
check "... and gives them back" cmp -s out.txt src/allbytes

# NAND: a block marked bad in the OOB (byte 0 of its first page's OOB)
cp nand.img badblk.img
printf '\000' | dd of=badblk.img bs=1 seek=$((15 * 64 * 2112 + 2048)) conv=notrunc 2>/dev/null
run info badblk.img
expect_out "info counts a NAND block marked bad" 0 "1 erase block marked bad"

# ---- build edge cases, locking ----
mkdir -p self
echo "inside" >self/file
run build self -o self/self.img --model nor-m25p16 --size 1M
expect_err "build with the image inside the tree skips the image" 0 "the image being written"
run ls self/self.img
if grep -q '^self.img$' out.txt; then bad "... it is not copied into itself"; else ok "... it is not copied into itself"; fi
run put self/self.img src/deep/ /
expect "put of a directory given with a trailing slash" 0
run ls self/self.img
expect_out "... keeps its name" 0 "^deep/$"
if command -v flock >/dev/null 2>&1; then
    flock -x self/self.img sleep 3 &
    holder=$!
    sleep 1
    run put self/self.img src/one_page /x
    expect_err "an image locked by another process is refused" 2 "in use by another process"
    kill $holder 2>/dev/null
    wait $holder 2>/dev/null
else
    echo "skipped: locking (no flock command)"
fi
rm -rf self

# ---- a full volume ----
mkdir -p bigsrc
head -c 1200000 /dev/urandom >bigsrc/too_big
run build bigsrc -o full.img --model nor-m25p16 --size 1M
expect_err "build of a tree that does not fit: exit 2, says so" 2 "no space left"
rm -rf bigsrc full.img
# a put over an existing file that does not fit beside it leaves it as it was
# (session 40: it was written over, and removed when the volume filled)
mkdir -p fullsrc/d
head -c 200000 /dev/urandom >fullsrc/d/keep
head -c 250000 /dev/urandom >fullsrc/other
head -c 400000 /dev/urandom >big.bin
head -c 100000 /dev/urandom >small.bin
run build fullsrc -o full.img --model nor-m25p16 --size 1M
run put full.img big.bin /d/keep
expect_err "put over a file, not fitting beside it: exit 2, says it is as it was" 2 "/d/keep is as it was"
run get full.img /d/keep got.bin
check "put over a file, not fitting: the file is whole" cmp -s got.bin fullsrc/d/keep
run ls -R full.img
check "put over a file, not fitting: nothing else left" test "$(cat out.txt | tr '\n' ' ')" = "d/ d/keep other "
run put full.img small.bin /d/keep
expect "put over a file that fits: exit 0" 0
run get full.img /d/keep got.bin
check "put over a file that fits: replaced" cmp -s got.bin small.bin
run fsck full.img
expect "put over a file: fsck clean" 0
rm -rf fullsrc full.img big.bin small.bin got.bin

# ---- images made elsewhere: left by a power cut, simulator image files ----
if [ -n "$FIXTURE" ]; then
    if "$FIXTURE" unclean unclean.img 2>err.txt; then
        run info unclean.img
        expect_out "an image left by a power cut: info says not clean" 0 "not clean"
        run cat unclean.img /synced.txt
        expect_out "... what was synced reads back (journal replayed)" 0 "^synced before the cut$"
        run fsck unclean.img
        expect_out "... fsck: clean" 0 "clean"
        cp unclean.img unclean.before
        run ls unclean.img
        check "... reading does not change the image" cmp -s unclean.img unclean.before
        run put unclean.img src/one_page /after
        expect "... put (a read-write mount recovers it)" 0
        run info unclean.img
        expect_out "... clean after the tool unmounted it" 0 "seq [0-9]* .*, clean;"
        run cat unclean.img /synced.txt
        expect_out "... the synced file survived" 0 "^synced before the cut$"
    else
        bad "tool_fixture unclean"
    fi
    if "$FIXTURE" sim sim.img 2>err.txt; then
        run info sim.img
        expect_out "a simulator image file opens" 0 "simulator image file"
        run cat sim.img /sim.txt
        expect_out "... and reads" 0 "^in a simulator image$"
        run put sim.img src/allbytes /b
        expect "... and takes changes" 0
        run cat sim.img /b
        check "... which are saved in it" cmp -s out.txt src/allbytes
        run fsck sim.img
        expect_out "... fsck: clean" 0 "clean"
    else
        bad "tool_fixture sim"
    fi
else
    echo "skipped: power-cut and simulator images (no tool_fixture given)"
fi

# ---- a block device (a loop device, when this runs as root and may) ----
loopdev=""
if [ "$(id -u)" -eq 0 ] && command -v losetup >/dev/null 2>&1; then
    head -c 2097152 /dev/zero >loop.img
    loopdev=$(losetup -f --show loop.img 2>/dev/null) || loopdev=""
fi
if [ -n "$loopdev" ] && [ -b "$loopdev" ]; then
    trap 'losetup -d "$loopdev" 2>/dev/null' EXIT
    run mkfs "$loopdev" --medium block --block 64K
    expect_out "block device: mkfs takes the size from BLKGETSIZE64" 0 "32 segments of 65536 bytes"
    run put "$loopdev" src/random70k /r
    expect "block device: put" 0
    run info "$loopdev"
    expect_out "block device: detected" 0 "(block device)"
    run cat "$loopdev" /r
    check "block device: cat" cmp -s out.txt src/random70k
    run fsck "$loopdev"
    expect_out "block device: fsck" 0 "clean"
    losetup -d "$loopdev"
    trap - EXIT
    run ls loop.img
    expect_out "the device's bytes are a raw image" 0 "^r$"
else
    echo "skipped: block device (no loop device: needs root and losetup)"
fi
rm -f loop.img

# ---- fsck of damaged images: exit 1 or 2 with the problems listed, no crash ----
# Where the damage falls decides what can be seen: index nodes and the
# journal carry CRCs on every medium, file data only on NAND (its page tags);
# free space holds nothing (it is erased before use). So the bytes are flipped
# in the middle of what the checkpoint says is live (cairn dump gives where).
# fsck_damaged DESC IMAGE: exit 1 or 2, a "problem:" line or an error message
fsck_damaged() {
    run fsck "$2"
    if { [ "$rc" -eq 1 ] && grep -q '^problem: ' out.txt; } ||
        { [ "$rc" -eq 2 ] && [ -s err.txt -o -s out.txt ]; }; then
        if grep -q Sanitizer err.txt; then bad "$1 (sanitizer report)"; else ok "$1 (exit $rc)"; fi
    else
        bad "$1 (exit $rc)"
    fi
}
# no_crash DESC: the last run exited 0, 1 or 2 without a sanitizer report
no_crash() {
    if [ "$rc" -le 2 ] && ! grep -q Sanitizer err.txt; then ok "$1 (exit $rc)"; else bad "$1 (exit $rc)"; fi
}
# field NAME: a value of dump.txt ("root", "page_size", ...)
field() { sed -n "s/^$1  *//p" dump.txt; }
# head NAME: "SEG PAGE" of a head in dump.txt
head_of() { sed -n "s/^head $1  *segment \([0-9]*\) page \([0-9]*\)$/\1 \2/p" dump.txt; }
for name in nor nand sd; do
    size=$(filesize $name.img)
    "$CAIRN" dump $name.fresh.img >dump.txt 2>/dev/null
    ps=$(field page_size)
    segp=$(field seg_pages)
    ns=$(field node_size)
    stride=$ps
    [ $name = nand ] && stride=$((ps + 64))
    # pos SEG PAGE OFF: the image byte of byte OFF of a page
    pos() { echo $((($1 * segp + $2) * stride + $3)); }

    # the root index node: bytes 10-21 (its seq, CRC and first entry; a
    # node's tail past its entries is not covered by its CRC)
    root=$(field root)
    cp $name.fresh.img flip.img
    poke flip.img $((root * stride + 10)) "FLIPPEDBYTES"
    fsck_damaged "$name: fsck of an image with bytes flipped in its root index node" flip.img
    run info flip.img
    if [ "$rc" -le 1 ] && grep -q '^medium:' out.txt && ! grep -q Sanitizer err.txt; then
        ok "$name: info of the damaged image shows what it can (exit $rc)"
    else
        bad "$name: info of the damaged image (exit $rc)"
    fi
    run ls -R flip.img
    no_crash "$name: ls of the damaged image does not crash"

    # every index node the meta head's segment holds: bytes 12-13 (its CRC)
    set -- $(head_of meta)
    cp $name.fresh.img flip.img
    p=0
    while [ $p -lt "$2" ]; do
        poke flip.img "$(pos "$1" $p 12)" "XY"
        p=$((p + ns / ps))
    done
    fsck_damaged "$name: fsck of an image with every node of its index segment damaged" flip.img

    # file data: the middle page of the data head's segment
    set -- $(head_of data0)
    cp $name.fresh.img flip.img
    poke flip.img "$(pos "$1" $(($2 / 2)) $((ps / 2)))" "FLIPPEDBYTES"
    if [ $name = nand ]; then
        fsck_damaged "$name: fsck of an image with file data flipped (page tags)" flip.img
    else
        run fsck flip.img
        no_crash "$name: fsck of an image with file data flipped (no checksum on $name: not seen)"
    fi

    # the middle of the image, and every 4 KiB through its middle half, of the
    # image changed by the commands above: whatever lies there, no crash
    cp $name.img flip.img
    poke flip.img $((size / 2)) "FLIPPEDBYTES"
    run fsck flip.img
    no_crash "$name: fsck of an image with bytes flipped in the middle"
    off=$((size / 4))
    while [ $off -lt $((size * 3 / 4)) ]; do
        poke flip.img $off "XY"
        off=$((off + 4096))
    done
    run fsck flip.img
    no_crash "$name: fsck of an image damaged every 4 KiB through its middle half"
    run ls -R flip.img
    no_crash "$name: ls of that image"
    run extract flip.img flip_out
    no_crash "$name: extract of that image"
    rm -rf flip_out
done
rm -f flip.img

# ---- dump: journal records and tree nodes (docs/FORMAT.md) ----
# pydump ARGS...: the Python decoder (py.txt, pyrc), when there is one
pydump() {
    if [ -n "$ONDISK" ] && [ -n "$PYTHON" ]; then
        "$PYTHON" "$ONDISK" "$@" >py.txt 2>pyerr.txt
        pyrc=$?
    else
        pyrc=skip
    fi
}
# agree DESC: the C dump (out.txt, rc) and the Python one (py.txt, pyrc) agree
agree() {
    if [ "$pyrc" = skip ]; then
        echo "skipped: $1 (no python3 or no ondisk.py given)"
    elif [ "$pyrc" -eq "$rc" ] && { [ "$rc" -eq 2 ] || cmp -s out.txt py.txt; } &&
        ! grep -q Traceback pyerr.txt; then
        ok "$1"
    else
        bad "$1 (C exit $rc, Python exit $pyrc)"
        diff out.txt py.txt | head -10
        head -5 pyerr.txt
    fi
}
run dump --journal
expect_err "dump --journal without an image" 2 "usage\|IMAGE\|argument"
run ls --tree nor.img
expect_err "--tree is for dump only" 2 "is for dump"
if [ -n "$FIXTURE" ]; then
    for model in nor-m25p16 nand-dhara; do
        if ! "$FIXTURE" journal $model j.img 2>err.txt; then
            bad "tool_fixture journal $model"
            continue
        fi
        run dump --journal j.img
        expect_out "$model: dump --journal starts where the checkpoint says" 0 \
            "^journal from segment [0-9]* offset 0 seq 0$"
        expect_out "$model: dump --journal decodes CREATE" 0 \
            '^record seg=[0-9]* off=0 seq=0 type=CREATE len=17 parent=1 id=2 sub=0x[0-9a-f]\{8\} type=dir name="dir"$'
        expect_out "$model: dump --journal decodes EXTENT" 0 \
            "type=EXTENT len=20 id=4 fpage=0 phys=[0-9]* count=[0-9]* size=2052$"
        expect_out "$model: dump --journal decodes SIZE" 0 "type=SIZE len=8 id=4 size=100$"
        expect_out "$model: dump --journal decodes TRIM" 0 "type=TRIM len=4 id=4$"
        expect_out "$model: dump --journal decodes RENAME (name escaped)" 0 \
            'type=RENAME len=40 oparent=2 osub=0x[0-9a-f]* nparent=2 nsub=0x[0-9a-f]* replaced=0 id=3 name="renamed \\x22q\\x22.txt"$'
        expect_out "$model: dump --journal decodes ATTR" 0 "type=ATTR len=9 id=4 atype=7 value=0102ff$"
        expect_out "$model: dump --journal decodes ATTRDEL" 0 "type=ATTRDEL len=5 id=4 atype=8$"
        expect_out "$model: dump --journal decodes REMOVE" 0 "type=REMOVE len=12 parent=1 sub=0x[0-9a-f]* id=5$"
        expect_out "$model: dump --journal decodes RINGNEW" 0 \
            'type=RINGNEW len=22 capacity=4096 parent=1 id=6 sub=0x[0-9a-f]* type=file name="ring"$'
        expect_out "$model: dump --journal decodes RING" 0 \
            "type=RING len=24 id=6 slot=0 phys=[0-9]* count=1 size=10 head=0$"
        expect_out "$model: dump --journal says where and why it ends" 0 \
            "^journal end segment [0-9]* offset [0-9]*: [0-9]* records, erased$"
        seqs=$(sed -n 's/^record .* seq=\([0-9]*\) .*/\1/p' out.txt | tr '\n' ' ')
        n=$(grep -c '^record ' out.txt)
        check "$model: dump --journal: seqs run 0, 1, ... ($n records)" \
            test "$seqs" = "$(seq 0 $((n - 1)) | tr '\n' ' ')"
        if [ $model = nand-dhara ]; then
            expect_out "$model: dump --journal decodes a page written as a journal entry (its tag)" 0 \
                "tag=log type=EXTENT len=20 id=7 fpage=0 phys=[0-9]* count=1 size=18$"
            expect_out "$model: dump --journal shows the PADs closing pages" 0 "type=PAD len=0$"
        else
            check "$model: no PAD on NOR" sh -c '! grep -q "type=PAD" out.txt'
        fi
        pydump --journal j.img
        agree "$model: the Python decoder prints the same journal"
        run dump --tree j.img
        expect_out "$model: dump --tree of a volume not committed yet: the root" 0 \
            "^  key=0000000100000000 INODE id=1 sub=0x0000000 type=dir flags=0x00 parent=1 size=0 dsub=0x00000000$"
        run dump --all j.img
        pydump --all j.img
        agree "$model: the Python decoder prints the same --all"
    done
fi
for name in nor nand sd; do
    img=$name.fresh.img
    "$CAIRN" dump $img >dump.txt 2>/dev/null
    run dump --tree $img
    expect_out "$name: dump --tree walks the tree" 0 "^tree: [0-9]* nodes, [0-9]* entries, 0 problems$"
    expect_out "$name: dump --tree: the root node's header" 0 \
        "^node page=$(field root) level=[0-9] count=[0-9]* used=[0-9]* seq=[0-9]* crc=0x[0-9a-f]\{8\}$"
    expect_out "$name: dump --tree: a directory entry" 0 \
        '^  key=00000001[0-9a-f]\{8\} DIRENT id=1 sub=0x[0-9a-f]\{7\} child=[0-9]* type=file name="random70k"$'
    expect_out "$name: dump --tree: a file's inode and size" 0 \
        " INODE id=[0-9]* sub=0x0000000 type=file flags=0x00 parent=1 size=70000 dsub="
    expect_out "$name: dump --tree: an extent" 0 " EXTENT id=[0-9]* sub=0x0000000 fpage=0 phys=[0-9]* count=[0-9]*"
    expect_out "$name: dump --tree: a name with escaped bytes" 0 'name="utf8-caf\\xc3\\xa9"'
    if [ $name = nand ]; then
        expect_out "$name: dump --tree checks the extents' page tags" 0 " tags=ok$"
        check "$name: every tag matches" sh -c '! grep -q "tags=bad" out.txt'
    fi
    pydump --tree $img
    agree "$name: the Python decoder prints the same tree"
    run dump --all $img
    expect_out "$name: dump --all: the checkpoint" 0 "^magic *CRN1$"
    expect_out "$name: dump --all: the journal (empty after a clean unmount)" 0 \
        "^journal end segment $(field log_seg) offset $(field log_off): 0 records, erased$"
    expect_out "$name: dump --all: the tree" 0 "^tree: "
    pydump --all $img
    agree "$name: the Python decoder prints the same --all"

    # truncated: a clear error from both
    size=$(filesize $img)
    head -c $((size / 2)) $img >trunc.img
    run dump --all trunc.img
    expect_err "$name: dump of a truncated image: an error" 2 "shorter\|no cairn checkpoint"
    pydump --all trunc.img
    agree "$name: the Python decoder: an error too"

    # the root node damaged: a problem, the same from both
    ps=$(field page_size)
    stride=$ps
    [ $name = nand ] && stride=$((ps + 64))
    cp $img bad.img
    poke bad.img $(($(field root) * stride + 20)) "FLIPPEDBYTES"
    run dump --all bad.img
    expect_out "$name: dump of a damaged root node: a problem" 1 "^  problem: bad crc (computed 0x"
    pydump --all bad.img
    agree "$name: the Python decoder reports it alike"

    # bytes damaged in the root node, where the journal starts, and anywhere,
    # at pseudo-random places: no crash, the same output
    x=7
    i=0
    while [ $i -lt 12 ]; do
        cp $img bad.img
        k=0
        while [ $k -lt $((1 + i % 4 * 8)) ]; do
            x=$(((x * 1103515245 + 12345) % 2147483648))
            case $((i % 3)) in
            0) off=$(($(field root) * stride + x % 64)) ;; # the root node's header, first entries
            1) off=$(($(field log_seg) * $(field seg_pages) * stride + x % (4 * stride))) ;; # the journal
            *) off=$((x % size)) ;;
            esac
            poke bad.img $off "XY"
            k=$((k + 1))
        done
        run dump --all bad.img
        no_crash "$name: dump --all of a damaged image ($i)"
        pydump --all bad.img
        agree "$name: the Python decoder agrees on it ($i)"
        i=$((i + 1))
    done
done
rm -f bad.img trunc.img j.img

echo "test_tool: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
