module github.com/islkit/islkit/bench/send

go 1.26

require (
	github.com/islkit/islkit v0.0.0
	github.com/tsenart/vegeta/v12 v12.13.0
)

require (
	github.com/alecthomas/kong v1.17.0 // indirect
	github.com/dlclark/regexp2 v1.12.0 // indirect
	github.com/goccy/go-json v0.12.0 // indirect
	github.com/influxdata/tdigest v0.0.1 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/mailru/easyjson v0.7.7 // indirect
	github.com/rs/dnscache v0.0.0-20230804202142-fc85eb664529 // indirect
	golang.org/x/net v0.27.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/text v0.33.0 // indirect
)

replace github.com/islkit/islkit => ../..
