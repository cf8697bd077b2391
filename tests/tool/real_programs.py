#!/usr/bin/env python3
"""Real programs on small, nearly full `cairn mount` volumes, checked the way
an outside reviewer would check them: sqlite3 (rollback journal and WAL), git,
GNU tar and fio, each on a fresh volume of each geometry below, each filling
it to ENOSPC, with SIGKILLs of the mount process (a crash of the host
process), clean unmounts, `cairn fsck` and remounts. Every program's result
is compared with an oracle kept outside the mount.

Volumes: 512 KiB nor-w25q128, 1 MiB nor-m25p16, 2 MiB nand-dhara, 1 MiB
sd-tf (64 KiB blocks).

Scenarios (each on a fresh mkfs of each volume):
  sqlite-delete  rollback journal (journal_mode=DELETE, synchronous=EXTRA:
                 FULL does not fsync the directory after the journal's
                 unlink, so the last commit before a crash could be rolled
                 back by design), cache_size=8 so that big transactions spill
                 into the database before COMMIT.
  sqlite-wal     journal_mode=WAL, synchronous=FULL, a small
                 wal_autocheckpoint so checkpoints overwrite the database.
     Both: transactions of 1-4 rows (0.3-6 KB) until SQLITE_FULL, each
     committed id recorded outside the mount (WORKDIR/NAME.oracle) after
     COMMIT returns. SIGKILL #1 right after a COMMIT; #2 in the middle of a
     30-row uncommitted transaction that also updated a committed row; #R at
     a random moment (20-150 ms) while transactions stream in (the one whose
     COMMIT the kill cut may go either way, but whole); then the volume
     filled: rows deleted a transaction at a time, VACUUM, inserts until
     full again; #3 on the full volume. After each kill: `cairn fsck`, a
     remount, PRAGMA integrity_check = ok, every committed transaction
     present with its exact rows, no uncommitted one. Then more
     transactions, a clean unmount, `cairn fsck`, a remount and all again.
     After every failed statement the same checks in the live connection.
     Every SQLite error must come from ENOSPC (SQLITE_FULL, or the errno
     os_unix.c logs through SQLITE_CONFIG_LOG, set up with ctypes), never
     EIO.
  git            git init and commits (core.fsync=all) of random small files,
                 rewrites and removals until a commit fails for room; SIGKILL
                 right after one commit, and later a clean unmount: after
                 each, fsck, remount, git fsck --full --strict, git log equal
                 to the commits that succeeded, every commit's tree (ls-tree)
                 equal to what was committed; after the failed commit: no
                 lock left, HEAD the last commit, the new files removed and
                 git reset --hard; the work tree equal to HEAD at the end.
  tar            GNU tar extracts a tarball of 400 small files from
                 /usr/share/doc until the volume fills; every file tar did not
                 complain about must compare equal (on the mount, and after
                 unmount, fsck, remount), and one it complained about be absent
                 or a prefix of its original; half are deleted and the tarball
                 extracted again (--skip-old-files), all compared again; then
                 all removed, a third extraction SIGKILLed 20-250 ms in: after
                 fsck and remount every file must hold its original's bytes
                 (whole or a prefix), never foreign ones.
  fio            fio randwrite --verify=crc32c of a file of 90% of df's free
                 space (which must fit: cairn's promise of room for one new
                 file), SIGKILL after its end_fsync, remount, fio --verify_only;
                 the rest of the volume filled with dd until ENOSPC, verify
                 again; clean unmount, fsck, remount, verify.

USABILITY: on a full volume a program may be unable to go on at all (SQLite
cannot roll back a hot journal or open its -shm, git cannot make its
index.lock): cairn writes out of place, so even an overwrite needs room, and
cairn.h's answer to NOSPC is "remove something". Each scenario keeps ballast
files (1/16 of the volume each) beside the program's; when the program is
stuck one is removed, the finding is reported as USABILITY, and the program
must go on then (if it cannot, or no ballast is left: a fault). USABILITY
findings make the exit 1 too, unless RP_USABILITY=warn.

After every mount process ends: its exit code (0 on a clean unmount; 86 is
an ASan report) and its stderr (no sanitizer report). Every step runs under a
watchdog (a hang is a fault: the mount's kernel stack and a gdb backtrace are
printed and it is killed).

usage: real_programs.py CAIRN WORKDIR [SCENARIO-FILTER [VOLUME-FILTER]]
  SCENARIO-FILTER, VOLUME-FILTER: substrings ("sqlite-wal", "nand")
  env RP_SEED (default 1): the seed of every random choice
  env RP_USABILITY=warn: USABILITY findings do not fail the run
  env RP_FUSE_DEBUG=1: the mount runs with -o debug, every FUSE call in its
      log (tests/tool/fuse_trace.py makes a trace of it to replay)
Exit 0 all passed, 1 a fault (the image, mount log and oracle of each fault
are saved under WORKDIR/faults/), 77 skipped (no FUSE).
"""
import atexit, ctypes, ctypes.util, errno, gc, hashlib, os, random, re, shutil, signal
import sqlite3, subprocess, sys, threading, time

if len(sys.argv) < 3:
    sys.exit(__doc__)
CAIRN = os.path.abspath(sys.argv[1])
WORK = os.path.abspath(sys.argv[2])
SCEN_FILTER = sys.argv[3] if len(sys.argv) > 3 else ""
VOL_FILTER = sys.argv[4] if len(sys.argv) > 4 else ""
SEED = int(os.environ.get("RP_SEED", "1"))
os.environ["ASAN_OPTIONS"] = (os.environ.get("ASAN_OPTIONS", "") + ":exitcode=86").lstrip(":")
os.environ["LC_ALL"] = "C"

VOLUMES = [
    ("nor-w25q128-512K", ["--model", "nor-w25q128", "--size", "512K"]),
    ("nor-m25p16-1M", ["--model", "nor-m25p16", "--size", "1M"]),
    ("nand-dhara-2M", ["--model", "nand-dhara", "--size", "2M"]),
    ("sd-tf-1M", ["--model", "sd-tf", "--block", "64K", "--size", "1M"]),
]
SCENARIO_TIMEOUT = 90  # seconds: a hang beyond this is a fault
T0 = time.time()


def log(*a):
    print(*a, flush=True)


class Fault(Exception):
    pass


class Killed(Exception):
    """An SQLite call failed because the mount process was killed."""


CHECKS = {"passed": 0}
FAULTS = []
USABILITY = []  # a program cannot go on on a full volume until something is removed
BALLAST = 24576
COUNTS = {}


def count(k, n=1):
    COUNTS[k] = COUNTS.get(k, 0) + n


def check(cond, what, detail=""):
    """An assertion: ok printed, or a Fault raised with a clear message."""
    if not cond:
        raise Fault(what + (": " + detail if detail else ""))
    CHECKS["passed"] += 1
    log("  ok: " + what)


# ---------------------------------------------------------------- mounting
def mounted(mnt):
    with open("/proc/mounts") as f:
        return any(l.split()[1] == mnt for l in f)


SANITIZER = re.compile(r"Sanitizer|runtime error:|==\d+==ERROR|AddressSanitizer")


