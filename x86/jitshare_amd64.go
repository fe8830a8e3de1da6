package x86

import (
	"encoding/binary"
	"runtime"
	"slices"
	"unsafe"
)

// Translations shared through the code store (codestore.go): translate
// keeps what it made in the store (shareXlat) and adopts what another
// cache made for the same stored block and mode (adopt).

// jitPrepare gives cc its arena and mode's table, and b its id and
// chaining slots, before b gets a translation.
func (cc *CodeCache) jitPrepare(b *Block, mode uint8) {
	if cc.jit == nil {
		ar := &jitArena{}
		cc.jit = ar
		runtime.AddCleanup(cc, func(ar *jitArena) { ar.free() }, ar)
	}
	j := b.jx()
	if j.slots == nil {
		j.id = uint32(len(cc.jitBlocks))
		cc.jitBlocks = append(cc.jitBlocks, b)
		j.slots = keepZero(&cc.linkSlab, jitSlots(b), linkSlabLen)
	}
	clear(j.slots)
	if cc.jitTab[mode] == nil {
		cc.jitTab[mode] = new(jitTable)
	}
}

// tabSite notes that the table's address was just emitted (a mov into a
// register that began at offset at): at a movabs's immediate, or -1 if
// the address was short enough for another form.
func (t *jitT) tabSite(at int) {
	site := int32(-1)
	if t.a.Len()-at == 10 {
		site = int32(t.a.Len() - 8)
	}
	t.tabSites = append(t.tabSites, site)
}

// shareXlat keeps t's translation of b for mode in the store (declined
// if !ok), when it holds nothing that is cc's but the id and the table.
func (cc *CodeCache) shareXlat(b *Block, mode uint8, t *jitT, ok bool) {
	if cc.file != nil {
		cc.keepFileXlat(b, mode, t, ok)
	}
	// hooked: made for a filter, adopted only for the same verdict.
	hooked := cc.filter.owner != nil
	if cc.store == nil || b.stored == nil || cc.LegacyReads || !hooked && (t.hooks != 0 || t.logged != 0 || len(t.hresumes) != 0) {
		return
	}
	var hook hookXlat
	if hooked {
		hook = cc.hookXlatOf(b)
		if hook.hooks != t.hooks || hook.logged != t.logged {
			return // (cannot be: translate asked the same)
		}
		if t.logged != 0 && !t.steps {
			return // a wide record's tag holds the block's id (logHook)
		}
	}
	if !ok {
		cc.store.keepXlat(b.stored, mode, storedXlat{declined: true, hook: hook}, hooked)
		return
	}
	for _, s := range t.tabSites {
		if s < 0 {
			return
		}
	}
	// The offsets in t's scratch: keepXlat copies them and the code into
	// the store's slabs (translating must allocate little: emu's
	// TestSyscallsDoNotAllocate).
	nl, nr, ni, nt, nh := len(t.links), len(t.resumes), len(t.idSites), len(t.tabSites), len(t.hresumes)
	n := 2*nl + 2*nr + ni + nt + 2*nh
	offs := slices.Grow(t.shareOffs[:0], n)[:n]
	t.shareOffs = offs
	x := storedXlat{code: t.a.Buf, chainOff: int32(t.chainOff), beyond: t.hooked, hook: hook,
		linkSite: offs[:nl], linkMis: offs[nl : 2*nl], resumeK: offs[2*nl : 2*nl+nr],
		resumeAt: offs[2*nl+nr : 2*nl+2*nr], idSites: offs[2*nl+2*nr : 2*nl+2*nr+ni], tabSites: offs[2*nl+2*nr+ni : 2*nl+2*nr+ni+nt],
		hresK: offs[n-2*nh : n-nh], hresAt: offs[n-nh:]}
	copy(x.idSites, t.idSites)
	copy(x.tabSites, t.tabSites)
	for i, l := range t.links {
		x.linkSite[i], x.linkMis[i] = int32(l.site), int32(l.miss)
	}
	for i, r := range t.resumes {
		x.resumeK[i], x.resumeAt[i] = int32(r.k), int32(r.off)
	}
	for i, r := range t.hresumes {
		x.hresK[i], x.hresAt[i] = int32(r.k), int32(r.off)
	}
	cc.store.keepXlat(b.stored, mode, x, hooked)
}

