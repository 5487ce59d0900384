module mango-sdk-conformance

go 1.26.0

require mango.dev/sdk v0.0.0-00010101000000-000000000000

require (
	github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/oapi-codegen/runtime v1.9.0 // indirect
	golang.org/x/text v0.40.0 // indirect
)

// The SDK module from this repository (tools/sdk/test/conformance.e2e-spec.ts runs `go run` with
// GOFLAGS=-mod=mod). Users get the released module: `go get mango.dev/sdk@vX.Y.Z` (docs/versioning.md);
// tools/sdk/test/release-artifacts.e2e-spec.ts runs this program against the release's module zip instead.
replace mango.dev/sdk => ../../../../libs/sdk/go
