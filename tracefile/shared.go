package tracefile

// Shared memory in a trace that logs no reads (major version 2, minor
// version 1 on). Its replay takes every read from its own memory, so a
// page that two mappings show — anonymous shared memory a fork shares
// (python's multiprocessing), a file mapped MAP_SHARED twice or by two
// processes, a System V segment attached twice — must be one page there
// too, or a write through one mapping would not show at the other. The
// record that maps such memory names it: a SharedMmap record (tag 0x22)
// is an Mmap record whose body starts with `uvarint Object`, a number
// the recording gives each shared memory object while it exists (every
// mapping of it, in any process, has the same), and whose Offset is the
// offset of Addr in that object. A page at the same Object and offset is
// the same page wherever it is mapped. The Go reader returns it as an
// Mmap record with Mmap.Object set; readers of minor version 0 skip it
// (a reserved tag), and their replay of such a trace fails where the
// mapping is first used.
//
// Private mappings, and every mapping of a trace that logs reads (whose
// replay takes the values of shared memory from the trace), are Mmap
// records.

// tagSharedMmap is the SharedMmap record's tag.
const tagSharedMmap = 0x22
