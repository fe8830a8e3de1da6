//go:build !amd64

package x86

import "unsafe"

const jitSupported = false

type jitArena struct{}

func (ar *jitArena) free() {}

func jitCall(entry uintptr, c unsafe.Pointer) uint64 { panic("jit: not supported") }

func (cc *CodeCache) translate(b *Block, mode uint8) { b.declined = true }

const jitChained = 1 << 32
