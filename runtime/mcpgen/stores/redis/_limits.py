"""Token buckets on Redis: one Lua script takes from every bucket of a request in one
round trip, atomically, on Redis's own clock (so the workers' clocks do not matter)."""

from __future__ import annotations

from collections.abc import Sequence

from mcpgen.stores._limits import Bucket
from mcpgen.stores.redis._base import Arg, Connection, guard

__all__ = ["RedisRateLimitStore"]

# KEYS: the buckets; ARGV: cost, then rate and burst per bucket. A bucket is a hash
# (tokens, at in microseconds), kept until it would be full again. Returns "0" when
# taken, else the seconds to wait (as a string: Lua numbers become integers).
_TAKE = """
local now = redis.call('TIME')
local us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local cost = tonumber(ARGV[1])
local levels = {}
local wait = 0
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[2 * i])
  local burst = tonumber(ARGV[2 * i + 1])
  local held = redis.call('HMGET', key, 'tokens', 'at')
  local tokens = burst
  if held[1] then
    tokens = math.min(burst, tonumber(held[1]) + (us - tonumber(held[2])) / 1e6 * rate)
  end
  levels[i] = tokens
  if tokens < cost then
    local need = 3600
    if rate > 0 then need = (cost - tokens) / rate end
    if need > wait then wait = need end
  end
end
if wait > 0 then return tostring(wait) end
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[2 * i])
  local burst = tonumber(ARGV[2 * i + 1])
  redis.call('HSET', key, 'tokens', tostring(levels[i] - cost), 'at', tostring(us))
  local full = 3600000
  if rate > 0 then full = math.ceil((burst / rate) * 1000) + 1000 end
  redis.call('PEXPIRE', key, full)
end
return '0'
"""


class RedisRateLimitStore:
    """A `RateLimitStore` on Redis: every worker draws from the same buckets."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        # One group for every bucket: a request takes from several at once (the global
        # one, its tool's, its client's), atomically, so they share one slot.
        self._prefix = connection.under("rl") + "rl:"
        self._script = connection.client.register_script(_TAKE)

    async def take(self, buckets: Sequence[Bucket], cost: float = 1.0) -> float:
        keys = [self._prefix + bucket.key for bucket in buckets]
        args: list[Arg] = [repr(float(cost))]
        for bucket in buckets:
            args += [repr(float(bucket.rate)), repr(float(bucket.burst))]
        async with guard(self.connection.url):
            found = await self._script(keys=keys, args=args)
        return float(found)
