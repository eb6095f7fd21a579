#!/usr/bin/env bash
# test_usage.sh NXPROF — end-to-end checks of the CLI contract: help, version,
# and exit code 2 with a one-line hint for every kind of usage error.
set -u
BIN=${1:?usage: test_usage.sh path/to/nxprof}
. "$(dirname "$0")/harness.sh"

expect 0 "global help" -- --help;                contains "Commands:" "global help lists commands"
expect 0 "version" -- --version;                 contains "nxprof " "version names the tool"
expect 2 "no command" --
expect 2 "unknown command" -- frobnicate;        contains "unknown command 'frobnicate'" "unknown command named"
contains "Try 'nxprof --help'" "hint line"
expect 2 "unknown global option" -- --bogus;     contains "unknown option '--bogus'" "bogus option named"
expect 0 "help command" -- help schema;          contains "Usage: nxprof schema" "help <cmd>"
expect 2 "help for unknown command" -- help nope

# Every command listed by --help answers --help with exit 0 and rejects a bogus option with 2.
for cmd in $("$BIN" --help | awk '/^Commands:/{on=1;next} on && /^  [a-z]/{print $1} on && /^$/{on=0}'); do
    expect 0 "$cmd --help" -- "$cmd" --help;     contains "Usage: nxprof $cmd" "$cmd help text"
    expect 2 "$cmd bogus option" -- "$cmd" --definitely-not-an-option
    contains "Try 'nxprof $cmd --help'" "$cmd hint"
    expect 2 "$cmd bogus short option" -- "$cmd" -Z
done

expect 2 "schema missing argument" -- schema --format; contains "needs an argument" "missing argument named"
expect 2 "schema bad format" -- schema --format xml;   contains "unknown format 'xml'" "bad format named"
expect 2 "schema stray argument" -- schema extra
expect 0 "schema json" -- schema --format json
expect 0 "view alias" -- view --show-profile-schema;   contains "openapi:" "view prints OpenAPI"
check '[ "$("$BIN" view --show-profile-schema)" = "$("$BIN" schema)" ]' "view --show-profile-schema equals schema"
expect 2 "view with nothing to do" -- view

finish
