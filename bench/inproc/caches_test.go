package inproc

import (
	"testing"
	"testing/fstest"
)

// TestCacheSize reads a cache directory as sysfs lays it out: the level's
// data or unified cache, never its instruction cache, in sysfs's notation.
func TestCacheSize(t *testing.T) {
	t.Parallel()
	index := func(level, typ, size string) map[string]string {
		return map[string]string{"level": level + "\n", "type": typ + "\n", "size": size + "\n"}
	}
	dir := fstest.MapFS{}
	for name, files := range map[string]map[string]string{
		"index0": index("1", "Instruction", "32K"),
		"index1": index("1", "Data", "48K"),
		"index2": index("2", "Unified", "1024K"),
		"index3": index("3", "Unified", "32M"),
	} {
		for f, v := range files {
			dir[name+"/"+f] = &fstest.MapFile{Data: []byte(v)}
		}
	}
	dir["uevent"] = &fstest.MapFile{}
	for level, want := range map[int]int{1: 48 << 10, 2: 1 << 20, 3: 32 << 20, 4: 0} {
		if got := cacheSize(dir, level); got != want {
			t.Errorf("level %d: %d bytes, want %d", level, got, want)
		}
	}
	if got := cacheSize(fstest.MapFS{}, 2); got != 0 {
		t.Errorf("no caches described: %d, want 0", got)
	}
}

func TestParseCacheSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{"48K": 48 << 10, "32M": 32 << 20, "4096": 4096, "": 0, "K": 0, "-1K": 0, "1G": 0} {
		if got := parseCacheSize(in); got != want {
			t.Errorf("%q: %d, want %d", in, got, want)
		}
	}
}
