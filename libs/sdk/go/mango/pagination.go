package mango

import (
	"context"
	"iter"
	"net/http"
)

// Page is one page of a list operation: {data, next_page}.
type Page[T any] struct {
	Data     []T     `json:"data"`
	NextPage *string `json:"next_page"`
}

// PageFetcher fetches the page at cursor page (nil for the first page); it is usually a closure over a
// generated list operation that sets Params.Page.
type PageFetcher func(ctx context.Context, page *string) (*http.Response, error)

// Pages yields every page, starting with the first, following next_page until it is null. Iteration
// stops at the first error, which is yielded with a nil page.
func Pages[T any](ctx context.Context, fetch PageFetcher) iter.Seq2[*Page[T], error] {
	return func(yield func(*Page[T], error) bool) {
		var cursor *string
		for {
			page, err := Decode[Page[T]](fetch(ctx, cursor))
			if err == nil && page == nil {
				page = &Page[T]{}
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(page, nil) || page.NextPage == nil {
				return
			}
			cursor = page.NextPage
		}
	}
}

// All yields every item of every page (see Pages).
//
//	for agent, err := range mango.All[generated.Agent](ctx, func(ctx context.Context, page *string) (*http.Response, error) {
//		return c.AgentsList(ctx, &generated.AgentsListParams{Limit: &limit, Page: page})
//	}) { ... }
func All[T any](ctx context.Context, fetch PageFetcher) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for page, err := range Pages[T](ctx, fetch) {
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range page.Data {
				if !yield(item, nil) {
					return
				}
			}
		}
	}
}
