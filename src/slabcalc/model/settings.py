"""memcached's start-up: command-line options to settings, refusing what it refuses.

:func:`configure` reads the same argument list a real ``memcached`` is started
with (``["-n", "48", "-f", "1.25", "-o", "slab_chunk_max=16"]``) and returns
the :class:`Settings` that shape memory, or raises :class:`Refused` carrying
the message memcached prints and its exit status.  Checks run in memcached's
own order (``main()`` in ``memcached.c``), as the profile describes them.

This module is long because it follows main()'s option handling in its order, each refusal where
memcached makes it; the rules themselves are profile data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Sequence

from slabcalc.errors import (
    Refused,  # noqa: F401 (raised here, caught by its callers)
    ValueRefused,
)
from slabcalc.model import extstore as ext
from slabcalc.model.profile import Check, Profile
from slabcalc.model.units import c_atof, c_atoi, c_strtol, c_strtoul, c_strtoul_lp64, wrap_int32


@dataclass(frozen=True)
class Settings:
    """The settings that decide slab classes and item sizes (memcached's names)."""

    profile: Profile
    chunk_size: int            # -n: bytes of key+value room in the smallest class
    factor: float              # -f: growth factor
    item_size_max: int         # -I: largest item, header included
    maxbytes: int              # -m: memory limit in bytes
    use_cas: bool              # not -C
    slab_chunk_max: int | None  # -o slab_chunk_max, in bytes (None before 1.4.29)
    slab_page_size: int        # bytes per page perslab is computed from
    slab_reassign: bool
    slab_sizes: tuple[int, ...] | None = None
    suffix: str | None = None  # the flags rule in force when an option changed the profile's
    warnings: tuple[str, ...] = field(default=())
    hashpower_init: int | None = None  # -o hashpower=N: the hash table's starting power (outside -m)
    hash_expand: bool = True           # not -o no_hashexpand: the hash table doubles as items grow
    suboptions: tuple[str, ...] = ()   # every -o word in order (the background threads read them)
    memory_limit_given: bool = False   # -m was among the options (sizing questions then ask "what fits")
    extstore: ext.Extstore | None = None   # -o ext_path=...: external storage (model/extstore.py)
    threads: int | None = None         # -t: worker threads (None: the release's default)
    maxconns: int | None = None        # -c: most connections at once (None: the release's default)
    preallocate: bool = False          # -L: every class's first page at start, -m in one block

    @property
    def memory_limit(self) -> int | None:
        """``-m`` in bytes when it was given, else None (a report then finds the ``-m`` to set)."""
        return self.maxbytes if self.memory_limit_given else None

    @property
    def worker_threads(self) -> int:
        """``-t``, or the release's default."""
        rules = self.profile.process
        return self.threads if self.threads is not None else (rules.threads_default if rules else 4)

    @property
    def max_connections(self) -> int:
        """``-c``, or the release's default."""
        rules = self.profile.process
        return self.maxconns if self.maxconns is not None else (rules.maxconns_default if rules else 1024)

    @property
    def cas_bytes(self) -> int:
        """Bytes the CAS adds to every item: the profile's ``cas_size`` when it is appended to the
        header and ``-C`` was not given, else 0 (1.6.18 memcached.h:143 ITEM_ntotal adds
        ``sizeof(uint64_t)`` only for ITEM_CAS items; 1.2 keeps it inside the header itself)."""
        p = self.profile
        return p.cas_size if (p.cas == "appended" and self.use_cas) else 0

    @property
    def suffix_rule(self) -> str:
        """How client flags are stored (``item.suffix`` of the profile, or as an option set it)."""
        return self.suffix or self.profile.suffix

    @property
    def largest_chunk(self) -> int:
        """Chunk size of the largest class."""
        rule = self.profile.largest
        if rule == "slab_chunk_max":
            return self.slab_chunk_max
        if rule == "item_size_max":
            return self.item_size_max
        return self.profile.page_bytes

    @property
    def chunked_items(self) -> bool:
        """Whether items larger than the largest chunk are split into chunks."""
        return self.profile.chunked != "none" and self.largest_chunk < self.item_size_max

    def page_length(self, chunk_size: int, perslab: int) -> int:
        """Bytes one new page of this class takes from ``-m`` (``do_slabs_newslab``)."""
        rule = self.profile.page_length
        if rule == "item_size_max_if_reassign":   # 1.4.29: -I bytes, though pages are 1 MiB
            return self.item_size_max if self.slab_reassign else chunk_size * perslab
        full_page = (self.slab_reassign
                     or (rule == "page_if_reassign_or_chunked" and self.slab_chunk_max != self.slab_page_size))
        if rule != "size_x_perslab" and full_page:
            return self.slab_page_size
        return chunk_size * perslab

    def as_argv(self, *, round_trip: bool = False) -> list[str]:
        """Options that start a real memcached of this profile with these settings.

        ``-m`` is written even when it was not given (memcached's default starts the same server);
        with ``round_trip`` only when it was, so that :func:`configure` reads these words back as these
        settings, ``memory_limit_given`` included (``report --vs`` lays its words on them)."""
        p = self.profile
        subopts = []
        if self.slab_reassign != p.default_slab_reassign and (
                "slab_reassign" if self.slab_reassign else "no_slab_reassign") in p.suboptions:
            subopts.append("slab_reassign" if self.slab_reassign else "no_slab_reassign")
        if self.hashpower_init is not None:
            subopts.append(f"hashpower={self.hashpower_init}")
        if not self.hash_expand:
            subopts.append("no_hashexpand")
        if self.extstore is not None:
            subopts += self.extstore.words
        chunk_max = (chunk_max_value(p, self.slab_chunk_max)
                     if p.has_slab_chunk_max and self.slab_chunk_max != p.default_slab_chunk_max else None)
        memory_mb = self.maxbytes >> 20 if self.memory_limit_given or not round_trip else None
        return self.argv(memory_mb=memory_mb, chunk_size=self.chunk_size, factor=repr(self.factor),
                         item_size_max=self.item_size_max, no_cas=p.has_cas_option and not self.use_cas,
                         slab_chunk_max=chunk_max, slab_sizes=self.slab_sizes or None, suboptions=subopts,
                         threads=self.threads, maxconns=self.maxconns, preallocate=self.preallocate)

    @staticmethod
    def argv(*, memory_mb=None, chunk_size=None, factor=None, item_size_max=None, no_cas: bool = False,
             slab_chunk_max=None, slab_sizes=None, suboptions=(), threads=None, maxconns=None,
             preallocate: bool = False) -> list[str]:
        """memcached's command line, written in one place: ``-m``, ``-n``, ``-f``, ``-I``, ``-C``, ``-t``,
        ``-c``, ``-L`` and ``-o`` (``slab_chunk_max=`` and ``slab_sizes=`` first, then ``suboptions``).
        :meth:`as_argv`, the command line's options and a running server's ``stats settings`` all
        come here.

        Values are written as given (text is passed through for memcached to parse
        as it does, ``-f 1,25`` included); ``None`` leaves the flag out.  ``slab_chunk_max``
        is in the release's unit (:func:`chunk_max_value`); ``slab_sizes`` a sequence of chunk
        sizes or the text of one.
        """
        words = []
        if slab_chunk_max is not None:
            words.append(f"slab_chunk_max={slab_chunk_max}")
        if slab_sizes is not None:
            listed = slab_sizes if isinstance(slab_sizes, str) else "-".join(map(str, slab_sizes))
            words.append("slab_sizes=" + listed)
        suboptions = [*words, *suboptions]
        argv: list[str] = []
        for flag, value in (("-m", memory_mb), ("-n", chunk_size), ("-f", factor), ("-I", item_size_max),
                            ("-t", threads), ("-c", maxconns)):
            if value is not None:
                argv += [flag, str(value)]
        if no_cas:
            argv.append("-C")
        if preallocate:
            argv.append("-L")
        if suboptions:
            argv += ["-o", ",".join(suboptions)]
        return argv


FREED_BYTES = 16   # bytes glibc's free() overwrites at the start of a small chunk (tcache next, key)


def _value_offset(subopts: list[str], index: int) -> int:
    """Where the value of suboption ``index`` starts in its ``-o`` argument."""
    return sum(len(sub) + 1 for sub in subopts[:index]) + len(subopts[index].partition("=")[0]) + 1


def _getopt(argv: Sequence[str], optstring: str) -> list[tuple[str, str | None]]:
    """POSIX getopt over ``argv`` with memcached's option string."""
    takes_arg = {c: optstring[i + 1:i + 2] == ":" for i, c in enumerate(optstring) if c != ":"}
    out, i = [], 0
    while i < len(argv):
        word = argv[i]
        if not word.startswith("-") or word == "-":
            raise Refused(f"unexpected argument {word!r} (memcached takes options only)", 1)
        j = 1
        while j < len(word):
            letter = word[j]
            if letter not in takes_arg:
                raise Refused(f"memcached: invalid option -- '{letter}'\nIllegal argument \"?\"", 1)
            if takes_arg[letter]:
                value = word[j + 1:]
                if not value:
                    i += 1
                    if i >= len(argv):
                        raise Refused(f"memcached: option requires an argument -- '{letter}'\n"
                                      f"Illegal argument \"?\"", 1)
                    value = argv[i]
                out.append((letter, value))
                break
            out.append((letter, None))
            j += 1
        i += 1
    return out


def _parse_item_size_max(text: str, units: str) -> int:
    """``case 'I'``: a trailing k/K or m/M scales ``atoi`` of the rest (C int arithmetic)."""
    if text and text[-1] in units:
        scale = 1024 if text[-1] in "kK" else 1024 * 1024
        return wrap_int32(c_atoi(text[:-1]) * scale)
    return c_atoi(text)


def _run_checks(checks: tuple[Check, ...], *, value: int, maxbytes: int = 0, item_size_max: int = 0,
                chunk_max: int = 0, page: int = 0) -> None:
    for check in checks:
        rule, limit = check.rule, check.value
        failed = {
            "min": lambda: value < limit,
            "max": lambda: value > limit,
            "max_fraction_of_maxbytes": lambda: value > maxbytes // limit,
            "not_above_item_size_max": lambda: chunk_max > item_size_max,
            "divides_item_size_max": lambda: item_size_max % chunk_max != 0,
            "divides_page": lambda: page % chunk_max != 0,
        }[rule]()
        if failed:
            message = check.message.format(chunk_max=chunk_max, item_size_max=item_size_max, page=page, value=value)
            raise Refused(message, check.exit)


def _parse_slab_sizes(text: str, chunk_size: int, chunk_max: int, align: int, max_regular: int) -> tuple[int, ...]:
    """``_parse_slab_sizes()``: dash-separated sizes, each in [-n, chunk max], rising by more than 8."""
    sizes: list[int] = []
    last = 0
    if len(text) < 1:
        raise Refused("", 64)  # memcached exits without a message
    for token in (t for t in text.split("-") if t):
        size = c_strtoul(token)
        if size is None or size < chunk_size or size > chunk_max:
            raise Refused(f"slab size {size or 0} is out of valid range", 64)
        if last >= size:
            raise Refused(f"slab size {size} cannot be lower than or equal to a previous class size", 64)
        if size <= last + align:
            raise Refused(f"slab size {size} must be at least {align} bytes larger than previous class", 64)
        sizes.append(size)
        last = size
        if len(sizes) > max_regular:  # slab_sizes[] holds MAX_NUMBER_OF_SLAB_CLASSES-1 entries
            raise Refused("too many slab classes specified", 64)
    return tuple(sizes)


@dataclass
class _Options:
    """What ``main()`` has read of the options so far: the profile's defaults, then each option in
    turn (:func:`configure` makes :class:`Settings` from it once they are all read)."""

    p: Profile
    chunk_size: int
    factor: float
    item_size_max: int
    maxbytes: int
    use_cas: bool
    slab_reassign: bool
    chunk_max: int | None
    storage: object = None     # ext.read_extstore()'s reader of the ext_* words (storage_read_config), or None
    chunk_max_given: bool = False
    slab_sizes_text: str | None = None
    slab_sizes_at: int = 0     # where its value starts in its -o argument
    printed: list[str] = field(default_factory=list)   # messages memcached prints without stopping
    suffix: str | None = None
    hashpower_init: int | None = None
    hash_expand: bool = True
    words: list[str] = field(default_factory=list)
    memory_limit_given: bool = False
    threads: int | None = None
    maxconns: int | None = None
    preallocate: bool = False
    udp_port: int = 0          # -U: 0 by default in every release with extstore rules

    @classmethod
    def defaults(cls, p: Profile) -> _Options:
        return cls(p, chunk_size=p.default_chunk_size, factor=p.default_factor,
                   item_size_max=p.default_item_size_max, maxbytes=p.default_maxbytes_mb << 20,
                   use_cas=p.default_use_cas, slab_reassign=p.default_slab_reassign,
                   chunk_max=p.default_slab_chunk_max,
                   storage=ext.read_extstore(p.extstore, ()) if p.extstore is not None else None)


def configure(profile: Profile, argv: Sequence[str] = ()) -> Settings:
    """Settings for a memcached of ``profile`` started with ``argv``, or :class:`Refused`."""
    o = _Options.defaults(profile)
    for letter, value in _getopt(argv, profile.getopt):
        if letter == "o":
            _read_suboptions(o, value)
        else:
            _read_option(o, letter, value)
    return _after_options(o)


def _read_option(o: _Options, letter: str, value: str | None) -> None:
    """One option other than ``-o``, as ``main()``'s switch reads it."""
    p = o.p
    if letter == "f":
        o.factor = c_atof(value)
        if o.factor <= 1.0:
            raise Refused(p.factor_message, 1)
        if not math.isfinite(o.factor):
            # memcached would accept inf/nan and compute garbage; we will not.
            raise Refused(f"Factor must be a finite number, not {value}", 1)
    elif letter == "n":
        o.chunk_size = c_atoi(value)
        if o.chunk_size == 0 or (p.chunk_size_refuse == "nonpositive" and o.chunk_size < 0):
            raise Refused(p.chunk_size_message, 1)
    elif letter == "m":
        o.maxbytes = (c_atoi(value) % (1 << 64)) * 1024 * 1024 % (1 << 64)
        o.memory_limit_given = True
    elif letter == "U":
        o.udp_port = c_atoi(value)
    elif letter in "tc" and p.process is not None:
        number = c_atoi(value)
        if number <= 0:
            raise Refused(p.process.threads_message if letter == "t" else p.process.maxconns_message, 1)
        if letter == "t":
            o.threads = number
        else:
            o.maxconns = number
    elif letter == "L":
        o.preallocate = True
    elif letter == "C":  # only in the getopt string of releases with optional CAS
        o.use_cas = False
    elif letter == "I":
        o.item_size_max = _parse_item_size_max(value, p.item_size_max_units)
        if p.item_size_max_checked == "at_option":
            _run_checks(p.item_size_max_checks, value=o.item_size_max, maxbytes=o.maxbytes)
            if p.item_size_max_warn_above is not None and o.item_size_max > p.item_size_max_warn_above:
                o.printed.append(p.item_size_max_warning)
        if p.big_item_at == "at_option":
            o.chunk_max = _big_item_chunk_max(p, o.item_size_max, o.chunk_max, o.chunk_max_given)
    # every other option in the getopt string (-p, -v, ...) leaves memory alone


def _read_suboptions(o: _Options, value: str) -> None:
    """One ``-o`` argument: its words in order, as ``main()``'s getsubopt() loop reads them."""
    p = o.p
    subopts = value.split(",")
    if len(subopts) > 1 and subopts[-1] == "":
        subopts.pop()          # getsubopt() stops at the end: a trailing comma is nothing
    o.words += subopts
    for index, sub in enumerate(subopts):
        name, has_value, subvalue = sub.partition("=")
        if p.background is not None and name in p.background.suboptions:
            background_values(p, [sub])     # main() refuses a value it cannot take, in order
        if o.storage is not None and name in ext.WORDS and name in p.ignored_suboptions:
            o.storage.read(sub)             # storage_read_config(), as main() meets the word
        effect = p.suboptions.get(name)
        if name == "slab_chunk_max" and p.has_slab_chunk_max:
            o.chunk_max = _parse_slab_chunk_max(p, subvalue if has_value else None, o.printed)
            o.chunk_max_given = True
        elif name == "slab_sizes" and p.slab_sizes:
            if not has_value and "slab_sizes_without_value" in p.crashes:
                raise Refused.crashed(p.crashes["slab_sizes_without_value"], o.printed)
            if has_value:
                o.slab_sizes_text, o.slab_sizes_at = subvalue, _value_offset(subopts, index)
        elif name in ("hashpower", "no_hashexpand") and name in p.ignored_suboptions:
            # outside -m: only the whole-process model (process.py) reads them
            if name == "no_hashexpand":
                o.hash_expand = False
            elif has_value or p.hashpower_checks:
                if not has_value:     # case HASHPOWER_INIT: a bare word is refused (1.6.18 memcached.c 5237-5240)
                    raise Refused(p.hashpower_missing or "Missing numeric argument for hashpower", 1)
                o.hashpower_init = c_atoi(subvalue)
                _run_checks(p.hashpower_checks, value=o.hashpower_init)   # 12..32 (5241-5251; 12..64 before 1.5.2)
        elif effect is not None:
            _apply_effect(o, effect)
            if effect.value_to == "slab_sizes" and has_value:
                o.slab_sizes_text, o.slab_sizes_at = subvalue, _value_offset(subopts, index)
        elif name not in p.ignored_suboptions:
            shown = sub if p.illegal_suboption_shows == "token" else ",".join(subopts[index:])
            raise Refused(f'Illegal suboption "{shown}"', p.illegal_suboption_exit, p.illegal_suboption_stream)


def _apply_effect(o: _Options, effect) -> None:
    """What a suboption the profile describes (``modern``, ``slab_reassign``, ...) sets."""
    changes = dict(effect.set)
    if not o.chunk_max_given:
        changes.update(effect.set_if_chunk_max_default)
    for key, new in changes.items():
        if key == "slab_chunk_max":
            o.chunk_max = o.p.page_bytes if new == "page" else int(new)
        elif key == "slab_reassign":
            o.slab_reassign = bool(new)
        elif key == "suffix":
            o.suffix = str(new)
        elif key == "factor":
            o.factor = float(new)


def _after_options(o: _Options) -> Settings:
    """The checks ``main()`` makes once every option is read, in its order, then the settings."""
    p = o.p
    if p.item_size_max_checked == "after_options":
        _run_checks(p.item_size_max_checks, value=o.item_size_max, maxbytes=o.maxbytes)
    page = o.item_size_max if p.page_size_rule == "item_size_max" else p.page_bytes
    if p.has_slab_chunk_max:
        if p.big_item_at == "after_options":
            o.chunk_max = _big_item_chunk_max(p, o.item_size_max, o.chunk_max, o.chunk_max_given)
        if o.chunk_max == 0 and "slab_chunk_max_zero" in p.crashes:
            raise Refused.crashed(p.crashes["slab_chunk_max_zero"], o.printed)
        _run_checks(p.slab_chunk_max_checks, value=o.chunk_max, item_size_max=o.item_size_max,
                    chunk_max=o.chunk_max, page=page)
    check_requirements(p, o.words)
    storage_on = o.storage is not None and ext.check_extstore(o.storage, o.item_size_max, o.udp_port)
    slab_sizes = None
    if o.slab_sizes_text is not None and p.slab_sizes == "freed_buffer" and o.slab_sizes_at < FREED_BYTES:
        # 1.4.31-1.5.16 parse the sizes from their copy of the -o argument after freeing it;
        # glibc (2.29+, as on the Debian 12 the captures come from) then overwrites the first
        # 16 bytes with its free-list pointers, and the number read there is 0
        raise Refused("slab size 0 is out of valid range", 64)
    if o.slab_sizes_text is not None:
        upper = o.chunk_max if o.chunk_max is not None else o.item_size_max
        slab_sizes = _parse_slab_sizes(o.slab_sizes_text, o.chunk_size, upper, p.align, p.max_regular)
    settings = Settings(profile=p, chunk_size=o.chunk_size, factor=o.factor, item_size_max=o.item_size_max,
                        maxbytes=o.maxbytes, use_cas=o.use_cas, slab_chunk_max=o.chunk_max, slab_page_size=page,
                        slab_reassign=o.slab_reassign, slab_sizes=slab_sizes, suffix=o.suffix,
                        warnings=tuple(o.printed), hashpower_init=o.hashpower_init, hash_expand=o.hash_expand,
                        suboptions=tuple(o.words), memory_limit_given=o.memory_limit_given, threads=o.threads,
                        maxconns=o.maxconns, preallocate=o.preallocate)
    return replace(settings, extstore=ext.start_extstore(o.storage)) if storage_on else settings


def background_values(profile: Profile, words: Sequence[str]) -> dict:
    """The background threads' settings (the profile's ``background`` defaults) after the ``-o``
    words, read in order as memcached reads them; :class:`Refused` with memcached's message for
    a value it refuses (``slab_automove must be between 0 and 2``)."""
    rules = profile.background
    if rules is None:
        return {}
    values = dict(rules.defaults)
    for word in words:
        name, has_value, text = word.partition("=")
        option = rules.suboptions.get(name)
        if option is None:
            continue
        values.update(option.set)
        if option.value is None:
            continue
        if not has_value:
            if option.default is None:
                raise Refused(option.missing or f"Missing {name} argument", 1)
            value = option.default
        elif option.parse == "strtoul":         # e.g. lru_crawler_tocrawl (1.6.18 memcached.c 5333-5343)
            value = c_strtoul_lp64(text)
            if value is None:
                raise Refused(option.message, 1)
        else:
            value = c_atof(text) if isinstance(rules.defaults[option.value], float) else c_atoi(text)
        bounds = option.refuse
        if any((test == "lt" and value < bound) or (test == "le" and value <= bound)
               or (test == "gt" and value > bound) or (test == "ge" and value >= bound)
               for test, bound in bounds.items()):
            raise Refused(option.message or f"{name}: {text} is out of range", 1)
        values[option.value] = value
    return values


def check_requirements(profile: Profile, words: Sequence[str]) -> None:
    """``main()``'s checks once every option is read (1.6.18 memcached.c 5757-5760: ``temporary_ttl
    requires lru_maintainer to be enabled``, exit 64): :class:`Refused` when one fails."""
    if profile.background is None or not profile.background.requires:
        return
    values = background_values(profile, words)
    for need in profile.background.requires:
        if values[need.field] and not values[need.needs]:
            raise Refused(need.message, need.exit)


def _big_item_chunk_max(p: Profile, item_size_max: int, chunk_max: int | None, given: bool) -> int | None:
    """The chunk max once ``-I`` is known: a ``-I`` above a page lowers a chunk max not given."""
    page = item_size_max if p.page_size_rule == "item_size_max" else p.page_bytes
    if p.big_item_chunk_max is not None and item_size_max > page and not given:
        return p.big_item_chunk_max
    return chunk_max


def _parse_slab_chunk_max(p: Profile, text: str | None, printed: list[str]) -> int:
    """``case SLAB_CHUNK_MAX``: the new chunk max in bytes.

    Before 1.6.24 a parse error is printed but not fatal, and ``safe_strtol``
    has already zeroed the setting; a missing value crashes the server.
    """
    if text is None:
        if p.slab_chunk_max_parse_errors_fatal:
            raise Refused("Missing slab_chunk_max argument", 1)
        printed.append("Missing slab_chunk_max argument")
        if "slab_chunk_max_without_value" in p.crashes:
            raise Refused.crashed(p.crashes["slab_chunk_max_without_value"], printed)
        return 0
    value = c_strtol(text)
    if value is None:
        if p.slab_chunk_max_parse_errors_fatal:
            raise Refused("could not parse argument to slab_chunk_max", 1)
        printed.append("could not parse argument to slab_chunk_max")
        return 0
    if p.slab_chunk_max_parse_errors_fatal and value <= 0:
        raise Refused("slab_chunk_max must be >= 0", 1)
    if p.slab_chunk_max_max_value is not None and value > p.slab_chunk_max_max_value:
        raise Refused("slab_chunk_max must be specified in kilobytes.", 1)
    return value * p.slab_chunk_max_unit


def chunk_max_value(p: Profile, size: int) -> int:
    """``slab_chunk_max`` of ``size`` bytes in the release's unit (bytes before 1.6.24, KiB after:
    the profile says); ValueError when it is not a whole number of them."""
    unit = p.slab_chunk_max_unit
    if size % unit:
        raise ValueRefused(f"memcached {p.release} takes slab_chunk_max in {'kilobytes' if unit == 1024 else 'bytes'}; "
                         f"{size} bytes is not a whole number of them")
    return size // unit


def with_overrides(settings: Settings, **changes) -> Settings:
    """A copy of ``settings`` with some fields replaced (e.g. ``use_cas=False``)."""
    return replace(settings, **changes)
