module mango-release-gomodproxy

go 1.26.0

require golang.org/x/mod v0.38.0
