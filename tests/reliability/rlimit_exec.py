"""Run a command under an address-space limit: ``python rlimit_exec.py BYTES program args...``.

The limit (RLIMIT_AS) is inherited across ``exec`` and ``fork``, so a ``celery worker`` started this way
and its pool children cannot map more than BYTES: a huge allocation raises MemoryError in numpy instead
of growing until the kernel's OOM killer picks a victim on a shared machine.
"""

from __future__ import annotations

import os
import resource
import sys

if __name__ == "__main__":
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.execv(sys.argv[2], sys.argv[2:])
