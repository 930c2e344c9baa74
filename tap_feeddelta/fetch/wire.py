"""Bounds on what one HTTP/1.1 exchange may send, shared by the head and body readers.

They are http.client's: 65,536 bytes per line, 100 field lines.
"""

from __future__ import annotations

from typing import Final

MAX_LINE: Final = 65_536  # bytes in the status line or one field line
MAX_FIELDS: Final = 100  # field lines in one head, or in a chunked body's trailer
MAX_INTERIM: Final = 16  # 1xx answers before the final one
# Bytes of all the heads of one answer, interim ones included: what the line and field
# bounds allow (100 lines of 64 KiB, 17 times: ~110 MB) is far past any real server's
# (large cookies and policies stay under 64 KiB), and would be read on every fetch.
MAX_HEAD_BYTES: Final = 256 * 1024
CHUNK_BYTES: Final = 65_536  # body bytes read at once
# A redirect's body ("Moved: <a href=...>") is read and dropped, to leave its connection
# for the next hop, when one Content-Length declares at most this many bytes and they have
# all come within DRAIN_SECONDS; else the connection is closed, the body unread.
MAX_DRAINED_BYTES: Final = 65_536
DRAIN_SECONDS: Final = 0.5
