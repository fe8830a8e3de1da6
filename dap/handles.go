package dap

import (
	"sync"

	"ttd/ttd"
)

// handles maps the integers the client holds (frame ids, variable
// references, goto targets) to what they stand for. They are valid until
// the target moves: every stop resets them, as delve does.
type handles struct {
	mu   sync.Mutex
	next int
	m    map[int]any
}

func (h *handles) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next, h.m = 1000, make(map[int]any)
}

func (h *handles) add(v any) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	h.m[h.next] = v
	return h.next
}

func (h *handles) get(id int) any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[id]
}

// frameRef is a stack frame id: thread and index in Target.Stack.
type frameRef struct {
	tid, index int
	frame      ttd.StackFrame
}

// varsRef is a variables reference: what lists the children.
type varsRef struct {
	list func() ([]ttd.Var, error)
}
