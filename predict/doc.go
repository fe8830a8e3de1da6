// Package predict is iDNA's prediction cache (seeds/idna-nirvana.txt §3):
// a per-thread, tag-less, direct-mapped cache of memory words indexed by
// address and initialised to zero. The recorder logs a memory read only
// when the cache does not predict its value; the reader keeps an identical
// cache and so needs no data for predicted reads. Both sides must drive it
// with exactly the same sequence of reads, writes and flushes.
//
// It depends on nothing else in ttd.
package predict
