"""Every action the diagnosis prints, proven on the installed memcached (issue 31).

* each flag string of :data:`slabcalc.analysis.automover.FLAGS`, and the ``-m`` the
  stored healed reading gives, starts the server;
* ``slabs automove 1`` turns the automover on in a running node (``stats settings``
  says so) and ``slabs reassign A B``, as a calcification finding prints it for a
  live node, moves one page from A to B.

About two seconds.  Without a server these tests skip locally and FAIL under CI.
"""

from __future__ import annotations

import shlex
import time

import pytest
from helpers import run
from memcached_server import MemcachedServer, server_version

from slabcalc.analysis import automover
from slabcalc.analysis.stats import analyse, diagnosis
from slabcalc.inputs.client import Address, read_node
from slabcalc.inputs.dumps import dump_from_replies


def node_of(server):
    return analyse(dump_from_replies("node", read_node(Address("127.0.0.1", server.port), 2.0)))


def flags_printed():
    """The flag strings the findings print: the fixed ones, and the -m of the stored healed reading."""
    from test_automover import finding, reading

    found = finding(reading("on/healed+5"))
    return list(automover.FLAGS) + [a.words for a in found.actions if a.kind == "flag"]


@pytest.mark.parametrize("flags", flags_printed())
def test_each_printed_flag_starts_the_server(memcached, flags):
    with MemcachedServer(["-m", "16", *shlex.split(flags)], memcached=memcached) as server:
        assert server.version() == server_version(memcached)
        settings = server.stats("settings")
    if "slab_automove=1" in flags:
        assert settings["slab_automove"] == "1" and settings["slab_reassign"] == "yes"
    if flags.startswith("-m "):
        assert int(settings["maxbytes"]) == int(flags.split()[1]) << 20


def test_the_printed_commands_do_what_the_finding_says(memcached):
    # a calcified node: class 12 holds 3 pages of 1000-byte items, class 6 one page and evicts
    with MemcachedServer(["-m", "4", "-o", "slab_automove=0"], memcached=memcached) as server:
        server.set_many((f"big{i:05d}" for i in range(2400)), b"v" * 1000)
        server.version()
        time.sleep(2.1)        # the big items older than the small ones' victims
        server.set_many((f"small{i:05d}" for i in range(8000)), b"x" * 200)
        server.version()
        found = diagnosis(node_of(server))
        assert found is not None and found.kind == "calcification", found
        commands = [a.words for a in found.actions if a.kind == "command"]
        assert commands == [automover.AUTOMOVE_NOW, "slabs reassign 12 6"], found.line
        assert found.release == server_version(memcached)
        pages = int(server.slab_stats().per_class[6]["total_pages"])
        assert server._command(commands[1]) == "OK"
        deadline = time.monotonic() + 5
        while int(server.stats()["slabs_moved"]) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert int(server.stats()["slabs_moved"]) == 1
        assert int(server.slab_stats().per_class[6]["total_pages"]) == pages + 1
        assert server._command(commands[0]) == "OK"
        assert server.stats("settings")["slab_automove"] == "1"


@pytest.mark.parametrize("options", [["-o", "slab_automove=0"], ["-o", "no_modern"], ["-o", "no_slab_reassign"]])
def test_simulates_calcification_action_starts_the_server_it_names(memcached, options):
    """simulate's calcification finding ends with an action; its flag string, after the flags simulated,
    starts the release it names with the automover on."""
    import json

    release = server_version(memcached)
    args = ["simulate", "examples/calcification.csv", "--profile", release, "-m", "4", *options, "--format", "json"]
    found = json.loads(run(*args).stdout)["calcification"]
    said = found["action"]
    assert said.startswith(f"for memcached {release}: -o ") and said.endswith("on a running node") == (
        options != ["-o", "no_modern"] and options != ["-o", "no_slab_reassign"]), said
    flag = said.split(": ", 1)[1].split(" (at the next start)")[0]
    with MemcachedServer(["-m", "4", *options, *shlex.split(flag)], memcached=memcached) as server:
        settings = server.stats("settings")
    assert settings["slab_automove"] == "1" and settings["slab_reassign"] == "yes"
