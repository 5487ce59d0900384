"""An incremental ``text/event-stream`` parser."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SseFrame", "SseParser"]


@dataclass(frozen=True)
class SseFrame:
    """One dispatched Server-Sent Events frame."""

    id: str | None
    """The ``id:`` field of this frame, if it had one (not carried over from earlier frames)."""
    event: str
    """The ``event:`` field, ``message`` when absent."""
    data: str
    """The ``data:`` lines joined with a newline."""


class SseParser:
    """Feed decoded text with ``push``; get complete frames.

    Lines end with CRLF, LF or CR; a blank line dispatches a frame; ``:`` lines are comments; one space
    after the field's colon is dropped; frames without ``data:`` are not dispatched; ``retry:`` and
    unknown fields are ignored.
    """

    def __init__(self) -> None:
        self._buffer = ""
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None

    def push(self, text: str) -> list[SseFrame]:
        self._buffer += text
        frames: list[SseFrame] = []
        start = 0
        i = 0
        buf = self._buffer
        while i < len(buf):
            ch = buf[i]
            if ch not in "\r\n":
                i += 1
                continue
            # A CR at the very end may be the first half of a CRLF split across chunks.
            if ch == "\r" and i == len(buf) - 1:
                break
            frame = self._line(buf[start:i])
            if frame is not None:
                frames.append(frame)
            if ch == "\r" and buf[i + 1] == "\n":
                i += 1
            i += 1
            start = i
        self._buffer = buf[start:]
        return frames

    def _line(self, line: str) -> SseFrame | None:
        if line == "":
            frame = (
                SseFrame(id=self._id, event=self._event or "message", data="\n".join(self._data))
                if self._data
                else None
            )
            self._data, self._event, self._id = [], "", None
            return frame
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self._id = value
        return None
