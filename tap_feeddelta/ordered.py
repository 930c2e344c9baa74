"""Work run as coroutines on an event loop's thread, its results handed over in order.

One driver coroutine on the loop starts the work, at most ``max_concurrency`` at once
and at most ``window`` items ahead of the consumer, and puts each result on a queue in
input order. The consumer (another thread) takes them from the queue, which costs no
system call when results are waiting, and gives room back in batches: the loop is woken
once per half window, not once per item (per item, a submitted coroutine cost a wake-up
of the loop and one of the consumer, a tenth of what a feed answering 304 costs).

With a ``weight`` (a result's size), the driver also starts no work while the results
finished but not yet taken, with those of the work running (each as much as a result
has weighed of late), weigh ``max_weight`` or more, so results held in order behind one
slow item take bounded memory, whatever the window. A result is weighed once, when it is
done; the consumer gives that same figure back. The weight is checked before work starts
only: work started before the bound was reached still finishes, and is held too.

With a ``group`` (an item's host), at most ``max_per_group`` items of one group run at
once, and an item waits for its group's turn before it takes one of the
``max_concurrency`` slots: items of a group that is slow to answer wait without keeping
the other groups' items from running. An item waiting for the weight to fall holds no
slot of ``max_concurrency`` either. (The item to be delivered next always runs: items
enter their group's queue in input order, so none after it holds its group's turn while
it waits, and every slot of ``max_concurrency`` is held by work that runs.)
"""

from __future__ import annotations

import asyncio
import queue
from collections.abc import Callable, Coroutine, Generator, Hashable, Iterator
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
    results: queue.SimpleQueue[tuple[R, int] | _Failed | _End]  # (result, its weight)
    loop: asyncio.AbstractEventLoop | None = None
    room: asyncio.Semaphore | None = None
    held_weight: int = 0  # of results finished and not yet taken; changed on the loop only
    queued_weight: int = 0  # of those, the ones handed to the consumer's queue
    # Work running now, and what a result has weighed of late: the weight on its way.
    running_count: int = 0
    recent_weight: float = 0.0
    weight_taken: asyncio.Event | None = None  # set when the held weight falls or head moves
    head: int = 0  # the position of the result delivered next


