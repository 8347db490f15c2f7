#!/usr/bin/env bash
# foveal-cli reads kraken's fixtures as kraken's own test suite says kraken reads them
# (../shared/fixtures/kraken/expected.json): the whole line image through kraken's bounding-box
# path (`trace --model overfit.mlmodel 000236.png`), the baseline line and the out-of-image box
# through `trace --layout` with PAGE-XML files written here (and that page exported with
# --page/--alto, validated with xmllint when present), `info` on every fixture model.
# kraken's tests call rpred(model, im, seg, True): that True is rpred's `pad`, i.e. 1 px.
# Usage: kraken_trace.sh FOVEAL_CLI FIXTURES_DIR
set -euo pipefail
cli=$1
fx=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expected() {  # expected.json's prediction number $1
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["readings"][int(sys.argv[2])]["prediction"], end="")' \
    "$fx/expected.json" "$1"
}
field() {  # a JSON file's value at a path of keys/indices: field FILE lines 0 prediction
  python3 -c 'import json,sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    v = v[int(k)] if isinstance(v, list) else v[k]
print(v if not isinstance(v, (dict, list)) else json.dumps(v), end="")' "$@"
}
check() {  # what got, want
  if [ "$2" != "$3" ]; then
    printf 'FAIL %s:\n  got  [%s]\n  want [%s]\n' "$1" "$2" "$3"
    exit 1
  fi
  echo "ok $1"
}

# 1. The whole image as one line: kraken's bounding-box path.
"$cli" trace --model "$fx/models/overfit.mlmodel" --padding 1 "$fx/lines/000236.png" --json \
  > "$tmp/bbox.json"
check "bbox reading" "$(field "$tmp/bbox.json" prediction)" "$(expected 0)"

# 2. The baseline line, through a PAGE-XML 2019 layout.
page() {  # page IMAGE W H COORDS [BASELINE]
  local baseline=""
  [ -n "${5:-}" ] && baseline="<Baseline points=\"$5\"/>"
  cat <<XML
<?xml version="1.0" encoding="UTF-8"?>
<PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15">
  <Metadata><Creator>foveal tests</Creator><Created>2026-12-01T00:00:00</Created>
    <LastChange>2026-12-01T00:00:00</LastChange></Metadata>
  <Page imageFilename="$1" imageWidth="$2" imageHeight="$3">
    <TextRegion id="r1"><Coords points="$4"/>
      <TextLine id="l1"><Coords points="$4"/>$baseline</TextLine>
    </TextRegion>
  </Page>
</PcGts>
XML
}
page 000236.png 2544 156 "0,0 2543,0 2543,155 0,155" "0,10 2543,10" > "$tmp/baseline.xml"
"$cli" trace --model "$fx/models/overfit.mlmodel" --padding 1 --layout "$tmp/baseline.xml" \
  "$fx/lines/000236.png" --json > "$tmp/baseline.json"
check "baseline reading" "$(field "$tmp/baseline.json" lines 0 prediction)" "$(expected 1)"
check "baseline line id" "$(field "$tmp/baseline.json" lines 0 id)" "l1"
steps=$(field "$tmp/baseline.json" lines 0 steps)
[ "$(python3 -c 'import json,sys; s=json.loads(sys.argv[1]); print(all(len(x["cut"]) >= 2 for x in s) and len(s) > 0)' "$steps")" = True ] \
  || { echo "FAIL: the baseline line's steps have no cuts on the page"; exit 1; }
echo "ok baseline cuts"

# 2b. The same page exported with the reading as PAGE-XML and ALTO: refused over an existing file
# without --force, valid against the published schemas (xmllint, Debian's libxml2-utils, when
# present), each character a Glyph.
schemas=$fx/../schemas
: > "$tmp/exists.xml"
if "$cli" trace --model "$fx/models/overfit.mlmodel" --padding 1 --layout "$tmp/baseline.xml" \
  "$fx/lines/000236.png" --page "$tmp/exists.xml" > /dev/null 2> "$tmp/err.txt"; then
  echo "FAIL: --page replaced an existing file without --force"; exit 1
fi
grep -q "already exists" "$tmp/err.txt" || { echo "FAIL: --page refusal says"; cat "$tmp/err.txt"; exit 1; }
"$cli" trace --model "$fx/models/overfit.mlmodel" --padding 1 --layout "$tmp/baseline.xml" \
  "$fx/lines/000236.png" --json --page "$tmp/export.page.xml" --alto "$tmp/export.alto.xml" \
  > "$tmp/export.json"
check "exported reading" "$(field "$tmp/export.json" lines 0 prediction)" "$(expected 1)"
glyphs=$(python3 -c 'import json,sys; print(sum(s["token"] != " " for s in json.load(open(sys.argv[1]))["lines"][0]["steps"]))' "$tmp/export.json")
for f in page alto; do
  [ "$(grep -c "<Glyph" "$tmp/export.$f.xml")" = "$glyphs" ] \
    || { echo "FAIL: the $f export has not one Glyph per character ($glyphs)"; exit 1; }
done
if command -v xmllint > /dev/null && [ -d "$schemas" ]; then
  xmllint --noout --nonet --schema "$schemas/pagecontent-2019-07-15.xsd" "$tmp/export.page.xml"
  xmllint --noout --nonet --schema "$schemas/alto-4-3.xsd" "$tmp/export.alto.xml"
  xmllint --noout --nonet --schema "$schemas/alto-4-4.xsd" "$tmp/export.alto.xml"
  echo "ok page export validates"
else
  echo "skip: no xmllint or no schemas ($schemas): the exports are not validated here"
fi

# 3. A box outside the page: an empty reading, not an error.
page bw.png 0 0 "-1,-1 10000,-1 10000,10000 -1,10000" > "$tmp/outside.xml"
cp "$fx/lines/bw.png" "$tmp/bw.png"
"$cli" trace --model "$fx/models/overfit.mlmodel" --padding 1 --layout "$tmp/outside.xml" \
  "$tmp/bw.png" --json > "$tmp/outside.json"
check "out-of-image reading" "$(field "$tmp/outside.json" lines 0 prediction)" "$(expected 2)"

# 4. info on every fixture model: its format, its layers, its classes.
for m in "$fx"/models/*; do
  "$cli" info --model "$m" > "$tmp/info.txt"
  grep -q "^format: kraken" "$tmp/info.txt" || { echo "FAIL: info $m"; cat "$tmp/info.txt"; exit 1; }
  grep -q "kraken network \[" "$tmp/info.txt" || { echo "FAIL: info $m has no VGSL"; exit 1; }
done
"$cli" info --model "$fx/models/overfit.mlmodel" > "$tmp/info.txt"
grep -q "stored val_accuracy (162 evaluations)" "$tmp/info.txt" \
  || { echo "FAIL: info shows no stored accuracy"; exit 1; }
echo "ok info"
echo "kraken trace test passed"
