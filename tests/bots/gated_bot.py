"""A Python SDK bot that starts (imports done) but connects only once it reads a line on
stdin: a restarted bot whose return a test decides.

    python gated_bot.py [chinchon.sdk arguments...]
"""

from __future__ import annotations

import sys

from chinchon.sdk.__main__ import main

if __name__ == "__main__":
    print("ready", flush=True)
    sys.stdin.readline()
    sys.exit(main(sys.argv[1:]))
