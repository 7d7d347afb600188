package p

import "testing"

var named = []struct{ in, want string }{{"a", "a"}}

func TestLiteralNoRun(t *testing.T) {
	for _, tc := range []struct{ in, want string }{{"a", "a"}} { // want
		if tc.in != tc.want {
			t.Errorf("%s", tc.in)
		}
	}
}

func TestLocalNoRun(t *testing.T) {
	tests := map[string]int{"a": 1}
	for name, n := range tests { // want
		if n != 1 {
			t.Fatalf("%s", name)
		}
	}
}

func TestNamedNoRun(t *testing.T) {
	for _, tc := range named { // want
		if tc.in == "" {
			t.Fail()
		}
	}
}

func TestWithRun(t *testing.T) {
	for _, tc := range named {
		t.Run(tc.in, func(t *testing.T) {
			if tc.in != tc.want {
				t.Errorf("%s", tc.in)
			}
		})
	}
}

func TestInnerTableInSubtest(t *testing.T) {
	t.Run("x", func(t *testing.T) {
		for _, s := range []string{"a"} { // want
			if s == "" {
				t.Error(s)
			}
		}
	})
}

func TestEscaped(t *testing.T) {
	//testlint:rows the rows are steps of one sequence
	for _, s := range []string{"a"} {
		if s == "" {
			t.Error(s)
		}
	}
}

func TestNotATable(t *testing.T) {
	xs := make([]int, 3)
	for i := range xs {
		if xs[i] != 0 {
			t.Error(i)
		}
	}
	for _, s := range []string{"a"} {
		_ = s // reports nothing
	}
	seen := map[string]int{} // filled later: not a table
	seen["a"]++
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s: %d", k, n)
		}
	}
}

func helper(t *testing.T) {
	for _, s := range []string{"a"} { // want
		if s == "" {
			t.Error(s)
		}
	}
}

func BenchmarkIgnored(b *testing.B) {
	for _, s := range []string{"a"} {
		if s == "" {
			b.Error(s)
		}
	}
}
