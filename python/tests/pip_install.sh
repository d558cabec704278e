#!/usr/bin/env bash
# `pip install --no-build-isolation .` into a fresh virtual environment (with
# Debian's site packages: setuptools, numpy, pandas; no package index), then
# import the installed quiver from outside the source tree and read a file.
set -euo pipefail
src="$1"; venv="$2"; input="$3"
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
cd "$src"
"$venv/bin/pip" install --no-build-isolation --no-index --no-deps -q .
cd /
"$venv/bin/python" - "$input" <<'PY'
import sys
import quiver
assert "site-packages" in quiver.__file__, quiver.__file__
t = quiver.read_ipc(sys.argv[1])
assert t.num_rows == 9994, t.num_rows
print("pip install: quiver", quiver.__version__, "from", quiver.__file__, "read", t.num_rows, "rows")
PY
