"""The commands a workload sends, as the replay engine numbers them.

``FILL`` is not a memcached command but a client's look-aside read: a get and, on a miss, a set of
the object (how traces of cache requests without commands -- libCacheSim's oracleGeneral -- replay).
"""

from typing import Final

# Final: the compiled engine (setup.py) takes them as constants, not a lookup per operation
SET: Final = 0
GET: Final = 1
DELETE: Final = 2
TOUCH: Final = 3
FILL: Final = 4
OP_NAMES = ("set", "get", "delete", "touch", "get, set on a miss")

# The replay's clock: memcached's is seconds since its start in 32 bits (rel_time_t: 1.6.18
# memcached.h 581-582 for an item's times), and the replay keeps an item's times in 31
# (engines/lru.py: 8 bytes an item less).  A workload's times are read up to TIME_MAX seconds
# (65.9 years) and a server's uptime at its start up to UPTIME_MAX (388 days), so that the clock
# (62 s + uptime + time) never passes CLOCK_MAX.
CLOCK_MAX: Final = (1 << 31) - 1
TIME_MAX: Final = (1 << 31) - (1 << 26)
UPTIME_MAX: Final = 1 << 25
