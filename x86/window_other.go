//go:build !(linux && amd64)

package x86

// No host window off linux/amd64 (window_linux.go).

const winOn = false

// EnableWindow reports false: no host windows here.
func EnableWindow() bool { return false }

// WindowOn reports whether address spaces have host windows.
func WindowOn() bool { return false }

// NewPage returns a new zeroed page.
func NewPage() *Page { return heapPage() }

// NewPage returns a new zeroed page for page number pn of m.
func (m *Memory) NewPage(pn uint64) *Page { return heapPage() }

func (m *Memory) newPage(pn uint64) *Page { return heapPage() }

// Discard does nothing without a window.
func (m *Memory) Discard(lo, hi uint64) {}

type window struct{}

func (m *Memory) newWindow()                                     {}
func (m *Memory) releaseWindow()                                 {}
func (m *Memory) winMap(pn uint64, p *Page) bool                 { return false }
func (m *Memory) owns(pn uint64, p *Page) bool                   { return false }
func (m *Memory) winFreed(pn uint64)                             {}
func (m *Memory) forkPage(n *Memory, pn uint64, p *Page, e Perm) {}
func (m *Memory) winPage(pn uint64, zero bool) *Page             { return nil }

const winFault = false

// WinFaultOn reports false: no host windows here.
func WinFaultOn() bool { return false }

func (m *Memory) winSet(pn uint64, old pte, e *pte) {}

// HostFaults reports 0: no host windows here.
func HostFaults() uint64 { return 0 }

func (m *Memory) forkProt(n *Memory) (done func()) { return func() {} }

func (m *Memory) atCluster(pn uint64) (pte, bool) { return pte{}, false }

// Clustering reports 0: no clusters here.
func (m *Memory) Clustering() uint64 { return 0 }

func (m *Memory) toFault() bool     { return false }
func (m *Memory) winFaulting() bool { return false }

const winFaultAfter = 0

const winSettleOn = false

// WinFaultAfter reports 0, false: no host faults here.
func WinFaultAfter() (uint64, bool) { return 0, false }

var winFaultSwitches uint64
