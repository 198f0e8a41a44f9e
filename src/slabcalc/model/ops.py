"""The commands a workload sends, as the replay engine numbers them."""

SET, GET, DELETE, TOUCH = range(4)
OP_NAMES = ("set", "get", "delete", "touch")
