#!/usr/bin/env python3
"""The docs' links and the paths they name, as a newcomer follows them.

    scripts/check-links.py

In README.md, docs/*.md and firmware/README.md: every relative link
[text](path) or [text](path#anchor) names a file or directory of the checkout,
and an anchor names a heading of that page (GitHub's slugs); every path in
backticks that starts with scripts/, tests/, src/, docs/, firmware/ or board/
exists (a wildcard: matches something; a <placeholder>: not checked). Exit 0: all hold; 1: each broken one printed as
FILE:LINE. Run by CTest (docs.links)."""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = ["README.md", "firmware/README.md"] + sorted(
    "docs/" + p for p in os.listdir(os.path.join(ROOT, "docs")) if p.endswith(".md"))


def lines_outside_code(path):
    """(number, line) of the lines of PATH outside fenced code blocks."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("```"):
                fenced = not fenced
                continue
            if not fenced:
                yield n, line


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation gone, spaces to -."""
    text = re.sub(r"[`*_]|\[([^]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for _, line in lines_outside_code(path):
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


def check(page):
    problems = []
    path = os.path.join(ROOT, page)
    for n, line in lines_outside_code(path):
        where = f"{page}:{n}"
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto:
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                problems.append(f"{where}: link {target}: no such file")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                problems.append(f"{where}: link {target}: no heading with that anchor")
        for code in re.findall(r"`([^`]+)`", line):
            for p in re.findall(r"(?:^|[\s(])((?:scripts|tests|src|docs|firmware|board)/[\w./*<>-]+)",
                                code):
                p = p.rstrip(".,:")
                if "<" in p or glob.glob(os.path.join(ROOT, p)):
                    continue
                problems.append(f"{where}: {p}: no such file in the checkout")
    return problems


def main():
    problems = [p for page in PAGES for p in check(page)]
    for p in problems:
        print(f"check-links: {p}")
    print(f"check-links: {len(PAGES)} pages; {len(problems)} broken links or paths")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
