package inproc

import (
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
)

// CacheSize returns the size in bytes of CPU 0's cache at level (1, 2, 3),
// its data or unified one, as Linux's sysfs describes it; 0 when sysfs does
// not say. Eviction buffers are sized from it rather than from constants:
// the project machine is a VM that has moved between hosts whose caches
// differ fourfold (an L2 of 512 KiB and an L3 of 8 MiB on 2026-12-04, 1 MiB
// and 32 MiB the next day), and a buffer sized for the smaller host leaves
// the larger one's L3 warm.
func CacheSize(level int) int {
	return cacheSize(os.DirFS("/sys/devices/system/cpu/cpu0/cache"), level)
}

func cacheSize(dir fs.FS, level int) int {
	entries, err := fs.ReadDir(dir, ".")
	if err != nil {
		return 0
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "index") {
			continue
		}
		read := func(name string) string {
			b, _ := fs.ReadFile(dir, path.Join(e.Name(), name))
			return strings.TrimSpace(string(b))
		}
		if read("level") != strconv.Itoa(level) || read("type") == "Instruction" {
			continue
		}
		return parseCacheSize(read("size"))
	}
	return 0
}

// parseCacheSize reads sysfs's size notation: "48K", "1024K", "32M", or a
// plain number of bytes; 0 when it is none of them.
func parseCacheSize(s string) int {
	unit := 1
	switch {
	case strings.HasSuffix(s, "K"):
		unit, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		unit, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0
	}
	return n * unit
}
