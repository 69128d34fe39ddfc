#!/usr/bin/env python3
"""The property reference, generated from the binary: one source of truth.

    scripts/gen-docs.py [--skiff BUILD/skiff]           rewrite the generated parts
    scripts/gen-docs.py --check [--skiff BUILD/skiff]   exit 1 when the docs disagree

It reads `skiff --help-config=json` (its shape: src/cli/help.h) and writes, between the
markers `BEGIN GENERATED` and `END GENERATED` (everything outside them is written
by hand):
  - docs/properties.md, every property as a table per section;
  - docs/man/skiff.properties.5, the same as a man page.
--check also holds the hand-written pages to the binary:
  - every row of a `| property | default | meaning |` table in docs/*.md whose
    keys and defaults it can read (`key`, `other.key` | `1`, `2`) names keys the
    binary has, with the defaults the binary has (or "required" for a required one);
  - docs/man/skiff.1 documents every option `skiff --help` prints, and every
    subcommand (status, offsets list|set|reset|import);
  - every ```properties block of README.md and docs/*.md names keys the binary
    has, with no comment after a value (java.util.Properties has none: a user
    who copies the block gets the comment in the value).
Exit 0: all agree; 1: a difference (printed, with the command that fixes it);
77: the binary lacks a source the docs describe (a build without journald), so
there is nothing to compare against. Run by CTest (docs.generated) and CI."""

import argparse
import difflib
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROPERTIES_MD = os.path.join(ROOT, "docs", "properties.md")
PROPERTIES_5 = os.path.join(ROOT, "docs", "man", "skiff.properties.5")
SKIFF_1 = os.path.join(ROOT, "docs", "man", "skiff.1")
SOURCES = ("file", "sqlite", "journald")  # every source the docs describe
SOURCE_TITLES = {"file": "File source", "sqlite": "SQLite source", "journald": "journald source"}
SOURCE_PAGES = {"file": "source-file.md", "sqlite": "source-sqlite.md",
                "journald": "source-journald.md"}


def load_doc(skiff):
    out = subprocess.run([skiff, "--help-config=json"], check=True, stdout=subprocess.PIPE,
                         stdin=subprocess.DEVNULL).stdout
    doc = json.loads(out)
    if doc.get("format") != "skiff-help-config" or doc.get("version") != 1:
        sys.exit(f"gen-docs: {skiff} --help-config=json is not version 1 of skiff-help-config")
    return doc


def sections(doc, sid):
    return [s for s in doc["sections"] if s["id"] == sid]


def source_section(doc, kind):
    for s in sections(doc, "source"):
        if s["kind"] == kind:
            return s
    return None


# ---- Markdown -------------------------------------------------------------------------

def md(text):
    """Prose for a Markdown table cell: nothing in it is markup."""
    text = text.replace("\\", "\\\\")
    for c in "*_`[]<>|":
        text = text.replace(c, "\\" + c)
    return text


def md_code(text):
    """A code span in a table cell ("|" must be escaped even there)."""
    return "`" + text.replace("|", "\\|") + "`"


def md_range(k):
    if "min" in k:
        return md_code(f"{k['min']}..{k['max']}")
    if "choices" in k:
        return ", ".join(md_code(c) for c in k["choices"])
    return ""


def md_default(k):
    if k["required"]:
        return "required"
    if "default" not in k:
        return ""
    return md_code(k["default"]) if k["default"] != "" else '`""`'


def md_keys(sec):
    out = ["| property | type | default | range or values | meaning |",
           "| --- | --- | --- | --- | --- |"]
    for k in sec["keys"]:
        kind = k["type"] + (", secret" if k["secret"] else "")
        out.append(f"| {md_code(k['name'])} | {kind} | {md_default(k)} | {md_range(k)} | "
                   f"{md(k['doc'])} |")
    return out


def md_ignored(sec):
    if not sec["ignored"]:
        return []
    return ["", "Accepted and ignored, with a notice (Connect's keys that mean nothing here): "
            + ", ".join(md_code(n) for n in sec["ignored"]) + "."]


