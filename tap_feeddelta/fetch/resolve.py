"""Name resolution within the budget, and the address check on every answer."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable, Sequence

from tap_feeddelta.fetch.errors import FetchError, timed_out
from tap_feeddelta.fetch.guard import address_denial

# (host, port, timeout_seconds) -> IP address strings; raises OSError on failure.
Resolver = Callable[[str, int, float], Sequence[str]]


def resolve_system(host: str, port: int, timeout_seconds: float) -> list[str]:
    """The system resolver (getaddrinfo), abandoned after ``timeout_seconds``.

    getaddrinfo cannot be interrupted, so it runs in a daemon thread that is left to
    finish on its own when the budget runs out.
    """
    box: list[list[str] | BaseException] = []
    done = threading.Event()

    def work() -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            answers: list[str] = []
            for _family, _type, _proto, _canon, sockaddr in infos:
                address = str(sockaddr[0])
                # An IPv6 answer with a scope id keeps it, so that the guard refuses it.
                if len(sockaddr) == 4 and sockaddr[3] and "%" not in address:
                    address = f"{address}%{sockaddr[3]}"
                if address not in answers:
                    answers.append(address)
            box.append(answers)
        except BaseException as exc:  # handed to the waiting thread
            box.append(exc)
        finally:
            done.set()

    threading.Thread(target=work, name="feeddelta-resolve", daemon=True).start()
    if not done.wait(timeout_seconds):
        raise TimeoutError("name resolution timed out")
    outcome = box[0]
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def checked_addresses(
    host: str,
    port: int,
    ip_literal: str | None,
    *,
    resolver: Resolver,
    remaining_seconds: float,
    allow_private: bool,
    denied_code: str,
) -> tuple[str, ...]:
    """The addresses the tap may connect to for ``host``: all answers, each one checked.

    One refused answer refuses the host (a mix of public and private answers is the
    shape of a rebinding attack).
    """
    if ip_literal is not None:
        answers: Sequence[str] = (ip_literal,)
    else:
        if remaining_seconds <= 0:
            raise timed_out("resolving the host name")
        try:
            answers = resolver(host, port, remaining_seconds)
        except TimeoutError:
            raise timed_out("resolving the host name") from None
        except Exception:  # OSError by contract; anything else from a resolver too
            raise FetchError("dns_failed", f"The host {host} could not be resolved.") from None
        if isinstance(answers, str) or not answers:
            raise FetchError("dns_failed", f"The host {host} has no addresses.")
    checked: list[str] = []
    for answer in answers:
        reason = address_denial(str(answer), allow_private=allow_private)
        if reason is not None:
            if ip_literal is not None:
                raise FetchError(denied_code, f"The address {host} is refused ({reason}).")
            raise FetchError(
                denied_code, f"The host {host} resolves to a refused address ({reason})."
            )
        normalized = str(ipaddress.ip_address(str(answer)))
        if normalized not in checked:
            checked.append(normalized)
    return tuple(checked)
