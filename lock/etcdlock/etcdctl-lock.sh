#!/bin/sh
# etcdctl-lock: etcd's own `etcdctl lock` as a locklab lock, over the lab's
# process protocol (docs/any-language.md). Each grant is one
# `etcdctl lock` process: it takes a session (a lease of LOCKLAB_TTL
# seconds), queues under LOCKLAB_LOCK as etcd's Mutex does, prints the key it
# holds once it holds the lock, and keeps it until SIGTERM (it then deletes
# the key) or until its session ends. The fencing token is read from the key
# by the lab (its create revision).
out="$LOCKLAB_DIR/out" err="$LOCKLAB_DIR/err" pid=

# class names what etcdctl's last error means, for an "error" answer.
class() {
	msg=$(grep -v '^$' "$err" | tail -n 1)
	case $msg in
	*"session is expired"* | *"session expired"* | *"lock lost"*) echo "expired $msg" ;;
	*"code = Unavailable"*) echo "unavailable $msg" ;;
	*) echo "$msg" ;;
	esac
}

# SIGTERM (the lab stopping this client, or dying): take etcdctl along, and
# remove the directory, which a dead lab cannot.
trap 'if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null; wait "$pid"; fi; rm -rf "$LOCKLAB_DIR"; exit 143' TERM

# Up: from now on, silence is waiting (a comment line, see the protocol).
echo "# ready"

while read -r cmd; do
	case $cmd in
	acquire)
		if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
			# Asked again while holding (the lab's answer was lost): the
			# lock held is the answer.
			echo "granted key=$key"
			continue
		fi
		rm -f "$out" && mkfifo "$out"
		# Opened read-write, the pipe never keeps etcdctl waiting for a
		# reader (this script, which may be gone).
		etcdctl --endpoints="$LOCKLAB_ENDPOINTS" lock --ttl="$LOCKLAB_TTL" "$LOCKLAB_LOCK" 1<>"$out" 2>"$err" &
		pid=$!
		exec 3<"$out"
		if read -r key <&3; then
			echo "granted key=$key"
		else
			wait "$pid"
			pid=
			echo "error $(class)"
		fi
		;;
	release)
		if [ -z "$pid" ]; then
			echo "error not-held nothing to release"
		else
			# SIGTERM: etcdctl deletes its key and exits 0; if its session
			# ended first, it has left (or leaves) with "session expired".
			# The lab bounds the wait: past its deadline it stops this
			# script (SIGTERM, and the trap).
			kill -TERM "$pid" 2>/dev/null
			if wait "$pid"; then
				echo released
			else
				c=$(class)
				case $c in
				expired*) echo "error not-held the lock was lost: ${c#expired }" ;;
				*) echo "error $c" ;;
				esac
			fi
		fi
		pid=
		exec 3<&-
		;;
	*)
		echo "error unknown command: $cmd"
		;;
	esac
done
# Standard input closed: give up what is held, and leave (the lab stops
# this script if that takes long).
if [ -n "$pid" ]; then
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
fi
