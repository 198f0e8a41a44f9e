"""Build a memcached release from its tag, for the fidelity tests and captures of releases other than
the installed one (Debian's 1.6.18).

    python scripts/build_release.py 1.6.45                       # clones github.com/memcached/memcached
    python scripts/build_release.py 1.6.28 --git /path/to/memcached.git --out /tmp/rel-build
    SLABCALC_MEMCACHED=$(python scripts/build_release.py 1.6.45) python -m pytest tests/fidelity
    python scripts/capture_random.py capture --release 1.6.45 --binary "$(python scripts/build_release.py 1.6.45)"

It takes the tag's tree (``git archive``), nothing else: no patch, no file of memcached's in this
repository.  memcached names its version from ``git describe`` (``version.pl``, run by
``autogen.sh``), which an archive cannot answer: the tree is made a one-commit repository tagged with
the release, so the binary says ``memcached 1.6.45`` as the release's own build does (without it,
``memcached UNKNOWN``).  Then ``autogen.sh``, ``configure`` (``--enable-extstore``: the default from
1.6.0, asked for on 1.5) and ``make memcached`` (with ``-Wno-error -fcommon``: 1.4's ``-Werror`` meets
warnings today's compilers add, and its header-defined globals need gcc 10's old default).  Needs git, autoconf, automake, perl, a C compiler and
libevent's headers (Debian: ``apt-get install autoconf automake libevent-dev``).  Prints the binary's
path; a build already there that says its release is reused (``--force`` builds again).  Exit 1, with the failing step's
last lines, when a step fails.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

UPSTREAM = "https://github.com/memcached/memcached.git"
TAG = re.compile(r"^1\.\d+\.\d+$")


def _run(cmd: list[str], cwd: str, log: str) -> None:
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        done = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    if done.returncode:
        with open(log, encoding="utf-8", errors="replace") as f:
            tail = f.readlines()[-15:]
        sys.exit(f"build_release: {' '.join(cmd)} failed (exit {done.returncode}); the end of {log}:\n"
                 + "".join(tail))


def _tree(tag: str, git: str, src: str, log: str) -> None:
    """The tag's files in ``src`` (an empty folder), from a repository path or URL."""
    repo = git
    if not os.path.isdir(git):      # a URL: a bare, blob-less clone to archive from
        repo = os.path.join(os.path.dirname(src), "repo.git")
        if not os.path.isdir(repo):
            _run(["git", "clone", "--quiet", "--bare", "--filter=blob:none", git, repo], os.path.dirname(src), log)
    archive = subprocess.run(["git", f"--git-dir={_git_dir(repo)}", "archive", tag], capture_output=True)
    if archive.returncode:
        sys.exit(f"build_release: no tag {tag} in {git}: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", src], input=archive.stdout, check=True)


def _git_dir(repo: str) -> str:
    dot = os.path.join(repo, ".git")
    return dot if os.path.isdir(dot) else repo


def _tagged(tag: str, src: str, log: str) -> None:
    """``src`` a repository of one commit tagged ``tag``: what ``version.pl``'s ``git describe`` reads."""
    ident = ["-c", "user.name=slabcalc", "-c", "user.email=slabcalc@localhost", "-c", "commit.gpgsign=false"]
    _run(["git", "init", "--quiet"], src, log)
    _run(["git", "add", "--all"], src, log)
    _run(["git", *ident, "commit", "--quiet", "--no-verify", "-m", f"memcached {tag}"], src, log)
    _run(["git", *ident, "tag", "-a", tag, "-m", tag], src, log)


def build(tag: str, git: str, out: str, jobs: int, force: bool) -> str:
    """Build ``tag`` under ``out/tag``; the binary's path."""
    home = os.path.abspath(os.path.join(out, tag))
    binary = os.path.join(home, "bin", "memcached")
    if os.path.isfile(binary) and not force and _version(binary) == f"memcached {tag}":
        return binary
    os.makedirs(os.path.join(home, "bin"), exist_ok=True)
    log = os.path.join(home, "build.log")
    open(log, "w").close()
    src = tempfile.mkdtemp(prefix=f"memcached-{tag}-", dir=home)
    _tree(tag, git, src, log)
    _tagged(tag, src, log)
    _run(["./autogen.sh"], src, log)
    _run(["./configure", "--enable-extstore"], src, log)
    # 1.4's configure adds -Werror, and today's compiler warns where the release's did not
    # (sigignore deprecated), and 1.4 defines a global in a header (hash.h), which gcc 10 refuses by
    # default: the configured flags, with -Wno-error and -fcommon after them
    with open(os.path.join(src, "Makefile"), encoding="utf-8") as f:
        cflags = next((line.split("=", 1)[1].strip() for line in f if line.startswith("CFLAGS =")), "")
    _run(["make", f"-j{jobs}", f"CFLAGS={cflags} -Wno-error -fcommon", "memcached"], src, log)
    shutil.copy2(os.path.join(src, "memcached"), binary)
    shutil.rmtree(src)
    version = _version(binary)
    if version != f"memcached {tag}":
        sys.exit(f"build_release: {binary} says {version!r}, not 'memcached {tag}'")
    return binary


def _version(binary: str) -> str:
    return subprocess.run([binary, "-V"], capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tag", help="a release tag: 1.6.45")
    parser.add_argument("--git", default=UPSTREAM, help="memcached's repository: a path (bare or not) or a URL")
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "rel-build"),
                        help="where OUT/TAG/bin/memcached goes (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="make's jobs")
    parser.add_argument("--force", action="store_true", help="build again over an earlier build")
    args = parser.parse_args(argv)
    if not TAG.match(args.tag):
        parser.error(f"tag {args.tag!r}: a release such as 1.6.45")
    print(build(args.tag, args.git, args.out, max(args.jobs, 1), args.force))


if __name__ == "__main__":
    main()
