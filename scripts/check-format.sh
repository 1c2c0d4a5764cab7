#!/usr/bin/env bash
# Checks that every C/C++ line changed since a base commit is formatted as
# the repository's .clang-format says (Debian's clang-format 14, through
# git-clang-format, which looks only at the lines that differ).
#
#   scripts/check-format.sh            # lines changed since .ci/format-base, up to HEAD
#   scripts/check-format.sh BASE       # lines changed since BASE
#   scripts/check-format.sh --fix      # reformat the lines changed since the base
#                                      # in the working tree (then commit them)
#
# .ci/format-base is the commit from which formatting is enforced: code
# older than it keeps its layout until someone changes it (most files
# predate the rule, and code moved by the 2026-12-02 reorganisation kept
# its layout too), so a reformat never hides a change in a diff.
# Exit status 1, with the diff clang-format wants, when a line is not
# formatted.
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
case ${1:-} in
  -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --fix) fix=1; shift ;;
esac
[ $# -le 1 ] || { echo "usage: scripts/check-format.sh [--fix] [BASE]" >&2; exit 2; }
base=${1:-$(cat .ci/format-base)}
git_clang_format=$(command -v git-clang-format-14 || command -v git-clang-format || true)
[ -n "$git_clang_format" ] || { echo "check-format: git-clang-format not found (Debian package clang-format)" >&2; exit 2; }
binary=$(command -v clang-format-14 || command -v clang-format)
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  echo "check-format: base commit $base is not in this clone (shallow?); fetch more history" >&2
  exit 2
fi
exts=c,cc,cpp,h,hpp
if [ $fix = 1 ]; then
  "$git_clang_format" --binary "$binary" --extensions "$exts" --force "$base"
  exit 0
fi
out=$("$git_clang_format" --binary "$binary" --extensions "$exts" --diff "$base" HEAD || true)
case $out in
  "" | "no modified files to format"* | "clang-format did not modify any files"*)
    echo "check-format: every C/C++ line changed since ${base:0:12} is formatted"
    exit 0 ;;
esac
printf '%s\n' "$out"
echo "check-format: the lines above are not formatted as .clang-format says; run scripts/check-format.sh --fix and commit" >&2
exit 1
