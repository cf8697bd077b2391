#!/usr/bin/env python3
"""Code size and worst-case stack of the cairn core on Cortex-M3, with littlefs's beside it.

Run through bench/footprint.sh (python3 bench/footprint.py [arm-none-eabi-gcc]
from the repository root). Compiles src/*.c per configuration, sums
arm-none-eabi-size per object, and walks the call graph GCC writes with
-fcallgraph-info=su (.ci, VCG) using the frame sizes of -fstack-usage (.su).
Prints Markdown; measures only, never fails the build.

Calls through function pointers: a call on a `dev->` line is the port's device
callback and counts 0 bytes; any other indirect call is resolved to the
functions passed by name to the function holding it (cn_log_scan(fs,
replay_record, ...)); what stays unresolved (the user's cairn_check report_fn)
counts 0 and is listed. Library calls (memcpy, __aeabi_*) count 0.
A call cycle is reported; depths count each function once per chain.
FOOTPRINT_CUT="caller>callee ..." leaves calls known to be infeasible out of
the stack analysis (what-if figures).

littlefs beside cairn: bench/lfs_sdist.py fetches littlefs's lfs.c, lfs.h,
lfs_util.c and lfs_util.h from the source distribution of the littlefs-python
version pinned in bench/requirements.txt (into build/bench-cache/, not into the
repository); they are compiled with the same compiler and CC_FLAGS as cairn and
measured the same way (its cfg->read/prog/erase/sync are the port's callbacks,
0 B; its callbacks to itself are resolved as cairn's are). LFS_CONFIGS names
the littlefs defines: LFS_NO_MALLOC as cairn's CAIRN_NO_MALLOC (buffers from the
caller), LFS_NO_DEBUG/WARN/ERROR (cairn has no logging), asserts left on as in
cairn's build (neither defines NDEBUG); the second row drops the asserts.
Without the sources (no network, no pip) the littlefs rows say why.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

CODE_BUDGET, STACK_BUDGET = 22528, 640
CC_FLAGS = ("-Os -mcpu=cortex-m3 -mthumb -std=c99 -ffunction-sections -fdata-sections "
            "-fstack-usage -fcallgraph-info=su").split()
FLAGS = CC_FLAGS + ["-Iinclude", "-DCAIRN_NO_MALLOC"]
CONFIGS = [("default", []),
           ("+NO_CHECK", ["-DCAIRN_NO_CHECK"]),
           ("+NO_CHECK+NO_ATTRS", ["-DCAIRN_NO_CHECK", "-DCAIRN_NO_ATTRS"]),
           ("minimal", ["-DCAIRN_NO_CHECK", "-DCAIRN_NO_ATTRS", "-DCAIRN_NO_RING",
                        "-DCAIRN_NO_BD"])]
NODE = re.compile(r'node: \{ title: "([^"]*)" label: "([^"]*)"')
EDGE = re.compile(r'edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)"(?: label: "([^"]*)")?')
FUNC_DEF = re.compile(r'^(?!typedef)[A-Za-z_][\w \t*]*?\b(\w+)\s*\(')  # at column 0
API_DECL = re.compile(r'^(?!typedef)[A-Za-z_][\w \t*]*?\b(cairn_\w+)\s*\(', re.M)
LFS_API_DECL = re.compile(r'^(?!typedef)[A-Za-z_][\w \t*]*?\b(lfs_\w+)\s*\(', re.M)
LFS_BASE = ["-DLFS_NO_MALLOC", "-DLFS_NO_DEBUG", "-DLFS_NO_WARN", "-DLFS_NO_ERROR"]
LFS_CONFIGS = [("asserts on, as cairn's", LFS_BASE),
               ("+LFS_NO_ASSERT", LFS_BASE + ["-DLFS_NO_ASSERT"])]


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def build(cc, defs, out, sources=None, flags=None):
    """Compiles every src/*.c (or sources) into out; returns the objects."""
    objs = []
    for src in sources or sorted(glob.glob("src/*.c")):
        obj = os.path.join(out, os.path.basename(src)[:-2] + ".o")
        r = subprocess.run([cc, *(flags or FLAGS), *defs, "-c", src, "-o", obj],
                           capture_output=True, text=True)
        if r.returncode:
            print(f"**compile failed: {src}**\n```\n{r.stderr.strip()}\n```")
        else:
            objs.append(obj)
    return objs


def sizes(cc, objs):
    """{object: (text, data, bss)} from arm-none-eabi-size."""
    size = re.sub(r"gcc$", "size", cc)
    rows = subprocess.run([size, *objs], capture_output=True, text=True).stdout.splitlines()[1:]
    return {os.path.basename(r.split()[5]): tuple(int(x) for x in r.split()[:3]) for r in rows}


def largest_functions(cc, objs, n=10):
    """[(bytes, function, object)] of the n biggest code symbols."""
    nm, rows = re.sub(r"gcc$", "nm", cc), []
    for o in objs:
        out = subprocess.run([nm, "-S", o], capture_output=True, text=True).stdout
        rows += [(int(sz, 16), name, os.path.basename(o))
                 for _, sz, kind, name in (l.split() for l in out.splitlines() if len(l.split()) == 4)
                 if kind in "tT"]
    return sorted(rows, reverse=True)[:n]


def args_of(text, start):
    """Top-level arguments of the call whose '(' is at text[start]."""
    depth, args, cur = 0, [], ""
    for ch in text[start:]:
        if ch in "([{":
            depth += 1
            if depth == 1:
                continue
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return args + [cur.strip()]
        if ch == "," and depth == 1:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return args


class Graph:
    """The static call graph of the objects in out, with frame sizes. sources are
    the .c files compiled there (searched for callback arguments); the function
    pointers declared in dev_header are the port's device callbacks."""

    def __init__(self, out, cut=(), sources=None, dev_header="include/cairn_device.h"):
        self.sources = sources or sorted(glob.glob("src/*.c"))
        su = {}
        for f in glob.glob(os.path.join(out, "*.su")):
            for line in read(f).splitlines():
                loc, n, qual = line.split("\t")
                path, lineno, _, name = loc.split(":", 3)
                su[(path, name)] = (int(n), qual, f"{path}:{lineno}")
        self.frame, self.where, self.dynamic, raw = {}, {}, [], {}
        for f in glob.glob(os.path.join(out, "*.ci")):
            text = read(f)
            for title, label in NODE.findall(text):
                parts = label.split("\\n")
                if len(parts) == 3 and "bytes" in parts[2]:  # defined here
                    path, name = parts[1].split(":")[0], parts[0]
                    n, qual, where = su.get((path, name), (int(parts[2].split()[0]), "?", parts[1]))
                    self.frame[title], self.where[title] = n, where
                    if qual != "static":
                        self.dynamic.append(f"{name} ({qual})")
            for src, dst, site in EDGE.findall(text):
                raw.setdefault(src, []).append((dst, site))
        # resolve calls through pointers; calls[f] = [(callee, "*" if via a pointer)]
        self.dev_members = re.findall(r"\(\s*\*\s*(\w+)\s*\)\s*\(", read(dev_header))
        self.indirect, self.library, self.calls = {}, set(), {}
        for src, edges in raw.items():
            calls = self.calls.setdefault(src, [])
            for dst, site in edges:
                if dst == "__indirect_call":
                    self.indirect[site], targets = self.callbacks(site)
                    new = [(t, "*") for t in targets]
                else:
                    new = [(dst, "")]
                    if dst not in self.frame:
                        self.library.add(dst)
                for c in new:
                    if c not in calls and f"{self.name(src)}>{self.name(c[0])}" not in cut:
                        calls.append(c)
        self.scc = sccs(self.calls)
        self.memo = {}

    @staticmethod
    def name(title):
        return title.rsplit(":", 1)[-1]

    def callbacks(self, site):
        """(description, targets) of the indirect call at site 'path:line:col'."""
        path, line = site.split(":")[:2]
        lines = read(path).splitlines()
        if re.search(rf"(->|\.)\s*({'|'.join(self.dev_members)})\s*\(", lines[int(line) - 1]):
            return "device callback (the port's, counted 0 B)", ["<dev callback>"]
        holder = enclosing(lines, int(line))
        found = self.passed_to(holder, {holder})
        if found:
            return "core callback, resolved to " + ", ".join(self.name(t) for t in found), found
        return f"pointer held by {holder}, not the core's (counted 0 B)", ["<callback>"]

    def passed_to(self, holder, seen):
        """The functions passed by name to holder. A call of holder that passes
        none but hands on a function-pointer parameter of its caller
        (lfs_fs_traverse_ passing its cb to lfs_ctz_traverse) counts the
        functions passed to that caller in turn."""
        found, relays = [], []
        for src in self.sources:
            text = read(src)
            lines = text.splitlines()
            for m in re.finditer(rf"\b{holder}\s*\(", text):
                lineno = text.count("\n", 0, m.start()) + 1
                if FUNC_DEF.match(lines[lineno - 1]):  # its definition or a prototype
                    continue
                named = [t for a in args_of(text, m.end() - 1)
                         if (t := next((t for t in (f"{src}:{a}", a) if t in self.frame), None))]
                found += [t for t in named if t not in found]
                caller = enclosing(lines, lineno)
                handed_on = set(args_of(text, m.end() - 1)) & pointer_params(lines, lineno)
                if not named and handed_on and caller not in seen:
                    relays.append(caller)
        for caller in dict.fromkeys(relays):
            seen.add(caller)
            found += [t for t in self.passed_to(caller, seen) if t not in found]
        return found

    def worst(self, t, seen=frozenset()):
        """(bytes, path) of the deepest chain from t in which no function repeats.
        Only the functions of t's own cycle (SCC) that are already on the chain
        matter, so that is the memo key."""
        key = (t, seen & self.scc.get(t, frozenset()))
        if key not in self.memo:
            best = (0, [])
            for dst, via in self.calls.get(t, []):
                if dst not in seen and dst != t:
                    n, path = self.worst(dst, seen | {t})
                    if n > best[0] or not best[1]:
                        best = (n, [via + path[0]] + path[1:])
            n = self.frame.get(t, 0)
            self.memo[key] = (n + best[0], [f"{self.name(t)}({n})"] + best[1])
        return self.memo[key]

    def recursion(self):
        """Cycles: [(members, the members every cycle passes through)]."""
        out = []
        for members in {frozenset(m) for m in self.scc.values()}:
            rest = lambda x: {s: [c for c in cs if c[0] != x] for s, cs in self.calls.items() if s != x}
            cuts = [x for x in members if all(len(m) < 2 for m in sccs(rest(x)).values())]
            out.append((sorted(self.name(x) for x in members), sorted(self.name(x) for x in cuts)))
        return out


def enclosing(lines, lineno):
    """The function whose definition holds line lineno (1-based) of lines."""
    return next((m.group(1) for l in reversed(lines[:lineno]) if (m := FUNC_DEF.match(l))), "?")


def pointer_params(lines, lineno):
    """Names of the function-pointer parameters of the function holding line lineno."""
    start = next((i for i in range(lineno - 1, -1, -1) if FUNC_DEF.match(lines[i])), None)
    if start is None:
        return set()
    text = "\n".join(lines[start:lineno])
    params = args_of(text, text.index("("))
    return {m.group(1) for p in params if (m := re.search(r"\(\s*\*\s*(\w+)\s*\)", p))}


def sccs(calls):
    """{node: frozenset of its strongly connected component}, cyclic ones only (Tarjan)."""
    index, low, stack, out = {}, {}, [], {}
    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w, _ in calls.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while not comp or comp[-1] != v:
                comp.append(stack.pop())
            if len(comp) > 1 or any(w == v for w, _ in calls.get(v, [])):
                out.update({c: frozenset(comp) for c in comp})
    sys.setrecursionlimit(10000)
    for v in list(calls):
        if v not in index:
            visit(v)
    return out


def totals(sz):
    """(text, data, bss) summed over the objects."""
    return tuple(sum(v[i] for v in sz.values()) for i in range(3))


def deepest(stack):
    """(function, bytes) of the deepest public function; ("-", 0) if none."""
    if not stack:
        return "-", 0
    f, (n, _) = max(stack.items(), key=lambda kv: kv[1][0])
    return f, n


def struct_sizes(cc, flags, src, out, names=("lfs_t", "lfs_file_t")):
    """{type: sizeof on the target} of littlefs's RAM structures (arrays sized
    by sizeof, read back with nm -S)."""
    probe = os.path.join(out, "lfs_sizeof.c")
    with open(probe, "w", encoding="utf-8") as f:
        f.write('#include "lfs.h"\n' + "".join(f"char sizeof_{n}[sizeof({n})];\n" for n in names))
    obj = probe[:-2] + ".o"
    if subprocess.run([cc, *flags, "-c", probe, "-o", obj], capture_output=True).returncode:
        return {}
    nm = subprocess.run([re.sub(r"gcc$", "nm", cc), "-S", obj], capture_output=True, text=True).stdout
    return {l.split()[3][len("sizeof_"):]: int(l.split()[1], 16)
            for l in nm.splitlines() if len(l.split()) == 4 and l.split()[3].startswith("sizeof_")}


def measure_littlefs(cc, cut, tmp):
    """littlefs's sources (bench/lfs_sdist.py) built per LFS_CONFIGS like cairn's:
    {"results": [(label, sizes, graph, stack)], ...} or {"error": why}."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import lfs_sdist
    try:
        src_dir, version = lfs_sdist.sources()
    except (lfs_sdist.SdistError, OSError) as e:
        return {"error": str(e)}
    src = os.path.relpath(src_dir)
    sources = [os.path.join(src, "lfs.c"), os.path.join(src, "lfs_util.c")]
    header = os.path.join(src, "lfs.h")
    api = sorted(set(LFS_API_DECL.findall(read(header))), key=read(header).find)
    flags = CC_FLAGS + [f"-I{src}"]
    results = []
    for label, defs in LFS_CONFIGS:
        out = os.path.join(tmp, f"lfs{len(results)}")
        os.mkdir(out)
        objs = build(cc, defs, out, sources, flags)
        if len(objs) < len(sources):
            return {"error": "littlefs did not compile (see above)"}
        g = Graph(out, cut, sources, header)
        results.append((label, sizes(cc, objs), g, {f: g.worst(f) for f in api if f in g.frame}))
    return {"results": results, "src": src, "version": version, "flags": flags,
            "lfs_version": lfs_sdist.lfs_version(src_dir),
            "sizeof": struct_sizes(cc, flags + LFS_BASE, src, tmp)}


def print_beside(cairn_results, lfs):
    """The comparison table: cairn's configurations and littlefs's, same compiler and flags."""
    print("\n## cairn beside littlefs (same compiler, same flags)\n")
    if "error" in lfs:
        print(f"littlefs not measured: {lfs['error']}")
        return
    name = f"littlefs {lfs['lfs_version']}"
    print(f"{name}: lfs.c and lfs_util.c from the source distribution of littlefs-python "
          f"{lfs['version']} (bench/requirements.txt), fetched by bench/lfs_sdist.py into "
          f"`{lfs['src']}`; flags `{' '.join(lfs['flags'])}` plus the defines of each row. "
          "Worst stack: the deepest public function (cairn_* of include/cairn.h, lfs_* of "
          "lfs.h), device callbacks and library calls 0 B, each function once per chain.\n")
    print("| build | text | data | bss | code (text+data) | worst stack (B) | in |")
    print("|---|---|---|---|---|---|---|")
    rows = [(f"cairn {label}", sz, stack) for label, sz, _, stack in cairn_results]
    rows += [(f"{name}, {label}", sz, stack) for label, sz, _, stack in lfs["results"]]
    for label, sz, stack in rows:
        t, d, b = totals(sz)
        f, n = deepest(stack)
        print(f"| {label} | {t} | {d} | {b} | {t + d} | {n} | {f} |")
    defines = [(f"cairn {label}", ["-DCAIRN_NO_MALLOC", *defs]) for label, defs in CONFIGS]
    defines += [(f"{name}, {label}", defs) for label, defs in LFS_CONFIGS]
    print("\nDefines: " + "; ".join(f"{label}: `{' '.join(d)}`" for label, d in defines) + ".")
    if lfs["sizeof"]:
        print(f"\n{name}'s RAM structures on this target: "
              + ", ".join(f"sizeof({k}) = {v} B" for k, v in lfs["sizeof"].items())
              + " (plus its caches and lookahead buffer, given by the caller with LFS_NO_MALLOC).")
    print_littlefs_stack(name, lfs["results"][0])


def print_littlefs_stack(name, result):
    """littlefs's per-function worst stack, indirect calls and recursion."""
    label, _, g, stack = result
    print(f"\n### {name} ({label}): worst-case stack per public function\n")
    print("| function | worst stack (B) | deepest path: function(frame B), * = via function pointer |")
    print("|---|---|---|")
    for f, (n, path) in sorted(stack.items(), key=lambda kv: -kv[1][0]):
        print(f"| {f} | {n} | `{' > '.join(path)}` |")
    print(f"\n{name}'s calls through function pointers:")
    for site, kind in sorted(g.indirect.items()):
        print(f"- {site}: {kind}")
    for members, cuts in g.recursion():
        print(f"- cycle among {', '.join(members)}"
              + (f"; every cycle passes through: {', '.join(cuts)}" if cuts else ""))
    print(f"\n{name}'s library calls counted as 0 B: {', '.join(sorted(g.library)) or 'none'}")


def main():
    cc = sys.argv[1] if len(sys.argv) > 1 else "arm-none-eabi-gcc"
    cut = os.environ.get("FOOTPRINT_CUT", "").split()  # "caller>callee": edges known infeasible
    api = sorted(set(API_DECL.findall(read("include/cairn.h"))), key=read("include/cairn.h").find)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, defs in CONFIGS:
            out = os.path.join(tmp, str(len(results)))
            os.mkdir(out)
            objs = build(cc, defs, out)
            g = Graph(out, cut)
            stack = {f: g.worst(f) for f in api if f in g.frame}
            if not results:
                top = largest_functions(cc, objs)
            results.append((label, sizes(cc, objs), g, stack))
        lfs = measure_littlefs(cc, cut, tmp)

    version = subprocess.run([cc, "-dumpversion"], capture_output=True, text=True).stdout.strip()
    print(f"# cairn footprint (Cortex-M3, -Os, {cc} {version})\n")
    print("Flags: `" + " ".join(FLAGS) + "`\n")
    if cut:
        print(f"> Calls left out of the stack analysis (FOOTPRINT_CUT): {', '.join(cut)}\n")
    if not re.search(r"CAIRN_NO_ATTRS", "".join(read(f) for f in glob.glob("src/*"))):
        print("> Note: CAIRN_NO_ATTRS is not referenced in src/ yet, so +NO_ATTRS builds the same code as +NO_CHECK.\n")

    print("## Code size (bytes, text+data+bss per object)\n")
    print("| object | " + " | ".join(r[0] for r in results) + " |")
    print("|---" * (len(results) + 1) + "|")
    objs = sorted(results[0][1], key=lambda o: -sum(results[0][1][o]))
    for o in objs:
        print(f"| {o} | " + " | ".join(str(sum(r[1].get(o, (0,)))) for r in results) + " |")
    print("\n| config | text | data | bss | code (text+data) | within 22 KB (22528)? |")
    print("|---|---|---|---|---|---|")
    for label, sz, _, _ in results:
        t, d, b = (sum(v[i] for v in sz.values()) for i in range(3))
        print(f"| {label} | {t} | {d} | {b} | {t + d} | {'yes' if t + d <= CODE_BUDGET else 'NO, over by %d' % (t + d - CODE_BUDGET)} |")

    print(f"\nLargest functions ({results[0][0]}): "
          + ", ".join(f"{name} {n} B ({o})" for n, name, o in top))

    label, _, g, stack = results[0]
    print(f"\n## Worst-case stack per public API function ({label})\n")
    print("| function | worst stack (B) | deepest path: function(frame B), * = via function pointer |")
    print("|---|---|---|")
    for f, (n, path) in sorted(stack.items(), key=lambda kv: -kv[1][0]):
        print(f"| {f} | {n} | `{' > '.join(path)}` |")
    missing = [f for f in api if f not in stack]
    if missing:
        print(f"\nDeclared in include/cairn.h but not defined: {', '.join(missing)}")

    print("\n## Largest stack frames (own frame, -fstack-usage)\n")
    print("| function | frame (B) | defined at |")
    print("|---|---|---|")
    for t in sorted(g.frame, key=lambda t: -g.frame[t])[:10]:
        print(f"| {g.name(t)} | {g.frame[t]} | {g.where[t]} |")

    print("\n## Calls through function pointers\n")
    for site, kind in sorted(g.indirect.items()):
        print(f"- {site}: {kind}")
    print(f"\nLibrary calls counted as 0 B: {', '.join(sorted(g.library)) or 'none'}")
    print(f"Dynamic or bounded frames: {', '.join(g.dynamic) or 'none'}")
    print("\n## Recursion (cycles in the static call graph)\n")
    for members, cuts in g.recursion():
        print(f"- cycle among {', '.join(members)}"
              + (f"; every cycle passes through: {', '.join(cuts)}" if cuts else ""))
    if not g.scc:
        print("None found.")
    else:
        print("\nStack figures count each function at most once per chain, i.e. assume a guard "
              "stops re-entry; a real re-entry would add a second pass round the cycle.")

    print_beside(results, lfs)

    print("\n## Summary\n")
    for label, sz, g, stack in results:
        code = sum(v[0] + v[1] for v in sz.values())
        f, (n, path) = max(stack.items(), key=lambda kv: kv[1][0]) if stack else ("-", (0, []))
        print(f"- {label}: code {code} B ({'within' if code <= CODE_BUDGET else 'OVER'} 22528 B); "
              f"max stack {n} B in {f} ({'within' if n <= STACK_BUDGET else 'OVER'} 640 B)"
              + ("; recursion in the call graph" if g.scc else ""))
    if "error" not in lfs:
        for label, sz, g, stack in lfs["results"]:
            f, n = deepest(stack)
            print(f"- littlefs {lfs['lfs_version']} {label}: code {sum(totals(sz)[:2])} B; "
                  f"max stack {n} B in {f}" + ("; recursion in the call graph" if g.scc else ""))
    print("\n(Device callbacks are the port's and count 0 B: add the port's own "
          "deepest read/prog/erase frame to the figures above.)")


if __name__ == "__main__":
    main()