def markdown(doc):
    out = []
    worker = sections(doc, "worker")[0]
    out += ["## Worker", "",
            "In Connect's worker file (`connect-standalone.properties`), or at the top level "
            "of the single-file form.", ""]
    out += md_keys(worker)
    out += md_ignored(worker)
    out += ["", "Keys by their shape:", "", "| keys | meaning |", "| --- | --- |"]
    for p in worker.get("patterns", []):
        doc_text = md(p["doc"])
        if "defaults" in p:
            doc_text += " skiff's defaults: " + ", ".join(
                md_code(f"{k}={v}") for k, v in p["defaults"].items()) + "."
        names = ", ".join(md_code(n.strip()) for n in p["name"].split(","))
        out.append(f"| {names} | {doc_text} |")
    for rest in sections(doc, "rest"):
        out += ["", "## The REST API", "",
                "Worker keys too: the listeners, their TLS and authentication, what keeps "
                "browsers and slow clients out ([rest-api.md](rest-api.md)).", ""]
        out += md_keys(rest)
        out += md_ignored(rest)
    for fleet in sections(doc, "fleet"):
        out += ["", "## The fleet", "",
                "Worker keys too: a device steered through Kafka topics, and what a remote "
                "configuration may name on it. Off by default; without `fleet.enabled=true` "
                "Connect's `config.storage.*` and `status.storage.*` are accepted and ignored.",
                ""]
        out += md_keys(fleet)
        out += md_ignored(fleet)
    conn = sections(doc, "connector")[0]
    out += ["", "## Every connector", "",
            "In a connector file, or under `connectors.<name>.` in the single-file form.", ""]
    out += md_keys(conn)
    out += md_ignored(conn)
    for s in sections(doc, "source"):
        title = SOURCE_TITLES.get(s["kind"], f"{s['kind']} source")
        out += ["", f"## {title}", ""]
        page = SOURCE_PAGES.get(s["kind"])
        classes = ", ".join(md_code(c) for c in s["classes"])
        out.append(f"`connector.class`: {classes}."
                   + (f" How it reads: [{page}]({page})." if page else ""))
        out.append("")
        out += md_keys(s)
        out += md_ignored(s)
    out += ["", "## Transforms and predicates", "",
            "Connector keys; how they run: "
            "[converters-and-transforms.md](converters-and-transforms.md).", "",
            "| keys | meaning |", "| --- | --- |"]
    for k in doc["chain_keys"]:
        out.append(f"| {md_code(k['name'])} | {md(k['doc'])} |")
    for title, key in (("Transforms", "transforms"), ("Predicates", "predicates")):
        out += ["", f"### {title}", "", "| class | what it does | properties |",
                "| --- | --- | --- |"]
        for t in doc[key]:
            cls = md_code(t["class"]) + (" (`$Key`, `$Value`)" if t["variants"] else "")
            out.append(f"| {cls} | {md(t['doc'])} | {md(t['properties'])} |")
    return out


# ---- man(7) --------------------------------------------------------------------------

def roff(text):
    """Text for a man page: backslashes, minus signs and non-ASCII escaped; a line
    never starts with a control character."""
    out = []
    for ch in text.replace("\\", "\\e"):
        if ch == "-":
            out.append("\\-")
        elif ord(ch) > 127:
            out.append(f"\\[u{ord(ch):04X}]")
        else:
            out.append(ch)
    s = "".join(out)
    return "\\&" + s if s[:1] in (".", "'") else s


def breakable(text):
    """A value whose words may be longer than a line (Java class names in a list):
    troff may break after each dot (\\:, no hyphen shown)."""
    return " ".join(w.replace(".", ".\\:") if len(w) > 60 else w for w in text.split(" "))


def man_key(k):
    facts = [k["type"]]
    if k["required"]:
        facts.append("required")
    elif "default" in k:
        facts.append("default \\fB" + (breakable(roff(k["default"])) if k["default"] else '""')
                     + "\\fR")
    if "min" in k:
        facts.append(roff(f"{k['min']}..{k['max']}"))
    if "choices" in k:
        facts.append("one of " + ", ".join("\\fB" + roff(c) + "\\fR" for c in k["choices"]))
    if k["secret"]:
        facts.append("secret")
    return [".TP", ".B " + roff(k["name"]), "(" + "; ".join(facts) + ")", ".br",
            roff(k["doc"])]


def man_ignored(sec):
    if not sec["ignored"]:
        return []
    return [".PP", "Accepted and ignored, with a notice: "
            + roff(", ".join(sec["ignored"])) + "."]


