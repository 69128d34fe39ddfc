"""Helpers for the file source's end-to-end tests (tests/e2e/test_tail*.py).

Writer: appends numbered lines to a log at a steady rate the way a real
program does: in create mode it notices that its path names another file
(logrotate renamed it and created a new one) and reopens, as Python's
WatchedFileHandler does; it always opens with O_APPEND, so after a
copytruncate its writes land at the new end.

Lines are "NNNNNNNN <tag> xxxx...", so a line's number is its first 8 bytes
and the set of lines written is range(writer.count).
"""

import os
import threading
import time


def line(i, tag="w", width=60):
    head = f"{i:08d} {tag} "
    return head + "x" * max(0, width - len(head))


def number(value):
    """The line number of a record value (bytes or str)."""
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    return int(value[:8])


class Writer(threading.Thread):
    """Appends `rate` lines a second to path until stop(); reopens when the
    path names another file (reopen=True)."""

    def __init__(self, path, rate=2000, tag="w", reopen=True, batch_ms=10, limit=None,
                 width=60):
        super().__init__(daemon=True)
        self.path = str(path)
        self.width = width
        self.rate = rate
        self.tag = tag
        self.reopen = reopen
        self.batch_ms = batch_ms
        self.limit = limit
        self.count = 0
        self.reopens = 0
        self._halt = threading.Event()
        self.error = None

    def _open(self):
        return os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def run(self):
        try:
            self._run()
        except Exception as e:  # noqa: BLE001 - reported by stop()
            self.error = e

    def _run(self):
        fd = self._open()
        start = time.monotonic()
        while not self._halt.is_set():
            due = int((time.monotonic() - start) * self.rate)
            if self.limit is not None:
                due = min(due, self.limit)
            if self.reopen:
                try:
                    st = os.stat(self.path)
                    same = (st.st_ino, st.st_dev) == (os.fstat(fd).st_ino, os.fstat(fd).st_dev)
                except FileNotFoundError:
                    same = False
                if not same:
                    os.close(fd)
                    fd = self._open()
                    self.reopens += 1
            if due > self.count:
                data = "".join(line(i, self.tag, self.width) + "\n" for i in range(self.count, due))
                os.write(fd, data.encode())
                self.count = due
            if self.limit is not None and self.count >= self.limit:
                break
            time.sleep(self.batch_ms / 1000)
        os.close(fd)

    def stop(self):
        self._halt.set()
        self.join(10)
        if self.error:
            raise self.error
        return self.count


def check_lines(values, written, allowed_dups=(), lost_ok=()):
    """Compares record values with range(written) line numbers.

    Returns (missing, duplicates, unexpected): lists of line numbers. Lines
    in lost_ok may be missing; duplicates outside allowed_dups (a set) are
    reported in the second list."""
    seen = {}
    unexpected = []
    for v in values:
        try:
            n = number(v)
        except ValueError:
            unexpected.append(v)
            continue
        if not 0 <= n < written:
            unexpected.append(v)
        seen[n] = seen.get(n, 0) + 1
    missing = [n for n in range(written) if n not in seen and n not in lost_ok]
    dups = [n for n, c in seen.items() if c > 1 for _ in range(c - 1)]
    bad_dups = [n for n in dups if n not in allowed_dups]
    return missing, dups, bad_dups, unexpected
