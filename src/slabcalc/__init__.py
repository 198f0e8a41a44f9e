"""slabcalc: where memcached's memory goes, byte for byte.

The library in five calls::

    from slabcalc import load_profile, configure, slab_classes, place
    settings = configure(load_profile("1.6.18"), ["-n", "48", "-f", "1.25"])
    classes = slab_classes(settings)
    placement = place(settings, key_length=16, value_length=100, classes=classes)
    placement.item_size, placement.chunks[0].class_id, placement.waste
"""

from .classes import ClassInfo, SlabClass, class_for, describe_classes, slab_classes, vv_lines
from .item import ItemSize, item_size
from .placement import Chunk, Placement, Unplaceable, place
from .profile import DEFAULT_RELEASE, Profile, ProfileError, load_profile
from .settings import Refused, Settings, configure

__version__ = "0.1.0"

__all__ = [
    "ClassInfo", "SlabClass", "class_for", "describe_classes", "slab_classes", "vv_lines",
    "ItemSize", "item_size", "Chunk", "Placement", "Unplaceable", "place",
    "DEFAULT_RELEASE", "Profile", "ProfileError", "load_profile",
    "Refused", "Settings", "configure",
]
