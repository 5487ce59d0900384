module mango-sdk-conformance

go 1.26.0

require github.com/mango/mango/libs/sdk/go v0.0.0-00010101000000-000000000000

require (
	github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/oapi-codegen/runtime v1.9.0 // indirect
	golang.org/x/text v0.40.0 // indirect
)

// The SDK module from this repository (tools/sdk/test/conformance.e2e-spec.ts runs `go run` with
// GOFLAGS=-mod=mod); a published copy would be `go get github.com/mango/mango/libs/sdk/go@vX`.
replace github.com/mango/mango/libs/sdk/go => ../../../../libs/sdk/go
