"""The keep-alive pool: how many idle connections it keeps, and which go first."""

from __future__ import annotations

import asyncio
import resource
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tap_feeddelta.fetch.connection import (
    Connection,
    ConnectionPool,
    open_pinned,
    verifying_context,
)


@pytest.mark.parametrize(("soft_limit", "cap"), [(64, 16), (1024, 256), (20_000, 2048)])
def test_idle_cap_follows_the_open_file_limit(soft_limit: int, cap: int) -> None:
    code = (
        "import resource\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        f"resource.setrlimit(resource.RLIMIT_NOFILE, ({soft_limit}, hard))\n"
        "from tap_feeddelta.fetch.connection import idle_connection_cap\n"
        "print(idle_connection_cap())\n"
    )
    if resource.getrlimit(resource.RLIMIT_NOFILE)[1] < soft_limit:
        pytest.skip("the hard open-file limit is lower than this case")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(done.stdout) == cap


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP port on 127.0.0.1 whose backlog completes connections (never read)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    yield sock.getsockname()[1]
    sock.close()


async def _connected(port: int, host: str) -> Connection:
    return await open_pinned(("http", host, port, "127.0.0.1"), verifying_context(None))


def test_the_least_recently_used_hosts_lose_their_idle_connections(listener: int) -> None:
    async def scenario() -> None:
        pool = ConnectionPool(max_idle_per_key=2, max_idle_total=3)
        conns = {f"h{n}.test": await _connected(listener, f"h{n}.test") for n in range(5)}
        try:
            for host, conn in conns.items():
                pool.give(("http", host, listener, "127.0.0.1"), conn)
            # h0 and h1 were given back first: closed when h3 and h4 came in.
            assert conns["h0.test"].writer.is_closing() and conns["h1.test"].writer.is_closing()
            for host in ("h2.test", "h3.test", "h4.test"):
                assert pool.take(("http", host, listener, "127.0.0.1")) is conns[host]
            assert pool.take(("http", "h0.test", listener, "127.0.0.1")) is None
        finally:
            pool.close()
            for conn in conns.values():
                conn.close()

    asyncio.run(scenario())


def test_at_most_max_idle_per_key_for_one_host(listener: int) -> None:
    async def scenario() -> None:
        pool = ConnectionPool(max_idle_per_key=2, max_idle_total=100)
        key = ("http", "one.test", listener, "127.0.0.1")
        conns = [await _connected(listener, "one.test") for _ in range(3)]
        try:
            for conn in conns:
                pool.give(key, conn)
            assert conns[0].writer.is_closing()  # the oldest went
            taken = {id(pool.take(key)), id(pool.take(key))}
            assert taken == {id(conns[1]), id(conns[2])}
            assert pool.take(key) is None
        finally:
            pool.close()
            for conn in conns:
                conn.close()

    asyncio.run(scenario())


def test_a_connection_the_server_closed_or_wrote_to_is_not_reused(listener: int) -> None:
    """The loop keeps reading idle connections: a close or unasked bytes retire them."""

    async def scenario() -> None:
        server_side: list[socket.socket] = []
        raw = socket.socket()
        raw.bind(("127.0.0.1", 0))
        raw.listen(8)
        raw.setblocking(False)
        port = raw.getsockname()[1]
        pool = ConnectionPool(max_idle_per_key=4, max_idle_total=100)
        key = ("http", "one.test", port, "127.0.0.1")
        try:
            closed, chatty, quiet = [await _connected(port, "one.test") for _ in range(3)]
            loop = asyncio.get_running_loop()
            for _ in range(3):
                accepted, _ = await loop.sock_accept(raw)
                server_side.append(accepted)
            for conn in (closed, chatty, quiet):
                pool.give(key, conn)
            server_side[0].close()
            server_side[1].sendall(b"HTTP/1.1 200 OK\r\n\r\n")
            await asyncio.sleep(0.2)  # the loop sees the close and the bytes
            assert pool.take(key) is quiet
            assert pool.take(key) is None  # the other two were dropped on the way
            assert closed.writer.is_closing() and chatty.writer.is_closing()
        finally:
            pool.close()
            for sock in (*server_side, raw):
                sock.close()

    asyncio.run(scenario())
