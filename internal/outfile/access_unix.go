//go:build unix

package outfile

import "syscall"

// writable asks the kernel whether p may be opened for writing, without
// opening it (opening a FIFO would wait for its reader).
func writable(p string) error { return syscall.Access(p, 2 /* W_OK */) }
