"""referee.proto's header and docs/protocol.md list the same gRPC status codes for the
Play stream (the proto once named FAILED_PRECONDITION, which the stream never uses, and
left out DEADLINE_EXCEEDED and UNAVAILABLE, which it does). README's `serve` row names
every flag of `chinchon serve`."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import grpc
from chinchon_referee.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
CODES = {c.name for c in grpc.StatusCode}


def _codes(text: str) -> set[str]:
    return {w for w in re.findall(r"\b[A-Z][A-Z_]+\b", text) if w in CODES} - {"OK"}


def proto_header_codes() -> set[str]:
    text = (ROOT / "protos" / "chinchon" / "v1" / "referee.proto").read_text(encoding="utf-8")
    header = []
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        header.append(line)
    return _codes(" ".join(header))


def protocol_doc_codes() -> set[str]:
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    start = text.index("Stream-level failures use gRPC status codes")
    paragraph = text[start:text.index("\n\n", start)]
    return _codes(paragraph)


def test_proto_header_and_protocol_doc_list_the_same_status_codes() -> None:
    proto, doc = proto_header_codes(), protocol_doc_codes()
    assert proto == doc, f"only in referee.proto: {proto - doc}; only in protocol.md: {doc - proto}"
    assert {"UNAUTHENTICATED", "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED",
            "UNAVAILABLE"} <= doc


def test_readme_serve_row_names_every_serve_flag() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    serve = sub.choices["serve"]
    flags = {s for a in serve._actions for s in a.option_strings
             if s.startswith("--") and s != "--help"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(ln for ln in readme.splitlines() if ln.startswith("| `chinchon serve"))
    named = set(re.findall(r"--[a-z][a-z-]*", row))
    assert flags - named == set(), f"README's serve row leaves out {sorted(flags - named)}"
    assert named - flags == set(), f"README's serve row names unknown {sorted(named - flags)}"
