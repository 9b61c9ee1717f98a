"""Shared mode (``serve --shared``): this process's part in a PostgreSQL database shared by
several referee processes (heartbeat, leases, presence, the bus), and ``--workers N``."""
