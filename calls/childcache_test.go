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
	root := &segNode{First: noPos}
	const depth = 512
	chain := []*segNode{root}
	for n := root; len(chain) <= depth; {
		n = c.child(n, k)
		chain = append(chain, n)
	}
	slots := map[int]bool{}
	for i, n := range chain[:depth] {
		if got := c.child(n, k); got != chain[i+1] || got.Parent != n {
			t.Fatalf("depth %d: the cache returned another node", i)
		}
		i, _ := c.slot(n, k)
		slots[i] = true
	}
	// 512 paths in 8192 slots: about 16 share one by chance.
	if len(slots) < depth*7/8 {
		t.Errorf("a recursion's %d paths take %d of the cache's slots", depth, len(slots))
	}
	// Two siblings, and a path's own child, take other ids.
	a, b := c.child(root, segKey{Site: 1, Entry: 2}), c.child(root, segKey{Site: 3, Entry: 4})
	if a.id == b.id || a.id == chain[1].id || a.id == c.child(a, k).id {
		t.Errorf("ids %#x %#x %#x repeat", a.id, b.id, chain[1].id)
	}
}

// TestSegKidsInlineThenMap: a node's children, looked through in the
// sibling list up to segKidsInline and in childCache.many beyond (with
// a second parent's children in the same map), are found again by key on both
// sides of the change, each made once, with ids in the order of birth;
// eachChild and numChildren see every one.
func TestSegKidsInlineThenMap(t *testing.T) {
	for _, n := range []int{1, segKidsInline - 1, segKidsInline, segKidsInline + 1, 3 * segKidsInline} {
		root := &segNode{First: noPos, id: 7}
		cc := new(childCache)
		// other's children share the map and the keys: never root's.
		other := &segNode{First: noPos, id: 7}
		for i := range 2 * segKidsInline {
			cc.make(other, segKey{Site: uint64(i), Entry: uint64(100 + i%3)})
		}
		made := map[segKey]*segNode{}
		for i := range n {
			k := segKey{Site: uint64(i), Entry: uint64(100 + i%3)}
			c := cc.make(root, k)
			if c.Parent != root || c.skey() != k || c.id != childID(root, uint32(i)) {
				t.Fatalf("%d children: child %d made wrong: %+v", n, i, c)
			}
			made[k] = c
			// Every child so far is found again, none made twice.
			for k, c := range made {
				if got := cc.make(root, k); got != c {
					t.Fatalf("%d children, after %d: %+v found as another node", n, i+1, k)
				}
			}
		}
		if root.numChildren() != n {
			t.Errorf("%d children: numChildren %d", n, root.numChildren())
		}
		seen := 0
		root.eachChild(func(k segKey, c *segNode) {
			if made[k] != c {
				t.Errorf("%d children: eachChild gave %+v with another node", n, k)
			}
			seen++
		})
		if seen != n {
			t.Errorf("%d children: eachChild saw %d", n, seen)
		}
	}
}

// TestNodeKidsInlineThenMap: a Node's children, looked through in
// Children up to kidsInline and in a map beyond, are found again by key
// (the image too) on both sides of the change, each made once and
// listed once in Children; pruneUnknown's delete keeps the two in step.
func TestNodeKidsInlineThenMap(t *testing.T) {
	for _, n := range []int{1, kidsInline - 1, kidsInline, kidsInline + 1, 3 * kidsInline} {
		root := newRoot()
		made := map[key]*Node{}
		for i := range n {
			k := key{Site: uint64(i / 2), Entry: 100, img: i % 2}
			c := root.child(k)
			if c.Parent != root || c.Site != k.Site || c.Entry != k.Entry || int(c.img) != k.img || c.Depth != 1 {
				t.Fatalf("%d children: child %d made wrong: %+v", n, i, c)
			}
			made[k] = c
			for k, c := range made {
				if got := root.child(k); got != c {
					t.Fatalf("%d children, after %d: %+v found as another node", n, i+1, k)
				}
			}
		}
		if len(root.Children) != n {
			t.Errorf("%d children: %d in Children", n, len(root.Children))
		}
		// An unknown frame with nothing under it is pruned, and a
		// later call makes it anew.
		u := root.child(key{Site: unknownSite})
		pruneUnknown(root)
		if len(root.Children) != n {
			t.Errorf("%d children: %d after pruning", n, len(root.Children))
		}
		if root.child(key{Site: unknownSite}) == u || len(root.Children) != n+1 {
			t.Errorf("%d children: the pruned node found again", n)
		}
	}
}

