"""ordered_results: order, the concurrency and window bounds, failures, early close."""

from __future__ import annotations

import asyncio
import random
import signal
import threading
import time
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from typing import Any

import pytest

from tap_feeddelta.ordered import ordered_results

# Every test here is bounded: a deadlock in ordered_results (a slot never released, room
# that leaks) blocks the consumer forever, and without a bound the run hangs with no test
# named. SIGALRM interrupts the consumer's wait on the main thread and fails the test.
TIME_LIMIT_SECONDS = 30


@pytest.fixture(autouse=True)
def time_limit() -> Iterator[None]:
    if not hasattr(signal, "setitimer"):  # not POSIX: unbounded, as before
        yield
        return

    def out_of_time(signum: int, frame: object) -> None:
        pytest.fail(f"not done in {TIME_LIMIT_SECONDS} s: ordered_results deadlocked?")

    previous = signal.signal(signal.SIGALRM, out_of_time)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class LoopThread:
    """An event loop on a thread of its own, as the Fetcher runs one."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def submit(self, coro: Coroutine[Any, Any, Any]) -> Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        async def drain() -> None:  # as Fetcher.close does: nothing left pending
            others = asyncio.all_tasks() - {asyncio.current_task()}
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)

        self.submit(drain()).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture
def loop_thread() -> Iterator[LoopThread]:
    runner = LoopThread()
    yield runner
    runner.stop()


class Probe:
    """Work that takes a random short time and records how much ran at once."""

    def __init__(self) -> None:
        self.running = 0
        self.most_running = 0
        self.started: list[int] = []
        self.cancelled = 0

    async def work(self, n: int) -> int:
        self.started.append(n)
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        try:
            await asyncio.sleep(random.random() / 500)
            return n * n
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.running -= 1


def test_results_come_in_input_order_within_the_concurrency_bound(
    loop_thread: LoopThread,
) -> None:
    probe = Probe()
    results = list(
        ordered_results(
            iter(range(300)), probe.work, max_concurrency=5, window=20, submit=loop_thread.submit
        )
    )
    assert results == [n * n for n in range(300)]
    assert probe.most_running == 5


def test_work_never_runs_more_than_a_window_ahead_of_the_consumer(
    loop_thread: LoopThread,
) -> None:
    probe = Probe()
    window = 8
    results = ordered_results(
        iter(range(100)), probe.work, max_concurrency=4, window=window, submit=loop_thread.submit
    )
    for consumed, _ in enumerate(results, start=1):
        # Room comes back in batches of window // 2: never more than a window and a
        # half batch beyond what was taken.
        assert len(probe.started) <= consumed + window + window // 2


def test_a_failure_is_raised_in_order_and_the_rest_is_cancelled(loop_thread: LoopThread) -> None:
    probe = Probe()

    async def work(n: int) -> int:
        if n == 7:
            raise ValueError("boom")
        return await probe.work(n)

    got: list[int] = []
    with pytest.raises(ValueError, match="boom"):
        for value in ordered_results(
            iter(range(50)), work, max_concurrency=3, window=12, submit=loop_thread.submit
        ):
            got.append(value)
    assert got == [n * n for n in range(7)]
    assert len(probe.started) < 50


def test_a_failure_of_the_input_is_raised_after_what_came_before(
    loop_thread: LoopThread,
) -> None:
    def items() -> Iterator[int]:
        yield from range(5)
        raise RuntimeError("unreadable input")

    probe = Probe()
    got: list[int] = []
    with pytest.raises(RuntimeError, match="unreadable input"):
        for value in ordered_results(
            items(), probe.work, max_concurrency=2, window=8, submit=loop_thread.submit
        ):
            got.append(value)
    assert got == [n * n for n in range(len(got))]


def test_closing_early_cancels_the_work_in_flight(loop_thread: LoopThread) -> None:
    gate = asyncio.Event()
    cancelled: list[int] = []

    async def work(n: int) -> int:
        if n == 0:
            return 0
        try:
            await gate.wait()  # never set: only cancellation ends it
        except asyncio.CancelledError:
            cancelled.append(n)
            raise
        return n

    results = ordered_results(
        iter(range(10)), work, max_concurrency=4, window=8, submit=loop_thread.submit
    )
    assert next(results) == 0
    results.close()
    for _ in range(100):
        if len(cancelled) == 4:
            break
        threading.Event().wait(0.01)
    assert sorted(cancelled) == [1, 2, 3, 4]


def test_no_items_ends_at_once(loop_thread: LoopThread) -> None:
    probe = Probe()
    assert (
        list(
            ordered_results(
                iter(()), probe.work, max_concurrency=2, window=4, submit=loop_thread.submit
            )
        )
        == []
    )


def test_results_held_behind_a_slow_item_stay_under_the_weight_bound(
    loop_thread: LoopThread,
) -> None:
    # Item 0 is slow; the others finish at once and weigh 10 each. With a bound of 30,
    # no more than three of them (and the one that reaches the bound) may wait behind it,
    # although the window would allow 32.
    started_when_first_done: list[int] = []
    started: list[int] = []

    async def work(n: int) -> int:
        started.append(n)
        if n == 0:
            await asyncio.sleep(0.3)
            started_when_first_done.append(len(started))
        return n

    results = ordered_results(
        iter(range(50)),
        work,
        max_concurrency=8,
        window=32,
        submit=loop_thread.submit,
        weight=lambda n: 0 if n == 0 else 10,
        max_weight=30,
    )
    assert list(results) == list(range(50))
    assert started_when_first_done[0] <= 1 + 3


def test_work_started_counts_with_the_results_waiting_against_the_weight_bound(
    loop_thread: LoopThread,
) -> None:
    # A slow consumer and results of 10 each against a bound of 30: when the results
    # waiting fell below it, every free slot started at once (8 here), and the results
    # then waiting weighed far past the bound. Work running counts as much as a result
    # has weighed of late, so only what fits starts.
    finished = taken = running = 0
    outstanding: list[int] = []  # results waiting or on their way, as each item starts

    async def work(n: int) -> int:
        nonlocal finished, running
        running += 1
        outstanding.append(finished - taken + running)
        await asyncio.sleep(0.001)
        running -= 1
        finished += 1
        return n

    results = ordered_results(
        iter(range(120)),
        work,
        max_concurrency=8,
        window=64,
        submit=loop_thread.submit,
        weight=lambda _: 10,
        max_weight=30,
    )
    for result in results:
        taken += 1
        time.sleep(0.002)
        assert result == taken - 1
    # Once a few results have been weighed (the first ones start unhindered).
    assert max(outstanding[20:]) <= 5


@pytest.mark.parametrize("max_weight", [1, 25])
def test_a_consumer_that_waits_gives_its_weight_back_at_once(
    loop_thread: LoopThread, max_weight: int
) -> None:
    # Every result weighs 10, so the bound is reached after a few; the consumer's batch
    # (half the window) is never reached before it has to wait. It must not hang.
    done = threading.Event()
    got: list[int] = []

    def consume() -> None:
        got.extend(
            ordered_results(
                iter(range(200)),
                Probe().work,
                max_concurrency=4,
                window=64,
                submit=loop_thread.submit,
                weight=lambda _: 10,
                max_weight=max_weight,
            )
        )
        done.set()

    threading.Thread(target=consume, daemon=True).start()
    assert done.wait(10)
    assert got == [n * n for n in range(200)]


def test_a_result_is_weighed_once(loop_thread: LoopThread) -> None:
    """The weight may cost something to work out (run.py walks a feed's records): it is
    worked out when the result is done, and the consumer gives back that same figure."""
    weighed: list[int] = []

    def weight(n: int) -> int:
        weighed.append(n)
        return 10

    results = ordered_results(
        iter(range(100)),
        Probe().work,
        max_concurrency=4,
        window=16,
        submit=loop_thread.submit,
        weight=weight,
        max_weight=25,
    )
    assert list(results) == [n * n for n in range(100)]
    assert sorted(weighed) == [n * n for n in range(100)]


def test_items_waiting_for_their_group_leave_the_slots_to_other_groups(
    loop_thread: LoopThread,
) -> None:
    # Items 0-11 are of group "slow" (one at a time), 12-15 of group "fast". Item 0 runs
    # until every fast item has run: it ends only if the slow items waiting for their
    # group's turn left the two slots of max_concurrency to the fast ones.
    fast_done = 0
    all_fast_done: asyncio.Event | None = None
    running: dict[str, int] = {"slow": 0, "fast": 0}
    most = {"slow": 0, "fast": 0, "all": 0}

    def group(n: int) -> str:
        return "slow" if n < 12 else "fast"

    async def work(n: int) -> int:
        nonlocal fast_done, all_fast_done
        if all_fast_done is None:
            all_fast_done = asyncio.Event()
        running[group(n)] += 1
        most[group(n)] = max(most[group(n)], running[group(n)])
        most["all"] = max(most["all"], sum(running.values()))
        try:
            if n == 0:
                await asyncio.wait_for(all_fast_done.wait(), 5)
            await asyncio.sleep(0)
            if group(n) == "fast":
                fast_done += 1
                if fast_done == 4:
                    all_fast_done.set()
            return n
        finally:
            running[group(n)] -= 1

    results = ordered_results(
        iter(range(16)),
        work,
        max_concurrency=2,
        window=16,
        submit=loop_thread.submit,
        group=group,
        max_per_group=1,
    )
    assert list(results) == list(range(16))  # wait_for raised TimeoutError otherwise
    assert most == {"slow": 1, "fast": 1, "all": 2}


@pytest.mark.parametrize("seed", range(5))
def test_groups_and_the_weight_bound_together_never_hang(
    loop_thread: LoopThread, seed: int
) -> None:
    """The item delivered next always runs: no item after it holds its group's turn, nor
    a slot of max_concurrency, while waiting for the weight to fall."""
    chooser = random.Random(seed)
    groups = [chooser.randrange(4) for _ in range(300)]
    done = threading.Event()
    got: list[int] = []

    def consume() -> None:
        got.extend(
            ordered_results(
                iter(range(300)),
                Probe().work,
                max_concurrency=3,
                window=24,
                submit=loop_thread.submit,
                weight=lambda _: 10,
                max_weight=chooser.choice([1, 15, 40]),
                group=groups.__getitem__,
                max_per_group=chooser.choice([1, 2]),
            )
        )
        done.set()

    threading.Thread(target=consume, daemon=True).start()
    assert done.wait(20)
    assert got == [n * n for n in range(300)]
