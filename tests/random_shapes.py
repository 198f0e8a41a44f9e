"""Random workload shapes for the differential campaign of issue 38 (stdlib only).

A *shape* is one line of JSON drawn by :func:`draw` from a seed: the server's flags (``-m``, ``-f``,
``-n`` or ``slab_sizes``, the automover, the LRU's segments, the crawler, ``temporary_ttl``,
extstore) and the workload's phases (value sizes, rates steady or in bursts, TTLs, gets, deletes and
touches over uniform or Zipf keys).  :func:`workload` turns a shape into rows of
``(time, op, key, value_size, ttl)`` (the paced format: tests/paced.py, ``simulate``'s CSV) and
:func:`server_args` into memcached's arguments.  Both are pure functions of the shape, so a capture
stores the shape and the workload's digest (:func:`digest`), not the rows: the corpus stays small
and a change to this module that would alter a stored workload is caught by the digest.

``scripts/gen_shapes.py`` prints shapes; ``scripts/capture_random.py`` captures and compares them.
"""

from __future__ import annotations

import hashlib
import json
import math
import random

# releases whose shapes may use extstore: built with it (Debian's and the tag builds).  1.6.9 is too, but
# simulate refuses ext_path before 1.6.17 (the profile's extstore.refusal): its shapes draw none
EXTSTORE_RELEASES = ("1.6.14", "1.6.18", "1.6.24", "1.6.28", "1.6.38", "1.6.45")
TTLS = (1, 2, 5, 10, 15, 30, 60, 300, 0)
GEN2 = 1000        # seeds above it are generation 2: -m drawn from the bytes the workload sets


