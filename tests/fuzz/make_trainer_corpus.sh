#!/usr/bin/env bash
# Writes the seed corpora of the trainers' fuzz targets (make fuzz-corpus):
#
#   make_trainer_corpus.sh BUILD_DIR DIR
#     DIR/checkpoint/NAME.ckpt  checkpoints of tiny trainer runs on
#                               bars-and-stripes (fuzz_checkpoint.c): PCD with
#                               chains, UCD with Adam and an average (version 2),
#                               Potts sites, dReLU hidden units, a centred DBM
#                               by PT (a ladder's chains)
#     DIR/data/NAME.bin         inputs of fuzz_data.c: its reader byte, then
#                               small IDX files (plain and gzip, with and without
#                               labels, a max_rows, 70,000 rows), digits CSVs
#                               (plain, gzip, too few rows to split) and MNIST
#                               JSONs (0.json)
#
# BUILD_DIR holds train_pcd and train_ucd (make examples). The data seeds are
# the same bytes on every run; a checkpoint holds its run's training time, so
# its 8 bytes of seconds (and its CRC) change from one run to the next.
set -euo pipefail

B=${1:?usage: make_trainer_corpus.sh BUILD_DIR DIR}
D=${2:?usage: make_trainer_corpus.sh BUILD_DIR DIR}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export OPENBLAS_NUM_THREADS=1
mkdir -p "$D/checkpoint" "$D/data"

# ---- checkpoints -----------------------------------------------------------

# checkpoint NAME PROGRAM ARGS...: a 20-step run; its last checkpoint.
checkpoint() {
    local name=$1 prog=$2
    shift 2
    "$B/$prog" --data bas --steps 20 --batch 8 --samples 0 --completions 0 --eval none \
        --sample-every 0 --log-every 0 --checkpoint-every 0 --seed 3 --out "$T/$name" "$@" \
        >/dev/null 2>"$T/$name.err" || { cat "$T/$name.err" >&2; exit 1; }
    cp "$T/$name/checkpoint.ckpt" "$D/checkpoint/$name.ckpt"
    echo "$D/checkpoint/$name.ckpt ($(wc -c <"$D/checkpoint/$name.ckpt") bytes)"
}

checkpoint pcd_spin_16x8_chains train_pcd --layers 16,8 --chains 4
checkpoint ucd_binary_16x8_adam_average train_ucd --layers 16,8 --units binary --optimizer adam \
    --average-from 5
checkpoint pcd_potts3_momentum train_pcd --layers 48,6 --units potts --binarize levels --levels 3 \
    --chains 3 --momentum 0.5
checkpoint pcd_drelu_16x4 train_pcd --layers 16,4 --units binary --hidden drelu --chains 2
checkpoint pt_dbm_centred_16x6x3 train_pcd --layers 16,6,3 --units binary --centre data \
    --ladder 0.5,1 --chains 2

# ---- data ------------------------------------------------------------------

# bytes B...: the bytes of the given decimal values.
bytes() {
    local b
    for b in "$@"; do
        printf "\\$(printf '%03o' "$b")"
    done
}
be32() { bytes $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) $(($1 >> 8 & 255)) $(($1 & 255)); }

# idx_images N ROWS COLS: IDX images, pixel i of the file (i + 37 i^2) mod 256.
idx_images() {
    local n=$1 rows=$2 cols=$3 i px=()
    for ((i = 0; i < n * rows * cols; i++)); do
        px+=($(((i + 37 * i * i) % 256)))
    done
    be32 $((0x803))
    be32 "$n"
    be32 "$rows"
    be32 "$cols"
    bytes "${px[@]}"
}

# idx_labels N: IDX labels 0, 1, ..., 9, 0, ...
idx_labels() {
    local i l=()
    for ((i = 0; i < $1; i++)); do
        l+=($((i % 10)))
    done
    be32 $((0x801))
    be32 "$1"
    bytes "${l[@]}"
}

