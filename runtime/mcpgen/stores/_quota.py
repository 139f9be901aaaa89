"""Who a client is, for the limits one client must not use against the others.

A quota (legacy sessions, running tasks) counts against a *client key*: the principal
when the request was authenticated, else the network address it came from. IPv6
addresses count by their /64 network, since one host is commonly handed a whole /64
and could otherwise take a fresh key per request. The two kinds carry a prefix, so a
principal that happens to read like an address never shares an address's quota.
"""

from __future__ import annotations

import functools
import ipaddress

__all__ = ["client_key"]


def client_key(principal: str | None, address: str | None) -> str | None:
    """The key a client's quotas count against; None when neither is known (stdio,
    an in-memory transport): nothing is counted then."""
    if principal is not None:
        return "p:" + principal
    if not address:
        return None
    return _address_key(address)


@functools.lru_cache(maxsize=1024)  # a server sees the same few addresses again and again
def _address_key(address: str) -> str:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return "a:" + address  # a Unix socket path or the like: as it is
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return "a:" + str(ip.ipv4_mapped)
        return "a:" + str(ipaddress.IPv6Network((ip, 64), strict=False))
    return "a:" + str(ip)
