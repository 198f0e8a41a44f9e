"""Every error slabcalc raises on purpose, under one base: :class:`SlabcalcError`.

Each says what is wrong in one line (the file, line or value it concerns).  Many
also subclass ``ValueError`` (or ``RuntimeError``), as they did before this module
existed, so that callers catching those keep working.  The command line turns
them into exit statuses: refusals of a configuration are usage errors (2), data
that cannot be used are data errors (1).
"""

from __future__ import annotations

from typing import Sequence


class SlabcalcError(Exception):
    """The base of slabcalc's errors."""


class ValueRefused(SlabcalcError, ValueError):
    """A value slabcalc cannot use: a size, a percentage, a length, an address, an option's value."""


# raised by slabcalc.model.settings
class Refused(SlabcalcError, ValueError):
    """memcached refuses to start with these options.

    ``message`` is memcached's own text, ``exit_status`` the status the server
    exits with, ``stream`` where it prints (``stderr`` or ``stdout``).
    """

    def __init__(self, message: str, exit_status: int = 1, stream: str = "stderr", crash: str | None = None):
        super().__init__(message)
        self.message, self.exit_status, self.stream, self.crash = message, exit_status, stream, crash

    @classmethod
    def crashed(cls, crash, printed: Sequence[str] = ()) -> "Refused":
        """The server dies by a signal (exit status -signal) after printing ``printed``."""
        return cls("\n".join(printed), -crash.signal, crash=crash.why)


# raised by slabcalc.model.profile
class ProfileError(SlabcalcError, ValueError):
    """A profile that cannot be found, parsed or validated (one line, names the field)."""


# raised by slabcalc.model.placement
class Unplaceable(SlabcalcError, ValueError):
    """A configuration memcached accepts but under which it cannot store this item."""


# raised by slabcalc.inputs.items
class InputError(SlabcalcError, ValueError):
    """Unusable input (one line, names the file, line and value)."""


# raised by slabcalc.inputs.client
class NodeError(SlabcalcError):
    """One node could not be read: a one-line reason (the CLI prefixes the node)."""


# raised by slabcalc.analysis.stats
class DumpError(SlabcalcError, ValueError):
    """Saved stats that cannot be read (one line: file, line and text)."""


# raised by slabcalc.engines.background
class SimulationError(SlabcalcError, ValueError):
    """A configuration or workload the engine does not model."""


class RefusedInReplay(SimulationError, ValueRefused):
    """A configuration the replay refuses where it reaches it (exit 2, as a refusal before it)."""


class AgeUndefined(RefusedInReplay):
    """An -o value memcached takes whose arithmetic the replay reaches where C leaves it undefined
    (hot_max_factor x the COLD tail's age past rel_time_t): a refused configuration, exit 2."""


class CrawlTooSlow(RefusedInReplay):
    """A crawl whose sleeps at the ``-o lru_crawler_sleep`` pace add up to more of the server's time
    than the replay's crawl-at-once is shown for: a refused configuration, exit 2."""


# raised by slabcalc.cli.plot
class PlotUnavailable(SlabcalcError, RuntimeError):
    """matplotlib is missing, or the path's suffix is not one we draw (one line)."""
