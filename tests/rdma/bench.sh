#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# weft over btl/openib beside perftest on the same Soft-RoCE device, in one
# run, interleaved: ib_send_lat (64 B) and ib_write_bw (64 KiB) are the
# references the openib issue names. Run inside the VM:
#   ../shared/rdma-vm/run-in-rxe-vm --workdir "$PWD" -- tests/rdma/bench.sh [ROUNDS]
# Prints each sample, then medians and ratios (weft / perftest).
set -u
cd "$(dirname "$0")/../.."
rounds=${1:-3}
dev=${RXE_VM_DEV:-rxe0}
ip=${RXE_VM_IP:-10.77.0.1}
command -v ib_send_lat >/dev/null || { echo "bench: perftest is not installed (apt-get install perftest)"; exit 77; }
export WEFT_MCA_btl=self,openib
pr_avg=() pr_med=() lat_w=() lat_wm=() lat_r=() lat_r99=() lat_p=() lat_pa=() bw_w=() bw_p=() lat_w90=() lat_w99=() lat_p99=()
perf_pair() {   # server and client of one perftest run; prints the client's result line
  local tool=$1; shift
  timeout 120 "$tool" -d "$dev" -x 1 "$@" >/dev/null 2>&1 &
  local srv=$!
  local out=""
  for _ in 1 2 3 4 5 6 7 8 9 10; do    # the server needs a moment to listen: retry the client, bounded
    out=$(timeout 120 "$tool" -d "$dev" -x 1 "$@" "$ip" 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print; exit}')
    [ -n "$out" ] && break
    sleep 0.5
  done
  wait "$srv" 2>/dev/null
  echo "$out"
}
for r in $(seq "$rounds"); do
  out=$(timeout 300 ./weftrun -np 2 tests/bench/weft_bench latdist 64)
  w=$(echo "$out" | awk '$1=="latavg" && $2==64 {print $3}') wm=$(echo "$out" | awk '$1=="latmed" && $2==64 {print $3}')
  w90=$(echo "$out" | awk '$1=="latp90" && $2==64 {print $3}') w99=$(echo "$out" | awk '$1=="latp99" && $2==64 {print $3}')
  rawout=$(timeout 300 ./weftrun -np 2 tests/bench/weft_bench rawdist 64)
  raw=$(echo "$rawout" | awk '$1=="rawavg" && $2==64 {print $3}') raw99=$(echo "$rawout" | awk '$1=="rawp99" && $2==64 {print $3}')
  line=$(perf_pair ib_send_lat -s 64 -n 5000)
  p=$(echo "$line" | awk '{print $5}') pa=$(echo "$line" | awk '{print $6}')   # t_typical, t_avg
  p99=$(echo "$line" | awk '{print $8}')   # 99% percentile
  echo "round $r: lat 64  weft average $w us, median $wm us, p90 $w90 us, p99 $w99 us (transport alone: average $raw, p99 $raw99)  ib_send_lat typical $p us, average $pa us, p99 $p99 us"
  lat_w+=("$w") lat_wm+=("$wm") lat_r+=("$raw") lat_r99+=("$raw99") lat_p+=("$p") lat_pa+=("$pa") lat_w90+=("$w90") lat_w99+=("$w99") lat_p99+=("$p99")
  # Paired: this round's weft against this round's perftest (the VM's speed drifts between rounds).
  pr_avg+=("$(awk -v a="$w" -v b="$pa" 'BEGIN {if (a>0 && b>0) printf "%.3f", a/b}')")
  pr_med+=("$(awk -v a="$wm" -v b="$p" 'BEGIN {if (a>0 && b>0) printf "%.3f", a/b}')")
  w=$(timeout 300 ./weftrun -np 2 tests/bench/weft_bench bw 65536 | awk '$1=="bw" && $2==65536 {print $3}')
  p=$(perf_pair ib_write_bw -s 65536 -n 2000 | awk '{print $4}')  # BW average MB/s
  echo "round $r: bw 64K  weft $w MB/s  ib_write_bw(average) $p MB/s"
  bw_w+=("$w") bw_p+=("$p")
done
median() { printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
lw=$(median "${lat_w[@]}") lwm=$(median "${lat_wm[@]}") lr=$(median "${lat_r[@]}") lp=$(median "${lat_p[@]}") lpa=$(median "${lat_pa[@]}")
bw=$(median "${bw_w[@]}") bp=$(median "${bw_p[@]}")
echo
echo "medians over $rounds rounds (weft_bench latdist times each round trip with the cycle counter, as ib_send_lat does;"
echo "its average is compared with ib_send_lat's t_avg, its median with t_typical):"
awk -v a="$lw" -v m="$lwm" -v b="$lpa" -v c="$lp" -v r="$lr" 'BEGIN {printf "lat 64 B   weft average %8.2f median %8.2f us (btl alone %.2f)  ib_send_lat avg %8.2f typical %8.2f us  ratio avg/avg %.2f, median/typical %.2f (target <= 1.10)\n", a, m, r, b, c, (b>0)?a/b:0, (c>0)?m/c:0}'
echo "paired per round: median of weft/ib_send_lat avg/avg $(median "${pr_avg[@]}"), median/typical $(median "${pr_med[@]}")"
echo "tail (medians over rounds): weft p90 $(median "${lat_w90[@]}") us, p99 $(median "${lat_w99[@]}") us; transport alone p99 $(median "${lat_r99[@]}") us; ib_send_lat p99 $(median "${lat_p99[@]}") us"
awk -v a="$bw" -v b="$bp" 'BEGIN {printf "bw 64 KiB  weft %8.2f MB/s  ib_write_bw %8.2f MB/s  ratio %.2f (target >= 0.90)\n", a, b, (b>0)?a/b:0}'