def man(doc):
    out = []
    worker = sections(doc, "worker")[0]
    out += [".SS Worker", "In the worker file, or at the top level of the single file."]
    for k in worker["keys"]:
        out += man_key(k)
    out += man_ignored(worker)
    for p in worker.get("patterns", []):
        out += [".TP", ".B " + roff(p["name"]), roff(p["doc"])]
        if "defaults" in p:
            out += [".br", "skiff's defaults: " + roff(
                ", ".join(f"{k}={v}" for k, v in p["defaults"].items())) + "."]
    for rest in sections(doc, "rest"):
        out += [".SS The REST API", "Worker keys too: listeners, TLS, authentication, bounds."]
        for k in rest["keys"]:
            out += man_key(k)
        out += man_ignored(rest)
    for fleet in sections(doc, "fleet"):
        out += [".SS The fleet", "Worker keys too: a device steered through Kafka topics; "
                "off without \\fBfleet.enabled=true\\fR."]
        for k in fleet["keys"]:
            out += man_key(k)
        out += man_ignored(fleet)
    conn = sections(doc, "connector")[0]
    out += [".SS Every connector",
            "In a connector file, or under \\fBconnectors.\\fIname\\fB.\\fR in the single file."]
    for k in conn["keys"]:
        out += man_key(k)
    out += man_ignored(conn)
    for s in sections(doc, "source"):
        title = SOURCE_TITLES.get(s["kind"], f"{s['kind']} source")
        out += [f".SS {title}", "\\fBconnector.class\\fR: "
                + ", ".join("\\fB" + roff(c) + "\\fR" for c in s["classes"]) + "."]
        for k in s["keys"]:
            out += man_key(k)
        out += man_ignored(s)
    out += [".SS Transforms and predicates", "Connector keys:"]
    for k in doc["chain_keys"]:
        out += [".TP", ".B " + roff(k["name"]), roff(k["doc"])]
    for key in ("transforms", "predicates"):
        out += [".PP", "The " + key + ":"]
        for t in doc[key]:
            out += [".TP", ".B " + roff(t["class"]) + (" (\\fB$Key\\fR, \\fB$Value\\fR)"
                                                       if t["variants"] else ""),
                    roff(t["doc"]), ".br", "Properties: " + roff(t["properties"])]
    return out


# ---- the generated regions ------------------------------------------------------------

def splice(path, begin, end, body):
    """The file's text with the lines between the marker lines replaced by body."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    try:
        b = next(i for i, l in enumerate(lines) if begin in l)
        e = next(i for i, l in enumerate(lines) if end in l and i > b)
    except StopIteration:
        sys.exit(f"gen-docs: {path} lacks the markers '{begin}' and '{end}'")
    return "\n".join(lines[:b + 1] + body + lines[e:])


def targets(doc):
    return [
        (PROPERTIES_MD, splice(PROPERTIES_MD, "<!-- BEGIN GENERATED", "<!-- END GENERATED",
                               [""] + markdown(doc) + [""])),
        (PROPERTIES_5, splice(PROPERTIES_5, '.\\" BEGIN GENERATED', '.\\" END GENERATED',
                              man(doc))),
    ]


# ---- hand-written pages held to the binary ---------------------------------------------

def binary_keys(doc):
    """{page: {key: key object}}: the keys a docs page's tables may name."""
    worker = sections(doc, "worker")[0]["keys"] + \
        [k for s in sections(doc, "rest") + sections(doc, "fleet") for k in s["keys"]]
    conn = sections(doc, "connector")[0]["keys"]
    by_page = {}
    for kind, page in SOURCE_PAGES.items():
        s = source_section(doc, kind)
        by_page[page] = {k["name"]: k for k in conn + (s["keys"] if s else [])}
    common = {k["name"]: k for k in worker + conn}
    # keys by shape (security.protocol, sasl.*): known, with no default of skiff's
    for p in sections(doc, "worker")[0].get("patterns", []):
        for name in p["name"].split(","):
            name = name.strip()
            if "*" not in name and "<" not in name:
                common[name] = {"name": name, "required": False, "pattern": True}
    return by_page, common


