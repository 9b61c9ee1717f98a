"""What a tournament is: the one model and its codecs (TOML, protobuf), the schedule, twin
games, standings and ratings, and the reports written from them. Data and computation:
no gRPC server, no event loop; standings read stored game rows (``storage``) but nothing
here writes them."""
