"""Name resolution within the budget, and the address check on every answer."""

from __future__ import annotations

import concurrent.futures
import ipaddress
import queue
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from tap_feeddelta.fetch.errors import FetchError, timed_out
from tap_feeddelta.fetch.guard import address_denial

# (host, port, timeout_seconds) -> IP address strings; raises OSError on failure.
Resolver = Callable[[str, int, float], Sequence[str]]
_MAX_KEPT: Final = 100_000  # answers a SystemResolver keeps at most (a run has ≤ 10,000 feeds)
# The guard's verdicts kept by one Fetcher: (address, allow_private) -> (reason, normal form)
Verdicts = dict[tuple[str, bool], tuple[str | None, str]]
_MAX_VERDICTS: Final = 65_536
# Added to the refusal of a configured feed's address the setting would let through. It
# says the setting is off in this run: a user who believes they set it (a Meltano variable
# spelt "ture" reads as false) took "set allow_private_networks" for advice already taken.
_PRIVATE_NETWORKS_OFF: Final = (
    "; allow_private_networks is false in this run's configuration: "
    "set it to true to fetch private and loopback addresses"
)


class SystemResolver:
    """The system resolver (getaddrinfo) within a time budget, with a short memory.

    getaddrinfo cannot be interrupted, so it runs on a helper thread that the caller stops
    waiting for when the budget runs out. Helper threads are kept for the next lookup
    (starting one per lookup cost ~0.2 ms of CPU, a third of all a feed answering 304
    costs); a new one starts whenever none is idle, so a hung lookup never delays another.
    Answers are kept for ``max_age_seconds``, so the feeds of one host resolve once per
    run; failures are not kept. Every answer, kept or new, still passes the address check.
    """

    def __init__(
        self,
        max_age_seconds: float = 60.0,
        lookup: Callable[..., Sequence[tuple[Any, ...]]] | None = None,  # getaddrinfo
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max_age = max_age_seconds
        self._lookup = lookup
        self._clock = clock
        self._answers: dict[tuple[str, int], tuple[float, tuple[str, ...]]] = {}
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def kept(self, host: str, port: int) -> list[str] | None:
        """The kept answer for (host, port), if it is fresh: no lookup, no thread."""
        kept = self._answers.get((host, port))
        if kept is not None and self._clock() < kept[0]:
            return list(kept[1])
        return None

    def __call__(self, host: str, port: int, timeout_seconds: float) -> list[str]:
        kept = self.kept(host, port)
        if kept is not None:
            return kept
        try:
            return self.lookup_soon(host, port).result(timeout_seconds)
        except concurrent.futures.TimeoutError:
            raise TimeoutError("name resolution timed out") from None

    def lookup_soon(self, host: str, port: int) -> concurrent.futures.Future[list[str]]:
        """Start a lookup on a helper thread; the future gets its answers (kept for
        ``max_age_seconds``) or its error. For callers that wait in their own way (the
        fetch loop awaits it, and stops waiting when its deadline passes)."""
        future: concurrent.futures.Future[list[str]] = concurrent.futures.Future()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return  # nobody waits any more
            try:
                lookup = self._lookup or socket.getaddrinfo  # looked up now, not at import
                infos = lookup(host, port, type=socket.SOCK_STREAM)
                answers: list[str] = []
                for _family, _type, _proto, _canon, sockaddr in infos:
                    address = str(sockaddr[0])
                    # An IPv6 answer with a scope id keeps it, so that the guard refuses it.
                    if len(sockaddr) == 4 and sockaddr[3] and "%" not in address:
                        address = f"{address}%{sockaddr[3]}"
                    if address not in answers:
                        answers.append(address)
            except BaseException as exc:  # handed to whoever waits
                future.set_exception(exc)
                return
            if len(self._answers) >= _MAX_KEPT:
                self._answers.clear()
            self._answers[(host, port)] = (self._clock() + self._max_age, tuple(answers))
            future.set_result(answers)

        self._submit(work)
        return future

    def _submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                threading.Thread(target=self._serve, name="feeddelta-resolve", daemon=True).start()
        self._jobs.put(job)

    def _serve(self) -> None:
        while True:
            self._jobs.get()()
            with self._lock:
                self._idle += 1


def resolved_answers(
    host: str, port: int, *, resolver: Resolver, remaining_seconds: float
) -> Sequence[str]:
    """Ask ``resolver`` (blocks up to ``remaining_seconds``); failures as FetchError."""
    if remaining_seconds <= 0:
        raise timed_out("resolving the host name")
    try:
        answers = resolver(host, port, remaining_seconds)
    except TimeoutError:
        raise timed_out("resolving the host name") from None
    except Exception as exc:  # OSError by contract; anything else from a resolver too
        raise unresolved(host, exc) from None
    return usable_answers(host, answers)


# getaddrinfo's errors that mean no answer was had (the resolver failed or could not be
# reached), as against an answer that the name has no address: the first is the run's
# network (or the domain's name servers), the second the feed's own problem.
_NO_ANSWER: Final = frozenset(
    getattr(socket, name)
    for name in ("EAI_AGAIN", "EAI_FAIL", "EAI_MEMORY", "EAI_SYSTEM")
    if hasattr(socket, name)
)
_NO_SUCH_NAME: Final = frozenset(
    getattr(socket, name) for name in ("EAI_NONAME",) if hasattr(socket, name)
)
_NO_ADDRESS: Final = frozenset(
    getattr(socket, name) for name in ("EAI_NODATA", "EAI_ADDRFAMILY") if hasattr(socket, name)
)


def unresolved(host: str, exc: BaseException | None = None) -> FetchError:
    """The failure for a lookup of ``host`` that raised ``exc``: ``dns_unavailable``
    when no answer came, ``dns_failed`` when the answer is that there is no address."""
    number = exc.errno if isinstance(exc, socket.gaierror) else None
    if number in _NO_ANSWER:
        return FetchError(
            "dns_unavailable",
            f"The host name {host} could not be looked up for now: the resolver, or the "
            "domain's name servers, did not answer.",
        )
    if number in _NO_SUCH_NAME:
        return FetchError("dns_failed", f"The host name {host} does not exist.")
    if number in _NO_ADDRESS:
        return FetchError("dns_failed", f"The host {host} has no addresses.")
    return FetchError("dns_failed", f"The host {host} could not be resolved.")


def usable_answers(host: str, answers: Sequence[str]) -> Sequence[str]:
    """``answers`` if there are any (a resolver's result is not trusted blindly)."""
    if isinstance(answers, str) or not answers:
        raise FetchError("dns_failed", f"The host {host} has no addresses.")
    return answers


def checked_answers(
    host: str,
    answers: Sequence[str],
    ip_literal: str | None,
    *,
    allow_private: bool,
    denied_code: str,
    verdicts: Verdicts | None = None,
    names_the_flag: bool = False,
) -> tuple[str, ...]:
    """Every answer through the guard, normalized and without repeats.

    One refused answer refuses the host (a mix of public and private answers is the
    shape of a rebinding attack). ``verdicts`` keeps the guard's answers (a run asks
    about the same few thousand addresses over and over, ~10 µs of ipaddress work each).
    ``names_the_flag``: the host is one the user configured, whose refusal for an
    address allow_private_networks lets through says so.
    """
    checked: list[str] = []
    for answer in answers:
        reason, normalized = _verdict(str(answer), allow_private, verdicts)
        if reason is not None:
            # The configured URL's own address, that the flag would let through, names the
            # flag; a destination a publisher chose (a redirect, a feed link a page
            # advertises) into a private network is refused without that hint.
            if (
                names_the_flag
                and not allow_private
                and address_denial(str(answer), allow_private=True) is None
            ):
                reason += _PRIVATE_NETWORKS_OFF
            if ip_literal is not None:
                shown = host.partition("%")[0] + ("%…" if "%" in host else "")  # no zone text
                raise FetchError(denied_code, f"The address {shown} is refused ({reason}).")
            raise FetchError(
                denied_code, f"The host {host} resolves to a refused address ({reason})."
            )
        if normalized not in checked:
            checked.append(normalized)
    return tuple(checked)


def _verdict(
    address: str, allow_private: bool, verdicts: Verdicts | None
) -> tuple[str | None, str]:
    """(why ``address`` is refused or None, its normal form); pure, so it may be kept."""
    key = (address, allow_private)
    verdict = verdicts.get(key) if verdicts is not None else None
    if verdict is None:
        reason = address_denial(address, allow_private=allow_private)
        verdict = (reason, address if reason is not None else str(ipaddress.ip_address(address)))
        if verdicts is not None:
            if len(verdicts) >= _MAX_VERDICTS:
                verdicts.clear()
            verdicts[key] = verdict
    return verdict