def _round8(n: float) -> int:
    return max(8, int(n) // 8 * 8)


def _sizes(rng: random.Random, chunked: bool) -> dict:
    """A value-size law: one to four fixed sizes, or a lognormal; chunked shapes add 300-900 KB values."""
    if rng.random() < 0.3:
        return {"kind": "lognormal", "median": int(math.exp(rng.uniform(math.log(80), math.log(8000)))),
                "sigma": round(rng.uniform(0.2, 1.2), 2), "min": 50, "max": 900_000}
    sizes = sorted({int(math.exp(rng.uniform(math.log(50), math.log(16000)))) for _ in range(rng.randint(1, 4))})
    weights = [rng.randint(1, 5) for _ in sizes]
    if chunked:
        sizes.append(rng.randint(300_000, 900_000))
        weights.append(max(1, sum(weights) // 50))        # a few big values among many small ones
    return {"kind": "fixed", "values": sizes, "weights": weights}


def _mean_size(law: dict) -> float:
    if law["kind"] == "lognormal":
        return min(law["max"], law["median"] * math.exp(law["sigma"] ** 2 / 2))
    return sum(v * w for v, w in zip(law["values"], law["weights"])) / sum(law["weights"])


def _ttls(rng: random.Random) -> list:
    picks = rng.sample(TTLS, rng.randint(1, 3))
    return [[ttl, rng.randint(1, 4)] for ttl in picks]


def _fill_memory(shape: dict, rng: random.Random) -> int:
    """Generation 2's ``-m``: the bytes the workload sets (values and about 60 bytes of header and key
    an item) times a fill ratio drawn log-uniform from 0.25 to 2, within 8-512 MB (64 with extstore):
    most shapes overfill memory (evict, move pages), some fit."""
    sets = 1 - shape["mix"]["get"] - shape["mix"]["delete"] - shape["mix"]["touch"]
    written = sum(p["rate"] * (p["end"] - p["start"]) * sets * (_mean_size(p["sizes"]) + 60) for p in shape["phases"])
    ratio = math.exp(rng.uniform(math.log(0.25), math.log(2)))
    return max(8, min(64 if shape.get("ext") else 512, int(written * ratio / 2 ** 20)))


def draw(seed: int, release: str = "1.6.18") -> dict:
    """The shape of ``seed`` for ``release`` (extstore only where the release's build has it).

    Seeds up to 1000 draw ``-m`` log-uniform over 8-512 MB whatever the workload (generation 1: many
    such shapes never fill memory, so the model and the server agree trivially); seeds above draw it
    from the bytes the workload sets (:func:`_fill_memory`)."""
    rng = random.Random(seed)
    duration = rng.choice((60, 60, 70, 80, 90))
    memory = int(math.exp(rng.uniform(math.log(8), math.log(512))))
    shape: dict = {"id": f"r{seed:05d}", "seed": seed, "release": release, "duration": duration,
                   "memory": memory, "options": {}}
    layout = rng.random()
    if layout < 0.15:
        first = _round8(rng.uniform(96, 400))
        ratio = rng.uniform(1.6, 2.5)
        sizes = [first]
        while sizes[-1] * ratio < 512 * 1024 and len(sizes) < 12:
            sizes.append(_round8(sizes[-1] * ratio))
        shape["options"]["slab_sizes"] = "-".join(map(str, sizes))
    elif layout < 0.45:
        shape["factor"] = round(rng.uniform(1.05, 2.0), 2)
        if rng.random() < 0.4:
            shape["min_size"] = rng.choice((16, 32, 48, 64, 96))
    opts = shape["options"]
    automove = rng.choice((0, 1, 1, 2)) if rng.random() < 0.7 else None
    if automove is not None:
        opts["slab_automove"] = automove
        if automove == 1 and rng.random() < 0.4:
            opts["slab_automove_window"] = rng.choice((5, 10, 30, 60))
            opts["slab_automove_ratio"] = rng.choice((0.5, 0.8, 0.95))
    if rng.random() < 0.25:
        hot = rng.randint(5, 40)
        opts["hot_lru_pct"], opts["warm_lru_pct"] = hot, rng.randint(5, 80 - hot)
    crawler = rng.random()
    if crawler < 0.15:
        opts["no_lru_crawler"] = True
    elif crawler < 0.35:
        opts["lru_crawler_tocrawl"] = rng.choice((50, 200, 1000, 5000))
    elif crawler < 0.45:
        opts["lru_crawler_sleep"] = rng.choice((0, 10, 1000, 10000))
    if rng.random() < 0.15:
        opts["temporary_ttl"] = rng.choice((5, 30, 61, 120))
    ext = release in EXTSTORE_RELEASES and rng.random() < 0.15
    if ext:
        shape["memory"] = memory = min(memory, 64)
        page = rng.choice((8, 16, 32, 64))
        shape["ext"] = {"size_mb": rng.choice((64, 128, 256, 512)) if page < 64 else rng.choice((256, 512)),
                        "ext_page_size": page,
                        "ext_wbuf_size": rng.choice([w for w in (2, 4, 8) if w <= page]),
                        "ext_item_size": rng.choice((256, 512, 1024, 2048)),
                        "ext_item_age": rng.choice((0, 0, 5, 30)),
                        "slab_automove_freeratio": rng.choice((None, 0.01, 0.05, 0.1))}
    chunked = not ext and rng.random() < 0.12
    phases = []
    bounds = sorted({0, duration} | ({rng.randrange(15, duration - 10)} if rng.random() < 0.4 else set()))
    # a rate that keeps the bytes a second within what one client sends on time (~12 MB/s)
    for start, end in zip(bounds, bounds[1:]):
        law = _sizes(rng, chunked)
        rate = int(math.exp(rng.uniform(math.log(50), math.log(3000))))
        rate = max(20, min(rate, int(12_000_000 / _mean_size(law))))
        phase = {"start": start, "end": end, "rate": rate, "sizes": law, "ttls": _ttls(rng)}
        if rng.random() < 0.25:
            phase["burst"] = {"period": rng.choice((5, 10, 20)), "on": rng.choice((1, 2, 3))}
        phases.append(phase)
    shape["phases"] = phases
    gets = rng.choice((0.0, 0.1, 0.3, 0.5, 0.7))
    shape["mix"] = {"get": gets,
                    "delete": rng.choice((0.0, 0.0, 0.02, 0.05)),
                    "touch": rng.choice((0.0, 0.0, 0.02, 0.05))}
    if seed > GEN2:
        memory = shape["memory"] = _fill_memory(shape, random.Random(seed * 31 + 2))
    # keys: new ones each set (gets of recent keys), or a key space of about the memory's items
    per_item = sum(_mean_size(p["sizes"]) for p in phases) / len(phases) + 60
    space = max(500, int(memory * 1024 * 1024 / per_item * rng.choice((0.5, 1, 2, 4))))
    shape["keys"] = rng.choice(({"kind": "fresh", "back": rng.choice((500, 5000, 50000))},
                                {"kind": "uniform", "space": space},
                                {"kind": "zipf", "space": space, "alpha": rng.choice((0.7, 0.9, 1.1, 1.3))}))
    return shape


def server_args(shape: dict, ext_dir: str = "/tmp") -> list[str]:
    """memcached's arguments for ``shape`` (without ``-p``/``-l``)."""
    args = ["-m", str(shape["memory"])]
    if "factor" in shape:
        args += ["-f", str(shape["factor"])]
    if "min_size" in shape:
        args += ["-n", str(shape["min_size"])]
    words = []
    for name, value in shape["options"].items():
        words.append(name if value is True else f"{name}={value}")
    ext = shape.get("ext")
    if ext:
        for name in ("ext_page_size", "ext_wbuf_size", "ext_item_size", "ext_item_age", "slab_automove_freeratio"):
            if ext.get(name) is not None:
                words.append(f"{name}={ext[name]}")
        words.append(f"ext_path={ext_dir}/slabcalc-random-{shape['id']}-{shape['release']}:{ext['size_mb']}m")
    for word in words:
        args += ["-o", word]
    return args


class _Keys:
    def __init__(self, spec: dict, rng: random.Random):
        self.spec, self.rng, self.written = spec, rng, 0
        if spec["kind"] == "zipf":
            self.a, self.n = spec["alpha"], spec["space"]
            self.top = self.n ** (1 - self.a) if self.a != 1 else 0.0

    def _rank(self) -> int:
        u = self.rng.random()
        if self.a == 1.0:
            return int(self.n ** u) - 1
        return min(self.n - 1, int((u * (self.top - 1) + 1) ** (1 / (1 - self.a))) - 1)

    def _pick(self) -> int:
        kind = self.spec["kind"]
        if kind == "uniform":
            return self.rng.randrange(self.spec["space"])
        if kind == "zipf":
            return self._rank() * 7919 % self.n        # popular keys scattered over the space
        back = int(self.rng.expovariate(1 / self.spec["back"])) % max(1, self.written)
        return max(0, self.written - 1 - back)

    def for_set(self) -> str:
        if self.spec["kind"] == "fresh":
            self.written += 1
            return f"k{self.written - 1:08d}"
        return f"k{self._pick():08d}"

    def for_read(self) -> str:
        return f"k{self._pick():08d}"


def _size(law: dict, rng: random.Random) -> int:
    if law["kind"] == "lognormal":
        return int(min(law["max"], max(law["min"], rng.lognormvariate(math.log(law["median"]), law["sigma"]))))
    return rng.choices(law["values"], law["weights"])[0]


def workload(shape: dict) -> list[tuple]:
    """The rows of ``shape``: ``(time, op, key, value_size, ttl)``, in time order (ms grain)."""
    rng = random.Random(shape["seed"] * 7 + 1)
    keys = _Keys(shape["keys"], rng)
    mix = shape["mix"]
    rows: list[tuple] = []
    for phase in shape["phases"]:
        ttl_values = [t for t, _ in phase["ttls"]]
        ttl_weights = [w for _, w in phase["ttls"]]
        burst = phase.get("burst")
        for second in range(phase["start"], phase["end"]):
            count = phase["rate"]
            if burst:
                on = second % burst["period"] < burst["on"]
                count = count * burst["period"] // burst["on"] if on else 0
            for i in range(count):
                t = round(second + i / count, 3)
                r = rng.random()
                if r < mix["get"] and (keys.written or shape["keys"]["kind"] != "fresh"):
                    rows.append((t, "get", keys.for_read(), 0, 0))
                elif r < mix["get"] + mix["delete"] and keys.written:
                    rows.append((t, "delete", keys.for_read(), 0, 0))
                elif r < mix["get"] + mix["delete"] + mix["touch"] and keys.written:
                    rows.append((t, "touch", keys.for_read(), 0, rng.choices(ttl_values, ttl_weights)[0]))
                else:
                    rows.append((t, "set", keys.for_set(), _size(phase["sizes"], rng),
                                 rng.choices(ttl_values, ttl_weights)[0]))
                    if shape["keys"]["kind"] != "fresh":
                        keys.written += 1
    return rows


def digest(rows: list[tuple]) -> str:
    """A short digest of a workload's rows: a stored capture names the workload it was made from."""
    h = hashlib.sha256()
    for row in rows:
        h.update(("%s,%s,%s,%d,%d\n" % row).encode())
    return h.hexdigest()[:16]


def dumps(shape: dict) -> str:
    return json.dumps(shape, separators=(",", ":"), sort_keys=True)
