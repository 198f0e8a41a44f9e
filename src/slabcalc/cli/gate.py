"""A CI gate: thresholds on waste and memory, and the one-line reason a run crossed them.

Commands measure; this module only compares, exactly (waste as a ratio of
integers against a percentage held as a :class:`~fractions.Fraction`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:      # a type only: a gate on waste parses its percentage into a Fraction
    from fractions import Fraction

MIB = 1 << 20
EXIT_STATUS = 3   # distinct from 1 (data errors) and 2 (usage errors)


@dataclass(frozen=True)
class Gate:
    max_waste: Fraction | None = None   # share of memory holding no item data, e.g. 1/2
    max_memory: int | None = None       # bytes

    @property
    def active(self) -> bool:
        return self.max_waste is not None or self.max_memory is not None


@dataclass(frozen=True)
class Measure:
    """What a command measured: ``waste`` of ``memory_total`` bytes, and the memory to gate on."""

    waste: int | None          # bytes holding no item data (None: unknown)
    waste_of: int              # the bytes ``waste`` is a share of
    memory: int | None         # bytes (None: unknown)
    memory_what: str = "memory"


def _pct(share: Fraction) -> str:
    return f"{float(share * 100):.4f}".rstrip("0").rstrip(".") + "%"


def crossed(gate: Gate, measure: Measure) -> str | None:
    """The one-line reason ``measure`` crosses ``gate``, or None."""
    from fractions import Fraction

    reasons = []
    if gate.max_waste is not None:
        if measure.waste is None:
            reasons.append("waste is unknown (the input lacks requested bytes), so "
                           f"--fail-over-waste {_pct(gate.max_waste)} cannot pass")
        elif measure.waste_of and Fraction(measure.waste, measure.waste_of) > gate.max_waste:
            reasons.append(f"waste {_pct(Fraction(measure.waste, measure.waste_of))} is over "
                           f"--fail-over-waste {_pct(gate.max_waste)}")
    if gate.max_memory is not None:
        if measure.memory is None:
            reasons.append(f"{measure.memory_what} is unknown, so --fail-over-memory cannot pass")
        elif measure.memory > gate.max_memory:
            reasons.append(f"{measure.memory_what} {measure.memory} bytes ({measure.memory / MIB:.2f} MiB) is "
                           f"over --fail-over-memory {gate.max_memory} bytes ({gate.max_memory / MIB:.2f} MiB)")
    return "; ".join(reasons) or None
