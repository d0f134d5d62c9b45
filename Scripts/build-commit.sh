#!/bin/sh
# Writes OUTDIR/BuildCommit.swift: the commit the package at PACKAGE is built from, for --version
# (Sources/OTAVersion). The BuildCommit plugin (Sources/BuildCommitPlugin) runs it before every build, so
# it is quick and rewrites the file only when the commit changed: an unchanged file keeps its time
# and nothing is compiled again. Outside a git checkout of PACKAGE itself (a tarball, an export, a
# copy inside another repository), or without git, the commit is nil: "unknown commit".
#   Scripts/build-commit.sh PACKAGE OUTDIR
set -u
package="$1"
out="$2"

commit=""
if top="$(git -C "$package" rev-parse --show-toplevel 2>/dev/null)" &&
  [ "$(cd "$top" && pwd -P)" = "$(cd "$package" && pwd -P)" ]; then
  commit="$(git -C "$package" rev-parse --short=7 HEAD 2>/dev/null)" || commit=""
fi
case "$commit" in
  "" | *[!0-9a-f]*) value="nil" ;;
  *) value="\"$commit\"" ;;
esac

text="// Written by Scripts/build-commit.sh (the BuildCommit plugin) before each build. Do not edit.
let buildCommit: String? = $value"

mkdir -p "$out" || exit 1
file="$out/BuildCommit.swift"
if [ "$(cat "$file" 2>/dev/null)" != "$text" ]; then
  printf '%s\n' "$text" >"$file.new" && mv -f "$file.new" "$file"
fi
