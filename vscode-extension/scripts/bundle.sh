#!/bin/sh
# Install pallas-lsp (this repository) and its pure-Python dependencies into bundled/libs, for
# the .vsix. Wheels are chosen for the oldest supported Python (3.10) and must be pure Python
# (py3-none-any): one bundle for every platform and every Python >= 3.10. pip evaluates environment markers against the Python
# running it, not the target, so the backports that Python 3.10 needs are listed explicitly.
#   PYTHON=python3.11 npm run bundle
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
repo=$(cd "$here/.." && pwd)
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$here/bundled/libs"
# Build from a copy: an in-tree build reuses the repository's build/ directory, whose stale
# files (modules deleted since) would end up in the wheel.
mkdir "$tmp/src"
tar -C "$repo" --exclude=./.git --exclude=./vscode-extension --exclude=./build --exclude='./.venv*' \
  --exclude='./.ci-venv*' --exclude='*.egg-info' --exclude=__pycache__ -cf - . | tar -C "$tmp/src" -xf -
"$python" -m pip wheel --quiet --no-deps --wheel-dir "$tmp" "$tmp/src"
# Only what the server imports: pallas-lsp itself without its dependencies (flake8 and its
# checkers are for the flake8 plugin, tqdm for the CLI's progress bar), then astroid, pygls and
# the backports. tests/test_layout.py checks that the server imports nothing else.
bundle() {  # bundle PIP-ARGS...: install into bundled/libs, pure-Python wheels for Python 3.10
  "$python" -m pip install --quiet --disable-pip-version-check --no-compile --target "$here/bundled/libs" \
    --python-version 3.10 --implementation py --abi none --platform any --only-binary=:all: "$@"
}
bundle --no-deps "$tmp"/pallas_lsp-*.whl
bundle "astroid>=4,<5" "pygls>=2,<3" lsprotocol exceptiongroup tomli typing_extensions
rm -rf "$here/bundled/libs/bin"  # console scripts with this machine's interpreter path in them
echo "bundled/libs: $(ls "$here/bundled/libs" | grep -v dist-info | tr '\n' ' ')"
