// nxgo: an independent Parquet reader and writer for nxprof's interop tests.
//
// nxprof writes its profiles with its own Parquet codec (src/parquet/). A
// codec that is only ever read back by itself can agree with itself on a
// mistake, so the interop tests check it against a second implementation,
// apache/arrow-go's parquet/pqarrow, in both directions:
//
//	nxgo rewrite [-compression C] [-row-group N] SRC_DIR DST_DIR
//	    reads every *.parquet file directly in SRC_DIR with arrow-go and
//	    writes it again with arrow-go, under the same name, into DST_DIR;
//	    the tests then run nxprof on DST_DIR and expect the same answers as
//	    on SRC_DIR (what arrow-go writes, nxprof must read).
//	nxgo dump FILE.parquet
//	    prints the file as arrow-go reads it (schema, row-group statistics,
//	    every row) as one JSON document; the tests compare it with what
//	    nxprof meant to write (what nxprof writes, arrow-go must read).
//
// The tests build it with `go build -o BIN .` in this directory and run BIN.
// Errors go to stderr, naming the file, with exit status 1; usage errors
// exit with status 2.
package main

import (
	"fmt"
	"os"
)

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  nxgo rewrite [-compression none|snappy|gzip|zstd|brotli|lz4] [-row-group N] SRC_DIR DST_DIR
  nxgo dump FILE.parquet
`)
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "rewrite":
		err = rewriteMain(os.Args[2:])
	case "dump":
		err = dumpMain(os.Args[2:])
	case "-h", "-help", "--help", "help":
		usage()
		return
	default:
		fmt.Fprintf(os.Stderr, "nxgo: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err != nil {
		if ue, ok := err.(usageError); ok {
			fmt.Fprintf(os.Stderr, "nxgo: %s\n", string(ue))
			usage()
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "nxgo: %v\n", err)
		os.Exit(1)
	}
}

// usageError is a mistake in the command line rather than in a file.
type usageError string

func (e usageError) Error() string { return string(e) }

// recoverInto turns a panic inside arrow-go (some malformed inputs reach one)
// into an error naming the file, so that a broken file gives the one-line
// message and exit status 1 like any other unreadable file. prefix is the
// file name where the caller adds none itself.
func recoverInto(err *error, prefix string) {
	r := recover()
	if r == nil {
		return
	}
	if prefix != "" {
		*err = fmt.Errorf("%s: arrow-go panicked: %v", prefix, r)
	} else {
		*err = fmt.Errorf("arrow-go panicked: %v", r)
	}
}
