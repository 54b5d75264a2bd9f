package main

import "github.com/wymcp/wymcp/opfile"

// Caps of the files the operator names: what each can hold, with room to
// spare, so that a wrong path (a log, a disk image) fails at once instead
// of filling memory.
const (
	// maxSecretFile bounds a file of secrets: a client secret, a
	// headers file of credentials, the state key ring.
	maxSecretFile = 64 << 10
	// maxJWKSFile bounds a JWK Set file, as auth.JWKSOptions.MaxBytes's
	// default bounds a fetched one.
	maxJWKSFile = 256 << 10
)

// readOperatorFile reads a file a flag or the -upstreams file names
// (opfile.Read: bounded, never blocking, regular files only): at
// start and on SIGHUP no file can hang the process or grow it.
func readOperatorFile(path string, max int64) ([]byte, error) { return opfile.Read(path, max) }
