// A fixed set of threads at the bulk priority (common/thread_priority.h)
// that run the bulk tasks of all requests in turn, first come first served:
// a large GET's spans are checked here ahead of its sender
// (object/check_ahead.h). A task that wants to go on queues its next step
// behind everyone else's, so 512 replies at once share the threads span by
// span. No thread is started or ended per request: creating and ending
// threads contends for the process's memory-map lock, which every page fault
// also takes (measured: docs/performance.md, session 29).
//
// Started on first use and never stopped; a task must not outlive what it
// touches (its owner waits for a running task and tells a queued one to do
// nothing, as CheckAhead does).
#pragma once

#include <cstddef>
#include <functional>

namespace strata {

// At least 8 threads, or 2 per core: a step that waits on a cold disk holds
// one of them.
int BulkThreads();
// Whether any bulk thread runs (none could be started where the process is
// out of threads: callers then do the work themselves). A task added with
// none running never runs.
bool BulkThreadsRunning();
// Whether the calling thread is one of the bulk threads (either pool) (a task that would
// wait for another task it queued does that work itself instead: with every
// bulk thread waiting so, none would be left to run them).
bool OnBulkThread();
// `task` must not throw: an exception ending a bulk thread ends the process.
// (ReadAhead and CheckAhead turn one inside a read, the likely place for a
// std::bad_alloc, into the range's Status; their bookkeeping's small
// allocations are not guarded.)
void RunBulkTask(std::function<void()> task);
// The same for a write to a drive (io/direct_writer.h): a pool of its own,
// so that writes never queue behind the reads' steps (nor reads behind
// writes). Same rules.
void RunBulkWrite(std::function<void()> task);
bool BulkWriteThreadsRunning();
// Tasks queued and not yet taken (a step that could go on checks it: with
// nobody waiting it goes on at once instead of queueing behind nobody).
size_t BulkTasksQueued();

}  // namespace strata
