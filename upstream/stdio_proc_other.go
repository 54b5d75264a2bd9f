//go:build !linux

package upstream

import (
	"errors"
	"os"
)

// Stdio upstreams need Linux: their cleanup (a subreaper ending the
// child's process group when the gateway dies) is Linux's.
// Options.Validate refuses Command elsewhere; these keep the package
// building.

const reaperEnv = "WYMCP_STDIO_REAPER"

type childSpec struct{ path string }

func newChildSpec(Options) (childSpec, error) {
	return childSpec{}, errors.New("stdio upstreams need Linux")
}

func (childSpec) spawn() (*child, *os.File, *os.File, error) {
	return nil, nil, nil, errors.New("stdio upstreams need Linux")
}

func (sp childSpec) forCaller(string) childSpec { return sp }

type process struct{}

func (*process) wait() error { return errors.New("stdio upstreams need Linux") }
func (*process) terminate()  {}
func (*process) kill()       {}
func (*process) killReaper() {}
