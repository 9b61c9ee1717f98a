"""What the tests share: fixtures' types, servers, bots in process, waits."""
