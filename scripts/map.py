#!/usr/bin/env python3
"""The map of src/: files, lines, purpose, includes, calls, circles between modules, conventions.

    scripts/map.py [ROOT]                  # markdown report (ROOT: a checkout, default: this one)
    scripts/map.py ROOT --section map|includes|calls|circles|worker|conv|config
    scripts/map.py ROOT --json             # everything as JSON (to diff two commits)
    scripts/map.py ROOT --check            # CTest style.circles: fails on a circle between modules
                                           # that scripts/map-circles.txt does not allow

docs/architecture.md's layout is read off this map. A circle (modules that call each other, directly
or round a loop) means two files share one concept or a helper lives in the wrong file; the ones
that remain while issue 27's split goes on are listed in scripts/map-circles.txt, one per line, and
a circle passes only if all its modules are on one allowed line (so none can grow or appear).

Rerunnable on any later main: it reads the include directories from CMakeLists.txt, finds function
definitions by the house format (clang-format, Linux braces: a definition's '{' sits alone in column 0),
and resolves a call to the file that defines the function (non-static definitions only, plus
static functions for calls inside the same file, which are not edges).

"Calls X" for a file means: it calls at least one non-static function defined in X. ".h" files are
folded into their ".c" (module = path without extension) for the call graph; the include graph keeps
headers as they are. A circle is a strongly connected component of size > 1 of the module call graph.
"""
import json
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--")
                       else os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ARGS = sys.argv[1:]
SRC = os.path.join(ROOT, "src")


def rel(p):
    return os.path.relpath(p, ROOT)


def files():
    out = []
    for d, _, fs in os.walk(SRC):
        for f in fs:
            if f.endswith((".c", ".h")):
                out.append(os.path.join(d, f))
    return sorted(out)


def include_dirs():
    """The public include path of skiffcore from CMakeLists.txt (src, src/util, ...)."""
    txt = open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8").read()
    dirs = []
    for m in re.finditer(r"target_include_directories\(skiffcore\s+PUBLIC([^)]*)\)", txt):
        for w in m.group(1).split():
            if w.startswith("src"):
                dirs.append(os.path.join(ROOT, w))
    return dirs or [SRC]


