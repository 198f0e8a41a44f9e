"""Typed access to a raw profile mapping, each wrong field a one-line :class:`ProfileError` naming it
(``profile {source}: field {path}: {why}``), and what a release number looks like."""

from __future__ import annotations

import re
from typing import Any, Mapping

from slabcalc.errors import ProfileError
from slabcalc.model.profile.data import CHECK_RULES, Check

RELEASE = re.compile(r"\d+(\.\d+){1,2}")


def check_release(release) -> str:
    """``release`` as text when it is a release number (``1.6.18``, ``1.6``); else ProfileError."""
    if not RELEASE.fullmatch(str(release)):
        raise ProfileError(f"not a release number: {release!r} (expected e.g. 1.6.18)")
    return str(release)


def leaf_paths(mapping: Mapping, prefix: str = "") -> list[str]:
    """The dotted paths of every leaf of ``mapping`` (``item.header``)."""
    paths = []
    for key, value in mapping.items():
        path = f"{prefix}{key}"
        paths += leaf_paths(value, path + ".") if isinstance(value, Mapping) and value else [path]
    return paths


class RuleReader:
    """Typed access to a raw profile mapping with one-line errors naming the field."""

    def __init__(self, raw: Mapping, source: str):
        self.raw, self.source = raw, source
        self.read: set[tuple[str, ...]] = {("release",), ("source",), ("base",), ("changes",)}

    def unknown_fields(self) -> list[str]:
        """Fields of the raw mapping no rule reads (a misspelt field must not pass silently)."""
        read = self.read
        unknown = []
        for path in leaf_paths(self.raw):
            parts = tuple(path.split("."))
            if not any(parts[:depth] in read for depth in range(1, len(parts) + 1)):
                unknown.append(path)
        return unknown

    def fail(self, path: str, why: str) -> ProfileError:
        return ProfileError(f"profile {self.source}: field {path}: {why}")

    def get(self, path: str, kind: type | tuple, *, optional: bool = False, choices=None):
        self.read.add(tuple(path.split(".")))
        node: Any = self.raw
        for part in path.split("."):
            if not isinstance(node, Mapping) or part not in node:
                if optional:
                    return None
                raise self.fail(path, "missing")
            node = node[part]
        if node is None and optional:
            return None
        if isinstance(node, bool) and kind in (int, float):
            raise self.fail(path, f"must be a number, not {node!r}")
        if kind is float and isinstance(node, int):
            node = float(node)
        if not isinstance(node, kind):
            name = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise self.fail(path, f"must be {name}, not {node!r}")
        if choices is not None and node not in choices:
            raise self.fail(path, f"must be one of {', '.join(map(str, choices))}, not {node!r}")
        return node

    def per_bits(self, path: str, bits: int, *, optional: bool = False) -> int | None:
        node = self.get(path, (dict, int), optional=optional)
        if node is None:
            return None
        if isinstance(node, int):
            return node
        value = node.get(bits, node.get(str(bits)))
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.fail(path, f"needs a non-negative byte count for {bits}-bit")
        return value

    def checks(self, path: str) -> tuple[Check, ...]:
        items = self.get(path, list, optional=True) or []
        out = []
        for i, item in enumerate(items):
            where = f"{path}[{i}]"
            if not isinstance(item, Mapping):
                raise self.fail(where, "must be a mapping with rule, message, exit")
            rule = item.get("rule")
            if rule not in CHECK_RULES:
                raise self.fail(f"{where}.rule", f"must be one of {', '.join(CHECK_RULES)}, not {rule!r}")
            message, exit_code, value = item.get("message"), item.get("exit"), item.get("value")
            if not isinstance(message, str):
                raise self.fail(f"{where}.message", "must be text")
            if not isinstance(exit_code, int):
                raise self.fail(f"{where}.exit", "must be an exit status")
            if rule in ("min", "max", "max_fraction_of_maxbytes") and not isinstance(value, int):
                raise self.fail(f"{where}.value", "must be a number")
            out.append(Check(rule=rule, message=message, exit=exit_code, value=value))
        return tuple(out)
