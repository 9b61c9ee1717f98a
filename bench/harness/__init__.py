"""The harness the benchmarks share: what more than one script of bench/ runs or measures
with (the fast raw bot, the referee in a process of its own, the floor server, the
benchmarks' processes and event loops, CPU and memory read from /proc, the machine).

The rule (tests/test_architecture.py): a script (``bench/NAME.py``, run as ``python
bench/NAME.py``, so bench/ is its import root) imports the harness, the server and the
SDK, never another script; the harness imports the server and the SDK, never a script.
A script may still run another as a program (``bench_server.py bot``)."""
