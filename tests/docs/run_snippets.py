#!/usr/bin/env python3
"""The doc test: runs every shell and Python snippet of the given Markdown
files as written, so that README.md and docs/*.md cannot go stale.

A snippet is a fenced block at the start of a line whose info string starts
with a language:

  ```sh / ```bash     run by bash, in one shell per Markdown file (variables,
                      `cd`, background jobs carry from block to block);
  ```python           run by `python3 FILE` inside that shell (so the
                      environment the shell blocks exported applies);
  ```LANG save=PATH   not run: written to PATH (relative to the working
                      folder) for a later block to use, e.g. a Node script;
  ```... skip-doctest not run (illustrative, or needs what a test machine
                      lacks: credentials, root, minutes); keep these few.

Other blocks (text, cpp, cmake, ...) are not snippets. Each Markdown file
runs in a fresh working folder that mirrors the checkout (a symlink per
top-level entry) with `build/release` pointing at the build under test, so
`build/release/quiver`, `./scripts/...` and `tests/...` resolve as they do
for a reader at the root of a checkout, while the files snippets write stay
out of the checkout. `python3` is the interpreter the Python module was
built for (--python). The shell runs with `set -e`; a failing command fails
the test, naming the file and line of its block; background jobs still
running at the end are killed. Runs are serialized by a lock file, since the
snippets use fixed paths under /tmp.

Usage: run_snippets.py --source SRC --build BUILD [--python PY]
                       [--timeout-s S] [--list] FILE.md...
Exit status 0 when every snippet ran, 1 otherwise.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

RUN_LANGS = {"sh": "sh", "bash": "sh", "shell": "sh", "python": "python", "py": "python"}
FENCE = re.compile(r"^```(\S*)(.*)$")


@dataclass
class Block:
    path: str  # the Markdown file, as given
    line: int  # 1-based line of the opening fence
    lang: str
    attrs: dict = field(default_factory=dict)
    flags: set = field(default_factory=set)
    text: str = ""

    @property
    def kind(self) -> str:
        """'sh', 'python', 'save', 'skip' or '' (not a snippet)."""
        runnable = RUN_LANGS.get(self.lang)
        if "skip-doctest" in self.flags:
            return "skip" if runnable or "save" in self.attrs else ""
        if "save" in self.attrs:
            return "save"
        return runnable or ""

    def where(self) -> str:
        return f"{self.path}:{self.line} ({self.lang})"


def parse_blocks(path: str) -> list[Block]:
    """The fenced blocks of a Markdown file. An unterminated fence is an error."""
    blocks: list[Block] = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang = m.group(1)
        block = Block(path=path, line=i + 1, lang=lang)
        for word in m.group(2).split():
            if "=" in word:
                k, v = word.split("=", 1)
                block.attrs[k] = v
            else:
                block.flags.add(word)
        body = []
        i += 1
        while i < len(lines) and not re.match(r"^```\s*$", lines[i]):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise SystemExit(f"{path}:{block.line}: the fence opened here is never closed")
        block.text = "\n".join(body) + "\n"
        blocks.append(block)
        i += 1
    return blocks


def make_workdir(source: str, build: str, python: str) -> str:
    """A folder mirroring the checkout, with build/release -> the build under test."""
    work = tempfile.mkdtemp(prefix="quiver-doctest-")
    for name in os.listdir(source):
        if name in ("build", ".git"):
            continue
        os.symlink(os.path.join(source, name), os.path.join(work, name))
    os.makedirs(os.path.join(work, "build"))
    os.symlink(build, os.path.join(work, "build", "release"))
    bindir = os.path.join(work, ".doctest", "bin")
    os.makedirs(bindir)
    os.symlink(python, os.path.join(bindir, "python3"))
    return work


def script_for(blocks: list[Block], work: str) -> str:
    """One bash script running the file's snippets in order."""
    out = [
        "set -e",
        "trap 'jobs -p | xargs -r kill 2>/dev/null || true' EXIT",
        f"export PATH={shlex.quote(os.path.join(work, '.doctest', 'bin'))}:\"$PATH\"",
        f"cd {shlex.quote(work)}",
    ]
    for n, b in enumerate(blocks):
        marker = shlex.quote(f"### doctest: {b.where()}")
        kind = b.kind
        if kind == "sh":
            out.append(f"echo {marker} >&2")
            out.append(b.text)
        elif kind == "python":
            file = os.path.join(work, ".doctest", f"snippet-{n}.py")
            with open(file, "w", encoding="utf-8") as f:
                f.write(b.text)
            out.append(f"echo {marker} >&2")
            out.append(f"python3 {shlex.quote(file)}")
        elif kind == "save":
            target = b.attrs["save"]
            dest = target if os.path.isabs(target) else os.path.join(work, target)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "w", encoding="utf-8") as f:
                f.write(b.text)
    out.append("echo '### doctest: done' >&2")
    return "\n".join(out) + "\n"


