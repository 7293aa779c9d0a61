//go:build cgo && linux

package main

// The address-space guard of a cgo build: a C constructor, which runs
// before the Go runtime starts. The runtime reserves about 1.1 GiB of
// address space at start (its page-allocator summaries and scavenger
// index: reservations, not memory); under an address-space limit
// (RLIMIT_AS, ulimit -v, prlimit --as) too small for them it dies in its
// own start-up (fatal error: out of memory, SIGSEGV or SIGABRT), before any
// Go code could say why. The guard says why and exits with status 3
// (unknown). Above its floor, memlimit.CheckStart in main does the finer
// check, and the budget takes its share of what the limit leaves.
//
// Under such a limit the guard also keeps glibc to one malloc arena: each
// thread that calls malloc (in a cgo build every thread the runtime
// starts does, through pthread_getattr_np) otherwise reserves an arena of
// 64 MiB of address space, some 400 MiB in all; only the C parts of the
// standard library (the resolver) use malloc here.

/*
#include <malloc.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

// Below this limit the Go runtime cannot start and leave a check room:
// about 1.2 GiB of reservations and mappings at start, and
// memlimit.MinStartRoom (320 MiB) beyond them.
#define HYPERISO_MIN_AS (1536ULL << 20)

__attribute__((constructor)) static void hyperiso_asguard(void) {
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) {
		return;
	}
	mallopt(M_ARENA_MAX, 1);
	if (rl.rlim_cur < HYPERISO_MIN_AS) {
		fprintf(stderr, "hyperiso: the address-space limit (RLIMIT_AS, ulimit -v) of %llu MiB is too small: the Go runtime reserves about 1.2 GiB of address space at start (reservations, not memory) and a check needs room beyond it; raise the limit to at least %llu MiB, or bound memory with --max-memory or a cgroup instead\n",
			(unsigned long long)(rl.rlim_cur >> 20), HYPERISO_MIN_AS >> 20);
		_exit(3);
	}
}
*/
import "C"
