module github.com/islkit/islkit

go 1.26

require (
	github.com/alecthomas/kong v1.17.0
	github.com/dlclark/regexp2 v1.12.0
	github.com/goccy/go-json v0.12.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/text v0.33.0
)

require (
	github.com/klauspost/compress v1.20.4
	github.com/parquet-go/parquet-go v0.25.1
)

require (
	github.com/andybalholm/brotli v1.1.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/pierrec/lz4/v4 v4.1.21 // indirect
	golang.org/x/sys v0.38.0 // indirect
)
