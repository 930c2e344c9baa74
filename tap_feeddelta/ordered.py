"""Work run as coroutines on an event loop's thread, its results handed over in order.

One driver coroutine on the loop starts the work, at most ``max_concurrency`` at once
and at most ``window`` items ahead of the consumer, and puts each result on a queue in
input order. The consumer (another thread) takes them from the queue, which costs no
system call when results are waiting, and gives room back in batches: the loop is woken
once per half window, not once per item (per item, a submitted coroutine cost a wake-up
of the loop and one of the consumer, a tenth of what a feed answering 304 costs).
"""

from __future__ import annotations

import asyncio
import queue
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class _Failed:
    error: BaseException


class _End:
    pass


@dataclass(slots=True)
class _Shared(Generic[R]):
    results: queue.SimpleQueue[R | _Failed | _End]
    loop: asyncio.AbstractEventLoop | None = None
    room: asyncio.Semaphore | None = None


def ordered_results(
    items: Iterator[T],
    work: Callable[[T], Coroutine[Any, Any, R]],
    *,
    max_concurrency: int,
    window: int,
    submit: Callable[[Coroutine[Any, Any, None]], Future[None]],
) -> Iterator[R]:
    """``work(item)`` for every item, run through ``submit`` on a loop; results in order.

    ``items`` is iterated on the loop's thread. An exception from ``items`` or from any
    ``work`` is raised here, in order; closing this iterator cancels what is running.
    """
    shared: _Shared[R] = _Shared(queue.SimpleQueue())
    driver = submit(_drive(items, work, max_concurrency, window, shared))
    batch = max(1, window // 2)
    consumed = 0
    try:
        while True:
            got = shared.results.get()
            if isinstance(got, _End):
                break
            if isinstance(got, _Failed):
                raise got.error
            yield got
            consumed += 1
            if consumed == batch and shared.loop is not None and shared.room is not None:
                shared.loop.call_soon_threadsafe(_release, shared.room, consumed)
                consumed = 0
        driver.result()
    finally:
        driver.cancel()


def _release(room: asyncio.Semaphore, count: int) -> None:
    for _ in range(count):
        room.release()


async def _drive(
    items: Iterator[T],
    work: Callable[[T], Coroutine[Any, Any, R]],
    max_concurrency: int,
    window: int,
    shared: _Shared[R],
) -> None:
    shared.loop = asyncio.get_running_loop()
    room = shared.room = asyncio.Semaphore(window)
    running = asyncio.Semaphore(max_concurrency)
    # Started work in input order, then None (all started) or the input's failure.
    order: asyncio.Queue[asyncio.Task[R] | _Failed | None] = asyncio.Queue()
    started: set[asyncio.Task[R]] = set()

    async def limited(item: T) -> R:
        async with running:
            return await work(item)

    async def deliver() -> None:
        while isinstance(entry := await order.get(), asyncio.Task):
            try:
                result = await entry
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # a failed item ends the run, in its turn
                shared.results.put(_Failed(exc))
                return
            finally:
                started.discard(entry)
            shared.results.put(result)
        shared.results.put(_End() if entry is None else entry)

    deliverer = asyncio.create_task(deliver())
    try:
        try:
            for item in items:
                await room.acquire()
                task = asyncio.create_task(limited(item))
                started.add(task)
                order.put_nowait(task)
        except Exception as exc:  # the input failed: after what was started, in order
            order.put_nowait(_Failed(exc))
        else:
            order.put_nowait(None)
        await deliverer
    finally:  # cancelled by the consumer, or done: nothing may run on
        deliverer.cancel()
        for task in started:
            task.cancel()
        # Wait for them to end: a task destroyed while pending is logged at collection.
        await asyncio.gather(deliverer, *started, return_exceptions=True)