def ordered_results(
    items: Iterator[T],
    work: Callable[[T], Coroutine[Any, Any, R]],
    *,
    max_concurrency: int,
    window: int,
    submit: Callable[[Coroutine[Any, Any, None]], Future[None]],
    weight: Callable[[R], int] | None = None,
    max_weight: int = 0,
    group: Callable[[T], Hashable] | None = None,
    max_per_group: int = 0,
) -> Generator[R, None, None]:
    """``work(item)`` for every item, run through ``submit`` on a loop; results in order.

    ``items`` is iterated on the loop's thread. An exception from ``items`` or from any
    ``work`` is raised here, in order; closing this iterator cancels what is running.
    """
    shared: _Shared[R] = _Shared(queue.SimpleQueue())
    limits = _Limits(max_concurrency, weight, max_weight, group, max_per_group)
    driver = submit(_drive(items, work, window, shared, limits))
    batch = max(1, window // 2)
    consumed = consumed_weight = 0
    try:
        while True:
            if consumed_weight and shared.held_weight >= max_weight and shared.results.empty():
                # About to wait while the weight holds work back: give back what was
                # taken at once, not at the end of the batch, so that the work runs in
                # parallel again. (Only then: a wake-up per result costs a tenth of a
                # feed answering 304. The result waited for runs in any case.)
                _give_back(shared, consumed, consumed_weight)
                consumed = consumed_weight = 0
            got = shared.results.get()
            if isinstance(got, _End):
                break
            if isinstance(got, _Failed):
                raise got.error
            result, its_weight = got
            yield result
            consumed += 1
            consumed_weight += its_weight
            if consumed == batch:
                _give_back(shared, consumed, consumed_weight)
                consumed = consumed_weight = 0
        driver.result()
    finally:
        driver.cancel()


def _give_back(shared: _Shared[R], count: int, taken_weight: int) -> None:
    """Room for ``count`` more items and ``taken_weight`` less held, from the consumer."""
    if shared.loop is not None and shared.room is not None:
        shared.loop.call_soon_threadsafe(_release, shared, count, taken_weight)


def _release(shared: _Shared[R], count: int, taken_weight: int) -> None:
    assert shared.room is not None
    for _ in range(count):
        shared.room.release()
    if taken_weight and shared.weight_taken is not None:
        shared.held_weight -= taken_weight
        shared.queued_weight -= taken_weight
        shared.weight_taken.set()


@dataclass(frozen=True, slots=True)
class _Limits(Generic[T, R]):
    max_concurrency: int
    weight: Callable[[R], int] | None
    max_weight: int
    group: Callable[[T], Hashable] | None
    max_per_group: int


@dataclass(slots=True)
class _Group:
    turns: asyncio.Semaphore
    users: int = 0  # items holding or waiting for a turn: the group is dropped at 0


async def _drive(
    items: Iterator[T],
    work: Callable[[T], Coroutine[Any, Any, R]],
    window: int,
    shared: _Shared[R],
    limits: _Limits[T, R],
) -> None:
    shared.loop = asyncio.get_running_loop()
    room = shared.room = asyncio.Semaphore(window)
    weight_taken = shared.weight_taken = asyncio.Event()
    running = asyncio.Semaphore(limits.max_concurrency)
    weight, max_weight = limits.weight, limits.max_weight
    groups: dict[Hashable, _Group] = {}
    # Started work in input order, then None (all started) or the input's failure.
    order: asyncio.Queue[asyncio.Task[tuple[R, int]] | _Failed | None] = asyncio.Queue()
    started: set[asyncio.Task[tuple[R, int]]] = set()

    def held_back(position: int) -> bool:
        # While the results waiting, and those of the work running (as much as a result
        # has weighed of late), weigh too much. (Counting only the results waiting let
        # every slot start at once when they fell below the bound, and heavy results
        # then piled up far past it.) Not the one to be delivered next while the
        # results already handed to the consumer are under the bound: the rest waits
        # for it, so it must run; past it, the consumer gives weight back in any case.
        if weight is None:
            return False
        if position == shared.head and shared.queued_weight < max_weight:
            return False
        on_its_way = shared.running_count * shared.recent_weight
        return shared.held_weight + on_its_way >= max_weight

    async def run(position: int, item: T) -> R:
        while True:
            while held_back(position):
                weight_taken.clear()
                await weight_taken.wait()
            await running.acquire()
            if not held_back(position):  # the weight may have grown while it waited
                break
            running.release()
        shared.running_count += 1
        try:
            return await work(item)
        finally:
            shared.running_count -= 1
            running.release()

    async def limited(position: int, item: T) -> tuple[R, int]:
        if limits.group is None or limits.max_per_group <= 0:
            result = await run(position, item)
        else:
            # The group's turn first, without a slot of max_concurrency: the first await
            # of the item, so turns are asked for in input order. (Written out, not as an
            # async context manager: this runs once per feed.)
            key = limits.group(item)
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Group(asyncio.Semaphore(limits.max_per_group))
            group.users += 1
            try:
                async with group.turns:
                    result = await run(position, item)
            finally:
                group.users -= 1
                if not group.users:
                    del groups[key]
        its_weight = 0
        if weight is not None:
            its_weight = weight(result)
            shared.recent_weight += (its_weight - shared.recent_weight) / 4
        shared.held_weight += its_weight
        return result, its_weight

    async def deliver() -> None:
        while isinstance(entry := await order.get(), asyncio.Task):
            weight_taken.set()  # the head moved: it may be among those held back
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
            shared.queued_weight += result[1]
            shared.head += 1
        shared.results.put(_End() if entry is None else entry)

    deliverer = asyncio.create_task(deliver())
    try:
        try:
            for position, item in enumerate(items):
                await room.acquire()
                task = asyncio.create_task(limited(position, item))
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
