#!/usr/bin/env bash
# Installs what the tests and `npm start` need beyond npm ci, each only when missing:
#   Debian packages: Ceph radosgw (real S3 for storage tests), Chromium (editor test), curl;
#   n8n 2.8.4 outside the repository (scripts/n8n.sh install; ~5 min and 2.3 GB the first time).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=()
command -v radosgw >/dev/null && command -v ceph-mon >/dev/null && command -v ceph-osd >/dev/null ||
	packages+=(ceph-mon ceph-osd radosgw)
command -v chromium >/dev/null || packages+=(chromium)
command -v curl >/dev/null || packages+=(curl)
if [ ${#packages[@]} -gt 0 ]; then
	sudo=
	[ "$(id -u)" = 0 ] || sudo=sudo
	echo "setup: apt-get install ${packages[*]}" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
bash scripts/n8n.sh install >/dev/null
