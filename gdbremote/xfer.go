package gdbremote

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"html"
	"strconv"
	"strings"

	"ttd/ttd"
)

// xferRead answers qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH with a piece
// of the object: "m" and data when more follows, "l" and data for the
// last piece. The object is built at offset 0 and kept until read to
// its end, so that its pieces belong together.
func (srv *Server) xferRead(req Request) (string, error) {
	key := req.Object + ":" + req.Annex
	doc, ok := srv.xfer[key]
	if !ok || req.Offset == 0 {
		var err error
		doc, err = srv.xferObject(req.Object, req.Annex)
		if err != nil {
			return "", err
		}
		if doc == nil {
			return "", nil // not supported: empty reply
		}
		srv.xfer[key] = doc
	}
	if req.Offset >= uint64(len(doc)) {
		delete(srv.xfer, key)
		return "l", nil
	}
	n := min(req.Len, MaxPacket/2, uint64(len(doc))-req.Offset)
	piece := doc[req.Offset : req.Offset+n]
	if req.Offset+n >= uint64(len(doc)) {
		delete(srv.xfer, key)
		return "l" + string(piece), nil
	}
	return "m" + string(piece), nil
}

func (srv *Server) xferObject(object, annex string) ([]byte, error) {
	switch object {
	case "features":
		if annex != "target.xml" {
			return nil, fmt.Errorf("no feature document %q", annex)
		}
		return []byte(targetXML()), nil
	case "threads":
		var b strings.Builder
		b.WriteString("<?xml version=\"1.0\"?>\n<threads>\n")
		for _, t := range srv.threads() {
			fmt.Fprintf(&b, "<thread id=%q core=\"0\" name=%q/>\n", srv.tid(t), html.EscapeString(srv.threadName(t)))
		}
		b.WriteString("</threads>\n")
		return []byte(b.String()), nil
	case "exec-file":
		p := srv.exePath()
		if pid, err := strconv.ParseInt(annex, 16, 64); err == nil && pid > 0 {
			if im, ok := srv.image(pid); ok {
				p = imageExe(im)
			} else if pid != srv.pid {
				p = srv.processExe(int(pid))
			}
		}
		if p == "" {
			return nil, fmt.Errorf("the recording names no executable file for process %s", annex)
		}
		return []byte(p), nil
	case "auxv":
		if im, ok := srv.image(srv.selectedPid()); ok {
			return srv.auxvOf(im)
		}
		return srv.auxvBytes()
	case "libraries-svr4":
		return srv.librariesSVR4()
	}
	return nil, nil
}

// processExe is the program file of process pid of a tree: its
// parent's for a process that never exec'd (a forked copy), else the
// path it last exec'd when that is absolute ("" when unknown).
func (srv *Server) processExe(pid int) string {
	for i, p := range srv.s.Processes() {
		if p.Pid != pid {
			continue
		}
		if i == 0 {
			return srv.exePath()
		}
		if p.Execs == 0 {
			return srv.processExe(p.Ppid)
		}
		if len(p.Argv) > 0 && strings.HasPrefix(p.Argv[0], "/") {
			return p.Argv[0]
		}
	}
	return ""
}

// exePath is the recorded program's file: the first module mapped.
func (srv *Server) exePath() string {
	mods, _ := srv.s.Modules()
	for _, m := range mods {
		if m.Path != "" && !strings.HasPrefix(m.Path, "[") {
			return m.Path
		}
	}
	return ""
}

// auxvBytes reads the auxiliary vector the program started with: above
// argc, argv and envp on the first thread's initial stack, as the
// recording knows those words (the dynamic linker and libc read them
// at start-up). It is read at the end of the recording, where memory
// knowledge is greatest, and the session goes back to where it was.
func (srv *Server) auxvBytes() ([]byte, error) {
	if srv.auxvDone {
		return srv.auxv, srv.auxvErr
	}
	srv.auxvDone = true
	srv.auxv, srv.auxvErr = readAuxv(srv.s, 0, 0, srv.s.End())
	return srv.auxv, srv.auxvErr
}

// image is the program process pid runs at the current position, in a
// recording of a process tree.
func (srv *Server) image(pid int64) (ttd.ProgramImage, bool) {
	im, ok := srv.s.ProcessImage(int(pid))
	return im, ok && len(im.Modules) > 0
}

// imageExe is the executable of a program image: its first module.
func imageExe(im ttd.ProgramImage) string {
	for _, m := range im.Modules {
		if m.Path != "" && !strings.HasPrefix(m.Path, "[") {
			return m.Path
		}
	}
	return ""
}

type auxvKey struct {
	pid   int
	start uint64
}

