"""Generated protobuf and gRPC code for protos/chinchon/v1 (do not edit: run python -m chinchon_referee.protogen)."""
