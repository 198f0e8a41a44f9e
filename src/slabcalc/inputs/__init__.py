"""Readers at the edge: every input a command reads comes in through :mod:`slabcalc.inputs.entry`."""

from slabcalc.inputs.entry import open_items, open_workload, read_dumps, sampled_items

__all__ = ["open_items", "open_workload", "read_dumps", "sampled_items"]
