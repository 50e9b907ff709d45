#!/usr/bin/env bash
# Vim + ALE batch e2e (Debian: vim vim-ale). pallas-lsp must be on PATH, or PALLAS_TEST_PYTHON
# points at a Python whose bin/ has it. Exit 77: skipped (unless PALLAS_CI=1).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=${PALLAS_E2E_OUT:-$here/../../.e2e-out/vim}
skip() {
  if [ "${PALLAS_CI:-}" = 1 ]; then echo "FAIL (PALLAS_CI=1): $*" >&2; exit 1; fi
  echo "SKIP: $*" >&2; exit 77
}
command -v vim >/dev/null || skip "vim is not installed (apt-get install vim vim-ale)"
vim -N -u NONE -i NONE -n -es -c 'packadd ale' -c 'if !exists("g:loaded_ale") | cquit 1 | endif' -c 'qall!' ||
  skip "ALE is not installed (apt-get install vim-ale)"
[ -z "${PALLAS_TEST_PYTHON:-}" ] || export PATH="$(dirname "$PALLAS_TEST_PYTHON"):$PATH"
command -v pallas-lsp >/dev/null || { echo "FAIL: pallas-lsp is not on PATH" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out"
cp "$repo/examples/collective_matmul.py" "$out/kernel.py"
t0=$SECONDS
rc=0
(cd "$out" && HOME="$out" timeout 120 vim -N -u "$here/ale-test.vim" -i NONE -n -es kernel.py) || rc=$?
cat "$out/ale-test.log" 2>/dev/null || true
line35=$(sed -n 35p "$out/kernel.py")
[ $rc = 0 ] || { echo "FAIL: Vim/ALE (rc $rc)" >&2; exit 1; }
vim_version=$(vim --version | head -1 | cut -d'(' -f1)
grep -q "quick fix applied" "$out/ale-test.log" || { echo "FAIL: Vim/ALE: no quick fix applied" >&2; exit 1; }
[[ $line35 == *plgpu.TMEM\(*collective=True* ]] || { echo "FAIL: Vim/ALE: line 35 on disk: $line35" >&2; exit 1; }
echo "OK: $vim_version+ ALE: PLS001 at 25:13, fixed on disk ($((SECONDS - t0)) s): ${line35#"${line35%%[! ]*}"}"
