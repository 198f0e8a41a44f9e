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
