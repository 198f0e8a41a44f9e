"""slabcalc: where memcached's memory goes, byte for byte.

The library in five calls::

    from slabcalc import load_profile, configure, slab_classes, place
    settings = configure(load_profile("1.6.18"), ["-n", "48", "-f", "1.25"])
    classes = slab_classes(settings)
    placement = place(settings, key_length=16, value_length=100, classes=classes)
    placement.item_size, placement.chunks[0].class_id, placement.waste

The packages, each depending only on those before it:

``model``      memcached's rules: release profiles, settings, classes, items, placement, capacity
``allocators`` other allocators' size classes (jemalloc, glibc, ...), for comparison
``engines``    replays of workloads: the slab allocator, LRUs and 1.6's background threads
``inputs``     readers at the edge: item files, workloads, live nodes
``analysis``   reports, capacity plans, stats of live servers, the optimizer
``cli``        the command line (click), rendering and plots
"""

import slabcalc._plain  # noqa: F401 -- first: SLABCALC_PURE=1 loads the .py source of compiled modules
from slabcalc.model.classes import ClassInfo, SlabClass, class_for, describe_classes, slab_classes, vv_lines
from slabcalc.model.item import ItemSize, item_size
from slabcalc.model.placement import Chunk, Placement, Unplaceable, place
from slabcalc.model.profile import DEFAULT_RELEASE, Profile, ProfileError, load_profile
from slabcalc.model.settings import Refused, Settings, configure

__version__ = "0.1.0"

__all__ = [
    "ClassInfo", "SlabClass", "class_for", "describe_classes", "slab_classes", "vv_lines",
    "ItemSize", "item_size", "Chunk", "Placement", "Unplaceable", "place",
    "DEFAULT_RELEASE", "Profile", "ProfileError", "load_profile",
    "Refused", "Settings", "configure",
]
