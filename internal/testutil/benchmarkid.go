package testutil

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// SeedBenchmarkID is the benchmark id compose derived from --seed before
// it minted a fresh one per run. Tests that compose in-process pass it so
// their markers, and so the test server's seeded replies
// (testserver.Config.RandomStop draws from the request body), are the same
// on every run: a random id would make them depend on chance.
func SeedBenchmarkID(seed uint64) string {
	s := sha256.Sum256([]byte("islkit:" + strconv.FormatUint(seed, 10)))
	return hex.EncodeToString(s[:6])
}