def check_tables(doc):
    """Rows `| `k1`, `k2` | `d1`, `d2` | ... |` of property tables in docs/*.md."""
    by_page, common = binary_keys(doc)
    problems, checked = [], 0
    docs = os.path.join(ROOT, "docs")
    for page in sorted(os.listdir(docs)):
        if not page.endswith(".md") or page == "properties.md":
            continue
        known = by_page.get(page, common)
        in_table = False
        with open(os.path.join(docs, page), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if re.match(r"^\|\s*(property|key)\s*\|\s*default\s*\|", line):
                    in_table = True
                    continue
                if not line.startswith("|"):
                    in_table = False
                if not in_table or len(cells) < 3 or cells[0].startswith("---"):
                    continue
                names = re.findall(r"`([a-z][a-z0-9.]*[a-z0-9])`", cells[0])
                if not names or re.sub(r"`[^`]*`|[,/ ]|\bor\b", "", cells[0]):
                    continue  # a row about something else than plain keys
                where = f"docs/{page}:{n}"
                missing = [k for k in names if k not in known]
                if missing:
                    problems.append(f"{where}: {', '.join(missing)}: no such property in the "
                                    f"binary's {page} section")
                    continue
                if any(known[k].get("pattern") for k in names):
                    continue
                checked += 1
                default = cells[1]
                values = re.findall(r"`([^`]*)`", default)
                if default.startswith("required"):
                    for k in names:
                        # topic.prefix: required by the source's own check (the table's
                        # "required" refuses an empty value, which it allows)
                        if not known[k]["required"] and "Required" not in known[k]["doc"]:
                            problems.append(f"{where}: {k} is documented as required; the "
                                            f"binary's default is {known[k].get('default')!r}")
                elif len(values) == len(names) and re.fullmatch(r"(`[^`]*`(, )?)+", default):
                    for k, v in zip(names, values):
                        v = "" if v == '""' else v
                        want = known[k].get("default")
                        if known[k]["required"] or want != v:
                            problems.append(f"{where}: {k} is documented with default {v!r}; "
                                            f"the binary's is "
                                            f"{'required' if known[k]['required'] else repr(want)}")
    return problems, checked


def known_key(key, names):
    """Whether KEY is one the binary takes: a listed property, inline under
    connectors.<name>., or of a shape the worker section names (producer.*,
    ssl.*, config.providers.<name>.*, transforms and predicates)."""
    key = re.sub(r"^connectors\.[^.]+\.", "", key)
    if key in names or key in ("transforms", "predicates"):
        return True
    return re.match(r"(producer|kafka|sasl|ssl|transforms|predicates)\.|security\.protocol$|"
                    r"config\.providers\.[^.]+\.(class|param\.)", key) is not None


def check_properties_blocks(doc):
    """Every ```properties block of README.md and docs/*.md as a user copies it
    into a file: java.util.Properties has no comment after a value (the `# ...`
    becomes part of it), and each key is one the binary has."""
    names = {k["name"] for s in doc["sections"] for k in s["keys"]}
    problems, checked = [], 0
    pages = ["README.md"] + sorted(os.path.join("docs", p)
                                   for p in os.listdir(os.path.join(ROOT, "docs"))
                                   if p.endswith(".md"))
    for page in pages:
        block = False
        with open(os.path.join(ROOT, page), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.startswith("```"):
                    block = line.strip() == "```properties"
                    continue
                line = line.strip()
                if not block or not line or line[0] in "#!" or line.endswith("\\"):
                    continue
                m = re.match(r"((?:[^\\=:\s]|\\.)+)\s*[=:\s]\s*(.*)", line)
                key, value = (m.group(1), m.group(2)) if m else (line, "")
                checked += 1
                if re.search(r"\s#", value):
                    problems.append(f"{page}:{n}: {key}: a '#' after a value is part of the "
                                    f"value in a .properties file; put the comment on a line "
                                    f"of its own")
                if not known_key(key, names):
                    problems.append(f"{page}:{n}: {key}: no such property in the binary")
    return problems, checked


def help_options(skiff):
    text = subprocess.run([skiff, "--help"], check=True, stdout=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, text=True).stdout
    return sorted(set(re.findall(r"--([a-z][a-z-]+)", text)))


def check_skiff_1(skiff):
    with open(SKIFF_1, encoding="utf-8") as f:
        page = f.read()
    problems = []
    for opt in help_options(skiff):
        if f"\\-\\-{roff(opt)}" not in page:
            problems.append(f"docs/man/skiff.1: option --{opt} (skiff --help) is not documented")
    for sub in ("status", "offsets list", "offsets set", "offsets reset", "offsets import"):
        if f"skiff {sub}" not in page.replace("\\fB", "").replace("\\fR", ""):
            problems.append(f"docs/man/skiff.1: subcommand 'skiff {sub}' is not documented")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--skiff", default=os.path.join(ROOT, "build", "skiff"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    doc = load_doc(a.skiff)
    absent = [k for k in SOURCES if source_section(doc, k) is None]
    if absent:
        print(f"gen-docs: {a.skiff} has no {', '.join(absent)} source (built without it): "
              "the docs describe the full build; nothing to compare", file=sys.stderr)
        return 77
    fix = f"scripts/gen-docs.py --skiff {a.skiff}"
    rc = 0
    for path, text in targets(doc):
        with open(path, encoding="utf-8") as f:
            old = f.read()
        if old == text:
            continue
        rel = os.path.relpath(path, ROOT)
        if not a.check:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"gen-docs: wrote {rel}")
            continue
        rc = 1
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                   f"{rel} (checked in)", f"{rel} (the binary)"))
        print(f"gen-docs: {rel} disagrees with {a.skiff} --help-config; run {fix}")
    if a.check:
        problems, checked = check_tables(doc)
        problems += check_skiff_1(a.skiff)
        block_problems, lines = check_properties_blocks(doc)
        problems += block_problems
        for p in problems:
            print(f"gen-docs: {p}")
        if problems:
            rc = 1
        print(f"gen-docs: {checked} rows of hand-written property tables checked against "
              f"the binary, {lines} lines of the docs' properties blocks; "
              f"{len(problems)} problems")
    return rc


if __name__ == "__main__":
    sys.exit(main())
