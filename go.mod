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
	github.com/prometheus/client_model v0.6.2
	github.com/prometheus/common v0.67.4
	google.golang.org/protobuf v1.36.10
)

require (
	github.com/andybalholm/brotli v1.1.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/kr/pretty v0.3.1 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/pierrec/lz4/v4 v4.1.21 // indirect
	go.yaml.in/yaml/v2 v2.4.3 // indirect
	golang.org/x/sys v0.38.0 // indirect
)