// TestChildCacheSlotsCheckTheChild: with far more paths than slots, a
// slot often holds another parent's child under the same key, or
// another key's child of the same parent; lookup must check the child
// it finds by its own parent and key and never return it for another
// (the slot holds the child alone), and give each path one node.
func TestChildCacheSlotsCheckTheChild(t *testing.T) {
	c := new(childCache)
	const parents, keys = 48, 512 // three times the slots
	ps := make([]*segNode, parents)
	for i := range ps {
		ps[i] = &segNode{First: noPos, id: uint32(i+1) * 0x9e3779b9}
	}
	made := map[[2]uint64]*segNode{}
	for round := range 2 {
		for i, p := range ps {
			for k := range keys {
				key := segKey{Site: uint64(k % 64), Entry: uint64(k / 64)}
				x := c.lookup(p, key)
				if x.Parent != p || x.skey() != key {
					t.Fatalf("round %d: parent %d key %+v: a node of parent %p key %+v", round, i, key, x.Parent, x.skey())
				}
				id := [2]uint64{uint64(i), uint64(k)}
				if m := made[id]; m == nil {
					made[id] = x
				} else if m != x {
					t.Fatalf("round %d: parent %d key %+v made twice", round, i, key)
				}
			}
		}
	}
	if len(made) != parents*keys || parents*keys < 2*len(c.slots) {
		t.Errorf("%d paths in %d slots: the test tests less than it says", len(made), len(c.slots))
	}
}

// TestChildCacheTagIsNotTheCheck: a slot whose tag matches may still
// hold another path's child (32 bits of hash collide too): lookup
// checks the child's parent and key before it returns it.
func TestChildCacheTagIsNotTheCheck(t *testing.T) {
	c := new(childCache)
	p, q := &segNode{First: noPos, id: 1}, &segNode{First: noPos, id: 2}
	k, other := segKey{Site: 0x10, Entry: 0x20}, segKey{Site: 0x30, Entry: 0x40}
	want := c.lookup(p, k)
	c.lookup(p, other) // p has children: lookup reads the slot
	wrongParent, wrongKey := c.lookup(q, k), c.lookup(p, other)
	for _, x := range []*segNode{wrongParent, wrongKey} {
		i, _ := c.slot(p, k)
		c.slots[i] = x // the tag stays p's k's
		if got := c.lookup(p, k); got != want {
			t.Fatalf("a slot with p's tag and %p's child: lookup gave %p, not %p", x, got, want)
		}
		if i, tag := c.slot(p, k); c.slots[i] != want || c.tags[i] != tag {
			t.Fatalf("lookup did not put p's child back in its slot")
		}
	}
	if p.numChildren() != 2 {
		t.Errorf("p has %d children, not 2: a path made twice", p.numChildren())
	}
}

// TestChildKeepsLast: child remembers the child it returned in its
// parent (last), which a loop calling one function finds without the
// cache, and answers from it only for that child's own key: a call of
// another function from the same path gets its own child.
func TestChildKeepsLast(t *testing.T) {
	c := new(childCache)
	root := &segNode{First: noPos}
	ka, kb := segKey{Site: 0x401000, Entry: 0x402000}, segKey{Site: 0x401000, Entry: 0x403000}
	a := c.child(root, ka)
	if root.last != a {
		t.Fatalf("after child(ka): last %p, want the child %p", root.last, a)
	}
	// A slot holding another node must not matter: last answers.
	for i := range c.slots {
		c.slots[i], c.tags[i] = nil, 0
	}
	if got := c.child(root, ka); got != a {
		t.Fatalf("child(ka) again: %p, want last, %p", got, a)
	}
	b := c.child(root, kb)
	if b == a || b.skey() != kb || root.last != b {
		t.Fatalf("child(kb): %+v (last %p), want a new child of key kb, kept as last", b, root.last)
	}
	if got := c.child(root, ka); got != a || root.last != a {
		t.Errorf("child(ka) after kb: %p (last %p), want %p", got, root.last, a)
	}
}
