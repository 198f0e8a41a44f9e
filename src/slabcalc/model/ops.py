"""The commands a workload sends, as the replay engine numbers them.

``FILL`` is not a memcached command but a client's look-aside read: a get and, on a miss, a set of
the object (how traces of cache requests without commands -- libCacheSim's oracleGeneral -- replay).
"""

SET, GET, DELETE, TOUCH, FILL = range(5)
OP_NAMES = ("set", "get", "delete", "touch", "get, set on a miss")
