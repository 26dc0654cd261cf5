"""The server's message loop: reads `Content-Length` framed JSON-RPC from a byte stream and never goes deaf.

pygls' own loop trusts every Content-Length: one that is too long swallows the messages after it, one that
is too short leaves the body's tail glued to the next header, and from then on no header is ever recognised
again. Here a header is found wherever it starts (the bytes before it are skipped and logged), a body that
runs into the next header ends there, and a body that is not JSON is retried with the bytes up to the next
header. A raw `Content-Length: N\\r\\n` cannot occur inside a JSON body (strings cannot hold a raw line
break), so a header seen inside a declared body proves the length wrong.
"""
from __future__ import annotations

import asyncio
import json
import re

HEADER = re.compile(rb"Content-Length:[ \t]*(\d+)[ \t]*\r\n", re.IGNORECASE)
MORE_HEADERS = re.compile(rb"(?:[A-Za-z][A-Za-z-]*:[^\r\n]*\r\n)*")
SETTLE_S = 0.2  # a complete JSON body shorter than its declared length is taken after this quiet time
CHUNK = 1 << 16


class FrameReader:
    """Bodies of framed messages from `read_some` (an async callable: some bytes, or b'' at the end)."""

    def __init__(self, read_some, log) -> None:
        self.read_some, self.log = read_some, log
        self.buf = bytearray()
        self._pending: asyncio.Future | None = None
        self._eof = False

    async def _fill(self, timeout: float | None = None) -> bool:
        """Read more bytes into the buffer; False at the end of the stream or when `timeout` passed first."""
        if self._eof:
            return False
        if self._pending is None:
            self._pending = asyncio.ensure_future(self.read_some())
        done, _ = await asyncio.wait({self._pending}, timeout=timeout)
        if not done:
            return False
        data, self._pending = self._pending.result(), None
        if not data:
            self._eof = True
            return False
        self.buf += data
        return True

    def _skip(self, upto: int, why: str) -> None:
        skipped = bytes(self.buf[:upto])
        del self.buf[:upto]
        if skipped.strip() and not MORE_HEADERS.fullmatch(skipped):  # other headers (Content-Type) are fine
            self.log(f"tilelsp: framing error: skipped {len(skipped)} bytes {why}; resynchronised on the next header")

    async def next_body(self) -> bytes | None:
        """The next message body (None at the end of the stream)."""
        while True:
            m = HEADER.search(self.buf)
            end = self.buf.find(b"\r\n\r\n", m.start()) if m else -1
            if m is None or end < 0:
                if m is None and len(self.buf) > CHUNK:  # keep a tail that may hold the start of a header
                    self._skip(len(self.buf) - 64, "that were not a message")
                if not await self._fill():
                    return None
                continue
            if not MORE_HEADERS.fullmatch(self.buf, m.end(), end + 2):  # not a header block after all
                self._skip(m.end(), "in a malformed header")
                continue
            start, length = end + 4 - m.start(), int(m.group(1))
            self._skip(m.start(), "before a Content-Length header")
            body = await self._body(start, length)
            if body is not None:
                return body
            if self._eof:
                return None

    async def _body(self, start: int, length: int) -> bytes | None:
        scanned = start  # the declared body was searched for a header up to here
        while True:
            limit = min(len(self.buf), start + length)
            inside = HEADER.search(self.buf, max(start, scanned - 64), limit)
            scanned = limit
            if inside is not None:  # the declared length runs into the next message
                body = bytes(self.buf[start:inside.start()])
                del self.buf[:inside.start()]
                self.log(f"tilelsp: framing error: Content-Length {length} runs into the next message; "
                         f"took the {len(body)} bytes before it")
                return body
            if len(self.buf) >= start + length:
                return self._complete(start, length)
            if await self._fill(SETTLE_S):
                continue
            if self._eof:
                return None
            # nothing more came: if what arrived is a whole message, the declared length was too long
            if self.buf.rstrip().endswith(b"}") and _is_json(self.buf[start:]):
                body = bytes(self.buf[start:])
                del self.buf[:]
                self.log(f"tilelsp: framing error: Content-Length {length} but the message has {len(body)} bytes")
                return body
            if not await self._fill():
                return None

    def _complete(self, start: int, length: int) -> bytes:
        body = bytes(self.buf[start:start + length])
        if not body.rstrip().endswith(b"}"):  # too short a length: the rest of the body is before the next header
            nxt = HEADER.search(self.buf, start + length)
            longer = bytes(self.buf[start:nxt.start() if nxt else len(self.buf)])
            if _is_json(longer):
                self.log(f"tilelsp: framing error: Content-Length {length} but the message has {len(longer)} bytes")
                del self.buf[:start + len(longer)]
                return longer
        del self.buf[:start + length]
        return body


def _is_json(data) -> bool:
    try:
        json.loads(data)
        return True
    except ValueError:
        return False


async def serve(stop_event, read_some, protocol, log, report_error) -> bool:
    """Read, parse and dispatch messages until the stream ends or `stop_event` is set (True), or until reading
    itself fails (False: the caller exits with an error, so that the client restarts the server)."""
    reader = FrameReader(read_some, log)
    while not stop_event.is_set():
        try:
            body = await reader.next_body()
        except Exception as exc:  # noqa: BLE001 - a reader bug must not leave the server alive but deaf
            log(f"tilelsp: reading messages failed ({type(exc).__name__}: {exc}); exiting so the client restarts")
            return False
        if body is None:
            break
        try:
            message = json.loads(body, object_hook=protocol.structure_message)
            protocol.handle_message(message)
        except Exception as exc:  # noqa: BLE001 - a bad message is reported; the loop goes on
            report_error(exc, None)
        # let coroutines this message woke (e.g. one awaiting this response) run before the next message,
        # as they would if every message were read separately
        await asyncio.sleep(0)
    return True
