# Shared by bench/mnist_e2e.sh and bench/mnist_vs_lightning.sh (sourced):
# measure NAME RUN CMD... runs CMD on a pseudo-terminal under GNU time and
# appends "wall first_step step_us rss_kib steps acc cpu" to $tmp/NAME, from
# the "timing: first_step_s=F step_us=S steps=N wall_s=W" line the program
# prints (examples/mnist -timing, bench/lightning_mnist.py), its test_acc and
# GNU time's peak RSS and CPU time; median COLUMN FILE prints a column's median.
# Needs $tmp (a scratch folder) and $script_name (for messages).
measure() {
	local name="$1" run="$2"
	shift 2
	local out="$tmp/$name.$run.tty" tm="$tmp/$name.$run.time"
	script -qfec "/usr/bin/time -v -o $tm $*" "$out" >/dev/null </dev/null
	local timing rss cpu acc
	timing="$(tr -d '\r' <"$out" | grep -o 'timing: .*' | tail -1)"
	rss="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tm")"
	cpu="$(awk -F': ' '/(User|System) time \(seconds\)/ {s += $2} END {print s}' "$tm")"
	acc="$(tr -d '\r' <"$out" | grep -o 'test_acc=[0-9.]*' | tail -1 | cut -d= -f2)"
	[[ -n "$timing" && -n "$rss" && -n "$acc" ]] || { echo "$script_name: $name run $run failed:" >&2; tail -c 2000 "$out" >&2; exit 1; }
	echo "$timing" | awk -v rss="$rss" -v acc="$acc" -v cpu="$cpu" '{
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		print v["wall_s"], v["first_step_s"], v["step_us"], rss, v["steps"], acc, cpu
	}' >>"$tmp/$name"
	echo "$name run $run: wall ${timing##*wall_s=} s, test_acc $acc" >&2
}

median() { cut -d' ' -f"$1" "$2" | sort -g | awk '{a[NR] = $1} END {print (a[int((NR + 1) / 2)] + a[int(NR / 2) + 1]) / 2}'; }
