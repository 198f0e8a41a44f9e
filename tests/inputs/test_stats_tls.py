"""``stats --server`` over TLS, against the installed memcached started with ``-Z`` (issue 31).

The test makes its own certificates with the ``openssl`` command line in a
temporary directory: a CA, a server certificate for 127.0.0.1 (subjectAltName
IP) and a client certificate, both signed by that CA, and a second CA that
signed neither.  Items are stored over TLS by the test's own client
(tests/memcached_server.py); what slabcalc reads over TLS is checked against
that client's own ``stats``.  Option names of the server: 1.6.18 memcached.c
``ssl_chain_cert``, ``ssl_key``, ``ssl_verify_mode`` (2: a client certificate
is required, 5500-5502), ``ssl_ca_cert``.
"""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess

import pytest
from helpers import ROOT, run
from memcached_server import MemcachedServer, missing

OPENSSL_CA = ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"]


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


def _ca(name, cwd):
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={name}", *OPENSSL_CA,
             cwd=cwd)


def _signed(name, ca, extensions, cwd):
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
             f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=cwd)
    (cwd / f"{name}.ext").write_text(extensions)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key", "-CAcreateserial",
             "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext", cwd=cwd)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    if shutil.which("openssl") is None:
        missing("the openssl command line is not installed")
    where = tmp_path_factory.mktemp("tls")
    _ca("ca", where)
    _ca("other", where)
    keys = "authorityKeyIdentifier=keyid\nsubjectKeyIdentifier=hash\n"
    _signed("server", "ca", keys + "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n", where)
    _signed("client", "ca", keys + "extendedKeyUsage=clientAuth\n", where)
    return where


def _client(certs, with_certificate=False):
    context = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    if with_certificate:
        context.load_cert_chain(str(certs / "client.pem"), str(certs / "client.key"))
    return context


def _tls_args(certs, require_client=False):
    options = f"ssl_chain_cert={certs / 'server.pem'},ssl_key={certs / 'server.key'}"
    if require_client:
        options += f",ssl_verify_mode=2,ssl_ca_cert={certs / 'ca.pem'}"
    return ["-m", "16", "-Z", "-o", options]


@pytest.fixture(scope="module")
def tls_node(memcached, certs):
    """A node started with -Z holding 300 items of 100 bytes and 40 of 3 000, stored over TLS."""
    with MemcachedServer(_tls_args(certs), memcached=memcached, tls=_client(certs)) as server:
        assert server.stats("settings")["ssl_enabled"] == "yes"
        server.set_many((f"small:{i}" for i in range(300)), b"s" * 100)
        server.set_many((f"big:{i}" for i in range(40)), b"b" * 3000)
        assert server.stats()["curr_items"] == "340"   # on this connection: after every set
        yield server


@pytest.fixture(scope="module")
def strict_node(memcached, certs):
    """A node started with -Z that requires a client certificate signed by the CA."""
    with MemcachedServer(_tls_args(certs, require_client=True), memcached=memcached,
                         tls=_client(certs, with_certificate=True)) as server:
        server.set_many((f"k:{i}" for i in range(25)), b"v" * 500)
        assert server.stats()["curr_items"] == "25"
        yield server


def _stats(*args):
    return run("stats", "--format", "json", *args)


# docs/stats-watch-tls.md's failed handshakes and refused files (its node 127.0.0.1:11211)
DOCUMENTED = [line for line in (ROOT / "docs" / "stats-watch-tls.md").read_text(encoding="utf-8").splitlines()
              if line.startswith("Error: ")]


def _documented(stderr, port=None) -> bool:
    """The one line printed is one the page shows, the node's port aside."""
    line = stderr.rstrip("\n") if port is None else stderr.rstrip("\n").replace(f":{port}: ", ":11211: ")
    return "\n" not in line and line in DOCUMENTED


def test_stats_over_tls_reads_what_was_stored(tls_node, certs):
    result = _stats("--server", f"127.0.0.1:{tls_node.port}", "--tls", "--tls-ca", str(certs / "ca.pem"))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    general = tls_node.stats()
    assert doc["totals"]["curr_items"] == int(general["curr_items"]) == 340
    slabs = tls_node.slab_stats().per_class
    read = {row["class"]: row for row in doc["classes"] if row["class"]}
    assert {c: (r["pages"], r["used_chunks"], r["items"]) for c, r in read.items()} == \
        {c: (s["total_pages"], s["used_chunks"], int(tls_node.item_stats()[c]["number"])) for c, s in slabs.items()}
    assert sorted(r["items"] for r in read.values()) == [40, 300]


