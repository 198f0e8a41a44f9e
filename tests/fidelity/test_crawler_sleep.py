"""``-o lru_crawler_sleep=N``: the crawler's pace (1.6.18 crawler.c 486-495: it sleeps N us once every
1 001 items it checks), modelled as a crawl at once and refused past the pace the captures show.

One random shape (r01018: crawls of about 40 000 items every 5-6 s from 60 s on) captured twice on
Debian's 1.6.18 at six paces (tests/data/crawler_sleep/): at 0.4 and 0.8 s of sleeps a crawl the
server's runs are as its runs with no sleep (the corpus's r01018, which the model agrees with); at 1, 2,
4 and 40 s they are not -- the crawl frees what expires while it runs, or frees it late.  So the model
takes a crawl whose sleeps add up to at most 0.8 s as at once, and refuses a longer one where the replay
reaches it (exit 2, naming the pace that would do).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import random_corpus
from helpers import run, suboption_refusals_differ
from memcached_server import MemcachedServer, require_memcached

from slabcalc import configure, load_profile
from slabcalc.engines import crawler
from slabcalc.engines.background import background_for
from slabcalc.errors import CrawlTooSlow

DATA = Path(__file__).resolve().parent.parent / "data" / "crawler_sleep" / "1.6.18"
SHOWN, APART = (10_000, 20_000), (25_000, 50_000, 100_000, 1_000_000)


def _paced(sleep: int) -> dict:
    record = random_corpus.load(DATA / f"r01018-s{sleep}.json.gz")
    assert record["shape"]["options"]["lru_crawler_sleep"] == sleep
    return record


@pytest.fixture(scope="module")
def unslept() -> dict:
    return random_corpus.load(random_corpus.DATA / "1.6.18" / "r01018.json.gz")


@pytest.fixture(scope="module")
def rows(unslept):
    return random_corpus.drawn(unslept)


def _outside(runs: list[dict], reference: dict) -> list[str]:
    """Each figure of each run in ``runs`` at each snapshot outside the tolerance of every run of
    ``reference`` (and not between them): the corpus's verdict, a server run in the model's place."""
    return [miss for run in runs
            for miss in random_corpus.verdict(reference, [{name: figure[0] for name, figure in
                                                           random_corpus._figures(snap, False).items()}
                                                          for snap in run["snapshots"]])]


@pytest.mark.parametrize("sleep", SHOWN)
def test_up_to_0_8_s_of_sleeps_a_crawl_the_server_is_as_with_no_sleep(sleep, unslept, rows):
    record = _paced(sleep)
    assert record["digest"] == unslept["digest"]
    assert _outside(record["runs"], unslept) == []
    # and the model, crawling at once, agrees with the server's runs with no sleep and accepts this pace
    model = random_corpus.model_figures(record, rows)
    assert random_corpus.verdict(unslept, model) == []


@pytest.mark.parametrize("sleep", APART)
def test_from_1_s_of_sleeps_the_server_is_apart_and_the_model_refuses(sleep, unslept, rows, monkeypatch):
    record = _paced(sleep)
    apart = _outside(record["runs"], unslept)
    assert apart, sleep
    with pytest.raises(CrawlTooSlow, match=f"sleeping {sleep:,} us"):
        random_corpus.model_states(record, rows)
    if sleep >= 50_000:
        # the crawl at once misses these runs: the refusal is needed, not only cautious
        monkeypatch.setattr(crawler, "CRAWL_SHOWN_US", 10**12)
        assert random_corpus.verdict(record, random_corpus.model_figures(record, rows)), sleep


def test_the_refusal_names_the_crawl_and_a_pace_that_would_do(rows):
    record = _paced(100_000)
    with pytest.raises(CrawlTooSlow) as refused:
        random_corpus.model_states(record, rows)
    said = str(refused.value)
    assert "memcached 1.6.18's crawl at 6" in said and "checks 40," in said
    assert "4.00 s of sleeps" in said and "\n" not in said
    most = int(said.rsplit("lru_crawler_sleep of ", 1)[1].split()[0].replace(",", ""))
    assert 19_000 < most < 21_000       # 0.8 s over 40 sleeps
    record = _paced(10_000)
    record["shape"]["options"]["lru_crawler_sleep"] = most
    random_corpus.model_states(record, rows)        # that pace is taken
    record["shape"]["options"]["lru_crawler_sleep"] = most + 1
    with pytest.raises(CrawlTooSlow):
        random_corpus.model_states(record, rows)


def _workload(tmp_path, ttl: int, later: str = "") -> str:
    # 30 000 items: the crawl at about 67 s (the first found the LRUs empty) checks them all
    lines = ["time,op,key,value_size,ttl"] + [f"0,set,k{i},100,{ttl}" for i in range(30_000)]
    path = tmp_path / "w.csv"
    path.write_text("\n".join(lines + [later or "80,get,k1,,"]) + "\n")
    return str(path)


@pytest.mark.parametrize("limits", ["64", "64,128"])
def test_simulate_refuses_a_slow_crawl_of_items_with_a_ttl_with_exit_2_on_one_line(tmp_path, limits):
    path = _workload(tmp_path, 3600)
    fine = run("simulate", path, "-m", limits, "-o", "lru_crawler_sleep=20000")
    assert fine.exit_code == 0, fine.stderr
    slow = run("simulate", path, "-m", limits, "-o", "lru_crawler_sleep=30000")
    assert slow.exit_code == 2
    said = slow.stderr.strip().splitlines()
    assert len(said) == 1 and re.search(r"crawl at 6\d s of the workload checks 30,000 items", said[0])
    assert "lru_crawler_sleep of 27,586 us or less" in said[0]     # 0.8 s over the 29 sleeps of 30 000 items


@pytest.mark.parametrize("ttl", [0, 86_400])
def test_a_slow_crawl_of_items_not_expiring_within_the_hour_is_taken_until_one_does(tmp_path, ttl):
    # Without a TTL, or with one past the hour, the crawl frees nothing and counts nothing in its
    # histogram at any pace: taken.  But the server finds it complete 0.87 s later, and its next
    # crawl (two minutes on) is late by as much: that crawl, of one item expiring within the hour
    # (the others deleted), is refused.
    untimed = _workload(tmp_path, ttl)
    assert run("simulate", untimed, "-m", "64", "-o", "lru_crawler_sleep=30000").exit_code == 0
    gone = "\n".join(f"150,delete,k{i},," for i in range(30_000))
    later = _workload(tmp_path, ttl, f"100,set,t1,100,3600\n{gone}\n200,get,t1,,")
    slow = run("simulate", later, "-m", "64", "-o", "lru_crawler_sleep=30000")
    assert slow.exit_code == 2
    said = slow.stderr.strip().splitlines()
    assert len(said) == 1 and "on a schedule the server runs behind: the crawl at 6" in said[0], said
    assert "checked 30,000 items, none expiring, in 0.87 s" in said[0]
    assert run("simulate", later, "-m", "64", "-o", "lru_crawler_sleep=20000").exit_code == 0


def test_sleep_is_read_as_memcached_reads_it():
    config = configure(load_profile("1.6.18"), ["-m", "64"])
    assert background_for(config, []).lru_crawler_sleep == 100
    assert background_for(config, ["lru_crawler_sleep=0"]).lru_crawler_sleep == 0
    assert background_for(config, ["lru_crawler_sleep=1000000"]).lru_crawler_sleep == 1_000_000
    assert background_for(config, ["lru_crawler_sleep=12x"]).lru_crawler_sleep == 12    # atoi
    path = require_memcached()
    assert suboption_refusals_differ(["lru_crawler_sleep", "lru_crawler_sleep=1000001", "lru_crawler_sleep=-1"],
                                     path) == []
    with MemcachedServer(["-m", "64", "-o", "lru_crawler_sleep=12x"], memcached=path) as server:
        assert int(server.stats("settings")["lru_crawler_sleep"]) == 12


def test_a_sampled_replay_paces_the_nodes_crawl_not_the_samples(tmp_path):
    # At a 0.5 sample the crawl checks about 15 000 items standing for the node's 30 000: 0.9 s of
    # sleeps at 30 000 us, refused as the whole replay is; the sample's own 15 000 would sleep 0.45 s.
    path = _workload(tmp_path, 3600, "\n".join(f"80,get,k{i},," for i in range(100)))
    slow = run("simulate", path, "-m", "64", "--sample", "0.5", "-o", "lru_crawler_sleep=30000")
    assert slow.exit_code == 2
    node = int(re.search(r"checks ([\d,]+) items", slow.stderr).group(1).replace(",", ""))
    assert 28_500 <= node <= 31_500
