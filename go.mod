module github.com/islkit/islkit

go 1.26

require (
	github.com/alecthomas/kong v1.17.0
	github.com/dlclark/regexp2 v1.12.0
	github.com/goccy/go-json v0.12.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/text v0.33.0
)

require github.com/klauspost/compress v1.20.4

require google.golang.org/protobuf v1.36.6
