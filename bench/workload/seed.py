"""Redis seeding for the workload (run by bench/workload/run.py, or on its own).

    python bench/workload/seed.py --url redis://127.0.0.1:6390/0 [--products N] [--users N]

Keys: ``popularity`` (a sorted set: product id -> score), ``cart:<user>`` (a hash:
product id -> quantity), ``recent:<user>`` (a list of product ids, newest first),
``orders`` (a counter). Pipelined in batches, so seeding 100,000 products takes well
under a second.
"""

from __future__ import annotations

import argparse
import random

USERS = 1000


def seed(url: str, products: int = 100_000, users: int = USERS, seed: int = 28) -> None:
    import redis  # noqa: PLC0415

    rng = random.Random(seed)
    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
        pipe = client.pipeline(transaction=False)
        for start in range(1, products + 1, 5000):
            chunk = range(start, min(start + 5000, products + 1))
            pipe.zadd("popularity", {str(i): rng.randrange(0, 100_000) for i in chunk})
        for user in range(1, users + 1):
            cart = {str(rng.randrange(1, products + 1)): rng.randrange(1, 5) for _ in range(3)}
            pipe.hset(f"cart:{user}", mapping=cart)
            pipe.lpush(f"recent:{user}", *[rng.randrange(1, products + 1) for _ in range(10)])
        pipe.set("orders", 0)
        pipe.execute()
    finally:
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--products", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=USERS)
    args = parser.parse_args()
    seed(args.url, args.products, args.users)


if __name__ == "__main__":
    main()