def run_file(path: str, blocks: list[Block], args) -> tuple[bool, float]:
    work = make_workdir(args.source, args.build, args.python)
    script = os.path.join(work, ".doctest", "run.sh")
    with open(script, "w", encoding="utf-8") as f:
        f.write(script_for(blocks, work))
    start = time.monotonic()
    proc = subprocess.Popen(["bash", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, text=True, errors="replace")
    try:
        output, _ = proc.communicate(timeout=args.timeout_s)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        output += f"\n!!! doctest: {path} ran past {args.timeout_s} s\n"
        rc = -1
    # Anything the snippets left running in the group (a server in the background).
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    seconds = time.monotonic() - start
    if rc != 0:
        last = [l for l in output.split("\n") if l.startswith("### doctest: ")]
        where = last[-1][len("### doctest: "):] if last else path
        sys.stdout.write(output[-12000:])
        print(f"\n!!! doctest FAILED in {where} (exit {rc}); working folder {work}")
        return False, seconds
    if args.verbose:
        sys.stdout.write(output)
    subprocess.run(["rm", "-rf", work], check=False)
    return True, seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", required=True, help="the checkout (README.md, docs/, scripts/ ...)")
    ap.add_argument("--build", required=True, help="the build folder whose quiver and Python module are tested")
    ap.add_argument("--python", default="/usr/bin/python3", help="the python3 the module was built for")
    ap.add_argument("--timeout-s", type=float, default=150, help="limit per Markdown file")
    ap.add_argument("--list", action="store_true", help="list the snippets, run nothing")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every snippet's output")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    args.source = os.path.abspath(args.source)
    args.build = os.path.abspath(args.build)

    plan = []
    counts = {"sh": 0, "python": 0, "save": 0, "skip": 0}
    for path in args.files:
        blocks = [b for b in parse_blocks(path) if b.kind]
        for b in blocks:
            counts[b.kind] += 1
            if args.list:
                print(f"{b.kind:6} {b.where()}")
        plan.append((path, blocks))
    snippets = counts["sh"] + counts["python"] + counts["save"]
    summary = (f"{snippets} snippets ({counts['sh']} sh, {counts['python']} python, {counts['save']} saved) "
               f"and {counts['skip']} skipped, in {len(args.files)} files")
    if args.list:
        print(summary)
        return 0

    with open(os.path.join(tempfile.gettempdir(), "quiver-doctest.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ok = True
        for path, blocks in plan:
            if not any(b.kind in ("sh", "python") for b in blocks):
                continue
            passed, seconds = run_file(path, blocks, args)
            n = sum(1 for b in blocks if b.kind in ("sh", "python", "save"))
            print(f"{'ok  ' if passed else 'FAIL'} {path}: {n} snippets in {seconds:.1f} s")
            ok = ok and passed
    print(("all passed: " if ok else "FAILED: ") + summary)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
