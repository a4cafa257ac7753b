#!/usr/bin/env bash
# pgvector (the `vector` extension) for Debian's PostgreSQL, so tests can run n8n's Postgres PGVector
# Store node against a real PostgreSQL server with a real pgvector. Debian 12 packages no pgvector, so
# it is built from source against Debian's postgresql-server-dev-<major>:
#   - the source is Debian's own source package `pgvector` (suite $PGVECTOR_SUITE, default trixie:
#     pgvector 0.8.0 on 2026-11-27), fetched with `apt-get source --download-only` through a private apt
#     configuration in the cache (only deb-src lines: nothing of the machine's apt setup changes, and
#     no binary package from that suite is installed); apt checks it against the suite's signed index;
#   - postgresql-server-dev-<major> (and libpq-dev) are installed at the version of the installed
#     postgresql-<major>, so the running server is not upgraded under anyone's feet;
#   - the build (about 10 s on 2 cores, without -march=native) is cached in
#     $N8N_CACHE/pgvector/<version>-pg<major>, and `make install` copies it into the server's
#     extension and library folders (root).
#
#   pgvector.sh install   installs it when missing (idempotent; root); prints nothing on success
#   pgvector.sh check     exit 0 when the newest installed PostgreSQL has the vector extension
#   pgvector.sh version   prints the pgvector version available to that PostgreSQL
#   pgvector.sh deps      exit 0 when everything the build uses is there; else names each missing file,
#                         its package and the command that installs them
#
# What the build uses, each checked for itself (scripts/need.sh): pg_config of that major, the server
# headers it names (postgres.h under `pg_config --includedir-server`: postgresql-server-dev-<major>;
# pgxs.mk alone proves nothing, postgresql-client ships it), make, gcc, libc headers, Debian's keyring.
# A build is trusted only with the mark written after it succeeded; the extension only with its
# control file, its SQL script and its library.
# Knobs (env): N8N_CACHE (~/.cache/n8n-nodes-llm-memory), PGVECTOR_SUITE (trixie); for tests: PG_ROOT
#   (/usr/lib/postgresql), PG_SHARE (/usr/share/postgresql), NEED_DPKG_ADMINDIR (scripts/need.sh).
set -euo pipefail

CACHE=${N8N_CACHE:-$HOME/.cache/n8n-nodes-llm-memory}/pgvector
SUITE=${PGVECTOR_SUITE:-trixie}
PG_ROOT=${PG_ROOT:-/usr/lib/postgresql}
PG_SHARE=${PG_SHARE:-/usr/share/postgresql}
# shellcheck source=scripts/need.sh
. "$(dirname "${BASH_SOURCE[0]}")/need.sh"

die() { echo "pgvector.sh: $*" >&2; exit 1; }

# The newest PostgreSQL major installed from Debian's packages (as scripts/services.sh picks it).
pg_major() {
	local v
	v=$(ls "$PG_ROOT" 2>/dev/null | sort -n | tail -n 1)
	[ -n "$v" ] && [ -x "$PG_ROOT/$v/bin/postgres" ] || return 1
	echo "$v"
}

control_file() { echo "$PG_SHARE/$1/extension/vector.control"; }

have_vector() {
	local major control version
	major=$(pg_major) || return 1
	control=$(control_file "$major")
	[ -f "$control" ] && [ -f "$PG_ROOT/$major/lib/vector.so" ] || return 1
	version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$control")
	[ -n "$version" ] && [ -f "$PG_SHARE/$major/extension/vector--$version.sql" ]
}

# Records (need.sh) what building against PostgreSQL MAJOR needs and is missing.
build_needs() {
	local major=$1 pg_config=$PG_ROOT/$1/bin/pg_config server_dev=postgresql-server-dev-$1 pgver
	# The server's exact version, so installing the headers never upgrades the running server.
	pgver=$(dpkg-query --admindir="${NEED_DPKG_ADMINDIR:-/var/lib/dpkg}" -W -f='${Version}' "postgresql-$major" 2>/dev/null) || pgver=
	[ -z "$pgver" ] || server_dev="$server_dev=$pgver"
	need_reset
	need_file "postgresql-client-$major" "$pg_config"
	need_run "postgresql-client-$major" "$pg_config" --includedir-server
	if [ -x "$pg_config" ] && "$pg_config" --includedir-server >/dev/null 2>&1; then
		need_file "$server_dev" "$("$pg_config" --includedir-server)/postgres.h" "$("$pg_config" --pgxs)"
	else
		need_add "$server_dev" "no server headers: $pg_config cannot name them"
	fi
	need_file make /usr/bin/make
	need_file gcc /usr/bin/gcc
	need_file libc6-dev /usr/include/stdio.h
	need_file debian-archive-keyring /usr/share/keyrings/debian-archive-keyring.gpg
}

