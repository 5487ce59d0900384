module mango.dev/sdk

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/oapi-codegen/runtime v1.9.0
	golang.org/x/text v0.40.0
)

require github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