def test_an_untrusted_ca_and_a_wrong_host_name_fail_in_one_line(tls_node, certs):
    port = tls_node.port
    untrusted = _stats("--server", f"127.0.0.1:{port}", "--tls-ca", str(certs / "other.pem"))
    assert untrusted.exit_code == 1 and untrusted.stdout == ""
    assert untrusted.stderr == (f"Error: 127.0.0.1:{port}: TLS handshake failed: certificate verify failed: "
                                "unable to get local issuer certificate\n")
    wrong_host = _stats("--server", f"localhost:{port}", "--tls", "--tls-ca", str(certs / "ca.pem"))
    assert wrong_host.exit_code == 1
    assert wrong_host.stderr == (f"Error: localhost:{port}: TLS handshake failed: certificate verify failed: "
                                 "Hostname mismatch, certificate is not valid for 'localhost'.\n")
    assert _documented(untrusted.stderr, port) and _documented(wrong_host.stderr, port)


def test_a_client_certificate_is_given_when_the_server_requires_one(strict_node, certs):
    node = ("--server", f"127.0.0.1:{strict_node.port}", "--tls-ca", str(certs / "ca.pem"))
    given = _stats(*node, "--tls-cert", str(certs / "client.pem"), "--tls-key", str(certs / "client.key"))
    assert given.exit_code == 0, given.output
    assert json.loads(given.stdout)["totals"]["curr_items"] == 25
    refused = _stats(*node)
    assert refused.exit_code == 1 and refused.stdout == ""
    # the server's alert, or its close when that comes first (TLS 1.3: after our side of the handshake)
    failed = f"Error: 127.0.0.1:{strict_node.port}: TLS handshake failed: "
    assert refused.stderr in (failed + "tlsv13 alert certificate required (the server requires a client "
                                       "certificate: --tls-cert)\n",
                              failed + "the server closed the connection (does it require a client certificate, "
                                       "--tls-cert?)\n")
    assert _documented(refused.stderr, strict_node.port)


def test_a_pool_is_read_with_the_same_tls_settings(tls_node, strict_node, certs):
    result = _stats("--server", f"127.0.0.1:{tls_node.port}", "--server", f"127.0.0.1:{strict_node.port}",
                    "--tls-ca", str(certs / "ca.pem"), "--tls-cert", str(certs / "client.pem"),
                    "--tls-key", str(certs / "client.key"))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [n["totals"]["curr_items"] for n in doc["nodes"]] == [340, 25]


def test_tls_to_a_plain_node_and_unusable_files_are_one_line(memcached, certs, monkeypatch):
    with MemcachedServer(["-m", "8"], memcached=memcached) as plain:
        result = _stats("--server", f"127.0.0.1:{plain.port}", "--tls", "--tls-ca", str(certs / "ca.pem"),
                        "--timeout", "1")
    assert result.exit_code == 1
    # memcached answers our ClientHello with ERROR when it holds a line end (OpenSSL's cipher list
    # has one, c0 0a), else it waits for one
    assert result.stderr in (f"Error: 127.0.0.1:{plain.port}: TLS handshake failed: {reason} (does the node serve "
                             "TLS?)\n" for reason in ("wrong version number", "no reply in time"))
    assert "no reply in time" in result.stderr or _documented(result.stderr, plain.port)
    not_a_ca = _stats("--server", "127.0.0.1:1", "--tls-ca", str(certs / "server.key"))
    assert not_a_ca.exit_code == 2
    assert not_a_ca.stderr == f"Error: --tls-ca {certs / 'server.key'}: no certificate or crl found\n"
    monkeypatch.chdir(certs)                    # the files named as the page names them
    mismatch = _stats("--server", "127.0.0.1:1", "--tls-cert", "client.pem", "--tls-key", "server.key")
    assert mismatch.exit_code == 2 and mismatch.stderr.count("\n") == 1
    assert "key values mismatch" in mismatch.stderr and _documented(mismatch.stderr)


def test_watch_reads_over_tls_too(tls_node, certs):
    result = run("stats", "--server", f"127.0.0.1:{tls_node.port}", "--tls-ca", str(certs / "ca.pem"),
                 "--watch", "1", "--count", "1", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["nodes"][0]["curr_items"] == 340
    refused = run("stats", "--server", f"127.0.0.1:{tls_node.port}", "--tls-ca", str(certs / "other.pem"),
                  "--watch", "1", "--count", "1", "--format", "json")
    assert refused.exit_code == 1
    assert refused.stderr == (f"Error: 127.0.0.1:{tls_node.port}: TLS handshake failed: certificate verify "
                              "failed: unable to get local issuer certificate\n")
