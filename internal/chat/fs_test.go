package chat

import (
	"io/fs"
	"testing/fstest"
)

// fstestSub is a MapFS rooted at one folder (fs.Sub without the error).
type fstestSub struct {
	m   fstest.MapFS
	dir string
}

func (s fstestSub) Open(name string) (fs.File, error) { return s.m.Open(s.dir + "/" + name) }
