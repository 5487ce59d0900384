module mango-sdk-conformance

go 1.26.0

require mango.dev/sdk v0.0.0-00010101000000-000000000000

require (
	github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/oapi-codegen/runtime v1.9.0 // indirect
	golang.org/x/text v0.40.0 // indirect
)

// The SDK module from this repository, for `go vet` (tools/sdk/run.sh go-lint) and the orchestrator's
// idempotent-retries e2e (./sendevent), both with GOFLAGS=-mod=mod. Users require the released module,
// mango.dev/sdk vX.Y.Z (docs/versioning.md); tools/sdk/test/conformance.e2e-spec.ts runs main.go that way,
// from the release's module zip.
replace mango.dev/sdk => ../../../../libs/sdk/go
