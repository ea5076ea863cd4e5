package codec

import "testing"

func TestKeyCacheIsBounded(t *testing.T) {
	c := newKeyCache(2)
	a, _ := newAEAD(make([]byte, 32))
	for _, k := range []string{"r1 w", "r2 w", "r3 w"} {
		c.put(k, a)
	}
	if len(c.keys) != 2 || c.get("r1 w") != nil || c.get("r3 w") == nil {
		t.Fatalf("cache holds %d keys; the oldest kept: %v", len(c.keys), c.get("r1 w") != nil)
	}
}