def strip(text):
    """Text with comments, string and char literals blanked (lines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "_Static_assert",
            "offsetof", "__attribute__", "_Alignof", "alignof", "static_assert", "__typeof__"}


def definitions(clean):
    """[(name, static, line)] of the functions defined in a cleaned file."""
    lines = clean.split("\n")
    out = []
    for i, l in enumerate(lines):
        if l.rstrip() != "{":
            continue
        j = i - 1
        sig = []
        while j >= 0 and lines[j].strip() and not lines[j].startswith(("}", "#")):
            sig.insert(0, lines[j])
            if not lines[j][:1].isspace():
                break
            j -= 1
        s = " ".join(sig)
        m = re.search(r"([A-Za-z_]\w*)\s*\(", s)
        if not m or m.group(1) in KEYWORDS or "=" in s.split("(")[0]:
            continue
        out.append((m.group(1), bool(re.match(r"\s*static\b", s)), j + 1))
    return out


def function_spans(clean):
    """[(name, first_line, last_line)] (1-based) by brace matching from each definition."""
    lines = clean.split("\n")
    spans = []
    for name, _, sigline in definitions(clean):
        # find the '{' line after sigline
        k = sigline - 1
        while k < len(lines) and lines[k].rstrip() != "{":
            k += 1
        depth, e = 0, k
        for e in range(k, len(lines)):
            depth += lines[e].count("{") - lines[e].count("}")
            if depth == 0:
                break
        spans.append((name, sigline, e + 1))
    return spans


def module(p):
    return rel(os.path.splitext(p)[0])


def analyse():
    fs = files()
    idirs = include_dirs()
    info = {}
    defs = {}  # public function name -> module
    for p in fs:
        raw = open(p, encoding="utf-8", errors="replace").read()
        clean = strip(raw)
        # the purpose: first sentence of the file's first comment
        m = re.match(r"\s*/\*+(.*?)\*/", raw, re.S) or re.match(r"\s*((?://[^\n]*\n)+)", raw)
        purpose = ""
        if m:
            purpose = re.sub(r"\s*\*\s*|//", " ", m.group(1)).strip()
            purpose = re.sub(r"\s+", " ", purpose)
            cut = re.search(r"(?<=[a-z0-9)`'])\.\s", purpose + " ")
            purpose = purpose[:cut.start() + 1] if cut else purpose
            purpose = purpose[:160]
        incs = []
        for im in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', raw, re.M):
            name = im.group(1)
            cands = [os.path.join(os.path.dirname(p), name)] + [os.path.join(d, name) for d in idirs]
            hit = next((c for c in cands if os.path.exists(c)), None)
            incs.append((name, rel(os.path.normpath(hit)) if hit else None))
        d = definitions(clean)
        info[rel(p)] = dict(lines=raw.count("\n"), purpose=purpose, includes=incs, defs=d, clean=clean)
        for name, static, _ in d:
            if not static:
                defs.setdefault(name, module(p))
    calls = defaultdict(lambda: defaultdict(set))  # module -> module -> {functions}
    for f, i in info.items():
        mod = os.path.splitext(f)[0]
        local = {n for n, s, _ in i["defs"]}
        for cm in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", i["clean"]):
            n = cm.group(1)
            if n in defs and defs[n] != mod and n not in local:
                calls[mod][defs[n]].add(n)
    return info, defs, calls


def sccs(graph, nodes):
    index, low, onstack, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        onstack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in onstack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                onstack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def conventions(info):
    """Bare 'return -N', '-errno', NULL-returning constructors, run-time config lookups."""
    bare, errno_, ctor_null, ctor_out, cfg, enum, minus1 = [], [], [], [], [], [], []
    cfgre = re.compile(r"\bconfig_(str|int|bool|list_len|list_item|is_set)\s*\(\s*[^,()]+,\s*\"([^\"]+)\"", re.S)
    for f, i in sorted(info.items()):
        if not f.endswith(".c"):
            continue
        raw = open(os.path.join(ROOT, f), encoding="utf-8", errors="replace").read()
        rl = raw.split("\n")
        cl = i["clean"].split("\n")
        for n, l in enumerate(cl, 1):
            if re.search(r"\breturn\s+-\s*([2-9]|[1-9][0-9]+)\s*;", l):
                bare.append((f, n, rl[n - 1].strip()))
            elif re.search(r"\breturn\s+-\s*1\s*;", l):
                minus1.append((f, n))
            if re.search(r"-\s*errno\b", l):
                errno_.append((f, n, rl[n - 1].strip()))
        # constructors: non-static *_new/_create/_open returning a pointer vs int with out param
        for name, static, line in i["defs"]:
            if static or not re.search(r"_(new|create|open|load|init|start)$", name):
                continue
            sig = " ".join(rl[line - 1:line + 3])
            sig = sig[:sig.find(")") + 1] if ")" in sig else sig
            head = sig.split(name)[0]
            if "*" in head:
                ctor_null.append((f, line, name))
            elif re.search(r"\*\*\s*\w+\s*[,)]", sig) or "**" in sig:
                ctor_out.append((f, line, name))
        # config lookups by string (skip config.c itself, where they are defined)
        if os.path.basename(f) != "config.c":
            # literals are blanked in clean; search raw but only outside comments: use positions from clean
            for m in cfgre.finditer(raw):
                ln = raw.count("\n", 0, m.start()) + 1
                if cl[ln - 1].strip().startswith("*") or "config_" not in cl[ln - 1]:
                    continue
                cfg.append((f, ln, m.group(1), m.group(2)))
            for m in re.finditer(r"strcmp\(\s*config_str\(", raw):
                ln = raw.count("\n", 0, m.start()) + 1
                enum.append((f, ln))
    return dict(minus1=minus1, bare=bare, errno=errno_, ctor_null=ctor_null, ctor_out=ctor_out, cfg=cfg, enum=enum)


def check(circles):
    """0 when every circle lies within one line of scripts/map-circles.txt, 1 otherwise."""
    allowed = []
    path = os.path.join(ROOT, "scripts", "map-circles.txt")
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].split()
        if line:
            allowed.append(set(line))
    bad = 0
    for c in circles:
        mods = {os.path.relpath(m, "src") for m in c}
        if not any(mods <= a for a in allowed):
            print(f"map: a circle between modules: {' '.join(sorted(mods))} (each calls the next; "
                  f"move the shared function to the module it belongs to)", file=sys.stderr)
            bad = 1
    unused = [a for a in allowed if not any({os.path.relpath(m, "src") for m in c} & a for c in circles)]
    for a in unused:
        print(f"map: scripts/map-circles.txt allows a circle that is gone: {' '.join(sorted(a))} "
              f"(delete its line)", file=sys.stderr)
        bad = 1
    if not bad:
        print(f"map: {len(circles)} circles, each allowed by scripts/map-circles.txt")
    return bad


def main():
    info, defs, calls = analyse()
    mods = sorted({os.path.splitext(f)[0] for f in info})
    graph = {m: set(calls[m]) for m in mods}
    circles = sccs(graph, mods)
    # include graph circles at file level (headers)
    igraph = {f: {t for _, t in i["includes"] if t} for f, i in info.items()}
    conv = conventions(info)
    sect = ARGS[ARGS.index("--section") + 1] if "--section" in ARGS else None
    if "--check" in ARGS:
        sys.exit(check(circles))
    if "--json" in ARGS:
        json.dump(dict(files={f: dict(lines=i["lines"], purpose=i["purpose"],
                                      includes=[n for n, _ in i["includes"]]) for f, i in info.items()},
                       calls={m: {t: sorted(v) for t, v in c.items()} for m, c in calls.items()},
                       circles=circles,
                       conventions={k: v for k, v in conv.items()}), sys.stdout, indent=1)
        return
    total = sum(i["lines"] for i in info.values())
    if sect in (None, "map"):
        print(f"## Map of {rel(SRC)}/ ({len(info)} files, {total} lines; include dirs: "
              f"{', '.join(rel(d) for d in include_dirs())})\n")
        print("| file | lines | what (first sentence of its header comment) | calls (modules) |")
        print("|---|---:|---|---|")
        for f in sorted(info):
            i = info[f]
            m = os.path.splitext(f)[0]
            callees = ""
            if f.endswith(".c") or not os.path.exists(os.path.join(ROOT, m + ".c")):
                callees = ", ".join(os.path.relpath(t, "src") for t in sorted(calls[m]))
            print(f"| {os.path.relpath(f, 'src')} | {i['lines']} | {i['purpose'].replace('|', '/')} | {callees} |")
        print()
    if sect in (None, "includes"):
        print("## Include graph (file -> headers of the project it includes, as written)\n")
        dual = defaultdict(set)
        for f in sorted(info):
            names = [n for n, _ in info[f]["includes"]]
            for n, t in info[f]["includes"]:
                if t:
                    dual[t].add(n)
            print(f"- {os.path.relpath(f, 'src')}: {' '.join(names)}")
        print("\n### Headers included under more than one spelling\n")
        for t, ns in sorted(dual.items()):
            if len(ns) > 1:
                cnt = {n: sum(1 for f in info for nn, tt in info[f]["includes"] if tt == t and nn == n) for n in ns}
                print(f"- {t}: " + ", ".join(f'"{n}" x{c}' for n, c in sorted(cnt.items())))
        print("\n### Private headers included by several .c files\n")
        for t in sorted(dual):
            users = sorted(f for f in info if any(tt == t for _, tt in info[f]["includes"]))
            if re.search(r"(_private|_src|jsrc|filesrc|txops|tailchain|sqsrc|sqtable|core/conn)\.h$", t) or (t.endswith("_private.h")):
                print(f"- {t}: {len(users)} users: {', '.join(os.path.relpath(u, 'src') for u in users)}")
        print()
    if sect in (None, "calls", "circles"):
        print("## Circles in the module call graph (strongly connected components)\n")
        for c in circles:
            print(f"- {len(c)} modules: " + ", ".join(os.path.relpath(m, "src") for m in c))
            cs = set(c)
            for m in c:
                for t in sorted(calls[m]):
                    if t in cs:
                        fn = sorted(calls[m][t])
                        more = f" (+{len(fn) - 6})" if len(fn) > 6 else ""
                        print(f"  - {os.path.relpath(m, 'src')} -> {os.path.relpath(t, 'src')}: "
                              f"{', '.join(fn[:6])}{more}")
        ic = sccs(igraph, list(igraph))
        print("\n## Circles in the include graph\n")
        print("\n".join(f"- {c}" for c in ic) or "- none")
        print()
    if sect in (None, "worker"):
        print("## Fields of the worker's structs (worker_private.h, core/conn.h)\n")
        for f in info:
            if not f.endswith(("worker_private.h", "core/conn.h")):
                continue
            for m in re.finditer(r"^struct (\w+) \{\n(.*?)^\};", info[f]["clean"], re.M | re.S):
                body = m.group(2)
                # one declaration per ';', counting comma-separated declarators
                n = 0
                for decl in body.split(";"):
                    decl = decl.strip()
                    if decl:
                        n += decl.count(",") + 1
                print(f"- struct {m.group(1)}: {n} fields")
        print()
        print("## Long functions (> 60 lines)\n")
        for f in sorted(info):
            for n, a, b in function_spans(info[f]["clean"]):
                if b - a > 60:
                    print(f"- {f}:{a} {n} ({b - a + 1} lines)")
        print()
    if sect in (None, "conv"):
        print(f"## Conventions\n\n### bare `return -N`, N >= 2: a meaning without a name "
              f"({len(conv['bare'])} in {len({f for f, _, _ in conv['bare']})} files; "
              f"`return -1`, the generic failure util/err.h allows: {len(conv['minus1'])} "
              f"in {len({f for f, _ in conv['minus1']})} files)\n")
        for f, n, l in conv["bare"]:
            print(f"- {f}:{n} `{l}`")
        print(f"\n### `-errno` ({len(conv['errno'])} in {len({f for f, _, _ in conv['errno']})} files)\n")
        for f, n, l in conv["errno"]:
            print(f"- {f}:{n} `{l}`")
        print(f"\n### constructors returning a pointer (NULL on failure): {len(conv['ctor_null'])}\n")
        for f, n, name in conv["ctor_null"]:
            print(f"- {f}:{n} {name}")
        print(f"\n### constructors with an out parameter: {len(conv['ctor_out'])}\n")
        print(", ".join(f"{name} ({os.path.relpath(f, 'src')})" for f, _, name in conv["ctor_out"]))
        print()
    if sect in (None, "config", "conv"):
        cfg = conv["cfg"]
        print(f"### run-time config lookups by string: {len(cfg)} in {len({c[0] for c in cfg})} files "
              f"(config_str/int/bool/list_len/list_item/is_set with a literal key; config.c excluded)\n")
        kinds = defaultdict(int)
        for c in cfg:
            kinds[c[2]] += 1
        print("by accessor: " + ", ".join(f"config_{k} {v}" for k, v in sorted(kinds.items())) + "; "
              f"str+int+bool: {kinds['str'] + kinds['int'] + kinds['bool']}\n")
        byf = defaultdict(list)
        for f, n, kind, key in cfg:
            byf[f].append(f"{n} {kind} `{key}`")
        for f in sorted(byf):
            print(f"- {f} ({len(byf[f])}): " + "; ".join(byf[f]))
        print(f"\n### enums decoded by `strcmp(config_str(...))`: {len(conv['enum'])}\n")
        print(", ".join(f"{f}:{n}" for f, n in conv["enum"]))
        print()


if __name__ == "__main__":
    main()