// adopt gives b the store's translation for mode, copied into cc's arena
// with cc's id of b and cc's table patched in: false if the store has
// none (or cc's arena is full). A translation the store has declined
// declines b.
func (cc *CodeCache) adopt(b *Block, mode uint8) bool {
	x := cc.adoptable(b, mode)
	if x == nil {
		return false
	}
	if x.declined {
		b.declined = true
		return true
	}
	cc.jitPrepare(b, mode)
	j := b.jit
	if len(x.linkSite) > len(j.slots) {
		return false // cannot be: the same instructions
	}
	e, code := cc.jit.alloc(x.code)
	if e == 0 {
		return false
	}
	for _, s := range x.idSites {
		binary.LittleEndian.PutUint32(code[s:], j.id)
	}
	tab := uint64(uintptr(unsafe.Pointer(cc.jitTab[mode])))
	for _, s := range x.tabSites {
		binary.LittleEndian.PutUint64(code[s:], tab)
	}
	if perfMapOn {
		perfMapAdd(e, len(code), b.PC)
	}
	j.entry, j.chain, j.mode = e, e+uintptr(x.chainOff), mode
	for i, s := range x.linkSite {
		j.slots[i] = jitLink{site: (*int32)(unsafe.Pointer(&code[s])), at: e + uintptr(s), miss: e + uintptr(x.linkMis[i])}
	}
	if j.resume != nil {
		clear(j.resume)
	}
	if len(x.resumeK) > 0 {
		if j.resume == nil {
			j.resume = cc.entrySlice(len(b.Insts))
		}
		for i, k := range x.resumeK {
			j.resume[k] = e + uintptr(x.resumeAt[i])
		}
	}
	// As keepHooks leaves it.
	j.hooks, j.beyond, j.logged, j.steps, j.win, j.hresume = 0, x.beyond, 0, false, nil, nil
	if len(x.hresK) > 0 {
		for _, k := range x.hresK {
			j.hooks |= 1 << k
		}
		j.beyond = x.beyond &^ j.hooks
		j.logged, j.steps, j.win = x.hook.logged&j.hooks, x.hook.steps, b.vv().fwin
		if j.logged != 0 {
			cc.filter.hookLogs = true
		}
		j.hresume = make([]uintptr, len(b.Insts))
		for i, k := range x.hresK {
			j.hresume[k] = e + uintptr(x.hresAt[i])
		}
	}
	cc.jitTab[mode][jitTabIndex(b.PC)] = jitTabEntry{b.PC, j.chain}
	cc.Adopted++
	if cc.store != nil { // (nil: the code file's translation)
		cc.store.xlatTaken.Add(1)
	}
	return true
}

// keepFileXlat keeps t's translation of b for mode (declined if !ok) in
// b's jitBlock for the code file (codefile.go), on the conditions
// shareXlat keeps one in the store: nothing in it is cc's but the id and
// the table, which adopt patches.
func (cc *CodeCache) keepFileXlat(b *Block, mode uint8, t *jitT, ok bool) {
	if cc.filter.owner != nil || cc.LegacyReads || t.hooks != 0 || t.logged != 0 || len(t.hresumes) != 0 || !b.forFile {
		return
	}
	if len(cc.fileXlSlab) == cap(cc.fileXlSlab) {
		cc.fileXlSlab = make([]fileXlat, 0, 256) // (translating must allocate little)
	}
	cc.fileXlSlab = append(cc.fileXlSlab, fileXlat{mode: mode})
	fx := &cc.fileXlSlab[len(cc.fileXlSlab)-1]
	if !ok {
		fx.x.declined = true
	} else {
		for _, s := range t.tabSites {
			if s < 0 {
				return
			}
		}
		x := &fx.x
		x.code = keep(&cc.fileCodeSlab, t.a.Buf, xlatCodeSlab)
		x.chainOff, x.beyond = int32(t.chainOff), t.hooked
		nl, nr := len(t.links), len(t.resumes)
		offs := cc.fileOffs[:0] // (translating must allocate little)
		for _, l := range t.links {
			offs = append(offs, int32(l.site))
		}
		for _, l := range t.links {
			offs = append(offs, int32(l.miss))
		}
		for _, r := range t.resumes {
			offs = append(offs, int32(r.k))
		}
		for _, r := range t.resumes {
			offs = append(offs, int32(r.off))
		}
		offs = append(offs, t.idSites...)
		offs = append(offs, t.tabSites...)
		cc.fileOffs = offs
		offs = keep(&cc.fileOffSlab, offs, xlatOffSlab)
		x.linkSite, x.linkMis = offs[:nl], offs[nl:2*nl]
		x.resumeK, x.resumeAt = offs[2*nl:2*nl+nr], offs[2*nl+nr:2*nl+2*nr]
		x.idSites = offs[2*nl+2*nr : 2*nl+2*nr+len(t.idSites)]
		x.tabSites = offs[2*nl+2*nr+len(t.idSites):]
	}
	b.jx().fileXl = fx
	cc.FileXlats++
}
