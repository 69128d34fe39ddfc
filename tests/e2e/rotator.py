"""Real logrotate run on a schedule, for the tests that rotate under load.

Standard library only, like harness.py.
"""

import subprocess
import threading
import time


class Rotator(threading.Thread):
    """Runs `logrotate` on conf every `every` seconds until stop(): forced
    (`-f`, each run rotates) by default, or with force=False as cron runs it
    (the conf's size/daily directives decide). Each run's failures are kept
    in `errors`; `runs` counts the runs."""

    def __init__(self, conf, state, every=1.0, force=True):
        super().__init__(daemon=True)
        self.conf, self.state, self.every = conf, state, every
        self.argv = ["logrotate"] + (["-f"] if force else []) + ["-s", str(state), str(conf)]
        self.runs = 0
        self.errors = []
        self._halt = threading.Event()

    def run(self):
        due = time.monotonic()
        while True:
            due += self.every
            if self._halt.wait(max(0.0, due - time.monotonic())):
                break
            r = subprocess.run(self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if r.returncode != 0:
                self.errors.append(r.stdout.decode(errors="replace"))
            self.runs += 1

    def stop(self):
        self._halt.set()
        self.join(30)