// auxvOf is the auxiliary vector of a tree's program image: on the
// initial stack of the process that started it (by exec), read where
// that process stopped running it.
func (srv *Server) auxvOf(im ttd.ProgramImage) ([]byte, error) {
	k := auxvKey{im.Pid, im.Start}
	if b, ok := srv.auxvs[k]; ok {
		return b, nil
	}
	ps, err := srv.t.ProcessSession(im.Pid)
	if err != nil {
		return nil, err
	}
	end := im.End
	if end == 0 {
		end = ps.End()
	} else if end > im.Start {
		end-- // before the next exec or the end, while the memory is there
	}
	tid := im.Pid
	if im.Start == 0 {
		tid = 0 // the first process's first thread
	}
	b, err := readAuxv(ps, im.Start, tid, end)
	if err != nil {
		return nil, err
	}
	if srv.auxvs == nil {
		srv.auxvs = map[auxvKey][]byte{}
	}
	srv.auxvs[k] = b
	return b, nil
}

// readAuxv reads the auxiliary vector above the initial stack of thread
// tid at position start, with the memory as the recording knows it at
// end; s goes back to where it was.
func readAuxv(s *ttd.Session, start uint64, tid int, end uint64) ([]byte, error) {
	pos := s.Position()
	defer s.Seek(pos)
	word := func(addr uint64) (uint64, error) {
		m, err := s.ReadMemory(addr, 8)
		if err != nil {
			return 0, err
		}
		v, ok := m.Uint(8)
		if !ok {
			return 0, fmt.Errorf("the recording never saw the initial stack at %#x", addr)
		}
		return v, nil
	}
	build := func() ([]byte, error) {
		if _, err := s.Seek(start); err != nil {
			return nil, err
		}
		r, err := s.Registers(tid)
		if err != nil {
			return nil, err
		}
		sp := r.GPR[4] // rsp
		if _, err := s.Seek(end); err != nil {
			return nil, err
		}
		argc, err := word(sp)
		if err != nil {
			return nil, err
		}
		if argc > 1<<20 {
			return nil, fmt.Errorf("implausible argc %d on the initial stack", argc)
		}
		a := sp + 8*(argc+2) // past argc, argv and its NULL
		for i := 0; ; i++ {
			if i > 1<<20 {
				return nil, errors.New("no end to the environment on the initial stack")
			}
			v, err := word(a)
			if err != nil {
				return nil, err
			}
			a += 8
			if v == 0 {
				break
			}
		}
		var out []byte
		for i := 0; i < 512; i++ {
			k, err := word(a)
			if err != nil {
				return nil, err
			}
			if k == 0 { // AT_NULL, whose value nobody reads
				return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(out, 0), 0), nil
			}
			v, err := word(a + 8)
			if err != nil {
				return nil, err
			}
			out = binary.LittleEndian.AppendUint64(out, k)
			out = binary.LittleEndian.AppendUint64(out, v)
			a += 16
		}
		return nil, errors.New("no end to the auxiliary vector on the initial stack")
	}
	return build()
}

// librariesSVR4 lists the shared libraries mapped at the current
// position (the executable itself and the vdso excepted), with their
// load bias and their dynamic section's address, as the dynamic
// linker's link map would. lm, which gdb only hands back in
// qGetTLSAddr, is the load address.
func (srv *Server) librariesSVR4() ([]byte, error) {
	mods, err := srv.s.Modules()
	if err != nil {
		return nil, err
	}
	exe := srv.exePath()
	if im, ok := srv.image(srv.selectedPid()); ok {
		// The program the selected process runs, where it mapped them.
		mods, exe = im.Modules, imageExe(im)
	}
	var b strings.Builder
	b.WriteString("<library-list-svr4 version=\"1.0\">\n")
	seen := map[string]bool{exe: true}
	for _, m := range mods {
		if m.Position > srv.s.Position() || seen[m.Path] || strings.HasPrefix(m.Path, "[") || m.Path == "" {
			continue
		}
		seen[m.Path] = true
		bias, dyn, err := elfLayout(m)
		if err != nil {
			continue // gdb finds no symbols there either
		}
		la := m.LoadAddr - bias
		fmt.Fprintf(&b, "<library name=%q lm=\"%#x\" l_addr=\"%#x\" l_ld=\"%#x\" lmid=\"0x0\"/>\n",
			html.EscapeString(m.Path), m.LoadAddr, la, la+dyn)
	}
	b.WriteString("</library-list-svr4>\n")
	return []byte(b.String()), nil
}

// elfLayout returns the page-aligned address of a module's first
// PT_LOAD segment and its PT_DYNAMIC's address, from the file.
func elfLayout(m ttd.ModuleFile) (firstLoad, dynamic uint64, err error) {
	var f *elf.File
	if m.Data != nil {
		f, err = elf.NewFile(bytes.NewReader(m.Data))
	} else {
		f, err = elf.Open(m.Path)
	}
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	found := false
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_LOAD:
			if !found {
				firstLoad, found = p.Vaddr&^0xfff, true
			}
		case elf.PT_DYNAMIC:
			dynamic = p.Vaddr
		}
	}
	if !found {
		return 0, 0, errors.New("no PT_LOAD")
	}
	return firstLoad, dynamic, nil
}
