# shellcheck shell=sh
# Sourced by examples/compare_pt.sh, compare_potts.sh, compare_drelu.sh and
# compare_dbm.sh: each sets OUT (the runs' directory), COMMON (the options
# every run shares) and SELECTED (the names given on its command line, or
# none for all). compare_dbm.sh takes want and value; it has its own run,
# which adds the AIS check as a second run from the checkpoint.

# run NAME PROGRAM ARGS...: PROGRAM ARGS $COMMON into $OUT/NAME (log
# $OUT/NAME.log), unless NAME is not selected or already has a summary.txt;
# then the log's last lines.
run() {
    name=$1
    shift
    want "$name" || return 0
    [ -f "$OUT/$name/summary.txt" ] && return 0
    echo "== $name: $*"
    mkdir -p "$OUT/$name"
    # shellcheck disable=SC2086 # COMMON holds several options
    "$@" $COMMON --out "$OUT/$name" > "$OUT/$name.log" 2>&1 || echo "== $name stopped on an error"
    tail -n 9 "$OUT/$name.log"
}
want() {
    [ -z "$SELECTED" ] && return 0
    for s in $SELECTED; do [ "$s" = "$1" ] && return 0; done
    return 1
}
# value KEY FILE: KEY's value in a summary.txt
value() { sed -n "s/^$1=//p" "$2" 2>/dev/null; }
# check_ll SUMMARY: the test log-likelihood with the AIS check's log Z
check_ll() {
    cz=$(value ais_check_log_z "$1")
    echo "$(value test_ll_mean "$1") $(value ais_log_z "$1") ${cz:-nan}" |
        awk '{ printf "%.2f", $1 + $2 - $3 }'
}
# ll_table NAME...: one row per finished run: the base alone, AIS log Z
# (the first AIS) and the test log-likelihood with it and with the check's.
ll_table() {
    printf '\n%-13s %6s %8s %10s %10s %12s %10s\n' run steps seconds "base ll" "log Z" \
        "test ll" "check ll"
    for name in "$@"; do
        s=$OUT/$name/summary.txt
        [ -f "$s" ] || continue
        printf '%-13s %6s %8.0f %10.2f %10.2f %12.2f %10.2f\n' "$name" "$(value steps "$s")" \
            "$(value train_seconds "$s")" "$(value base_ll_mean "$s")" \
            "$(value ais_log_z "$s")" "$(value test_ll_mean "$s")" "$(check_ll "$s")"
    done
}
