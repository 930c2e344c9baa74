"""Bounds on what one HTTP/1.1 exchange may send, shared by the head and body readers.

They are http.client's: 65,536 bytes per line, 100 field lines.
"""

from __future__ import annotations

from typing import Final

MAX_LINE: Final = 65_536  # bytes in the status line or one field line
MAX_FIELDS: Final = 100  # field lines in one head, or in a chunked body's trailer
MAX_INTERIM: Final = 16  # 1xx answers before the final one
CHUNK_BYTES: Final = 65_536  # body bytes read at once
# A redirect's body ("Moved: <a href=...>") is read and dropped, to leave its connection
# for the next hop, when one Content-Length declares at most this many bytes and they have
# all come within DRAIN_SECONDS; else the connection is closed, the body unread.
MAX_DRAINED_BYTES: Final = 65_536
DRAIN_SECONDS: Final = 0.5
