#!/usr/bin/env bash
# Real VS Code e2e: code-server (VS Code 1.139) + headless chromium. Installs the built pallas
# .vsix and a test-only driver extension, opens a copy of examples/collective_matmul.py, waits
# for PLS001, screenshots the quick-fix menu, applies the quick fix, saves, and checks the file;
# then pallas.ignore must reach the running server, and "Pallas: Restart Server" must work.
#   e2e/vscode/run.sh [path/to/pallas-lsp-X.Y.Z.vsix]
# Env: PALLAS_E2E_TOOLS (code-server, from scripts/install-code-server.sh), PALLAS_E2E_OUT
# (scratch, default .e2e-out/vscode), PALLAS_SCREENSHOT (where the PNG goes; default in the
# scratch dir), PALLAS_TEST_PYTHON (sets pallas.interpreter; default: the extension resolves it),
# PALLAS_TEST_OLD_PYTHON (a Python < 3.10: the extension must refuse it with a message),
# PALLAS_CI=1 (a missing tool fails instead of skipping: exit 77 means skipped).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ext=$(cd "$here/../.." && pwd)
repo=$(cd "$ext/.." && pwd)
tools=${PALLAS_E2E_TOOLS:-$ext/.e2e-tools}
out=${PALLAS_E2E_OUT:-$ext/.e2e-out/vscode}
version=$(node -p 'require(process.argv[1]).version' "$ext/package.json")
vsix=$(realpath "${1:-$ext/pallas-lsp-$version.vsix}")
png=${PALLAS_SCREENSHOT:-$out/vscode-quickfix.png}
cs_bin="$tools/cs/node_modules/.bin/code-server"

skip() {
  if [ "${PALLAS_CI:-}" = 1 ]; then echo "FAIL (PALLAS_CI=1): $*" >&2; exit 1; fi
  echo "SKIP: $*" >&2; exit 77
}
[ -x "$cs_bin" ] || skip "code-server is not installed in $tools (run scripts/install-code-server.sh)"
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || skip "chromium is not installed (apt-get install chromium)"
[ -f "$vsix" ] || { echo "FAIL: no $vsix (npm run bundle && npm run compile && npm run package)" >&2; exit 1; }

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
export PATH="$tools/cs/bin:$PATH"  # node 24 for code-server
export XDG_CONFIG_HOME="$out/xdg-config" XDG_DATA_HOME="$out/xdg-data"  # keep ~/.config untouched

