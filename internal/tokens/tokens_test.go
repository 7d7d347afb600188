package tokens

import "testing"

func TestCount(t *testing.T) {
	// Counts as o200k_base splits them: {" type ":" object "}.
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{`{"type":"object"}`, 5},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Count(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Count(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func BenchmarkCount(b *testing.B) {
	text := `{"name":"create_issue","description":"Create a new issue in a GitHub repository","inputSchema":{"type":"object"}}`
	MustCount(text)
	b.ReportAllocs()
	for b.Loop() {
		MustCount(text)
	}
}

func TestEstimateIsCount(t *testing.T) {
	for _, s := range []string{"", "hello world", `{"type":"object"}`, `{"name":"get_balance","parameters":{"type":"object"}}`} {
		t.Run(s, func(t *testing.T) {
			want, err := Count(s)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // counted, then from the cache
				if got := Estimate(s); got != want {
					t.Errorf("Estimate(%q) = %d, want %d", s, got, want)
				}
			}
		})
	}
}
