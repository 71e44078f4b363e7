#!/bin/sh
# Clone the peers' code at the commits bench/peers was written against, into
# bench/peers/src/<name> (git-ignored), the checkouts run.sh uses by default.
# Needs network access to github.com. scikit-learn needs no checkout: it is
# Debian's python3-sklearn. usage: bench/peers/fetch.sh
set -eu
dir=$(cd "$(dirname "$0")" && pwd)/src
mkdir -p "$dir"

fetch() { # name url commit
    if [ ! -d "$dir/$1/.git" ]; then
        git clone --quiet "$2" "$dir/$1"
    fi
    git -C "$dir/$1" fetch --quiet origin "$3" 2>/dev/null || true
    git -C "$dir/$1" -c advice.detachedHead=false checkout --quiet "$3"
    echo "$1: $(git -C "$dir/$1" rev-parse HEAD) in $dir/$1"
}

fetch unbiased_dbm https://github.com/iShohei220/unbiased_dbm.git \
    b7fba3d7aaa4445aa49572255e9a76abe690b5d5
fetch GRBM https://github.com/DSL-Lab/GRBM.git \
    308b8a5c8da6b998e2acc7b19e52839346ac72f8
fetch cdtau https://github.com/yixuan/cdtau.git \
    752c456618aa59cebd6c7fc0ae71b13e7dad85b3
