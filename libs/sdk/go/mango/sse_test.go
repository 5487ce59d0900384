package mango

import (
	"reflect"
	"testing"
)

func TestSSEParserHandlesSplitsCommentsAndLineEndings(t *testing.T) {
	p := &SSEParser{}
	var got []SSEFrame
	for _, chunk := range []string{": ping\n\nid: 1\nevent: user.message\nda", "ta: {\"a\":\r", "\ndata: 1}\r\n\r", "\nevent: ping\ndata: {}\n\n", "id: 3\ndata:x\rdata: y\r\r", "id: 4\nevent: e\n\n", "data: unterminated"} {
		got = append(got, p.Push(chunk)...)
	}
	want := []SSEFrame{
		{ID: "1", Event: "user.message", Data: "{\"a\":\n1}"},
		{ID: "", Event: "ping", Data: "{}"},
		{ID: "3", Event: "message", Data: "x\ny"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
}

func TestIsAfterComparesSequenceNumbers(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{{"10", "9", true}, {"9", "10", false}, {"3", "3", false}, {"007", "6", true}, {"x", "9", true}}
	for _, c := range cases {
		if isAfter(c.a, c.b) != c.want {
			t.Errorf("isAfter(%q, %q) != %v", c.a, c.b, c.want)
		}
	}
}
