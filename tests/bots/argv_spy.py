"""Record how this process was started, then become ``python -m chinchon.sdk``.

    SPY_DIR=DIR python argv_spy.py [chinchon.sdk arguments...]

Writes to DIR/PID.json (a JSON object) the process's own ``/proc/self/cmdline`` as the kernel
shows it to every local user, and whether CHINCHON_TOKEN is set; then runs the SDK with
the same arguments in the same process (so the command line recorded is the bot's).
"""

from __future__ import annotations

import json
import os
import sys

from chinchon.sdk.__main__ import main

if __name__ == "__main__":
    with open("/proc/self/cmdline", "rb") as f:
        cmdline = f.read().decode(errors="replace").split("\0")
    path = os.path.join(os.environ["SPY_DIR"], f"{os.getpid()}.json")
    with open(path, "w", encoding="utf-8") as out:
        json.dump({"cmdline": cmdline, "token": os.environ.get("CHINCHON_TOKEN", "")}, out)
    sys.exit(main(sys.argv[1:]))