class Mount:
    def __init__(self, img, mnt, logpath):
        self.img, self.mnt, self.logpath = img, mnt, logpath
        self.proc = None
        self.n = 0
        self.kill_sent = False

    def start(self):
        self.n += 1
        with open(self.logpath, "a") as f:
            f.write("=== mount %d (t=%.1f)\n" % (self.n, time.time() - T0))
        lf = open(self.logpath, "a")
        self.kill_sent = False
        debug = ["-o", "debug"] if os.environ.get("RP_FUSE_DEBUG") else []
        self.proc = subprocess.Popen([CAIRN, "mount", "-f"] + debug + [self.img, self.mnt],
                                     stdout=lf, stderr=lf)
        lf.close()
        for _ in range(3000):
            if mounted(self.mnt):
                WATCH.pid = self.proc.pid
                return
            if self.proc.poll() is not None:
                raise Fault("mount %d exited %d: %s" % (self.n, self.proc.returncode,
                                                       self.tail()))
            time.sleep(0.01)
        raise Fault("mount %d: not mounted after 30 s" % self.n)

    def tail(self, n=15):
        try:
            with open(self.logpath) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def scan_log(self, when):
        with open(self.logpath) as f:
            text = f.read()
        m = SANITIZER.search(text)
        if m:
            raise Fault("%s: a sanitizer report in the mount log: %s" % (when, self.tail(40)))

    def unmount(self, what):
        """A clean unmount: fusermount3 -u, the process must exit 0."""
        r = subprocess.run(["fusermount3", "-u", self.mnt], capture_output=True, text=True,
                           timeout=60)
        if r.returncode != 0:
            raise Fault("%s: fusermount3 -u failed: %s" % (what, r.stderr.strip()))
        try:
            rc = self.proc.wait(60)
        except subprocess.TimeoutExpired:
            raise Fault("%s: the mount process did not exit 60 s after fusermount3 -u" % what)
        self.proc = None
        WATCH.pid = None
        self.scan_log(what)
        check(rc == 0, "%s: clean unmount, mount process exit 0" % what,
              "exit %d%s; log: %s" % (rc, " (ASan report)" if rc == 86 else "", self.tail(40)))

    def kill(self, what):
        """SIGKILL the mount process (a crash of the host process), clear the
        dead mount."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(60)
        self.proc = None
        WATCH.pid = None
        subprocess.run(["fusermount3", "-u", "-z", self.mnt], capture_output=True, timeout=60)
        self.scan_log(what)
        count("sigkills")
        log("  -- %s: mount process killed with SIGKILL" % what)

    def kill_later(self, delay):
        """SIGKILL the mount process delay seconds from now, whatever the
        client is doing then (reap() it afterwards)."""
        proc = self.proc
        self.kill_sent = False

        def fire():
            # set first: the client sees ENOTCONN/ECONNABORTED before the
            # process can be waited for
            self.kill_sent = True
            try:
                proc.send_signal(signal.SIGKILL)
            except OSError:
                pass
        t = threading.Timer(delay, fire)
        t.daemon = True
        t.start()
        return t

    def dead(self):
        return self.proc is not None and (self.kill_sent or self.proc.poll() is not None)

    def reap(self, what):
        """After kill_later fired: wait for it, clear the dead mount."""
        self.proc.wait(60)
        rc = self.proc.returncode
        self.proc = None
        WATCH.pid = None
        subprocess.run(["fusermount3", "-u", "-z", self.mnt], capture_output=True, timeout=60)
        self.scan_log(what)
        count("sigkills")
        log("  -- %s: mount process killed with SIGKILL (exit %s)" % (what, rc))

    def abandon(self):
        if self.proc is not None:
            try:
                self.proc.send_signal(signal.SIGKILL)
                self.proc.wait(60)
            except Exception:
                pass
            self.proc = None
        if mounted(self.mnt):
            subprocess.run(["fusermount3", "-u", "-z", self.mnt], capture_output=True)
        WATCH.pid = None


def fsck(img, what):
    r = subprocess.run([CAIRN, "fsck", img], capture_output=True, text=True, timeout=120)
    count("cairn fsck runs")
    check(r.returncode == 0, "%s: cairn fsck exit 0 (%s)" % (what, r.stdout.strip().split("\n")[-1]),
          "exit %d:\n%s%s" % (r.returncode, r.stdout, r.stderr))


def df_free(mnt):
    st = os.statvfs(mnt)
    return st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize


# ---------------------------------------------------------------- watchdog
class Watchdog(threading.Thread):
    """Per step: past its deadline, the mount's kernel stack and the client
    processes' are noted and the mount is killed (a blocked call then fails
    with ENOTCONN and the scenario stops on it)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.deadline = None
        self.what = ""
        self.pid = None
        self.note = None
        self.lock = threading.Lock()

    def arm(self, seconds, what):
        with self.lock:
            self.deadline = time.time() + seconds
            self.what = what
            self.note = None

    def disarm(self):
        with self.lock:
            self.deadline = None

    def run(self):
        while True:
            time.sleep(0.5)
            with self.lock:
                if self.deadline is None or time.time() < self.deadline:
                    continue
                self.deadline = None
                note = "HANG: %s did not finish in time" % self.what
                if self.pid:
                    for t in os.listdir("/proc/%d/task" % self.pid) if os.path.exists(
                            "/proc/%d" % self.pid) else []:
                        try:
                            with open("/proc/%d/task/%s/stack" % (self.pid, t)) as f:
                                note += "\n  mount task %s kernel stack:\n%s" % (t, f.read())
                        except OSError:
                            pass
                    try:
                        r = subprocess.run(["gdb", "-p", str(self.pid), "-batch", "-ex", "bt"],
                                           capture_output=True, text=True, timeout=30)
                        note += "\n  mount backtrace:\n" + r.stdout[-3000:]
                    except Exception:
                        pass
                    self.note = note
                    log("  !! " + note)
                    try:
                        os.kill(self.pid, signal.SIGKILL)
                    except OSError:
                        pass
                else:
                    self.note = note


WATCH = Watchdog()


