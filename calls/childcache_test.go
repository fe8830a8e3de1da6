package calls

import "testing"

// TestChildCacheTellsRecursionApart: the paths of a recursion, one
// function calling itself from one site, have the same key at every
// depth; childCache must still keep them in different slots (hashed by
// the parent's id, not its key), or every call of a deep recursion
// misses the cache for the maps. And the cache returns the children
// segNode.child made.
func TestChildCacheTellsRecursionApart(t *testing.T) {
	c := new(childCache)
	k := segKey{Site: 0x401234, Entry: 0x401200}
	root := &segNode{first: noPos}
	const depth = 512
	chain := []*segNode{root}
	for n := root; len(chain) <= depth; {
		n = c.child(n, k)
		chain = append(chain, n)
	}
	slots := map[*cachedChild]bool{}
	for i, n := range chain[:depth] {
		if got := c.child(n, k); got != chain[i+1] || got.parent != n {
			t.Fatalf("depth %d: the cache returned another node", i)
		}
		slots[c.slot(n, k)] = true
	}
	// 512 paths in 4096 slots: about 30 share one by chance.
	if len(slots) < depth*7/8 {
		t.Errorf("a recursion's %d paths take %d of the cache's slots", depth, len(slots))
	}
	// Two siblings, and a path's own child, take other ids.
	a, b := c.child(root, segKey{Site: 1, Entry: 2}), c.child(root, segKey{Site: 3, Entry: 4})
	if a.id == b.id || a.id == chain[1].id || a.id == c.child(a, k).id {
		t.Errorf("ids %#x %#x %#x repeat", a.id, b.id, chain[1].id)
	}
}
