#!/usr/bin/env bash
# Debian packages for the editor e2e tests: chromium (drives code-server), Emacs + eglot, Vim +
# ALE, and the headers code-server's native modules build against. Installs only what is missing.
set -euo pipefail
pkgs=(chromium emacs-nox elpa-eglot vim vim-ale libkrb5-dev libxkbfile-dev libsecret-1-dev g++ make)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} = 0 ] && { echo "apt: all present"; exit 0; }
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
echo "apt: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
