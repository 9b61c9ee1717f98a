"""A Python SDK bot that is slow to start: sleeps, then runs ``python -m chinchon.sdk``.

    python slow_start_bot.py --sleep SECONDS [chinchon.sdk arguments...]
"""

from __future__ import annotations

import sys
import time

from chinchon.sdk.__main__ import main

if __name__ == "__main__":
    args = sys.argv[1:]
    delay = 0.0
    if args[:1] == ["--sleep"]:
        delay, args = float(args[1]), args[2:]
    time.sleep(delay)
    sys.exit(main(args))
