"""Regenerate the Python code for protos/ into client_sdk/chinchon/v1, and the
descriptors with their comments that the referee's reflection serves
(server/chinchon_referee/service/descriptors.binpb, a FileDescriptorSet with source info).

    python -m chinchon_referee.tools.protogen            # write the generated files
    python -m chinchon_referee.tools.protogen --check    # exit 1 if they are stale

The generated files are committed so that ``pip install -e .`` needs no build step;
``tests/test_protos.py`` fails when they no longer match the .proto files.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PROTOS = ROOT / "protos"
OUT = ROOT / "client_sdk"
PACKAGE = OUT / "chinchon" / "v1"
#: The protos' descriptors with source info (their comments), for reflection.
DESCRIPTORS = ROOT / "server" / "chinchon_referee" / "service" / "descriptors.binpb"


def generate(out_dir: Path) -> list[Path]:
    import grpc_tools
    from grpc_tools import protoc  # dev dependency: grpcio-tools

    include = Path(grpc_tools.__file__).parent / "_proto"
    files = sorted(str(p.relative_to(PROTOS)) for p in PROTOS.rglob("*.proto"))
    args = [
        "protoc",
        f"-I{PROTOS}",
        f"-I{include}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        "--include_source_info",
        f"--descriptor_set_out={out_dir / DESCRIPTORS.name}",
        *files,
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    pkg = out_dir / "chinchon" / "v1"
    return [*sorted(p for p in pkg.iterdir() if p.suffix in (".py", ".pyi") and "_pb2" in p.name),
            out_dir / DESCRIPTORS.name]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check that files are current")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(Path(tmp))
        stale = []
        for f in fresh:
            target = DESCRIPTORS if f.name == DESCRIPTORS.name else PACKAGE / f.name
            new = f.read_bytes()
            if not target.exists() or target.read_bytes() != new:
                stale.append(target.name)
                if not args.check:
                    target.write_bytes(new)
        names = {f.name for f in fresh}
        extra = [p.name for p in PACKAGE.glob("*_pb2*") if p.name not in names]
    if args.check:
        if stale or extra:
            print("stale generated code: " + ", ".join(stale + extra), file=sys.stderr)
            print("run: python -m chinchon_referee.tools.protogen", file=sys.stderr)
            return 1
        print("generated code is current")
        return 0
    print(f"wrote {len(stale)} file(s)" + (": " + ", ".join(stale) if stale else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