# seed NAME READER_BYTE FILE [LABELS_FILE]: DIR/data/NAME.bin.
seed() {
    local out=$D/data/$1.bin
    {
        bytes "$2"
        if [ $# -ge 4 ]; then
            local n
            n=$(wc -c <"$3")
            bytes $((n & 255)) $((n >> 8 & 255))
            cat "$3" "$4"
        else
            cat "$3"
        fi
    } >"$out"
    echo "$out ($(wc -c <"$out") bytes)"
}

idx_images 3 4 4 >"$T/i3x4x4"
idx_images 6 5 3 >"$T/i6x5x3"
idx_images 20 8 8 >"$T/i20x8x8"
idx_labels 6 >"$T/l6"
idx_labels 20 >"$T/l20"
# 70,000 images of 1 x 1 (past data_load_idx's first 2^16 rows: they grow),
# all 0, and their labels; 70 KB each, a few hundred bytes compressed.
{ be32 $((0x803)); be32 70000; be32 1; be32 1; head -c 70000 /dev/zero; } | gzip -9 -n -c >"$T/i70000.gz"
{ be32 $((0x801)); be32 70000; for ((i = 0; i < 7000; i++)); do printf '\0\1\2\3\4\5\6\7\10\11'; done; } |
    gzip -9 -n -c >"$T/l70000.gz"
gzip -9 -n -c "$T/i20x8x8" >"$T/i20x8x8.gz"
gzip -9 -n -c "$T/l20" >"$T/l20.gz"
seed idx_images_3x4x4 0 "$T/i3x4x4"
seed idx_images_6x5x3_max_rows_2 $((2 << 2)) "$T/i6x5x3"
seed idx_labels_6x5x3 1 "$T/i6x5x3" "$T/l6"
seed idx_images_gz_20x8x8 0 "$T/i20x8x8.gz"
seed idx_labels_gz_20x8x8_max_rows_7 $((7 << 2 | 1)) "$T/i20x8x8.gz" "$T/l20.gz"
seed idx_labels_gz_70000x1x1 1 "$T/i70000.gz" "$T/l70000.gz"

# 30 rows (3 of each class, so that the split has both sides) of 64 pixels
# in 0..16 and the class; the gzip one ends without a newline, CRLF lines.
awk 'BEGIN { for (r = 0; r < 30; r++) { s = ""; for (j = 0; j < 64; j++)
    s = s ((r * 7 + j * j) % 17) ","; print s (r % 10) } }' >"$T/digits.csv"
seed digits_csv_30 2 "$T/digits.csv"
head -c -1 "$T/digits.csv" | sed 's/$/\r/' | gzip -9 -n -c >"$T/digits.csv.gz"
seed digits_csv_gz_30_crlf 2 "$T/digits.csv.gz"
# one row of each class: too few to split (no test row)
head -n 10 "$T/digits.csv" >"$T/digits10.csv"
seed digits_csv_10_no_split 2 "$T/digits10.csv"

# 0.json: one image of the package's kind of values, another of 0s and 1s
# with whitespace around every token, and a gzip one of two images.
awk 'BEGIN { printf "{\"data\": ["; for (i = 0; i < 784; i++) {
    v = (i * 13) % 50; printf "%s%s", i ? "," : "", v < 30 ? "0" : v < 40 ? sprintf("0.%03d", v * 25) : "1" }
    print "]}" }' >"$T/0.json"
seed mnist_json_1 3 "$T/0.json"
awk 'BEGIN { printf "{ \"data\" :\n[ "; for (i = 0; i < 784; i++) printf "%s%d", i ? " ,\n" : "", i % 3 == 0
    print " ] }" }' >"$T/0s.json"
seed mnist_json_1_spaces 3 "$T/0s.json"
awk 'BEGIN { printf "{\"data\":["; for (i = 0; i < 1568; i++) printf "%s%s", i ? "," : "", i % 5 ? "0" : "0.5"
    print "]}" }' | gzip -9 -n -c >"$T/0.json.gz"
seed mnist_json_gz_2 3 "$T/0.json.gz"
