"""`chinchon serve` as an operator runs it: health, reflection, TLS, storage, SIGTERM."""

from __future__ import annotations

import os
import queue
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
from chinchon.v1 import referee_pb2, referee_pb2_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tests.support.helpers import node_bot
from tests.support.serve import ALICE, sdk, serve

ROOT = Path(__file__).resolve().parents[2]
#: A negative check's window: nothing may happen meanwhile.
QUIET = 0.2


def test_serve_health_reflection_practice_storage_and_graceful_stop(tmp_path: Path) -> None:
    with serve(tmp_path) as (proc, port):
        target = f"127.0.0.1:{port}"
        with grpc.insecure_channel(target) as ch:
            health = health_pb2_grpc.HealthStub(ch)
            for svc in ("", "chinchon.v1.RefereeService"):
                resp = health.Check(health_pb2.HealthCheckRequest(service=svc), timeout=60)
                assert resp.status == health_pb2.HealthCheckResponse.SERVING
            refl = reflection_pb2_grpc.ServerReflectionStub(ch)
            answers = list(refl.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=60))
            names = {s.name for s in answers[0].list_services_response.service}
            assert {"chinchon.v1.RefereeService", "chinchon.v1.TournamentService",
                    "grpc.health.v1.Health"} <= names
        res = sdk(target, ALICE)
        assert res.returncode == 0, res.stderr
        assert "1 games" in res.stderr
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    rows = sqlite3.connect(tmp_path / "ref.sqlite3").execute(
        "SELECT status, json_extract(result, '$.termination') FROM games").fetchall()
    assert rows and rows[0][0] == "finished"
    assert rows[0][1] in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")


def test_sigterm_with_a_bot_stream_open_stops_cleanly(tmp_path: Path) -> None:
    """SIGTERM while a bot's stream is open (waiting in the lobby): health turns
    NOT_SERVING at once, the waiting stream is ended at once with UNAVAILABLE saying
    why (not cancelled when the shutdown grace runs out), and the process exits 0."""
    with serve(tmp_path) as (proc, port), ThreadPoolExecutor(4) as pool:
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        outgoing: queue.Queue[referee_pb2.PlayRequest | None] = queue.Queue()

        def requests() -> Iterator[referee_pb2.PlayRequest]:
            while (item := outgoing.get()) is not None:
                yield item

        try:
            play = referee_pb2_grpc.RefereeServiceStub(channel).Play(
                requests(), metadata=(("authorization", f"Bearer {ALICE}"),))
            outgoing.put(referee_pb2.PlayRequest(hello=referee_pb2.Hello(client="idle")))
            assert next(play).welcome.bot_name == "alice"
            watch = health_pb2_grpc.HealthStub(channel).Watch(
                health_pb2.HealthCheckRequest(service="chinchon.v1.RefereeService"))
            assert next(watch).status == health_pb2.HealthCheckResponse.SERVING

            def rest_of_stream() -> tuple[grpc.StatusCode, str]:
                try:
                    extra = list(play)
                except grpc.RpcError as e:
                    return e.code(), e.details()
                raise AssertionError(f"the stream ended OK after {extra}")

            ended = pool.submit(rest_of_stream)
            status = pool.submit(next, watch)
            time.sleep(QUIET)  # a negative check: nothing happens by itself meanwhile
            assert not ended.done() and not status.done()
            proc.send_signal(signal.SIGTERM)
            assert status.result(60).status == health_pb2.HealthCheckResponse.NOT_SERVING
            assert proc.poll() is None  # reported while still shutting down
            code, details = ended.result(60)
            assert code == grpc.StatusCode.UNAVAILABLE
            assert details == "the referee is shutting down"
            # No game runs: the open health watch does not hold the shutdown for the grace
            # (tests/service/test_shutdown.py shows it with a grace of ten minutes; a
            # bound of seconds here would time the machine, not the referee).
            assert proc.wait(60) == 0
        finally:
            outgoing.put(None)
            channel.close()
    assert proc.stderr is not None
    assert "shutting_down" in proc.stderr.read()


def test_serve_with_tls(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )
    with serve(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key)) as (_, port):
        ok = sdk(f"localhost:{port}", ALICE, "--root-cert", str(cert))
        assert ok.returncode == 0, ok.stderr
        # The sample Node bot, trusting the same certificate (--root-cert).
        node = subprocess.run(
            [*node_bot("--target", f"localhost:{port}", "--root-cert", str(cert),
                       "--practice", "random", "--games", "1")],
            capture_output=True, text=True, timeout=120, cwd=ROOT,
            env={**os.environ, "CHINCHON_TOKEN": ALICE},
        )
        assert node.returncode == 0, node.stderr
        assert "practice done: 1 game(s)" in node.stderr
        # A plaintext client cannot talk to a TLS server.
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            health = health_pb2_grpc.HealthStub(ch)
            t0 = time.monotonic()
            try:
                health.Check(health_pb2.HealthCheckRequest(), timeout=3)
                raise AssertionError("plaintext call to a TLS server succeeded")
            except grpc.RpcError as e:
                assert e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
            assert time.monotonic() - t0 < 30


def test_serve_refuses_bad_arguments(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "chinchon_referee.cli", "serve", "--db",
         str(tmp_path / "x.sqlite3"), "--bot", "no-token-here", "--admin-token", "a"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )
    assert res.returncode == 2
    assert "NAME=TOKEN" in res.stderr
