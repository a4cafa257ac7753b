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
#
# Knobs (env): N8N_CACHE (~/.cache/n8n-nodes-llm-memory), PGVECTOR_SUITE (trixie).
set -euo pipefail

CACHE=${N8N_CACHE:-$HOME/.cache/n8n-nodes-llm-memory}/pgvector
SUITE=${PGVECTOR_SUITE:-trixie}

die() { echo "pgvector.sh: $*" >&2; exit 1; }

# The newest PostgreSQL major installed from Debian's packages (as scripts/services.sh picks it).
pg_major() {
	local v
	v=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1)
	[ -n "$v" ] && [ -x "/usr/lib/postgresql/$v/bin/postgres" ] || return 1
	echo "$v"
}

control_file() { echo "/usr/share/postgresql/$1/extension/vector.control"; }

have_vector() {
	local major
	major=$(pg_major) || return 1
	[ -f "$(control_file "$major")" ] && [ -f "/usr/lib/postgresql/$major/lib/vector.so" ]
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
		tar -xzf "$CACHE/src/pgvector_$upstream.orig.tar.gz" -C "$dir.tmp" --strip-components=1
		rm -rf "$dir" && mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

install_build_deps() {
	local major=$1 pgver pkgs=()
	pgver=$(dpkg-query -W -f='${Version}' "postgresql-$major" 2>/dev/null) ||
		die "postgresql-$major is not installed from Debian's packages (run: bash scripts/services.sh install)"
	[ -f "/usr/lib/postgresql/$major/lib/pgxs/src/makefiles/pgxs.mk" ] ||
		pkgs+=("postgresql-server-dev-$major=$pgver" "libpq-dev=$pgver")
	command -v make >/dev/null || pkgs+=(make)
	command -v gcc >/dev/null || pkgs+=(gcc libc6-dev)
	[ ${#pkgs[@]} -eq 0 ] && return 0
	echo "pgvector.sh: apt-get install ${pkgs[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	timeout 600 apt-get update -qq >&2
	timeout 1200 apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
}

install() {
	have_vector && return 0
	[ "$(id -u)" = 0 ] || die "install needs root (apt-get, and the server's extension folder)"
	local major src build
	major=$(pg_major) || die "PostgreSQL is not installed (run: bash scripts/services.sh install)"
	install_build_deps "$major"
	src=$(fetch_source)
	build=$CACHE/$(basename "$src")-pg$major
	if [ ! -f "$build/vector.so" ]; then
		rm -rf "$build" && cp -r "$src" "$build"
		# OPTFLAGS="": no -march=native, so the cached build runs on any x86-64 machine.
		make -C "$build" -j2 PG_CONFIG="/usr/lib/postgresql/$major/bin/pg_config" OPTFLAGS="" >"$build.log" 2>&1 ||
			{ tail -n 20 "$build.log" >&2; rm -f "$build/vector.so"; die "building $(basename "$src") failed (log $build.log)"; }
	fi
	make -C "$build" install PG_CONFIG="/usr/lib/postgresql/$major/bin/pg_config" OPTFLAGS="" >>"$build.log" 2>&1 ||
		{ tail -n 20 "$build.log" >&2; die "make install failed (log $build.log)"; }
	have_vector || die "installed, but $(control_file "$major") is still missing"
}

cmd=${1:-}
case "$cmd" in
install) install ;;
check) have_vector ;;
version)
	have_vector || die "not installed (run: bash scripts/pgvector.sh install)"
	sed -n "s/^default_version = '\(.*\)'/\1/p" "$(control_file "$(pg_major)")"
	;;
*) sed -n '2,22p' "$0" >&2; exit 2 ;;
esac