attempt() {
  rm -rf "$out" && mkdir -p "$out/ws" "$out/ud/User" "$out/exts"
  cp "$repo/examples/collective_matmul.py" "$out/ws/kernel.py"
  python3 - "$out/ud/User/settings.json" <<'PY'
import json, os, sys
settings = {
    "security.workspace.trust.enabled": False, "workbench.startupEditor": "none",
    "telemetry.telemetryLevel": "off", "extensions.autoUpdate": False, "extensions.ignoreRecommendations": True,
    "update.mode": "none", "chat.disableAIFeatures": True, "workbench.secondarySideBar.defaultVisibility": "hidden",
    "workbench.tips.enabled": False, "editor.minimap.enabled": False, "files.autoSave": "off",
    "window.zoomLevel": 0, "editor.fontSize": 15,
    "git.enabled": False, "git.openRepositoryInParentFolders": "never",  # no "open the repository?" toast
}
settings.update(json.loads(os.environ.get("PALLAS_E2E_SETTINGS") or "{}"))  # e.g. '{"pallas.logLevel": "debug"}'
if os.environ.get("PALLAS_TEST_PYTHON"):
    settings["pallas.interpreter"] = [os.environ["PALLAS_TEST_PYTHON"]]
json.dump(settings, open(sys.argv[1], "w"), indent=1)
PY
  # the driver is packaged here, from its two files
  (cd "$here/driver" && "$ext/node_modules/.bin/vsce" package --skip-license -o "$out/driver.vsix" >/dev/null)
  local cs=("$cs_bin" --user-data-dir "$out/ud" --extensions-dir "$out/exts")
  for v in "$vsix" "$out/driver.vsix"; do "${cs[@]}" --force --install-extension "$v" >/dev/null; done
  local port dport
  port=$(free_port) dport=$(free_port)
  PALLAS_E2E_OUT="$out" setsid "${cs[@]}" --auth none --bind-addr "127.0.0.1:$port" --disable-telemetry \
    --disable-update-check --disable-workspace-trust --disable-getting-started-override "$out/ws" > "$out/code-server.log" 2>&1 &
  cspid=$!
  for _ in $(seq 1 150); do curl -fs -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.2; done
  setsid "$chromium" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --user-data-dir="$out/chrome" --remote-debugging-port="$dport" --window-size=1280,800 --force-device-scale-factor=1 \
    "http://127.0.0.1:$port/?folder=$out/ws" > "$out/chromium.log" 2>&1 &
  crpid=$!
  node "$here/screenshot.js" "$dport" "$out" "$png" > "$out/screenshot.log" 2>&1 &
  shotpid=$!
  local rc=0
  for _ in $(seq 1 1800); do
    [ -s "$out/result.json" ] && break
    kill -0 "$crpid" 2>/dev/null || { echo "chromium died (see $out/chromium.log)" >&2; rc=3; break; }
    sleep 0.1
  done
  [ -s "$out/result.json" ] || { [ $rc = 3 ] || echo "no result from the driver in 180 s" >&2; rc=${rc/0/2}; }
  wait "$shotpid" 2>/dev/null || true
  cleanup
  return $rc
}

cspid= crpid= shotpid=
cleanup() {  # code-server and chromium leave children behind: end each one's process group
  for p in $crpid $cspid; do kill -- "-$p" 2>/dev/null || true; done
  [ -z "$shotpid" ] || kill "$shotpid" 2>/dev/null || true
  for p in $crpid $cspid; do wait "$p" 2>/dev/null || true; done
  cspid= crpid= shotpid=
}
trap cleanup EXIT

t0=$SECONDS
rc=0; attempt || rc=$?
if [ $rc = 3 ]; then  # chromium crashed once on a first start here: one retry
  echo "retrying once" >&2; rc=0; attempt || rc=$?
fi
if [ $rc != 0 ]; then
  echo "--- code-server.log" >&2; tail -20 "$out/code-server.log" >&2 || true
  echo "FAIL: VS Code e2e after $((SECONDS - t0)) s" >&2; exit 1
fi
cat "$out/screenshot.log"
python3 - "$out" "$png" <<'PY'
import json, os, sys
out, png = sys.argv[1:]
r = json.load(open(os.path.join(out, "result.json")))
print("\n".join(r.get("steps", [])))
text = open(os.path.join(out, "ws", "kernel.py")).read()  # the file on disk, as saved by VS Code
line35 = text.splitlines()[34]
problems = []
if not r.get("ok"): problems.append("driver: " + r.get("error", "not ok"))
d = r.get("diagnostic") or {}
if (d.get("code"), d.get("line"), d.get("column")) != ("PLS001", 25, 13): problems.append(f"diagnostic {d}")
if "plgpu.TMEM(" not in line35 or "collective=True" not in line35: problems.append(f"line 35 on disk: {line35!r}")
if not (os.path.exists(png) and os.path.getsize(png) > 10000): problems.append("no screenshot")
if problems:
    sys.exit("FAIL: " + "; ".join(problems))
print(f"OK: VS Code {r['vscode']}: PLS001 at 25:13, quick fix applied and saved (line 35: {line35.strip()}); "
      f"pallas.ignore applied live; pallas.restart works; Python < 3.10: {r.get('oldPython')}")
PY
echo "VS Code e2e: $((SECONDS - t0)) s"
