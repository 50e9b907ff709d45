#!/usr/bin/env bash
# Everything the VS Code extension and the editor configs are tested with, from a fresh checkout:
# npm ci, compile, unit tests, bundle, package, the node LSP client test, then the real editors
# (VS Code via code-server + chromium, Emacs + eglot, Vim + ALE).
#   vscode-extension/scripts/test-all.sh
# PALLAS_CI=1: install what is missing (apt, code-server, a venv with pallas-lsp) and turn every
# skip into a failure. Without it, tests whose tool is missing are skipped with a message.
# PALLAS_TEST_PYTHON: a Python >= 3.10 with pallas-lsp installed (default: a fresh venv in
# .e2e-tools/venv). PALLAS_E2E_TOOLS: where code-server and node 24 go (default .e2e-tools).
set -euo pipefail
ext=$(cd "$(dirname "$0")/.." && pwd)
repo=$(cd "$ext/.." && pwd)
cd "$ext"
export PALLAS_E2E_TOOLS=${PALLAS_E2E_TOOLS:-$ext/.e2e-tools}
ci=${PALLAS_CI:-0}
t_all=$SECONDS
declare -a summary=()
step() {  # step NAME COMMAND...: run, time, record; exit code 77 is a skip
  local name=$1 t0=$SECONDS rc=0
  shift
  echo "=== $name"
  "$@" || rc=$?
  local took=$((SECONDS - t0))
  case $rc in
    0) summary+=("ok    ${took}s  $name") ;;
    77) summary+=("SKIP  ${took}s  $name") ;;
    *) summary+=("FAIL  ${took}s  $name (exit $rc)"); failed=1 ;;
  esac
  return 0
}
failed=0

if [ "$ci" = 1 ]; then
  step "apt packages" "$ext/scripts/install-apt.sh"
  # code-server builds native modules for ~3 minutes: in the background while the rest runs
  mkdir -p "$PALLAS_E2E_TOOLS"
  "$ext/scripts/install-code-server.sh" > "$PALLAS_E2E_TOOLS/code-server-install.log" 2>&1 & cs_install=$!
fi

# A Python with pallas-lsp (for fromEnvironment, Emacs and Vim) unless one is given
if [ -z "${PALLAS_TEST_PYTHON:-}" ]; then
  venv="$PALLAS_E2E_TOOLS/venv"
  py=$(command -v python3.11 || command -v python3)
  step "venv with pallas-lsp" sh -c "rm -rf '$venv' && '$py' -m venv '$venv' && '$venv/bin/pip' install -q --disable-pip-version-check -e '$repo' 'pygls>=2,<3' lsprotocol 2>&1 | grep -v '^WARNING: Location' || true; '$venv/bin/python' -c 'import pallas_lsp.server'"
  export PALLAS_TEST_PYTHON="$venv/bin/python"
fi
export PALLAS_TEST_ENV_PYTHON="$PALLAS_TEST_PYTHON"
# A Python older than 3.10, if there is one (pyenv shims exist for versions that are not active,
# so each candidate has to run): the extension must refuse it with a message.
for old in python3.9 python3.8 "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.[89]*/bin/python; do
  if "$old" -c 'import sys; sys.exit(sys.version_info >= (3, 10))' 2>/dev/null; then
    export PALLAS_TEST_OLD_PYTHON="$(command -v "$old")"
    break
  fi
done

step "npm ci" npm ci --no-audit --no-fund --loglevel=error
step "compile" npm run -s compile
step "unit tests" npm run -s test:unit
step "bundle" env PYTHON="$PALLAS_TEST_PYTHON" npm run -s bundle
step "package" npm run -s package
version=$(node -p 'require("./package.json").version')
step "vsix contents" python3 - "$ext/pallas-lsp-$version.vsix" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["extension/dist/extension.js", "extension/bundled/tool/lsp_server.py", "extension/LICENSE.txt",
        "extension/bundled/libs/pallas_lsp/server/__init__.py", "extension/bundled/libs/pygls/__init__.py",
        "extension/bundled/libs/lsprotocol/types.py"]
need += ["extension/bundled/libs/astroid/__init__.py", "extension/images/icon.png"]
missing = [n for n in need if n not in names]
# only what the server imports: not the flake8 plugin's dependencies, not the CLI's tqdm
not_imported = tuple(f"extension/bundled/libs/{name}/" for name in ("flake8", "pyflakes", "pycodestyle", "mccabe", "tqdm"))
unwanted = [n for n in names if "__pycache__" in n or n.startswith(("extension/src/", "extension/node_modules/", "extension/bundled/libs/bin/") + not_imported)
            or n.startswith("extension/bundled/libs/") and n.endswith(("mccabe.py", "pycodestyle.py"))]
print(f"{len(names)} files")
sys.exit(f"missing {missing}, unwanted {unwanted[:5]}" if missing or unwanted else 0)
PY
step "LSP client test (node)" npm run -s test:lsp

if [ "$ci" = 1 ]; then
  echo "=== waiting for the code-server install"
  wait "$cs_install" || { tail -30 "$PALLAS_E2E_TOOLS/code-server-install.log"; summary+=("FAIL  code-server install"); failed=1; }
  tail -2 "$PALLAS_E2E_TOOLS/code-server-install.log"
fi
step "VS Code e2e (code-server)" "$ext/e2e/vscode/run.sh" "$ext/pallas-lsp-$version.vsix"
step "Emacs + eglot e2e" "$ext/e2e/emacs/run.sh"
step "Vim + ALE e2e" "$ext/e2e/vim/run.sh"

echo "=== summary ($((SECONDS - t_all)) s)"
printf '%s\n' "${summary[@]}"
exit $failed