# apt-get / apt-cache with the private configuration (the suite's source index only), 10 minutes at most.
private_apt() {
	local tool=$1; shift
	timeout 600 "$tool" -o Dir::Etc::SourceList="$CACHE/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
		-o Dir::State::Lists="$CACHE/apt/lists" -o Dir::Cache="$CACHE/apt/cache" \
		-o APT::Sandbox::User=root "$@"
}

# Fetches Debian's pgvector source into $CACHE/src; prints the unpacked folder.
fetch_source() {
	mkdir -p "$CACHE/apt/lists/partial" "$CACHE/apt/cache/archives/partial" "$CACHE/src"
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $SUITE main" \
		>"$CACHE/apt/sources.list"
	private_apt apt-get -qq update >&2
	local version upstream dir
	version=$(private_apt apt-cache showsrc pgvector | sed -n 's/^Version: //p' | sort -V | tail -n 1)
	[ -n "$version" ] || die "Debian's $SUITE has no source package pgvector"
	upstream=${version%-*}
	upstream=${upstream#*:}
	dir=$CACHE/src/pgvector-$upstream
	if [ ! -f "$dir/Makefile" ]; then
		(cd "$CACHE/src" && private_apt apt-get -qq source --download-only "pgvector=$version" >&2)
		rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
		# Unpacked aside and moved in whole: a folder with a Makefile is a complete source.
		tar -xzf "$CACHE/src/pgvector_$upstream.orig.tar.gz" -C "$dir.tmp" --strip-components=1 || {
			rm -rf "$dir.tmp" "$CACHE/src/pgvector_$upstream"*
			die "the downloaded pgvector_$upstream.orig.tar.gz does not unpack (deleted; run again)"
		}
		rm -rf "$dir" && mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

install_build_deps() {
	need_pkg_ok "postgresql-$1" ||
		die "postgresql-$1 is not installed from Debian's packages (run: bash scripts/services.sh install)"
	build_needs "$1"
	need_install pgvector.sh || die "cannot build pgvector without the files above"
}

install() {
	have_vector && return 0
	[ "$(id -u)" = 0 ] || die "install needs root (apt-get, and the server's extension folder)"
	local major src build
	major=$(pg_major) || die "PostgreSQL is not installed (run: bash scripts/services.sh install)"
	install_build_deps "$major"
	src=$(fetch_source)
	build=$CACHE/$(basename "$src")-pg$major
	# A build counts only with its mark, written once make succeeded: a build cut short is done again.
	if [ ! -f "$build/.built" ] || [ ! -f "$build/vector.so" ]; then
		rm -rf "$build" && cp -r "$src" "$build"
		# OPTFLAGS="": no -march=native, so the cached build runs on any x86-64 machine.
		make -C "$build" -j2 PG_CONFIG="$PG_ROOT/$major/bin/pg_config" OPTFLAGS="" >"$build.log" 2>&1 ||
			{ tail -n 20 "$build.log" >&2; rm -f "$build/vector.so"; die "building $(basename "$src") failed (log $build.log)"; }
		echo "pgvector built for PostgreSQL $major" >"$build/.built"
	fi
	make -C "$build" install PG_CONFIG="$PG_ROOT/$major/bin/pg_config" OPTFLAGS="" >>"$build.log" 2>&1 ||
		{ tail -n 20 "$build.log" >&2; die "make install failed (log $build.log)"; }
	have_vector || die "installed, but $(control_file "$major") is still missing"
}

cmd=${1:-}
case "$cmd" in
install) install ;;
check) have_vector ;;
deps)
	major=$(pg_major) || die "PostgreSQL is not installed (run: bash scripts/services.sh install)"
	build_needs "$major"
	need_ok || { need_say pgvector.sh; exit 1; }
	;;
version)
	have_vector || die "not installed (run: bash scripts/pgvector.sh install)"
	sed -n "s/^default_version = '\(.*\)'/\1/p" "$(control_file "$(pg_major)")"
	;;
*) sed -n '2,32p' "$0" >&2; exit 2 ;;
esac
