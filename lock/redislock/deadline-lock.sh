#!/bin/sh
# A Redis lock over redis-cli that tells its holder when its key expires,
# by its own count of the key's TTL: SET NX PX with a random value and an
# INCR of KEY:token as its fencing token, in one script, tried again every
# 50 ms; the TTL counted from just before the script that took the key;
# "lost" printed (the process protocol's Grant.Lost) once the count runs
# out; released by a script that deletes the key only where it still
# holds the value.
#
#   deadline-lock.sh [monotonic|wall]
#
# monotonic (the default) counts on the machine's uptime, which no change
# of the wall clock moves. wall counts on the wall clock (date): set back
# while the lock is held, it tells its holder late, long after the key
# expired and the next client was granted — the known-bad redis-wall-deadline.
clock=${1:-monotonic}
case $clock in
monotonic | wall) ;;
*) echo "usage: deadline-lock.sh [monotonic|wall]" >&2; exit 2 ;;
esac
host=${LOCKLAB_REDIS%%:*}
port=${LOCKLAB_REDIS##*:}
key=$LOCKLAB_LOCK
ttl_ms=$(awk -v t="$LOCKLAB_TTL" 'BEGIN { printf "%d", t * 1000 }')

# now is the time in milliseconds on the lock's clock.
now() {
	if [ "$clock" = wall ]; then
		date +%s%3N
	else
		read -r up _ </proc/uptime
		# 1234.05 → 1234050: the hundredths read as a number past a leading 1
		echo $((${up%.*} * 1000 + (1${up#*.} - 100) * 10))
	fi
}

cli() { redis-cli -h "$host" -p "$port" "$@" 2>&1; }

value= watcher=
echo "# ready"
while read -r cmd; do
	case $cmd in
	acquire)
		value=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
		while :; do
			start=$(now)
			token=$(cli EVAL "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('incr', KEYS[2]) else return 0 end" \
				2 "$key" "$key:token" "$value" "$ttl_ms")
			case $token in
			'' | 0 | *[!0-9]*) sleep 0.05 ;;
			*) break ;;
			esac
		done
		deadline=$((start + ttl_ms))
		(
			while [ "$(now)" -lt "$deadline" ]; do sleep 0.1; done
			echo lost
		) &
		watcher=$!
		echo "granted key=$key value=$value token=$token tells=lost"
		;;
	release)
		[ -n "$watcher" ] && kill "$watcher" 2>/dev/null
		watcher=
		r=$(cli EVAL "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end" 1 "$key" "$value")
		case $r in
		1) echo released ;;
		0) echo "error not-held the key is gone or another's" ;;
		*) echo "error unavailable $r" ;;
		esac
		;;
	*) echo "error unknown command $cmd" ;;
	esac
done
[ -n "$watcher" ] && kill "$watcher" 2>/dev/null
exit 0
