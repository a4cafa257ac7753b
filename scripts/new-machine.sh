#!/usr/bin/env bash
# Makes this machine new again for the tests: removes everything `npm test` installs (scripts/setup.sh and
# the scripts it runs), keeping what a Debian 12 image with Node 20 ships (PostgreSQL 15 and its client,
# libpq-dev, make, gcc). Then the README's test command on a fresh clone shows what a new machine does.
# Destructive, root only, and only on a machine of your own:
#   bash scripts/new-machine.sh --yes
# What goes:
#   Debian packages: Ceph (radosgw, ceph-mon, ceph-osd, ceph-base, ceph-common), Chromium, Redis
#   (redis-server, redis-tools), PostgreSQL's server headers (postgresql-server-dev-<major>), and the
#   packages they pulled in (apt-get autoremove);
#   pgvector's files in PostgreSQL's folders (make install put them there; no package owns them);
#   the cache ~/.cache/n8n-nodes-llm-memory (both n8n installs, Node 24, pgvector's build, word vectors);
#   apt's downloaded packages (apt-get clean) and npm's cache, so every install downloads again.
set -euo pipefail
[ "${1:-}" = --yes ] || { sed -n '2,14p' "$0" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "new-machine.sh: needs root" >&2; exit 1; }

export DEBIAN_FRONTEND=noninteractive
installed() { dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "$@" 2>/dev/null | awk '$1 ~ /^.i/ {print $2}'; }
mapfile -t pkgs < <(installed radosgw ceph-mon ceph-osd ceph-base ceph-common chromium chromium-common \
	redis-server redis-tools 'postgresql-server-dev-*')
if [ ${#pkgs[@]} -gt 0 ]; then
	echo "new-machine.sh: apt-get purge ${pkgs[*]}" >&2
	apt-get purge -y -qq "${pkgs[@]}" >/dev/null
fi
# sudo came with Ceph here, but its removal script refuses to remove it (and so fails autoremove): kept.
if [ -n "$(installed sudo)" ]; then apt-mark manual sudo >/dev/null; fi
apt-get autoremove --purge -y -qq >/dev/null
for major in /usr/lib/postgresql/*/; do
	major=$(basename "$major")
	rm -f "/usr/lib/postgresql/$major/lib/vector.so" /usr/share/postgresql/"$major"/extension/vector[.-]*
	rm -rf "/usr/lib/postgresql/$major/lib/bitcode/vector" "/usr/lib/postgresql/$major/lib/bitcode/vector.index.bc"
	rm -rf /usr/include/postgresql/"$major"/server/extension/vector
done
rm -rf "${N8N_CACHE:-$HOME/.cache/n8n-nodes-llm-memory}"
# Downloads a new machine would not have: apt's package archive and npm's cache.
apt-get clean
npm cache clean --force 2>/dev/null || true
echo "new-machine.sh: done; now: git clone <repo> fresh && cd fresh && npm ci && npm test" >&2
