"""What the referee's process takes from the machine it runs on, and how: its open-file
limit (``fdlimit``), its worker threads in two pools that never wait for each other
(``pools``), the child processes it starts, seen from the event loop (``processes``)
and kept running (``supervised``), and the token bucket its HTTP servers bound a
client's rate with (``buckets``). Part of the server's shared base: any room may use
it; it imports nothing of the server but :mod:`..logs`."""
