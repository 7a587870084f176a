// Package unicode16 answers "is this code point in \p{X}?" exactly as the HuggingFace tokenizers
// library's Oniguruma does: Unicode 16.0 data, where Go's unicode package is still at 15.0.
//
// The sets were probed from the real library code point by code point (see gen/). Lookup goes
// through a two-level table of class bitmasks built once at start-up from the generated ranges:
// one load for Latin-1, two for everything else.
package unicode16

//go:generate go run ./gen -classes gen/classes.json.gz -word gen/word.json -o tables.go

// Class is a bit set of character classes (L, N, Space, ...).
type Class uint16

// blockBits is the log2 of the number of code points a second-level block covers.
const blockBits = 7

var (
	// latin1 is the fast path for code points below 0x100.
	latin1 [256]Class
	// index maps r>>blockBits to r's block number in blocks; identical blocks are shared.
	index  [(0x10FFFF >> blockBits) + 1]uint16
	blocks []Class
)

func init() {
	// Fill one block at a time, walking each class's ranges with a cursor, and keep only distinct
	// blocks; this keeps start-up to about a millisecond without a 2 MiB scratch table.
	const size = 1 << blockBits
	cursor := make([]int, len(classRanges))
	seen := map[[size]Class]uint16{}
	var blk [size]Class
	for bi := range index {
		lo := rune(bi << blockBits)
		hi := lo + size - 1
		blk = [size]Class{}
		for ci, rs := range classRanges {
			bit := Class(1) << ci
			k := cursor[ci]
			for k < len(rs) && rs[k][1] < lo {
				k++
			}
			cursor[ci] = k
			for j := k; j < len(rs) && rs[j][0] <= hi; j++ {
				a, z := max(rs[j][0], lo), min(rs[j][1], hi)
				for r := a; r <= z; r++ {
					blk[r-lo] |= bit
				}
			}
		}
		off, ok := seen[blk]
		if !ok {
			off = uint16(len(blocks) / size)
			seen[blk] = off
			blocks = append(blocks, blk[:]...)
		}
		index[bi] = off
	}
	for r := range latin1 {
		latin1[r] = lookup(rune(r))
	}
}

func lookup(r rune) Class {
	return blocks[int(index[r>>blockBits])<<blockBits|int(r&(1<<blockBits-1))]
}

// Props returns the classes r belongs to. Values outside 0..0x10FFFF (and surrogates) have none.
func Props(r rune) Class {
	if uint32(r) < 0x100 {
		return latin1[r]
	}
	if uint32(r) > 0x10FFFF {
		return 0
	}
	return lookup(r)
}

// Is reports whether r belongs to at least one of the classes in c.
func Is(c Class, r rune) bool { return Props(r)&c != 0 }

// Ranges returns the sorted inclusive ranges of one class (exactly one bit set); the caller must
// not modify them. It returns nil for any other value.
func Ranges(c Class) [][2]rune {
	for i := range classRanges {
		if c == Class(1)<<i {
			return classRanges[i]
		}
	}
	return nil
}
