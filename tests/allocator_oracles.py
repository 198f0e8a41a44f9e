"""The real allocators, asked in a child process: Debian's libjemalloc2 and the system glibc.

Both run in a fresh ``python`` child: libjemalloc.so.2 cannot be dlopen()ed
into a running interpreter (its initial-exec TLS does not fit the static TLS
block), so the child starts with ``LD_PRELOAD``; and glibc is asked from a
new thread, whose fresh arena holds no free chunks left by the interpreter (a
free chunk up to 16 bytes larger than the request's is handed out whole,
which would hide the rule; so the thread itself allocates nothing else), with
the mmap threshold fixed by a tunable unless a test wants the dynamic one.  Each child reads request sizes as JSON on stdin and prints JSON.
"""

from __future__ import annotations

import ctypes.util
import json
import os
import subprocess
import sys

LIBRARY = "jemalloc"

_JEMALLOC_CHILD = r"""
import ctypes, json, sys
je = ctypes.CDLL(sys.argv[1])
je.nallocx.restype = ctypes.c_size_t
je.nallocx.argtypes = [ctypes.c_size_t, ctypes.c_int]
je.malloc.restype = ctypes.c_void_p
je.malloc.argtypes = [ctypes.c_size_t]
je.free.argtypes = [ctypes.c_void_p]

def ctl(name, kind):
    value, size = kind(), ctypes.c_size_t(ctypes.sizeof(kind))
    if je.mallctl(name.encode(), ctypes.byref(value), ctypes.byref(size), None, ctypes.c_size_t(0)):
        raise SystemExit(f"mallctl {name} failed")
    return value.value

def active():
    epoch = ctypes.c_uint64(1)
    je.mallctl(b"epoch", None, None, ctypes.byref(epoch), ctypes.c_size_t(8))
    return ctl("stats.active", ctypes.c_size_t)

query = json.load(sys.stdin)
nallocx = je.nallocx
bins = [(ctl(f"arenas.bin.{i}.size", ctypes.c_size_t), ctl(f"arenas.bin.{i}.slab_size", ctypes.c_size_t),
         ctl(f"arenas.bin.{i}.nregs", ctypes.c_uint32)) for i in range(ctl("arenas.nbins", ctypes.c_uint))]
footprints = []
for n in query["active"]:          # stats.active taken by one allocation (tcache off)
    before = active()
    p = je.malloc(n)
    footprints.append(active() - before)
    je.free(p)
json.dump({
    "version": ctl("version", ctypes.c_char_p).decode(),
    "cache_oblivious": ctl("opt.cache_oblivious", ctypes.c_bool),
    "quantum": ctl("arenas.quantum", ctypes.c_size_t),
    "page": ctl("arenas.page", ctypes.c_size_t),
    "bins": bins,
    "nallocx": [nallocx(n, 0) for n in query["sizes"]],
    "active": footprints,
}, sys.stdout)
"""

_GLIBC_CHILD = r"""
import ctypes, json, sys, threading
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.malloc_usable_size.restype = ctypes.c_size_t
libc.malloc_usable_size.argtypes = [ctypes.c_void_p]
sizes = json.load(sys.stdin)
out = (ctypes.c_size_t * (2 * len(sizes)))()   # allocated here, not in the thread's arena

def run():
    for i, n in enumerate(sizes):
        p = libc.malloc(n)
        out[2 * i] = ctypes.c_size_t.from_address(p - 8).value    # the chunk's size field
        out[2 * i + 1] = libc.malloc_usable_size(p)
        libc.free(p)

thread = threading.Thread(target=run)
thread.start()
thread.join()
json.dump([(out[2 * i] & ~7, bool(out[2 * i] & 2), out[2 * i + 1]) for i in range(len(sizes))], sys.stdout)
"""


def jemalloc_path() -> str | None:
    return ctypes.util.find_library(LIBRARY)


def require_jemalloc() -> str:
    """libjemalloc's soname for a test, or skip -- but fail when ``$CI`` is set."""
    from memcached_server import missing

    path = jemalloc_path()
    if path is not None:
        return path
    missing("libjemalloc not found (apt-get install libjemalloc2)")
    raise AssertionError("unreachable")


def _child(code: str, query, env: dict[str, str], args=()) -> object:
    proc = subprocess.run([sys.executable, "-c", code, *args], input=json.dumps(query), capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=120)
    if proc.returncode:
        raise RuntimeError(f"allocator child failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def ask_jemalloc(library: str, sizes: list[int], active: list[int]) -> dict:
    """nallocx() of ``sizes``, the bins, options, and stats.active of one allocation of each ``active``."""
    return _child(_JEMALLOC_CHILD, {"sizes": sizes, "active": active},
                  {"LD_PRELOAD": library, "MALLOC_CONF": "tcache:false"}, [library])


def ask_glibc(sizes: list[int], mmap_threshold: int | None) -> list[tuple[int, bool, int]]:
    """``(chunk size, mmapped, malloc_usable_size)`` of ``malloc(n)`` for each size, each freed
    before the next; ``mmap_threshold`` None leaves glibc's dynamic threshold on."""
    env = {"GLIBC_TUNABLES": f"glibc.malloc.mmap_threshold={mmap_threshold}"} if mmap_threshold else {}
    return [tuple(row) for row in _child(_GLIBC_CHILD, sizes, env)]
