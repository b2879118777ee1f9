#!/bin/sh
# Regenerates the committed compressed fixtures. Node has no bzip2 encoder, and none for zstd before
# 22.15, so these files are committed; gzip, Parquet and Ion fixtures are made by the tests.
# Needs the bzip2 command (Debian package bzip2), and Node 22.15+ or the zstd command (package zstd);
# the zstd part runs the tests that compress with zstd (some need Java for DynamoDB Local).
# Run from the repository root.
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
# zstd: one file for each input a test compresses (test/support/formatFixtures.ts names it by the input's
# SHA-256), written by those tests when DDB_SPREAD_WRITE_FIXTURES=1.
rm -rf test/fixtures/zstd
npm run build
DDB_SPREAD_WRITE_FIXTURES=1 npx vitest run $(grep -rl "formatFixtures.js" test --include='*.test.ts' | xargs grep -l "zstd\|codec")
