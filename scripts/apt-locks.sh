# Waiting for the package manager's locks, for scripts/with-test-services
# (sourced by it; tests/test_user_names_and_export_cells.py sources it too).
#
# apt-get fails at once ("Could not get lock /var/lib/dpkg/lock-frontend",
# exit 100) when another process (an unattended upgrade, another developer's
# install) holds one of its locks. apt's own option, -o DPkg::Lock::Timeout=N,
# makes `apt-get install` wait for dpkg's locks, but apt 2.6 has none for the
# lock of `apt-get update` (/var/lib/apt/lists/lock), so these functions wait
# for the locks themselves, at most DIFERIDA_APT_LOCK_WAIT seconds (default
# 600: ten minutes), saying so on stderr while they wait.
#
# A lock is held the way apt and dpkg hold it: a POSIX record lock (fcntl
# F_SETLK) on the file, which a probe (python3's fcntl.lockf) sees; a file
# that does not exist is not held. The paths can be changed for a test:
#   DIFERIDA_APT_LISTS_LOCK  (default /var/lib/apt/lists/lock)
#   DIFERIDA_DPKG_LOCKS      (default: dpkg's frontend lock, its lock and
#                             apt's archives lock, separated by spaces)

APT_LISTS_LOCK=${DIFERIDA_APT_LISTS_LOCK:-/var/lib/apt/lists/lock}
DPKG_LOCKS=${DIFERIDA_DPKG_LOCKS:-/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/cache/apt/archives/lock}

# The longest wait, in seconds (DIFERIDA_APT_LOCK_WAIT): a whole number, or
# the script stops (a wrong value is never replaced by the default).
apt_lock_wait() {
    local wait=${DIFERIDA_APT_LOCK_WAIT:-600}
    if ! [[ $wait =~ ^[0-9]{1,6}$ ]]; then
        echo "DIFERIDA_APT_LOCK_WAIT: '$wait' is not a whole number of seconds (e.g. 600)" >&2
        return 2
    fi
    echo $((10#$wait))
}

# Whether another process holds FILE's lock (exit 0: held).
lock_held() {
    python3 - "$1" <<'PY'
import fcntl, sys
try:
    f = open(sys.argv[1], "rb+")
except (FileNotFoundError, IsADirectoryError):
    sys.exit(1)  # no lock file: nothing holds it
except PermissionError:
    sys.exit(1)  # cannot tell (not root): apt-get says so itself
try:
    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    sys.exit(0)
sys.exit(1)  # free (the probe's own lock ends with it)
PY
}

# wait_for_locks SECONDS FILE...: return 0 once no FILE is held, or 1 (with
# a message) when one is still held after SECONDS.
wait_for_locks() {
    local limit=$1 lock said=0 start=$SECONDS next_note
    shift
    next_note=$((SECONDS + 60))
    while :; do
        local held=()
        for lock in "$@"; do
            if lock_held "$lock"; then held+=("$lock"); fi
        done
        [ ${#held[@]} -eq 0 ] && return 0
        if [ $((SECONDS - start)) -ge "$limit" ]; then
            echo "the package manager's lock ${held[*]} is still held by another process" \
                 "after ${limit} s; try again when it is done (DIFERIDA_APT_LOCK_WAIT sets" \
                 "how long to wait)" >&2
            return 1
        fi
        if [ $said = 0 ]; then
            echo "waiting for the package manager's lock ${held[*]}, held by another" \
                 "process (apt, dpkg), for at most ${limit} s (DIFERIDA_APT_LOCK_WAIT)..." >&2
            said=1
        elif [ $SECONDS -ge $next_note ]; then
            echo "still waiting for ${held[*]} ($((SECONDS - start)) s of ${limit} s)..." >&2
            next_note=$((SECONDS + 60))
        fi
        sleep 1
    done
}

# apt_get_update SECONDS: `apt-get update` once the lists lock is free; run
# again if another process took the lock in between (apt-get then fails
# at once), until SECONDS have passed. Its output goes to stderr.
apt_get_update() {
    local deadline=$((SECONDS + $1)) status
    while :; do
        wait_for_locks $((deadline > SECONDS ? deadline - SECONDS : 0)) "$APT_LISTS_LOCK" \
            || return 1
        status=0
        apt-get update -q >&2 || status=$?
        [ $status = 0 ] && return 0
        if ! lock_held "$APT_LISTS_LOCK" || [ $SECONDS -ge $deadline ]; then
            return $status
        fi
    done
}

# apt_get_install SECONDS PACKAGE...: `apt-get install` once dpkg's locks are
# free, apt itself waiting what is left of SECONDS for any it meets taken.
apt_get_install() {
    local limit=$1 start=$SECONDS left
    shift
    # shellcheck disable=SC2086  # DPKG_LOCKS is a list of paths
    wait_for_locks "$limit" $DPKG_LOCKS || return 1
    left=$((limit - (SECONDS - start)))
    [ $left -gt 0 ] || left=1
    apt-get -o "DPkg::Lock::Timeout=$left" install -y -q "$@" >&2
}
