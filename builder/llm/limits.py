"""Rate limits and the shared cool-down after a 429."""

from __future__ import annotations

import asyncio
import time


class Bucket:
    """Token bucket refilled at `per_minute / 60` per second. It holds one second's worth, so bursts stay
    small: servers enforce per-minute limits over shorter windows too."""

    def __init__(self, per_minute: float):
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate)
        self.level = self.capacity
        self.stamp = time.monotonic()
        self.lock = asyncio.Lock()

    async def take(self, amount: float) -> None:
        amount = min(amount, self.capacity)  # a request larger than the bucket still gets through, alone
        async with self.lock:  # FIFO: waiting requests are served in order
            while True:
                now = time.monotonic()
                self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
                self.stamp = now
                if self.level >= amount:
                    self.level -= amount
                    return
                await asyncio.sleep((amount - self.level) / self.rate)


class Gate:
    """Everything a request waits for before it goes out: cool-down, RPM, TPM."""

    def __init__(self, rpm: float | None, tpm: float | None):
        self.rpm = Bucket(rpm) if rpm else None
        self.tpm = Bucket(tpm) if tpm else None
        self.cool_until = 0.0

    def cool_down(self, seconds: float) -> None:
        # Shared: one 429 pauses every worker, so the fleet backs off together instead of hammering.
        self.cool_until = max(self.cool_until, time.monotonic() + seconds)

    async def wait(self, tokens: int) -> None:
        while (delay := self.cool_until - time.monotonic()) > 0:
            await asyncio.sleep(delay)
        if self.rpm:
            await self.rpm.take(1)
        if self.tpm:
            await self.tpm.take(tokens)
