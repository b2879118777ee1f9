#!/bin/sh
# Regenerates the bzip2 fixtures of test/unit/reading/formats.test.ts (issue 17). Node has no bzip2
# encoder, so these few files are committed; gzip, zstd, Parquet and Ion fixtures are made by the tests.
# Needs the bzip2 command (Debian package bzip2). Run from the repository root.
set -eu
out=test/fixtures/formats
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# 3000 rows: pk is r<i>, qty is i, note repeats text so the compressed file is small and spans blocks of output.
awk 'BEGIN { print "pk,qty,note"; for (i = 1; i <= 3000; i++) printf "r%d,%d,row number %d of the bzip2 fixture\n", i, i, i }' > "$tmp/rows.csv"
bzip2 -9 -c "$tmp/rows.csv" > "$out/rows.csv.bz2"
# Two bzip2 streams one after the other (as pbzip2 and `cat a.bz2 b.bz2` write): both are read.
printf 'pk,qty\nfirst,1\n' | bzip2 -c > "$tmp/a.bz2"
printf 'second,2\n' | bzip2 -c > "$tmp/b.bz2"
cat "$tmp/a.bz2" "$tmp/b.bz2" > "$out/two-streams.csv.bz2"
# A truncated stream: the reader must fail naming the file, never end early as if complete.
head -c 200 "$out/rows.csv.bz2" > "$out/truncated.csv.bz2"
