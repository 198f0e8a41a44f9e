"""The memcached model: release rules, settings, classes, items and where they go. Pure: no I/O, no command line."""
