#!/usr/bin/env bash
# Sourced by the install scripts (setup.sh, rgw.sh, services.sh, pgvector.sh, n8n.sh): each step checks
# for the very file it uses, not for one that another package may also ship, and a package counts only
# when dpkg says it is installed and configured ("ii"): an interrupted install is installed again.
#
#   need_file PKG PATH...     every PATH must exist and PKG must be installed; otherwise PKG is needed
#   need_run PKG CMD [ARG...] the command must run and exit 0 (a binary that is there but broken)
#   need_ok                   exit 0 when nothing was found missing
#   need_list                 the packages needed, one line (empty when none)
#   need_say WHO              prints each miss ("WHO: missing /usr/bin/x (package x)") and the command
#                             that installs them all, to stderr
#   need_install WHO          installs what is missing with apt-get (root; --reinstall, so a package
#                             whose files are gone or whose install was cut short comes back), checks
#                             everything again, and fails naming each file still missing
#   need_reset                forgets what was found (before checking again)
#   with_tries WHO CMD...     runs CMD up to NEED_TRIES times (3), NEED_TRY_WAIT seconds apart (30),
#                             saying each failure: a download the registry answers wrongly for a
#                             moment (a version it lists and then cannot find) is fetched again
#
# Knobs (env, for tests): NEED_DPKG_ADMINDIR (dpkg's database, default /var/lib/dpkg); NEED_LOCK (the
# file installs wait on, one at a time: default /tmp/llm-memory-apt.lock).

NEED_PKGS=()
NEED_WHY=()
NEED_CHECKS=()

need_reset() {
	NEED_PKGS=()
	NEED_WHY=()
}

# PKG is installed and configured (not half-installed, unpacked or removed). PKG may name a version
# (postgresql-server-dev-15=15.18-0+deb12u1): apt installs that one; any installed version counts here.
need_pkg_ok() {
	local status
	status=$(dpkg-query --admindir="${NEED_DPKG_ADMINDIR:-/var/lib/dpkg}" -W -f='${db:Status-Abbrev}' "${1%%=*}" 2>/dev/null) ||
		return 1
	[ "${status% }" = ii ]
}

need_add() {
	local pkg=$1 why=$2 p
	NEED_WHY+=("$why (package $pkg)")
	for p in "${NEED_PKGS[@]}"; do [ "$p" = "$pkg" ] && return 0; done
	NEED_PKGS+=("$pkg")
}

need_file() {
	local pkg=$1 path
	shift
	NEED_CHECKS+=("file|$pkg|$*")
	for path in "$@"; do
		[ -e "$path" ] || { need_add "$pkg" "missing $path"; return 0; }
	done
	need_pkg_ok "$pkg" || need_add "$pkg" "not fully installed according to dpkg"
}

need_run() {
	local pkg=$1
	shift
	NEED_CHECKS+=("run|$pkg|$*")
	"$@" >/dev/null 2>&1 </dev/null || need_add "$pkg" "\`$*\` does not run"
}

need_ok() { [ ${#NEED_PKGS[@]} -eq 0 ]; }
need_list() { echo "${NEED_PKGS[*]}"; }

need_say() {
	local who=$1 why
	need_ok && return 0
	for why in "${NEED_WHY[@]}"; do echo "$who: $why" >&2; done
	echo "$who: install them with: apt-get update && apt-get install --reinstall -y --no-install-recommends ${NEED_PKGS[*]}" >&2
}

# Runs the checks recorded since the last reset again (after an install).
need_recheck() {
	local checks=("${NEED_CHECKS[@]}") c kind pkg args
	need_reset
	NEED_CHECKS=()
	for c in "${checks[@]}"; do
		kind=${c%%|*} c=${c#*|} pkg=${c%%|*} args=${c#*|}
		# shellcheck disable=SC2086 # paths and commands here have no spaces
		if [ "$kind" = file ]; then need_file "$pkg" $args; else need_run "$pkg" $args; fi
	done
}

need_install() {
	local who=$1 sudo=
	need_ok && return 0
	[ "$(id -u)" = 0 ] || sudo=sudo
	if [ -n "$sudo" ] && ! command -v sudo >/dev/null; then
		need_say "$who"
		echo "$who: installing needs root (or sudo)" >&2
		return 1
	fi
	echo "$who: apt-get install ${NEED_PKGS[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	# One install at a time (two of these scripts at once, or apt's own timer on a machine just booted
	# took dpkg's lock and the other install failed): ours wait for each other on NEED_LOCK, and apt
	# waits for dpkg's lock rather than failing at once.
	local apt=(apt-get -o DPkg::Lock::Timeout=600)
	(
		flock -w 1800 9 || { echo "$who: another install held ${NEED_LOCK:-/tmp/llm-memory-apt.lock} for 30 minutes" >&2; exit 1; }
		# An install cut short leaves dpkg half-configured; finish that first, or apt refuses everything.
		$sudo dpkg --configure -a >&2 || true
		timeout 600 $sudo "${apt[@]}" update -qq >&2 || { echo "$who: apt-get update failed" >&2; exit 1; }
		timeout 1800 $sudo "${apt[@]}" install --reinstall -y -qq --no-install-recommends "${NEED_PKGS[@]}" >/dev/null || {
			need_say "$who"
			echo "$who: apt-get install failed" >&2
			exit 1
		}
	) 9>"${NEED_LOCK:-/tmp/llm-memory-apt.lock}" || return 1
	need_recheck
	need_ok && return 0
	need_say "$who"
	echo "$who: still missing after apt-get install" >&2
	return 1
}

with_tries() {
	local who=$1 tries=${NEED_TRIES:-3} wait=${NEED_TRY_WAIT:-30} n=1
	shift
	until "$@"; do
		if [ "$n" -ge "$tries" ]; then
			echo "$who: $* failed $n times" >&2
			return 1
		fi
		echo "$who: $* failed (try $n of $tries); trying again in $wait s" >&2
		sleep "$wait"
		n=$((n + 1))
	done
}
