"""What the referee's process takes from the machine it runs on, and how: its open-file
limit (``fdlimit``), its worker threads in two pools that never wait for each other
(``pools``), and the child processes it starts, seen from the event loop
(``processes``). Part of the server's shared base: any room may use it; it imports
nothing of the server but :mod:`..logs`."""
