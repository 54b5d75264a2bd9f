//go:build !unix

package upstream_test

import (
	"net/http/httptest"
	"testing"
)

// refuse closes srv (refuse_test.go holds its port where it can).
func refuse(t testing.TB, srv *httptest.Server) { srv.Close() }