def run(cmd, what, timeout=120, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        raise Fault("HANG: %s (%s) did not finish in %d s" % (what, " ".join(cmd[:3]), timeout))


def make_ballast(mnt, rng, n=4):
    """Ballast: files besides the program's, removed only when the program
    cannot go on without (USABILITY findings), each 1/16 of the volume."""
    global BALLAST
    BALLAST = max(24576, df_free(mnt)[1] // 16 // 4096 * 4096)
    for i in range(n):
        with open(os.path.join(mnt, "ballast%d" % i), "wb") as f:
            f.write(rng.randbytes(BALLAST))
            os.fsync(f.fileno())


# A full volume still hands out its metadata head's spare pages once its
# collection finds nothing (docs/DESIGN.md "Session 43"), and a program's
# cleanup after a refusal (git unlinks its index.lock) frees some: a probe of
# a few KiB may fit right after a refusal that was right. The volume counts as
# full when a file of this size is refused too (the tool's 1-2 MiB volumes:
# 3-6% of them).
LAST_ROOM = 64 * 1024


def volume_full(mnt, size):
    """Whether a new file of size bytes (written, fsynced) is refused with
    ENOSPC right now (for size > 0: or one of LAST_ROOM bytes after it
    fitted): True, or what happened instead."""
    p = os.path.join(mnt, "room-probe")
    fd = None
    try:
        fd = os.open(p, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        if size:
            os.write(fd, b"p" * size)
            os.fsync(fd)
            os.ftruncate(fd, 0)
            os.fsync(fd)
            for _ in range(LAST_ROOM // 4096):
                os.write(fd, b"p" * 4096)
            os.fsync(fd)
        os.close(fd)
        fd = None
        return "a %d-byte file was written, then one of %d bytes" % (size, LAST_ROOM)
    except OSError as e:
        if e.errno == errno.ENOSPC:
            return True
        return "the probe failed with %s" % e
    finally:
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.unlink(p)
        except OSError:
            pass


def give_room(name, mnt, why):
    """The program cannot go on on the full volume: a USABILITY finding; a
    ballast file is removed (what cairn.h says to do on NOSPC: remove
    something), and the program must go on then."""
    msg = "%s: %s (df free %d)" % (name, why, df_free(mnt)[0])
    USABILITY.append(msg)
    log("  USABILITY: " + msg)
    left = sorted(f for f in os.listdir(mnt) if f.startswith("ballast"))
    if not left:
        raise Fault(msg + "; no ballast left to remove")
    os.unlink(os.path.join(mnt, left[0]))
    log("  -- %s: removed %s (%d bytes) to go on; df free now %d" % (
        name, left[0], BALLAST, df_free(mnt)[0]))


# ---------------------------------------------------------------- sqlite
try:  # the library Python's sqlite3 module uses (Debian: libsqlite3.so.0)
    _LIB = ctypes.CDLL(ctypes.util.find_library("sqlite3") or "libsqlite3.so.0")
except OSError:
    _LIB = None

# SQLite's error log (SQLITE_CONFIG_LOG): os_unix.c logs each failed system
# call with its errno ("os_unix.c:N: (28) fsync(path) - ..."), which
# sqlite3_system_errno does not keep reliably (it reads errno later)
SQLOG = []
if _LIB is None:
    sys.exit("real_programs: libsqlite3 not found through ctypes (needed for the errno of "
             "SQLite's failed calls)")
_LOGF = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)
_logcb = _LOGF(lambda arg, code, msg: SQLOG.append((code, msg.decode(errors="replace"))))
if _LIB is not None:
    if _LIB.sqlite3_shutdown() != 0 or _LIB.sqlite3_config(16, _logcb, ctypes.c_void_p(0)) != 0 \
            or _LIB.sqlite3_initialize() != 0:
        sys.exit("real_programs: sqlite3_config(SQLITE_CONFIG_LOG) failed")


def _unhook_log():
    """At exit: no log callback into a Python being torn down (a connection
    closed then logs: a segfault was seen)."""
    gc.collect()
    if _LIB is not None:
        _LIB.sqlite3_shutdown()
        _LIB.sqlite3_config(16, ctypes.c_void_p(0), ctypes.c_void_p(0))


atexit.register(_unhook_log)
OS_ERR = re.compile(r"os_unix\.c:\d+: \((\d+)\) (\w+)\(([^)]*)\)")


def sqlog_errnos():
    """The (errno, call, path) os_unix.c logged since the last call."""
    out = [(int(m.group(1)), m.group(2), m.group(3)) for _, msg in SQLOG
           for m in [OS_ERR.search(msg)] if m]
    SQLOG.clear()
    return out


def tx_rows(tx):
    r = random.Random("%d/tx/%d" % (SEED, tx))
    return [(k, r.randbytes(r.randrange(300, 1500))) for k in range(r.randrange(1, 5))]


def run_tx(c, tx, stage):
    """BEGIN, the rows of transaction tx, COMMIT; stage[0] says how far it got."""
    stage[0] = "BEGIN"
    c.execute("BEGIN")
    stage[0] = "INSERT"
    for k, v in tx_rows(tx):
        c.execute("INSERT INTO t VALUES(?,?,?)", (tx, k, v))
    stage[0] = "COMMIT"
    c.execute("COMMIT")


class SqliteRun:
    def __init__(self, name, mode, vol, mnt, m):
        self.name, self.mode, self.vol, self.mnt, self.m = name, mode, vol, mnt, m
        self.path = os.path.join(mnt, "s.db")
        self.oracle_path = os.path.join(WORK, name + ".oracle")
        self.oracle = open(self.oracle_path, "w")
        self.committed = set()   # present for sure
        self.ambiguous = set()   # present whole or absent (a COMMIT that failed)
        self.next_tx = 1
        self.rng = random.Random("%d/%s" % (SEED, name))
        self.conn = None
        self.fulls = 0
        self.errnos = {}
        self.wal_pending = set()  # failed COMMITs (WAL) ambiguous until the next commit

    def usability(self, why):
        give_room(self.name, self.mnt, why)

    def read_live(self, why):
        """The connection must read; if it cannot (a hot journal it cannot
        roll back for room), a new one; if that cannot either, a USABILITY
        finding, a ballast removed, and a new one must."""
        try:
            return self.read_state(self.conn)
        except sqlite3.Error as e:
            self.failed(e, "a read " + why)
        self.close()
        try:
            self.open()
            return self.read_state(self.conn)
        except sqlite3.Error as e:
            self.failed(e, "a new connection's read " + why)
            self.close()
        while True:
            self.usability("the database cannot be read " + why + " (not by a new connection "
                           "either: opening it must write, a hot journal's rollback or the "
                           "-shm, and finds no room)")
            try:
                self.open()
                return self.read_state(self.conn)
            except sqlite3.Error as e:
                self.failed(e, "a new connection's read " + why)
                self.close()

    def note(self, line):
        self.oracle.write(line + "\n")
        self.oracle.flush()
        os.fsync(self.oracle.fileno())

    def open(self):
        self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=5)
        c = self.conn
        c.execute("PRAGMA cache_size=8")
        if self.mode == "wal":
            got = c.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            check(got == "wal", "%s: journal_mode=WAL" % self.name, "got %r" % got)
            c.execute("PRAGMA synchronous=FULL")
            c.execute("PRAGMA wal_autocheckpoint=%d" % self.rng.randrange(8, 33))
        else:
            got = c.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
            check(got == "delete", "%s: journal_mode=DELETE" % self.name, "got %r" % got)
            c.execute("PRAGMA synchronous=EXTRA")
        c.execute("CREATE TABLE IF NOT EXISTS t(tx INTEGER, k INTEGER, v BLOB, "
                  "PRIMARY KEY(tx, k))")
        c.execute("CREATE INDEX IF NOT EXISTS t_len ON t(length(v), tx)")

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except sqlite3.Error:
                pass
            self.conn = None
        # a connection with a statement still alive (a cursor in a
        # traceback) is only closed when that is freed; its close then
        # checkpoints and deletes "s.db-wal" by name - on the next mount,
        # the live WAL (seen: committed transactions gone). So now.
        gc.collect()
        SQLOG.clear()  # what closing on a dead mount logged (ENOTCONN)

    def failed(self, e, what):
        """An SQLite error: must come from ENOSPC. Returns nothing; raises a
        Fault otherwise."""
        ename = getattr(e, "sqlite_errorname", "?")
        if self.m.dead():
            SQLOG.clear()
            raise Killed(what)
        # a close's error (ENOTCONN after a kill) is ignored by SQLite
        calls = [c for c in sqlog_errnos() if c[1] != "close"]
        # a new journal/WAL that cannot be created: SQLite retries the open
        # read-only and logs that one's ENOENT; the volume must be full
        if ename == "SQLITE_CANTOPEN" and calls and all(
                en == errno.ENOENT and c == "open" and p.endswith(("-journal", "-wal", "-shm"))
                for en, c, p in calls):
            # (strace shows ENOSPC there; a create right after may work: the
            # refused one made room, so only another errno is a fault)
            full = volume_full(self.mnt, 0)
            if full is not True and not full.startswith("a 0-byte file"):
                raise Fault("%s: %s failed with %s (%s), %s could not be created, and a new "
                            "file: %s" % (self.name, what, ename, e, calls[0][2], full))
            if full is not True:
                count("sqlite journal create refused, a create right after worked")
            calls = [(errno.ENOSPC, "open (probed)", calls[0][2])]
        ens = sorted({en for en, _, _ in calls})
        key = "%s/%s" % (ename, ",".join(errno.errorcode.get(en, str(en)) for en in ens) or "-")
        self.errnos[key] = self.errnos.get(key, 0) + 1
        count("sqlite errors %s" % key)
        # SQLITE_FULL: unixWrite got ENOSPC (or a short write; it logs
        # nothing); SQLITE_IOERR_WRITE/READ: a write or read failed with
        # another errno (EIO...): never allowed. The rest (fsync, ftruncate,
        # open...) are logged by os_unix.c with their errno: ENOSPC only.
        bad = [c for c in calls if c[0] != errno.ENOSPC]
        if bad or ename in ("SQLITE_IOERR_WRITE", "SQLITE_IOERR_READ", "SQLITE_CORRUPT",
                            "SQLITE_IOERR_SHORT_READ", "SQLITE_NOTADB"):
            raise Fault("%s: %s failed with %s (%s), not for want of room; os_unix.c: %s" % (
                self.name, what, ename, e, ["%s(%s): %s" % (c, p, os.strerror(en))
                                            for en, c, p in calls]))
        if ename not in ("SQLITE_FULL", "SQLITE_CANTOPEN") and not ename.startswith("SQLITE_IOERR"):
            raise Fault("%s: %s failed with %s (%s)" % (self.name, what, ename, e))
        if ename != "SQLITE_FULL" and not calls:
            raise Fault("%s: %s failed with %s (%s) and os_unix.c logged no errno" % (
                self.name, what, ename, e))

    def rollback_after_error(self):
        if self.conn.in_transaction:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error as e:
                self.failed(e, "ROLLBACK")

    def insert_tx(self):
        """One transaction; True when COMMIT returned."""
        tx = self.next_tx
        self.next_tx += 1
        stage = ["BEGIN"]
        try:
            run_tx(self.conn, tx, stage)
        except sqlite3.Error as e:
            stage = stage[0]
            self.failed(e, "tx %d %s" % (tx, stage))
            self.rollback_after_error()
            if stage == "COMMIT":
                self.settle_ambiguous({tx}, set(), "tx %d COMMIT failed" % tx)
            else:
                self.verify_live("after tx %d failed at %s" % (tx, stage))
            self.fulls += 1
            return False
        self.committed.add(tx)
        self.note("C %d" % tx)
        count("sqlite committed tx")
        self.committed_again()
        return True

    def committed_again(self):
        """A COMMIT returned: the WAL frames of a failed one are overwritten."""
        self.ambiguous -= self.wal_pending
        self.wal_pending.clear()

    def delete_tx(self, tx):
        try:
            self.conn.execute("BEGIN")
            self.conn.execute("DELETE FROM t WHERE tx=?", (tx,))
            self.conn.execute("COMMIT")
        except sqlite3.Error as e:
            self.failed(e, "delete of tx %d" % tx)
            self.rollback_after_error()
            self.settle_ambiguous(set(), {tx}, "delete of tx %d failed" % tx)
            return False
        self.committed.discard(tx)
        self.note("D %d" % tx)
        count("sqlite deleted tx")
        self.committed_again()
        return True

    def read_state(self, c):
        got = {}
        for tx, k, v in c.execute("SELECT tx, k, v FROM t ORDER BY tx, k").fetchall():
            got.setdefault(tx, []).append((k, v))
        return got

    def settle_ambiguous(self, added, removed, why):
        """After a failed COMMIT: what this connection sees now decides."""
        got = self.read_live("after " + why)
        for tx in added:
            if tx in got:
                log("  -- %s: yet the transaction is there (committed)" % why)
                self.committed.add(tx)
                self.ambiguous.add(tx)
                self.note("C? %d" % tx)
            elif self.mode == "wal":
                # its frames may be in the WAL, whole, with only the fsync
                # refused: a crash before the next commit overwrites them
                # may bring it back (WAL recovery), so either way till then
                self.ambiguous.add(tx)
                self.wal_pending.add(tx)
        for tx in removed:
            if tx not in got:
                log("  -- %s: yet the rows are gone (deleted)" % why)
                self.committed.discard(tx)
                self.ambiguous.add(tx)
                self.note("D? %d" % tx)
            elif self.mode == "wal":
                self.ambiguous.add(tx)
                self.wal_pending.add(tx)
        self.compare(got, "after " + why, live=True)

    def compare(self, got, what, live=False, inflight=()):
        present = set(got)
        missing = self.committed - present
        if not live:
            # after a crash: a transaction whose COMMIT failed may be either
            missing -= self.ambiguous
        extra = present - self.committed - (set() if live else self.ambiguous)
        check(not missing, "%s: all %d committed transactions present" % (what, len(self.committed)),
              "missing %s" % sorted(missing))
        check(not extra, "%s: no uncommitted transaction present%s" % (
            what, " (in flight at the kill: %s)" % sorted(inflight) if inflight else ""),
              "present but never committed: %s" % sorted(extra))
        bad = [tx for tx in present if got[tx] != tx_rows(tx)]
        nrows = sum(len(v) for v in got.values())
        check(not bad, "%s: the rows of all %d transactions exact (%d rows)" % (
            what, len(present), nrows), "transactions with wrong rows: %s" % sorted(bad)[:20])
        count("sqlite row checks", nrows)

    def integrity(self, c, what):
        r = c.execute("PRAGMA integrity_check").fetchall()
        count("sqlite integrity_checks")
        check(r == [("ok",)], "%s: PRAGMA integrity_check = ok" % what, repr(r[:10]))

    def verify_live(self, what):
        got = self.read_live(what)
        self.integrity(self.conn, what)
        self.compare(got, what, live=True)

    def verify_fresh(self, what, inflight=()):
        """A new connection (after a remount): hot journal / WAL recovery."""
        free0 = df_free(self.mnt)[0]
        try:
            self.open()
            self.read_state(self.conn)
        except sqlite3.Error as e:
            log("  -- %s: df free %d before the open, %d now; files %s" % (
                what, free0, df_free(self.mnt)[0],
                {f: os.path.getsize(os.path.join(self.mnt, f)) for f in os.listdir(self.mnt)}))
            self.failed(e, "the first read " + what)
            self.close()
            while True:
                self.usability("the database cannot be opened %s (opening it must write, a "
                               "hot journal's rollback or the -shm, and finds no room)" % what)
                try:
                    self.open()
                    self.read_state(self.conn)
                    break
                except sqlite3.Error as e:
                    self.failed(e, "the first read " + what)
                    self.close()
        self.integrity(self.conn, what)
        got = self.read_state(self.conn)
        self.compare(got, what, inflight=inflight)
        # the ambiguous ones are settled now
        for tx in self.ambiguous:
            if tx in got:
                self.committed.add(tx)
            else:
                self.committed.discard(tx)
        self.ambiguous.clear()
        self.wal_pending.clear()


def stream_kill(s, name, img, m, rng):
    """SIGKILL #R: at a random moment (20-150 ms) while transactions stream
    in; the one in flight then is allowed either way if its COMMIT had
    started, else must be absent."""
    delay = rng.uniform(0.02, 0.15)
    m.kill_later(delay)
    inflight = set()
    n = 0
    while True:
        tx = s.next_tx
        s.next_tx += 1
        stage = ["BEGIN"]
        try:
            run_tx(s.conn, tx, stage)
        except Killed:
            break
        except sqlite3.Error as e:
            if m.dead():
                break
            try:  # not the kill: handled as insert_tx would
                s.failed(e, "tx %d %s" % (tx, stage[0]))
                s.rollback_after_error()
                if stage[0] == "COMMIT":
                    s.settle_ambiguous({tx}, set(), "tx %d COMMIT failed" % tx)
            except Killed:
                tx = None  # (its fate was settled or it is ambiguous below)
                break
            s.fulls += 1
            continue
        if m.dead():
            # COMMIT returned with the kill under way: SQLite ignores a
            # directory it cannot open for the fsync after the journal's
            # unlink (unixDelete, unixSync: ENOTCONN there), so it may be
            # rolled back: either way
            break
        s.committed.add(tx)
        s.note("C %d" % tx)
        count("sqlite committed tx")
        s.committed_again()
        n += 1
    if tx is not None:
        if stage[0] == "COMMIT":
            s.ambiguous.add(tx)
            s.note("C? %d" % tx)
        else:
            inflight.add(tx)
    m.reap("%s: %.0f ms into a stream of transactions (%d committed in it, tx %s at %s)" % (
        name, delay * 1000, n, tx, stage[0]))
    s.close()
    fsck(img, "%s after SIGKILL #R" % name)
    m.start()
    amb = set(s.ambiguous)
    s.verify_fresh("%s after SIGKILL #R (random moment)" % name, inflight=inflight)
    for tx in amb:
        log("  -- %s: tx %d, whose COMMIT the kill cut, is %s" % (
            name, tx, "there" if tx in s.committed else "not there"))


def scenario_sqlite(name, mode, vol, img, mnt, m):
    s = SqliteRun(name, mode, vol, mnt, m)
    rng = s.rng
    m.start()
    make_ballast(mnt, rng)
    s.open()
    kill_at = rng.randrange(5, 20)
    kill2_at = kill_at + rng.randrange(5, 20)
    # 1. fill: SIGKILL #1 right after a COMMIT; SIGKILL #2 in the middle of a
    # big uncommitted transaction (spilled into the database / frames in the
    # WAL, and an UPDATE of a committed row); then on to SQLITE_FULL
    while s.next_tx <= 400:
        if not s.insert_tx():
            break
        if s.next_tx - 1 == kill_at:
            WATCH.arm(60, name + " kill after commit")
            m.kill("%s: after COMMIT of tx %d" % (name, kill_at))
            s.close()
            fsck(img, "%s after SIGKILL #1" % name)
            m.start()
            s.verify_fresh("%s after SIGKILL #1 (idle, after COMMIT of tx %d)" % (name, kill_at))
        if s.next_tx - 1 == kill2_at:
            tx = s.next_tx
            s.next_tx += 1
            c = s.conn
            victim = min(s.committed)
            stage = "BEGIN"
            try:
                c.execute("BEGIN")
                stage = "INSERT/UPDATE"
                for k in range(30):
                    c.execute("INSERT INTO t VALUES(?,?,?)", (tx, k, bytes(rng.randbytes(1200))))
                    c.execute("UPDATE t SET v=? WHERE tx=? AND k=0", (rng.randbytes(300), victim))
            except sqlite3.Error as e:
                s.failed(e, "the in-flight tx %d (%s)" % (tx, stage))
                log("  -- %s: the in-flight transaction stopped at %s: %s" % (name, stage, e))
            jr = s.path + ("-journal" if mode == "delete" else "-wal")
            check(os.path.exists(jr), "%s: transaction %d in flight (30 rows, tx %d's row "
                  "updated), %s %d bytes" % (name, tx, victim, os.path.basename(jr),
                                            os.path.getsize(jr) if os.path.exists(jr) else 0))
            WATCH.arm(60, name + " kill mid-transaction")
            m.kill("%s: transaction %d uncommitted" % (name, tx))
            s.close()
            fsck(img, "%s after SIGKILL #2" % name)
            m.start()
            s.verify_fresh("%s after SIGKILL #2 (mid-transaction)" % name, inflight={tx})
        if s.next_tx - 1 == kill2_at + 1:
            stream_kill(s, name, img, m, rng)
    check(s.fulls >= 1, "%s: the volume filled: SQLITE_FULL after %d committed transactions, "
          "df free %d of %d" % ((name, len(s.committed)) + df_free(mnt)),
          "400 transactions fit")
    count("sqlite volumes filled")
    s.verify_live("%s after the first SQLITE_FULL" % name)
    # 2. the database stays usable: delete transactions one at a time
    deleted = 0
    while True:
        for tx in sorted(s.committed)[:3]:
            if s.delete_tx(tx):
                deleted += 1
        log("  -- %s: %d of 3 deletes succeeded on the full volume (errors: %s)" % (
            name, deleted, s.errnos))
        if deleted:
            break
        s.usability("every DELETE of a transaction failed on the full volume (%s)" % s.errnos)
    check(deleted > 0, "%s: rows could be deleted (%d transactions)" % (name, deleted))
    s.verify_live("%s after the deletes" % name)
    try:
        s.conn.execute("VACUUM")
        log("  -- %s: VACUUM succeeded" % name)
        count("sqlite vacuum ok")
    except sqlite3.Error as e:
        s.failed(e, "VACUUM")
        s.rollback_after_error()
        log("  -- %s: VACUUM failed: %s" % (name, e))
        count("sqlite vacuum refused")
    s.read_live("after VACUUM")
    s.verify_live("%s after VACUUM" % name)
    more = 0
    while True:
        for _ in range(60):
            if not s.insert_tx():
                break
            more += 1
        if more:
            break
        s.usability("no insert fit after %d deletes and VACUUM" % deleted)
    check(more > 0, "%s: inserts work again after the deletes (%d more transactions)" % (name, more),
          "no insert fit")
    s.read_live("after the second fill")
    s.verify_live("%s after the second fill" % name)
    # 3. SIGKILL on the full volume, after the failed transaction
    WATCH.arm(60, name + " kill when full")
    m.kill("%s: on the full volume" % name)
    s.close()
    fsck(img, "%s after SIGKILL #3" % name)
    m.start()
    s.verify_fresh("%s after SIGKILL #3 (full volume)" % name)
    for _ in range(3):
        s.insert_tx()
    s.read_live("after 3 more transactions")
    s.verify_live("%s after 3 more transactions" % name)
    s.close()
    m.unmount(name + " clean unmount")
    fsck(img, name + " after the clean unmount")
    m.start()
    s.verify_fresh("%s after the clean unmount and remount" % name)
    s.close()
    m.unmount(name + " final unmount")
    fsck(img, name + " final")
    log("  -- %s: %d committed now, %d deleted; sqlite errors: %s" % (
        name, len(s.committed), sum(1 for l in open(s.oracle_path) if l.startswith("D")), s.errnos))


# ---------------------------------------------------------------- git
def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


ENOSPC_MSG = re.compile(r"No space left on device|Out of diskspace|unable to write new index file|"
                        r"unable to write|could not write|insufficient|"
                        r"failed to write commit object|cannot store|unable to create")


def scenario_git(name, vol, img, mnt, m):
    rng = random.Random("%d/%s" % (SEED, name))
    home = os.path.join(WORK, "home")
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", GIT_AUTHOR_DATE="2020-01-01T00:00:00",
               GIT_COMMITTER_DATE="2020-01-01T00:00:00")
    repo = os.path.join(mnt, "repo")

    def git(*args, ok=True):
        # core.fsync=all: a commit that returned is durable (objects, index,
        # refs fsynced), so a SIGKILL of the mount right after must keep it
        r = run(["git", "-c", "gc.auto=0", "-c", "init.defaultBranch=main", "-c", "core.fsync=all",
                 "-c", "core.fsyncMethod=fsync"] + list(args),
                "git " + args[0], cwd=repo, env=env)
        count("git commands")
        if ok and r.returncode != 0:
            raise Fault("%s: git %s exit %d: %s%s" % (name, " ".join(args), r.returncode,
                                                     r.stdout[-2000:], r.stderr[-2000:]))
        return r

    def verify_repo(what):
        r = git("fsck", "--full", "--strict", ok=False)
        bad = re.findall(r"^(?:error|fatal|missing|broken|bad).*$", r.stdout + r.stderr, re.M)
        count("git fsck --full")
        check(r.returncode == 0 and not bad, "%s %s: git fsck --full --strict" % (name, what),
              "exit %d: %s" % (r.returncode, (r.stdout + r.stderr)[-2000:]))
        logged = git("log", "--format=%H").stdout.split()
        want = [h for h, _ in reversed(commits)]
        check(logged == want, "%s %s: git log lists exactly the %d commits made" % (
            name, what, len(want)), "log %s\nmade %s" % (logged, want))
        for h, tree in commits:
            out = git("ls-tree", "-r", h).stdout
            got = {}
            for line in out.splitlines():
                meta, path = line.split("\t", 1)
                got[path] = meta.split()[2]
            if got != tree:
                raise Fault("%s: commit %s: its tree differs from what was committed: %s" % (
                    name, h[:12], sorted(set(got.items()) ^ set(tree.items()))[:10]))
            count("git trees compared")
        check(True, "%s %s: ls-tree of all %d commits equal to what was committed" % (
            name, what, len(commits)))

    m.start()
    make_ballast(mnt, rng, 2)
    free0, total = df_free(mnt)
    os.mkdir(repo)
    git("init", "-q")
    work = {}        # path -> bytes: the work tree as written
    commits = []     # (hash, {path: blob id})
    kill_at = rng.randrange(3, 9)
    per_commit = max(4000, free0 // 30)
    failures = []
    n = 0
    while n < 80:
        n += 1
        # new files, a rewrite, sometimes a removal
        for i in range(rng.randrange(3, 8)):
            p = "d%d/f%03d_%d.txt" % (rng.randrange(5), n, i)
            work[p] = rng.randbytes(rng.randrange(per_commit // 10, per_commit // 4))
        if work and rng.random() < 0.5:
            p = rng.choice(sorted(work))
            work[p] = rng.randbytes(rng.randrange(100, 2000))
        if len(work) > 6 and rng.random() < 0.3:
            del work[rng.choice(sorted(work))]
        wrote_all = True
        try:
            present = set()
            for d, _, fs in os.walk(repo):
                if "/.git" in d + "/" and (d + "/").startswith(repo + "/.git/"):
                    continue
                for f in fs:
                    present.add(os.path.relpath(os.path.join(d, f), repo))
            for p in present - set(work) - {".git"}:
                if not p.startswith(".git/"):
                    os.unlink(os.path.join(repo, p))
            for p, data in work.items():
                os.makedirs(os.path.dirname(os.path.join(repo, p)), exist_ok=True)
                with open(os.path.join(repo, p), "wb") as f:
                    f.write(data)
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise Fault("%s: writing the work tree for commit %d: %s (not ENOSPC)" % (name, n, e))
            wrote_all = False
            failures.append("work tree write: %s" % e)
        if wrote_all:
            r1 = git("add", "-A", ok=False)
            r = r1 if r1.returncode else git("commit", "-q", "-m", "commit %d" % n, ok=False)
            if r.returncode == 0:
                h = git("rev-parse", "HEAD").stdout.strip()
                commits.append((h, {p: git_blob_id(d) for p, d in work.items()}))
                count("git commits")
                if len(commits) == kill_at:
                    WATCH.arm(60, name + " kill after commit")
                    m.kill("%s: right after commit %d (git core.fsync=all)" % (name, kill_at))
                    fsck(img, "%s after SIGKILL" % name)
                    m.start()
                    verify_repo("after SIGKILL right after commit %d" % kill_at)
                    WATCH.arm(SCENARIO_TIMEOUT, name)
                continue
            msg = (r.stdout + r.stderr).strip()
            failures.append(msg)
            # git's ref update says "couldn't write '...main.lock'" without
            # errno (seed 26 on 1 MiB of nor-m25p16): then the volume itself
            # must be full, as reset_hard asks below
            full = True if ENOSPC_MSG.search(msg) else volume_full(mnt, 4096)
            if "Input/output error" in msg or full is not True:
                raise Fault("%s: commit %d failed, not for want of room (df free %d; the "
                            "volume: %s): %s" % (name, n, df_free(mnt)[0], full, msg[-1500:]))
        # full: the repository must still be sound, HEAD the last commit
        log("  -- %s: commit %d failed (df free %d of %d): %s" % (
            name, n, df_free(mnt)[0], total, failures[-1].splitlines()[-1][:200]))
        for lock in ("index.lock", "HEAD.lock", "refs/heads/main.lock"):
            check(not os.path.exists(os.path.join(repo, ".git", lock)),
                  "%s: no .git/%s left by the failed commit" % (name, lock))
        break
    check(failures, "%s: the volume filled: a commit failed after %d commits" % (name, len(commits)),
          "80 commits fit")
    check(len(commits) >= 3, "%s: at least 3 commits before full (%d)" % (name, len(commits)))
    head = git("rev-parse", "HEAD").stdout.strip()
    check(head == commits[-1][0], "%s: HEAD is the last successful commit %s" % (name, head[:12]),
          "HEAD %s, last %s" % (head, commits[-1][0]))
    r = git("fsck", "--full", "--strict", ok=False)
    bad = re.findall(r"^(?:error|fatal|missing|broken|bad).*$", r.stdout + r.stderr, re.M)
    check(r.returncode == 0 and not bad, "%s: git fsck --full --strict on the full volume" % name,
          "exit %d: %s" % (r.returncode, (r.stdout + r.stderr)[-2000:]))
    # what a user does: remove the files the failed commit was to add (or
    # had changed), then restore the work tree to HEAD
    last = commits[-1][1]
    for p, d in list(work.items()):
        if p not in last or git_blob_id(d) != last[p]:
            try:
                os.unlink(os.path.join(repo, p))
            except FileNotFoundError:
                pass
    def reset_hard(why):
        for attempt in range(3):
            r = git("reset", "-q", "--hard", "HEAD", ok=False)
            if r.returncode == 0:
                break
            msg = (r.stdout + r.stderr).strip()
            # git's checkout says "unable to write file X" without errno
            full = True if re.search("No space left|Out of diskspace", msg) else volume_full(mnt, 4096)
            check(ENOSPC_MSG.search(msg) and full is True and "Input/output" not in msg,
                  "%s: git reset --hard failed for room only" % name,
                  "%s (the volume: %s)" % (msg, full))
            give_room(name, mnt, "git reset --hard HEAD %s: %s" % (why, msg.splitlines()[-1]))
        check(r.returncode == 0, "%s: git reset --hard HEAD %s" % (name, why),
              (r.stdout + r.stderr)[-1000:])
        git("clean", "-fdq")
        work = {}
        for p in commits[-1][1]:  # the files reset wrote back
            with open(os.path.join(repo, p), "rb") as f:
                work[p] = f.read()
        return work

    work = reset_hard("after the failed commit, with its new files removed")
    victims = sorted(work)[: len(work) // 3]
    for p in victims:
        os.unlink(os.path.join(repo, p))
        del work[p]
    with open(os.path.join(repo, "after-full.txt"), "wb") as f:
        f.write(b"room again\n")
    work["after-full.txt"] = b"room again\n"
    r1 = git("add", "-A", ok=False)
    r = r1 if r1.returncode else git("commit", "-q", "-m", "after full", ok=False)
    if r.returncode == 0:
        commits.append((git("rev-parse", "HEAD").stdout.strip(),
                        {p: git_blob_id(d) for p, d in work.items()}))
        count("git commits")
        check(True, "%s: a commit after removing a third of the files" % name)
    else:
        msg = (r.stdout + r.stderr).strip()
        check(ENOSPC_MSG.search(msg) and "Input/output" not in msg,
              "%s: the commit after removing files failed for room only" % name, msg[-1500:])
        work = reset_hard("after the second failed commit")
    m.unmount(name + " clean unmount")
    fsck(img, name + " after the unmount")
    m.start()
    verify_repo("after the clean unmount, fsck, remount")
    for p, data in work.items():
        with open(os.path.join(repo, p), "rb") as f:
            if f.read() != data:
                raise Fault("%s: work tree file %s differs from what was written" % (name, p))
    check(True, "%s: the %d work tree files equal to HEAD's content" % (name, len(work)))
    m.unmount(name + " final unmount")
    fsck(img, name + " final")


# ---------------------------------------------------------------- tar
TREE_FILES = []


def make_tarball():
    tb = os.path.join(WORK, "docs.tar")
    src = "/usr/share/doc"
    files = []
    for d, dirs, fs in os.walk(src):
        dirs.sort()
        for f in sorted(fs):
            p = os.path.join(d, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            sz = os.path.getsize(p)
            if 200 <= sz <= 12000:
                files.append(os.path.relpath(p, src))
        if len(files) >= 400:
            break
    files = files[:400]
    lst = os.path.join(WORK, "docs.list")
    with open(lst, "w") as f:
        f.write("\n".join(files) + "\n")
    r = run(["tar", "cf", tb, "-C", src, "--no-recursion", "-T", lst], "tar cf")
    if r.returncode != 0:
        raise SystemExit("making the tarball: " + r.stderr)
    TREE_FILES[:] = files
    total = sum(os.path.getsize(os.path.join(src, p)) for p in files)
    log("tarball: %d files, %d bytes of data, from %s" % (len(files), total, src))
    return tb, src


def tar_extract(name, tb, dest, extra, mnt):
    r = run(["tar", "-xvf", tb, "-C", dest] + extra, "tar x", timeout=120)
    listed = [l for l in r.stdout.splitlines() if l]
    errs = {}
    for l in r.stderr.splitlines():
        if l.endswith(": skipping existing file"):  # --skip-old-files, verbose
            continue
        mm = re.match(r"tar: (.*): Wrote only \d+ of \d+ bytes$", l)
        if mm:  # a short write(2): how a write that does not fit ends
            errs.setdefault(mm.group(1), []).append("short write: No space left on device (%s)" % l)
            continue
        mm = re.match(r"tar: (.*?): (Cannot [^:]*|[^:]*): (.*)$", l)
        if mm:
            errs.setdefault(mm.group(1), []).append(mm.group(2) + ": " + mm.group(3))
        elif l.startswith("tar: Exiting with failure status"):
            pass
        else:
            raise Fault("%s: tar said %r" % (name, l))
    # only ENOSPC, or ENOENT for a file whose directory could not be made
    failed_dirs = [p for p, e in errs.items() if any("No space" in x for x in e)]
    for p, e in errs.items():
        for x in e:
            if "No space left on device" in x:
                continue
            if "No such file or directory" in x and any(
                    p.startswith(d.rstrip("/") + "/") for d in failed_dirs) or "No such file" in x \
                    and not os.path.isdir(os.path.join(dest, os.path.dirname(p))):
                continue
            raise Fault("%s: tar: %s: %s (not ENOSPC)" % (name, p, x))
    count("tar error lines", sum(len(e) for e in errs.values()))
    return r.returncode, listed, errs


def scenario_tar(name, vol, img, mnt, m, tb, src):
    m.start()
    dest = os.path.join(mnt, "x")
    os.mkdir(dest)
    rc, listed, errs = tar_extract(name, tb, dest, [], mnt)
    listed_set = set(listed)
    complete = {p for p in TREE_FILES if p in listed_set and p not in errs}
    uncertain = {p for p in TREE_FILES if p in errs}
    log("  -- %s: tar exit %d, %d files listed, %d complete, %d with errors, df free %d" % (
        name, rc, len(listed), len(complete), len(uncertain), df_free(mnt)[0]))
    check(rc != 0 and uncertain, "%s: the volume filled (tar reported ENOSPC)" % name,
          "all %d files fit" % len(complete))
    check(len(complete) >= 20, "%s: at least 20 files extracted completely (%d)" % (name, len(complete)))

    def compare(what, complete, uncertain):
        bad = []
        for p in sorted(complete):
            with open(os.path.join(src, p), "rb") as f:
                want = f.read()
            try:
                with open(os.path.join(dest, p), "rb") as f:
                    got = f.read()
            except OSError as e:
                bad.append("%s: %s" % (p, e))
                continue
            if got != want:
                bad.append("%s: %d bytes, want %d" % (p, len(got), len(want)))
        count("tar file compares", len(complete))
        check(not bad, "%s: %s: all %d completely extracted files equal to the originals" % (
            name, what, len(complete)), "%d differ: %s" % (len(bad), bad[:10]))
        # a file tar complained about: absent, or a prefix of the original
        odd = []
        for p in sorted(uncertain):
            fp = os.path.join(dest, p)
            if not os.path.exists(fp):
                continue
            with open(os.path.join(src, p), "rb") as f:
                want = f.read()
            with open(fp, "rb") as f:
                got = f.read()
            if want[:len(got)] != got:
                odd.append("%s: %d bytes, not a prefix of the original %d" % (p, len(got), len(want)))
        check(not odd, "%s: %s: the %d files tar reported errors for are absent or a prefix of "
              "the original" % (name, what, len(uncertain)), "%s" % odd[:10])
        # nothing else in the tree
        extra = []
        for d, _, fs in os.walk(dest):
            for f in fs:
                rel = os.path.relpath(os.path.join(d, f), dest)
                if rel not in complete and rel not in uncertain:
                    extra.append(rel)
        check(not extra, "%s: %s: no unexpected files" % (name, what), str(extra[:10]))

    compare("on the mount", complete, uncertain)
    m.unmount(name + " clean unmount")
    fsck(img, name + " after the unmount")
    m.start()
    compare("after remount", complete, uncertain)
    # delete half (and the incomplete ones), extract again
    gone = set(sorted(complete)[::2]) | uncertain
    def tree_bytes():
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(dest) for f in fs)
    before = tree_bytes()
    # in a seeded order (the order matters: seen, nor-w25q128 512K: after
    # 62 removes freeing 175,785 bytes a new file got 28,416 bytes in one
    # order, 110,336 in another, until one more remove or a remount)
    order = sorted(gone)
    random.Random("%d/%s/rm" % (SEED, name)).shuffle(order)
    for p in order:
        try:
            os.unlink(os.path.join(dest, p))
        except FileNotFoundError:
            if p not in uncertain:  # tar may not have made one it complained about
                raise Fault("%s: %s, extracted whole, is gone" % (name, p))
    freed = before - tree_bytes()
    keep = complete - gone
    rc2, listed2, errs2 = tar_extract(name, tb, dest, ["--skip-old-files"], mnt)
    l2 = set(listed2)
    again = {p for p in gone if p in l2 and p not in errs2}
    unc2 = {p for p in TREE_FILES if p in errs2}
    log("  -- %s: second tar exit %d: %d removed, %d extracted again completely, %d with "
        "errors, df free %d" % (name, rc2, len(gone), len(again), len(unc2), df_free(mnt)[0]))
    # what the second extraction wrote (whole files and the partial ones it
    # complained about) against what the removal freed
    wrote = tree_bytes() - (before - freed)
    check(again and wrote >= freed // 4, "%s: the second extraction wrote %d bytes (%d files "
          "whole) where the removal freed %d bytes" % (name, wrote, len(again), freed))
    complete2 = keep | again
    compare("second extraction, on the mount", complete2, unc2)
    m.unmount(name + " clean unmount 2")
    fsck(img, name + " after the second unmount")
    m.start()
    compare("second extraction, after remount", complete2, unc2)
    # 3. a crash in the middle of an extraction: x removed (no sync), tar
    # extracting into y, the mount SIGKILLed 20-250 ms in. Nothing of it was
    # synced, so any file may be shorter or gone; but each file there must
    # hold its original's bytes (a prefix), never bytes from elsewhere
    rng = random.Random("%d/%s" % (SEED, name))
    shutil.rmtree(dest)
    ydir = os.path.join(mnt, "y")
    os.mkdir(ydir)
    tp = subprocess.Popen(["tar", "-xf", tb, "-C", ydir], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    delay = rng.uniform(0.02, 0.25)
    time.sleep(delay)
    running = tp.poll() is None
    WATCH.arm(60, name + " kill mid-extraction")
    m.kill("%s: %.0f ms into an extraction (tar %s)" % (name, delay * 1000,
                                                      "still running" if running else "done"))
    try:
        tp.wait(60)
    except subprocess.TimeoutExpired:
        tp.kill()
        raise Fault("%s: tar did not end 60 s after the mount was killed" % name)
    fsck(img, name + " after SIGKILL mid-extraction")
    m.start()
    bad, zeros, counts = [], [], {"whole": 0, "prefix": 0}
    for root, must_whole in ((dest, complete2), (ydir, set())):
        for d, _, fs in os.walk(root):
            for f in fs:
                rel = os.path.relpath(os.path.join(d, f), root)
                if rel not in TREE_FILES:
                    bad.append("%s: not in the tarball" % os.path.join(os.path.basename(root), rel))
                    continue
                with open(os.path.join(src, rel), "rb") as fh:
                    want = fh.read()
                with open(os.path.join(d, f), "rb") as fh:
                    got = fh.read()
                where = os.path.join(os.path.basename(root), rel)
                if got == want:
                    counts["whole"] += 1
                elif rel in must_whole and root == dest:
                    bad.append("%s: came back after the rm (synced before), %d bytes of %d, "
                               "not whole" % (where, len(got), len(want)))
                elif want[:len(got)] == got:
                    counts["prefix"] += 1
                else:
                    i = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
                             min(len(got), len(want)))
                    if not got[i:].strip(b"\0") and len(got) <= len(want):
                        zeros.append("%s: %d bytes, zeros from %d" % (where, len(got), i))
                    else:
                        bad.append("%s: %d bytes (original %d), differs at %d" % (
                            where, len(got), len(want), i))
    count("tar files checked after a crash", counts["whole"] + counts["prefix"] + len(zeros))
    log("  -- %s: after the crash: %d files whole, %d a prefix, %d zero-filled past a prefix%s" % (
        name, counts["whole"], counts["prefix"], len(zeros), (": " + "; ".join(zeros[:5])) if zeros else ""))
    if zeros:
        count("tar files zero-filled after a crash", len(zeros))
    check(not bad, "%s: after SIGKILL mid-extraction: every file holds its original's bytes "
          "(%d whole, %d a prefix)" % (name, counts["whole"], counts["prefix"]),
          "%d files with foreign bytes: %s" % (len(bad), bad[:10]))
    m.unmount(name + " final unmount")
    fsck(img, name + " final")


# ---------------------------------------------------------------- fio
def scenario_fio(name, vol, img, mnt, m):
    m.start()
    free, total = df_free(mnt)
    size = int(free * 0.9) // 4096 * 4096
    args = ["fio", "--name=v", "--directory=" + mnt, "--filename=fio.dat", "--size=%d" % size,
            "--bs=4k", "--rw=randwrite", "--verify=crc32c", "--ioengine=sync",
            "--fallocate=none", "--randseed=%d" % (SEED + 11), "--output-format=terse",
            "--verify_state_save=0"]

    def fio(extra, what):
        r = run(args + extra, "fio", timeout=120, cwd=WORK)
        count("fio runs")
        out = r.stdout + r.stderr
        terse = [l.split(";") for l in r.stdout.splitlines() if l.startswith("3;fio")]
        read_kb = int(terse[0][5]) if terse and len(terse[0]) > 5 else -1
        check(r.returncode == 0 and "verify failed" not in out and "bad magic" not in out
              and "fio: " not in r.stderr and read_kb >= size // 1024,
              "%s: %s (%d KiB read back and verified)" % (name, what, read_kb),
              "exit %d: %s" % (r.returncode, out[-2500:]))

    fio(["--do_verify=1", "--fsync=16", "--end_fsync=1"],
        "fio randwrite %d bytes (90%% of df free %d of %d) with crc32c verify" % (size, free, total))
    WATCH.arm(60, name + " kill")
    m.kill(name + ": after fio's end_fsync")
    fsck(img, name + " after SIGKILL")
    m.start()
    fio(["--verify_only=1"], "after SIGKILL and remount: fio --verify_only")
    # the rest of the volume
    r = run(["dd", "if=/dev/urandom", "of=" + os.path.join(mnt, "fill"), "bs=16k", "count=4096",
             "conv=fsync"], "dd")
    check(r.returncode != 0 and "No space left on device" in r.stderr,
          "%s: dd fills the rest of the volume: ENOSPC (df free now %d)" % (name, df_free(mnt)[0]),
          "exit %d: %s" % (r.returncode, r.stderr[-500:]))
    fio(["--verify_only=1"], "a full volume: fio --verify_only")
    m.unmount(name + " clean unmount")
    fsck(img, name + " after the unmount")
    m.start()
    fio(["--verify_only=1"], "after unmount, fsck, remount: fio --verify_only")
    os.unlink(os.path.join(mnt, "fill"))
    m.unmount(name + " final unmount")
    fsck(img, name + " final")


# ---------------------------------------------------------------- main
def main():
    if not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None:
        log("skipped: no /dev/fuse or fusermount3")
        sys.exit(77)
    probe = subprocess.run([CAIRN, "mount", "/nonexistent", "/nonexistent"],
                           capture_output=True, text=True)
    if "built without FUSE" in probe.stdout + probe.stderr:
        log("skipped: cairn built without FUSE (install libfuse3-dev)")
        sys.exit(77)
    for prog in ("git", "tar"):
        if shutil.which(prog) is None:
            log("skipped: %s not installed" % prog)
            sys.exit(77)
    os.makedirs(WORK, exist_ok=True)
    mnt = os.path.join(WORK, "mnt")
    if mounted(mnt):
        subprocess.run(["fusermount3", "-u", "-z", mnt])
    os.makedirs(mnt, exist_ok=True)
    WATCH.start()
    tb, src = make_tarball()
    scenarios = [("sqlite-delete", lambda n, v, i, m: scenario_sqlite(n, "delete", v, i, mnt, m)),
                 ("sqlite-wal", lambda n, v, i, m: scenario_sqlite(n, "wal", v, i, mnt, m)),
                 ("git", lambda n, v, i, m: scenario_git(n, v, i, mnt, m)),
                 ("tar", lambda n, v, i, m: scenario_tar(n, v, i, mnt, m, tb, src))]
    if shutil.which("fio"):
        scenarios.append(("fio", lambda n, v, i, m: scenario_fio(n, v, i, mnt, m)))
    else:
        log("fio not installed: the fio scenario is skipped")
    for vname, geo in VOLUMES:
        if VOL_FILTER and VOL_FILTER not in vname:
            continue
        for sname, fn in scenarios:
            if SCEN_FILTER and SCEN_FILTER not in sname:
                continue
            name = "%s@%s" % (sname, vname)
            img = os.path.join(WORK, name + ".img")
            mlog = img + ".mount.log"
            for p in (img, mlog):
                if os.path.exists(p):
                    os.unlink(p)
            t = time.time()
            log("== %s (seed %d)" % (name, SEED))
            r = subprocess.run([CAIRN, "mkfs", "-q"] + geo + [img], capture_output=True, text=True)
            if r.returncode != 0:
                FAULTS.append((name, "mkfs failed: " + r.stderr))
                continue
            m = Mount(img, mnt, mlog)
            WATCH.arm(SCENARIO_TIMEOUT, name)
            try:
                fn(name, vname, img, m)
                count("scenarios passed")
            except Exception as e:
                note = WATCH.note
                msg = str(e)
                if not isinstance(e, Fault):
                    import traceback
                    msg = "%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc())
                if note:
                    msg = note + "\n  then: " + msg
                log("  FAULT: " + msg)
                m.abandon()
                fdir = os.path.join(WORK, "faults")
                os.makedirs(fdir, exist_ok=True)
                for p in (img, mlog, os.path.join(WORK, name + ".oracle")):
                    if os.path.exists(p):
                        shutil.copy(p, fdir)
                log("  saved: %s/%s.img and .img.mount.log" % (fdir, name))
                log("  mount log tail:\n" + "".join("    " + l for l in m.tail(25).splitlines(True)))
                FAULTS.append((name, msg))
            finally:
                WATCH.disarm()
                m.abandon()
            log("   (%s: %.1f s)" % (name, time.time() - t))
    log("")
    log("real_programs: %d checks passed, %d faults, %.1f s, seed %d" % (
        CHECKS["passed"], len(FAULTS), time.time() - T0, SEED))
    for k in sorted(COUNTS):
        log("  %-40s %d" % (k, COUNTS[k]))
    for name, msg in FAULTS:
        log("FAULT %s: %s" % (name, msg.splitlines()[0][:300]))
    for msg in USABILITY:
        log("USABILITY %s" % msg)
    warn = os.environ.get("RP_USABILITY") == "warn"
    sys.exit(1 if FAULTS or (USABILITY and not warn) else 0)


main()
