#!/usr/bin/env bash
# Emacs + eglot batch e2e (Debian: emacs-nox elpa-eglot). pallas-lsp must be on PATH, or
# PALLAS_TEST_PYTHON points at a Python whose bin/ has it. Exit 77: skipped (unless PALLAS_CI=1).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=${PALLAS_E2E_OUT:-$here/../../.e2e-out/emacs}
skip() {
  if [ "${PALLAS_CI:-}" = 1 ]; then echo "FAIL (PALLAS_CI=1): $*" >&2; exit 1; fi
  echo "SKIP: $*" >&2; exit 77
}
command -v emacs >/dev/null || skip "emacs is not installed (apt-get install emacs-nox elpa-eglot)"
emacs --batch --eval "(progn (package-initialize) (require 'eglot))" 2>/dev/null || skip "eglot is not installed (apt-get install elpa-eglot)"
[ -z "${PALLAS_TEST_PYTHON:-}" ] || export PATH="$(dirname "$PALLAS_TEST_PYTHON"):$PATH"
command -v pallas-lsp >/dev/null || { echo "FAIL: pallas-lsp is not on PATH" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out"
cp "$repo/examples/collective_matmul.py" "$out/kernel.py"
t0=$SECONDS
(cd "$out" && HOME="$out" timeout 120 emacs --batch -l "$here/eglot-test.el" kernel.py) 2>&1 | tee "$out/emacs.log" | grep -v "^\[jsonrpc\]\|^Saving file\|^Wrote \|^Loading \|^$" || true
line35=$(sed -n 35p "$out/kernel.py")
grep -q "ms saved; PLS001 left: 0" "$out/emacs.log" && [[ $line35 == *plgpu.TMEM\(*collective=True* ]] ||
  { echo "FAIL: Emacs/eglot; line 35 on disk: $line35" >&2; exit 1; }
echo "OK: Emacs $(emacs --batch --eval '(princ emacs-version)' 2>/dev/null) + eglot: PLS001 at 25:13, fixed on disk ($((SECONDS - t0)) s): ${line35#"${line35%%[! ]*}"}"
