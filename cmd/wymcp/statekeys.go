package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
)

// readStateKeys reads the -state-key-file: the key ring that seals the
// requestState of multi-round-trip tool calls (wymcp.Options.StateKeys).
//
// One key per line, newest first, each the standard base64 (RFC 4648 §4,
// padded) of 32 random bytes, as `openssl rand -base64
// 32` prints one. Blank lines and lines starting with # are ignored, and
// white space around a key is trimmed. To rotate, add a new first line,
// restart every replica, and remove the oldest line once -state-ttl has
// passed. base64, not raw bytes: a key file is text that a secret store or
// a Kubernetes Secret holds and an operator can inspect without printing
// binary.
//
// Errors name the file and the line, never a key.
func readStateKeys(path string) ([][]byte, error) {
	b, err := readOperatorFile(path, maxSecretFile)
	if err != nil {
		return nil, fmt.Errorf("-state-key-file: %w", err)
	}
	var keys [][]byte
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, err := base64.StdEncoding.Strict().DecodeString(line)
		if err != nil {
			return nil, fmt.Errorf("-state-key-file %s: line %d is not standard base64 (want the base64 of %d random bytes, as `openssl rand -base64 %d` prints)",
				path, n, 32, 32)
		}
		if len(key) != 32 {
			return nil, fmt.Errorf("-state-key-file %s: the key on line %d is %d bytes; each key must be %d bytes (AES-256)",
				path, n, len(key), 32)
		}
		if first, dup := seen[string(key)]; dup {
			return nil, fmt.Errorf("-state-key-file %s: line %d repeats the key of line %d", path, n, first)
		}
		seen[string(key)] = n
		keys = append(keys, key)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("-state-key-file %s: %w", path, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("-state-key-file %s: no key in the file (want one base64 key per line, newest first)", path)
	}
	return keys, nil
}
