package grammar

import (
	"fmt"
	"sync"
	"testing"
)

func TestCache(t *testing.T) {
	schema := func(i int) []byte {
		return []byte(fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"string"}}}`, i))
	}

	t.Run("no cache: every call compiles", func(t *testing.T) {
		a, _ := FromSchema(schema(0), nil)
		b, _ := FromSchema(schema(0), nil)
		if a == b {
			t.Errorf("FromSchema without a Cache returned the same *Result twice")
		}
	})

	t.Run("hits, and what is part of the key", func(t *testing.T) {
		c := NewCache(0)
		a, _ := FromSchema(schema(0), &Options{Cache: c})
		if b, _ := FromSchema(schema(0), &Options{Cache: c}); b != a {
			t.Errorf("second FromSchema = a new result, want the cached one")
		}
		for i, o := range []Options{{Compact: true}, {Strict: true}, {OpenObjects: true}, {MaxStringLength: 10}, {MaxItems: 3}} {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				o.Cache = c
				if b, _ := FromSchema(schema(0), &o); b == a {
					t.Errorf("FromSchema with %+v = the result of other options", o)
				}
			})
		}
		if b, _ := FromSchema(schema(1), &Options{Cache: c}); b == a {
			t.Errorf("FromSchema of another schema = the cached result of the first")
		}
	})

	t.Run("envelope of a repeated shortlist", func(t *testing.T) {
		c := NewCache(0)
		ts := []EnvelopeTool{{Name: "a", Schema: schema(0)}, {Name: "b", Schema: schema(1)}}
		e1, err := Envelope(ts, &Options{Cache: c})
		if err != nil {
			t.Fatal(err)
		}
		if e2, _ := Envelope(ts, &Options{Cache: c}); e2 != e1 {
			t.Errorf("Envelope of the same shortlist = a new result, want the cached one")
		}
		swapped := []EnvelopeTool{{Name: "a", Schema: schema(1)}, {Name: "b", Schema: schema(0)}}
		if e3, _ := Envelope(swapped, &Options{Cache: c}); e3 == e1 || e3.GBNF == e1.GBNF {
			t.Errorf("Envelope with the schemas swapped between names = the first shortlist's result")
		}
		if e4, _ := Envelope(ts, &Options{Cache: c, NoFindTools: true}); e4 == e1 {
			t.Errorf("Envelope with NoFindTools = the result without it")
		}
	})

	t.Run("bounded, least recently used dropped", func(t *testing.T) {
		c := NewCache(4) // a [FromSchema] miss stores two entries: raw bytes and canonical form
		a, _ := FromSchema(schema(0), &Options{Cache: c})
		FromSchema(schema(1), &Options{Cache: c})
		if got, _ := FromSchema(schema(0), &Options{Cache: c}); got != a { // schema 0 is now the most recent
			t.Fatalf("schema 0 was dropped too early")
		}
		FromSchema(schema(2), &Options{Cache: c})
		if n := c.Len(); n != 4 {
			t.Errorf("Len = %d, want 4", n)
		}
		if got, _ := FromSchema(schema(0), &Options{Cache: c}); got != a {
			t.Errorf("the most recently used schema was dropped")
		}
	})

	t.Run("a hit is confirmed against the input", func(t *testing.T) {
		c := NewCache(0)
		k1 := c.key('e', Options{})
		k1.add([]byte("ab"))
		k1.add([]byte("c"))
		k2 := c.key('e', Options{})
		k2.add([]byte("a"))
		k2.add([]byte("bc"))
		if k2.matches(k1.material()) {
			t.Errorf("pieces ab,c match the material of a,bc")
		}
		if !k1.matches(k1.material()) {
			t.Errorf("a key does not match its own material")
		}
	})

	t.Run("concurrent use", func(t *testing.T) {
		c := NewCache(8)
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := 0; i < 20; i++ {
					if _, err := FromSchema(schema((g+i)%6), &Options{Cache: c}); err != nil {
						t.Error(err)
					}
				}
			}(g)
		}
		wg.Wait()
		if n := c.Len(); n > 8 {
			t.Errorf("Len = %d, want at most 8", n)
		}
	})
}
