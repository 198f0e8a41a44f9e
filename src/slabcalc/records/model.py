"""The records of the model: settings, a class, a placement (the stable JSON of classes and place)."""

from __future__ import annotations

from slabcalc.model.classes import ClassInfo
from slabcalc.model.placement import Placement
from slabcalc.model.settings import Settings


def settings_record(settings: Settings, use: str = "layout") -> dict:
    """The settings as JSON output reports them (memcached's ``stats settings`` names); ``options``
    lists every ``-o`` word given with its treatment by ``use`` (``layout`` or ``simulate``)."""
    from slabcalc.model.treatments import given_options

    p = settings.profile
    return {
        "release": p.release,
        "bits": p.bits,
        "chunk_size": settings.chunk_size,
        "growth_factor": settings.factor,
        "item_size_max": settings.item_size_max,
        "maxbytes": settings.maxbytes,
        "cas_enabled": settings.use_cas,
        "slab_chunk_max": settings.slab_chunk_max,
        "slab_page_size": settings.slab_page_size,
        "slab_reassign": settings.slab_reassign,
        "slab_sizes": list(settings.slab_sizes) if settings.slab_sizes else None,
        "memcached_args": settings.as_argv(),
        "options": option_records(given_options(settings, use)),
    }


def option_records(given) -> list[dict]:
    """The ``-o`` words given (:func:`slabcalc.model.treatments.given_options`): memcached's name, the
    value as given (None for a bare word), the treatment, and why when it is not modelled."""
    return [{"name": o.name, "value": o.value, "treatment": o.treatment,
             "why": o.why if o.treatment != "modelled" else None} for o in given]


def placement_record(placement: Placement) -> dict:
    """The stable JSON contract of ``slabcalc place`` (field names never change)."""
    item = placement.item
    home = placement.lru_class
    return {
        "key_length": item.key_length,
        "value_length": item.value_length,
        "flags": item.flags,
        "header": item.header,
        "cas": item.cas,
        "key": item.key,
        "suffix": item.suffix,
        "value": item.value,
        "item_size": item.total,
        "status": placement.status,
        "class": home.id if home else None,
        "chunk_size": home.chunk_size if home else None,
        "memory": placement.memory if placement.chunks else None,
        "waste": placement.waste,
        "waste_pct": None if placement.waste_pct is None else round(placement.waste_pct, 2),
        "spare_value_bytes": placement.spare_value_bytes,
        "chunks": [{"role": c.role, "class": c.class_id, "chunk_size": c.chunk_size,
                    "requested": c.requested, "waste": c.waste} for c in placement.chunks],
    }


def class_record(info: ClassInfo) -> dict:
    """The stable JSON contract of one ``slabcalc classes`` row."""
    c = info.slab_class
    return {
        "class": c.id,
        "chunk_size": c.chunk_size,
        "perslab": c.perslab,
        "max_data": info.max_data,
        "min_data": info.min_data,
        "page_length": info.page_length,
        "page_unused": info.page_unused,
        "duplicate_of": info.duplicate_of,
    }
